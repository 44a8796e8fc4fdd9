#!/usr/bin/env python3
"""The A/B bench (``make bench``): upstream lan743x vs the series' module.

Builds what is missing (bench kernel without DMA_API_DEBUG, both modules,
QEMU with the LAN7430 model), boots the VM once per swiotlb setting, and in
each boot loads the two modules alternately (ABAB...) for every cell,
``--reps`` times. While the guest runs, this process answers the guest's
requests for emulator counter snapshots over QMP. Results go to
``results/<timestamp>/``: raw records (JSONL), summary JSON, a markdown
table (median, min, max, B/A ratio) and PNG plots (lab/bench/report.py).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
ROOT = LAB.parent
T0 = time.time()


def progress(msg):
    print(f"[{int(time.time() - T0):4d}s] {msg}", file=sys.stderr, flush=True)


def out_of(cmd, **kw):
    p = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, **kw)
    if p.returncode:
        sys.exit(f"error: {' '.join(map(str, cmd))} failed (rc {p.returncode})")
    return p.stdout.strip().splitlines()[-1]


def emulator_counters(sock, reset=False):
    """The emulator's counters (dict) over the QMP socket SOCK; with reset,
    zero them after reading."""
    from qemu.qmp.legacy import QEMUMonitorProtocol
    m = QEMUMonitorProtocol(sock)
    m.connect()
    try:
        r = m.cmd("qom-get", path="/machine/peripheral/dut",
                  property="counters")
        # qemu.qmp's legacy cmd() returns the response or, in newer
        # releases, just its "return" value
        val = r.get("return") if isinstance(r, dict) else r
        data = json.loads(val) if isinstance(val, str) else val
        if reset:
            m.cmd("qom-set", path="/machine/peripheral/dut",
                  property="reset-counters", value=True)
        return data
    finally:
        m.close()


class CounterServer(threading.Thread):
    """Answer req-N.json files in rpc_dir with the emulator's counters."""

    def __init__(self, rpc_dir, sock):
        super().__init__(daemon=True)
        self.rpc_dir, self.sock = Path(rpc_dir), sock
        self.stop = False
        self.errors = 0

    def qmp(self, reset):
        return emulator_counters(self.sock, reset)

    def run(self):
        seen = set()
        while not self.stop:
            for req in sorted(self.rpc_dir.glob("req-*.json")):
                if req.name in seen:
                    continue
                seen.add(req.name)
                n = req.stem.split("-", 1)[1]
                try:
                    ask = json.loads(req.read_text())
                    data = self.qmp(bool(ask.get("reset")))
                except Exception as e:  # report, never kill the bench
                    self.errors += 1
                    data = {"error": f"{type(e).__name__}: {e}"}
                tmp = self.rpc_dir / f".resp-{n}.tmp"
                tmp.write_text(json.dumps(data))
                tmp.rename(self.rpc_dir / f"resp-{n}.json")
            time.sleep(0.05)


def build_modules(names, variant):
    """lan743x.ko per module name (upstream, series, pK, each optionally
    with +cbN: the same module with the rx-copybreak tunable set to N after
    loading), built for the kernel VARIANT; exits with a clear error on a
    bad list."""
    revs = {}
    for name in names:
        m = re.sub(r"\+cb[0-9]+$", "", name)
        if name != m and m == "upstream":
            sys.exit("error: --modules: upstream has no rx-copybreak tunable")
        if m == "upstream":
            revs[name] = "base"
        elif m == "series":
            revs[name] = "series"
        elif re.fullmatch(r"p[1-9][0-9]*", m):
            revs[name] = "series:" + m[1:]
        else:
            sys.exit(f"error: --modules: unknown module {name!r} (upstream, "
                     "series, or pK = base + the first K patches, optionally "
                     "+cbN)")
    if len(names) < 2 or names[0] != "upstream" or len(set(names)) != \
            len(names):
        sys.exit("error: --modules: upstream first, then at least one other, "
                 "each once")
    progress(f"modules: {', '.join(names)}")
    return {m: out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "module", variant, r])
            for m, r in revs.items()}


# boots per swiotlb setting before a crashing guest fails the bench
MAX_BOOTS = 3


