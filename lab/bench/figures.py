#!/usr/bin/env python3
"""Print bench figures as a plain-text block for a commit message.

usage: figures.py RESULTS_DIR A B CELLS METRICS [TAGS]

A, B: module names of the run (upstream, pK, series); CELLS, METRICS and
TAGS (swiotlb=off,swiotlb=force; default all) are comma lists. Each line
gives the median [min, max] of A and of B and the ratio of the medians,
read from RESULTS_DIR/summary.json (lab/bench/report.py writes it), so a figure
in a commit message can always be traced to a results directory.
"""

import json
import sys
from pathlib import Path


def fmt(x):
    """X with 3 significant digits (none after the point from 100 up)."""
    if x is None:
        return "n/a"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def cell(v):
    """median [min, max] of the summary V."""
    if not v:
        return "n/a"
    return f"{fmt(v['median'])} [{fmt(v['min'])}, {fmt(v['max'])}]"


def main():
    """Print the lines of the command line's cells and metrics."""
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__.strip().splitlines()[2])
    d, a, b, cells, metrics = sys.argv[1:6]
    summary = json.loads((Path(d) / "summary.json").read_text())
    tags = sys.argv[6].split(",") if len(sys.argv) == 7 else list(summary)
    n = 0
    for tag in tags:
        if tag not in summary:
            sys.exit(f"error: no {tag} in {d}/summary.json "
                     f"(has {', '.join(summary)})")
        for c in cells.split(","):
            per = summary[tag].get(c)
            if not per or a not in per or b not in per:
                sys.exit(f"error: no {a}/{b} figures for {tag} {c}")
            reps = max((v["n"] for v in per[a].values()
                        if isinstance(v, dict) and "n" in v), default=0)
            print(f"{c}, {tag} ({reps} runs): {a} -> {b}")
            for m in metrics.split(","):
                va, vb = per[a].get(m), per[b].get(m)
                if va is None and vb is None:
                    sys.exit(f"error: no metric {m!r} in {tag} {c}")
                r = (vb["median"] / va["median"]
                     if va and vb and va["median"] else None)
                ratio = f", x{r:.2f}" if r is not None else ""
                # two lines, so a commit message stays within 75 columns
                print(f"  {m}:\n    {cell(va)} -> {cell(vb)}{ratio}")
                n += 1
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
