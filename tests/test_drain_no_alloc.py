"""A stopped RX channel's drain allocates nothing: with every page_pool
allocation failing from the moment the new rings of a live ring change are
allocated, each frame that waited in the old ring is still delivered.

The series' lan743x module (net-next-2 stack, `lab/kernel/kbuild.sh module
guest series`) in one VM boot. A live ring change (`ethtool -G rx`; an
MTU increase keeps the rings and grows the buffers as they are refilled)
stops each RX channel and
drains it: the frames the device wrote back before it stopped are
delivered from the old ring, which is then freed. Such a frame is
received correctly and its buffer goes to the stack; a drain that refills
the slot (a page_pool allocation for a ring about to be freed) drops the
frame when the allocation fails, and counts it as an allocation failure.

The injection: the kernel's fail_function on page_pool_alloc_netmems()
(what the kernel's own hw/pp_alloc_fail.py uses), through which every
fragment refill at MTU 1500 passes. Its `space` lets pass exactly the
calls that allocating the new rings makes (counted on the same change
without frames first), so that the new rings are complete and every later
call fails: those of the drain, if it makes any (its `times` counts
them).

The first check: BURST UDP frames of one flow wait in the ring (the model holds
the RX interrupts: rx-irq-hold), `ethtool -G rx 256` switches the
channels, every frame the model wrote is delivered (IpInReceives), none
is dropped (rx_dropped), and the injection failed no call. A drain that
refills loses the frames after its first failed refill (the failed
fragment page is retried for each of them).

The second check: a channel whose restart fails goes back to the ring it
was just drained from, which must get buffers again in the slots the
drain left empty. With rings of 256 at MTU 1500, BURST
frames wait in channel 0's ring, the model fails channel 0's reset once
(rx-swr-head), `ethtool -G rx 128` fails with the ring size unchanged, the
BURST frames are delivered, and FLOWS frames sent after it (the model's
RSS puts them on channel 0) are all delivered.

The third check: a shrink delivers what the old ring holds while the
channel runs its new ring: with rings of 512, LONG frames wait in slots
beyond 128, `ethtool -G rx 128` switches, every frame is delivered, and
the NAPI polls of the old ring hand the new ring none of the old ring's
tail indexes (the model refuses a tail outside the ring: desc_errors).

Each check asserts that its change did switch rings (DMA channel resets
in the model), so that neither passes by not exercising the switch.

Neighbours are static and IPv6 is off on both ends, so the DUT receives
only what the check sends.
"""
import re
import sys
import time

import pytest
from conftest import ROOT, guest_module, net_vm, vm_inputs

sys.path.insert(0, str(ROOT / "emulator/tests"))
from vmrpc import DUT_IP, send_flows

STACK = "net-next-2"
BURST = 100             # frames of one flow held in the 128-entry ring
TIMES = 1000000         # failures the injection may make (counts them)
FF = "/sys/kernel/debug/fail_function"
BAD_DMESG = re.compile(r"WARNING|BUG|DMA-API|Call Trace|refcount_t|"
                       r"general protection|use-after-free", re.IGNORECASE)
FLOWS = 64              # UDP flows (the model's RSS: all on channel 0)
SEND_BURST = ("import socket; s = socket.socket(2, 2); "
              f"[s.sendto(b'x' * 64, ('{DUT_IP}', 9999)) "
              f"for _ in range({BURST})]")
SEND_FLOWS = send_flows(FLOWS)
#: frames of one flow held in a 512-entry ring, past the 128 a shrink keeps
LONG = 300
SEND_LONG = ("import socket; s = socket.socket(2, 2); "
             f"[s.sendto(b'x' * 64, ('{DUT_IP}', 9999)) "
             f"for _ in range({LONG})]")


@pytest.fixture(scope="module", name="vm")
def fixture_vm():
    """A booted VM with the series' module, the network up, the
    neighbours pinned, fail_function set on page_pool_alloc_netmems()
    (probability 0 until a check arms it)."""
    qemu, obj = vm_inputs(STACK)
    with net_vm(qemu, obj, guest_module(STACK)) as v:
        rc, out = v.sh(
            "mount -t debugfs none /sys/kernel/debug 2>/dev/null; "
            f"echo page_pool_alloc_netmems > {FF}/inject && "
            f"echo 0 > {FF}/probability && echo 0 > {FF}/verbose && "
            f"echo -1 > {FF}/times && echo 0 > {FF}/space && "
            f"cat {FF}/inject")
        assert rc == 0 and "page_pool_alloc_netmems" in out, \
            f"fail_function on page_pool_alloc_netmems: {out}"
        yield v


