"""The UNC HTTP model's files (`kind = "unc"`, aqmlab.scenario.unc_model): reading UNC's CDF format,
thinning without moving the law, and users that draw from the files (synthetic files here:
UNC's own may not be redistributed)."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import BASE, edit, write_scenario

import aqmlab
from aqmlab import scenario as sc
from aqmlab.scenario import unc_model


def write_cdf(path: Path, points, gz: bool = False) -> Path:
    lines = ["#", "# synthetic file in UNC's format", "#", str(len(points))]
    lines += [f"{x:g} {c:.12g}" for x, c in points]
    data = ("\n".join(lines) + "\n").encode("latin-1")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def constant(v: float):
    return [(v - 1, 0.0), (v, 1.0)]


def test_thinning_keeps_the_cdf_and_the_heavy_tail():
    # A Pareto law (α = 1.2, x ≥ 100) tabulated at 200,000 points, as UNC's response files are.
    x = 100.0 * (1 - np.linspace(0, 0.999999, 200_000)) ** (-1 / 1.2)
    pts = [(float(v), float(1 - (100.0 / v) ** 1.2)) for v in x]
    pts[-1] = (pts[-1][0], 1.0)
    thin = unc_model.thin(pts)
    assert len(thin) < 6_000
    tx = np.array([p[0] for p in thin])
    tc = np.array([p[1] for p in thin])
    full_x = np.array([p[0] for p in pts])
    full_c = np.array([p[1] for p in pts])
    assert np.max(np.abs(np.interp(full_x, tx, tc) - full_c)) <= unc_model.MAX_CDF_STEP + 1e-12

    def mean(xs, cs):  # linear interpolation between points, as the core samples
        return float(np.sum(np.diff(cs) * (xs[1:] + xs[:-1]) / 2) + xs[0] * cs[0])

    assert math.isclose(mean(tx, tc), mean(full_x, full_c), rel_tol=0.03)


def test_directory_files_found_by_uncs_names_with_units(tmp_path: Path):
    d = tmp_path / "unc"
    d.mkdir()
    write_cdf(d / "unc99.top_req_sizes.cdf.gz", constant(300), gz=True)
    write_cdf(d / "unc99.think_times.cdf", [(1000, 0.0), (3000, 1.0)])
    got = unc_model.load_distributions(str(d), tmp_path, "traffic[0].distributions")
    assert got["top_request"] == [[299.0, 0.0], [300.0, 1.0]]
    assert got["think_time_s"] == [[1.0, 0.0], [3.0, 1.0]]  # milliseconds -> seconds
    assert "top_request=unc99.top_req_sizes.cdf.gz" in got["source"]
    assert "embedded_request" not in got  # falls back in the core


def test_bad_distributions_are_one_line_errors(tmp_path: Path):
    where = "traffic[0].distributions"
    with pytest.raises(sc.ScenarioError, match="not a directory"):
        unc_model.load_distributions("missing", tmp_path, where)
    d = tmp_path / "two"
    d.mkdir()
    write_cdf(d / "a.obj_page.cdf", constant(3))
    write_cdf(d / "b.obj_page.cdf", constant(3))
    with pytest.raises(sc.ScenarioError, match="several files match 'obj_page'"):
        unc_model.load_distributions(str(d), tmp_path, where)
    with pytest.raises(sc.ScenarioError, match="unknown key"):
        unc_model.load_distributions({"dir": str(d), "sizes": "x"}, tmp_path, where)
    (d / "bad.think_times.cdf").write_text("# x\n5\n1 0.5\nabc\n", encoding="latin-1")
    with pytest.raises(sc.ScenarioError, match=r"line 4 of bad.think_times.cdf"):
        unc_model.load_distributions({"think_time": str(d / "bad.think_times.cdf")}, d, where)


UNC_ENTRY = """\
[[traffic]]
kind = "unc"
users = 40
parallel = [4]
persistent_share = 0.0
start_spread_s = 1.0
distributions = "unc"
"""


def test_users_draw_from_the_files(tmp_path: Path):
    d = tmp_path / "unc"
    d.mkdir()
    write_cdf(d / "x.top_req_sizes.cdf", constant(300))
    write_cdf(d / "x.emb_req_sizes.cdf", constant(200))
    write_cdf(d / "x.top_rsp_sizes.cdf", constant(5000))
    write_cdf(d / "x.emb_rsp_sizes.cdf", constant(1500))
    write_cdf(d / "x.obj_page.cdf", constant(3))  # the top-level object and 2 embedded
    write_cdf(d / "x.think_times.cdf", [(1000, 0.0), (2000, 1.0)])
    text = BASE.split("[[traffic]]")[0] + UNC_ENTRY
    text = edit(text, "duration_s = 5.0", "duration_s = 30.0")
    res = aqmlab.run(write_scenario(tmp_path, text))
    ex = res["exchanges"]
    done = ex.filter(ex["completed"])
    assert done.height > 100
    sizes = set(zip(done["request_bytes"].to_list(), done["response_bytes"].to_list(), strict=True))
    assert sizes == {(300, 5000), (200, 1500)}
    # Two embedded objects per top-level one (pages cut by the end excepted).
    tops = done.filter(done["request_bytes"] == 300).height
    embedded = done.filter(done["request_bytes"] == 200).height
    assert abs(embedded - 2 * tops) <= 2 * 40
    assert "x.obj_page.cdf" in res.summary["scenario"]["traffic"][0]["distributions"]["source"]


def test_environment_directory_serves_entries_without_distributions(tmp_path: Path, monkeypatch):
    d = tmp_path / "env"
    d.mkdir()
    write_cdf(d / "x.top_rsp_sizes.cdf", constant(777))
    text = BASE.split("[[traffic]]")[0] + UNC_ENTRY.replace('distributions = "unc"\n', "")
    monkeypatch.setenv(unc_model.ENV, str(d))
    s = sc.load(write_scenario(tmp_path, text))
    assert s["traffic"][0]["distributions"]["top_response"] == [[776.0, 0.0], [777.0, 1.0]]
    monkeypatch.delenv(unc_model.ENV)
    s = sc.load(write_scenario(tmp_path, text))
    assert "distributions" not in s["traffic"][0]  # every element falls back
    sc.validate(s)
