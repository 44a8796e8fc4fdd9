"""The emulator in a VM: QEMU qtests of the LAN7430 model, and the guest
end-to-end test of the upstream lan743x module and the series' on the
project's own checking kernel (DMA-API debug on)."""
import os
import re

import pytest
from conftest import (
    ROOT,
    guest_module,
    lab_built,
    qemu_build,
    run,
    run_vm,
    stack_env,
)


@pytest.fixture(scope="session", name="qemu")
def fixture_qemu():
    """QEMU with the lan7430 model (built if needed)."""
    path = qemu_build()
    assert os.access(path, os.X_OK), path
    return path


@pytest.fixture(scope="module", name="guest_kernel")
def fixture_guest_kernel(stack):
    """The build directory of STACK's guest kernel (built if needed)."""
    return lab_built(f"the {stack} guest kernel",
                     ["bash", "lab/kernel/kbuild.sh", "kernel", "guest"],
                     env=stack_env(stack))


@pytest.mark.usefixtures("qemu")
def test_qtests():
    """The model's QEMU qtests (emulator/tests/run-qtests.sh) pass."""
    script = ROOT / "emulator/tests/run-qtests.sh"
    if not script.exists():
        pytest.fail("emulator/tests/run-qtests.sh missing")
    p = run(["bash", str(script)])
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]


@pytest.mark.parametrize("module", ["upstream", "series"])
def test_e2e(qemu, guest_kernel, stack, module):
    """lab/guest/e2e.sh passes with MODULE on STACK's base: upstream's
    lan743x, and the series' (base + the stack's patches) with the live
    MTU and ring size changes under traffic (E2E_LIVE=1) and the sha256
    transfers both ways at 1500 and 9000 after them."""
    env = stack_env(stack, QEMU=qemu,
                    KERNEL=f"{guest_kernel}/arch/x86/boot/bzImage",
                    MODDIR=f"{guest_kernel}/mods",
                    E2E_IPERF_TIME=os.environ.get("E2E_IPERF_TIME", "5"))
    cmd = ["bash", "lab/vm/vm.sh", "lab/guest/e2e.sh"]
    if module == "series":
        ko = guest_module(stack, "series")
        env.update(LAN743X_KO=ko, E2E_LIVE="1")
        cmd = ["bash", "lab/vm/vm.sh", "--ko", f"series={ko}",
               "lab/guest/e2e.sh"]
    p = run_vm(cmd, env, timeout=1800)
    out = p.stdout + p.stderr
    print(out[-6000:])
    assert p.returncode == 0, out[-6000:]
    assert not re.search(r"^FAIL", out, re.MULTILINE), out[-6000:]
    assert re.search(r"^PASS", out, re.MULTILINE), \
        "no step ran:\n" + out[-3000:]
    if module == "series":
        # the live changes ran, and the transfers after them
        assert re.search(r"^PASS.*live", out, re.MULTILINE | re.IGNORECASE), \
            "no live change step passed:\n" + out[-3000:]
