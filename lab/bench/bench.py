#!/usr/bin/env python3
"""The A/B bench (``make bench``): upstream lan743x vs the series' module.

Builds what is missing (the kernel, both modules, QEMU with the LAN7430
model), boots the guest (lab/vm/vm.sh) and in each boot loads the modules
alternately (ABAB...) for every cell, ``--reps`` times
(lab/guest/bench_guest.py, one progress line per cell). While the guest
runs, this process answers the guest's requests for emulator counter
snapshots over QMP. Results go to ``results/<timestamp>/``: raw records
(JSONL), summary JSON, a markdown table (median, min, max, B/A ratio;
printed at the end) and PNG plots (lab/bench/report.py).

--arch (``make bench ARCH=...``) selects the guest:

x86_64 (default): the bench kernel (no DMA_API_DEBUG), one boot per
  swiotlb setting; the guest shares the host's files (records and counter
  requests in the results directory).
armv7: the ARMv7 guest (QEMU virt, Cortex-A15, 32-bit, the PCIe host
  non-coherent: every streaming DMA map/unmap/sync is cache maintenance,
  as on i.MX6), the armv7-virt kernel, count-based figures per packet.
  The guest shares no directory with the host: --rpc console (the counter
  requests are console lines this process answers over QMP),
  --echo-records (every record is printed on the console, read here into
  RESULTS/records.jsonl), --ftrace (the function tracer counts
  arch_sync_dma_for_device/_for_cpu, arm's cache maintenance entry points:
  kprobes oops on a Thumb-2 kernel).

What is measured by default (``make bench``) is a first run's subset: upstream
vs series, TCP RX at MTU 1500 and 9000, 5 repetitions (x86_64: swiotlb
off, no perf profiles). --full (``make bench FULL=1``) is the whole
matrix: every cell, both swiotlb settings and the guest's perf profiles
(x86_64); TCP RX and TX at 1500 and RX at 9000 (armv7).
--cells, --swiotlb, --secs and --reps override either.

--model KEY=VALUE (repeatable) runs the emulated device with a property
other than its default: it starts with it (vm.sh DUT_OPTS) and it is set
again over QMP before each cell; the records hold the values read back.
A cell whose model counted descriptor errors (desc_errors) or write-backs
into a freed ring (wb_freed_ring_writes), or lacks those counters, is
failed: the table lists it and the bench exits non-zero
(lab/bench/report.py); so do such errors between cells (ZeroCheck).

A crash of the emulated machine (vm.sh exit 86: a guest kernel panic) is a
lab event: the guest is booted once more with the records received so far
and bench_guest.py resumes at the repetition it lost; MAX_BOOTS crashes in
a row end the bench. Throughput and CPU time under TCG are not evidence:
the table prints Mbit/s for context only.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
ROOT = LAB.parent
T0 = time.time()
# after the lab's own directories: lab/guest/outage.py is not lab/bench/outage.py
sys.path.append(str(LAB / "guest"))
from bench_guest import ConsoleRpc, EchoFile
from report import cell_faults

sys.path.append(str(LAB / "series"))
from patchids import patch_ids

sys.path.append(str(LAB / "vm"))
from crash import first_problem, retryable


def series_patch_ids():
    """The patch-ids of the stacks the series' module is built from."""
    return patch_ids(os.environ.get("STACK") if os.environ.get("STACK") ==
                     "net-next-3" else "net-next-2")

ARCHES = ("x86_64", "armv7")
#: the first run's cells (both arches) and the whole matrix per arch
SUBSET_CELLS = "tcp-rx-1500,tcp-rx-9000"
FULL = {"x86_64": {"cells": "", "swiotlb": "off,force"},
        "armv7": {"cells": "tcp-rx-1500,tcp-tx-1500,tcp-rx-9000",
                  "swiotlb": ""}}
