#!/usr/bin/env python3
"""Outage benchmark of live MTU changes (``make outage``).

Loads each module in turn in one VM (bench kernel, emulated LAN7430) and
sends a fixed-rate UDP stream with sequence numbers from the peer through
MTU changes 1500 <-> 9000 (lab/guest/outage.py), then counts order > 0
page allocations during jumbo RX after 1500 -> 9000 (lab/guest/order.py).
Prints a table of per-change figures, median [min, max] over all changes
of all repetitions, with the line-rate estimate (what a 1 Gbit/s stream
would lose in the measured window, less what the RX FIFO holds) and the
model's starvation figures per received frame, and writes
results/outage-<timestamp>/; --table DIR prints a run's table again.
--model KEY=VALUE as lab/bench/bench.py. Exits 1 when the model counted
descriptor errors (or lacks the counters).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vm"))
from bench import (
    LAB,
    ROOT,
    build_modules,
    dut_opts,
    module_revs,
    out_of,
    parse_model,
    progress,
)
from report import MUST_BE_ZERO, cell_faults, device_drops, fmt, reduce

#: emulator counters read over QMP after each repetition: frames that
#: waited in a channel's FIFO while its DMA was stopped, frames dropped
#: because the receiver or the channel's FIFO was off
MODEL = ("rx_fifo_holds", "rx_drop_disabled")
#: the model's counters per repetition behind the per-frame rows (frames
#: received, the starvation figures) and the must-be-zero ones;
#: rx_fifo_overflow is summed over the channels, device_drops is
#: report.device_drops()
COUNTS = MODEL + ("rx_frames", "rx_no_desc_stalls", "rx_fifo_overflow",
                  "device_drops", "tx_pause_frames") + MUST_BE_ZERO
#: (counter, label) of the rows per received frame (the model's rx_frames)
PER_FRAME = [
    ("rx_no_desc_stalls", "frames finding no free RX descriptor"),
    ("rx_fifo_overflow", "FIFO overflows (frames dropped, FIFO full)"),
    ("device_drops", ("frames dropped by the device (rx_drop_* but the "
                      "filter's, FIFO overflows, FIFO flushes)")),
    ("tx_pause_frames", "pause frames sent")]

ROWS = [("lost", "lost packets"), ("gap_ms", "longest gap, ms"),
        ("window_ms", "RX channel stopped, ms (*)"),
        ("cmd_ms", "ip link set mtu, ms")]
NOTE = ("(*) kprobes: first lan743x_rx_disable() to the last "
        "lan743x_rx_enable() return when the change disabled a FIFO (FIFO "
        "and DMA stopped), else first lan743x_rx_dma_stop() to the last "
        "lan743x_rx_dma_start() return (DMA stopped, FIFO on), else "
        "first lan743x_rx_switch() to the last return (a switch that calls "
        "neither pair: an upper bound of its FIFO-off window, which "
        "make lineout counts), else lan743x_mac_set_mtu() (MAC RX stopped "
        "for the new maximum frame size), else the whole ndo_change_mtu, an upper bound (a module "
        "that inlines lan743x_mac_set_mtu(), such as upstream's, whose "
        "ndo_change_mtu does only that)")
#: the outage's frame: lab/guest/outage.py sends 8 + 56 bytes of UDP
#: payload: + UDP 8, IPv4 20, Ethernet 14, FCS 4
OUTAGE_FRAME = 64 + 8 + 20 + 14 + 4
#: bytes a frame takes on the wire besides itself: preamble + SFD 8,
#: inter-frame gap 12
WIRE_EXTRA = 20
LINE_BPS = 1e9
#: the model's RX FIFO per channel (KiB) when a run did not record it
DEFAULT_FIFO_KIB = 32
NOTE_LINE = (
    "(**) frames a 1 Gbit/s stream of back-to-back frames of that size "
    "would lose per change: the frames arriving in the RX channel stopped "
    "window (*) less those the channel's RX FIFO (rx-fifo-kib) holds; the "
    "FIFO counts only for a window in which it kept receiving (DMA stopped, "
    "FIFO on); for a window of the FIFO or the MAC receiver off (or not "
    "known) nothing is held. An estimate from the model's timing, not a "
    "measurement")


def line_rate_lost(window_ms, kind, fifo_kib, frame):
    """Frames of FRAME bytes (FCS included) a line-rate stream loses in a
    receive window of WINDOW_MS ms of KIND ("dma": the FIFO keeps
    receiving and holds fifo_kib KiB), never below 0; None without a
    window."""
    if window_ms is None:
        return None
    arriving = window_ms / 1000 * LINE_BPS / 8 / (frame + WIRE_EXTRA)
    held = fifo_kib * 1024 // max(frame, 64) if kind == "dma" else 0
    return max(0.0, arriving - held)


def stat_cell(vals, n=True):
    """median [min, max] (n=...) of VALS, n/a without any."""
    s = reduce(vals)
    if s is None:
        return "n/a"
    return (f"{fmt(s['median'])} [{fmt(s['min'])}, {fmt(s['max'])}]"
            + (f" n={s['n']}" if n else ""))


def line_rate_rows(res, names):
    """The line-rate estimate's rows (**), one per frame size."""
    out = []
    for frame in (OUTAGE_FRAME, 1518):
        cells = []
        for m in names:
            vals = []
            for r in res["outage"].get(m, []):
                fifo = r.get("rx_fifo_kib") or DEFAULT_FIFO_KIB
                kinds = r.get("window_kind") or []
                for i, w in enumerate(r.get("window_ms", [])):
                    kind = kinds[i] if i < len(kinds) else None
                    vals.append(line_rate_lost(w, kind, fifo, frame))
            cells.append(stat_cell(vals))
        out.append(f"| frames of {frame} bytes lost at 1 Gbit/s line rate, "
                   "estimate (**) | " + " | ".join(cells) + " |")
    fifo = []
    for m in names:
        ks = sorted({r.get("rx_fifo_kib") or DEFAULT_FIFO_KIB
                     for r in res["outage"].get(m, [])})
        fifo.append(", ".join(map(str, ks)) or "n/a")
    out.append("| RX FIFO per channel, KiB (rx-fifo-kib) | "
               + " | ".join(fifo) + " |")
    return out


