#!/usr/bin/env python3
"""Turn a bench results directory into summary.json, table.md and plots.

Per (swiotlb setting, cell, module) each metric is reduced to median, min
and max over the repetitions; the table shows upstream (A) and series (B)
side by side with the B/A ratio of the medians. Per-packet figures divide
by the packets the DUT moved in the cell's direction (netdev counters).
A cell whose model counted descriptor errors or write-backs into a freed
ring (MUST_BE_ZERO), or lacks those counters, is listed as FAILED and the
report exits 1.
"""

import collections
import json
import statistics
import sys
from pathlib import Path

USER_HZ_US = 10000  # one /proc/stat tick in microseconds (USER_HZ = 100)


def per_pkt(rec, value):
    """VALUE per packet of the record REC, None without packets."""
    pk = rec.get("packets") or 0
    return value / pk if pk else None


def caller_keys(recs):
    """The per-caller metrics of the function tracer counts in RECS (one
    cell): a record with counts but without one of these callers had 0
    calls from it, not an unknown number."""
    return {f"{k} calls/pkt" for r in recs
            for k in (r.get("trace") or {}).get("fn_callers") or {}}


#: the model's counters that must stay 0 in every cell: descriptor
#: errors the model detected (bad OWN, FS/LS/EXT sequence, length, tail),
#: and write-backs into a ring the driver had already replaced
MUST_BE_ZERO = ("desc_errors", "wb_freed_ring_writes")
ZERO_LABELS = {"desc_errors": "emu descriptor errors (must be 0)",
               "wb_freed_ring_writes":
                   "emu write-backs into a freed ring (must be 0)"}
#: the device's drop counters that are not frames lost: rx_drop_filter
#: counts frames the address filter refused (not for this station)
NOT_LOST = ("rx_drop_filter",)


def device_drops(emu):
    """Frames the device dropped (lost), from the model's counters EMU:
    every rx_drop_* counter but the address filter's (frames larger than
    the ring, too long for MTU, receiver/FIFO disabled, FIFO in reset, and
    any added later), plus the FIFO overflows (rx_fifo_overflow, per
    channel) and the frames an FCT reset emptied (rx_fifo_flushed); None
    without counters."""
    if not emu or "error" in emu or "rx_frames" not in emu:
        return None
    n = sum(v for k, v in emu.items() if k.startswith("rx_drop_")
            and k not in NOT_LOST and isinstance(v, int))
    return n + sum(emu.get("rx_fifo_overflow") or []) + \
        emu.get("rx_fifo_flushed", 0)


def starvation(rec, emu):
    """The starvation rows of one record, per frame of the cell's
    direction (None where the model's counter is missing): frames that
    found no free RX descriptor (they waited in the FIFO), FIFO overflows,
    all frames the device dropped, pause frames the device sent."""
    def pp(v):
        return None if v is None else per_pkt(rec, v)
    ovf = emu.get("rx_fifo_overflow")
    return {
        # frames that found no free RX descriptor and waited in the
        # device's FIFO (a FIFO that fills drops, or sends pause)
        "emu RX frames finding no descriptor/pkt":
            pp(emu.get("rx_no_desc_stalls")),
        "emu RX FIFO overflows (frames dropped, FIFO full)/pkt":
            None if ovf is None else pp(sum(ovf)),
        "emu RX frames dropped by the device/pkt": pp(device_drops(emu)),
        "emu pause frames sent/pkt": pp(emu.get("tx_pause_frames")),
        # frames dropped because the ring's buffers could never hold them:
        # rx_drop_no_desc counts only these, not frames without a free
        # descriptor (those are the first row)
        "emu RX drops, frame larger than the ring":
            emu.get("rx_drop_no_desc"),
    }


def cell_faults(rec):
    """Why the model's counters fail the cell of record REC: a
    MUST_BE_ZERO counter non-zero or missing (an emulator older than the
    lab), or no counters at all; [] when it passes or ran without the
    emulator (a board)."""
    if "emulator" not in rec:
        return []
    emu = rec["emulator"] or {}
    if "error" in emu or not emu:
        return [f"no model counters to check ({emu.get('error', 'empty')})"]
    out = []
    for k in MUST_BE_ZERO:
        if k not in emu:
            out.append(f"{k} missing from the model's counters (an "
                       "emulator older than the lab: emulator/build.sh)")
        elif emu[k]:
            out.append(f"{k} = {emu[k]}")
    return out