#: seconds of traffic per cell
SECS = {"x86_64": 5, "armv7": 3}
#: the kernel variant (kbuild.sh) and QEMU target (emulator/build.sh)
VARIANT = {"x86_64": "bench", "armv7": "armv7-virt"}
QEMU_ARCH = {"x86_64": "x86_64", "armv7": "arm"}
# armv7: the records' tag, the functions the tracer counts, where the
# guest writes
ARM_TAG = "armv7-noncoherent"
FTRACE = "arch_sync_dma_for_device,arch_sync_dma_for_cpu"
GUEST_OUT = "/tmp/arm-bench"


def progress(msg):
    """MSG on stderr, after the seconds since the start."""
    print(f"[{int(time.time() - T0):4d}s] {msg}", file=sys.stderr, flush=True)


def out_of(cmd, **kw):
    """The last line CMD prints (a path); exits if it fails."""
    p = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, check=False,
                       **kw)
    if p.returncode:
        sys.exit(f"error: {' '.join(map(str, cmd))} failed (rc {p.returncode})")
    return p.stdout.strip().splitlines()[-1]


def parse_model(items):
    """{property: int} of the --model KEY=VALUE items (in their order; a
    later KEY wins); ValueError names a malformed one."""
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or not re.fullmatch(r"[a-z][a-z0-9-]*", k):
            raise ValueError(f"--model {it!r}: KEY=VALUE, KEY a property "
                             "of the lan7430 device (lab/vm/qmp.py KNOBS)")
        try:
            out[k] = int(v, 0)
        except ValueError:
            raise ValueError(f"--model {it!r}: VALUE must be an integer") \
                from None
        if out[k] < 0:
            raise ValueError(f"--model {it!r}: VALUE must be >= 0")
    return out


def dut_opts(model):
    """lab/vm/vm.sh's DUT_OPTS for the model settings: the device starts
    with them (the driver's probe sees them), not only from the first
    cell on."""
    return "".join(f",{k}={v}" for k, v in model.items())


def _qom(m, command, **args):
    """The value of one QMP command on the DUT (RuntimeError on error)."""
    r = m.cmd(command, path="/machine/peripheral/dut", **args)
    # qemu.qmp's legacy cmd() returns the response or, in newer
    # releases, just its "return" value
    if isinstance(r, dict) and "error" in r:
        raise RuntimeError(f"{command} {args}: {r['error']}")
    return r.get("return") if isinstance(r, dict) else r


def emulator_counters(sock, reset=False, model=None):
    """The emulator's counters (dict) over the QMP socket SOCK; with reset
    (a cell starts), first set the MODEL properties ({name: value}, --model)
    and zero the counters after reading; with MODEL, the properties as the
    device reads them back are in the dict's "model_settings"."""
    # imported when asked for: the tests and lab/bench/outage.py import
    # this module without talking QMP
    from qemu.qmp.legacy import QEMUMonitorProtocol  # pylint: disable=import-outside-toplevel
    m = QEMUMonitorProtocol(sock)
    m.connect()
    try:
        if reset:
            for k, v in (model or {}).items():
                _qom(m, "qom-set", property=k, value=v)
        val = _qom(m, "qom-get", property="counters")
        data = json.loads(val) if isinstance(val, str) else val
        if model:
            data["model_settings"] = {
                k: _qom(m, "qom-get", property=k) for k in model}
        if reset:
            _qom(m, "qom-set", property="reset-counters", value=True)
        return data
    finally:
        m.close()


class ZeroCheck:
    """The model's must-be-zero counters (report.cell_faults) in the
    snapshots taken when a cell starts: they cover what happened between
    two cells (module loads, MTU changes, link downs), which no record
    holds; the records' own snapshots are checked by report.py."""

    def __init__(self):
        self.faults = []

    def check(self, data, what):
        """Note the faults of the counter snapshot DATA (taken at WHAT)."""
        for f in cell_faults({"emulator": data}):
            self.faults.append(f"{what}: {f}")
            progress(f"error: model counters {what}: {f}")


