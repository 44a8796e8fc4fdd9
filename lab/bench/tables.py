#!/usr/bin/env python3
"""Write the README's results tables from the runs in measurements/.

The README (and docs/design.md, its layout comparison) quote the bench's
figures in blocks between markers:

    <!-- tables:NAME begin -->
    ...generated...
    <!-- tables:NAME end -->

This script computes the results block from the runs' summary.json files
(median, min and max over the repetitions, as lab/bench/report.py writes
them; a row added to report.py after a run was summarised is computed
from that run's records.jsonl by report.py's metrics()), copies the
bench-sample block's rows from a run's table.md, and rewrites the blocks
in place. With --check it changes nothing and exits 1
when a block differs from what the runs give (a hand-edited figure, a run
replaced without regenerating), so that `make test` catches the drift
(tests/test_readme_tables.py).

    python3 lab/bench/tables.py            # rewrite README.md's blocks
    python3 lab/bench/tables.py --check    # exit 1 if README.md is stale
    python3 lab/bench/tables.py --print    # print the blocks

Every row names the run it comes from; a run is a directory of
measurements/ listed in measurements/README.md.
"""
import argparse
import difflib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "measurements"
README = ROOT / "README.md"
sys.path.insert(0, str(ROOT / "lab" / "series"))
from patchids import patch_ids

# The runs the README's tables come from (measurements/<run>/summary.json).
X86 = "bench-current-20261204"       # make bench swiotlb=off, the patches as they are
X86_SYNC = "bench-v3-20261128"      # swiotlb=force cells (sync counts), v3
ARM = "arm-bench-current-20261204"  # bench.py --arch armv7, hist triggers, the patches now
PINNED = X86                        # pages held after RX
ATUP = "bench-v4-atup-20261201"     # the same, each MTU set with DUT down
SLAB = "bench-slab-20261202"        # as ATUP, the emptied slabs counted too
ARM_TAG = "armv7-noncoherent"

