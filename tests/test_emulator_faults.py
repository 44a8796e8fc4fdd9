"""The LAN7430 model's wire pacing and fault injection, driven over QMP
(lab/vm/qmp.py) against the UNMODIFIED upstream lan743x module in the lab VM.

One VM for the whole module (boot ~15-30 s under TCG); total ~2-3 min.
Skips (with the reason) when vng, the QEMU build or the guest kernel are not
available.  emulator/tests/fault-evidence.py records the same and more in
detail; emulator/README.md ("Fault injection") has the resulting table.
"""
import sys
import time

import pytest

from conftest import ROOT, VM_STACKS, lab_built, stack_env, vm_inputs

sys.path.insert(0, str(ROOT / "emulator/tests"))
from vmrpc import VM, VMError  # noqa: E402

GOODPUT = 0.9415        # TCP/IPv4 goodput per wire bit at MTU 1500 (1448/1538)
# How far above the wire rate an honest model may measure over a 5 s
# iperf3 window, as a fraction:
# - iperf3 measures at the receiving application, which reads in chunks of
#   up to 128 KB: one read more or less in the window is 128 KB against
#   5 s x 47 Mbit/s, ~0.44%;
# - the model hands a frame over up to rate-burst-us (4 ms) before its
#   wire time ends, and after a late pacing timer makes up to
#   rate-catchup-us (10 ms) of lost wire time (emulator/lan7430.c
#   l7_wire_start()/l7_wire_book()): at most 14 ms more wire time in any
#   window, 0.28% of 5 s (a 0.56% excess was measured on a host shared by
#   three TCG VMs, beyond the read chunk alone).
# The model's wire time itself is exact (qtests rate-tx/rate-rx).
MEASURE_SECS = 5
MEASURE_TOL = (128 * 1024 * 8 / (MEASURE_SECS * GOODPUT * 50e6) +
               (4000 + 10000) / (MEASURE_SECS * 1e6))




@pytest.fixture(scope="module", params=VM_STACKS[:1])
def stack(request):
    """The model's faults against the upstream driver: one base is enough
    (the emulator is the subject here, and the RX path the faults hit is
    the same in 6.12 and 7.3); the series' fault tests run on every stack."""
    return request.param


@pytest.fixture(scope="module")
def vm(stack):
    qemu, obj = vm_inputs(stack)
    ko = lab_built(f"the {stack} base's lan743x module",
                   ["bash", "lab/kernel/kbuild.sh", "module", "guest", "base"],
                   env=stack_env(stack))
    try:
        v = VM(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
               mods=f"{obj}/mods", ko=ko)
    except VMError as e:
        pytest.fail("the lab VM did not boot: %s" % str(e)[-800:],
                    pytrace=False)
    try:
        v.setup_net()
        # the faults fire on the next N frames: make those the replies
        v.pin_neighbours()
        yield v
    finally:
        v.close()


def run_fault(vm, name, traffic, **kw):
    """Arm fault NAME, run traffic(vm), clear; returns (traffic result,
    guest/model deltas, dmesg lines)."""
    tag = vm.mark()
    a = vm.snapshot()
    vm.dut.fault(name, **kw)
    res = traffic(vm)
    b = vm.snapshot()
    vm.dut.clear()
    d = vm.delta(a, b)
    dmesg = [l for l in vm.dmesg_since(tag) if "l7-fault-mark" not in l]
    # the device must work again once the fault is gone
    time.sleep(0.3)
    after = vm.ping(count=3, interval=0.2, wait=2)
    assert after["recv"] == 3, "no recovery after %s: %s" % (name, after)
    return res, d, dmesg


def ping20(vm):
    return vm.ping(count=20, interval=0.05, wait=1)


def driver_counted(d):
    """Did the driver itself account the bad frame (the series does)?"""
    s = d["stat"]
    return any(s.get(k, 0) > 0 for k in ("rx_length_errors", "rx_dropped",
                                         "rx_errors", "rx_frame_errors"))


# ---- pacing --------------------------------------------------------------

def _iperf_at(vm, rate, reverse=False, secs=MEASURE_SECS):
    vm.dut.rate(rate)
    try:
        return vm.iperf(secs=secs, reverse=reverse)
    finally:
        vm.dut.rate(1000)


@pytest.mark.parametrize("reverse", [False, True], ids=["tx", "rx"])
def test_pacing_50mbit_is_honest(vm, reverse):
    """iperf3 TCP at rate=50 lands within 90-100% of the goodput limit.
    Above 100% (+ MEASURE_TOL) fails at once: the model outran the wire.
    Below 90% is retried once: on a shared 2-core host the TCG guest can be
    starved for whole seconds, time in which it produced nothing to pace."""
    limit = GOODPUT * 50
    for attempt in (1, 2):
        mbps = _iperf_at(vm, 50, reverse)
        print("rate=50 %s (attempt %d): %.2f Mbit/s = %.2f%% of %.2f (%s)" %
              ("rx" if reverse else "tx", attempt, mbps, 100 * mbps / limit,
               limit, vm.last_iperf))
        assert mbps <= (1.00 + MEASURE_TOL) * limit, mbps
        if mbps >= 0.90 * limit:
            break
    assert 0.90 * limit <= mbps <= (1.00 + MEASURE_TOL) * limit, mbps


def test_unpaced_is_measurably_faster(vm):
    mbps = _iperf_at(vm, 0, secs=4)
    print("unpaced tx: %.1f Mbit/s" % mbps)
    assert mbps > 1.3 * GOODPUT * 50, mbps


# ---- faults --------------------------------------------------------------

