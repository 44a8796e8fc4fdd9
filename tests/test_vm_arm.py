"""The ARMv7 guest: `make e2e ARCH=armv7` (lab/vm/e2e.sh) on QEMU's
virt machine, Cortex-A15, 32-bit without LPAE, 1 GiB with highmem, the
PCIe host NON-coherent: e2e with the upstream and the series' lan743x.ko
of each stack on its base (net-next on 7.3, the 6.12 backport on 6.12),
the series' live MTU / ethtool -G changes, and kprobe counts showing that
the driver's DMA goes through arm's cache maintenance
(arch_sync_dma_for_device/arch_sync_dma_for_cpu); and, on its kernel's
lock debugging, down and live changes with a frame pending in the driver
(lab/guest/pending.sh).

Opt-in: it builds qemu-system-arm, an ARM kernel and an armhf rootfs when
cold (about 2 hours on 2 cores, more than CI's 90 minutes: see
docs/arm.md), so `make test` does not collect it (tests/conftest.py)
unless LAN743X_ARM=1; `make arm-e2e` runs the e2e. Collected, it never skips: a
build that fails is a test failure with its reason."""
import os
import re

import pytest
from conftest import VM_CPUS_ASKED, run


def arm_env(**extra):
    """The environment of an ARM run: its guest keeps lab/vm/vm.sh's
    vCPUs (it runs alone) unless VM_CPUS was asked for."""
    env = dict(os.environ)
    env.pop("LAB_BASE", None)
    env.pop("STACK", None)
    if VM_CPUS_ASKED is None:
        env.pop("VM_CPUS", None)
    env.update(extra)
    return env


# net-next: the series on 7.3; 6.12-2: the backport on the LTS kernel that
# i.MX6 boards run, each on its own base's armv7-virt kernel
@pytest.mark.parametrize("stack", ["net-next-2", "6.12-2"])
def test_arm_e2e_upstream_and_series(tmp_path, stack):
    """The ARMv7 guest's e2e passes with both modules on STACK's base."""
    env = arm_env(E2E_LOGDIR=str(tmp_path / "logs"), STACK=stack,
                  ARCH="armv7")
    p = run(["bash", "lab/vm/e2e.sh"], env=env, timeout=3 * 3600)
    out = p.stdout + p.stderr
    print(out[-8000:])
    # a build step that failed says which (lab/vm/e2e.sh: "error: ...")
    assert p.returncode == 0, out[-8000:]
    assert "E2E (armv7): PASS" in out, out[-6000:]
    base = {"net-next-2": "7.3", "6.12-2": "6.12"}[stack]
    assert f"e2e (armv7): stack {stack} on Linux {base}" in out, \
        out[-6000:]
    for m in ("upstream", "series"):
        assert re.search(rf"^\[{m}\] E2E RESULT: PASS", out, re.MULTILINE), \
            f"{m}: no passing guest run\n" + out[-6000:]
        assert re.search(rf"^\[{m}\]     device tree: pcie@\w+ without "
                         "dma-coherent", out, re.MULTILINE), out[-4000:]
        # the non-coherent path is in use: cache maintenance per packet
        for d in ("tx", "rx"):
            s = re.search(rf"^\[{m}\] SYNC {d}: sync_for_device=(\d+) "
                          r"sync_for_cpu=(\d+)", out, re.MULTILINE)
            assert s, f"{m} {d}: no SYNC line\n" + out[-4000:]
            assert int(s.group(1)) + int(s.group(2)) > 0, s.group(0)
    assert re.search(r"^\[series\] PASS: live: 4 MTU changes and 5 ethtool "
                     "-G changes", out, re.MULTILINE), out[-4000:]


def test_arm_selftests_as_on_x86(tmp_path):
    """The lan743x kselftests (both remote modes), our hw tests and the
    kernel's generic driver tests in the ARMv7 guest: each result as the
    x86_64 expectations say, or as net-next-2-armv7.txt says with its
    reason (lab/selftests/selftests.py --arch armv7)."""
    env = arm_env()
    p = run(["python3", "lab/selftests/selftests.py", "--arch", "armv7", "--out",
             str(tmp_path / "arm-selftests")], env=env, timeout=4 * 3600)
    out = p.stdout + p.stderr
    print(out[-8000:])
    assert p.returncode == 0, out[-8000:]
    s = re.search(r"^selftests \(armv7\): (\d+) passed, (\d+) failed, (\d+) "
                  r"skipped; 0 not as in", out, re.MULTILINE)
    assert s and int(s.group(1)) > 0, out[-4000:]