def model_rows(res, names):
    """The model's rows: totals of MODEL, the rows per received frame, the
    must-be-zero counters (FAILED when not 0 or missing)."""
    out = []
    for key in MODEL:
        cells = []
        for m in names:
            v = [r.get("model", {}).get(key) for r in res["outage"].get(m, [])]
            cells.append("n/a" if not v or None in v else str(sum(v)))
        out.append(f"| emulator {key} | " + " | ".join(cells) + " |")
    for key, label in PER_FRAME:
        cells = []
        for m in names:
            runs = [r.get("model") or {} for r in res["outage"].get(m, [])]
            v = [x.get(key) for x in runs]
            fr = sum(x.get("rx_frames") or 0 for x in runs)
            cells.append("n/a" if not v or None in v or not fr else
                         f"{fmt(sum(v) / fr)} ({sum(v)} of {fr})")
        out.append(f"| {label}, per received frame | " + " | ".join(cells)
                   + " |")
    for key in MUST_BE_ZERO:
        cells = []
        for m in names:
            runs = res["outage"].get(m, [])
            v = [(r.get("model") or {}).get(key) for r in runs]
            cells.append("n/a" if not v else
                         "FAILED: missing" if None in v else
                         ("FAILED: " if sum(v) else "") + str(sum(v)))
        out.append(f"| emulator {key} (must be 0) | " + " | ".join(cells)
                   + " |")
    return out


