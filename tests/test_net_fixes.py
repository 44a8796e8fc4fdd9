"""The fixes of patches/net/, and the hardening that opens
patches/net-next-1/, against the LAN7430 model, in one VM boot per base: on
Linux 7.3 (base + patches/net/ + the first patch of patches/net-next-1/)
and on 6.12 (the backport, whose first three patches are the same changes
in the same order: base + patches/6.12/ 1-3, so that the backport is
tested on its own).

The module under test has them (`lab/kernel/kbuild.sh module guest
series:3` with STACK=net-next-1, `... series:3` with STACK=6.12) unless
LAN743X_NET_FIXES_MODULE=base
selects the base's unmodified module (`... module guest base`): every test
below must pass with the fixes and fail without them, which that setting
shows.

* test_ext_missing_keeps_the_ring (net-next-1 patch "don't lose an RX
  descriptor on a missing extension"): the model's `ext-missing` fault sets EXT in the
  last descriptor of one echo reply and writes no extension descriptor
  after it.  The driver drops that frame; upstream also leaves its
  descriptor owned by the CPU, so once the model wraps around the ring to
  it, the channel takes no frame any more.  Asserted from the counters:
  the model wrote every one of the PINGS replies to the ring and the
  kernel received all of them but the faulted one (IcmpInEchoReps, not
  ping's timing-dependent reply count); ping works afterwards.

* test_partial_frame_freed_at_close (patch "free the partly received
  frame when the ring is freed"): `drop-ls` leaves LS out of one echo
  reply, so the driver holds it in rx->skb_head waiting for its last
  buffer, then the interface goes down.  The skbs the driver frees while
  it goes down are counted with the skb:consume_skb and skb:kfree_skb
  tracepoints (location in the lan743x module): exactly one more than in
  a reference down/up without a pending frame (the ring buffers are the
  same in both).  Upstream frees the same number both times: the partial
  frame is leaked (or freed later by the next first buffer after up).

* The dma_rmb() patch has no test: x86 (TCG) reads the coherent rings in
  program order, so no emulated run can tell the barrier's presence.

Neighbours are static and IPv6 is off on both ends, so the only frames the
DUT receives are the replies to what the tests send.

Kernel and modules come from the lab (vm_inputs(stack), lab_built); for a
run with a kernel built outside the lab, LAN743X_NET_FIXES_OBJ=<kernel
build dir with mods/> and LAN743X_NET_FIXES_KO=<lan743x.ko> override them
(LAN743X_NET_FIXES_STACKS=net-next-1 runs one base only).
"""
import os
import re
import time

import pytest
from conftest import (
    HANG_S,
    ROOT,
    echo_replies,
    guest_module,
    net_vm,
    qemu_build,
    vm_inputs,
    wait_until,
)

#: stack -> the module with the fixes: on 7.3 the net stack's fixes and
#: the first patch of net-next-1 (series:N of the net-next-1 chain, N = the
#: net fixes + 1); the 6.12 backport starts with the same three patches
NET_FIXES = len([p for p in (ROOT / "patches/net").glob("0*.patch")
                 if not p.name.startswith("0000-")])
FIXED = {"net-next-1": f"series:{NET_FIXES + 1}", "6.12": "series:3"}
STACKS = [s for s in os.environ.get("LAN743X_NET_FIXES_STACKS",
                                    "net-next-1,6.12").split(",") if s]
MODULE = os.environ.get("LAN743X_NET_FIXES_MODULE", "")
PINGS = 200         # > RX ring size (128): the ring wraps around the fault
BAD_DMESG = re.compile(r"WARNING|BUG|DMA-API|Call Trace|refcount_t|"
                       r"general protection|use-after-free", re.IGNORECASE)

# guest side of the close test: count the skbs freed from lan743x code
# while the interface goes down, then bring it back up
DOWN_COUNT = r'''
. /tmp/l7.env
T=/sys/kernel/tracing
[ -e $T/events/skb ] || mount -t tracefs nodev $T || exit 1
echo 0 > $T/tracing_on
echo 4096 > $T/buffer_size_kb
echo > $T/trace
echo 1 > $T/events/skb/consume_skb/enable
echo 1 > $T/events/skb/kfree_skb/enable
echo 1 > $T/tracing_on
ip link set $D down
echo 0 > $T/tracing_on
echo 0 > $T/events/skb/consume_skb/enable
echo 0 > $T/events/skb/kfree_skb/enable
echo "lost $(cat $T/per_cpu/cpu*/stats | awk '/^overrun/ {s += $2} END {print s + 0}')"
echo "freed $(grep -c 'location=.*\[lan743x\]' $T/trace)"
grep 'location=.*\[lan743x\]' $T/trace | sed 's/.*location=//; s/+0x.*\[/ [/' |
    sort | uniq -c | sed 's/^/where /'
echo > $T/trace
ip link set $D up
for i in $(seq 100); do [ "$(cat /sys/class/net/$D/carrier)" = 1 ] && break; sleep 0.1; done
'''


