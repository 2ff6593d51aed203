"""Tiny studies for the report tests: Web traffic (two schemes × two loads × two repetitions,
4 simulated seconds each; and with one repetition, at calibrated loads) and greedy bulk
transfers with one failing cell."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import BASE, cli
from sweep_support import write_sweep

# One-way PackMime-HTTP through a 2 Mb/s bottleneck: enough exchanges in 3 measured seconds to
# fill CDFs, small enough that a run takes well under a second.
WEB_BASE = """\
name = "web-test"
seed = 5
duration_s = 4.0
warmup_s = 1.0

[topology]
bottleneck_mbps = 2.0
bottleneck_delay_ms = 1.0
access_mbps = 100.0
access_delay_ms = 0.0
access_queue_packets = 10000
left_hosts = 2
right_hosts = 2

[queue]
kind = "droptail"
limit = 30

[tcp]
preset = "ns2-weigle2005"

[[traffic]]
kind = "packmime"
rate = 20.0
http11 = true
packmime_rtt = true
"""

# The "load" axis sets the connection rate directly (no calibration to run): the report finds
# it by its name.
WEB_SWEEP = """\
[sweep]
name = "web"
scenario = "base.toml"
repetitions = 2
seed = 3

[[axis]]
name = "queue"
field = "queue"
values = [{ kind = "droptail", limit = 30 }, { kind = "red", limit = 30 }]
labels = ["DT", "RED"]

[[axis]]
name = "load"
field = "traffic.0.rate"
values = [15.0, 30.0]
labels = ["0.5", "1.0"]
"""

# One repetition per cell and the load given as `load =`: the sweep measures the calibration
# (a few 4-s runs of an uncongested copy of the network). The tables this report does not
# read are turned off, as in the main job.
ONE_REP_SWEEP = """\
[sweep]
name = "one"
scenario = "base.toml"
repetitions = 1
seed = 3
set = { "measure.connections" = false, "measure.burst_bin_ms" = 0.0 }

[[axis]]
name = "queue"
field = "queue"
values = [{ kind = "droptail", limit = 30 }, { kind = "red", limit = 30 }]
labels = ["DT", "RED"]

[[axis]]
name = "load"
field = "traffic.0.load"
values = [0.5, 0.9]
"""

# Greedy flows (no exchanges); the third buffer size is rejected by the core, so its run fails.
BULK_SWEEP = """\
[sweep]
name = "bulk"
scenario = "base.toml"
repetitions = 1
seed = 2
set = { duration_s = 3.0 }

[[axis]]
name = "buffer"
field = "queue.limit"
values = [15, 60, -3]
"""


def make_study(directory: Path, sweep: str, base: str, expect_rc: int = 0) -> Path:
    """Runs `sweep` (base scenario `base`) into directory/study and returns its path."""
    p = write_sweep(directory, sweep, base=base)
    r = cli("sweep", p, "--out", directory / "study", "-j", "2", "-q")
    assert r.returncode == expect_rc, r.stdout + r.stderr
    return directory / "study"


def make_web_study(directory: Path) -> Path:
    return make_study(directory, WEB_SWEEP, WEB_BASE)


def make_one_rep_study(directory: Path) -> Path:
    return make_study(directory, ONE_REP_SWEEP, WEB_BASE.replace("rate = 20.0\n", ""))


def make_bulk_study(directory: Path) -> Path:
    return make_study(directory, BULK_SWEEP, BASE, expect_rc=1)


# --- reading a report back -------------------------------------------------------------------


def tables(html: str) -> list[list[list[str]]]:
    """Every <table> as rows of cell texts (header row first)."""
    out = []
    for body in re.findall(r"<table>(.*?)</table>", html, flags=re.S):
        rows = []
        for tr in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S):
            rows.append([_text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)])
        out.append(rows)
    return out


def _text(cell: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()


def image_sources(html: str) -> list[str]:
    return re.findall(r'<img[^>]*\ssrc="([^"]*)"', html)
