"""An MTU change whose frames fit the current RX buffers keeps the rings.

The series' lan743x module (net-next-2 stack) in one VM boot, the MTU
changed live under a paced UDP stream from the peer (64-byte datagrams,
about 1000 a second, the one traffic the DUT receives: neighbours are
static and IPv6 is off on both ends):

* 1500 -> 9000 needs longer buffers: each RX channel gets a new page_pool
  (netdev netlink page-pool-get ids of the interface) from which its ring
  is refilled, and keeps its ring: no RX DMA channel is reset (the
  model's async "dma-reset" count), every frame written is delivered.
  Then, from rings of 1500 again and with no other traffic, jumbo pings
  from the peer arrive while they span several of the old short buffers,
  and the old pool of the channel that received them goes once the
  ring holds none of its buffers.
* 9000 -> 8000, 8000 -> 9000 and 9000 -> 1500 fit the buffers allocated
  for 9000: no DMA channel is reset, the page_pool ids stay the same, and
  every frame the model wrote to the rings meanwhile is delivered
  (IpInReceives), none found no descriptor, none overflowed the FIFO.
  Frames the MAC drops while its receiver is briefly disabled to take
  the new maximum frame size (as the upstream driver does at every MTU
  change) are printed, not judged.
* ethtool -G rx replaces the rings again at the current MTU: the control,
  which shows that the two witnesses see a replacement (a DMA channel
  reset per channel, new page_pools).
* 8000 -> 9000 from rings allocated at 8000: a whole-page buffer holds
  the frames of every MTU its page order allows (order 2 for both with
  4 KiB pages), so the rings are kept, with the same checks.

The v3 series compared the buffer length exactly, so every one of these
changes replaced the rings: LAN743X_MTU_KEEP_REV=v3 runs the same checks
on the v3 module (lab.conf V3_REV), where the kept-ring checks fail.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, guest_module, lab_built, lab_vm, stack_env, vm_inputs

sys.path.insert(0, str(ROOT / "emulator/tests"))
from vmrpc import DUT_IP

STACK = "net-next-2"
REV = os.environ.get("LAN743X_MTU_KEEP_REV", "series")
RATE_N = 1500           # datagrams of the stream around one change
PINGS = 100             # jumbo pings across the old buffers
BAD_DMESG = re.compile(r"WARNING|BUG|DMA-API|Call Trace|refcount_t|"
                       r"general protection|use-after-free", re.IGNORECASE)
# the peer's paced stream: RATE_N datagrams about 1 ms apart
STREAM = ("import socket, time; s = socket.socket(2, 2)\n"
          f"for _ in range({RATE_N}):\n"
          f"    s.sendto(b'x' * 64, ('{DUT_IP}', 9999)); time.sleep(0.001)\n")
POOLS = r'''
import json, sys
sys.path.insert(0, sys.argv[1] + "/pyynl")
from lib import YnlFamily
ynl = YnlFamily(sys.argv[1] + "/netdev.yaml", "")
mine = [p for p in ynl.dump("page-pool-get", {})
        if p.get("ifindex") == int(sys.argv[2])]
# a destroyed pool stays listed, detached, until its pages in flight
# return: it is no longer one the interface refills from
print("detached:", sorted(p["id"] for p in mine if "detach-time" in p))
print(json.dumps(sorted(p["id"] for p in mine if "detach-time" not in p)))
'''
DROPS = ("rx_drop_no_desc", "rx_drop_fifo_reset")


@pytest.fixture(scope="module", name="vm")
def fixture_vm():
    """A booted VM with the module of REV, the network up, the neighbours
    pinned and the kernel's ynl library at hand."""
    qemu, obj = vm_inputs(STACK)
    env = stack_env(STACK)
    ko = guest_module(STACK, REV)
    src = lab_built(f"the {STACK} source tree",
                    ["bash", "lab/kernel/kbuild.sh", "srcrepo"], env=env)
    with lab_vm(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
                mods=f"{obj}/mods", ko=ko) as v:
        d = Path(v.rw) / "ynl"
        d.mkdir()
        p = subprocess.run(
            f"git -C '{src}' archive base tools/net/ynl/pyynl "
            f"Documentation/netlink/specs/netdev.yaml | tar -x -C '{d}'",
            shell=True, capture_output=True, text=True, check=False)
        assert p.returncode == 0, f"ynl from {src}: {p.stderr}"
        (d / "tools/net/ynl/pyynl").rename(d / "pyynl")
        (d / "Documentation/netlink/specs/netdev.yaml").rename(
            d / "netdev.yaml")
        (d / "pools.py").write_text(POOLS, encoding="utf-8")
        (d / "stream.py").write_text(STREAM, encoding="utf-8")
        v.ynl_dir = str(d)
        v.load_mark = v.mark()
        v.setup_net()
        v.pin_neighbours()
        _rc, out = gsh(v, "cat /sys/class/net/$D/ifindex")
        v.ifindex = int(out.strip())
        yield v


