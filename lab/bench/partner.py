#!/usr/bin/env python3
"""The link partner outside the DUT: what it sends, and what it costs it.

The DUT's LAN7430 is wired to a host tap device (lab/vm/vm.sh
VM_PARTNER_TAP) that lab/vm/partner.sh moves into a network namespace of
the host, where the partner's iperf3 runs natively, on the host's cores,
not on the guest's vCPU. For each module the guest loads it and runs an
iperf3 server (lab/guest/partner_dut.sh); this process, the partner,
sends to it, REPS times per cell:

- tcp-1500, tcp-9000: a TCP stream (iperf3 -c, SECS s) at the partner's
  MTU of 1500 or 9000;
- udp-1g, udp-1g-9000: UDP at 1 Gbit/s offered (iperf3 -u -b 1G,
  1472-byte datagrams at MTU 1500, 8972-byte ones at 9000), a line-rate
  burst.

With --icount SHIFTS each module boots once per shift, the model's time
then following the guest's instructions (2^SHIFT ns each), not the host.

A module name's settings (+rxusN, +dim, +ringN, +cbN, as bench.py takes
them) are applied in the guest after the boot, with ethtool.

Per run: the rate on the model's wire meter (the bytes of the frames the
model took off the wire, preamble and gap included, over the model's
virtual clock: its counters rx_wire_bytes and vclock_ns, read from SETTLE
s after iperf3 starts to SETTLE s before it ends), the share of
one host core the partner's iperf3 used (its rusage over the run's wall
time; the rest of the core is what it idled), the model's interrupts
(all vectors) and frames that found no free RX descriptor per frame it
received, and iperf3's own figures
(context only: a throughput under TCG is not evidence). The wire meter
shows whether the partner can put line rate on the wire; the partner's
idle share whether the DUT, not the partner, bounds a TCP stream.

    python3 lab/bench/partner.py [--modules upstream,series] [--reps 5]
        [--secs 8] [--cells tcp-1500,tcp-9000,udp-1g,udp-1g-9000]
        [--icount 0,1,2] [--model KEY=VALUE] [--out DIR]
    python3 lab/bench/partner.py --table DIR

Results: DIR/records.jsonl, DIR/meta.json, DIR/table.md (median [min,
max] of the runs whose iperf3 succeeded; a row counts the others).
"""

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import statistics
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
    out_of,
    parse_model,
    progress,
    series_patch_ids,
)
from crash import first_problem
from qmp import Dut

DUT_ADDR, PARTNER_ADDR = "10.9.9.1", "10.9.9.2"
#: host seconds at each end of a run outside the wire meter's reading:
#: iperf3's connection set-up and its results exchange are not traffic
#: at the offered rate
SETTLE = 1.0
CELLS = {"tcp-1500": (1500, []), "tcp-9000": (9000, []),
         "udp-1g": (1500, ["-u", "-b", "1G", "-l", "1472"]),
         "udp-1g-9000": (9000, ["-u", "-b", "1G", "-l", "8972"])}


