"""Scales of a study's sweep file: `full` is the file as written (the paper's design);
other scales are `[scale.NAME]` tables in the same file that shorten runs and thin grids
while keeping the design:

    [scale.quick]
    repetitions = 1                                   # fewer repetitions
    set = { duration_s = 900.0, warmup_s = 300.0 }    # merged over [sweep].set
    keep = { load = ["90%", "98%"] }                  # axis name -> labels kept, in file order

`derive` writes the plain sweep file of one scale (no [scale] tables, the base scenario by
absolute path), which `aqmlab sweep` then runs like any other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aqmlab import scenario as sc
from aqmlab.study import sweepfile

__all__ = ["FULL", "derive", "scales", "to_toml"]

FULL = "full"
_SCALE_KEYS = ("repetitions", "set", "keep")


def scales(path: str | os.PathLike) -> list[str]:
    """The scales a study sweep file offers: `full` and its [scale.NAME] tables."""
    doc = sc.read_toml(Path(path))
    return [FULL, *sorted(doc.get("scale", {}))]


def _scaled(doc: Mapping[str, Any], scale: str, where: str) -> dict[str, Any]:
    out = {k: v for k, v in doc.items() if k != "scale"}
    if scale == FULL:
        return out
    table = doc.get("scale", {}).get(scale)
    if not isinstance(table, Mapping):
        offered = ", ".join([FULL, *sorted(doc.get("scale", {}))])
        raise sc.ScenarioError(f"{where}: no scale {scale!r} (offered: {offered})")
    bad = [k for k in table if k not in _SCALE_KEYS]
    if bad:
        raise sc.ScenarioError(
            f"{where}: scale.{scale}.{bad[0]}: unknown key, allowed: {', '.join(_SCALE_KEYS)}"
        )
    head = dict(out["sweep"])
    if "repetitions" in table:
        head["repetitions"] = table["repetitions"]
    head["set"] = {**head.get("set", {}), **table.get("set", {})}
    out["sweep"] = head
    keep = table.get("keep", {})
    axes = [dict(a) for a in out.get("axis", [])]
    names = {a.get("name") for a in axes}
    for name in keep:
        if name not in names:
            shown = ", ".join(map(str, names))
            raise sc.ScenarioError(f"{where}: scale.{scale}.keep.{name}: no such axis ({shown})")
    for i, a in enumerate(axes):
        wanted = keep.get(a["name"])
        if wanted is None:
            continue
        labels = list(sweepfile.parse_axis(i, a).labels)  # the labels the sweep will show
        missing = [w for w in wanted if w not in labels]
        if missing:
            raise sc.ScenarioError(
                f"{where}: scale.{scale}.keep.{a['name']}: no label {missing[0]!r} "
                f"(labels: {', '.join(labels)})"
            )
        n = len(labels)
        idx = [i for i in range(n) if labels[i] in wanted]
        if "values" in a:
            a["values"] = [a["values"][i] for i in idx]
        else:
            a["zip"] = {f: [vs[i] for i in idx] for f, vs in a["zip"].items()}
        a["labels"] = [labels[i] for i in idx]
    if axes:
        out["axis"] = axes
    return out


def derive(path: str | os.PathLike, scale: str, dest: str | os.PathLike) -> Path:
    """Writes the sweep file of `scale` to `dest` and checks it; returns `dest`."""
    src = Path(path).resolve()
    doc = sc.read_toml(src)
    scaled = _scaled(doc, scale, str(src))
    head = scaled.get("sweep", {})
    if "base" in scaled or not isinstance(head.get("scenario"), str):
        raise sc.ScenarioError(f"{src}: a study's sweep file names its base `scenario` file")
    head["scenario"] = str((src.parent / head["scenario"]).resolve())
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(
        f"# {scale} scale of {src.name} (written by aqmlab reproduce; edit the original)\n"
        + to_toml(scaled),
        encoding="utf-8",
    )
    sweepfile.read(dest)  # a malformed study file fails here, before anything runs
    return dest


# --- a small TOML writer: the values of sweep files (tables, arrays, scalars) ------------


def _key(k: str) -> str:
    import re

    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _value(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(str(k))} = {_value(x)}" for k, x in v.items()) + " }"
    raise sc.ScenarioError(f"cannot write {v!r} as TOML")


def to_toml(doc: Mapping[str, Any]) -> str:
    """TOML text for a sweep document: top-level tables and arrays of tables, every other
    value inline."""
    lines: list[str] = []
    for name, value in doc.items():
        if isinstance(value, list) and value and all(isinstance(x, Mapping) for x in value):
            for item in value:
                lines.append(f"\n[[{_key(name)}]]")
                lines += [f"{_key(str(k))} = {_value(x)}" for k, x in item.items()]
        elif isinstance(value, Mapping):
            lines.append(f"\n[{_key(name)}]")
            lines += [f"{_key(str(k))} = {_value(x)}" for k, x in value.items()]
        else:
            lines.insert(0, f"{_key(name)} = {_value(value)}")
    return "\n".join(lines).lstrip("\n") + "\n"
