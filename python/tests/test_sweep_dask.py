"""`aqmlab sweep --scheduler`: a real Dask scheduler and worker processes (a LocalCluster
started here) produce the same study as the local process pool."""

from __future__ import annotations

import time

import pytest
from conftest import cli
from sweep_support import assert_same_study, write_sweep

from aqmlab.study import Study

SWEEP = """\
[sweep]
name = "dask"
scenario = "base.toml"
repetitions = 2
seed = 21
set = { duration_s = 6.0 }

[[axis]]
name = "queue"
field = "queue"
values = [{ kind = "droptail", limit = 20 }, { kind = "codel", limit = 200 }]
labels = ["DT-20", "CoDel"]
"""


def test_dask_cluster_gives_the_same_study_as_the_local_pool(tmp_path):
    distributed = pytest.importorskip("distributed")
    p = write_sweep(tmp_path, SWEEP)
    local = cli("sweep", p, "--out", tmp_path / "local", "-j", "2")
    assert local.returncode == 0, local.stderr
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        r = cli("sweep", p, "--out", tmp_path / "dask", "--scheduler", cluster.scheduler_address)
    assert r.returncode == 0, r.stderr
    assert "on Dask tcp://" in r.stderr and "(2 workers, 2 threads)" in r.stderr
    assert Study.open(tmp_path / "dask").runs().height == 4
    assert_same_study(tmp_path / "dask", tmp_path / "local")


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("localhost:8786", "expected a Dask scheduler address like tcp://HOST:PORT"),
        ("tcp://127.0.0.1", "expected a Dask scheduler address like tcp://HOST:PORT"),
        ("tcp://127.0.0.1:99999", "port 99999 is not in 1..65535"),
        ("tcp://127.0.0.1:1", "cannot reach a Dask scheduler within 5 s"),
    ],
)
def test_bad_scheduler_address_is_a_quick_clear_error(tmp_path, address, message):
    p = write_sweep(tmp_path, SWEEP)
    t = time.monotonic()
    r = cli("sweep", p, "--out", tmp_path / "study", "--scheduler", address)
    assert time.monotonic() - t < 30
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --scheduler {address}: ")
    assert message in lines[0]
    assert not (tmp_path / "study").exists()
