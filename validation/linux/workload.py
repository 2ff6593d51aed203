"""The short-flow (Web-like) workload the bed and aqmlab share exactly: a schedule of
connections, one row each (when the client opens it, the request's and the response's bytes),
generated from a seed and written as a CSV that both sides read — the bed's clients
(agents.py web_fetch) and aqmlab's `kind = "replay"` traffic (docs/workload.md).

The law, from first principles and the measurement literature it rests on:

- **Opens**: a Poisson process (exponential gaps) of rate λ. User-initiated sessions arrive
  as a Poisson process (Paxson & Floyd, "Wide area traffic: the failure of Poisson
  modeling", IEEE/ACM ToN 3(3), 1995, §IV: TELNET and FTP session arrivals); each open here
  is independent of the network's state (open loop), so both sides get the same offered load
  whatever their queues do.
- **Responses**: Pareto sizes, shape α = 1.2 and scale x_m = 4 KB, cut at 3 MB
  (min(X, cap)). Web transfer sizes are heavy-tailed with α between about 1.1 and 1.3
  (Crovella & Bestavros, "Self-similarity in World Wide Web traffic", IEEE/ACM ToN 5(6),
  1997, §4.2); the cut keeps a 60 s run's largest transfer within a few seconds of the
  link. With these values a third of the responses exceed 10 KB and 2 % exceed 100 KB, so
  the three size classes of the FCT metric (fct.py) all have members.
- **Requests**: 300 bytes each (a GET fits one segment; its size barely matters to a
  download).
- **Rate**: λ = load · payload capacity / E[min(X, cap)] with E[min(X, c)] = x_m·α/(α − 1) −
  x_m^α·c^(1−α)/(α − 1) (the Pareto mean less the part above the cut), the payload capacity
  being the link's rate × 1448/1514 (a full frame's payload share). Default load 0.5.

Beside the short flows the bed runs a couple of greedy flows (`--flows 2` with `--web`): a
Web-like test of an AQM is short flows meeting a queue that the long ones keep busy, without
them the queue at 50 % load is mostly empty and every AQM the same.

Standard library only, so that the schedule is the same on any host: `random.Random(seed)`
(expovariate, paretovariate), rounded to whole bytes and to the µs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

COLUMNS = ("start_s", "request_bytes", "response_bytes")
PAYLOAD_SHARE = 1448 / 1514  # a full frame's payload share of the bytes htb counts


@dataclass(frozen=True)
class WebLaw:
    load: float = 0.5  # of the link's payload capacity
    rate_mbit: float = 10.0
    shape: float = 1.2  # Pareto α
    scale_bytes: float = 4000.0  # Pareto x_m
    cap_bytes: int = 3_000_000
    request_bytes: int = 300

    def mean_response_bytes(self) -> float:
        """E[min(X, cap)] of the cut Pareto (α ≠ 1)."""
        a, xm, c = self.shape, self.scale_bytes, float(self.cap_bytes)
        return xm * a / (a - 1) - xm**a * c ** (1 - a) / (a - 1)

    def opens_per_s(self) -> float:
        capacity_bytes_s = self.rate_mbit * 1e6 / 8 * PAYLOAD_SHARE
        return self.load * capacity_bytes_s / self.mean_response_bytes()


def check(law: WebLaw) -> None:
    if not 0 < law.load < 1:
        raise ValueError(f"web load {law.load}: expected a share of the link in (0, 1)")
    if law.shape <= 1 or law.scale_bytes < 1 or law.cap_bytes < law.scale_bytes:
        raise ValueError("web sizes: expected shape > 1, scale ≥ 1 byte, cap ≥ scale")
    if law.request_bytes < 20:
        raise ValueError(f"web request {law.request_bytes} bytes: at least 20 (the header)")


def schedule(law: WebLaw, seconds: float, seed: int) -> list[tuple[float, int, int]]:
    """(start_s, request_bytes, response_bytes) of every connection opened in [0, seconds)."""
    check(law)
    rng = random.Random(seed)
    lam = law.opens_per_s()
    rows, t = [], 0.0
    while True:
        t += rng.expovariate(lam)
        if t >= seconds:
            return rows
        size = min(round(law.scale_bytes * rng.paretovariate(law.shape)), law.cap_bytes)
        rows.append((round(t, 6), law.request_bytes, max(int(size), 1)))


def write(rows: list[tuple[float, int, int]], path: Path, law: WebLaw, seed: int) -> None:
    """The schedule as a CSV with a header (the columns aqmlab's replay reads) and a comment
    line giving the law and seed it came from."""
    lines = [f"# {law} seed={seed}", ",".join(COLUMNS)]
    lines += [f"{t!r},{q},{r}" for t, q, r in rows]
    path.write_text("\n".join(lines) + "\n")


def read(path: Path) -> list[tuple[float, int, int]]:
    rows = []
    lines = [x for x in path.read_text().splitlines() if x.strip() and not x.startswith("#")]
    head = lines[0].split(",")
    idx = [head.index(c) for c in COLUMNS]
    for line in lines[1:]:
        cols = line.split(",")
        rows.append((float(cols[idx[0]]), int(cols[idx[1]]), int(cols[idx[2]])))
    return rows
