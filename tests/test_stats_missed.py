"""Frames the device could not store are rx_missed_errors, not rx_dropped.

The series reports the MAC's RX Dropped Frames (the model counts there
each frame its full RX FIFO overflows) as rtnl's rx_missed_errors, which
Documentation/networking/statistics.rst keeps for drops for lack of
device buffers, and leaves rx_dropped to frames the host received and
dropped. Upstream adds them to rx_dropped
(test_emulator_faults.py::test_fifo_overflow_is_rx_dropped checks that on
upstream's module).

A stalled RX DMA (rx-stall, 300 ms) in front of a 12 KiB RX FIFO, with a
link partner that ignores pause frames: the replies of a fast ping that
do not fit overflow. With the series' module every overflow must be in
rx_missed_errors and none in rx_dropped. LAN743X_STATS_MISSED_MODULE=
series:K (K the chain's patches before the 64-bit accumulation patch)
runs the same check where the overflows are still rx_dropped: it fails.
"""
import os

import pytest
from conftest import guest_module, net_vm, vm_inputs
from test_emulator_faults import fifo_overflow

STACK = "net-next-2"
MODULE = os.environ.get("LAN743X_STATS_MISSED_MODULE", "series")


@pytest.fixture(scope="module", name="vm")
def fixture_vm():
    """The series' module on the net-next-2 stack, network up."""
    qemu, obj = vm_inputs(STACK)
    with net_vm(qemu, obj, guest_module(STACK, MODULE)) as v:
        yield v


def test_fifo_overflow_is_rx_missed(vm):
    """Each FIFO overflow counts once, in rx_missed_errors."""
    p, d, dmesg, over = fifo_overflow(vm)
    m = d["model"]
    s = d["stat"]
    info = f"ping {p}; model overflows {over}; stat {s}"
    print(info)
    assert m["fault_fired"] == {"rx-stall": 1}, info
    assert over > 0, info
    assert s.get("rx_missed_errors", 0) == over, info
    assert s.get("rx_dropped", 0) == 0, info
    assert p["sent"] - p["replies"] == over, info
    assert not [ln for ln in dmesg if "BUG" in ln or "WARNING" in ln], dmesg