def table(res, names):
    """The markdown table of the results RES of the modules NAMES."""
    lines = []
    if res.get("model_settings"):
        lines += ["Model settings (--model): " + ", ".join(
            f"{k}={v}" for k, v in res["model_settings"].items()), ""]
    plans = sorted({r.get("plan", "1500-9000") for m in names
                    for r in res["outage"].get(m, [])})
    refused = {m: sum(r.get("refused", 0) for r in res["outage"].get(m, []))
               for m in names}
    lines += ["Changes measured (plan): " + ", ".join(plans)
              + "; refused by the driver: " + ", ".join(
                  f"{m} {n}" for m, n in refused.items()), ""]
    lines += ["| per change | " + " | ".join(names) + " |",
              "|---|" + "---|" * len(names)]
    for key, label in ROWS:
        if key == "cmd_ms" and plans and all(x.startswith("rx")
                                             for x in plans):
            label = "ethtool -G, ms"
        lines.append(f"| {label} | " + " | ".join(
            stat_cell([v for r in res["outage"].get(m, [])
                       for v in r.get(key, [])]) for m in names) + " |")
    lines += line_rate_rows(res, names)
    cells = []
    for m in names:
        o = res["order"].get(m)
        cells.append("n/a" if o is None else
                     f"{o['order_gt0_softirq']} ({o['received']} frames)")
    lines.append("| order>0 allocs in softirq, 3 s jumbo RX after "
                 "1500->9000 | " + " | ".join(cells) + " |")
    lost, dev = [], []
    for m in names:
        runs = res["outage"].get(m, [])
        lost.append(f"{sum(r['lost_total'] for r in runs)} of "
                    f"{sum(r['sent'] for r in runs)}")
        dev.append(str(sum(sum(r["device_drops"].values()) for r in runs)))
    lines.append("| lost in all runs (sent - received) | " + " | ".join(lost)
                 + " |")
    lines.append("| device drop/error counters (ethtool -S) | "
                 + " | ".join(dev) + " |")
    lines += model_rows(res, names)
    return "\n".join(lines + ["", NOTE, "", NOTE_LINE])


def rep_faults(r):
    """Why the model's counters fail the repetition (or order run) R:
    report.cell_faults of its counters (a must-be-zero counter non-zero or
    missing), or no counters at all (QMP failed)."""
    if r.get("model") is None:
        return ["no model counters to check (QMP failed)"]
    return cell_faults({"emulator": r["model"]})


def failed(res):
    """'module rep N: why' for every repetition and order run whose model
    counters fail it (rep_faults)."""
    return [f"{m} rep {i}: {f}" for m, runs in res["outage"].items()
            for i, r in enumerate(runs, 1) for f in rep_faults(r)
            ] + [f"{m} order: {f}" for m, o in res["order"].items()
                 for f in rep_faults(o)]


def model_counters(sock, model=None):
    """The model's COUNTS (None where the model lacks one), its
    rx_fifo_kib and the MODEL properties read back, after setting them
    (--model: before the next repetition); None if QMP fails."""
    # optional figures: no QMP client (qemu.qmp), no socket or any QMP
    # failure leaves them out, the outage run goes on
    try:
        from qmp import Dut  # pylint: disable=import-outside-toplevel
        with Dut(sock) as dut:
            for k, v in (model or {}).items():
                dut.set(k, v)
            c = dut.counters()
            settings = {k: dut.get(k) for k in model or {}}
    except Exception as e:  # noqa: BLE001  # pylint: disable=broad-exception-caught
        progress(f"no emulator counters over QMP: {e}")
        return None
    flat = {k: c.get(k) for k in COUNTS}
    flat["rx_fifo_overflow"] = sum(c["rx_fifo_overflow"]) \
        if "rx_fifo_overflow" in c else None
    flat["device_drops"] = device_drops(c)
    return {"counts": flat, "rx_fifo_kib": c.get("rx_fifo_kib"),
            "settings": settings}


def repetition_model(r, now, last):
    """Put into the repetition R the model's counters it moved (NOW less
    LAST, model_counters()), its FIFO size and the settings; say its
    must-be-zero faults."""
    prev = (last or {}).get("counts") or {}
    r["model"] = {k: v - prev.get(k, 0) for k, v in now["counts"].items()
                  if v is not None}
    r["rx_fifo_kib"] = now["rx_fifo_kib"]
    r["model_settings"] = now["settings"]
    for f in rep_faults(r):
        progress(f"error: {f}")


