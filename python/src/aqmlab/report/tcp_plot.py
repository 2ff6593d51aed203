"""One connection's time-sequence and congestion-window graph (tcptrace's and Wireshark's
"Stevens" view), from a run traced with `[trace.tcp]` (`aqmlab run --trace-tcp`).

Top panel: the sequence numbers of the data the chosen side sends (a dot per segment at its
send time, retransmissions in red, ECN-CE echoes and SACK edges as the receiver reports them)
and the acknowledgement line (the other side's cumulative ACK, a step). Bottom panel: cwnd,
ssthresh (while finite), bytes in flight, and shaded spans of fast recovery and loss
recovery. Sequence numbers are the model's byte offsets from the side's ISN (0).
"""

from __future__ import annotations

import polars as pl
from matplotlib.figure import Figure

from aqmlab.errors import ScenarioError

SIDES = ("client", "server")


def _need(results, name: str):
    try:
        return results[name]
    except KeyError:
        raise ScenarioError(
            f"{results.directory}: no {name} table; run with --trace-tcp (or [trace.tcp])"
        ) from None


def data_side(segments: pl.DataFrame, conn: int) -> str:
    """The side that sent more payload: the data sender of a download or an upload."""
    mine = segments.filter(pl.col("conn") == conn)
    if mine.height == 0:
        raise ScenarioError(f"connection {conn}: no segments traced")
    by = mine.group_by("side").agg(pl.col("len").sum()).sort("len", descending=True)
    return SIDES[int(by["side"][0])]


def connection_figure(results, conn: int, side: str | None = None) -> Figure:
    """The two-panel graph of connection `conn`, for the data sent by `side` (default: the
    side that sent more)."""
    segs = _need(results, "segments")
    state = _need(results, "tcp_state")
    side = side or data_side(segs, conn)
    if side not in SIDES:
        raise ScenarioError(f"--side {side}: expected client or server")
    k = SIDES.index(side)
    mine = segs.filter(pl.col("conn") == conn)
    sent = mine.filter((pl.col("side") == k) & (pl.col("len") > 0))
    acks = mine.filter(pl.col("side") == 1 - k).sort("t_s")
    st = state.filter((pl.col("conn_id") == conn) & (pl.col("side") == side)).sort("t_s")
    if st.height == 0:
        raise ScenarioError(f"connection {conn}: no {side} state traced")

    fig = Figure(figsize=(8.0, 7.0))
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    new = sent.filter(~pl.col("retransmit"))
    rtx = sent.filter(pl.col("retransmit"))
    top.plot(new["t_s"], new["seq"], ".", ms=2, color="C0", label="data sent")
    top.plot(rtx["t_s"], rtx["seq"], "x", ms=5, color="C3", label="retransmission")
    top.step(acks["t_s"], acks["ack"], where="post", color="C2", lw=1, label="ACK")
    sacked = acks.filter(pl.col("sack_n") > 0)
    if sacked.height:
        top.plot(sacked["t_s"], sacked["sack0_end"], "|", ms=4, color="C4", label="SACK edge")
    ece = acks.filter((pl.col("flags") & 0x40) != 0)
    if ece.height:
        top.plot(ece["t_s"], ece["ack"], "v", ms=3, color="C1", label="ECE")
    top.set_ylabel("sequence number (bytes)")
    top.set_title(f"connection {conn}: data from the {side}")
    top.legend(loc="upper left", fontsize="small")
    top.grid(alpha=0.3)

    t = st["t_s"].to_numpy()
    bottom.step(t, st["cwnd"] / 1e3, where="post", color="C0", label="cwnd")
    ss = st["ssthresh"].to_numpy().astype(float)
    finite = ss < 1e9
    ss[~finite] = float("nan")
    bottom.step(t, ss / 1e3, where="post", color="C1", label="ssthresh")
    bottom.step(t, st["in_flight"] / 1e3, where="post", color="C7", lw=0.8, label="in flight")
    for name, color in (("recovery", "C3"), ("loss", "k")):
        on = (st["ca_state"] == name).to_numpy()
        for i in range(len(t)):
            if on[i]:
                end = t[i + 1] if i + 1 < len(t) else t[i]
                bottom.axvspan(t[i], end, color=color, alpha=0.12, lw=0)
    bottom.set_xlabel("time (s)")
    bottom.set_ylabel("kB")
    bottom.legend(loc="upper left", fontsize="small")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    return fig
