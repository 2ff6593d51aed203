"""The kinds of traffic source the metrics tell apart: Web sources (response times, measured
in the direction of their responses) and the sources of traffic mixes (goodput, UDP loss,
runs of losses). A module without polars: `aqmlab run` reads them to decide whether its
summary needs the record tables at all."""

from __future__ import annotations

__all__ = ["MIX_KINDS", "WEB_KINDS"]

WEB_KINDS = ("mah", "browsers", "unc", "packmime")
# Sources whose runs get the mix metrics in `aqmlab run`'s summary.
MIX_KINDS = ("udp_cbr", "ftp")