def gsh(vm, cmd, timeout=120):
    """vm.sh() of CMD with the interface names (D, P) set."""
    return vm.sh(". /tmp/l7.env\n" + cmd, timeout=timeout)


def ff_read(vm, name):
    """fail_function's attribute NAME."""
    _rc, out = vm.sh(f"cat {FF}/{name}")
    return int(out.strip())


def stat(vm, name):
    """The DUT's interface statistic NAME (sysfs)."""
    _rc, out = gsh(vm, f"cat /sys/class/net/$D/statistics/{name}")
    return int(out.strip())


def nstat(vm, name):
    """The guest's SNMP counter NAME (nstat)."""
    _rc, out = vm.sh(f"nstat -saz {name} | awk '$1 == \"{name}\" {{print $2}}'")
    return int(out.strip() or 0)


def set_rx(vm, size):
    """ethtool -G rx SIZE on the DUT (a live change that replaces the RX
    rings); returns (rc, output)."""
    return gsh(vm, f"ethtool -G $D rx {size}", timeout=240)



def wait_frames(vm, want, timeout=60):
    """The model's rx_frames once it reaches WANT (TIMEOUT s at most)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        n = vm.dut.counters()["rx_frames"]
        if n >= want:
            return n
        time.sleep(0.3)
    return vm.dut.counters()["rx_frames"]


def accounted(vm, in0, drop0, written):
    """(delivered, dropped) since the counts IN0 (IpInReceives) and DROP0
    (rx_dropped), once the WRITTEN frames are all accounted for, or after
    60 s: every frame is delivered or counted dropped, or never will be."""
    t0 = time.monotonic()
    while (nstat(vm, "IpInReceives") - in0 + stat(vm, "rx_dropped") - drop0
           < written and time.monotonic() - t0 < 60):
        time.sleep(0.3)
    return nstat(vm, "IpInReceives") - in0, stat(vm, "rx_dropped") - drop0


def test_drain_delivers_without_allocating(vm):
    """Frames in a stopped channel's ring are delivered although every
    page_pool allocation after the new rings' fails."""
    # page_pool_alloc_netmems() calls of the change itself, no frame
    # waiting: counted as fail_function's space goes down (every call
    # passes while space > 1)
    big = 1 << 30
    vm.sh(f"echo {big} > {FF}/space && echo 100 > {FF}/probability")
    rc, out = set_rx(vm, 256)
    calls = big - ff_read(vm, "space")
    vm.sh(f"echo 0 > {FF}/probability")
    assert rc == 0, f"rx 256 without frames: {out}"
    rc, out = set_rx(vm, 128)
    assert rc == 0, f"back to rx 128: {out}"

    tag = vm.mark()
    vm.dut.fault("rx-irq-hold", count=1, ms=120000)
    frames0 = vm.dut.counters()["rx_frames"]
    in0, drop0 = nstat(vm, "IpInReceives"), stat(vm, "rx_dropped")
    rc, out = vm.sh(f"ip netns exec peer python3 -c \"{SEND_BURST}\"")
    assert rc == 0, out
    written = wait_frames(vm, frames0 + BURST) - frames0
    before = nstat(vm, "IpInReceives") - in0
    # the change's own calls pass, every later one fails
    vm.sh(f"echo {calls + 1} > {FF}/space && echo {TIMES} > {FF}/times && "
          f"echo 100 > {FF}/probability")
    resets = vm.dut.counters()["async_started"]["dma-reset"]
    rc, out = set_rx(vm, 256)
    resets = vm.dut.counters()["async_started"]["dma-reset"] - resets
    failed = TIMES - ff_read(vm, "times")
    vm.sh(f"echo 0 > {FF}/probability && echo -1 > {FF}/times && "
          f"echo 0 > {FF}/space")
    fired = vm.dut.fired("rx-irq-hold")
    vm.dut.clear()              # ends the hold
    delivered, dropped = accounted(vm, in0, drop0, written)
    bad = [ln for ln in vm.dmesg_since(tag) if BAD_DMESG.search(ln)]
    info = (f"{written} frames written to the ring with RX interrupts held "
            f"(fired {fired}), {before} delivered before the change; "
            f"page_pool_alloc_netmems() calls of a change without frames "
            f"{calls}; rx 256 with every later call failing: rc {rc} "
            f"{out.strip()}, DMA channel resets {resets}; calls failed "
            f"{failed}; delivered {delivered}, "
            f"rx_dropped {dropped}; kernel log problems: {bad[:4] or 'none'}")
    print(info)
    assert fired == 1 and written == BURST, info
    assert resets >= 4, "the change switched no ring: " + info
    assert before < 8, "the frames did not wait in the ring: " + info
    assert rc == 0 and not bad, info
    assert failed == 0 and delivered == written and dropped == 0, info


