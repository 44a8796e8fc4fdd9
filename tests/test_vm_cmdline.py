"""lab/vm/vm.sh keeps the kernel command line within x86's 2048 bytes.

virtme-ng passes the guest command base64-encoded on the kernel command
line, before init=; a long command (a bench of five modules, each with its
path in the environment) pushed init= past the limit, the kernel cut it
("Requested init .../virtme-ng-ini failed") and panicked, which the bench
reported as a crash on every boot. vm.sh now runs a long command from a
script file. Checked on QEMU's real command line, with a stand-in QEMU
that records its arguments (no guest boots)."""
import base64
import os
import re
import stat

from conftest import run


def kernel_cmdline(tmp_path, **env):
    """The kernel command line vm.sh gives a stand-in QEMU with ENV, and
    vm.sh's process."""
    args = tmp_path / "args"
    qemu = tmp_path / "qemu-system-x86_64"
    qemu.write_text("#!/bin/bash\nprintf '%s\\n' \"$@\" > " + str(args) + "\n"
                    "exit 0\n")
    qemu.chmod(qemu.stat().st_mode | stat.S_IXUSR)
    kernel = tmp_path / "bzImage"
    kernel.write_bytes(b"\0" * 4096)
    e = dict(os.environ, QEMU=str(qemu), KERNEL=str(kernel), VM_TIMEOUT="120")
    e.update(env)
    p = run(["bash", "lab/vm/vm.sh", "true"], env=e, timeout=180)
    assert args.exists(), "QEMU was not started:\n" + p.stderr[-2000:]
    a = args.read_text().split("\n")
    return a[a.index("-append") + 1], p


def guest_command(cmdline):
    """The guest command virtme-ng put on the kernel command line."""
    m = re.search(r"virtme\.exec=`([^`]*)`", cmdline)
    assert m, cmdline
    return base64.b64decode(m.group(1)).decode()


def test_short_command_stays_on_the_command_line(tmp_path):
    """A short command is passed on the command line itself."""
    cmdline, _ = kernel_cmdline(tmp_path, LAN743X_X="short")
    assert "LAN743X_X=short" in guest_command(cmdline)


def test_long_command_runs_from_a_file(tmp_path):
    """A long command runs from a script: the line stays within 2048."""
    cmdline, p = kernel_cmdline(tmp_path, LAN743X_X="a" * 1500)
    assert len(cmdline.encode()) <= 2048, (len(cmdline), p.stderr[-1000:])
    assert "init=" in cmdline
    cmd = guest_command(cmdline)
    assert re.search(r"bash \S*/results/\.vm-cmd\.\w+$", cmd), cmd
    assert "run from" in p.stderr
