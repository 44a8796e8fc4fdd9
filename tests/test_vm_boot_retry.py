"""emulator/tests/vmrpc.py's VM boots again when a boot hangs (no console
output, or no guest command in time) or crashes, at most twice, logging
each retry with its reason, and fails with the console's tail after three
failed boots; the hung boot's processes are killed. No VM: a fake boot
command stands for lab/vm/vm.sh. And the check every VM test ends with:
the model counted no descriptor error (conftest.model_clean)."""
import os
import sys
import time

import conftest
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "emulator/tests"))
import vmrpc
from vmrpc import VM, VMError

#: the fake boot: its Nth run (counted in the shared directory) does what
#: the Nth word of $FAKE_BOOTS says: "silent" prints one line and hangs
#: (a child process too), "chatty" prints forever without reaching the
#: guest's command, "int3" prints the oops of a vCPU that ran an int3 of
#: text patching under TCG (vm.sh's crash lines) and exits 86, "crash"
#: prints a general protection fault and exits 86, "fail" exits 2, "up" runs the
#: guest side of vmrpc (emulator/tests/guest-rpc.sh) on the host
FAKE = r"""
rw=$1
n=$(( $(cat "$rw/boots" 2>/dev/null || echo 0) + 1 ))
echo $n > "$rw/boots"
what=$(echo $FAKE_BOOTS | cut -d' ' -f$n)
echo "fake boot $n: $what"
case $what in
silent) sleep 1000 & echo $! > "$rw/child.$n"; wait ;;
chatty) while :; do echo "[ $n ] still enumerating"; sleep 0.1; done ;;
int3) echo "vm.sh: | [    4.2] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI"
      echo "vm.sh: | [    4.3] Kernel panic - not syncing: Fatal exception"
      exit 86 ;;
crash) echo "vm.sh: | [    4.2] Oops: general protection fault: 0000 [#1] SMP"
       echo "vm.sh: | [    4.3] Kernel panic - not syncing: Fatal exception"
       exit 86 ;;
fail) exit 2 ;;
up) exec bash "$GUEST_RPC" "$rw" ;;
esac
"""


def boot(tmp_path, monkeypatch, plan, **kw):
    """A VM whose boots follow PLAN (FAKE's words)."""
    script = tmp_path / "fake-boot.sh"
    script.write_text(FAKE, encoding="utf-8")
    monkeypatch.setenv("FAKE_BOOTS", plan)
    monkeypatch.setenv("GUEST_RPC", str(ROOT / "emulator/tests/guest-rpc.sh"))
    kw.setdefault("silent_s", 1)
    kw.setdefault("boot_timeout", 30)
    return VM(boot_cmd=["bash", str(script), "{rw}"], qmp=False, **kw)


def alive(pid):
    """True while process PID exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_hung_boots_are_retried_and_killed(tmp_path, monkeypatch, capsys):
    """Two silent boots, then one that comes up: it is used, each retry
    is logged with its reason, the hung boots' processes are gone."""
    children = []
    real = vmrpc.VM.kill

    def kill(self):
        # the hung boot's child (the fake's sleep, QEMU's stand-in)
        for f in os.listdir(self.rw):
            if f.startswith("child."):
                path = os.path.join(self.rw, f)
                with open(path, encoding="utf-8") as c:
                    children.append(int(c.read()))
                os.unlink(path)
        real(self)
    monkeypatch.setattr(vmrpc.VM, "kill", kill)
    vm = boot(tmp_path, monkeypatch, "silent silent up")
    try:
        assert vm.boot_retries == ["no console output for 1 s"] * 2
        assert vm.sh("echo hello") == (0, "hello\n")
        err = capsys.readouterr().err
        assert "vmrpc: boot 1 of 3 failed: no console output for 1 s; " \
            "killed, booting again" in err
        assert "vmrpc: boot 2 of 3 failed" in err
    finally:
        vm.close()
    assert len(children) == 2
    time.sleep(0.2)
    assert not [p for p in children if alive(p)]