def fmt(vals):
    """median [min, max] of VALS, or n/a."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return "n/a"
    m = statistics.median(vals)
    return (f"{m:.3g}" if min(vals) == max(vals) else
            f"{m:.3g} [{min(vals):.3g}, {max(vals):.3g}]")


def partner_run(ns, args, during):
    """Run iperf3 ARGS in the partner's namespace and DURING() while it
    runs: (iperf3's JSON, the share of one core iperf3 used over its wall
    time, what DURING returned)."""
    t0 = time.monotonic()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(["ip", "netns", "exec", ns, "iperf3", "-J"] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        seen = during()
    finally:
        out, err = p.communicate()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    try:
        js = json.loads(out)
    except json.JSONDecodeError:
        js = {"error": (out + err)[-500:]}
    return js, cpu / wall if wall else None, seen


def measure(dut, ns, tap, cell, secs, port=5201):
    """One run of CELL to the guest's iperf3 server on PORT: a record.
    The wire meter is read from SETTLE s after iperf3 starts to SETTLE s
    before it ends (host time), so that its connection set-up and results
    exchange are not in the rate."""
    mtu, extra = CELLS[cell]
    subprocess.run(["ip", "-n", ns, "link", "set", "dev", tap, "mtu",
                    str(mtu)], check=True)

    def during():
        time.sleep(SETTLE)
        c0 = dut.counters()
        time.sleep(max(secs - 2 * SETTLE, 0.5))
        return c0, dut.counters()

    js, busy, (c0, c1) = partner_run(
        ns, ["-c", DUT_ADDR, "-p", str(port), "-t", str(secs)] + extra,
        during)
    vns = c1["vclock_ns"] - c0["vclock_ns"]
    wire = c1["rx_wire_bytes"] - c0["rx_wire_bytes"]
    end = js.get("end", {})
    summ = end.get("sum_received") or end.get("sum") or {}
    return {"cell": cell, "wire_gbit_s": wire * 8 / vns if vns else None,
            "model_ms": vns / 1e6,
            "partner_core_busy": busy,
            "partner_core_idle": None if busy is None else 1 - busy,
            "iperf3_mbit_s": (summ.get("bits_per_second") or 0) / 1e6,
            "lost_percent": summ.get("lost_percent"),
            "rx_frames": c1["rx_frames"] - c0["rx_frames"],
            "irqs": sum(c1["irq_per_vector"]) - sum(c0["irq_per_vector"]),
            "no_desc": c1["rx_no_desc_stalls"] - c0["rx_no_desc_stalls"],
            "error": js.get("error")}


#: QEMU options of a run in model time: icount at SHIFT (2^SHIFT ns of
#: model time per guest instruction, the host's speed no longer in it),
#: one TCG thread (icount needs it), no sleeping when the guest idles
ICOUNT = "-accel tcg,thread=single -icount shift={},sleep=off"


@contextlib.contextmanager
def guest(name, ko, obj, qemu, out, model=None, shift=None):
    """Boot the guest with KO wired to a host tap in a partner namespace,
    the module loaded and the DUT addressed (lab/guest/partner_dut.sh);
    yields (Dut, namespace, tap, the guest's rw directory). MODEL: the
    lan7430's properties at start (bench.dut_opts()); SHIFT: icount's
    shift (ICOUNT), None for the host's clock. A guest kernel's oops
    fails the run (lab/vm/crash.py: an oops is a result; no retry)."""
    tag = f"{os.getpid() % 100000}"
    ns, tap = f"l7partner{tag}", f"l7p{tag}"
    sfx = name if shift is None else f"{name}-s{shift}"
    rw = out / f"rw-{sfx}"
    if rw.exists():
        shutil.rmtree(rw)
    rw.mkdir(parents=True)
    sock = str(out / f"qmp-{sfx}.sock")
    env = dict(os.environ, KERNEL=str(obj / "arch/x86/boot/bzImage"),
               MODDIR=str(obj / "mods"), QEMU=qemu, QMP_SOCK=sock,
               VM_RWDIR=str(rw), VM_PARTNER_TAP=tap, VM_TIMEOUT="7200",
               DUT_OPTS=dut_opts(model or {}))
    if shift is not None:
        env["VM_EXTRA_QEMU_OPTS"] = ICOUNT.format(shift)
    log = open(out / f"vm-{sfx}.log", "w", encoding="utf-8")  # noqa: SIM115  # pylint: disable=consider-using-with
    vm = subprocess.Popen(
        ["bash", str(LAB / "vm" / "vm.sh"), "--", "bash",
         str(LAB / "guest" / "partner_dut.sh"), ko, f"{DUT_ADDR}/24",
         PARTNER_ADDR, str(rw)], env=env, stdout=log,
        stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        p = subprocess.run(["bash", str(LAB / "vm" / "partner.sh"), "up", tap,
                            ns, f"{PARTNER_ADDR}/24"], check=False,
                           capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"error: the partner: {p.stderr.strip()}")
        t0 = time.time()
        while not (rw / "ready").exists():
            if vm.poll() is not None or time.time() - t0 > 1800:
                sys.exit(f"error: the guest ({sfx}) never got ready "
                         f"(vm.sh rc {vm.poll()}); see {log.name}")
            time.sleep(1)
        dut = Dut(sock)
        try:
            yield dut, ns, tap, rw
        finally:
            dut.close()
    finally:
        (rw / "done").touch()
        try:
            vm.wait(timeout=300)
        except subprocess.TimeoutExpired:
            vm.kill()
        subprocess.run(["bash", str(LAB / "vm" / "partner.sh"), "down", ns],
                       check=False)
        log.close()
        oops = first_problem(Path(log.name).read_text(encoding="utf-8",
                                                      errors="replace"))
        if oops:
            sys.exit(f"error: the guest ({sfx}) oopsed: {oops}; see "
                     f"{log.name}")


def settings(name):
    """The guest's commands for the settings a module NAME carries
    (bench.module_revs(): +ringN, +cbN, +rxusN, +dim), as
    lab/guest/bench_guest.py applies them; $D the DUT's interface."""
    cmds = []
    ring = re.search(r"\+ring([0-9]+)", name)
    if ring:
        cmds.append(f"ethtool -G $D rx {ring.group(1)}")
    cb = re.search(r"\+cb([0-9]+)", name)
    if cb:
        cmds.append(f"ethtool --set-tunable $D rx-copybreak {cb.group(1)}")
    rxus = re.search(r"\+rxus([0-9]+)", name)
    if rxus:
        cmds.append(f"ethtool -C $D adaptive-rx off rx-usecs {rxus.group(1)}")
    if re.search(r"\+dim(\+|$)", name):
        cmds.append("ethtool -C $D adaptive-rx on")
    return cmds


def guest_run(rw, k, script, timeout=600):
    """Run SCRIPT as the guest's K-th command (lab/guest/partner_dut.sh):
    (exit status, output); exits if the guest does not answer."""
    tmp = rw / f".cmd-{k}"
    tmp.write_text(script + "\n", encoding="utf-8")
    tmp.rename(rw / f"cmd-{k}")
    rc = rw / f"rc-{k}"
    t0 = time.monotonic()
    while not rc.exists():
        if time.monotonic() - t0 > timeout:
            sys.exit(f"error: the guest did not finish {script!r} in "
                     f"{timeout} s")
        time.sleep(0.02)
    out = (rw / f"out-{k}").read_text(encoding="utf-8", errors="replace")
    return int(rc.read_text(encoding="utf-8").strip() or 255), out


def run_module(name, ko, obj, qemu, args, out, shift=None):
    """Boot the guest with KO, apply NAME's settings (settings()), measure
    every cell REPS times: records."""
    recs = []
    with guest(name, ko, obj, qemu, out, args.model, shift) as (dut, ns, tap,
                                                               rw):
        for k, cmd in enumerate(settings(name), 1):
            rc, said = guest_run(rw, k, cmd)
            if rc:
                sys.exit(f"error: {name}: {cmd!r} failed (rc {rc}): "
                         f"{said.strip()[-300:]}")
        runs = 0
        for rep in range(1, args.reps + 1):
            for cell in args.cells.split(","):
                # the guest's four servers in turn (lab/guest/partner_dut.sh):
                # a server still ending the last run refuses the next
                r = measure(dut, ns, tap, cell, args.secs, 5201 + runs % 4)
                runs += 1
                r.update(module=name, rep=rep, icount_shift=shift)
                progress(f"{name} {cell} rep {rep}"
                         f"{'' if shift is None else f' shift {shift}'}: "
                         f"wire {r['wire_gbit_s'] or 0:.3f} Gbit/s, partner "
                         f"busy {r['partner_core_busy'] or 0:.2f} core")
                recs.append(r)
    return recs


def parse_shifts(text):
    """The icount shifts of --icount TEXT ("0,2"; "" the host's clock:
    [None]); ValueError names a bad one."""
    if not text.strip():
        return [None]
    out = []
    for it in text.split(","):
        if not it.strip().isdigit() or int(it) > 10:
            raise ValueError(f"--icount {text!r}: shifts are integers 0-10, "
                             "comma-separated")
        out.append(int(it))
    return out


def table(recs, names, cells, shifts=(None,)):
    """The markdown table of RECS, a row per cell, shift and metric."""
    for r in recs:
        n = r.get("rx_frames")
        r["irqs_per_frame"] = r["irqs"] / n if n and "irqs" in r else None
        r["no_desc_per_frame"] = (r["no_desc"] / n if n and "no_desc" in r
                                  else None)
    rows = [("wire_gbit_s", "rate on the model's wire meter, Gbit/s"),
            ("partner_core_idle", "partner: share of a core idle"),
            ("irqs_per_frame", "interrupts per frame received"),
            ("no_desc_per_frame", ("frames finding no free descriptor, per "
                                  "frame received")),
            ("iperf3_mbit_s", "iperf3 Mbit/s (context only, TCG)")]
    lines = ["| cell | clock | metric | " + " | ".join(names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    for c in cells:
        for sh in shifts:
            clock = "host" if sh is None else f"icount shift {sh}"
            runs = {m: [r for r in recs if r["module"] == m and
                        r["cell"] == c and r.get("icount_shift") == sh]
                    for m in names}
            for k, label in rows:
                lines.append(f"| {c} | {clock} | {label} | " + " | ".join(
                    fmt([r[k] for r in runs[m] if not r.get("error")])
                    for m in names) + " |")
            lines.append(f"| {c} | {clock} | runs whose iperf3 failed (not "
                         "in the rows above) | " + " | ".join(
                             f"{sum(1 for r in runs[m] if r.get('error'))} "
                             f"of {len(runs[m])}" for m in names) + " |")
    return "\n".join(lines)


def load_run(d, kind):
    """(meta.json, records.jsonl's records) of the run in directory D;
    exits naming D if it is not a run of KIND."""
    try:
        meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
        recs = [json.loads(ln) for ln in (d / "records.jsonl").read_text(
            encoding="utf-8").splitlines() if ln.strip()]
    except (OSError, ValueError) as e:
        sys.exit(f"error: {d}: not a {kind} run ({e})")
    return meta, recs


def retable(d):
    """Write and print the table of the run in directory D again."""
    meta, recs = load_run(d, "partner")
    names = list(dict.fromkeys(r["module"] for r in recs))
    cells = list(dict.fromkeys(r["cell"] for r in recs))
    t = table(recs, names, cells, meta["icount"])
    (d / "table.md").write_text(t + "\n")
    print(t)
    return 0


def common_args(ap, icount):
    """The arguments partner.py and lineout.py share, --icount's default
    ICOUNT."""
    ap.add_argument("--variant", default="bench")
    ap.add_argument("--icount", default=icount,
                    help="comma-separated icount shifts to run at, each a "
                         "boot per module (model time 2^SHIFT ns per guest "
                         f"instruction; default {icount or 'none'}); empty: "
                         "the host's clock")
    ap.add_argument("--model", action="append", metavar="KEY=VALUE",
                    help="a lan7430 property at start, as bench.py's")
    ap.add_argument("--out", default=None)
    ap.add_argument("--table", metavar="DIR",
                    help="print the table of the run in DIR again (and "
                         "write DIR/table.md), nothing run")


def prepare(ap, args, kind):
    """What a run of the partner (KIND: its results' prefix) needs once
    ARGS (--model, --icount, --modules, --variant, --out) are checked:
    a namespace of names, out, shifts, obj (the kernel's build), mods
    (module -> its .ko), qemu; args.model parsed. A bad argument is an
    AP error, before anything is built."""
    try:
        args.model = parse_model(args.model)
        shifts = parse_shifts(args.icount)
    except ValueError as e:
        ap.error(str(e))
    if os.geteuid():
        ap.error("needs root (a tap device and a network namespace)")
    names = [m for m in args.modules.split(",") if m]
    out = Path(args.out or ROOT / "results" /
               time.strftime(f"{kind}-%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    obj = Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                       args.variant]))
    mods = build_modules(names, args.variant)
    qemu = out_of(["bash", str(ROOT / "emulator" / "build.sh"), "--arch",
                   "x86_64"])
    return argparse.Namespace(names=names, out=out, shifts=shifts, obj=obj,
                              mods=mods, qemu=qemu)


def main(argv=None):
    """Measure the partner's line rate and CPU against each module."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--modules", default="upstream,series")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--secs", type=int, default=8)
    ap.add_argument("--cells", default=",".join(CELLS))
    common_args(ap, "")
    args = ap.parse_args(argv)
    if args.table:
        return retable(Path(args.table))
    bad = [c for c in args.cells.split(",") if c not in CELLS]
    if bad:
        ap.error(f"unknown cells {bad}: {', '.join(CELLS)}")
    r = prepare(ap, args, "partner")
    names, out, shifts = r.names, r.out, r.shifts
    obj, mods, qemu = r.obj, r.mods, r.qemu
    recs = []
    for shift in shifts:
        for name in names:
            recs += run_module(name, mods[name], obj, qemu, args, out, shift)
    with open(out / "records.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in recs)
    (out / "meta.json").write_text(json.dumps(
        {"argv": sys.argv[1:], "model": args.model, "icount": shifts,
         "series_patch_ids": series_patch_ids()}, indent=1) + "\n")
    t = table(recs, names, args.cells.split(","), shifts)
    (out / "table.md").write_text(t + "\n")
    print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
