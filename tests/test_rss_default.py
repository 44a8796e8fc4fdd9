"""RSS spreads flows over the RX channels without ethtool -X.

The model resets the indirection table to 0, as the driver has always
found it: every hash picks RX channel 0. net-next-3's second patch (and
its 6.12 backport, the 6.12-3 stack) writes ethtool_rxfh_indir_default()
at probe, so 16 UDP flows from the peer
(ports 40000+i -> 9999+i, hashed with the driver's random key) must reach
more than one RX channel, counted by the model per channel. The chance
that a spread table and a random key put 16 flows on one of 4 channels
is 4 ** -15.

test_without_the_patch_one_channel runs the same check on the chain
before that patch (net-next-2's module, 6.12-2's) and shows the check failing
there: every flow on channel 0, with the table `ethtool -x` reports
all zero.
"""
import re

import pytest
from coalesce import chain_index
from conftest import guest_module, vm_inputs
from vmrpc import VM, send_flows

FLOWS = 16
PER = 4                 # datagrams per flow
SEND = send_flows(FLOWS)
# the stacks whose chain holds the patch: 7.3 and the 6.12 backport
STACKS = pytest.mark.parametrize("stack", ["net-next-3", "6.12-3"])


def before_patch(stack):
    """STACK's chain up to the patch before the default table"""
    return f"series:{chain_index(stack, 'default-RSS-indir') - 1}"


def channels_hit(stack, module):
    """(frames per RX channel the flows added, the table's entries) on a
    VM with MODULE of STACK's chain"""
    qemu, obj = vm_inputs(stack)
    ko = guest_module(stack, module)
    vm = VM(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
            mods=f"{obj}/mods", ko=ko, cpus=1)
    try:
        vm.setup_net()
        rc, table = vm.sh(f"ethtool -x {vm.ifname}")
        assert rc == 0, table
        a = vm.dut.counters()["rx_frames_per_channel"]
        for _ in range(PER):
            rc, out = vm.sh(f"ip netns exec peer python3 -c \"{SEND}\"")
            assert rc == 0, out
        rc, out = vm.sh("sleep 1")
        b = vm.dut.counters()["rx_frames_per_channel"]
    finally:
        vm.close()
    entries = [int(x) for line in table.splitlines()
               if (m := re.match(r"\s*\d+:((\s+\d+)+)\s*$", line))
               for x in m.group(1).split()]
    return [y - x for x, y in zip(a, b)], entries


def spread(per_ch):
    """channels that received at least one flow's datagrams"""
    return [c for c, n in enumerate(per_ch) if n >= PER]


@STACKS
def test_default_table_spreads_flows(stack):
    """The series' module: the flows reach more than one RX channel and
    the reported table names all four."""
    per_ch, entries = channels_hit(stack, "series")
    assert sum(per_ch) >= FLOWS * PER, f"frames lost: {per_ch}"
    assert len(entries) == 128 and set(entries) == {0, 1, 2, 3}, entries
    assert len(spread(per_ch)) > 1, (
        f"every flow on one RX channel: frames per channel {per_ch}")


@STACKS
def test_without_the_patch_one_channel(stack):
    """The check fails without the patch: the zero table of the reset
    value sends the 16 flows to channel 0."""
    per_ch, entries = channels_hit(stack, before_patch(stack))
    assert set(entries) == {0}, entries
    assert spread(per_ch) == [0], per_ch
