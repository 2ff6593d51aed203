"""Compares two outputs of bench/digests.sh: every (scenario, column) present in both must have
the same hash; those only in the new output are reported as additions, those only in the old
one as removals (a failure). Exit status 0 when nothing existing changed.

    python3 bench/compare_digests.py BEFORE AFTER
"""

from __future__ import annotations

import sys


def read(path: str) -> dict[tuple[str, str], str]:
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                out[(parts[0], parts[1])] = parts[2]
    return out


def main(before_path: str, after_path: str) -> int:
    before, after = read(before_path), read(after_path)
    if not before:
        print(f"{before_path}: no digests")
        return 2
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    # The whole-run digest covers the new columns too: it differs whenever columns are added.
    changed = [k for k in changed if k[1] != "ALL"]
    removed = sorted(before.keys() - after.keys())
    added = sorted(after.keys() - before.keys())
    scenarios = sorted({k[0] for k in before})
    for k in added:
        print(f"added    {k[0]} {k[1]}")
    for k in removed:
        print(f"REMOVED  {k[0]} {k[1]}")
    for k in changed:
        print(f"CHANGED  {k[0]} {k[1]}")
    same = len(before.keys() & after.keys()) - len(changed)
    print(
        f"{len(scenarios)} scenarios: {same} columns/fields identical, {len(changed)} changed, "
        f"{len(removed)} removed, {len(added)} added"
    )
    return 1 if changed or removed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
