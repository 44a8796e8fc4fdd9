"""A live change keeps the hardware RX timestamp filter.

The RX timestamp mode lives in each RX channel's RX_CFG_B, which the DMA
channel reset (DMAC_CMD RX_SWR) of a live ring switch may clear: the
datasheet does not say. The model clears it (the unkind end). The
series' channel start writes the mode of the SIOCSHWTSTAMP filter again.

The series' module (net-next-2), one VM: the RX filter set to "all"
(lab/guest/tstamp.py, SIOCSHWTSTAMP), then PER UDP datagrams from the
peer must each carry a raw hardware stamp (SO_TIMESTAMPING) before and
after `ip link set mtu 9000` from rings of 1500 (which replaced the rings
in v3; v4 grows the buffers as the rings are refilled, no channel reset),
and after `ethtool -G rx 256`, which replaces the rings and resets every
RX DMA channel. LAN743X_PTP_KEEP_REV=v3 runs v3's module, whose channel
start kept the cleared mode: the stamps stop after the change and the
test fails.
"""
import os

import pytest
from conftest import ROOT, guest_module, lab_vm, vm_inputs
from vmrpc import DUT_IP

STACK = "net-next-2"
REV = os.environ.get("LAN743X_PTP_KEEP_REV", "series")
PER = 5
PORT = 9998
TSTAMP = ROOT / "lab/guest/tstamp.py"
SEND = ("import socket, time; s = socket.socket(2, 2)\n"
        f"for _ in range({PER}):\n"
        f"    s.sendto(b'p' * 64, ('{DUT_IP}', {PORT})); time.sleep(0.05)\n")


@pytest.fixture(scope="module", name="vm")
def fixture_vm():
    """The module of REV, the network up and the neighbours pinned."""
    qemu, obj = vm_inputs(STACK)
    ko = guest_module(STACK, REV)
    with lab_vm(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
                mods=f"{obj}/mods", ko=ko) as v:
        v.setup_net()
        v.pin_neighbours()
        yield v


def stamped(vm):
    """(received, stamped) of PER datagrams from the peer"""
    rc, out = vm.sh(
        f". /tmp/l7.env; python3 {TSTAMP} recv {PORT} {PER} 60 "
        "> /tmp/ts.out 2>&1 & pid=$!; "
        "for i in $(seq 100); do grep -q ready /tmp/ts.out && break; "
        "sleep 0.1; done; "
        f"ip netns exec peer python3 -c \"{SEND}\"; wait $pid; "
        "cat /tmp/ts.out", timeout=180)
    assert rc == 0, out
    words = out.split()
    i = words.index("received")
    return int(words[i + 1]), int(words[i + 3])


def test_live_changes_keep_rx_timestamps(vm):
    """Every datagram stamped before and after two ring-replacing live
    changes."""
    rc, out = vm.mtu_new_rings(1500)
    assert rc == 0, out
    rc, out = vm.sh(f". /tmp/l7.env; python3 {TSTAMP} set $D all")
    assert rc == 0, out
    seen = {"before": stamped(vm)}
    rc, out = vm.sh(". /tmp/l7.env; ip link set $D mtu 9000")
    assert rc == 0, out
    seen["after mtu 9000"] = stamped(vm)
    rc, out = vm.sh(". /tmp/l7.env; ethtool -G $D rx 256")
    assert rc == 0, out
    seen["after ethtool -G rx 256"] = stamped(vm)
    print(f"[{REV}] (received, stamped) of {PER}: {seen}")
    assert seen["before"] == (PER, PER), seen
    for when, v in seen.items():
        assert v == (PER, PER), f"{when}: {seen}"
