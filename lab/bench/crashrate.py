#!/usr/bin/env python3
"""Crash rate of the emulated machine per QEMU/kernel option set.

Boots the bench kernel N times per mode with lab/vm/vm.sh; each boot runs
lab/guest/tracetoggle.sh (enable and disable the napi, dma and kmem
tracepoints 5 times: live INT3 text patching of the tracepoints' static
calls), and counts the boots whose guest kernel panicked (vm.sh exit 86)
against those that passed (0). Boots of the modes are interleaved (boot 1 of
every mode, then boot 2, ...) so that the load of the shared host weighs on
every mode alike. Results are appended to OUT/boots.jsonl (one line per boot:
a re-run with the same OUT resumes where it stopped) and the table is
written to OUT/table.md and printed.

    python3 lab/bench/crashrate.py --boots 50 --modes mttcg,single \\
        --out measurements/crashrate-$(date +%Y%m%d)

Modes (--modes, comma-separated):
    mttcg    multi-threaded TCG, one host thread per vCPU (VM_TCG_THREAD=multi)
    single   single-threaded TCG: every vCPU in one host thread
             (VM_TCG_THREAD=single: -accel tcg,thread=single)
    NAME:VAR=VAL[;VAR=VAL...]   any other environment for vm.sh, e.g.
             'mttcg-1cpu:VM_TCG_THREAD=multi;VM_CPUS=1'
Each mode also gets VM_EXTRA_QEMU_OPTS from --extra-qemu-opts (default
none).
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
ROOT = LAB.parent

MODES = {
    "mttcg": {"VM_TCG_THREAD": "multi"},
    "single": {"VM_TCG_THREAD": "single"},
}


def parse_mode(spec):
    """(name, environment) of a mode: one of MODES or NAME:VAR=VAL;..."""
    if ":" not in spec:
        if spec not in MODES:
            sys.exit(f"crashrate: unknown mode {spec!r} (mttcg, single, NAME:VAR=VAL;...)")
        return spec, dict(MODES[spec])
    name, rest = spec.split(":", 1)
    env = {}
    for kv in filter(None, rest.split(";")):
        k, _, v = kv.partition("=")
        env[k] = v
    return name, env


def lab_path(cmd):
    """The last line the lab command CMD prints (a path); exits if none."""
    p = subprocess.run(cmd, cwd=ROOT, text=True, stdout=subprocess.PIPE,
                       check=False)
    if p.returncode != 0 or not p.stdout.strip():
        sys.exit(f"crashrate: {' '.join(cmd)} failed")
    return p.stdout.strip().splitlines()[-1]


def wilson(k, n, z=1.96):
    """95% Wilson score interval of a rate k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def oops_summary(stderr):
    """The first oops line and the RIP of a crash, from vm.sh's report."""
    lines = [l[len("vm.sh: | "):] for l in stderr.splitlines()
             if l.startswith("vm.sh: | ")]

    def strip(line):
        return re.sub(r"^\[ *[0-9.]+\] ", "", line).strip()

    first = next((strip(l) for l in lines
                  if re.search(r"Oops|BUG: |general protection|Kernel panic", l)), "")
    rip = next((strip(l) for l in lines if re.search(r"\bRIP: ", l)), "")
    return first, rip


