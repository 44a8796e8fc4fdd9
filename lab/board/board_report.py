#!/usr/bin/env python3
"""The board kit's report: records.jsonl -> summary.json, table.md, PNG.

    board_report.py RESULTS_DIR

The table has the shape of `make bench`'s (lab/bench/report.py): per cell
and row, median [min, max] over the repetitions for each module, upstream
first, and each other module's ratio of medians to it (X/A). A row that
`make bench` has carries the same name here (SAME_ROWS); the rows of
`make bench` that only the emulated device can count are listed, not
measured (EMULATOR_ONLY); a row this board's kernel could not give is n/a
and its reason is listed (meta.json "unavailable").
"""
import collections
import json
import statistics
import sys
from pathlib import Path

#: rows of `make bench` (and `make outage`) the kit counts from standard
#: kernel interfaces, under the same names
SAME_ROWS = (
    "Mbit/s", "retransmits", "CPU us/pkt", "IRQs/pkt",
    "NAPI polls/pkt", "work/poll", "full-budget polls %",
    "dma map calls/pkt", "dma unmap calls/pkt", "map bytes/pkt",
    "unmap bytes/pkt", "sync-cpu calls/pkt", "sync-cpu bytes/pkt",
    "sync-dev calls/pkt", "sync-dev bytes/pkt",
    "arch_sync_dma_for_device calls/pkt", "arch_sync_dma_for_cpu calls/pkt",
    "page allocs/pkt (all)", "order>0 allocs/pkt (all)",
    "page_pool new pages/pkt", "page_pool released pages/pkt",
    "driver page allocs/pkt", "driver order>0 allocs/pkt",
    "pages held per RX queue after the run (freed at down)",
    "page_pool pages per queue after the run (inflight)",
    "page_pool pages, busiest queue (inflight)",
    "KiB taken by ip link set up (free pages)",
    "KiB of pages lan743x allocated at up",
    "KiB of pages into lan743x page_pools at up",
    # make outage's rows (per MTU change)
    "lost packets", "longest gap, ms", "ip link set mtu, ms")

#: rows of `make bench` that only the emulated device counts (MMIO writes,
#: the model's FIFO and descriptor checks): not measured on a board
EMULATOR_ONLY = (
    "RX tail writes/pkt", "TX tail writes/pkt", "emu IRQs/pkt",
    "emu RX frames", "emu wb->IRQ delay us (mean)",
    "emu RX frames finding no descriptor/pkt",
    "emu RX FIFO overflows (frames dropped, FIFO full)/pkt",
    "emu RX frames dropped by the device/pkt", "emu pause frames sent/pkt",
    "emu RX drops, frame larger than the ring",
    "emu descriptor errors (must be 0)",
    "emu write-backs into a freed ring (must be 0)")

#: rows of `make bench` the kit does not give, and why
NOT_COUNTED = {
    "<function><-<caller> calls/pkt": (
        "the function tracer's per-caller split (ARM guest's --ftrace); "
        "the kit counts the calls with the function profiler, not who "
        "made them"),
}


