#!/usr/bin/env python3
"""The lan743x kselftests in the ARMv7 guest, upstream vs series.

The same tests as lab/selftests/selftests.py runs in the x86_64 VM, the same way
(installed with make install, run by the install's run_kselftest.sh with a
net.config, REMOTE_TYPE=netns for both modules, then REMOTE_TYPE=ssh for
the series' module; then the kernel's own generic driver tests from
source), by the same guest script (lab/guest/selftests.sh), in the
i.MX6-like guest of lab/vm/vm-arm.sh: 32-bit, highmem, non-coherent PCI DMA,
the Linux 7.3 base with the armv7-virt kernel, the modules built for it.

The guest has no host file system: the tests go into its initramfs and its
results come back on the console (vm-arm.sh --dir, VM_ARM_OUT).

The install is the x86_64 one's Python (tests, net and hw libraries, ynl
and its specs): the C helpers and BPF objects that make install builds for
drivers/net/hw and net/lib are not cross-built (libbpf and ynl's C library
would need armhf libelf and zlib, which a Debian 12 host cannot install
beside its own without adding a dpkg architecture), so they are left out
of the ARM install, listed in results. The lan743x tests and our hw tests
use none of them.

Results are compared with lab/selftests/expected/net-next.txt, the x86_64
expectations, with the differences of the ARM guest (each with its reason)
in lab/selftests/expected/net-next-armv7.txt, which overrides lines of the
first. Exit status: 0 all as expected, 1 mismatch, 2 setup error.

usage: lab/selftests/arm_selftests.py [--modules "upstream series"] [--out DIR]
       env LAN743X_TESTS, LAN743X_REMOTE_MODES, LAN743X_SSH_MODULES,
       LAN743X_GENERIC as lab/selftests/selftests.py; VM_TIMEOUT (default 10800).
"""

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import selftests as st  # lab/selftests/selftests.py

LAB = st.LAB
ROOT = st.ROOT
ARM_EXPECTED = st.EXPECTED / "net-next-armv7.txt"
# what the generic tests, run from source, import (relative to the tree)
GUEST_TREE = ["tools/testing/selftests/drivers/net",
              "tools/testing/selftests/net/lib",
              "tools/testing/selftests/kselftest",
              "tools/net/ynl",
              "Documentation/netlink"]
EM_ARM = 40     # ELF e_machine of 32-bit ARM


def build(what, cmd, env=None):
    t = time.time()
    out = st.last_line(cmd, what, env=env)
    st.progress(f"{what}: {time.time() - t:.0f} s: {out}")
    return out


def host_binaries(tree):
    """Drop the ELF files that are not 32-bit ARM from tree (the x86_64
    C helpers of make install); return their relative paths."""
    gone = []
    for f in sorted(tree.rglob("*")):
        if not f.is_file() or f.is_symlink():
            continue
        with open(f, "rb") as fh:
            head = fh.read(20)
        if head[:4] != b"\x7fELF":
            continue
        # e_machine at offset 18, little-endian on both hosts
        if int.from_bytes(head[18:20], "little") != EM_ARM:
            gone.append(str(f.relative_to(tree)))
            f.unlink()
    return gone