def bench_args(doc, secs, cells, argv=None, extra=None):
    """The options lab/bench/bench.py and lab/bench/arm_bench.py share (--reps, --secs,
    --cells, --modules, --out; BENCH_* in the environment), parsed; extra:
    a function that adds the caller's own options to the parser."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--reps", type=int,
                    default=int(os.environ.get("BENCH_REPS", 5)))
    ap.add_argument("--secs", type=int,
                    default=int(os.environ.get("BENCH_SECS", secs)))
    ap.add_argument("--cells", default=os.environ.get("BENCH_CELLS", cells))
    ap.add_argument("--modules", default=os.environ.get(
        "BENCH_MODULES", "upstream,series"),
        help="modules loaded in turn: upstream, series, pK (base + the "
        "first K patches), e.g. upstream,p2,series; NAME+cbN loads NAME "
        "with rx-copybreak N, e.g. upstream,series+cb0,series+cb256")
    ap.add_argument("--out", default=None)
    if extra:
        extra(ap)
    args = ap.parse_args(argv)
    if args.reps < 5:
        progress(f"note: {args.reps} repetitions; the project's figures "
                 "need at least 5")
    return args


def main():
    def extra(ap):
        ap.add_argument("--swiotlb", default=os.environ.get(
            "BENCH_SWIOTLB", "off,force"), help="comma list of off,force")
        ap.add_argument("--variant", default="bench",
                        help="kernel variant (bench has no DMA_API_DEBUG)")
    args = bench_args(__doc__, 5, "", extra=extra)

    out = Path(args.out or ROOT / "results" / time.strftime("%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    progress(f"results in {out}")

    progress(f"kernel ({args.variant})")
    obj = Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                       args.variant]))
    names = [m for m in args.modules.split(",") if m]
    mods = build_modules(names, args.variant)
    progress("qemu with the lan7430 model")
    qemu = out_of(["bash", str(ROOT / "emulator" / "build.sh")])
    ynl = str(Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "srcrepo"]),
                   "tools/net/ynl"))

    meta = {"reps": args.reps, "secs": args.secs, "kernel": str(obj),
            "modules": mods, "qemu": qemu,
            # the patches the series' module is built from (net-next
            # and its parent net; the cover letters too)
            "series_patches": sorted(
                str(p.relative_to(ROOT / "patches"))
                for s in ("net", "net-next")
                for p in (ROOT / "patches" / s).glob("0*.patch")),
            "emulated": True}
    (out / "meta.json").write_text(json.dumps(meta, indent=1))

    for sw in [s for s in args.swiotlb.split(",") if s]:
        if sw not in ("off", "force"):
            sys.exit(f"error: --swiotlb takes off,force, not {sw!r}")
        rpc = out / f"rpc-{sw}"
        rpc.mkdir(exist_ok=True)
        sock = f"/tmp/lan743x-bench-{os.getpid()}-{sw}.sock"
        server = CounterServer(rpc, sock)
        server.start()
        guest = ["python3", str(LAB / "guest" / "bench_guest.py")]
        for m, ko in mods.items():
            guest += ["--module", f"{m}={ko}"]
        guest += ["--reps", str(args.reps), "--secs",
                 str(args.secs), "--out", str(out), "--rpc", str(rpc),
                 "--tag", f"swiotlb={sw}"]
        if args.cells:
            guest += ["--cells", args.cells]
        env = dict(os.environ, KERNEL=str(obj / "arch/x86/boot/bzImage"),
                   MODDIR=str(obj / "mods"), QEMU=qemu, QMP_SOCK=sock,
                   VM_RWDIR=str(out),
                   # the default 30 min of lab/vm/vm.sh is too short for
                   # many modules x cells x reps under TCG
                   VM_TIMEOUT=os.environ.get("VM_TIMEOUT", "14400"),
                   VM_APPEND="swiotlb=force" if sw == "force" else "",
                   # ynl of the base (page_pool pages over netlink)
                   LAN743X_YNL=ynl)
        # a crash of the emulated machine (vm.sh's 86: a guest kernel panic,
        # e.g. the int3 of text patching under multi-threaded TCG) re-boots
        # the VM; the guest keeps the records already written and resumes
        # at the repetition it lost
        for boot in range(1, MAX_BOOTS + 1):
            progress(f"booting the VM (swiotlb={sw}); {args.reps} reps"
                     + (f"; boot {boot} after a guest crash" if boot > 1
                        else ""))
            rc = subprocess.run(["bash", str(LAB / "vm" / "vm.sh"), "--"] + guest,
                                env=env).returncode
            if rc != 86:
                break
            progress(f"the guest crashed (swiotlb={sw}): its console lines "
                     "are above; resuming")
        server.stop = True
        if rc:
            sys.exit(f"error: the guest bench failed (swiotlb={sw}, rc {rc}"
                     + (", the guest crashed on every boot" if rc == 86
                        else "") + ")")
        if server.errors:
            progress(f"warning: {server.errors} counter snapshots failed")

    progress("report")
    rc = subprocess.run([sys.executable, str(LAB / "bench" / "report.py"),
                         str(out)]).returncode
    sys.exit(rc)


if __name__ == "__main__":
    main()