def modules(stack, module):
    """(QEMU, kernel build dir, lan743x.ko under test)"""
    obj = os.environ.get("LAN743X_NET_FIXES_OBJ")
    if obj:
        qemu = qemu_build()
    else:
        qemu, obj = vm_inputs(stack)
    ko = os.environ.get("LAN743X_NET_FIXES_KO")
    if not ko:
        ko = guest_module(stack, module)
    return qemu, obj, ko


@pytest.fixture(scope="module", params=STACKS, name="vm")
def fixture_vm(request):
    """A booted VM per stack, the module under test loaded, the network up
    and the neighbours pinned."""
    stack = request.param
    module = MODULE or FIXED[stack]
    qemu, obj, ko = modules(stack, module)
    print(f"{stack}: module under test ({module}): {ko}")
    with net_vm(qemu, obj, ko) as v:
        yield v


def model(vm, *keys):
    """The model's counters KEYS."""
    c = vm.dut.counters()
    return {k: c[k] for k in keys}


def test_ext_missing_keeps_the_ring(vm):
    """An RX frame without its extension descriptor is dropped and the
    ring keeps working (see the module's docstring)."""
    keys = ("rx_frames", "rx_no_desc_stalls")
    a, reps_a = model(vm, *keys), echo_replies(vm)
    vm.dut.set("fault-ext-missing", 1)
    p = vm.ping(count=PINGS, interval=0.02, wait=1)
    # replies late for ping still count below: the model has written them
    # all, the kernel has counted all it will (all but the one without
    # extension descriptor); a lost reply shows as the hang's failure
    wait_until(f"the model wrote {PINGS} replies",
               lambda: model(vm, "rx_frames")["rx_frames"] - a["rx_frames"]
               >= PINGS)
    wait_until(f"the kernel counted {PINGS - 1} replies",
               lambda: echo_replies(vm) - reps_a >= PINGS - 1)
    b, reps_b = model(vm, *keys), echo_replies(vm)
    fired = vm.dut.fired()
    vm.dut.clear()
    d = {k: b[k] - a[k] for k in keys}
    reps = reps_b - reps_a
    info = (f"ping {p['summary']}; model {d}; IcmpInEchoReps +{reps}; "
            f"fired {fired}")
    print(info)
    assert fired.get("ext-missing") == 1, info
    # the device found a descriptor for every reply: none was lost
    assert d["rx_frames"] == PINGS, \
        f"model wrote {d['rx_frames']} of {PINGS} replies to the ring: {info}"
    # and the driver passed up all of them but the one without extension
    assert reps == PINGS - 1, info
    after = vm.ping(count=3, interval=0.2, wait=2, deadline=HANG_S)
    assert after["recv"] == 3, f"ring stuck after ext-missing: {after}"


def down_count(vm):
    """Take the interface down and up: the skbs lan743x freed going down
    and where; re-pins the neighbours."""
    rc, out = vm.sh(DOWN_COUNT, timeout=180)
    assert rc == 0, out
    freed = int(re.search(r"^freed (\d+)", out, re.MULTILINE).group(1))
    lost = int(re.search(r"^lost (\d+)", out, re.MULTILINE).group(1))
    where = re.findall(r"^where +(.*)$", out, re.MULTILINE)
    assert lost == 0, f"trace buffer overran: {out}"
    vm.pin_neighbours()     # ifdown flushed the static entries
    return freed, where


def test_partial_frame_freed_at_close(vm):
    """A frame held without its last buffer is freed when the interface
    goes down (see the module's docstring)."""
    # the same steps before each counted close: a fresh up, the
    # neighbours pinned, one echo request, its TX completion
    down_count(vm)
    # reference: no frame pending at close
    vm.ping(count=1, wait=1)
    time.sleep(1)
    ref, ref_where = down_count(vm)
    # one echo reply written back without LS: held in rx->skb_head
    vm.dut.fault("drop-ls", count=1)
    p = vm.ping(count=1, wait=1)
    time.sleep(1)
    fired = vm.dut.fired()
    vm.dut.clear()
    got, got_where = down_count(vm)
    info = (f"skbs freed by lan743x going down: {got} with a partial frame "
            f"pending, {ref} without (fired {fired}, ping {p['summary']})\n"
            f"  with: {got_where}\n  without: {ref_where}")
    print(info)
    assert fired.get("drop-ls") == 1, info
    assert ref > 0, info
    assert got - ref == 1, "partial frame not freed at close: " + info
    after = vm.ping(count=3, interval=0.2, wait=2, deadline=HANG_S)
    assert after["recv"] == 3, after


def test_no_warnings(vm):
    """No warning, BUG or DMA-API report in the kernel log since loading."""
    dmesg = vm.dmesg_since(vm.load_mark)
    bad = [line for line in dmesg if BAD_DMESG.search(line)]
    assert not bad, bad
