#!/usr/bin/env python3
"""Interrupt moderation, counted on the LAN7430 model: upstream's fixed
interval against the series' ethtool -C settings and adaptive-rx.

    lab/bench/coalesce.py --out measurements/coalesce-DATE [--reps 5]
        [--module NAME=KO ...] [--usecs 50,200] [--secs 5] [--pings 10]
        [--mtu 1500] [--icount SHIFT,...]

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

With --icount, one boot per module and shift, under icount: the guest's
and the model's clocks count guest instructions (2^shift ns each), so
the delays follow the guest's work, not the host's clock.

Each record goes to OUT/records.jsonl as it is taken; OUT/table.md has
median [min, max] over the repetitions. Counts only; the goodput iperf3
reports is kept in the records but is not a result (the emulator's
timing is not the silicon's).

    lab/bench/coalesce.py --idle-return --out DIR [--reps 5]
        [--icount 2,4,6] [--module NAME=KO ...]

adaptive-rx after a burst (default modules: net_dim = the net-next-3
stack without its return to the lowest profile, series = all of it): one
VM boot per module and icount shift (--icount, default 2: the guest's
and the model's clocks count instructions, 2^shift ns each, instead of
following the host), and per repetition a paced UDP burst from the peer
(--secs, --udp-rate) and a quiet second. Counted in the model's virtual
time: the interval RX channel 0 had when its last frame was written
back, and the time from that write-back to the write of net_dim's
lowest profile (none within the quiet second: the interval stayed).
OUT/return.md.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "emulator" / "tests"))
# pylint: disable=wrong-import-position
from bench import out_of
from vmrpc import (  # pylint: disable=wrong-import-order
    PEER_IP,
    VM,
    icount_opts,
    list_delta,
)

# the INT_MOD_CFG slot the driver gives RX channel 0 of a LAN7430 (channel
# N: this slot + N), its 13-bit interval, and net_dim's lowest RX profile (EQE) in the model's
# 1 us units
RX0_MOD_SLOT = 2
INTERVAL_MASK = 0x1FFF
LOWEST_US = 1


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


def chain_index(stack, name_part):
    """1-based index of the first patch of STACK's chain (its parents'
    patches first) whose file name holds name_part."""
    out = subprocess.run(["bash", "-c", ". lab/common.sh; full_series"],
                         cwd=ROOT, env=dict(os.environ, STACK=stack),
                         text=True, stdout=subprocess.PIPE, check=True).stdout
    for i, p in enumerate(out.split(), 1):
        if name_part in os.path.basename(p):
            return i
    raise RuntimeError(f"no patch '{name_part}' in the {stack} chain")


def return_modules(args):
    """[(name, ko)] of --idle-return: --module, else net_dim (the
    net-next-3 chain up to the patch before the return to the lowest
    profile) and the whole series."""
    if args.module:
        return [m.split("=", 1) for m in args.module]
    kb = ["bash", "lab/kernel/kbuild.sh", "module", "guest"]
    env = dict(os.environ, STACK="net-next-3", JOBS="1",
               KBUILD_MODPOST_WARN="1")
    k = chain_index("net-next-3", "return-adaptive-RX-moderation") - 1
    return [("net_dim", last_line(kb + [f"series:{k}"], env)),
            ("series", last_line(kb + ["series"], env))]


def idle_return(vm, secs, rate):
    """A paced UDP burst from the peer and a quiet second, adaptive-rx
    on: the burst's RX frames, the RX channel that received it (one UDP
    flow: RSS puts it on one channel, which one follows from its ports),
    the interval that channel had at its last frame's write-back
    (at_end_us), the virtual time from that write-back to the write of
    the lowest profile (return_ns, None: not within the quiet second) and
    the interval after it (after_us)."""
    c0 = vm.dut.counters()
    rc, out = vm.sh(f"iperf3 -c {PEER_IP} -R -u -b {rate} -l 1400 "
                    f"-t {secs}", timeout=secs + 60)
    if rc:
        raise RuntimeError(f"iperf3 UDP burst: {out}")
    vm.sh("sleep 1")
    c1 = vm.dut.counters()
    frames = c1["rx_frames"] - c0["rx_frames"]
    per_ch = list_delta(c1["rx_frames_per_channel"],
                        c0["rx_frames_per_channel"])
    ch = max(range(len(per_ch)), key=per_ch.__getitem__)
    if per_ch[ch] < 0.9 * frames:
        raise RuntimeError(f"the burst's {frames} frames were spread over "
                           f"the RX channels ({per_ch}); one flow belongs "
                           "on one channel")
    slot = RX0_MOD_SLOT + ch
    wb = c1["rx_last_wb_ns"][ch]
    log = c1["int_mod_log"][slot]
    before = [v for t, v in log if t <= wb]
    if not before:
        raise RuntimeError(f"INT_MOD_CFG{slot}: its log of "
                           f"{len(log)} changes starts after the last "
                           "write-back; the interval then is unknown")
    back = [t - wb for t, v in log
            if t > wb and v & INTERVAL_MASK == LOWEST_US]
    return {"frames": frames, "channel": ch,
            "at_end_us": before[-1] & INTERVAL_MASK,
            "return_ns": back[0] if back else None,
            "after_us": c1["int_mod_cfg"][slot] & INTERVAL_MASK}


def run_return(args, name, ko, qemu, obj, shift, rec):
    """--reps bursts of one module in one VM under icount shift."""
    vm = VM(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
            mods=f"{obj}/mods", ko=ko, cpus=1, qemu_opts=icount_opts(shift))
    try:
        vm.setup_net()
        rc, out = vm.sh(f"ethtool -C {vm.ifname} adaptive-rx on")
        if rc:
            raise RuntimeError(f"ethtool -C adaptive-rx on: {out}")
        for rep in range(args.reps):
            r = dict(idle_return(vm, args.secs, args.udp_rate),
                     module=name, icount_shift=shift, rep=rep)
            rec.write(json.dumps(r) + "\n")
            rec.flush()
            print(f"{name} shift {shift} rep {rep}: {r['frames']} frames, "
                  f"{r['at_end_us']} us at the end, back to "
                  f"{LOWEST_US} us after "
                  + (f"{r['return_ns'] / 1e6:.3f} ms" if r["return_ns"]
                     is not None else "none") + f", {r['after_us']} us after "
                  "the quiet second", flush=True)
    finally:
        vm.close()


def return_table(records):
    """The --idle-return table: per module and shift, median [min, max]."""
    rows = [("| module | icount shift | bursts | ended above the lowest "
             "profile | back to the lowest after (ms, those bursts) "
             "| interval after the quiet second (us) |"),
            "|---|---|---|---|---|---|"]
    keys = []
    for r in records:
        if (r["module"], r["icount_shift"]) not in keys:
            keys.append((r["module"], r["icount_shift"]))
    for m, sh in keys:
        rs = [r for r in records
              if r["module"] == m and r["icount_shift"] == sh]
        high = [r for r in rs if r["at_end_us"] > LOWEST_US]
        back = [r["return_ns"] / 1e6 for r in high
                if r["return_ns"] is not None]
        ret = fmt(back) if back else "-"
        if len(back) < len(high):
            ret += f" ({len(high) - len(back)} of {len(high)} never)"
        rows.append(f"| {m} | {sh} | {len(rs)} | {len(high)} | {ret} | "
                    + fmt([r["after_us"] for r in rs]) + " |")
    return "\n".join(rows) + "\n"


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


def run_module(args, name, ko, qemu, obj, rec, shift=None):
    """Every setting and repetition of one module in one VM (under
    icount at shift, if given)."""
    vm = VM(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
            mods=f"{obj}/mods", ko=ko, cpus=1,
            qemu_opts=icount_opts(shift) if shift is not None else None)
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
                     "mtu": args.mtu, "icount_shift": shift,
                     "rx_frames": d["rx_frames"],
                     "irqs": sum(d["irq_per_vector"]),
                     "no_desc": d["rx_no_desc_stalls"],
                     "fifo_overflow": sum(d["rx_fifo_overflow"]),
                     # the driver's changes of an interval (net_dim's)
                     "mod_changes": sum(d.get("int_mod_changes", [])),
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
        k = (r["module"], r["setting"], r.get("icount_shift"))
        if k not in keys:
            keys.append(k)
    for m, s, sh in keys:
        rs = [r for r in records if (r["module"], r["setting"],
                                     r.get("icount_shift")) == (m, s, sh)]
        rows.append("| " + " | ".join([
            m, s + ("" if sh is None else f" (icount shift {sh})"),
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
    ap.add_argument("--idle-return", action="store_true",
                    help="adaptive-rx's return to its lowest profile "
                    "after a burst, under icount (OUT/return.md)")
    ap.add_argument("--icount", default="",
                    help="icount shifts, comma-separated: one VM boot "
                    "each (default: none; --idle-return: 2)")
    args = ap.parse_args()
    args.usecs = [int(u) for u in args.usecs.split(",") if u]
    try:
        args.icount = [int(x) for x in args.icount.split(",") if x]
    except ValueError:
        ap.error(f"--icount {args.icount}: shifts are integers")
    if not all(0 <= x <= 10 for x in args.icount):
        ap.error(f"--icount {args.icount}: shifts of 0 to 10")
    if args.idle_return and not args.icount:
        args.icount = [2]
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
    if args.idle_return:
        with open(out / "return.jsonl", "a", encoding="utf-8") as rec:
            for name, ko in return_modules(args):
                for shift in args.icount:
                    run_return(args, name, ko, qemu, obj, shift, rec)
        records = [json.loads(line) for line in (out / "return.jsonl")
                   .read_text().splitlines() if line]
        text = return_table(records)
        (out / "return.md").write_text(text)
        print(text)
        print(f"coalesce: {len(records)} records, {time.time() - t0:.0f} s")
        return
    with open(out / "records.jsonl", "a", encoding="utf-8") as rec:
        for name, ko in modules(args):
            for shift in args.icount or [None]:
                run_module(args, name, ko, qemu, obj, rec, shift)
    records = write_table(out)
    print(f"coalesce: {len(records)} records, {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
