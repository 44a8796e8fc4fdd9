"""adaptive-rx after a burst: net-next-3's module must bring the RX
channel that received the burst back to net_dim's lowest profile within
10 ms of the burst's last frame, in the model's virtual time under icount
(the guest's and the model's clocks count guest instructions, so the
delay is counted, not timed).

The model logs each change of an INT_MOD_CFG slot with its virtual time
and keeps each RX channel's last write-back time; lab/bench/coalesce.py's
idle_return() reads them, for the channel RSS gave the burst's one
flow, after a paced UDP burst and a quiet second. Without the return to
the lowest profile (LAN743X_DIM_MODULE=series:K, K the chain's patches
before it) the interval stays where the burst left it and this test
fails."""
import os

from coalesce import LOWEST_US, idle_return
from conftest import guest_module, vm_inputs
from vmrpc import VM, icount_opts

LIMIT_NS = 10 * 1000 * 1000
# bursts until this many ended above the lowest profile, at most MAX_BURSTS
# (a burst may end there: net_dim wanders at saturation)
CHECKED = 2
MAX_BURSTS = 6
# 4 ns an instruction: a guest fast enough that its peer, on the same vCPU,
# sends the burst without gaps of milliseconds
SHIFT = 2


def test_adaptive_rx_back_to_lowest_within_10ms():
    """Each burst that leaves the interval above the lowest profile is
    followed, within 10 ms of model time, by the lowest profile."""
    qemu, obj = vm_inputs("net-next-3")
    ko = guest_module("net-next-3",
                      os.environ.get("LAN743X_DIM_MODULE", "series"))
    vm = VM(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
            mods=f"{obj}/mods", ko=ko, cpus=1, qemu_opts=icount_opts(SHIFT))
    runs = []
    try:
        vm.setup_net()
        rc, out = vm.sh(f"ethtool -C {vm.ifname} adaptive-rx on")
        assert rc == 0, out
        while len(runs) < MAX_BURSTS and sum(
                r["at_end_us"] > LOWEST_US for r in runs) < CHECKED:
            runs.append(idle_return(vm, 3, "100M"))
    finally:
        vm.close()
    for r in runs:
        assert r["frames"] > 1000, f"a burst carried no traffic: {runs}"
    high = [r for r in runs if r["at_end_us"] > LOWEST_US]
    assert high, (f"no burst left adaptive-rx above its lowest profile, "
                  f"so nothing was checked: {runs}")
    for r in high:
        assert r["return_ns"] is not None and r["return_ns"] <= LIMIT_NS, (
            f"RX channel {r['channel']}'s interval stayed at "
            f"{r['at_end_us']} us after the burst "
            f"(back to {LOWEST_US} us after "
            f"{r['return_ns']} ns of model time; limit {LIMIT_NS}): {runs}")
