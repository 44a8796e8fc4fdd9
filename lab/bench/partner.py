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
- udp-1g: UDP at 1 Gbit/s offered (iperf3 -u -b 1G, 1472-byte
  datagrams), a line-rate burst.

Per run: the rate on the model's wire meter (the bytes of the frames the
model took off the wire, preamble and gap included, over the model's
virtual clock: its counters rx_wire_bytes and vclock_ns), the share of
one host core the partner's iperf3 used (its rusage over the run's wall
time; the rest of the core is what it idled), and iperf3's own figures
(context only: a throughput under TCG is not evidence). The wire meter
shows whether the partner can put line rate on the wire; the partner's
idle share whether the DUT, not the partner, bounds a TCP stream.

    python3 lab/bench/partner.py [--modules upstream,series] [--reps 5]
        [--secs 8] [--cells tcp-1500,tcp-9000,udp-1g] [--out DIR]

Results: DIR/records.jsonl, DIR/table.md (median [min, max]).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vm"))
from bench import LAB, ROOT, build_modules, out_of, progress
from qmp import Dut

DUT_ADDR, PARTNER_ADDR = "10.9.9.1", "10.9.9.2"
CELLS = {"tcp-1500": (1500, []), "tcp-9000": (9000, []),
         "udp-1g": (1500, ["-u", "-b", "1G", "-l", "1472"])}


def fmt(vals):
    """median [min, max] of VALS, or n/a."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return "n/a"
    m = statistics.median(vals)
    return (f"{m:.3g}" if min(vals) == max(vals) else
            f"{m:.3g} [{min(vals):.3g}, {max(vals):.3g}]")


def partner_run(ns, args):
    """Run iperf3 ARGS in the partner's namespace: (its JSON, the share
    of one core it used over its wall time)."""
    t0 = time.monotonic()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(["ip", "netns", "exec", ns, "iperf3", "-J"] + args,
                       capture_output=True, text=True, check=False)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    try:
        js = json.loads(p.stdout)
    except json.JSONDecodeError:
        js = {"error": (p.stdout + p.stderr)[-500:]}
    return js, cpu / wall if wall else None


def measure(dut, ns, tap, cell, secs):
    """One run of CELL: a record."""
    mtu, extra = CELLS[cell]
    subprocess.run(["ip", "-n", ns, "link", "set", "dev", tap, "mtu",
                    str(mtu)], check=True)
    c0 = dut.counters()
    js, busy = partner_run(ns, ["-c", DUT_ADDR, "-t", str(secs)] + extra)
    c1 = dut.counters()
    vns = c1["vclock_ns"] - c0["vclock_ns"]
    wire = c1["rx_wire_bytes"] - c0["rx_wire_bytes"]
    end = js.get("end", {})
    summ = end.get("sum_received") or end.get("sum") or {}
    return {"cell": cell, "wire_gbit_s": wire * 8 / vns if vns else None,
            "partner_core_busy": busy,
            "partner_core_idle": None if busy is None else 1 - busy,
            "iperf3_mbit_s": (summ.get("bits_per_second") or 0) / 1e6,
            "lost_percent": summ.get("lost_percent"),
            "rx_frames": c1["rx_frames"] - c0["rx_frames"],
            "error": js.get("error")}


def run_module(name, ko, obj, qemu, args, out):
    """Boot the guest with KO, measure every cell REPS times: records."""
    tag = f"{os.getpid() % 100000}"
    ns, tap = f"l7partner{tag}", f"l7p{tag}"
    rw = out / f"rw-{name}"
    rw.mkdir(parents=True, exist_ok=True)
    sock = str(out / f"qmp-{name}.sock")
    env = dict(os.environ, KERNEL=str(obj / "arch/x86/boot/bzImage"),
               MODDIR=str(obj / "mods"), QEMU=qemu, QMP_SOCK=sock,
               VM_RWDIR=str(rw), VM_PARTNER_TAP=tap, VM_TIMEOUT="3600")
    log = open(out / f"vm-{name}.log", "w", encoding="utf-8")  # noqa: SIM115  # pylint: disable=consider-using-with
    vm = subprocess.Popen(
        ["bash", str(LAB / "vm" / "vm.sh"), "--", "bash",
         str(LAB / "guest" / "partner_dut.sh"), ko, f"{DUT_ADDR}/24",
         PARTNER_ADDR, str(rw)], env=env, stdout=log,
        stderr=subprocess.STDOUT, cwd=ROOT)
    recs = []
    try:
        p = subprocess.run(["bash", str(LAB / "vm" / "partner.sh"), "up", tap,
                            ns, f"{PARTNER_ADDR}/24"], check=False,
                           capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"error: the partner: {p.stderr.strip()}")
        t0 = time.time()
        while not (rw / "ready").exists():
            if vm.poll() is not None or time.time() - t0 > 900:
                sys.exit(f"error: the guest ({name}) never got ready "
                         f"(vm.sh rc {vm.poll()}); see {log.name}")
            time.sleep(1)
        dut = Dut(sock)
        try:
            for rep in range(1, args.reps + 1):
                for cell in args.cells.split(","):
                    r = measure(dut, ns, tap, cell, args.secs)
                    r.update(module=name, rep=rep)
                    progress(f"{name} {cell} rep {rep}: wire "
                             f"{r['wire_gbit_s'] or 0:.3f} Gbit/s, partner "
                             f"busy {r['partner_core_busy'] or 0:.2f} core")
                    recs.append(r)
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
    return recs


def table(recs, names, cells):
    """The markdown table of RECS."""
    rows = [("wire_gbit_s", "rate on the model's wire meter, Gbit/s"),
            ("partner_core_idle", "partner: share of a core idle"),
            ("iperf3_mbit_s", "iperf3 Mbit/s (context only, TCG)")]
    lines = ["| cell | metric | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names)]
    for c in cells:
        for k, label in rows:
            lines.append(f"| {c} | {label} | " + " | ".join(
                fmt([r[k] for r in recs if r["module"] == m and
                     r["cell"] == c]) for m in names) + " |")
    return "\n".join(lines)


def main(argv=None):
    """Measure the partner's line rate and CPU against each module."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--modules", default="upstream,series")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--secs", type=int, default=8)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--variant", default="bench")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    bad = [c for c in args.cells.split(",") if c not in CELLS]
    if bad:
        ap.error(f"unknown cells {bad}: {', '.join(CELLS)}")
    if os.geteuid():
        ap.error("needs root (a tap device and a network namespace)")
    names = [m for m in args.modules.split(",") if m]
    out = Path(args.out or ROOT / "results" /
               time.strftime("partner-%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    obj = Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                       args.variant]))
    mods = build_modules(names, args.variant)
    qemu = out_of(["bash", str(ROOT / "emulator" / "build.sh"), "--arch",
                   "x86_64"])
    recs = []
    for name in names:
        recs += run_module(name, mods[name], obj, qemu, args, out)
    with open(out / "records.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in recs)
    t = table(recs, names, args.cells.split(","))
    (out / "table.md").write_text(t + "\n")
    print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
