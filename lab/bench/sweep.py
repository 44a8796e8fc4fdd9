#!/usr/bin/env python3
"""What we do not know about the silicon, swept (``make sweep``).

The model's figures rest on parameters nobody has measured on a LAN7430:
the RX FIFO's size, the fixed part of a MAC RX disable and a DMA stop, a
link partner that honours pause or ignores it, and what a stop does with
pending descriptor write-backs. ``run`` runs the count cells (TCP RX at MTU
1500 and 9000, upstream vs series: lab/bench/bench.py; the live MTU
change: lab/bench/outage.py) at the corners of those unknowns, each corner
with every factor given explicitly (--model); ``report`` prints, per
figure, upstream vs series median [min, max] at each corner and the
direction there: "<" or ">" only where the two [min, max] ranges are
disjoint with at least MIN_N values each, "not resolved" where they
overlap (equal medians included), "too few" below MIN_N, "no data" when
both are all zero. The verdict is "holds (series D upstream)" only when
every corner resolves to the same D; "not resolved at ..." when a corner
does not resolve; "depends on F" when resolved corners disagree.

Corners: the base (the model's defaults, the unkind ends) and one factor
at a time flipped to its other end (--mid adds the FIFO's middle value);
--factorial: every combination (16 corners, about 8 hours on two cores).

    python3 lab/bench/sweep.py run [--reps 5] [--arch x86_64|armv7]
                                   [--factorial] [--mid] [--out DIR]
    python3 lab/bench/sweep.py report DIR

ARCH=armv7 runs the bench cells only (the outage is x86_64's). Output:
DIR/<corner>/{corner.json,bench/,outage/}, DIR/sweep.md.
"""

import argparse
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import fmt, metrics, reduce

LAB = Path(__file__).resolve().parents[1]
ROOT = LAB.parent

#: (factor, its levels: the base first, then the other end(s)); a level
#: is the device properties it sets (lab/vm/qmp.py KNOBS)
FACTORS = [
    ("rx-fifo-kib", [{"rx-fifo-kib": 32}, {"rx-fifo-kib": 12}]),
    ("stop-fixed-us", [{"mac-disable-us": 0, "dma-stop-us": 0},
                       {"mac-disable-us": 100, "dma-stop-us": 100}]),
    ("peer-pause", [{"peer-pause": 0}, {"peer-pause": 1}]),
    ("wb-at-stop", [{"wb-at-stop": 1}, {"wb-at-stop": 0}]),
]
#: --scoped: the sources (bench cells, outage) a factor can act on; at a
#: corner that flips one factor only those run. The steady TCP cells make
#: no stop after their warm-up, so the stop's fixed part and the
#: write-backs pending at a stop act on the outage alone; the FIFO and
#: pause act on both (the series' channel switch keeps its FIFO receiving
#: while the DMA channel is stopped: the outage's FIFO overflows and pause
#: frames show it).
ACTS = {"rx-fifo-kib": ("bench", "outage"), "peer-pause": ("bench", "outage"),
        "stop-fixed-us": ("outage",), "wb-at-stop": ("outage",)}
#: --mid: the FIFO's middle value, one more level of rx-fifo-kib
MID = {"rx-fifo-kib": 20}
CELLS = ("tcp-rx-1500", "tcp-rx-9000")
#: (figure, source, metric): bench figures per received frame (report.py's
#: metric names) and the outage's frames lost per MTU change
FIGURES = [
    ("frames finding no free RX descriptor/frame", "bench",
     "emu RX frames finding no descriptor/pkt"),
    ("RX FIFO overflows/frame", "bench",
     "emu RX FIFO overflows (frames dropped, FIFO full)/pkt"),
    ("RX frames dropped by the device/frame", "bench",
     "emu RX frames dropped by the device/pkt"),
    ("pause frames sent/frame", "bench", "emu pause frames sent/pkt"),
    ("frames lost per MTU change", "outage", "lost"),
]
MODULES = ("upstream", "series")


def levels(mid=False):
    """[(factor, [level, ...])] with --mid's extra FIFO level."""
    out = []
    for name, lv in FACTORS:
        lv = list(lv)
        if mid and name == "rx-fifo-kib":
            lv.insert(1, MID)
        out.append((name, lv))
    return out


def level_name(factor, level):
    """'factor=value' of one level (the value of its first property)."""
    return f"{factor}={next(iter(level.values()))}"


