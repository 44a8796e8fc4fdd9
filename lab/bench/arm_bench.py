#!/usr/bin/env python3
"""The ARM bench (``make arm-bench``): upstream lan743x vs the
series' module in the ARMv7 guest (QEMU virt, Cortex-A15, 32-bit, the PCIe
host non-coherent: every streaming DMA map/unmap/sync is cache
maintenance, as on i.MX6), count-based figures per packet.

The guest side is the x86 bench's own lab/guest/bench_guest.py (modules
loaded in turn, ABAB..., every cell, --reps times), with three options
for a guest that shares no directory with the host: --rpc console (the
emulator counter requests are console lines this process answers over
QMP), --echo-records (every record is printed on the console, read here
into RESULTS/records.jsonl), --ftrace (the function tracer counts
arch_sync_dma_for_device/_for_cpu, arm's cache maintenance entry points:
kprobes oops on this Thumb-2 kernel). lab/bench/report.py makes the table.

A guest crash (lab/vm/vm-arm.sh exit 86) is a lab event: the VM is booted
once more with the records received so far, and bench_guest.py resumes at
the repetition it lost; a second crash ends the bench (records and table
are still written). Throughput and CPU time under TCG are not evidence:
the table prints Mbit/s for context only.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
ROOT = LAB.parent
sys.path.insert(0, str(LAB / "bench"))
import bench  # noqa: E402  (progress, out_of, build_modules, QMP)
from bench import progress, out_of  # noqa: E402

sys.path.insert(0, str(LAB / "guest"))
from bench_guest import ConsoleRpc, EchoFile  # noqa: E402

TAG = "armv7-noncoherent"
FTRACE = "arch_sync_dma_for_device,arch_sync_dma_for_cpu"
GUEST_OUT = "/tmp/arm-bench"
# boots before a crashing guest ends the bench: the lost repetition is
# repeated once
MAX_BOOTS = 2


def parse_console_line(line):
    """('rpc', N, reset) for a counter request, ('rec', dict) for a record,
    ('bad-rec', text) for a record line that is not JSON (cut by a kernel
    message or a crash), None for any other console line."""
    line = line.rstrip("\r\n")
    if line.startswith(ConsoleRpc.PREFIX + " "):
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit() and \
                parts[2] in ("reset=0", "reset=1"):
            return ("rpc", int(parts[1]), parts[2] == "reset=1")
        return None
    if line.startswith(EchoFile.PREFIX):
        text = line[len(EchoFile.PREFIX):]
        try:
            rec = json.loads(text)
        except ValueError:
            return ("bad-rec", text)
        return ("rec", rec) if isinstance(rec, dict) else ("bad-rec", text)
    return None


def merge_console_rpc(rec, snaps):
    """Replace the record's {"console_rpc": N} placeholder by the counters
    the host read for request N of this boot (snaps: N -> dict), or by an
    error the report leaves out."""
    emu = rec.get("emulator")
    if isinstance(emu, dict) and "console_rpc" in emu:
        n = emu["console_rpc"]
        rec["emulator"] = snaps.get(n) or {
            "error": f"no counters for console request {n}"}
    return rec


class Boot:
    """One guest boot: reads vm-arm.sh's output, answers counter requests,
    appends the records to RESULTS/records.jsonl."""

    def __init__(self, out, sock, log):
        self.out, self.sock, self.log = out, sock, log
        self.snaps, self.records, self.bad, self.late = {}, 0, 0, []
        self.margin = float(os.environ.get("LAN743X_RPC_MARGIN", "2"))

    def line(self, line):
        self.log.write(line)
        p = parse_console_line(line)
        if p is None:
            if "[bench-guest" in line:
                progress("guest: " + line.rstrip().split("] ", 1)[-1])
            return
        if p[0] == "rpc":
            _, n, reset = p
            t0 = time.time()
            try:
                self.snaps[n] = bench.emulator_counters(self.sock, reset)
            except Exception as e:  # report, never kill the bench
                self.snaps[n] = {"error": f"{type(e).__name__}: {e}"}
            dt = time.time() - t0
            if dt > self.margin / 2:
                # the guest waits `margin` s without an acknowledgement
                self.late.append((n, round(dt, 2)))
                progress(f"warning: counter request {n} took {dt:.2f} s "
                         f"(the guest waits {self.margin} s)")
        elif p[0] == "rec":
            rec = merge_console_rpc(p[1], self.snaps)
            with open(self.out / "records.jsonl", "a") as f:
                f.write(json.dumps(rec) + "\n")
            self.records += 1
        else:
            self.bad += 1
            progress(f"warning: a record line is not JSON: {p[1][:100]}")


def main():
    args = bench.bench_args(__doc__, 3, "tcp-rx-1500,tcp-tx-1500,tcp-rx-9000")
    os.environ.update(LAB_BASE="7.3", STACK="net-next")
    out = Path(args.out or ROOT / "results" /
               ("arm-bench-" + time.strftime("%Y%m%d-%H%M%S")))
    out.mkdir(parents=True, exist_ok=True)
    progress(f"results in {out}")

    qemu = out_of(["bash", str(ROOT / "emulator" / "build.sh"), "--arch",
                   "arm"])
    progress("armv7-virt kernel (cached; cold it is a 1 h build)")
    obj = Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                       "armv7-virt"]))
    rootfs = out_of(["bash", str(LAB / "vm" / "rootfs-arm.sh")])
    names = [m for m in args.modules.split(",") if m]
    mods = bench.build_modules(names, "armv7-virt")
    meta = {"reps": args.reps, "secs": args.secs, "cells": args.cells,
            "kernel": str(obj), "modules": mods, "qemu": qemu,
            "rootfs": rootfs, "tag": TAG, "ftrace": FTRACE,
            "series_patches": sorted(
                str(p.relative_to(ROOT / "patches")) for s in ("net", "net-next")
                for p in (ROOT / "patches" / s).glob("0*.patch")),
            "emulated": True, "boots": []}

    sock = f"/tmp/lan743x-arm-bench-{os.getpid()}.sock"
    guest = ["python3", "lab/guest/bench_guest.py"]
    for m in mods:
        guest += ["--module", f"{m}=/ko/{m}/lan743x.ko"]
    guest += ["--reps", str(args.reps), "--secs", str(args.secs),
              "--cells", args.cells, "--out", GUEST_OUT, "--rpc", "console",
              "--echo-records", "--ftrace", FTRACE, "--tag", TAG]
    env = dict(os.environ, KERNEL=str(obj), QEMU=qemu, ROOTFS=rootfs,
               QMP_SOCK=sock, VM_TIMEOUT=os.environ.get("VM_TIMEOUT",
                                                        "10800"))
    rc = None
    for boot in range(1, MAX_BOOTS + 1):
        cmd = ["bash", str(LAB / "vm" / "vm-arm.sh")]
        for m, ko in mods.items():
            cmd += ["--ko", f"{m}={ko}"]
        tmp = None
        if (out / "records.jsonl").exists():
            # resume: the guest keeps what was recorded and skips it
            tmp = tempfile.NamedTemporaryFile("w", suffix=".jsonl",
                                              delete=False)
            tmp.write((out / "records.jsonl").read_text())
            tmp.close()
            cmd += ["--file", f"{tmp.name}={GUEST_OUT}/records.jsonl"]
        env["VM_CONSOLE_LOG"] = str(out / f"console-{boot}.log")
        if boot > 1:
            # lab test of the resume (bench_guest.py): the injected crash
            # happens once per run; its marker file does not survive a boot
            env.pop("LAN743X_BENCH_CRASH_AT", None)
        progress(f"booting the ARMv7 guest (boot {boot}): "
                 f"{', '.join(mods)}, {args.reps} reps, {args.cells}")
        t0 = time.time()
        with open(out / f"guest-{boot}.log", "w") as log:
            b = Boot(out, sock, log)
            p = subprocess.Popen(cmd + ["--"] + guest, env=env, text=True,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, errors="replace")
            for line in p.stdout:
                b.line(line)
            rc = p.wait()
        if tmp:
            os.unlink(tmp.name)
        meta["boots"].append({"boot": boot, "rc": rc,
                              "secs": round(time.time() - t0),
                              "records": b.records, "bad_records": b.bad,
                              "late_counter_requests": b.late})
        progress(f"boot {boot}: exit {rc}, {b.records} records, "
                 f"{int(time.time() - t0)} s")
        if rc != 86:
            break
        progress("the guest crashed (vm-arm.sh exit 86, a lab event; console "
                 f"in {out}/console-{boot}.log)"
                 + (": repeating the lost repetition once" if boot <
                    MAX_BOOTS else ": crashed again, giving up"))
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    if not (out / "records.jsonl").exists():
        sys.exit(f"error: no records (vm-arm.sh exit {rc}); see {out}")
    progress("report")
    rrc = subprocess.run([sys.executable, str(LAB / "bench" / "report.py"),
                          str(out)]).returncode
    if rc:
        sys.exit(f"error: the guest bench failed (vm-arm.sh exit {rc}"
                 + (", the guest crashed twice" if rc == 86 else "") + ")")
    sys.exit(rrc)


if __name__ == "__main__":
    main()
