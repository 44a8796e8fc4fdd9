"""The model's device variants (emulator/README.md "Variants",
docs/emulator.md) under the upstream lan743x module and the series':
one VM boot per variant, module and stack, the guest e2e
(lab/guest/e2e.sh) with shortened loops, and the kernel log showing which
path the driver took.

The LAN7430 itself is covered by tests/test_vm.py; the variants' identity
(PCI IDs, ID_REV, PHY address) by the qtests (variant-*).

Stacks: LAN743X_VARIANT_STACKS (default "net-next-2", the 7.3 base; add
",6.12-2" for Debian 12's base (the whole 6.12 backport): about 90 s more per stack).
"""
import os
import re

import pytest
from conftest import guest_module, lab_built, qemu_build, run_vm, stack_env

STACKS = [s for s in os.environ.get("LAN743X_VARIANT_STACKS",
                                    "net-next-2").split(",") if s]

# e2e with short loops: the full e2e runs on the LAN7430 in test_vm.py;
# here every step runs once, on the variant's path, within ~90 s per boot
SHORT_E2E = {"E2E_IPERF_TIME": "2", "E2E_XFER_MB": "8", "E2E_UPDOWN": "3",
             "E2E_RELOAD": "2"}

# variant -> (-device driver + options, expected PCI device ID, kernel log
# lines that prove the variant's path: PHY address/driver, interface mode)
VARIANTS = {
    "lan7431": ("lan7431", "0x7431",
                [r"PHY \[pci-[0-9a-f:.]+:07\] driver \[Generic PHY\]",
                 r"configuring for phy/rgmii link mode"]),
    "pci11010": ("pci11010", "0xa011",
                 [r"PHY \[pci-[0-9a-f:.]+:07\] driver \[Generic PHY\]",
                  r"configuring for phy/rgmii link mode",
                  r"using MSIX interrupts, number of vectors = 9"]),
    "pci11414": ("pci11414", "0xa041",
                 [r"PHY \[pci-[0-9a-f:.]+:07\] driver \[Generic PHY\]",
                  r"configuring for phy/rgmii link mode",
                  r"using MSIX interrupts, number of vectors = 9"]),
    "lan7431-phy-addr-3": ("lan7431,phy-addr=3", "0x7431",
                           [r"PHY \[pci-[0-9a-f:.]+:03\] driver \[Generic PHY\]",
                            r"configuring for phy/rgmii link mode"]),
}
# one boot per chip family by default; pci11414 (the same model as the
# pci11010 but its IDs) and a non-default phy-addr on request
DEFAULT_VARIANTS = os.environ.get("LAN743X_VARIANTS",
                                  "lan7431,pci11010").split(",")
# variants whose driver path uses 4 TX queues (PCI11X1X_USED_TX_CHANNELS)
MULTI_TX = {"pci11010", "pci11414"}

# after the e2e (which reloads the module: counters start again), 8 TCP
# flows out of the DUT, then the per-queue TX frame counters
GUEST = ("lab/guest/e2e.sh; rc=$?; "
         "for d in /sys/bus/pci/drivers/lan743x/0000:*; do "
         "echo \"variant-pci-id $(cat $d/device)\"; "
         "n=$(ls $d/net); done; "
         "dmesg | grep -E 'lan743x.*(PHY \\[|link mode|MSIX)' | head -6; "
         "ip netns exec peer iperf3 -s -D; sleep 1; "
         "iperf3 -c 10.74.30.2 -P 8 -t 2 >/dev/null 2>&1; "
         "ethtool -S $n | grep -E 'TX Queue [0-3] Frames' | "
         "sed 's/^ */txq /'; exit $rc")


@pytest.fixture(scope="module", name="qemu")
def fixture_qemu():
    """QEMU with the lan7430 model (built if needed)."""
    return qemu_build()


@pytest.fixture(scope="module", params=STACKS, name="vstack")
def fixture_vstack(request):
    """Each stack of LAN743X_VARIANT_STACKS in turn."""
    return request.param


@pytest.fixture(scope="module", name="guest_kernel")
def fixture_guest_kernel(vstack):
    """The build directory of VSTACK's guest kernel (built if needed)."""
    return lab_built(f"the {vstack} guest kernel",
                     ["bash", "lab/kernel/kbuild.sh", "kernel", "guest"],
                     env=stack_env(vstack))


@pytest.mark.parametrize("module", ["upstream", "series"])
@pytest.mark.parametrize("variant", DEFAULT_VARIANTS)
def test_variant_e2e(qemu, guest_kernel, vstack, variant, module):
    """The guest e2e passes on VARIANT with MODULE, and the driver took
    its path."""
    dev, pci_id, proofs = VARIANTS[variant]
    name, _, opts = dev.partition(",")
    env = stack_env(vstack, QEMU=qemu,
                    KERNEL=f"{guest_kernel}/arch/x86/boot/bzImage",
                    MODDIR=f"{guest_kernel}/mods", DUT_DEVICE=name,
                    DUT_OPTS=("," + opts) if opts else "", **SHORT_E2E)
    cmd = ["bash", "lab/vm/vm.sh", "sh", "-c", GUEST]
    if module == "series":
        ko = guest_module(vstack, "series")
        env["LAN743X_KO"] = ko
        cmd = ["bash", "lab/vm/vm.sh", "--ko", f"series={ko}", "sh", "-c",
               GUEST]
    p = run_vm(cmd, env, timeout=900)
    out = p.stdout + p.stderr
    print(out[-6000:])
    assert p.returncode == 0, out[-6000:]
    assert not re.search(r"^FAIL", out, re.MULTILINE), out[-6000:]
    assert re.search(r"^E2E RESULT: PASS", out, re.MULTILINE), out[-3000:]
    # the guest saw the variant, and the driver took its path
    assert f"variant-pci-id {pci_id}" in out, out[-3000:]
    for r in proofs:
        assert re.search(r, out), f"no '{r}' in the guest log:\n" + out[-3000:]
    # per-queue TX counters: ethtool -S lists them only for a PCI11x1x
    # (lan743x_ethtool_get_sset_count()); there at least 2 of the 4 TX
    # channels must have carried the 8 flows
    txq = [int(n) for n in re.findall(r"^txq TX Queue [0-3] Frames: (\d+)",
                                      out, re.MULTILINE)]
    if variant in MULTI_TX:
        assert len(txq) == 4, out[-3000:]
        assert sum(1 for n in txq if n > 50) >= 2, f"TX queues used: {txq}"
    else:
        assert txq == [], f"per-queue TX counters on a LAN743x: {txq}"