class CounterServer(threading.Thread):
    """Answer req-N.json files in rpc_dir with the emulator's counters."""

    def __init__(self, rpc_dir, sock, model=None, zero=None):
        super().__init__(daemon=True)
        self.rpc_dir, self.sock = Path(rpc_dir), sock
        self.model, self.zero = model or {}, zero or ZeroCheck()
        self.stop = False
        self.errors = 0

    def qmp(self, reset, n="?"):
        """The emulator's counters (zeroed after reading with RESET, the
        model settings applied before: a cell starts); N: the request."""
        data = emulator_counters(self.sock, reset, self.model)
        if reset:
            self.zero.check(data, f"before the cell of {self.rpc_dir.name} "
                            f"request {n}")
        return data

    def run(self):
        """Answer each new request until stop is set."""
        seen = set()
        while not self.stop:
            for req in sorted(self.rpc_dir.glob("req-*.json")):
                if req.name in seen:
                    continue
                seen.add(req.name)
                n = req.stem.split("-", 1)[1]
                try:
                    ask = json.loads(req.read_text())
                    data = self.qmp(bool(ask.get("reset")), n)
                except Exception as e:  # noqa: BLE001  # pylint: disable=broad-exception-caught
                    # any failure is reported to the guest, never kills the bench
                    self.errors += 1
                    data = {"error": f"{type(e).__name__}: {e}"}
                tmp = self.rpc_dir / f".resp-{n}.tmp"
                tmp.write_text(json.dumps(data))
                tmp.rename(self.rpc_dir / f"resp-{n}.json")
            time.sleep(0.05)


def module_revs(names):
    """{name: source revision} of the module names (upstream, series, pK,
    v3 = the v3 stacks up to net-next-2 (lab.conf V3_REV), at-COMMIT =
    the stack's chain as patches/ held it at that commit,
    each optionally with +cbN: the same module with the rx-copybreak
    tunable set to N after loading, +ringN: with N RX descriptors per
    ring, ethtool -G, +rxusN: with rx-usecs N and +dim: with adaptive-rx,
    ethtool -C, the stack's series only: net-next-3 has them); exits with
    a clear error on a bad list, before anything is built."""
    revs = {}
    for name in names:
        m = re.sub(r"(\+((cb|ring|rxus)[0-9]+|dim))+$", "", name)
        if "+cb" in name[len(m):] and m == "upstream":
            sys.exit("error: --modules: upstream has no rx-copybreak tunable")
        if re.search(r"\+(rxus|dim)", name[len(m):]) and \
                os.environ.get("STACK") != "net-next-3":
            sys.exit(f"error: --modules: {name}: ethtool -C is net-next-3's "
                     "(STACK=net-next-3)")
        if m == "upstream":
            revs[name] = "base"
        elif m == "series":
            revs[name] = "series"
        elif m == "v3":
            revs[name] = "v3"
        elif re.fullmatch(r"p[1-9][0-9]*", m):
            revs[name] = "series:" + m[1:]
        elif re.fullmatch(r"at-[0-9a-f]{7,40}", m):
            revs[name] = "rev:" + m[3:]
        else:
            sys.exit(f"error: --modules: unknown module {name!r} (upstream, "
                     "series, v3, pK = base + the first K patches, or "
                     "at-COMMIT = the series as patches/ held it at a "
                     "commit of this repository, optionally +cbN, +ringN, "
                     "+rxusN, +dim)")
    if len(names) < 2 or names[0] != "upstream" or len(set(names)) != \
            len(names):
        sys.exit("error: --modules: upstream first, then at least one other, "
                 "each once")
    return revs


def build_modules(names, variant):
    """lan743x.ko per module name (module_revs()), built for the kernel
    VARIANT; exits with a clear error on a bad list."""
    revs = module_revs(names)
    progress(f"modules: {', '.join(names)}")
    return {m: out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "module", variant, r])
            for m, r in revs.items()}


# boots (per swiotlb setting) before a crashing guest fails the bench
MAX_BOOTS = 3


