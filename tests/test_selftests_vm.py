"""lab/selftests.py: the kernel's lan743x kselftests in the VM, upstream and
series module, against the stack's expected results
(lab/selftests-expected/<stack>.txt), once per stack on its base.

On the 7.3 stacks the tests are installed with make install and run with
run_kselftest.sh and a net.config, as kselftest CI and a board run them,
with REMOTE_TYPE=netns (the ssh mode, LAN743X_REMOTE_MODES="netns ssh",
is not in make test yet). The 6.12 stack runs each test file directly.

Never skipped: QEMU, the kernel and the modules are built by the lab, so a
failure to build any of them fails, as does any result other than expected.
"""
import subprocess
import sys

from conftest import ROOT, qemu_build, stack_env


def test_selftests_vm(stack):
    qemu_build()
    p = subprocess.run([sys.executable, "lab/selftests.py"], cwd=ROOT,
                       text=True, capture_output=True, env=stack_env(stack))
    summary = [ln for ln in p.stdout.splitlines()
               if ln.startswith("selftests: ")]
    assert p.returncode != 77, "selftests.py could not find QEMU: " + \
        p.stderr[-2000:]
    assert p.returncode == 0 and summary, \
        (p.stdout[-4000:] + "\n" + p.stderr[-3000:])
    if stack != "6.12":
        # the lan743x tests ran through run_kselftest.sh
        assert "run_kselftest.sh" in p.stderr, p.stderr[-3000:]
