#!/usr/bin/env python3
"""Interrupt moderation, counted on the LAN7430 model: upstream's fixed
interval against the series' ethtool -C settings and adaptive-rx.

    lab/bench/coalesce.py --out measurements/coalesce-DATE [--reps 5]
        [--module NAME=KO ...] [--usecs 50,200] [--secs 5] [--pings 10]
        [--mtu 1500]

For each module (default: upstream = the base's lan743x.ko, series = the
net-next-3 stack's, both built by lab/kernel/kbuild.sh) one VM boot
(emulator/tests/vmrpc.py, one vCPU); for each setting the module takes
(upstream: its fixed interval only; the series: the default, each
--usecs value as rx-usecs, adaptive-rx) and each repetition, in turn:

- saturated TCP receive at --mtu (both ends; iperf3 -R from the peer, --secs
  seconds): the model's interrupts (all vectors) and RX frames, so
  interrupts per frame, and the frames that found no free RX descriptor;
- a trickle: --pings pings, one a second: the model's histogram of the
  delay from each RX write-back to the interrupt that reported it, in
  virtual time (the echo replies, and whatever else the DUT received);
- a paced UDP stream from the peer (--udp-rate, 1400-byte datagrams,
  --secs seconds): interrupts per frame and the delay histogram where
  the guest keeps up.

Each record goes to OUT/records.jsonl as it is taken; OUT/table.md has
median [min, max] over the repetitions. Counts only; the goodput iperf3
reports is kept in the records but is not a result (the emulator's
timing is not the silicon's).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "emulator" / "tests"))
# pylint: disable=wrong-import-position
from bench import out_of
from vmrpc import PEER_IP, VM, list_delta  # pylint: disable=wrong-import-order


def last_line(cmd, env=None):
    """The last line a lab build command prints (its product)."""
    return out_of(cmd, cwd=ROOT, env=env)


def modules(args):
    """[(name, ko)]: --module, else upstream and the net-next-3 series."""
    if args.module:
        return [m.split("=", 1) for m in args.module]
    kb = ["bash", "lab/kernel/kbuild.sh", "module", "guest"]
    env = dict(os.environ, STACK="net-next-3", JOBS="1",
               KBUILD_MODPOST_WARN="1")
    return [("upstream", last_line(kb + ["base"], env)),
            ("series", last_line(kb + ["series"], env))]


def settings(name, usecs):
    """(label, ethtool -C arguments or None) of a module."""
    if name == "upstream":
        return [("fixed", None)]
    return ([("default", "adaptive-rx off rx-usecs 400")]
            + [(f"rx-usecs {u}", f"adaptive-rx off rx-usecs {u}")
               for u in usecs]
            + [("adaptive-rx", "adaptive-rx on")])


def rx_delay(model):
    """Frames and summed histogram of the write-back to interrupt delay
    over every vector (counter deltas)."""
    hist = [sum(col) for col in zip(*model.get("wb_delay_hist_per_vector",
                                               [[0]]))]
    return {"frames": sum(model.get("wb_delay_frames", [])),
            "sum_ns": sum(model.get("wb_delay_sum_ns", [])),
            "masked": sum(model.get("wb_masked_frames", [])),
            "unreported": sum(model.get("wb_unreported_frames", [])),
            "hist": hist}


def delta(a, b):
    """Counter deltas b - a of the model's counters (lists elementwise,
    lists of lists too)."""
    out = {}
    for k, v in b.items():
        av = a.get(k)
        if isinstance(v, int) and isinstance(av, int):
            out[k] = v - av
        elif isinstance(v, list) and isinstance(av, list):
            out[k] = list_delta(v, av)
    return out


def run_module(args, name, ko, qemu, obj, rec):
    """Every setting and repetition of one module in one VM."""
    vm = VM(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
            mods=f"{obj}/mods", ko=ko, cpus=1)
    try:
        vm.setup_net()
        if args.mtu != 1500:
            rc, out = vm.sh(f"ip link set dev {vm.ifname} mtu {args.mtu} && "
                            f"ip -n peer link set dev {vm.peer_ifname} "
                            f"mtu {args.mtu} && sleep 1")
            if rc:
                raise RuntimeError(f"MTU {args.mtu}: {out}")
        lower = vm.dut.counters()["wb_delay_bin_lower_us"]
        for label, opts in settings(name, args.usecs):
            if opts:
                rc, out = vm.sh(f"ethtool -C {vm.ifname} {opts}")
                if rc:
                    raise RuntimeError(f"ethtool -C {opts}: {out}")
            for rep in range(args.reps):
                c0 = vm.dut.counters()
                mbps = vm.iperf(secs=args.secs, reverse=True)
                c1 = vm.dut.counters()
                d = delta(c0, c1)
                vm.sh("sleep 1")            # the stream's tail has ended
                c2 = vm.dut.counters()
                vm.ping(count=args.pings, interval=1, deadline=args.pings + 30)
                c3 = vm.dut.counters()
                t = delta(c2, c3)
                # a paced UDP stream from the peer, which the guest keeps
                # up with (at saturation NAPI polls whatever the interval)
                vm.sh(f"iperf3 -c {PEER_IP} -R -u -b {args.udp_rate} "
                      f"-l 1400 -t {args.secs}", timeout=args.secs + 60)
                c4 = vm.dut.counters()
                u = delta(c3, c4)
                r = {"module": name, "setting": label, "rep": rep,
                     "mtu": args.mtu,
                     "rx_frames": d["rx_frames"],
                     "irqs": sum(d["irq_per_vector"]),
                     "no_desc": d["rx_no_desc_stalls"],
                     "fifo_overflow": sum(d["rx_fifo_overflow"]),
                     "sat_delay": rx_delay(d),
                     "trickle_rx_frames": t["rx_frames"],
                     "trickle_irqs": sum(t["irq_per_vector"]),
                     "trickle_delay": rx_delay(t),
                     "udp_rx_frames": u["rx_frames"],
                     "udp_irqs": sum(u["irq_per_vector"]),
                     "udp_delay": rx_delay(u),
                     "bin_lower_us": lower,
                     "iperf_mbps_not_a_result": round(mbps, 1)}
                rec.write(json.dumps(r) + "\n")
                rec.flush()
                print(f"{name} {label} rep {rep}: "
                      f"{r['irqs'] / max(r['rx_frames'], 1):.4f} irq/frame, "
                      f"udp {r['udp_irqs'] / max(r['udp_rx_frames'], 1):.4f}"
                      f" irq/frame, trickle mean delay "
                      f"{mean_us(r['trickle_delay']):.1f} us", flush=True)
    finally:
        vm.close()


def mean_us(dl):
    """Mean write-back to interrupt delay of a record's frames, in us."""
    return dl["sum_ns"] / 1000 / dl["frames"] if dl["frames"] else float("nan")