def bench_args(doc, argv=None):
    """The bench's options (--arch, --full, --reps, --secs, --cells,
    --swiotlb, --modules, --variant, --model, --out; BENCH_* in the
    environment),
    parsed, with the defaults of the arch and of --full filled in."""
    ap = argparse.ArgumentParser(
        description=doc.split("\n")[0],
        epilog="default: " + SUBSET_CELLS + ", 5 repetitions; --full: "
        "the whole matrix")
    ap.add_argument("--arch", default="x86_64", choices=ARCHES,
                    help="the guest (make bench ARCH=...)")
    ap.add_argument("--full", action="store_true",
                    default=os.environ.get("BENCH_FULL", "") not in ("", "0"),
                    help="the whole matrix (make bench FULL=1)")
    ap.add_argument("--reps", type=int,
                    default=int(os.environ.get("BENCH_REPS", "5")))
    ap.add_argument("--secs", type=int, default=os.environ.get("BENCH_SECS"))
    ap.add_argument("--cells", default=os.environ.get("BENCH_CELLS"),
                    help="comma list of lab/guest/bench_guest.py CELLS "
                    "('' = all)")
    ap.add_argument("--swiotlb", default=os.environ.get("BENCH_SWIOTLB"),
                    help="x86_64: comma list of off,force")
    ap.add_argument("--modules", default=os.environ.get(
        "BENCH_MODULES", "upstream,series"),
        help="modules loaded in turn: upstream, series, pK (base + the "
        "first K patches), e.g. upstream,p2,series; NAME+cbN loads NAME "
        "with rx-copybreak N, e.g. upstream,series+cb0,series+cb256; "
        "NAME+ringN with N RX descriptors per ring (ethtool -G), e.g. "
        "upstream,series+ring384; NAME+rxusN with rx-usecs N, NAME+dim "
        "with adaptive-rx (ethtool -C; STACK=net-next-3)")
    ap.add_argument("--variant", default=None,
                    help="kernel variant (default: bench on x86_64, no "
                    "DMA_API_DEBUG; armv7-virt on armv7)")
    ap.add_argument("--model", action="append", default=[],
                    metavar="KEY=VALUE",
                    help="a property of the emulated device for the run "
                    "(repeatable), e.g. --model rx-fifo-kib=12 --model "
                    "peer-pause=1: the device starts with it and it is set "
                    "again over QMP before each cell; the records and the "
                    "table's heading carry the value read back")
    ap.add_argument("--mtu-at-up", action="store_true",
                    default=os.environ.get("BENCH_MTU_AT_UP") == "1",
                    help="change a cell's MTU with the DUT down, so that "
                    "every ring is allocated at it (default: a live change)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    try:
        args.model = parse_model(args.model)
    except ValueError as e:
        ap.error(str(e))
    full = FULL[args.arch]
    if args.cells is None:
        args.cells = full["cells"] if args.full else SUBSET_CELLS
    if args.swiotlb is None:
        args.swiotlb = full["swiotlb"] if args.full or \
            args.arch != "x86_64" else "off"
    if args.arch == "armv7" and args.swiotlb:
        ap.error("--swiotlb is for x86_64 (armv7: the PCIe host is "
                 "non-coherent, no swiotlb)")
    for sw in [s for s in args.swiotlb.split(",") if s]:
        if sw not in ("off", "force"):
            ap.error(f"--swiotlb takes off,force, not {sw!r}")
    if args.arch == "armv7" and not args.cells:
        args.cells = FULL["armv7"]["cells"]
    if args.secs is None:
        args.secs = SECS[args.arch]
    args.secs = int(args.secs)
    args.variant = args.variant or VARIANT[args.arch]
    if args.reps < 5:
        progress(f"note: {args.reps} repetitions; the project's figures "
                 "need at least 5")
    return args


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
    """One guest boot: reads vm.sh's output (armv7), answers counter requests,
    appends the records to RESULTS/records.jsonl."""

    def __init__(self, out, sock, log, model=None, zero=None):
        self.out, self.sock, self.log = out, sock, log
        self.model, self.zero = model or {}, zero or ZeroCheck()
        self.snaps, self.records, self.bad, self.late = {}, 0, 0, []
        self.margin = float(os.environ.get("LAN743X_RPC_MARGIN", "2"))

    def line(self, line):
        """Handle one console line: log it, answer an RPC, keep a record."""
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
                self.snaps[n] = emulator_counters(self.sock, reset,
                                                  self.model)
                if reset:
                    self.zero.check(self.snaps[n],
                                    f"before the cell of request {n}")
            except Exception as e:  # noqa: BLE001  # pylint: disable=broad-exception-caught
                # any failure goes into the record, never kills the bench
                self.snaps[n] = {"error": f"{type(e).__name__}: {e}"}
            dt = time.time() - t0
            if dt > self.margin / 2:
                # the guest waits `margin` s without an acknowledgement
                self.late.append((n, round(dt, 2)))
                progress(f"warning: counter request {n} took {dt:.2f} s "
                         f"(the guest waits {self.margin} s)")
        elif p[0] == "rec":
            rec = merge_console_rpc(p[1], self.snaps)
            with open(self.out / "records.jsonl", "a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")
            self.records += 1
        else:
            self.bad += 1
            progress(f"warning: a record line is not JSON: {p[1][:100]}")



def x86_64_guest(args, mods, out, rpc, sw):
    """The guest command of one x86_64 boot (swiotlb setting sw)."""
    guest = ["python3", str(LAB / "guest" / "bench_guest.py")]
    for m, ko in mods.items():
        guest += ["--module", f"{m}={ko}"]
    guest += ["--reps", str(args.reps), "--secs", str(args.secs),
              "--out", str(out), "--rpc", str(rpc), "--tag", f"swiotlb={sw}"]
    if not args.full:
        # the perf profiles (perf-*.txt) are the whole matrix's
        guest += ["--no-profiles"]
    if args.cells:
        guest += ["--cells", args.cells]
    return guest


def run_x86_64(args, out, obj, mods, qemu, zero):
    """One boot per swiotlb setting; the guest shares the results
    directory (records, counter requests: CounterServer); ZERO collects
    the model's descriptor errors between cells."""
    ynl = str(Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"),
                           "srcrepo"]), "tools/net/ynl"))
    for sw in [s for s in args.swiotlb.split(",") if s]:
        rpc = out / f"rpc-{sw}"
        rpc.mkdir(exist_ok=True)
        sock = f"/tmp/lan743x-bench-{os.getpid()}-{sw}.sock"
        server = CounterServer(rpc, sock, args.model, zero)
        server.start()
        guest = x86_64_guest(args, mods, out, rpc, sw)
        env = dict(os.environ, ARCH="x86_64",
                   LAN743X_BENCH_MTU_AT_UP="1" if args.mtu_at_up else "0",
                   KERNEL=str(obj / "arch/x86/boot/bzImage"),
                   MODDIR=str(obj / "mods"), QEMU=qemu, QMP_SOCK=sock,
                   VM_RWDIR=str(out),
                   # the default 30 min of lab/vm/vm.sh is too short for
                   # many modules x cells x reps under TCG
                   VM_TIMEOUT=os.environ.get("VM_TIMEOUT", "14400"),
                   VM_APPEND="swiotlb=force" if sw == "force" else "",
                   DUT_OPTS=dut_opts(args.model),
                   # ynl of the base (page_pool pages over netlink)
                   LAN743X_YNL=ynl)
        # a crash of the emulated machine that is the int3 of text
        # patching under multi-threaded TCG (lab/vm/crash.py) re-boots the
        # VM; the guest keeps the records already written and resumes at
        # the repetition it lost. Any other crash is a result: it ends the
        # bench.
        for boot in range(1, MAX_BOOTS + 1):
            progress(f"booting the VM (swiotlb={sw}); {args.reps} reps"
                     + (f"; boot {boot} after a guest crash" if boot > 1
                        else ""))
            p = subprocess.run(["bash", str(LAB / "vm" / "vm.sh"), "--"]
                               + guest, env=env, check=False,
                               stderr=subprocess.PIPE, text=True,
                               errors="replace")
            sys.stderr.write(p.stderr)
            rc = p.returncode
            if rc != 86:
                break
            if not retryable(p.stderr):
                sys.exit(f"error: the guest kernel crashed (swiotlb={sw}): "
                         f"{first_problem(p.stderr)}; a result, not "
                         "retried (console lines above)")
            progress(f"the guest crashed (swiotlb={sw}) on the int3 of "
                     "text patching under TCG (console lines above): "
                     "resuming")
        server.stop = True
        if rc:
            sys.exit(f"error: the guest bench failed (swiotlb={sw}, rc {rc}"
                     + (", the guest crashed on every boot" if rc == 86
                        else "") + ")")
        if server.errors:
            progress(f"warning: {server.errors} counter snapshots failed")