# (label, guest, run, swiotlb tag, cell pattern ({mtu}), metric, mtus)
# TCP RX cells, per received frame unless the label says otherwise.
RESULT_ROWS = [
    ("DMA map calls/frame", "x86_64", X86, "swiotlb=off",
     "tcp-rx-{mtu}", "dma map calls/pkt", (1500, 9000)),
    ("DMA map calls/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "dma map calls/pkt", (1500, 9000)),
    ("DMA map bytes/frame", "x86_64", X86, "swiotlb=off",
     "tcp-rx-{mtu}", "map bytes/pkt", (1500, 9000)),
    ("DMA map bytes/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "map bytes/pkt", (1500, 9000)),
    ("DMA sync-for-device calls/frame", "x86_64", X86_SYNC, "swiotlb=force",
     "tcp-rx-{mtu}", "sync-dev calls/pkt", (1500, 9000)),
    ("DMA sync-for-device calls/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "sync-dev calls/pkt", (1500, 9000)),
    ("DMA sync-for-device bytes/frame", "x86_64", X86_SYNC, "swiotlb=force",
     "tcp-rx-{mtu}", "sync-dev bytes/pkt", (1500, 9000)),
    ("DMA sync-for-device bytes/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "sync-dev bytes/pkt", (1500, 9000)),
    ("DMA sync-for-CPU bytes/frame", "x86_64", X86_SYNC, "swiotlb=force",
     "tcp-rx-{mtu}", "sync-cpu bytes/pkt", (1500, 9000)),
    ("DMA sync-for-CPU bytes/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "sync-cpu bytes/pkt", (1500, 9000)),
    ("cache cleans (`arch_sync_dma_for_device`)/frame", "ARMv7", ARM,
     ARM_TAG, "tcp-rx-{mtu}", "arch_sync_dma_for_device calls/pkt",
     (1500, 9000)),
    ("cache invalidates (`arch_sync_dma_for_cpu`)/frame", "ARMv7", ARM,
     ARM_TAG, "tcp-rx-{mtu}", "arch_sync_dma_for_cpu calls/pkt",
     (1500, 9000)),
    ("RX tail doorbells/frame", "x86_64", X86, "swiotlb=off",
     "tcp-rx-{mtu}", "RX tail writes/pkt", (1500, 9000)),
    ("RX tail doorbells/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "RX tail writes/pkt", (1500, 9000)),
    ("interrupts/frame (device)", "x86_64", X86, "swiotlb=off",
     "tcp-rx-{mtu}", "emu IRQs/pkt", (1500, 9000)),
    ("interrupts/frame (device)", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "emu IRQs/pkt", (1500, 9000)),
    ("order > 0 page allocations by lan743x/frame", "x86_64", X86,
     "swiotlb=off", "tcp-rx-{mtu}", "driver order>0 allocs/pkt",
     (1500, 9000)),
    ("order > 0 page allocations by lan743x/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "driver order>0 allocs/pkt", (1500, 9000)),
    ("order > 0 page allocations, whole guest/frame", "ARMv7", ARM,
     ARM_TAG, "tcp-rx-{mtu}", "order>0 allocs/pkt (all)", (1500, 9000)),
    ("new page_pool pages/frame", "x86_64", X86, "swiotlb=off",
     "tcp-rx-{mtu}", "page_pool new pages/pkt", (1500, 9000)),
    ("frames that found no free RX descriptor/frame", "x86_64", X86,
     "swiotlb=off", "tcp-rx-{mtu}", "emu RX frames finding no descriptor/pkt",
     (1500, 9000)),
    ("frames that found no free RX descriptor/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "emu RX frames finding no descriptor/pkt",
     (1500, 9000)),
    ("RX FIFO overflows (frames dropped, FIFO full)/frame", "x86_64", X86,
     "swiotlb=off", "tcp-rx-{mtu}",
     "emu RX FIFO overflows (frames dropped, FIFO full)/pkt", (1500, 9000)),
    ("RX FIFO overflows (frames dropped, FIFO full)/frame", "ARMv7", ARM,
     ARM_TAG, "tcp-rx-{mtu}",
     "emu RX FIFO overflows (frames dropped, FIFO full)/pkt", (1500, 9000)),
    ("RX frames dropped by the device/frame", "x86_64", X86, "swiotlb=off",
     "tcp-rx-{mtu}", "emu RX frames dropped by the device/pkt",
     (1500, 9000)),
    ("RX frames dropped by the device/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "emu RX frames dropped by the device/pkt",
     (1500, 9000)),
    ("pause frames sent/frame", "x86_64", X86, "swiotlb=off",
     "tcp-rx-{mtu}", "emu pause frames sent/pkt", (1500, 9000)),
    ("pause frames sent/frame", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}", "emu pause frames sent/pkt", (1500, 9000)),
    (("pages held per RX queue after the run, MTU set with the interface "
      "down"), "x86_64", ATUP, "swiotlb=off", "tcp-rx-{mtu}",
     "pages held per RX queue after the run (freed at down)", (1500, 9000)),
    (("pages held per RX queue after the run, MTU set with the interface "
      "down, slabs the down emptied included"), "x86_64", SLAB,
     "swiotlb=off", "tcp-rx-{mtu}",
     ("pages held per RX queue after the run (freed at down, emptied "
      "slabs included)"), (1500, 9000)),
    ("pages held per RX queue after the run", "x86_64", PINNED,
     "swiotlb=off", "tcp-rx-{mtu}",
     "pages held per RX queue after the run (freed at down)", (1500, 9000)),
    ("pages held per RX queue after the run", "ARMv7", ARM, ARM_TAG,
     "tcp-rx-{mtu}",
     "pages held per RX queue after the run (freed at down)", (1500, 9000)),
    ("pages held per RX queue after the run, slabs the down emptied included",
     "x86_64", PINNED, "swiotlb=off", "tcp-rx-{mtu}",
     ("pages held per RX queue after the run (freed at down, emptied "
      "slabs included)"), (1500, 9000)),
    ("pages held per RX queue after the run, slabs the down emptied included",
     "ARMv7", ARM, ARM_TAG, "tcp-rx-{mtu}",
     ("pages held per RX queue after the run (freed at down, emptied "
      "slabs included)"), (1500, 9000)),
    ("KiB of page_pool pages taken at `ip link set up`", "x86_64", X86,
     "swiotlb=off", "mem-up", "KiB of pages into lan743x page_pools at up",
     (1500,)),
]

# A few rows of make bench's own table (lab/bench/report.py's layout).
SAMPLE_RUN, SAMPLE_TAG = X86, "swiotlb=off"
SAMPLE_ROWS = [
    ("tcp-rx-1500", "dma map calls/pkt"),
    ("tcp-rx-1500", "map bytes/pkt"),
    ("tcp-rx-1500", "RX tail writes/pkt"),
    ("tcp-rx-9000", "driver order>0 allocs/pkt"),
    ("tcp-rx-9000", "map bytes/pkt"),
    ("tcp-rx-9000", "RX tail writes/pkt"),
]

BLOCK = re.compile(r"(<!-- tables:(?P<name>[\w-]+) begin -->\n)(?P<body>.*?)"
                   r"(<!-- tables:(?P=name) end -->)", re.DOTALL)


def fmt(v):
    """report.py's style: 3 significant figures, no exponent above 100."""
    if v is None:
        return "n/a"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:#.3g}".removesuffix(".")


def stat(s):
    """median [min, max], or the median alone when every run agreed."""
    if s is None:
        return "n/a"
    med, lo, hi = (fmt(s.get(k)) for k in ("median", "min", "max"))
    return med if lo == hi == med else f"{med} [{lo}, {hi}]"


_cache = {}


def summary(run):
    """The run's summary.json (tag -> cell -> module -> metric -> stats)."""
    if run not in _cache:
        path = MEASUREMENTS / run / "summary.json"
        if not path.exists():
            sys.exit(f"tables: {path.relative_to(ROOT)} is missing "
                     "(a run the README quotes was moved or removed)")
        _cache[run] = json.loads(path.read_text())
    return _cache[run]


def from_records(run, tag, cell, module, metric):
    """The stats of one metric computed from the run's records.jsonl by
    lab/bench/report.py's metrics(): for a row added after the run's
    summary.json was written; None when the records lack it too."""
    sys.path.insert(0, str(ROOT / "lab" / "bench"))
    from report import metrics, reduce  # pylint: disable=import-outside-toplevel
    path = MEASUREMENTS / run / "records.jsonl"
    if not path.exists():
        return None
    if ("records", run) not in _cache:
        _cache["records", run] = [json.loads(x) for x in
                                  path.read_text().splitlines() if x.strip()]
    recs = _cache["records", run]
    return reduce([metrics(r).get(metric) for r in recs
                   if r.get("tag", "") == tag and r.get("cell") == cell
                   and r.get("module") == module])


def lookup(run, tag, cell, module, metric):
    """The stats of one metric (the run's summary.json, else its records),
    or None when the run lacks it."""
    try:
        return summary(run)[tag][cell][module][metric]
    except KeyError:
        return from_records(run, tag, cell, module, metric)


def run_is_current(run, current=None):
    """Whether RUN measured the series' current code: the patch-ids its
    meta.json recorded (series_patch_ids) are those of patches/ now. A run
    that recorded none (before the bench recorded them) is not."""
    meta = MEASUREMENTS / run / "meta.json"
    ids = json.loads(meta.read_text()).get("series_patch_ids") \
        if meta.exists() else None
    return bool(ids) and ids == (current if current is not None
                                 else patch_ids())


def results_block():
    """The results table: upstream -> series per row, with its run; a
    run whose patches are not the series' current ones says so."""
    current = patch_ids()
    stale = sorted({r[2] for r in RESULT_ROWS
                    if not run_is_current(r[2], current)})
    out = [
        ("| TCP receive | guest | MTU 1500: upstream → series "
         "| MTU 9000: upstream → series | run |"),
        "|---|---|---|---|---|",
    ]
    for label, guest, run, tag, cell, metric, mtus in RESULT_ROWS:
        cols = []
        for mtu in (1500, 9000):
            if mtu not in mtus:
                cols.append("")
                continue
            c = cell.format(mtu=mtu)
            up = lookup(run, tag, c, "upstream", metric)
            se = lookup(run, tag, c, "series", metric)
            if up is None and se is None:
                sys.exit(f"tables: {run} has no {tag}/{c}/{metric}")
            cols.append(f"{stat(up)} → {stat(se)}")
        where = f"`{run}`" + (f" {tag}" if tag != ARM_TAG else "")
        if run in stale:
            where += " (earlier patches)"
        out.append(f"| {label} | {guest} | {cols[0]} | {cols[1]} | {where} |")
    out += [
        "",
        ("Median [min, max] of 5 runs (one value where all five agreed); "
         "upstream = the base's unmodified module, series = net + "
         "net-next-1 + net-next-2 as in patches/, except in the rows of "
         "a run marked (earlier patches), which measured an earlier "
         "version of them (its meta.json lists the patches): "
         f"{', '.join(f'`{r}`' for r in stale) or 'none'}; "
         "the model's defaults (a link partner that ignores pause, stops "
         "driven by traffic, write-back and interrupt timer as the driver "
         "programs them); the sync rows (swiotlb=force) count what the "
         "driver asks of the DMA API, which the model's timing does not "
         "change. "
         "The bench's figure of that run (series/upstream for every row): "
         f"[`measurements/{X86}/ratios.png`](measurements/{X86}/ratios.png)."),
    ]
    return "\n".join(out) + "\n"


def sample_block():
    """Rows of make bench's own table.md, copied as it printed them."""
    path = MEASUREMENTS / SAMPLE_RUN / "table.md"
    if not path.exists():
        sys.exit(f"tables: {path.relative_to(ROOT)} is missing")
    section, rows = None, {}
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif section == SAMPLE_TAG and line.startswith("| "):
            cols = [c.strip() for c in line.strip("|").split("|")]
            rows[(cols[0], cols[1])] = line
    out = ["```", f"## {SAMPLE_TAG}", "",
           "| cell | metric | upstream | series | series/A |",
           "|---|---|---|---|---|"]
    for key in SAMPLE_ROWS:
        if key not in rows:
            sys.exit(f"tables: {path.relative_to(ROOT)} has no row {key}")
        out.append(rows[key])
    out += ["...", "```",
            f"(rows of `measurements/{SAMPLE_RUN}/table.md`)"]
    return "\n".join(out) + "\n"


# docs/design.md's "RX memory: the layouts compared": one row per
# (layout, run, module), each run with upstream in it, on the ARMv7 guest
LAYOUT_METRICS = [
    ("pages held per RX queue (slabs incl.)",
     ("pages held per RX queue after the run (freed at down, emptied "
      "slabs included)")),
    ("order > 0 allocs by the driver/frame", "driver order>0 allocs/pkt"),
    ("cache cleans/frame", "arch_sync_dma_for_device calls/pkt"),
    ("cache invalidates/frame", "arch_sync_dma_for_cpu calls/pkt"),
    ("bytes synced for the device/frame", "sync-dev bytes/pkt"),
    ("frames finding no descriptor/frame",
     "emu RX frames finding no descriptor/pkt"),
]
LAYOUT_ROWS = [
    ("upstream", ARM, "upstream"),
    ("unbound, recycle ring <= 64, driver syncs (series)", ARM, "series"),
    ("upstream", "arm-bench-final-20261203", "upstream"),
    ("the same, before v4's two changes outside the RX buffers",
     "arm-bench-final-20261203", "series"),
    ("upstream", "arm-bench-unbound-20261203", "upstream"),
    ("bound, recycle ring of one ring (v4 before)",
     "arm-bench-unbound-20261203", "at-48ea138"),
    ("unbound, recycle ring <= 64, driver syncs, copybreak direct",
     "arm-bench-unbound-20261203", "series"),
    ("upstream", "arm-bench-layout2-20261203", "upstream"),
    ("C16: unbound, ring 16, driver syncs", "arm-bench-layout2-20261203",
     "at-9439118"),
    ("C64: unbound, ring 64, driver syncs, direct puts",
     "arm-bench-layout2-20261203", "at-509a1d4"),
    ("upstream", "arm-bench-layout-20261203", "upstream"),
    ("A: whole-page pools unbound, ring 16, pool syncs",
     "arm-bench-layout-20261203", "at-534fcb1"),
    ("B: all unbound, ring 16, pool syncs", "arm-bench-layout-20261203",
     "at-1a48a01"),
]


def layouts_block():
    """The layout comparison of docs/design.md, one table per MTU."""
    out = []
    for mtu in (1500, 9000):
        out += [f"MTU {mtu}:", "",
                "| layout (run) | " + " | ".join(m[0] for m in LAYOUT_METRICS)
                + " |",
                "|---|" + "---|" * len(LAYOUT_METRICS)]
        for name, run, module in LAYOUT_ROWS:
            cols = []
            for _, metric in LAYOUT_METRICS:
                st = lookup(run, ARM_TAG, f"tcp-rx-{mtu}", module, metric)
                if st is None:
                    sys.exit(f"tables: {run} has no {module}/tcp-rx-{mtu}/"
                             f"{metric}")
                cols.append(stat(st))
            out.append(f"| {name} (`{run}`) | " + " | ".join(cols) + " |")
        out.append("")
    return "\n".join(out)


BLOCKS = {"results": results_block, "bench-sample": sample_block,
          "layouts": layouts_block}
DESIGN = ROOT / "docs" / "design.md"
# the blocks each file must hold
FILE_BLOCKS = {"readme": ("results", "bench-sample"), "design": ("layouts",)}


def rewrite(text):
    """Return text with every known block regenerated, and the names of
    the blocks found."""
    found = []

    def sub(m):
        name = m.group("name")
        if name not in BLOCKS:
            sys.exit(f"tables: unknown block tables:{name}")
        found.append(name)
        return m.group(1) + BLOCKS[name]() + m.group(4)

    return BLOCK.sub(sub, text), found


def process(path, want, check):
    """Rewrite or check the blocks of PATH, which must hold the blocks
    WANT: 0, or 1 when a block is missing or (check) stale."""
    old = path.read_text()
    new, found = rewrite(old)
    missing = sorted(set(want) - set(found))
    if missing:
        print(f"tables: {path} lacks the block(s) {', '.join(missing)}",
              file=sys.stderr)
        return 1
    if check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True),
                str(path), "generated from measurements/"))
            print(f"tables: {path} is stale: run "
                  "python3 lab/bench/tables.py", file=sys.stderr)
            return 1
        print(f"tables: {path} matches measurements/")
        return 0
    if new != old:
        path.write_text(new)
        print(f"tables: rewrote {', '.join(found)} in {path}")
    else:
        print(f"tables: {path} already up to date")
    return 0


def main(argv=None):
    """Rewrite, check or print the generated blocks of README.md and
    docs/design.md."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    ap.add_argument("--readme", type=Path, default=README)
    ap.add_argument("--design", type=Path, default=DESIGN)
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the blocks differ from the runs")
    ap.add_argument("--print", action="store_true", dest="show",
                    help="print the generated blocks")
    a = ap.parse_args(argv)
    if a.show:
        for name, fn in BLOCKS.items():
            print(f"<!-- tables:{name} -->\n{fn()}")
        return 0
    rc = 0
    for path, want in ((a.readme, FILE_BLOCKS["readme"]),
                       (a.design, FILE_BLOCKS["design"])):
        rc |= process(path, want, a.check)
    return rc


if __name__ == "__main__":
    sys.exit(main())