def test_rx_len_short(vm):
    p, d, _ = run_fault(vm, "rx-len-short", ping20, count=5)
    assert d["model"]["fault_fired"] == {"rx-len-short": 5}
    # upstream: skb trimmed to the bogus length, IP drops it as truncated
    assert driver_counted(d) or d["nstat"].get("IpExtInTruncatedPkts", 0) == 5, d
    assert p["recv"] == 15, p


def test_rx_len_zero(vm):
    p, d, _ = run_fault(vm, "rx-len-zero", ping20, count=5)
    assert d["model"]["fault_fired"] == {"rx-len-zero": 5}
    # upstream: a 0-byte skb goes up the stack, IP counts a header error
    assert driver_counted(d) or d["nstat"].get("IpInHdrErrors", 0) == 5, d
    assert p["recv"] == 15, p


def test_drop_ls(vm):
    p, d, _ = run_fault(vm, "drop-ls", ping20, count=5)
    assert d["model"]["fault_fired"] == {"drop-ls": 5}
    # With the neighbours pinned the only RX frames are the 20 replies, so
    # the fault hits exactly 5 of them. Upstream frees each unterminated
    # frame when the next first segment arrives, silently (no counter
    # anywhere): exactly those 5 replies are lost, not more, not fewer.
    assert driver_counted(d) or p["recv"] == 15, (p, d)


def test_spurious_irq(vm):
    p, d, dmesg = run_fault(vm, "spurious-irq",
                            lambda v: (time.sleep(1), ping20(v))[1],
                            count=400, vectors=0x3F, period_us=1000)
    assert d["model"]["fault_fired"] == {"spurious-irq": 400}
    assert sum(d["model"]["irq_spurious_per_vector"]) == 400
    # the guest took them (per-vector /proc/interrupts) and kept working
    assert sum(d["irq"].values()) >= 400, d["irq"]
    assert p["recv"] == 20, p
    assert not [l for l in dmesg if "nobody cared" in l or "BUG" in l], dmesg


def test_rx_stall(vm):
    p, d, _ = run_fault(vm, "rx-stall", ping20, count=1, ms=500)
    assert d["model"]["fault_fired"] == {"rx-stall": 1}
    assert d["model"].get("rx_fault_holds", 0) >= 1
    # frames wait (backpressure), none is lost: the RTT shows the stall
    assert p["recv"] == 20 and p["rtt_min_avg_max"][2] >= 400, p


def test_link_flap(vm):
    p, d, dmesg = run_fault(vm, "link-flap",
                            lambda v: v.ping(count=40, interval=0.1, wait=1),
                            count=1, down_ms=2000)
    assert d["model"]["fault_fired"] == {"link-flap": 1}
    assert d["stat"].get("carrier_changes", 0) >= 2, d["stat"]
    assert any("Link is Down" in l for l in dmesg), dmesg
    assert any("Link is Up" in l for l in dmesg), dmesg


# ---- finite RX FIFO (issue 15) ---------------------------------------------

def test_fifo_overflow_is_rx_dropped(vm):
    """A stalled RX DMA (rx-stall, 300 ms) in front of a 12 KiB RX FIFO and
    a link partner that ignores pause frames (peer-pause=0): the FIFO keeps
    what fits (8 replies of 1442 bytes), the rest overflows.  The model
    counts each overflow in STAT_RX_DROPPED_FRAMES, which the driver reports
    as rx_dropped: exactly the replies ping lost."""
    vm.dut.knob("rx-fifo-kib", 12)
    vm.dut.knob("peer-pause", 0)
    try:
        p, d, dmesg = run_fault(
            vm, "rx-stall",
            lambda v: v.ping(count=60, interval=0.005, size=1400, wait=2),
            count=1, ms=300)
    finally:
        vm.dut.knob("rx-fifo-kib", 32)
        vm.dut.knob("peer-pause", 1)
    m = d["model"]
    over = sum(m.get("rx_fifo_overflow", [0]))
    info = "ping %s; model %s; stat %s" % (p, m, d["stat"])
    print(info)
    assert m["fault_fired"] == {"rx-stall": 1}, info
    assert over > 0, info
    assert sum(m.get("rx_fifo_queued", [0])) >= 12 * 1024 // 1446, info
    assert d["stat"].get("rx_dropped", 0) == over, info
    # the same MAC counter through ethtool -S
    assert d["ethtool"].get("RX Dropped Frames", 0) == over, info
    assert p["sent"] - p["recv"] == over, info
    assert not [l for l in dmesg if "BUG" in l or "WARNING" in l], dmesg


def test_fifo_with_pause_loses_nothing(vm):
    """The same stall with the partner honouring pause frames (default):
    XOFF at the driver's FCT_FLOW ON level, the partner waits, XON after the
    drain; no reply lost, no rx_dropped."""
    vm.dut.knob("rx-fifo-kib", 32)
    p, d, dmesg = run_fault(
        vm, "rx-stall",
        lambda v: v.ping(count=60, interval=0.005, size=1400, wait=2),
        count=1, ms=300)
    m = d["model"]
    info = "ping %s; model %s; stat %s" % (p, m, d["stat"])
    print(info)
    assert m["fault_fired"] == {"rx-stall": 1}, info
    assert sum(m.get("rx_fifo_overflow", [0])) == 0, info
    assert d["stat"].get("rx_dropped", 0) == 0, info
    assert p["recv"] == p["sent"], info
    # pause frames sent (if the FIFO reached the ON level) are what the
    # driver's ethtool -S shows
    assert d["ethtool"].get("TX Pause Frames", 0) == \
        m.get("tx_pause_frames", 0), info