def run_armv7(args, out, obj, mods, qemu, rootfs, meta, zero):
    """Boots of the ARMv7 guest until the bench ends without a crash (at
    most MAX_BOOTS): the modules go into its initramfs, records and
    counter requests come over the console (Boot); ZERO collects the
    model's descriptor errors between cells; returns vm.sh's exit
    status."""
    sock = f"/tmp/lan743x-arm-bench-{os.getpid()}.sock"
    guest = ["python3", "lab/guest/bench_guest.py"]
    for m in mods:
        guest += ["--module", f"{m}=/ko/{m}/lan743x.ko"]
    guest += ["--reps", str(args.reps), "--secs", str(args.secs),
              "--cells", args.cells, "--out", GUEST_OUT, "--rpc", "console",
              "--echo-records", "--ftrace", FTRACE, "--tag", ARM_TAG]
    env = dict(os.environ, ARCH="armv7", KERNEL=str(obj), QEMU=qemu,
               LAN743X_BENCH_MTU_AT_UP="1" if args.mtu_at_up else "0",
               ROOTFS=rootfs, QMP_SOCK=sock, DUT_OPTS=dut_opts(args.model),
               VM_TIMEOUT=os.environ.get("VM_TIMEOUT", "10800"))
    rc = None
    for boot in range(1, MAX_BOOTS + 1):
        cmd = ["bash", str(LAB / "vm" / "vm.sh")]
        for m, ko in mods.items():
            cmd += ["--ko", f"{m}={ko}"]
        tmp = None
        if (out / "records.jsonl").exists():
            # resume: the guest keeps what was recorded and skips it
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl",
                                             delete=False,
                                             encoding="utf-8") as tmp:
                tmp.write((out / "records.jsonl").read_text(encoding="utf-8"))
            cmd += ["--file", f"{tmp.name}={GUEST_OUT}/records.jsonl"]
        env["VM_CONSOLE_LOG"] = str(out / f"console-{boot}.log")
        if boot > 1:
            # lab test of the resume (bench_guest.py): the injected crash
            # happens once per run; its marker file does not survive a boot
            env.pop("LAN743X_BENCH_CRASH_AT", None)
        progress(f"booting the ARMv7 guest (boot {boot}): "
                 f"{', '.join(mods)}, {args.reps} reps, {args.cells}")
        t0 = time.time()
        with open(out / f"guest-{boot}.log", "w", encoding="utf-8") as log:
            b = Boot(out, sock, log, args.model, zero)
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
        console = out / f"console-{boot}.log"
        text = console.read_text(errors="replace") if console.exists() \
            else ""
        if not retryable(text):
            (out / "meta.json").write_text(json.dumps(meta, indent=1))
            sys.exit(f"error: the guest kernel crashed: {first_problem(text)}"
                     f"; a result, not retried (console in {console})")
        progress("the guest crashed on the int3 of text patching under "
                 f"TCG (console in {console})"
                 + (": resuming at the lost repetition" if boot <
                    MAX_BOOTS else ": crashed on every boot, giving up"))
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    if not (out / "records.jsonl").exists():
        sys.exit(f"error: no records (vm.sh exit {rc}); see {out}")
    return rc


