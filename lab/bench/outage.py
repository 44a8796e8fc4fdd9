#!/usr/bin/env python3
"""Outage benchmark of live MTU changes (``make outage``).

Loads each module in turn in one VM (bench kernel, emulated LAN7430) and
sends a fixed-rate UDP stream with sequence numbers from the peer through
MTU changes 1500 <-> 9000 (lab/guest/outage.py), then counts order > 0
page allocations during jumbo RX after 1500 -> 9000 (lab/guest/order.py).
Prints a table of per-change figures, median [min, max] over all changes
of all repetitions, and writes results/outage-<timestamp>/.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import LAB, ROOT, build_modules, out_of, progress
from report import fmt, reduce

#: emulator counters read over QMP after each repetition: frames that
#: waited in a channel's FIFO while its DMA was stopped, frames dropped
#: because the receiver or the channel's FIFO was off
MODEL = ("rx_fifo_holds", "rx_drop_disabled")

ROWS = [("lost", "lost packets"), ("gap_ms", "longest gap, ms"),
        ("window_ms", "RX channel stopped, ms (*)"),
        ("cmd_ms", "ip link set mtu, ms")]
NOTE = ("(*) kprobes: first lan743x_rx_dma_stop() to the last "
        "lan743x_rx_dma_start() return (DMA stopped, FIFO on), else first "
        "lan743x_rx_disable() to the last lan743x_rx_enable() return, else "
        "the whole ndo_change_mtu (6.12: MAC RX stop, an upper bound)")


def table(res, names):
    """The markdown table of the results RES of the modules NAMES."""
    lines = ["| per MTU change | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    for key, label in ROWS:
        cells = []
        for m in names:
            vals = [v for r in res["outage"].get(m, []) for v in r.get(key, [])]
            s = reduce(vals)
            cells.append("n/a" if s is None else
                         f"{fmt(s['median'])} [{fmt(s['min'])}, "
                         f"{fmt(s['max'])}] n={s['n']}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
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
    for key in MODEL:
        cells = []
        for m in names:
            v = [r.get("model", {}).get(key) for r in res["outage"].get(m, [])]
            cells.append("n/a" if not v or None in v else str(sum(v)))
        lines.append(f"| emulator {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ["", NOTE])


def model_counters(sock):
    """MODEL counters of the emulated device, or None if QMP fails."""
    # optional figures: no QMP client (qemu.qmp), no socket or any QMP
    # failure leaves them out, the outage run goes on
    try:
        from qmp import Dut  # pylint: disable=import-outside-toplevel
        with Dut(sock) as dut:
            c = dut.counters()
        return {k: c[k] for k in MODEL}
    except Exception as e:  # noqa: BLE001  # pylint: disable=broad-exception-caught
        progress(f"no emulator counters over QMP: {e}")
        return None


def main():
    """Run the outage benchmark of the modules, print and write its table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--modules", default="upstream,series")
    ap.add_argument("--changes", type=int, default=20,
                    help="MTU changes per repetition")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rate", type=int, default=1000, help="packets/s")
    ap.add_argument("--variant", default="bench")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = Path(args.out or ROOT / "results" /
               time.strftime("outage-%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    obj = Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                       args.variant]))
    names = [m for m in args.modules.split(",") if m]
    mods = build_modules(names, args.variant)
    qemu = out_of(["bash", str(ROOT / "emulator" / "build.sh")])
    env = dict(os.environ, KERNEL=str(obj / "arch/x86/boot/bzImage"),
               MODDIR=str(obj / "mods"), QEMU=qemu,
               LAN743X_OUTAGE_CHANGES=str(args.changes),
               LAN743X_OUTAGE_REPS=str(args.reps),
               LAN743X_OUTAGE_RATE=str(args.rate),
               VM_VERBOSE="1")  # the kernel console in guest.log
    progress(f"booting the VM: {len(names)} modules, {args.reps} x "
             f"{args.changes} changes each")
    env["QMP_SOCK"] = sock = str(out / "qmp.sock")
    p = subprocess.Popen(["bash", str(LAB / "vm" / "vm.sh"), "--", "bash",
                          str(LAB / "guest" / "outage.sh")] +
                         [f"{m}={mods[m]}" for m in names],
                         env=env, stdout=subprocess.PIPE, text=True)
    res = {"outage": {}, "order": {}, "modules": mods,
           "changes": args.changes, "reps": args.reps, "rate": args.rate}
    log, last = [], None
    for line in p.stdout:
        log.append(line)
        f = line.rstrip("\n").split(" ", 2)
        if len(f) == 3 and f[0] == "OUTAGE":
            r = json.loads(f[2])
            # the counters' growth since the previous repetition (the
            # first: since the VM started) is this repetition's
            now = model_counters(sock)
            if now is not None:
                prev = last or {}
                r["model"] = {k: now[k] - prev.get(k, 0) for k in MODEL}
            last = now
            res["outage"].setdefault(f[1], []).append(r)
        elif len(f) == 3 and f[0] == "ORDER":
            res["order"][f[1]] = json.loads(f[2])
            last = model_counters(sock)
    p.wait()
    (out / "guest.log").write_text("".join(log))
    (out / "outage.json").write_text(json.dumps(res, indent=1))
    missing = [m for m in names if m not in res["outage"]]
    if p.returncode or missing:
        sys.exit(f"error: the guest run failed (rc {p.returncode}; no results "
                 f"for {', '.join(missing) or 'none missing'}); see "
                 f"{out / 'guest.log'}")
    t = table(res, names)
    (out / "table.md").write_text(t + "\n")
    print(t)


if __name__ == "__main__":
    main()
