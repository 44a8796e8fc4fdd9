"""How lab/vm/vm.sh reads an x86_64 guest's end.

* The console filter (lab/vm/klog_filter.awk): the kernel console and the
  guest command's stderr share one pipe, QEMU's serial writes come a byte
  at a time from a vCPU thread and the command's from another, so a kernel
  line can follow a line the command had not ended. Its kernel part must
  still reach the console log, where vm.sh looks for a panic (exit 86):
  the filter before this split sent such a line to stderr only, and the
  panic was not seen (the guest ended with vng's 255). No VM.
* A guest that ends without its command's status and without a panic (here
  QEMU killed with SIGKILL): vm.sh says how QEMU ended, which vng drops
  (lab/vm/qemu-status.sh), and shows the console's last lines. One boot.
"""
import os
import signal
import subprocess
import time
import uuid

from conftest import ROOT, vm_inputs

AWK = ROOT / "lab/vm/klog_filter.awk"

PANIC = "[    8.794283] Kernel panic - not syncing: sysrq triggered crash"


def run_filter(tmp_path, text, verbose=""):
    """The filter's (klog, stderr) for input TEXT."""
    klog = tmp_path / "klog"
    klog.write_text("", encoding="utf-8")
    p = subprocess.run(["awk", "-v", f"klog={klog}", "-v", f"verbose={verbose}",
                        "-f", str(AWK)], input=text, capture_output=True,
                       text=True, check=True)
    return klog.read_text(encoding="utf-8"), p.stderr


def test_kernel_lines_to_the_log_others_to_stderr(tmp_path):
    """A kernel line goes to the log only, the command's line to stderr
    only; with verbose set, kernel lines go to both."""
    text = "[    1.000000] pci 0000:00:03.0: [1055:7430]\nguest says hi\n"
    klog, err = run_filter(tmp_path, text)
    assert klog == "[    1.000000] pci 0000:00:03.0: [1055:7430]\n", klog
    assert err == "guest says hi\n", err
    klog, err = run_filter(tmp_path, text, verbose="1")
    assert klog == "[    1.000000] pci 0000:00:03.0: [1055:7430]\n", klog
    assert err == text, err


def test_kernel_line_after_an_unended_line(tmp_path):
    """The command's unended line, then the panic: the panic reaches the
    log, the whole line still reaches stderr."""
    line = "virtme-run: failed to start virtiofsd, fallback to 9p" + PANIC
    klog, err = run_filter(tmp_path, line + "\n[    8.8] Kernel Offset: "
                           "disabled\n")
    assert PANIC + "\n" in klog, klog
    assert "Kernel Offset: disabled" in klog, klog
    assert err == line + "\n", err


def qemu_pid(qemu, mark):
    """The pid of the QEMU whose command line holds MARK, or None."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if cmd[0] == qemu.encode() and any(mark.encode() in a for a in cmd):
            return int(pid)
    return None


def test_killed_qemu_is_named(tmp_path):
    """QEMU killed under a running guest command: vm.sh ends with 255,
    names the signal and shows the console's end."""
    qemu, obj = vm_inputs()
    mark = f"labmark={uuid.uuid4().hex}"
    env = dict(os.environ, QEMU=qemu, KERNEL=f"{obj}/arch/x86/boot/bzImage",
               MODDIR=f"{obj}/mods", VM_APPEND=mark, VM_CPUS="1",
               VM_CONSOLE_LOG=str(tmp_path / "console.log"))
    p = subprocess.Popen(["bash", "lab/vm/vm.sh", "sh", "-c",
                          "sleep 600"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    killed = None
    console = tmp_path / "console.log"
    try:
        t0 = time.monotonic()
        # the kernel has printed (a panic would be on the console by now)
        while killed is None and time.monotonic() - t0 < 900:
            time.sleep(2)
            if not console.exists() or console.stat().st_size < 4096:
                continue
            killed = qemu_pid(qemu, mark)
            if killed:
                os.kill(killed, signal.SIGKILL)
        out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    log = out + err
    assert killed, "no QEMU process with " + mark + ":\n" + log[-3000:]
    assert p.returncode == 255, log[-3000:]
    assert "QEMU exit status 137 (signal 9)" in err, log[-3000:]
    assert "the console's last lines" in err, log[-3000:]
    assert "GUEST CRASHED" not in err, log[-3000:]
