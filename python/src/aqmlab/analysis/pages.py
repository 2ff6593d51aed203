"""Page loads (`kind = "pages"`, docs/workload.md "Page loads"): the run summary's `pages`
section as flat metrics for a study catalog, and the line `aqmlab run` prints. Standard
library only: `aqmlab run` imports it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The `pages` section's fields, in the order they are reported.
FIELDS = (
    "pages_started",
    "pages_completed",
    "pages_failed",
    "pages_unfinished",
    "plt_mean_s",
    "plt_p50_s",
    "plt_p95_s",
    "ttfb_p50_s",
    "ttfb_p95_s",
)


def summary_metrics(summary: Mapping[str, Any], results_dir: Any = None) -> dict[str, float]:
    """`pages.<field>` for each field of the core summary's `pages` section (NaN for a field
    the core wrote as null: no completed page); empty without a `pages` source. `summary` is
    the core's summary (`summary.json`'s `summary`) or the whole file; `results_dir` is not
    read (every figure is in the summary)."""
    del results_dir
    core = summary.get("summary", summary)
    pages = core.get("pages") if isinstance(core, Mapping) else None
    if not isinstance(pages, Mapping):
        return {}
    out = {}
    for f in FIELDS:
        v = pages.get(f)
        out[f"pages.{f}"] = float(v) if isinstance(v, int | float) else float("nan")
    return out


def format_line(core: Mapping[str, Any]) -> str | None:
    """One line for `aqmlab run`: pages completed and the load and first-byte times; None
    without a `pages` source."""
    pages = core.get("pages")
    if not isinstance(pages, Mapping):
        return None

    def s(key: str) -> str:
        v = pages.get(key)
        return f"{v:.3f} s" if isinstance(v, int | float) else "-"

    return (
        f"pages (started after warm-up): {pages.get('pages_completed', 0)} loaded of "
        f"{pages.get('pages_started', 0)}, {pages.get('pages_failed', 0)} failed; "
        f"load time p50 {s('plt_p50_s')}, p95 {s('plt_p95_s')}; "
        f"first byte p50 {s('ttfb_p50_s')}, p95 {s('ttfb_p95_s')}"
    )
