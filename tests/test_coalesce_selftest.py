"""net-next-3's generic selftest, drivers/net/hw/coalesce.py, in the VM
with the lan7430 model: it must skip on net-next-2's module (no ethtool
-c/-C: EOPNOTSUPP, as a driver without coalescing in netdev's CI VM) and
pass on net-next-3's (lab/selftests/expected/net-next-3-coalesce.txt),
both in one boot, the peer in a namespace.

The A/B is the evidence that the test checks what the patches add:
round-trip and refusal of out-of-range values run only with them, and the
interrupts-per-frame check needs a longer interval to lower the model's
interrupt count."""
from conftest import ROOT, guest_module, run, stack_env, vm_inputs

EXPECTED = ROOT / "lab/selftests/expected/net-next-3-coalesce.txt"


def test_coalesce_selftest_fails_before_and_passes_after(tmp_path):
    """coalesce.py: 3 cases skip on net-next-2's module, pass on
    net-next-3's; the lab's own checks pass on both."""
    nn2 = guest_module("net-next-2")
    nn3 = guest_module("net-next-3")
    vm_inputs("net-next-3")
    env = stack_env("net-next-3", LAN743X_REMOTE_MODES="netns",
                    LAN743X_GENERIC="")
    p = run(["python3", "lab/selftests/selftests.py", "--tests",
             "hw/coalesce.py", "--module", f"nn2={nn2}", "--module",
             f"nn3={nn3}", "--expected", str(EXPECTED), "--out",
             str(tmp_path / "out")], env=env, timeout=2400)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-5000:]
    assert "selftests: 9 passed, 0 failed, 3 skipped; 0 not as in" in out, \
        out[-5000:]