def run(args, out):
    """Boot the VM, run the guest's outage.sh over the modules, collect
    the results and the model's counters per repetition; the results."""
    names = [m for m in args.modules.split(",") if m]
    module_revs(names)          # a bad list fails before the kernel's build
    obj = Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                       args.variant]))
    mods = build_modules(names, args.variant)
    qemu = out_of(["bash", str(ROOT / "emulator" / "build.sh")])
    env = dict(os.environ, KERNEL=str(obj / "arch/x86/boot/bzImage"),
               MODDIR=str(obj / "mods"), QEMU=qemu,
               LAN743X_OUTAGE_CHANGES=str(args.changes),
               LAN743X_OUTAGE_REPS=str(args.reps),
               LAN743X_OUTAGE_RATE=str(args.rate),
               LAN743X_OUTAGE_PLAN=args.plan,
               # the device starts with the --model settings
               DUT_OPTS=dut_opts(args.model),
               VM_VERBOSE="1")  # the kernel console in guest.log
    progress(f"booting the VM: {len(names)} modules, {args.reps} x "
             f"{args.changes} changes each"
             + "".join(f", {k}={v}" for k, v in args.model.items()))
    env["QMP_SOCK"] = sock = str(out / "qmp.sock")
    p = subprocess.Popen(["bash", str(LAB / "vm" / "vm.sh"), "--", "bash",
                          str(LAB / "guest" / "outage.sh")] +
                         [f"{m}={mods[m]}" for m in names],
                         env=env, stdout=subprocess.PIPE, text=True)
    res = {"outage": {}, "order": {}, "modules": mods,
           "changes": args.changes, "reps": args.reps, "rate": args.rate,
           "model_settings": args.model, "names": names}
    log, last = [], None
    for line in p.stdout:
        log.append(line)
        f = line.rstrip("\n").split(" ", 2)
        if len(f) == 3 and f[0] in ("OUTAGE", "ORDER"):
            r = json.loads(f[2])
            # the counters' growth since the previous line (the first:
            # since the VM started) is this repetition's; the settings
            # are set again for the next one
            now = model_counters(sock, args.model)
            if now is not None:
                # (a failed read leaves the repetition without counters:
                # it fails, and the next one counts from the last read)
                repetition_model(r, now, last)
                last = now
            if f[0] == "OUTAGE":
                res["outage"].setdefault(f[1], []).append(r)
            else:
                res["order"][f[1]] = r
    p.wait()
    (out / "guest.log").write_text("".join(log))
    (out / "outage.json").write_text(json.dumps(res, indent=1))
    missing = [m for m in names if m not in res["outage"]]
    if p.returncode or missing:
        sys.exit(f"error: the guest run failed (rc {p.returncode}; no results "
                 f"for {', '.join(missing) or 'none missing'}); see "
                 f"{out / 'guest.log'}")
    return res


def main(argv=None):
    """Run the outage benchmark of the modules (or re-read a run's
    outage.json: --table), print and write its table; exit 1 when the
    model counted descriptor errors."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--modules", default="upstream,series")
    ap.add_argument("--changes", type=int, default=20,
                    help="MTU changes per repetition")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rate", type=int, default=1000, help="packets/s")
    ap.add_argument("--plan", default="1500-9000",
                    help="the changes measured (lab/guest/outage.py PLANS): "
                    "1500-9000 alternates; 1500to9000, 9000to1500, "
                    "8000to9000, 9000to8000, 1500to1400, 1400to1500, "
                    "rx128to512, rx512to128 measure one direction, each "
                    "from rings "
                    "allocated for where it starts")
    ap.add_argument("--variant", default="bench")
    ap.add_argument("--model", action="append", default=[],
                    metavar="KEY=VALUE",
                    help="a property of the emulated device for the run "
                    "(repeatable): the device starts with it and it is set "
                    "again over QMP after each repetition")
    ap.add_argument("--table", metavar="DIR",
                    help="print the table of the run in DIR (outage.json)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    try:
        args.model = parse_model(args.model)
    except ValueError as e:
        ap.error(str(e))
    if args.table:
        out = Path(args.table)
        res = json.loads((out / "outage.json").read_text())
    else:
        out = Path(args.out or ROOT / "results" /
                   time.strftime("outage-%Y%m%d-%H%M%S"))
        out.mkdir(parents=True, exist_ok=True)
        res = run(args, out)
    names = res.get("names") or list(res["outage"])
    t = table(res, names)
    bad = failed(res)
    if bad:
        t += ("\n\nFAILED repetitions (the model's descriptor-error "
              "counters, which must be 0):\n\n"
              + "\n".join(f"- {b}" for b in bad))
    if not args.table:
        (out / "table.md").write_text(t + "\n")
    print(t)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
