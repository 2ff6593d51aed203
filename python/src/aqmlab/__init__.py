"""aqmlab: packet-level simulation of TCP web traffic through AQM-managed router queues.

Python API::

    import aqmlab
    res = aqmlab.run("examples/quickstart.toml", seed=2, out="results/q")
    res.summary            # dict (also in results/q/summary.json)
    res.connections        # polars DataFrame (one per table the core emits)

    scen = aqmlab.load_scenario("examples/quickstart.toml", overrides=["queue.limit=50"])
    aqmlab.validate(scen)  # raises aqmlab.ScenarioError with a one-line message

    study = aqmlab.Study.open("results/small")   # a study directory of `aqmlab sweep`
    study.runs()            # polars: one row per finished run (axis labels, metrics)
    study.table("exchanges")  # a record table over every finished run

    from aqmlab import study_plots   # a study's figures (aqmlab.report.study_plots)

The code is in folders by concern: `scenario` (files, overrides, calibrations), `runs` (one
run: runner, results, memory budget, calibrating), `study` (sweep files, execution, progress,
catalog, `Study`), `analysis` (metrics), `report` (figures, HTML), `reproduce` (the four
studies), and `cli`.
"""

from aqmlab import _core
from aqmlab._core import Simulation, tcp_preset, tcp_presets

__version__ = _core.version()

from aqmlab.runs import Progress, Results, run
from aqmlab.scenario import ScenarioError, resolve, validate
from aqmlab.scenario import load as load_scenario

__all__ = [
    "Progress",
    "Results",
    "ScenarioError",
    "Simulation",
    "Study",
    "__version__",
    "load_scenario",
    "resolve",
    "run",
    "study_plots",
    "tcp_preset",
    "tcp_presets",
    "validate",
]


def __getattr__(name: str):
    # `from aqmlab import study_plots` without importing matplotlib with `import aqmlab`, and
    # `Study` without polars, pyarrow and DuckDB: a run (`aqmlab run`, a sweep's worker)
    # imports this package and needs none of them.
    if name == "study_plots":
        from aqmlab.report import study_plots

        return study_plots
    if name == "Study":
        from aqmlab.study.reader import Study

        return Study
    raise AttributeError(f"module 'aqmlab' has no attribute {name!r}")