def gsh(vm, cmd, timeout=240):
    """vm.sh() of CMD with the interface names (D, P) set."""
    return vm.sh(". /tmp/l7.env\n" + cmd, timeout=timeout)


def pools(vm):
    """The ids of the DUT's page_pools that are not detached (netdev
    netlink; a destroyed pool with pages in flight stays listed, detached,
    and leaves the list when the last one returns, at any time)."""
    rc, out = vm.sh(f"python3 {vm.ynl_dir}/pools.py {vm.ynl_dir} "
                    f"{vm.ifindex}", timeout=180)
    assert rc == 0, f"page-pool-get: {out}"
    lines = out.strip().splitlines()
    if len(lines) > 1 and lines[-2] != "detached: []":
        print(f"page-pool-get: {lines[-2]}")
    return lines[-1]


def nstat(vm, name):
    """The guest's SNMP counter NAME (nstat)."""
    _rc, out = vm.sh(f"nstat -saz {name} | awk '$1 == \"{name}\" {{print $2}}'")
    return int(out.strip() or 0)


def change(vm, cmd):
    """CMD (a live change) under the peer's paced stream: what the model
    and the guest saw, as a dict."""
    p0, c0, in0 = pools(vm), vm.dut.counters(), nstat(vm, "IpInReceives")
    tag = vm.mark()
    rc, out = gsh(vm, f"ip netns exec peer python3 {vm.ynl_dir}/stream.py & "
                  f"pid=$!; sleep 0.3; {cmd}; echo \"change rc $?\"; "
                  "wait $pid")
    c1 = vm.dut.counters()
    # every frame the model wrote is delivered, or never will be
    for _ in range(200):
        if nstat(vm, "IpInReceives") - in0 >= c1["rx_frames"] - c0["rx_frames"]:
            break
        vm.sh("sleep 0.3")
    r = {
        "cmd": cmd,
        "rc": int(re.search(r"change rc (\d+)", out).group(1))
        if "change rc" in out else rc,
        "out": out.strip()[-300:],
        "dma_resets": c1["async_started"]["dma-reset"] -
        c0["async_started"]["dma-reset"],
        "pools_kept": pools(vm) == p0,
        "written": c1["rx_frames"] - c0["rx_frames"],
        "delivered": nstat(vm, "IpInReceives") - in0,
        "fifo_overflow": sum(c1["rx_fifo_overflow"]) -
        sum(c0["rx_fifo_overflow"]),
        "drop_disabled": c1["rx_drop_disabled"] - c0["rx_drop_disabled"],
        "bad_dmesg": [ln for ln in vm.dmesg_since(tag)
                      if BAD_DMESG.search(ln)][:4],
    }
    for k in DROPS:
        r[k] = c1[k] - c0[k]
    print(f"[{REV}] {r}")
    return r


def test_increase_beyond_the_buffers_keeps_the_rings(vm):
    """1500 -> 9000: new page_pools, no channel reset, every frame written
    delivered, none without a descriptor."""
    r = change(vm, "ip link set $D mtu 9000")
    _rc, now = gsh(vm, "cat /sys/class/net/$D/mtu")
    assert r["rc"] == 0 and int(now) == 9000 and not r["bad_dmesg"], r
    assert r["written"] > 0, r
    assert r["dma_resets"] == 0 and not r["pools_kept"], r
    assert r["delivered"] == r["written"], r
    assert r["fifo_overflow"] == 0 and all(r[k] == 0 for k in DROPS), r


