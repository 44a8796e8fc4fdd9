"""lab/selftests.py: the kernel's lan743x kselftests in the VM, upstream and
series module, against the stack's expected results
(lab/selftests-expected/<stack>.txt), once per stack on its base.

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