def metrics(rec, callers=()):
    """The figures of one record, None where the source is missing;
    callers: caller_keys() of the record's cell."""
    if "mem_up_kib" in rec:
        return {"KiB taken by ip link set up (free pages)": rec["mem_up_kib"],
                "KiB of pages lan743x allocated at up":
                    rec.get("driver_pages_up_kib"),
                "KiB of pages into lan743x page_pools at up":
                    rec.get("page_pool_up_kib")}
    t = rec.get("trace", {})
    if t.get("trace_overrun"):
        # the ring buffer dropped events: every figure counted from trace
        # lines would be low. Only the in-kernel histogram survives.
        t = {"driver_page_allocs": t["driver_page_allocs"]} \
            if "driver_page_allocs" in t else {}

    def dma(event, kind):
        """Per packet: the sum over directions of one dma:* event's
        calls or bytes (keys EVENT_DIR_calls / EVENT_DIR_bytes)."""
        if not any(k.startswith("dma_") for k in t):
            return None
        return per_pkt(rec, sum(v for k, v in t.items()
                                if k.startswith(event) and k.endswith(kind)))

    emu = rec.get("emulator") or {}
    mmio = emu.get("mmio", {}) if "error" not in emu else {}
    m = {
        "Mbit/s": rec.get("mbit_s"),
        "retransmits": rec.get("retransmits"),
        "CPU us/pkt": per_pkt(rec, rec.get("cpu_busy_ticks", 0) * USER_HZ_US),
        "IRQs/pkt": per_pkt(rec, rec.get("irqs", 0)),
        "NAPI polls/pkt": per_pkt(rec, t["napi_polls"])
        if "napi_polls" in t else None,
        "work/poll": (t["napi_work"] / t["napi_polls"])
        if t.get("napi_polls") else None,
        "full-budget polls %": (100 * t.get("napi_full_budget", 0) /
                                t["napi_polls"]) if t.get("napi_polls")
        else None,
        "dma map calls/pkt": dma("dma_map_page", "_calls"),
        "dma unmap calls/pkt": dma("dma_unmap_page", "_calls"),
        "map bytes/pkt": dma("dma_map_page", "_bytes"),
        "unmap bytes/pkt": dma("dma_unmap_page", "_bytes"),
        "sync-cpu calls/pkt": dma("dma_sync_single_for_cpu", "_calls"),
        "sync-cpu bytes/pkt": dma("dma_sync_single_for_cpu", "_bytes"),
        "sync-dev calls/pkt": dma("dma_sync_single_for_device", "_calls"),
        "sync-dev bytes/pkt": dma("dma_sync_single_for_device", "_bytes"),
    }
    # calls of kernel functions the function tracer counted (bench_guest
    # --ftrace; on ARM arch_sync_dma_for_device/_for_cpu, the cache
    # maintenance of every streaming map/unmap/sync), and by caller
    for k, v in t.items():
        if k.startswith("fn_") and k.endswith("_calls"):
            m[f"{k[3:-6]} calls/pkt"] = per_pkt(rec, v)
    if t.get("fn_callers") is not None:
        for k in callers:
            m[k] = per_pkt(rec, 0)
        for k, v in t["fn_callers"].items():
            m[f"{k} calls/pkt"] = per_pkt(rec, v)
    orders = t.get("page_alloc_orders_global") if t else None
    if orders is not None:
        # global: every page allocation in the guest while the cell ran,
        # the stack's and iperf3's included, not only the driver's
        m["page allocs/pkt (all)"] = per_pkt(rec, sum(orders.values()))
        m["order>0 allocs/pkt (all)"] = per_pkt(rec, sum(
            v for k, v in orders.items() if int(k) > 0))
        m["page_pool new pages/pkt"] = per_pkt(rec, t.get("page_pool_hold", 0))
        if "page_pool_release" in t or t.get("fn_callers") is not None:
            # events of every page_pool in the guest (the peer's too)
            m["page_pool released pages/pkt"] = per_pkt(
                rec, t.get("page_pool_release", 0))
    drv = t.get("driver_page_allocs") if t else None
    if drv is not None:
        # attributed by stack to lan743x (its RX refill), any order
        m["driver page allocs/pkt"] = per_pkt(rec, sum(drv["orders"].values()))
        m["driver order>0 allocs/pkt"] = per_pkt(rec, sum(
            v for k, v in drv["orders"].items() if int(k) > 0))
    if mmio:
        rx_tail = sum(v["w"] for k, v in mmio.items()
                      if k.startswith("RX_TAIL"))
        tx_tail = sum(v["w"] for k, v in mmio.items()
                      if k.startswith("TX_TAIL"))
        m["RX tail writes/pkt"] = per_pkt(rec, rx_tail)
        m["TX tail writes/pkt"] = per_pkt(rec, tx_tail)
        m["emu IRQs/pkt"] = per_pkt(rec, sum(emu.get("irq_per_vector", [])))
        m["emu RX frames"] = emu.get("rx_frames")
        wb = sum(emu.get("wb_delay_frames", []))
        # the delay from an RX frame's write-back to the interrupt that
        # reports it, mean over the frames that had one (model time)
        m["emu wb->IRQ delay us (mean)"] = (
            sum(emu.get("wb_delay_sum_ns", [])) / 1000 / wb if wb else None)
        m.update(starvation(rec, emu))
        for k in MUST_BE_ZERO:
            m[ZERO_LABELS[k]] = emu.get(k)
    if "pages_pinned_per_queue" in rec:
        # pages lan743x freed at `ip link set down` after this run, per RX
        # queue (bench_guest.py pinned_after)
        m["pages held per RX queue after the run (freed at down)"] = \
            rec["pages_pinned_per_queue"]
    if rec.get("pages_pinned_with_slab_per_queue") is not None:
        # the same, with the pages of the slabs the down emptied
        # (kmalloc'ed buffers), counted after shrinking the slab caches
        m["pages held per RX queue after the run (freed at down, "
          "emptied slabs included)"] = rec["pages_pinned_with_slab_per_queue"]
    if rec.get("pool_pages"):
        # the series' page_pools before the down (netlink inflight); the
        # busiest is the queue that carried the run
        m["page_pool pages per queue after the run (inflight)"] = \
            sum(rec["pool_pages"].values()) / len(rec["pool_pages"])
        m["page_pool pages, busiest queue (inflight)"] = \
            max(rec["pool_pages"].values())
    return m


