"""Running one scenario: `runner` drives the core and streams its tables to Parquet,
`results` reads them back, `budget` refuses a run that would not fit in memory, and
`calibrate` measures a Web source's load by running it uncongested."""

from aqmlab.runs.results import Results
from aqmlab.runs.runner import Progress, run

__all__ = ["Progress", "Results", "run"]
