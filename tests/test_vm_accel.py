"""lab/vm/vm.sh gives QEMU the TCG threading the lab chose.

Under multi-threaded TCG the guest kernel can oops on an INT3 of its own
live text patching; VM_TCG_THREAD=single runs the vCPUs in one
host thread, the default stays MTTCG (measurements/crashrate-20261125:
no crash in either mode, and the bench's per-packet counts change with
the mode). Checked on QEMU's real command line, by a stand-in QEMU that
records its arguments (no guest boots: a few seconds)."""
import os
import stat

import pytest
from conftest import run

DEFAULT = "multi"


@pytest.fixture(name="fake")
def fixture_fake(tmp_path):
    """A stand-in QEMU that writes its arguments to a file, a dummy kernel:
    (qemu, kernel, the arguments' file)."""
    args = tmp_path / "args"
    qemu = tmp_path / "qemu-system-x86_64"
    qemu.write_text("#!/bin/bash\nprintf '%s\\n' \"$@\" > " + str(args) + "\n"
                    "exit 0\n")
    qemu.chmod(qemu.stat().st_mode | stat.S_IXUSR)
    kernel = tmp_path / "bzImage"
    kernel.write_bytes(b"\0" * 4096)
    return qemu, kernel, args


def qemu_args(fake, **env):
    """The -accel values vm.sh gave the stand-in QEMU FAKE with ENV, and
    vm.sh's process."""
    qemu, kernel, args = fake
    e = dict(os.environ, QEMU=str(qemu), KERNEL=str(kernel), VM_TIMEOUT="120")
    for k in ("VM_TCG_THREAD", "VM_EXTRA_QEMU_OPTS"):
        e.pop(k, None)
    e.update(env)
    p = run(["bash", "lab/vm/vm.sh", "true"], env=e, timeout=180)
    assert args.exists(), "QEMU was not started:\n" + p.stderr[-2000:]
    a = args.read_text().split("\n")
    return [a[i + 1] for i, x in enumerate(a) if x == "-accel"], p


def test_default_tcg_threading(fake):
    """Without VM_TCG_THREAD, the lab's default threading."""
    accel, p = qemu_args(fake)
    assert accel == [f"tcg,thread={DEFAULT}"], (accel, p.stderr[-2000:])


@pytest.mark.parametrize("mode", ["multi", "single"])
def test_vm_tcg_thread(fake, mode):
    """VM_TCG_THREAD picks the threading."""
    accel, p = qemu_args(fake, VM_TCG_THREAD=mode)
    assert accel == [f"tcg,thread={mode}"], (accel, p.stderr[-2000:])


def test_extra_accel_wins(fake):
    """An -accel of one's own (VM_EXTRA_QEMU_OPTS) replaces the lab's."""
    accel, p = qemu_args(
        fake, VM_EXTRA_QEMU_OPTS="-accel tcg,thread=multi,tb-size=256")
    assert accel == ["tcg,thread=multi,tb-size=256"], (accel, p.stderr[-2000:])


def test_bad_value_refused(fake):
    """Another VM_TCG_THREAD value: vm.sh exits 2, QEMU is not started."""
    _, kernel, args = fake
    e = dict(os.environ, QEMU=str(fake[0]), KERNEL=str(kernel), VM_TCG_THREAD="many")
    p = run(["bash", "lab/vm/vm.sh", "true"], env=e, timeout=60)
    assert p.returncode == 2 and not args.exists(), p.stderr[-2000:]