def main():
    """Build, boot and measure the modules on ARCH; write the report."""
    args = bench_args(__doc__)
    arch = args.arch
    # the kernel's make reads ARCH from the environment: the lab's builds
    # get it on their command lines, vm.sh gets it from us
    os.environ.pop("ARCH", None)
    if arch == "armv7":
        # the ARM kernel and modules: the series on 7.3 (net-next-2, or
        # net-next-3 when asked for: its moderation)
        os.environ.update(LAB_BASE="7.3", STACK=(
            "net-next-3" if os.environ.get("STACK") == "net-next-3"
            else "net-next-2"))
    out = Path(args.out or ROOT / "results" / (
        ("" if arch == "x86_64" else f"bench-{arch}-")
        + time.strftime("%Y%m%d-%H%M%S")))
    out.mkdir(parents=True, exist_ok=True)
    progress(f"{arch} bench: {args.modules}, cells "
             f"{args.cells or 'all'}, {args.reps} reps x {args.secs} s"
             + (f", swiotlb {args.swiotlb}" if args.swiotlb else "")
             + "".join(f", {k}={v}" for k, v in args.model.items())
             + f"; results in {out}")

    names = [m for m in args.modules.split(",") if m]
    module_revs(names)          # a bad list fails before the kernel's build
    progress(f"kernel ({args.variant})")
    obj = Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                       args.variant]))
    mods = build_modules(names, args.variant)
    progress("qemu with the lan7430 model")
    qemu = out_of(["bash", str(ROOT / "emulator" / "build.sh"), "--arch",
                   QEMU_ARCH[arch]])
    meta = {"arch": arch, "reps": args.reps, "secs": args.secs,
            "cells": args.cells, "kernel": str(obj), "modules": mods,
            "qemu": qemu,
            # the patches the series' module is built from (net-next
            # and its parent net; the cover letters too)
            "series_patches": sorted(
                str(p.relative_to(ROOT / "patches"))
                for s in ("net", "net-next-1", "net-next-2")
                + (("net-next-3",) if os.environ.get("STACK") ==
                   "net-next-3" else ())
                for p in (ROOT / "patches" / s).glob("0*.patch")),
            # their code identity (git patch-id): tables.py labels a
            # quoted run whose patches are no longer the series'
            "series_patch_ids": series_patch_ids(),
            "emulated": True,
            # the MTU of a cell set with the DUT down (--mtu-at-up)
            "mtu_at_up": args.mtu_at_up,
            # the device's properties asked for (--model; the records
            # hold them as read back)
            "model": args.model}
    rc = 0
    zero = ZeroCheck()
    if arch == "x86_64":
        (out / "meta.json").write_text(json.dumps(meta, indent=1))
        run_x86_64(args, out, obj, mods, qemu, zero)
    else:
        rootfs = out_of(["bash", str(LAB / "vm" / "rootfs-arm.sh")])
        meta.update(rootfs=rootfs, tag=ARM_TAG, ftrace=FTRACE, boots=[])
        rc = run_armv7(args, out, obj, mods, qemu, rootfs, meta, zero)
    meta = json.loads((out / "meta.json").read_text())
    meta["between_cells_faults"] = zero.faults
    (out / "meta.json").write_text(json.dumps(meta, indent=1))

    progress("report")
    rrc = subprocess.run([sys.executable, str(LAB / "bench" / "report.py"),
                          str(out)], check=False).returncode
    if rc:
        sys.exit(f"error: the guest bench failed (vm.sh exit {rc}"
                 + (", the guest crashed on every boot" if rc == 86 else "")
                 + ")")
    if zero.faults:
        sys.exit(f"error: the model counted descriptor errors between "
                 f"cells ({len(zero.faults)}; meta.json "
                 "between_cells_faults)")
    sys.exit(rrc)


if __name__ == "__main__":
    main()