def corners(factorial=False, mid=False):
    """[(corner name, {factor: level index}, {property: value})]: the base,
    then one factor at a time at each other level (factorial: every
    combination, the base first)."""
    fl = levels(mid)
    if factorial:
        combos = list(itertools.product(*[range(len(lv)) for _, lv in fl]))
    else:
        combos = [tuple(0 for _ in fl)]
        for i, (_, lv) in enumerate(fl):
            for j in range(1, len(lv)):
                combos.append(tuple(j if k == i else 0
                                    for k in range(len(fl))))
    out = []
    for c in combos:
        model, names = {}, []
        for (factor, lv), j in zip(fl, c):
            model.update(lv[j])
            if j:
                names.append(level_name(factor, lv[j]))
        out.append(("+".join(names) or "base",
                    {f: j for (f, _), j in zip(fl, c)}, model))
    return out


def model_args(model):
    """--model KEY=VALUE arguments of bench.py and outage.py."""
    return [a for k, v in model.items() for a in ("--model", f"{k}={v}")]


def run(args):
    """Run bench (and outage on x86_64) at every corner; then report."""
    out = Path(args.out or ROOT / "results" /
               time.strftime("sweep-%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    if args.scoped and args.factorial:
        print("sweep: --scoped is for one factor at a time, not with "
              "--factorial", file=sys.stderr)
        return 2
    todo = corners(args.factorial, args.mid)
    if args.corners:
        want = args.corners.split(",")
        unknown = sorted(set(want) - {n for n, _, _ in todo})
        if unknown:
            print(f"sweep: no corner {', '.join(unknown)}; corners: "
                  + ", ".join(n for n, _, _ in todo), file=sys.stderr)
            return 2
        todo = [c for c in todo if c[0] in want]
    print(f"sweep: {len(todo)} corners, {args.reps} reps, {args.arch}; "
          f"results in {out}", file=sys.stderr, flush=True)
    for i, (name, lv, model) in enumerate(todo, 1):
        # no "=" in the path: the VM's shared directories are given to
        # virtme as NAME=PATH pairs
        d = out / name.replace("=", "-")
        d.mkdir(exist_ok=True)
        rcs = {}
        jobs = [("bench", [sys.executable, str(LAB / "bench" / "bench.py"),
                           "--arch", args.arch, "--reps", str(args.reps),
                           "--cells", ",".join(CELLS), "--modules",
                           ",".join(MODULES), "--out", str(d / "bench")]
                 + (["--swiotlb", "off"] if args.arch == "x86_64" else []))]
        if args.arch == "x86_64":
            jobs.append(("outage", [sys.executable,
                                    str(LAB / "bench" / "outage.py"),
                                    "--reps", str(args.reps), "--modules",
                                    ",".join(MODULES), "--out",
                                    str(d / "outage")]))
        flipped = [f for f, j in lv.items() if j]
        if args.scoped and flipped:
            jobs = [j for j in jobs if j[0] in ACTS[flipped[0]]]
        for what, cmd in jobs:
            print(f"sweep: corner {i}/{len(todo)} {name}: {what}",
                  file=sys.stderr, flush=True)
            rcs[what] = subprocess.run(cmd + model_args(model),
                                       check=False).returncode
        (d / "corner.json").write_text(json.dumps(
            {"name": name, "levels": lv, "model": model, "rc": rcs,
             "ran": [w for w, _ in jobs]},
            indent=1))
    text, _ = report(out)
    print(text)
    return 0


def load_corner(d):
    """{(figure, cell, module): [values]} of one corner directory."""
    vals = {}
    rec_file = d / "bench" / "records.jsonl"
    if rec_file.exists():
        for line in rec_file.read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            m = metrics(r)
            for fig, src, key in FIGURES:
                if src == "bench" and r.get("cell") in CELLS:
                    vals.setdefault((fig, r["cell"], r["module"]),
                                    []).append(m.get(key))
    out_file = d / "outage" / "outage.json"
    if out_file.exists():
        res = json.loads(out_file.read_text())
        for fig, src, key in FIGURES:
            if src == "outage":
                for mod, runs in res["outage"].items():
                    vals.setdefault((fig, "mtu-change", mod), []).extend(
                        v for r in runs for v in r.get(key, []))
    return vals


#: values per module and corner below which no direction is stated
MIN_N = 5
#: what a corner that states a direction says
RESOLVED = ("<", ">")


def direction(up, se, min_n=MIN_N):
    """The series against upstream at one corner, from reduce() results:
    '<' or '>' when their [min, max] ranges are disjoint, 'not resolved'
    when they overlap, 'too few' with fewer than MIN_N values in either,
    'no data' when both are all zero (a pipeline that measured nothing),
    None when either is missing."""
    if up is None or se is None:
        return None
    if min(up["n"], se["n"]) < min_n:
        return "too few"
    if up["min"] == up["max"] == se["min"] == se["max"] == 0:
        return "no data"
    if se["max"] < up["min"]:
        return "<"
    if se["min"] > up["max"]:
        return ">"
    return "not resolved"


def verdict(dirs, corner_levels):
    """'holds (series D upstream)' when every corner resolves to the same
    direction D; 'not resolved at C, ...' when a corner does not (its
    ranges overlap, too few values, no data); else 'depends on F, ...':
    the factors F for which two corners that differ in F alone have
    different directions (or, when no such pair exists, the factors of
    the corners that differ from the base); 'incomplete' when a corner
    lacks the figure."""
    names = list(dirs)
    if any(dirs[n] is None for n in names):
        return "incomplete: no figure at " + ", ".join(
            n for n in names if dirs[n] is None)
    open_ = [n for n in names if dirs[n] not in RESOLVED]
    if open_:
        return "not resolved at " + ", ".join(
            f"{n} ({dirs[n]})" for n in open_)
    base = dirs[names[0]]
    if all(d == base for d in dirs.values()):
        return f"holds (series {base} upstream)"
    dep = set()
    for a, b in itertools.combinations(names, 2):
        diff = [f for f in corner_levels[a]
                if corner_levels[a][f] != corner_levels[b].get(f)]
        if len(diff) == 1 and dirs[a] != dirs[b]:
            dep.add(diff[0])
    if not dep:
        dep = {f for n in names if dirs[n] != base
               for f, j in corner_levels[n].items()
               if j != corner_levels[names[0]].get(f)}
    return "depends on " + ", ".join(sorted(dep))


def cell_text(s):
    """median [min, max] of a reduce() result, n/a without one."""
    if s is None:
        return "n/a"
    return f"{fmt(s['median'])} [{fmt(s['min'])}, {fmt(s['max'])}]"


def report(d):
    """The sweep's markdown (also written to D/sweep.md) and its verdicts
    {(figure, cell): verdict}."""
    d = Path(d)
    info = {}
    for cj in sorted(d.glob("*/corner.json")):
        c = json.loads(cj.read_text())
        info[c["name"]] = (c, load_corner(cj.parent))
    # the base first, then as run
    names = sorted(info, key=lambda n: (n != "base", n))
    lines = ["# Sweep of the model's unknowns", "",
             "Corners (device properties, --model):", ""]
    for n in names:
        c = info[n][0]
        failed = {k: v for k, v in (c.get("rc") or {}).items() if v}
        lines.append(f"- {n}: " + ", ".join(f"{k}={v}" for k, v in
                                             c["model"].items())
                     + (f" (FAILED: {failed})" if failed else ""))
    lines.append("")
    verdicts = {}
    for fig, src, _ in FIGURES:
        cells = CELLS if src == "bench" else ("mtu-change",)
        for cell in cells:
            lines += [f"## {fig}, {cell}", "",
                      "| corner | upstream | series | series vs upstream |",
                      "|---|---|---|---|"]
            dirs, skipped = {}, []
            for n in names:
                ran = info[n][0].get("ran")
                if ran is not None and src not in ran:
                    skipped.append(n)
                    lines.append(f"| {n} | not run | not run | "
                                 f"(scoped: its factor does not act on "
                                 f"the {src}) |")
                    continue
                vals = info[n][1]
                up = reduce(vals.get((fig, cell, "upstream"), []))
                se = reduce(vals.get((fig, cell, "series"), []))
                dirs[n] = direction(up, se)
                lines.append(f"| {n} | {cell_text(up)} | {cell_text(se)} "
                             f"| {dirs[n] or 'n/a'} |")
            v = (verdict(dirs, {n: info[n][0]["levels"] for n in dirs})
                 if dirs else "not run")
            if skipped and dirs:
                v += " at the corners it was run at (not run: " + \
                    ", ".join(skipped) + ")"
            verdicts[fig, cell] = v
            lines += ["", f"Direction: {v}.", ""]
    text = "\n".join(lines)
    (d / "sweep.md").write_text(text + "\n")
    return text, verdicts


def main(argv=None):
    """run or report."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="op", required=True)
    p = sub.add_parser("run", help="run the corners, then report")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--arch", default="x86_64", choices=("x86_64", "armv7"))
    p.add_argument("--factorial", action="store_true",
                   help="every combination of the factors")
    p.add_argument("--mid", action="store_true",
                   help=f"the FIFO's middle value too ({MID})")
    p.add_argument("--corners", default=None,
                   help="comma-separated corner names to run (default all)")
    p.add_argument("--scoped", action="store_true",
                   help="at a one-factor corner run only the sources the "
                   "factor acts on (ACTS)")
    p.add_argument("--out", default=None)
    p = sub.add_parser("report", help="print the report of a sweep")
    p.add_argument("dir")
    args = ap.parse_args(argv)
    if args.op == "run":
        return run(args)
    print(report(args.dir)[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
