"""The workload a `packmime_e2e.tcl` run recorded, as the connections of two aqmlab `replay`
sources (one per PackMime instance: clients on the left, then on the right).

Each connection: the time it opened (conn<i>.txt), its request and response sizes (the
matching line of samples<i>.txt), its server delay (the "waiting D s" debug line of its
server app, in the run's ns.log), and its extra RTT: twice the sum of the one-way delays its
two DelayBoxes gave it (delays0.txt, delays1.txt; a box delays every packet of the flow by its
value in each direction, delaybox.cc), with the client-side box's part. See the script's
header for the files. `pack` turns them into replay<i>.csv (`[[traffic]] kind = "replay"`) and
removes them: the debug output of one run is about 65 MB.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

# packmime_e2e.tcl moves instance 1's flow ids up by this much (common.tcl offset_flow_ids).
FID_OFFSET = 100_000_000
COLUMNS = (
    "start_s",
    "request_bytes",
    "response_bytes",
    "server_delay_s",
    "rtt_ms",
    "client_rtt_ms",
)
RAW = ("conn0.txt", "conn1.txt", "samples0.txt", "samples1.txt", "delays0.txt", "delays1.txt")
_NEW_FLOW = re.compile(r"^PackMimeHTTP (\S+)> new flow (\d+) ")
_SERVER_APP = re.compile(r"^\s*flow (\d+) (?:created new|got) ServerApp (\S+) ")
_WAITING = re.compile(r"^server (\S+) \((\d+)\)> waiting (\S+) s ")
# PackMime's debug lines (packmime_HTTP.cc, debug_ > 1): those `pack` removes from ns.log.
_DEBUG = re.compile(r"^(\s|$|PackMimeHTTP \S+> |server \S+ \(|client \S+ \(|Created )")


@dataclass
class Recorded:
    """Both instances' connections (`columns[i]`: a replay source's `connections` table) and
    what could not be recovered: a connection one of whose boxes never saw its SYN (lost
    until the end, or opened in the run's last milliseconds) gets 0 for that box's delay, one
    whose request never reached its server a server delay of 0."""

    columns: list[dict[str, list]] = field(default_factory=list)
    missing_box: int = 0
    missing_server_delay: int = 0


def _box_delays(path: Path) -> dict[int, float]:
    """fid -> one-way delay (ms) of a box's delay file (the first line of each flow)."""
    out: dict[int, float] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) >= 4:
            out.setdefault(int(f[2]), float(f[3]))
    return out


def _debug(path: Path) -> tuple[list[str], dict[tuple[str, int], float]]:
    """The PackMime instances' names in the order they first open a connection (instance 0
    starts first), and (instance name, flow number) -> server delay (s)."""
    names: list[str] = []
    instance_of_app: dict[str, str] = {}
    current = ""
    delays: dict[tuple[str, int], float] = {}
    with path.open() as f:
        for line in f:
            if m := _NEW_FLOW.match(line):
                current = m.group(1)
                if current not in names:
                    names.append(current)
            elif m := _SERVER_APP.match(line):
                instance_of_app[m.group(2)] = current
            elif m := _WAITING.match(line):
                delays.setdefault((instance_of_app[m.group(1)], int(m.group(2))), float(m.group(3)))
    return names, delays


def read(workdir: Path) -> Recorded:
    """The recorded connections of the run in `workdir` (its raw files)."""
    boxes = [_box_delays(workdir / f"delays{b}.txt") for b in (0, 1)]
    names, server = _debug(workdir / "ns.log")
    rec = Recorded()
    for i in (0, 1):
        client_box, server_box = boxes[i], boxes[1 - i]
        conns = [ln.split() for ln in (workdir / f"conn{i}.txt").read_text().splitlines()]
        samples = [ln.split() for ln in (workdir / f"samples{i}.txt").read_text().splitlines()]
        if len(samples) != len(conns):
            raise ValueError(f"{workdir}: {len(conns)} connections but {len(samples)} requests")
        cols: dict[str, list] = {k: [] for k in COLUMNS}
        for (fid, t), (t_req, req, rsp, *_) in zip(conns, samples, strict=True):
            if abs(float(t) - float(t_req)) > 2e-6:
                raise ValueError(f"{workdir}: connection {fid} opened at {t}, request at {t_req}")
            n = int(fid)
            d_client, d_server = client_box.get(n), server_box.get(n)
            if d_client is None or d_server is None:
                rec.missing_box += 1
            delay = server.get((names[i], n - i * FID_OFFSET)) if len(names) > i else None
            if delay is None:
                rec.missing_server_delay += 1
            cols["start_s"].append(float(t))
            cols["request_bytes"].append(max(int(req), 1))
            cols["response_bytes"].append(max(int(rsp), 1))
            cols["server_delay_s"].append(delay or 0.0)
            cols["rtt_ms"].append(2.0 * ((d_client or 0.0) + (d_server or 0.0)))
            cols["client_rtt_ms"].append(2.0 * (d_client or 0.0))
        rec.columns.append(cols)
    return rec


def pack(workdir: Path) -> Recorded:
    """Writes replay0.csv, replay1.csv and recorded.json (what `read` could not recover) from
    the raw files, then removes them and the debug lines of ns.log."""
    rec = read(workdir)
    for i, cols in enumerate(rec.columns):
        rows = zip(*(cols[k] for k in COLUMNS), strict=True)
        lines = [",".join(COLUMNS)] + [",".join(repr(v) for v in r) for r in rows]
        (workdir / f"replay{i}.csv").write_text("\n".join(lines) + "\n")
    counts = {k: v for k, v in asdict(rec).items() if k != "columns"}
    (workdir / "recorded.json").write_text(json.dumps(counts) + "\n")
    for name in RAW:
        (workdir / name).unlink(missing_ok=True)
    trim_log(workdir / "ns.log")
    return rec


def trim_log(log: Path) -> None:
    """Removes PackMime's debug lines from a run's ns.log."""
    if log.exists():
        with log.open() as f:
            kept = [line for line in f if not _DEBUG.match(line)]
        log.write_text("".join(kept))
