"""The pause frame statistics of net-next-2 (patch "report the pause frame
statistics"): what `ethtool -I -a` reports against what the LAN7430
model counted, one VM boot with the series' module of the net-next stack
(base + patches/, `lab/kernel/kbuild.sh module guest series`), unless
LAN743X_PAUSE_STATS_KO=<lan743x.ko> names another module: with the
upstream one (`... module guest base`) or the stack before the patch both
tests fail, as the driver reports no pause statistics.

The kernel's own tests do not check the counts here: the pause cases of
drivers/net/hw/ethtool_std_stats.sh skip when the peer has no pause
parameters (the lab's peer is virtio-net), and drivers/net/stats.py's
check_pause only asks that the statistics exist.

* test_rx_pause_frames: the peer sends PAUSE frames (to 01-80-C2-00-00-01,
  opcode 1, pause time 1) with mausezahn; rx_pause_frames moves by exactly
  their number, which the model counted too (rx_pause_frames).
* test_tx_pause_frames: the rx-stall fault stops the RX DMA for 300 ms
  from the first frame it writes while the peer's echo replies of 1400
  bytes come in: ping sends its first 30 requests at once (preload), so
  the replies (30 x 1442 bytes) pass the driver's pause-on level (42 x
  512 bytes) however slowly the host runs the guest, and the model sends
  XOFF (and XON once the FIFO drains). Paced pings alone fill it only
  when the guest keeps their 5 ms interval: on a loaded host 9 were in
  flight, below that level. tx_pause_frames moves by exactly the model's
  count, which is not 0.

Neighbours are static and IPv6 is off on both ends. For a run with a
kernel built outside the lab, LAN743X_PAUSE_STATS_OBJ=<kernel build dir
with mods/> overrides the guest kernel (QEMU still comes from the lab).
"""
import json
import os

import pytest
from conftest import guest_module, net_vm, qemu_build, vm_inputs

STACK = "net-next-2"
PAUSES = 300            # PAUSE frames the peer sends
# echo requests ping sends at once: their replies fill the RX FIFO past
# pause-on (0x2A x 512 bytes) during the stall, at any host speed
PRELOAD = 30
# a PAUSE frame after the addresses: type 0x8808, opcode 1, pause time 1
PAUSE = "88:08:00:01:00:01"


@pytest.fixture(scope="module", name="vm")
def fixture_vm():
    """A booted VM with the module under test, the network up and the
    neighbours pinned."""
    obj = os.environ.get("LAN743X_PAUSE_STATS_OBJ")
    if obj:
        qemu = qemu_build()
    else:
        qemu, obj = vm_inputs(STACK)
    ko = os.environ.get("LAN743X_PAUSE_STATS_KO") or guest_module(STACK)
    with net_vm(qemu, obj, ko) as v:
        yield v


def pause_stats(vm):
    """The DUT's pause statistics (ethtool -I --json -a): a dict, empty
    when the driver reports none."""
    rc, out = vm.sh(". /tmp/l7.env; ethtool -I --json -a $D")
    assert rc == 0, out
    return json.loads(out)[0].get("statistics", {})


def check_moved(name, a, b, n, what):
    """The driver's statistic NAME moved by exactly N from A to B (pause
    statistics as pause_stats() reads them); WHAT says what happened."""
    info = (f"{what}; ethtool -I -a before {a or 'no statistics'}, after "
            f"{b or 'no statistics'}")
    print(info)
    assert n > 0, info
    assert name in b, info
    assert b[name] - a.get(name, 0) == n, info


def test_rx_pause_frames(vm):
    """Each PAUSE frame of the peer is counted once in rx_pause_frames."""
    a = pause_stats(vm)
    m = vm.dut.counters()["rx_pause_frames"]
    rc, out = vm.sh(". /tmp/l7.env; ip netns exec peer mausezahn $P -q "
                    f"-c {PAUSES} -d 100usec -a own -b 01:80:c2:00:00:01 "
                    f"{PAUSE}", timeout=300)
    assert rc == 0, out
    n = vm.dut.counters()["rx_pause_frames"] - m
    b = pause_stats(vm)
    what = f"peer sent {PAUSES} PAUSE frames, the model counted {n}"
    check_moved("rx_pause_frames", a, b, n, what)
    assert n == PAUSES, what


def test_tx_pause_frames(vm):
    """The MAC's XOFF and XON are counted in tx_pause_frames."""
    a = pause_stats(vm)
    m = vm.dut.counters()["tx_pause_frames"]
    vm.dut.fault("rx-stall", count=1, ms=300)
    try:
        _rc, out = vm.sh(f"ping -q -c 60 -l {PRELOAD} -i 0.005 -s 1400 "
                         "-W 2 10.9.9.2", timeout=120)
    finally:
        vm.dut.clear()
    n = vm.dut.counters()["tx_pause_frames"] - m
    b = pause_stats(vm)
    check_moved("tx_pause_frames", a, b, n,
                f"rx-stall 300 ms under 60 pings of 1400 bytes, "
                f"{PRELOAD} at once "
                f"({out.strip()}): the model sent {n} pause frames")