def pct_us(dl, lower, q):
    """The lower bound (us) of the histogram bin holding quantile q."""
    n = sum(dl["hist"])
    if not n:
        return float("nan")
    acc = 0
    for b, c in enumerate(dl["hist"]):
        acc += c
        if acc >= q * n:
            return lower[b]
    return lower[-1]


def fmt(vals):
    """median [min, max], or the one value all agree on."""
    v = sorted(vals)
    med = v[len(v) // 2]
    if v[0] == v[-1]:
        return f"{med:.4g}"
    return f"{med:.4g} [{v[0]:.4g}, {v[-1]:.4g}]"


def table(records):
    """The table of median [min, max] per module and setting."""
    mtus = sorted({r.get("mtu", 1500) for r in records})
    head = ("| module | setting | IRQs/frame (saturated TCP RX, MTU "
            f"{', '.join(map(str, mtus))}) "
            "| frames finding no free descriptor/frame "
            "| trickle: IRQs/frame | trickle: mean wb->IRQ delay (us) "
            "| trickle: median bin (us) "
            "| saturated: mean wb->IRQ delay (us) "
            "| paced UDP: IRQs/frame | paced UDP: mean wb->IRQ delay (us) |")
    rows = [head, "|---|---|---|---|---|---|---|---|---|---|"]
    keys = []
    for r in records:
        if (r["module"], r["setting"]) not in keys:
            keys.append((r["module"], r["setting"]))
    for m, s in keys:
        rs = [r for r in records if r["module"] == m and r["setting"] == s]
        rows.append("| " + " | ".join([
            m, s,
            fmt([r["irqs"] / max(r["rx_frames"], 1) for r in rs]),
            fmt([r["no_desc"] / max(r["rx_frames"], 1) for r in rs]),
            fmt([r["trickle_irqs"] / max(r["trickle_rx_frames"], 1)
                 for r in rs]),
            fmt([mean_us(r["trickle_delay"]) for r in rs]),
            fmt([pct_us(r["trickle_delay"], r["bin_lower_us"], 0.5)
                 for r in rs]),
            fmt([mean_us(r["sat_delay"]) for r in rs]),
            fmt([r["udp_irqs"] / max(r["udp_rx_frames"], 1) for r in rs]),
            fmt([mean_us(r["udp_delay"]) for r in rs])]) + " |")
    return "\n".join(rows) + "\n"


def write_table(out):
    """OUT/table.md from OUT/records.jsonl, printed too; the records."""
    records = [json.loads(line) for line in
               (out / "records.jsonl").read_text().splitlines() if line]
    text = table(records)
    (out / "table.md").write_text(text)
    print(text)
    return records


def main():
    """Run every module's settings, write the records and the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--pings", type=int, default=10)
    ap.add_argument("--usecs", default="50,200")
    ap.add_argument("--udp-rate", default="100M")
    ap.add_argument("--mtu", type=int, default=1500,
                    help="both ends' MTU for the saturated TCP cell "
                    "(and the rest; 68-9000)")
    ap.add_argument("--obj", help="the guest kernel's build directory "
                    "(default: lab/kernel/kbuild.sh kernel guest)")
    ap.add_argument("--module", action="append", metavar="NAME=KO")
    ap.add_argument("--table", action="store_true",
                    help="only write OUT/table.md from OUT/records.jsonl")
    args = ap.parse_args()
    args.usecs = [int(u) for u in args.usecs.split(",") if u]
    if not 68 <= args.mtu <= 9000:
        ap.error(f"--mtu {args.mtu}: the DUT takes 68 to 9000")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.table:
        write_table(out)
        return
    qemu = last_line(["bash", "emulator/build.sh"])
    obj = args.obj or last_line(["bash", "lab/kernel/kbuild.sh", "kernel",
                                 "guest"])
    t0 = time.time()
    with open(out / "records.jsonl", "a", encoding="utf-8") as rec:
        for name, ko in modules(args):
            run_module(args, name, ko, qemu, obj, rec)
    records = write_table(out)
    print(f"coalesce: {len(records)} records, {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