def failed_cells(recs):
    """'tag cell module rep: why' for every record whose model counters
    fail it (cell_faults)."""
    return [f"{r.get('tag') or 'default'} {r['cell']} {r['module']} rep "
            f"{r.get('rep', '?')}: {'; '.join(f)}"
            for r in recs for f in [cell_faults(r)] if f]


def model_settings(d, recs):
    """{property: value} of the run's --model settings: as the device
    read them back (the records' emulator.model_settings), else as asked
    (meta.json "model"); {} for the model's defaults."""
    got = {}
    for r in recs:
        got.update((r.get("emulator") or {}).get("model_settings") or {})
    if got:
        return got
    try:
        meta = json.loads((Path(d) / "meta.json").read_text())
    except (OSError, ValueError):
        return {}
    return dict(meta.get("model") or {})


def reduce(values):
    """median, min, max and count of VALUES (None left out), or None."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v),
            "n": len(v)}


def fmt(x):
    """X for the table: 3 significant digits, 2 decimals from 1 up, none
    from 100 up."""
    if x is None:
        return "n/a"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def main():
    """Write summary.json, table.md and ratios.png of RESULTS_DIR."""
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_DIR")
    d = Path(sys.argv[1])
    recs = [json.loads(x) for x in (d / "records.jsonl").read_text()
            .splitlines() if x.strip()]
    if not recs:
        sys.exit(f"error: no records in {d}/records.jsonl")
    groups = collections.defaultdict(list)
    for r in recs:
        groups[(r.get("tag", ""), r["cell"], r["module"])].append(r)
    summary = {}
    callers = collections.defaultdict(set)
    for (tag, cell, _), rs in groups.items():
        callers[tag, cell] |= caller_keys(rs)
    for (tag, cell, mod), rs in sorted(groups.items()):
        ms = [metrics(r, callers[tag, cell]) for r in rs]
        keys = sorted({k for m in ms for k in m})
        summary.setdefault(tag, {}).setdefault(cell, {})[mod] = {
            k: reduce([m.get(k) for m in ms]) for k in keys}
        errs = [r["error"] for r in rs if "error" in r]
        if errs:
            summary[tag][cell][mod]["errors"] = errs
    (d / "summary.json").write_text(json.dumps(summary, indent=1))

    # upstream first, then the others in the order they were loaded
    order = []
    for r in recs:
        if r["module"] not in order:
            order.append(r["module"])
    mods = sorted(order, key=lambda m: (m != "upstream", order.index(m)))
    a, others = mods[0], mods[1:]
    lines = ["# lan743x bench (emulated LAN7430 under TCG)", "",
             (f"Modules: {', '.join(mods)} ({a} = base driver); each cell: "
              f"median [min, max] over "
              f"{max(len(v) for v in groups.values())} repetitions, modules "
              "loaded in turn in the same VM; X/A = ratio of medians. "
              "Throughput and CPU are emulated figures; per-packet counters "
              "are the primary ones."), ""]
    settings = model_settings(d, recs)
    if settings:
        lines += ["Model settings (--model, read back from the device): "
                  + ", ".join(f"{k}={v}" for k, v in settings.items()), ""]
    if not any(r.get("emulator") for r in recs):
        lines += [("No emulator counters in these records (real hardware, "
                   "or the counter RPC failed): doorbell columns are n/a."),
                  ""]
    noisy = []
    ratios = []

    def cellfmt(v):
        return "n/a" if not v else \
            f"{fmt(v['median'])} [{fmt(v['min'])}, {fmt(v['max'])}]"

    for tag, cells in summary.items():
        lines += [f"## {tag or 'default'}", "",
                  "| cell | metric | " + " | ".join(mods) + " | " +
                  " | ".join(f"{m}/A" for m in others) + " |",
                  "|---|---|" + "---|" * (len(mods) + len(others))]
        for cell, per in cells.items():
            keys = sorted({k for m in mods for k in per.get(m, {})})
            for k in keys:
                if k == "errors":
                    continue
                vals = [per.get(m, {}).get(k) for m in mods]
                va = vals[0]
                rs = []
                for m, v in zip(others, vals[1:]):
                    ratio = (v["median"] / va["median"]
                             if va and v and va["median"] else None)
                    rs.append(ratio)
                    if ratio is not None and m == others[-1]:
                        ratios.append((f"{tag} {cell} {k}", ratio))
                for m, v in zip(mods, vals):
                    if v and v["median"] and k in ("Mbit/s", "CPU us/pkt") \
                            and (v["max"] - v["min"]) / v["median"] > 0.2:
                        noisy.append(f"{tag} {cell} {m} {k}: "
                                     f"spread {(v['max'] - v['min']) / v['median']:.0%}"
                                     " of the median")
                lines.append(f"| {cell} | {k} | " +
                             " | ".join(cellfmt(v) for v in vals) + " | " +
                             " | ".join(fmt(r) for r in rs) + " |")
        lines.append("")
    if noisy:
        lines += ["Noisy cells (max-min above 20% of the median):", ""]
        lines += [f"- {n}" for n in noisy] + [""]
    failed = failed_cells(recs)
    if failed:
        lines += [("FAILED cells (the model's descriptor-error counters, "
                   "which must be 0):"), ""]
        lines += [f"- {f}" for f in failed] + [""]
    b = others[-1]
    (d / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    # the plot is optional (no matplotlib: the table only); pyplot is
    # imported once the backend is chosen
    try:
        import matplotlib  # pylint: disable=import-outside-toplevel
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
        keep = [(n, r) for n, r in ratios if any(
            s in n for s in ("Mbit/s", "IRQs/pkt", "tail writes",
                             "polls/pkt", "CPU us/pkt", "bytes/pkt"))]
        if keep:
            fig, ax = plt.subplots(figsize=(10, max(3, len(keep) * 0.25)))
            ax.barh([n for n, _ in keep], [r for _, r in keep])
            ax.axvline(1.0, color="k", lw=0.8)
            ax.set_xlabel(f"B/A ratio of medians ({b} / {a})")
            ax.tick_params(axis="y", labelsize=6)
            fig.tight_layout()
            fig.savefig(d / "ratios.png", dpi=120)
    except ImportError:
        print("note: matplotlib missing, no plots", file=sys.stderr)
    if failed:
        print(f"error: {len(failed)} cell(s) failed the model's "
              "descriptor-error check (table.md, FAILED cells)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