def guest_tree(src, dest):
    """The part of the extracted tree the generic tests import."""
    for p in GUEST_TREE:
        if (src / p).is_dir():
            shutil.copytree(src / p, dest / p, symlinks=True)
    return host_binaries(dest)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modules", default="upstream series",
                    help="which modules (default: upstream series)")
    ap.add_argument("--out", help="results dir (default "
                    "results/arm-selftests-<time>)")
    args = ap.parse_args()
    os.environ["LAB_BASE"] = "7.3"
    os.environ["STACK"] = "net-next"
    names = args.modules.split()
    if not names or any(n not in ("upstream", "series") for n in names):
        st.die(f"--modules: upstream and/or series, not {args.modules!r}")

    expected = st.load_expected(st.EXPECTED / "net-next.txt")
    arm = st.load_expected(ARM_EXPECTED)
    for m, tests in arm.items():
        expected.setdefault(m, {}).update(tests)

    jobs = dict(os.environ, JOBS=os.environ.get("JOBS", "2"))
    qemu = build("qemu-system-arm",
                 ["bash", str(ROOT / "emulator/build.sh"), "--arch", "arm"])
    obj = build("armv7-virt kernel", ["bash", str(LAB / "kernel" / "kbuild.sh"),
                                      "kernel", "armv7-virt"], env=jobs)
    rootfs = build("armhf rootfs", ["bash", str(LAB / "vm" / "rootfs-arm.sh")])
    which = {"upstream": "base", "series": "series"}
    kos = {n: build(f"{n} lan743x.ko", ["bash", str(LAB / "kernel" / "kbuild.sh"),
                                         "module", "armv7-virt", which[n]],
                    env=jobs) for n in names}

    out = Path(args.out or ROOT / "results" /
               time.strftime("arm-selftests-%Y%m%d-%H%M%S")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    st.progress(f"results in {out}")
    ksft = st.prepare_tests(out / "tests")
    st.progress("make install of the selftests (the x86_64 build's "
                "Python; no C helper for ARM)")
    install = st.install_tests(ksft, out / "install")
    gone = host_binaries(install)
    gone += guest_tree(out / "tests", out / "guest")
    (out / "not-for-arm.txt").write_text("".join(f"{g}\n" for g in gone))
    st.progress(f"{len(gone)} x86_64 helpers left out of the ARM guest "
                "(not-for-arm.txt)")

    modes = os.environ.get("LAN743X_REMOTE_MODES", st.RUNNER["7.3"][1])
    ssh_mods = os.environ.get("LAN743X_SSH_MODULES", st.RUNNER["7.3"][2])
    env = dict(os.environ, QEMU=qemu, KERNEL=obj, ROOTFS=rootfs,
               VM_TIMEOUT=os.environ.get("VM_TIMEOUT", "10800"),
               LAN743X_REMOTE_MODES=modes, LAN743X_SSH_MODULES=ssh_mods,
               LAN743X_HW_TESTS=os.environ.get("LAN743X_HW_TESTS",
                                               st.HW_TESTS),
               LAN743X_GENERIC=os.environ.get("LAN743X_GENERIC",
                                              st.GENERIC["7.3"]))
    # the guest loads the modules from its own /lib/modules
    env.pop("LAN743X_MODDIR", None)
    if os.environ.get("LAN743X_TESTS"):
        env["LAN743X_TESTS"] = os.environ["LAN743X_TESTS"]
    cmd = ["bash", str(LAB / "vm" / "vm-arm.sh")]
    for n in names:
        cmd += ["--ko", f"{n}={kos[n]}"]
    cmd += ["--dir", f"{out / 'guest'}=/st/tree",
            "--dir", f"{install}=/st/install", "--",
            "lab/guest/selftests.sh", "--tests",
            "/st/tree/tools/testing/selftests", "--install", "/st/install",
            "--out", "/out"] + [f"{n}=/ko/{n}/lan743x.ko" for n in names]
    # the console of each boot in a file of its own (vm-arm.sh)
    env["VM_ARM_OUT"] = str(out)
    rc, boot = st.run_guest(cmd, env, out, names, "the ARMv7 guest",
                            lambda b: f"guest-{b}.log",
                            ("[selftests.sh]", "vm-arm.sh: "),
                            boot_env=lambda b: {"VM_CONSOLE_LOG": str(
                                out / f"console-{b}.log")})

    results = st.parse_ktap(out, names)
    if rc:
        print(f"arm_selftests.py: the guest run failed (rc {rc}), see "
              f"{out}/guest-{boot}.log", file=sys.stderr)
    st.expected_for_modes(expected, names, ksft, modes.split(),
                          ssh_mods.split())
    if env.get("LAN743X_TESTS"):
        for m in names:
            expected[m] = {t: v for t, v in expected.get(m, {}).items()
                           if t in results.get(m, {})}
    bad = st.compare(results, expected, names)
    counts = st.report(results, expected, names, bad, tag=lambda m, t:
                       " [armv7]" if t in arm.get(m, {}) else "")
    print(f"arm-selftests: {counts['pass']} passed, {counts['fail']} failed, "
          f"{counts['skip']} skipped; {len(bad)} not as in net-next.txt + "
          f"{ARM_EXPECTED.name}")
    sys.exit(1 if bad or rc or not results else 0)


if __name__ == "__main__":
    main()