def test_jumbo_frames_span_the_old_buffers(vm):
    """From rings of 1500, 1500 -> 9000 with no traffic, then PINGS pings
    of 8000 bytes from the peer: the first ones fill several old buffers
    each; all are answered, no length error, and the channel that took
    them (the model's counts) loses its old pool: one pool fewer."""
    rc, out = vm.mtu_new_rings(1500)
    assert rc == 0, out
    rc, out = gsh(vm, "ip link set $D mtu 9000 && "
                  "ip netns exec peer ip link set $P mtu 9000")
    assert rc == 0, out
    before = json.loads(pools(vm))
    c0 = vm.dut.counters()
    _rc, err0 = gsh(vm, "cat /sys/class/net/$D/statistics/rx_length_errors")
    rc, out = gsh(vm, f"ip netns exec peer ping -q -c {PINGS} -i 0.02 "
                  f"-s 8000 -M do {DUT_IP}")
    c1 = vm.dut.counters()
    per_ch = [b - a for a, b in zip(c0["rx_frames_per_channel"],
                                    c1["rx_frames_per_channel"])]
    _rc, err1 = gsh(vm, "cat /sys/class/net/$D/statistics/rx_length_errors")
    # the destroy runs from a work item: give it a moment
    for _ in range(20):
        after = json.loads(pools(vm))
        if len(after) < len(before):
            break
        vm.sh("sleep 0.5")
    info = (f"pools {before} -> {after}; per channel {per_ch}; "
            f"rx_length_errors {err0.strip()} -> {err1.strip()}; "
            f"ping: {out.strip()[-200:]}")
    print(info)
    assert rc == 0 and f"{PINGS} received" in out, info
    assert int(err1) == int(err0), info
    # eight pools: four new, four old; the receiving channel's old goes
    assert len(before) == 8 and len(after) == 7, info
    assert set(after) < set(before), info
    rc, out = vm.mtu_new_rings(9000)
    assert rc == 0, out


@pytest.mark.parametrize("mtu", [8000, 9000, 1500])
def test_change_within_the_buffers_keeps_the_rings(vm, mtu):
    """9000 -> 8000 -> 9000 -> 1500: no channel reset, the same pools,
    every frame written delivered, none without a descriptor."""
    r = change(vm, f"ip link set $D mtu {mtu}")
    _rc, now = gsh(vm, "cat /sys/class/net/$D/mtu")
    assert r["rc"] == 0 and int(now) == mtu and not r["bad_dmesg"], r
    assert r["written"] > 0, r
    assert r["dma_resets"] == 0 and r["pools_kept"], r
    assert r["delivered"] == r["written"], r
    assert r["fifo_overflow"] == 0 and all(r[k] == 0 for k in DROPS), r


def test_ring_size_change_replaces_the_rings(vm):
    """ethtool -G rx replaces the rings at the current MTU."""
    r = change(vm, "ethtool -G $D rx 256")
    assert r["rc"] == 0 and not r["bad_dmesg"], r
    assert r["dma_resets"] >= 4 and not r["pools_kept"], r


def test_increase_within_the_page_order_keeps_the_rings(vm):
    """Rings allocated at 8000 take order-2 pages (4 KiB pages), which
    hold 9000's frames as well: 8000 -> 9000 keeps them, loses nothing."""
    rc, out = vm.mtu_new_rings(8000)
    assert rc == 0, out
    r = change(vm, "ip link set $D mtu 9000")
    _rc, now = gsh(vm, "cat /sys/class/net/$D/mtu")
    assert r["rc"] == 0 and int(now) == 9000 and not r["bad_dmesg"], r
    assert r["written"] > 0, r
    assert r["dma_resets"] == 0 and r["pools_kept"], r
    assert r["delivered"] == r["written"], r
    assert r["fifo_overflow"] == 0 and all(r[k] == 0 for k in DROPS), r