def test_chatty_hang_and_int3_crash_are_retried(tmp_path, monkeypatch):
    """A boot that prints but never reaches the guest's command, and one
    that crashed on the int3 of text patching under TCG, are retried."""
    vm = boot(tmp_path, monkeypatch, "chatty int3 up", boot_timeout=2)
    try:
        assert vm.boot_retries == [
            "no guest command after 2 s",
            ("the guest crashed before its first command on the int3 of "
             "text patching under TCG (vm.sh exit 86)")]
    finally:
        vm.close()


def test_any_other_crash_is_a_result(tmp_path, monkeypatch):
    """Any other oops fails at once with its first line, though an int3
    crash came before it in an earlier boot: it is never retried."""
    with pytest.raises(VMError) as e:
        boot(tmp_path, monkeypatch, "int3 crash up")
    msg = str(e.value)
    assert msg.startswith("the guest kernel crashed before its first "
                          "command: vm.sh: | [    4.2] Oops: general "
                          "protection fault"), msg
    assert "not retried" in msg


def test_three_failed_boots_fail_with_the_console_tail(tmp_path, monkeypatch):
    """Three hung boots: VMError with every reason and the log's tail."""
    with pytest.raises(VMError) as e:
        boot(tmp_path, monkeypatch, "silent silent silent")
    msg = str(e.value)
    assert "VM did not come up in 3 boots" in msg
    assert msg.splitlines()[0].count("no console output for 1 s") == 3
    assert "fake boot 3: silent" in msg


def test_other_exit_is_not_retried(tmp_path, monkeypatch):
    """A boot that exits otherwise (a setup error) fails at once."""
    with pytest.raises(VMError) as e:
        boot(tmp_path, monkeypatch, "fail up")
    assert "exit 2" in str(e.value) and "fake boot 1: fail" in str(e.value)


class FakeDut:
    """The model's counters, as lab/vm/qmp.py's Dut gives them."""

    def __init__(self, counters):
        self.c = counters

    def counters(self):
        """The counters."""
        return self.c


class FakeVM:
    """A running VM whose model has COUNTERS."""

    def __init__(self, counters, running=True):
        self.dut = FakeDut(counters)
        self.proc = type("P", (), {"poll": lambda _: None if running
                                   else 0})()


def test_model_counters_checked_after_a_vm_test():
    """conftest.model_clean: both counters 0 pass; a non-zero or a missing
    one fails with what it is; a VM already gone is not read."""
    ok = {"desc_errors": 0, "wb_freed_ring_writes": 0}
    conftest.model_clean(FakeVM(ok), "after t")
    vm = FakeVM(dict(ok, desc_errors=2))
    with pytest.raises(pytest.fail.Exception, match="desc_errors = 2"):
        conftest.model_clean(vm, "after t")
    # reported once: the next test fails only for errors of its own
    conftest.model_clean(vm, "after u")
    vm.dut.c["desc_errors"] = 3
    with pytest.raises(pytest.fail.Exception, match="desc_errors = 1"):
        conftest.model_clean(vm, "after v")
    vm = FakeVM({"desc_errors": 0})
    with pytest.raises(pytest.fail.Exception,
                       match="lack wb_freed_ring_writes"):
        conftest.model_clean(vm, "after t")
    conftest.model_clean(vm, "after u")
    conftest.model_clean(FakeVM({}, running=False), "after t")


@pytest.mark.parametrize("oops,calls", [
    ("Oops: int3: 0000 [#1] PREEMPT SMP", 2),
    ("BUG: kernel NULL pointer dereference, address: 0000000000000000", 1),
    ("WARNING: CPU: 0 PID: 1 at net/core/dev.c:1 x", 1)])
def test_run_vm_retries_only_the_int3_signature(tmp_path, oops, calls):
    """conftest.run_vm(): a guest crash (exit 86) boots once more only when
    the console's first problem is the TCG int3 signature; a BUG or a
    WARNING is the result, returned at once."""
    count = tmp_path / "calls"
    script = (f"echo x >> {count}; "
              f"echo '[    1.0] {oops}' > \"$VM_CONSOLE_LOG\"; exit 86")
    cmd = ["bash", "-c", script]
    p = conftest.run_vm(cmd, dict(os.environ), timeout=30)
    assert p.returncode == 86
    assert len(count.read_text().splitlines()) == calls