def arm_build(what, cmd, env):
    """Run a lab build step for the ARM guest; its last line (a path)."""
    p = run(cmd, env=env, timeout=3 * 3600)
    assert p.returncode == 0, f"{what} failed:\n" + (p.stdout + p.stderr)[-4000:]
    return p.stdout.strip().splitlines()[-1]


# The changes of lab/guest/pending.sh, each made with a partial frame
# pending in the driver (the model leaves LS out of every other frame:
# fault-drop-ls-every=2)
PENDING_CHANGES = ("down", "mtu-9000", "ring-256")


@pytest.mark.parametrize("module", ["upstream", "series"])
def test_arm_changes_with_a_frame_pending(tmp_path, module):
    """Interface down, a live MTU change and a live ring change, each with
    a frame half-assembled in the driver, on the ARMv7 guest's kernel with
    lock debugging (PREEMPT, PROVE_LOCKING, DEBUG_PREEMPT,
    DEBUG_ATOMIC_SLEEP): the kernel log stays clean. The series counts the
    pending frame as dropped at each change that stops the channels (the
    MTU increase keeps them running), from process context, into
    statistics that its NAPI poll writes in softirq context: on 32-bit that
    u64_stats write is a seqcount write, which must not be preempted or
    interrupted by a softirq writer (lockdep: inconsistent
    {IN-SOFTIRQ-W} -> {SOFTIRQ-ON-W} usage); 64-bit kernels compile it
    away, so only this guest can show it."""
    env = arm_env(STACK="net-next-2", JOBS=os.environ.get("JOBS", "2"))
    env.pop("ARCH", None)
    qemu = arm_build("qemu-system-arm",
                     ["bash", "emulator/build.sh", "--arch", "arm"], env)
    obj = arm_build("armv7-virt kernel",
                    ["bash", "lab/kernel/kbuild.sh", "kernel", "armv7-virt"],
                    env)
    ko = arm_build(f"{module} lan743x.ko",
                   ["bash", "lab/kernel/kbuild.sh", "module", "armv7-virt",
                    {"upstream": "base", "series": "series"}[module]], env)
    venv = dict(env, ARCH="armv7", QEMU=qemu, KERNEL=obj,
                LAN743X_KO=f"/ko/{module}/lan743x.ko",
                DUT_OPTS=",fault-drop-ls-every=2",
                VM_CONSOLE_LOG=str(tmp_path / "console.log"))
    for _ in range(2):  # a crash of the emulated machine: once more
        p = run(["bash", "lab/vm/vm.sh", "--ko", f"{module}={ko}",
                 "lab/guest/pending.sh"], env=venv, timeout=3600)
        if p.returncode != 86:
            break
    out = p.stdout + p.stderr
    print("\n".join(ln for ln in out.splitlines()
                    if ln.startswith("pending: ")))
    print(out[-12000:])
    assert p.returncode == 0 and "pending: DONE" in out, out[-6000:]
    res = {n: (int(rc), int(d), p) for n, rc, d, p in re.findall(
        r"^pending: (\S+) rc=(\d+) rx_dropped\+(-?\d+) frames=\d+ "
        r"pending=(yes|no)$", out, re.MULTILINE)}
    assert set(res) == set(PENDING_CHANGES), out[-4000:]
    # each change was made with a frame pending (the stack received
    # none of the last one sent)
    assert all(res[c][2] == "yes" for c in PENDING_CHANGES), res
    assert res["down"][0] == 0, res
    if module == "series":
        # every change ran; those that stop the channels (down, the ring
        # change) found their frame pending and counted it in rx_dropped
        # (upstream counts nothing); the MTU increase keeps the rings and
        # grows the buffers as they are refilled, so its frame may stay
        # pending in the ring
        assert all(res[c][0] == 0 for c in PENDING_CHANGES), res
        assert all(res[c][1] >= 1 for c in ("down", "ring-256")), res
    klog = out.split("pending: klog begin\n", 1)[-1].split(
        "pending: klog end", 1)[0]
    assert "pending: klog end" in out and klog.strip() == "", \
        f"{module}: the kernel complained:\n{klog}"