def test_failed_restart_refills_drained_ring(vm):
    """A channel back on the ring it was drained from receives again."""
    rc, out = set_rx(vm, 256)
    assert rc == 0, f"rings of 256: {out}"
    vm.dut.fault("rx-irq-hold", count=1, ms=120000)
    frames0 = vm.dut.counters()["rx_frames"]
    in0, drop0 = nstat(vm, "IpInReceives"), stat(vm, "rx_dropped")
    rc, out = vm.sh(f"ip netns exec peer python3 -c \"{SEND_BURST}\"")
    assert rc == 0, out
    written = wait_frames(vm, frames0 + BURST) - frames0
    vm.dut.fault("rx-swr-head", count=1)
    rc, out = set_rx(vm, 128)
    swr = vm.dut.fired("rx-swr-head")
    vm.dut.clear()
    size = vm.rx_ring_size()
    t0 = time.monotonic()
    while (nstat(vm, "IpInReceives") - in0 < written and
           time.monotonic() - t0 < 60):
        time.sleep(0.3)
    drained = nstat(vm, "IpInReceives") - in0
    frames1 = vm.dut.counters()["rx_frames"]
    r, o = vm.sh(f"ip netns exec peer python3 -c \"{SEND_FLOWS}\"")
    assert r == 0, o
    wait_frames(vm, frames1 + FLOWS)
    t0 = time.monotonic()
    while (nstat(vm, "IpInReceives") - in0 < written + FLOWS and
           time.monotonic() - t0 < 60):
        time.sleep(0.3)
    after = nstat(vm, "IpInReceives") - in0 - drained
    dropped = stat(vm, "rx_dropped") - drop0
    info = (f"{written} frames waiting in the ring; rx 128 with channel "
            f"0's reset failing (fired {swr}): rc {rc} ({out.strip()}), RX "
            f"ring size now {size}; delivered {drained} of the waiting frames, "
            f"then {after} of {FLOWS} flows; rx_dropped {dropped}")
    print(info)
    assert written == BURST and swr == 1 and rc != 0, info
    assert size == 256, info
    assert drained == written and after == FLOWS and dropped == 0, info


def test_shrink_delivers_old_ring_beyond_new_size(vm):
    """The frames an old ring holds are delivered after the channel runs
    its new, smaller ring, and their polls hand the new ring no tail of
    the old one: with rings of 512, LONG frames wait in slots up to LONG
    - 1, beyond the 128 of `ethtool -G rx 128`; every one is delivered,
    none dropped, and the model refused no RX_TAIL outside the new ring
    (desc_errors)."""
    rc, out = set_rx(vm, 512)
    assert rc == 0, f"rings of 512: {out}"
    # fired() counts every hold of the boot
    held0 = vm.dut.fired("rx-irq-hold")
    vm.dut.fault("rx-irq-hold", count=1, ms=120000)
    c0 = vm.dut.counters()
    in0, drop0 = nstat(vm, "IpInReceives"), stat(vm, "rx_dropped")
    rc, out = vm.sh(f"ip netns exec peer python3 -c \"{SEND_LONG}\"")
    assert rc == 0, out
    written = wait_frames(vm, c0["rx_frames"] + LONG) - c0["rx_frames"]
    before = nstat(vm, "IpInReceives") - in0
    rc, out = set_rx(vm, 128)
    c1 = vm.dut.counters()
    fired = vm.dut.fired("rx-irq-hold") - held0
    vm.dut.clear()
    delivered, dropped = accounted(vm, in0, drop0, written)
    errors = vm.dut.counters()["desc_errors"] - c0["desc_errors"]
    resets = (c1["async_started"]["dma-reset"] -
              c0["async_started"]["dma-reset"])
    info = (f"{written} frames waiting in a 512 ring (irq hold fired "
            f"{fired}), {before} delivered before; rx 128: rc {rc} "
            f"({out.strip()}), DMA channel resets {resets}, ring now "
            f"{vm.rx_ring_size()}; delivered {delivered}, rx_dropped "
            f"{dropped}, descriptor errors {errors}")
    print(info)
    assert fired == 1 and written == LONG and before < 8, info
    assert rc == 0 and resets >= 4, info
    assert errors == 0, info
    assert delivered == written and dropped == 0, info
