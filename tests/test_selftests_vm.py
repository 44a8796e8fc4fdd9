"""lab/selftests.py: the kernel's lan743x kselftests in the VM, upstream and
series module, against lab/selftests-expected.txt.

Skipped only when QEMU with the lan7430 model cannot be built here; every
other problem (kernel or module build, a test result other than expected)
fails.
"""
import subprocess
import sys

import pytest

from conftest import ROOT, run


def test_selftests_vm():
    q = run(["bash", "emulator/build.sh"])
    qemu = q.stdout.strip().splitlines()[-1] if q.stdout.strip() else ""
    if q.returncode or not qemu:
        pytest.skip("QEMU with the lan7430 model is not available "
                    f"(emulator/build.sh rc {q.returncode}): "
                    f"{q.stderr.strip()[-300:]}")
    p = subprocess.run([sys.executable, "lab/selftests.py"], cwd=ROOT,
                       text=True, capture_output=True)
    summary = [ln for ln in p.stdout.splitlines()
               if ln.startswith("selftests: ")]
    assert p.returncode != 77, "selftests.py could not find QEMU: " + \
        p.stderr[-2000:]
    assert p.returncode == 0 and summary, \
        (p.stdout[-4000:] + "\n" + p.stderr[-3000:])