def reduce(values):
    """median, min, max and count of VALUES (None left out), or None."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v),
            "n": len(v)}


def fmt(x):
    """X as lab/bench/report.py prints it: 3 significant digits, 2
    decimals from 1 up, none from 100 up."""
    if x is None:
        return "n/a"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def cellfmt(v):
    """median [min, max] of a reduce() result, or n/a."""
    return "n/a" if not v else \
        f"{fmt(v['median'])} [{fmt(v['min'])}, {fmt(v['max'])}]"


def load(d):
    """(records, meta) of the results directory D."""
    recs = []
    p = Path(d) / "records.jsonl"
    if p.exists():
        recs = [json.loads(x) for x in p.read_text(encoding="utf-8")
                .splitlines() if x.strip()]
    m = Path(d) / "meta.json"
    meta = json.loads(m.read_text(encoding="utf-8")) if m.exists() else {}
    return recs, meta


def summarize(recs):
    """{cell: {module: {row: reduce()}}} and the module order (upstream
    first, then in the order they were loaded)."""
    groups = collections.defaultdict(list)
    order = []
    for r in recs:
        groups[(r["cell"], r["module"])].append(r.get("metrics") or {})
        if r["module"] not in order:
            order.append(r["module"])
    mods = sorted(order, key=lambda m: (m != "upstream", order.index(m)))
    summary = {}
    for (cell, mod), ms in groups.items():
        keys = sorted({k for m in ms for k in m})
        summary.setdefault(cell, {})[mod] = {
            k: reduce([m.get(k) for m in ms]) for k in keys}
    return summary, mods


def table(summary, mods, meta):
    """The markdown table (lines) and the ratios of the last module."""
    a, others = mods[0], mods[1:]
    reps = meta.get("reps", "?")
    lines = [(f"# lan743x bench on a board ({meta.get('dut_kernel', '?')}, "
             f"{meta.get('dut_machine', '?')})"), "",
             (f"Modules: {', '.join(mods)} ({a} = base driver); each cell: "
             f"median [min, max] over {reps} repetitions, modules loaded in "
             "turn on the board; X/A = ratio of medians. The link partner: "
             f"{meta.get('peer', '?')}."), ""]
    for w in meta.get("warnings", []):
        lines += [f"WARNING: {w}", ""]
    lines += ["| cell | metric | " + " | ".join(mods) + " | " +
              " | ".join(f"{m}/A" for m in others) + " |",
              "|---|---|" + "---|" * (len(mods) + len(others))]
    ratios = []
    for cell in sorted(summary):
        per = summary[cell]
        keys = sorted({k for m in mods for k in per.get(m, {})})
        for k in keys:
            vals = [per.get(m, {}).get(k) for m in mods]
            va = vals[0]
            rs = []
            for m, v in zip(others, vals[1:]):
                r = (v["median"] / va["median"]
                     if va and v and va["median"] else None)
                rs.append(r)
                if r is not None and m == others[-1]:
                    ratios.append((f"{cell} {k}", r))
            lines.append(f"| {cell} | {k} | " +
                         " | ".join(cellfmt(v) for v in vals) +
                         (" | " + " | ".join(fmt(r) for r in rs)
                          if others else "") + " |")
    lines.append("")
    unavailable = meta.get("unavailable") or {}
    if unavailable:
        lines += ["Rows this board's kernel could not give (n/a above):", ""]
        lines += [f"- {k}: {v}" for k, v in sorted(unavailable.items())]
        lines.append("")
    missing = (meta.get("build") or {}).get("kconfig_missing")
    if missing:
        lines += ["Options the selftests' config files ask for that the "
                  "board's kernel (KDIR/.config) does not have: "
                  + " ".join(missing), ""]
    lines += ["Emulator-only rows of `make bench` (the emulated device's "
              "counters; not measured here): " + ", ".join(EMULATOR_ONLY)
              + ".", ""]
    lines += [f"Not counted here: {k}: {v}." for k, v in NOT_COUNTED.items()]
    lines.append("")
    st = meta.get("selftests") or {}
    if st:
        lines += ["## selftests (run_kselftest.sh on the board)", "",
                  "| test | " + " | ".join(st) + " |",
                  "|---|" + "---|" * len(st)]
        tests = sorted({t for r in st.values() for t in r})
        for t in tests:
            lines.append(f"| {t} | " + " | ".join(
                st[m].get(t, "not run") for m in st) + " |")
        lines.append("")
    return lines, ratios


def plot(d, ratios, mods):
    """ratios.png: each row's ratio of medians, last module / upstream;
    False without matplotlib."""
    try:
        import matplotlib  # pylint: disable=import-outside-toplevel
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
    except ImportError:
        return False
    keep = ratios or [("no ratio (one module, or no figures)", 0.0)]
    fig, ax = plt.subplots(figsize=(10, max(3, len(keep) * 0.22)))
    ax.barh([n for n, _ in keep], [r for _, r in keep])
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel(f"ratio of medians ({mods[-1]} / {mods[0]})")
    ax.tick_params(axis="y", labelsize=6)
    fig.tight_layout()
    fig.savefig(Path(d) / "ratios.png", dpi=120)
    plt.close(fig)
    return True


def report(d):
    """Write summary.json, table.md and ratios.png of D; the table."""
    recs, meta = load(d)
    summary, mods = summarize(recs)
    if not mods:
        mods = list(meta.get("modules") or ["upstream"])
    (Path(d) / "summary.json").write_text(json.dumps(summary, indent=1))
    lines, ratios = table(summary, mods, meta)
    text = "\n".join(lines) + "\n"
    (Path(d) / "table.md").write_text(text)
    if not plot(d, ratios, mods):
        print("note: matplotlib missing, no ratios.png", file=sys.stderr)
    return text


def main():
    """Report the directory given."""
    if len(sys.argv) != 2:
        sys.exit("usage: board_report.py RESULTS_DIR")
    print(report(sys.argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