def one_boot(mode, env_extra, i, args, out):
    """Boot I of MODE (its environment ENV_EXTRA): its record."""
    cons = out / "console" / f"{mode}-{i:03d}.log"
    cons.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, KERNEL=args.kernel_image, QEMU=args.qemu,
               VM_CONSOLE_LOG=str(cons), VM_TIMEOUT=str(args.timeout),
               LAN743X_TOGGLE_CYCLES=str(args.cycles))
    if args.moddir:
        env["MODDIR"] = args.moddir
    if args.extra_qemu_opts:
        env["VM_EXTRA_QEMU_OPTS"] = args.extra_qemu_opts
    env.update(env_extra)
    t0 = time.monotonic()
    p = subprocess.run(["bash", str(LAB / "vm" / "vm.sh"), "--",
                        "bash", "lab/guest/tracetoggle.sh"],
                       cwd=ROOT, env=env, text=True, capture_output=True,
                       check=False)
    wall = time.monotonic() - t0
    rc = p.returncode
    outcome = {0: "ok", 86: "crash", 124: "timeout"}.get(rc, "fail")
    first, rip = oops_summary(p.stderr) if rc == 86 else ("", "")
    toggle = next((l for l in p.stdout.splitlines()
                   if l.startswith("tracetoggle:")), "")
    rec = {"mode": mode, "boot": i, "rc": rc, "outcome": outcome,
           "wall_s": round(wall, 1), "oops": first, "rip": rip,
           "guest": toggle, "env": env_extra,
           "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if outcome == "ok":
        cons.unlink(missing_ok=True)
    elif outcome != "crash":
        rec["stderr_tail"] = p.stderr[-1500:]
    return rec


def table(recs, modes):
    """The markdown table of the records RECS of MODES, and the crashes."""
    rows = [("| mode | environment | boots | crashes | crash rate [95% CI] | "
             "other failures | median wall s/boot [min, max] |"),
            "|---|---|---|---|---|---|---|"]
    for name, env in modes:
        rs = [r for r in recs if r["mode"] == name]
        n = len(rs)
        k = sum(r["outcome"] == "crash" for r in rs)
        other = sum(r["outcome"] not in ("ok", "crash") for r in rs)
        walls = [r["wall_s"] for r in rs if r["outcome"] == "ok"]
        lo, hi = wilson(k, n)
        rate = f"{100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]" if n else "-"
        wall = (f"{statistics.median(walls):.1f} [{min(walls):.1f}, {max(walls):.1f}]"
                if walls else "-")
        envs = " ".join(f"{k_}={v}" for k_, v in env.items())
        rows.append(f"| {name} | `{envs}` | {n} | {k} | {rate} | {other} | {wall} |")
    crashes = [r for r in recs if r["outcome"] == "crash"]
    if crashes:
        rows += ["", "Crashes (first oops line, RIP):", ""]
        rows += [f"- {r['mode']} boot {r['boot']}: {r['oops']} / {r['rip']}"
                 for r in crashes]
    return "\n".join(rows) + "\n"


def main():
    """Boot each mode BOOTS times (or print the table of earlier boots)."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boots", type=int, default=50, help="boots per mode")
    ap.add_argument("--modes", default="mttcg,single")
    ap.add_argument("--cycles", type=int, default=5,
                    help="enable/disable cycles of the tracepoints per boot")
    ap.add_argument("--out", default=None,
                    help="results dir (default measurements/crashrate-<date>)")
    ap.add_argument("--kernel", default=None,
                    help="kernel build dir (default: kbuild.sh kernel bench)")
    ap.add_argument("--qemu", default=os.environ.get("QEMU"))
    ap.add_argument("--timeout", type=int, default=600,
                    help="VM_TIMEOUT per boot, seconds")
    ap.add_argument("--extra-qemu-opts", default="")
    ap.add_argument("--until", default=None,
                    help="stop starting boots after this UTC time HH:MM")
    ap.add_argument("--table-only", action="store_true",
                    help="print the table of OUT/boots.jsonl, boot nothing")
    args = ap.parse_args()

    modes = [parse_mode(m) for m in args.modes.split(",") if m]
    out = Path(args.out or ROOT / "measurements" /
               f"crashrate-{time.strftime('%Y%m%d', time.gmtime())}")
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "boots.jsonl"
    recs = [json.loads(l) for l in raw.read_text().splitlines()] if raw.exists() else []

    if not args.table_only:
        kdir = args.kernel or lab_path(
            ["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel", "bench"])
        args.kernel_image = str(Path(kdir) / "arch/x86/boot/bzImage")
        args.moddir = str(Path(kdir) / "mods") if (Path(kdir) / "mods").is_dir() else ""
        args.qemu = args.qemu or lab_path(["bash", str(ROOT / "emulator/build.sh")])
        print(f"crashrate: kernel {args.kernel_image}\ncrashrate: qemu {args.qemu}\n"
              f"crashrate: results {out}", file=sys.stderr)
        for i in range(1, args.boots + 1):
            for name, env in modes:
                if any(r["mode"] == name and r["boot"] == i for r in recs):
                    continue
                if args.until and time.strftime("%H:%M", time.gmtime()) >= args.until:
                    print(f"crashrate: --until {args.until} reached", file=sys.stderr)
                    break
                rec = one_boot(name, env, i, args, out)
                recs.append(rec)
                with raw.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
                print(f"crashrate: {name} boot {i}: {rec['outcome']} rc={rec['rc']} "
                      f"{rec['wall_s']}s {rec['oops']} {rec['rip']}", file=sys.stderr,
                      flush=True)
            else:
                continue
            break
    t = table(recs, modes)
    (out / "table.md").write_text(t)
    print(t)


if __name__ == "__main__":
    main()
