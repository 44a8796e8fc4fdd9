#!/usr/bin/env python3
"""Guest side of the A/B bench: runs inside the VM (or on a board) as root.

For each repetition it loads module A and module B in turn (ABAB...), brings
the device under test up against the peer (a network namespace in the VM,
or a remote host over ssh on real hardware), runs each cell with iperf3 and
records, per cell: throughput and retransmits (iperf3 -J), guest CPU time,
interrupts of the DUT's vectors, NAPI polls with their work/budget
histogram and the frames they delivered, DMA map/unmap/sync calls and bytes
of the DUT (kernel dma:* tracepoints), and -- when the host answers
snapshot requests in the RPC directory -- the emulator's counters.

One JSON object per line goes to OUT/records.jsonl.
"""

import argparse
import collections
import glob
import json
import os
import re
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")
# Each entry: the tracepoint, or alternatives of which the kernel has one.
# 6.12 traces DMA mappings as dma_map_page/dma_unmap_page, 7.3 as
# dma_map_phys/dma_unmap_phys; both are counted under the 6.12 name.
EVENTS = ["napi/napi_poll", ("dma/dma_map_page", "dma/dma_map_phys"),
          ("dma/dma_unmap_page", "dma/dma_unmap_phys"),
          "dma/dma_sync_single_for_cpu", "dma/dma_sync_single_for_device",
          "net/netif_receive_skb", "net/napi_gro_receive_entry",
          "page_pool/page_pool_state_hold", "page_pool/page_pool_state_release",
          "kmem/mm_page_alloc"]
EVENT_ALIAS = {"dma_map_phys": "dma_map_page",
               "dma_unmap_phys": "dma_unmap_page"}


def pick_events(exists):
    """The tracepoints to enable, one per EVENTS entry, and the entries of
    which this kernel has none (a counter that would read 0 for want of its
    event, not for want of events)."""
    found, missing = [], []
    for entry in EVENTS:
        alts = (entry,) if isinstance(entry, str) else entry
        have = [e for e in alts if exists(e)]
        if have:
            found.append(have[0])
        else:
            missing.append(" or ".join(alts))
    return found, missing
DUT_IP, PEER_IP = "10.77.0.1", "10.77.0.2"

CELLS = {
    # name: (mtu, direction seen from the DUT, iperf3 client args)
    "tcp-rx-1500": (1500, "rx", ["-P", "4"]),
    "tcp-tx-1500": (1500, "tx", ["-P", "4"]),
    "tcp-rx-9000": (9000, "rx", ["-P", "4"]),
    "tcp-tx-9000": (9000, "tx", ["-P", "4"]),
    "udp-rx-64": (1500, "rx", ["-u", "-l", "64", "-b", "20M"]),
    # a fixed burst of 10 000 datagrams of 64 bytes: the counters' truth test
    "udp-burst": (1500, "rx", ["-u", "-l", "64", "-b", "5M", "-k", "10000"]),
    # trickles, for interrupt moderation: 10 datagrams of 64 bytes one a
    # second, and 3000 a thousand a second
    "udp-trickle": (1500, "rx", ["-u", "-l", "64", "-b", "512", "-k", "10"]),
    "udp-1k": (1500, "rx", ["-u", "-l", "64", "-b", "512k", "-k", "3000"]),
}


def log(msg):
    """MSG on stdout, with the time."""
    print(f"[bench-guest {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def sh(cmd, check=True, **kw):
    """CMD's stdout (a string: through the shell); with CHECK, raise if
    it fails."""
    p = subprocess.run(cmd, shell=isinstance(cmd, str), text=True,
                       capture_output=True, check=False, **kw)
    if check and p.returncode:
        raise RuntimeError(f"{cmd}: rc={p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


def find_if(driver):
    """The first interface whose device DRIVER drives, or None."""
    for d in glob.glob("/sys/class/net/*/device/driver"):
        if os.path.basename(os.readlink(d)) == driver:
            return d.split("/")[4]
    return None


def pci_addr(iface):
    """The PCI address of IFACE's device."""
    return os.path.basename(os.readlink(f"/sys/class/net/{iface}/device"))


class Rpc:
    """Ask the host for emulator counter snapshots through a shared dir."""

    def __init__(self, path):
        self.path = Path(path) if path else None
        self.n = 0

    def snapshot(self, reset=False):
        """The host's snapshot of the emulator's counters (RESET: zeroed
        after it), or None."""
        if not self.path:
            return None
        self.n += 1
        req = self.path / f"req-{self.n}.json"
        resp = self.path / f"resp-{self.n}.json"
        tmp = self.path / f".req-{self.n}.tmp"
        tmp.write_text(json.dumps({"reset": reset}))
        tmp.rename(req)
        for _ in range(200):
            if resp.exists():
                try:
                    return json.loads(resp.read_text())
                except json.JSONDecodeError:
                    pass
            time.sleep(0.05)
        log("no answer from the host for emulator counters")
        return None


class ConsoleRpc:
    """Rpc for a guest without a directory shared with the host (the ARMv7
    guest, lab/bench/bench.py --arch armv7): a request is a console line
    "LAN743X-RPC N reset=0|1", which the host answers by reading (and
    resetting) the emulator's counters over QMP and keeping them; the guest
    waits LAN743X_RPC_MARGIN seconds (default 2) for that, without an
    acknowledgement, and records the placeholder {"console_rpc": N} that
    the host replaces with the counters (merge_console_rpc)."""

    PREFIX = "LAN743X-RPC"

    def __init__(self):
        self.n = 0
        self.margin = float(os.environ.get("LAN743X_RPC_MARGIN", "2"))

    def snapshot(self, reset=False):
        """Ask the host on the console; the placeholder it replaces."""
        self.n += 1
        print(f"{self.PREFIX} {self.n} reset={int(reset)}", flush=True)
        time.sleep(self.margin)
        return {"console_rpc": self.n}


class EchoFile:
    """A records file whose every line is also printed on the console with
    a prefix, for a host that reads the records from there (ARM guest)."""

    PREFIX = "LAN743X-REC "

    def __init__(self, f):
        self.f = f

    def write(self, text):
        """Write TEXT, and print each of its lines on the console."""
        self.f.write(text)
        for line in text.splitlines():
            print(self.PREFIX + line, flush=True)

    def flush(self):
        """Flush the file."""
        self.f.flush()


class Tracer:
    """The trace events (and traced functions) of a cell, counted."""

    # function tracer lines: "<task>-<pid> [cpu] flags ts: FUNC <-CALLER"
    funcs = ()
    FUNC_LINE = re.compile(r"\[(\d+)\]\s+\S+\s+[\d.]+: (\w+) <-(\S+)\s*$")

    def __init__(self, dut, pci, funcs=()):
        """funcs: kernel functions whose calls the function tracer counts
        along with the events (e.g. arch_sync_dma_for_device on ARM)."""
        self.dut, self.pci, self.funcs = dut, pci, tuple(funcs)
        self.hist = None        # hist_start()
        self.ok = TRACEFS.joinpath("events").exists()
        if not self.ok:
            sh("mount -t tracefs nodev /sys/kernel/tracing", check=False)
            self.ok = TRACEFS.joinpath("events").exists()
        self.events, missing = pick_events(
            lambda e: TRACEFS.joinpath("events", e).exists())
        if self.ok and missing:
            # napi_gro_receive_entry and the page_pool event may be
            # missing on a kernel without them; the DMA events may not
            dma = [m for m in missing if m.startswith("dma/")]
            if dma:
                sys.exit("bench_guest: no tracepoint " + ", ".join(dma) +
                         " in this kernel: its DMA counts would read 0")
            log("note: no tracepoint " + ", ".join(missing))

    def start(self):
        """Clear the trace buffer and start tracing."""
        if not self.ok:
            return
        (TRACEFS / "tracing_on").write_text("0")
        (TRACEFS / "buffer_size_kb").write_text(
            os.environ.get("LAN743X_TRACE_KB", "65536"))
        if self.funcs:
            # switching the tracer clears the buffer: before the clear
            (TRACEFS / "set_ftrace_filter").write_text(" ".join(self.funcs))
            if (TRACEFS / "current_tracer").read_text().strip() != \
                    "function":
                (TRACEFS / "current_tracer").write_text("function")
        (TRACEFS / "trace").write_text("")
        for e in self.events:
            (TRACEFS / "events" / e / "enable").write_text("1")
        self.hist_start()
        (TRACEFS / "tracing_on").write_text("1")

    # Page allocations attributed by call stack: an in-kernel histogram of
    # kmem:mm_page_alloc keyed by stack and order, so an allocation counts
    # as the driver's only when lan743x is on its stack (its RX refill);
    # the stack's own page frags (TCP, iperf3) are not ours.
    HIST = "hist:keys=common_stacktrace,order:vals=hitcount:size=8192"

    def hist_start(self):
        """Start the page allocations' stack histogram (if the kernel has
        hist triggers)."""
        self.hist = HistTrigger("kmem/mm_page_alloc", self.HIST)
        if self.hist.trig.exists():
            err = self.hist.start()
            if err:
                log(f"note: no stack histogram of page allocations ({err})")

    def hist_stop(self):
        """The driver's page allocations by order, or None."""
        text = self.hist.stop()
        return None if text is None else driver_orders(text)

    def stop(self):
        """Stop tracing: the counts of the trace (parse())."""
        if not self.ok:
            return {}
        (TRACEFS / "tracing_on").write_text("0")
        driver_allocs = self.hist_stop()
        for e in self.events:
            (TRACEFS / "events" / e / "enable").write_text("0")
        overrun = 0
        for st in glob.glob(str(TRACEFS / "per_cpu/cpu*/stats")):
            m = re.search(r"overrun: (\d+)",
                          Path(st).read_text(encoding="utf-8"))
            overrun += int(m.group(1)) if m else 0
        out = self.parse((TRACEFS / "trace").read_text(errors="replace"),
                         overrun)
        if driver_allocs is not None:
            out["driver_page_allocs"] = driver_allocs
        return out

    def parse(self, text, overrun):
        """Count the trace TEXT's events (and functions) of the DUT."""
        r = collections.Counter()
        hist = collections.Counter()
        per_poll = []  # frames delivered per poll, per CPU
        pending = collections.Counter()
        orders = collections.Counter()
        callers = collections.Counter()
        for line in text.splitlines():
            if line.startswith("#"):
                continue
            f = self.FUNC_LINE.search(line) if self.funcs else None
            if f and f.group(2) in self.funcs:
                r[f"fn_{f.group(2)}_calls"] += 1
                callers[f"{f.group(2)}<-{f.group(3)}"] += 1
                continue
            m = re.search(r"\[(\d+)\].*?\s(\w+): (.*)$", line)
            if not m:
                continue
            cpu, ev, rest = m.group(1), m.group(2), m.group(3)
            if ev == "napi_poll":
                mm = re.search(r"device (\S+) work (\d+) budget (\d+)", rest)
                if not mm or mm.group(1) != self.dut:
                    continue
                work, budget = int(mm.group(2)), int(mm.group(3))
                r["napi_polls"] += 1
                r["napi_work"] += work
                if budget:
                    hist[min(10, work * 10 // budget)] += 1
                    r["napi_full_budget"] += work >= budget
                per_poll.append(pending[cpu])
                pending[cpu] = 0
            elif ev in ("netif_receive_skb", "napi_gro_receive_entry"):
                if f"dev={self.dut} " in rest + " " or \
                        f"dev={self.dut}" in rest:
                    r["rx_skbs_" + ev] += 1
                    pending[cpu] += 1
            elif ev.startswith("dma_"):
                if not rest.startswith(self.pci + " "):
                    continue
                mm = re.search(r"dir=(\w+) .*?size=(\d+)", rest)
                if not mm:
                    continue
                key = f"{EVENT_ALIAS.get(ev, ev)}_{mm.group(1).lower()}"
                r[key + "_calls"] += 1
                r[key + "_bytes"] += int(mm.group(2))
            elif ev == "page_pool_state_hold":
                r["page_pool_hold"] += 1
            elif ev == "page_pool_state_release":
                r["page_pool_release"] += 1
            elif ev == "mm_page_alloc":
                mm = re.search(r"order=(\d+)", rest)
                if mm:
                    orders[int(mm.group(1))] += 1
        out = dict(r)
        out["napi_hist_tenths"] = {str(k): v for k, v in sorted(hist.items())}
        out["frames_per_poll_max"] = max(per_poll) if per_poll else 0
        out["page_alloc_orders_global"] = {str(k): v for k, v
                                           in sorted(orders.items())}
        out["trace_overrun"] = overrun
        if self.funcs:
            for fn in self.funcs:
                out.setdefault(f"fn_{fn}_calls", 0)
            out["fn_callers"] = dict(sorted(callers.items()))
        return out


def irq_counts(dut, pci):
    """The DUT's interrupts: (total, per IRQ line)."""
    total = 0
    per = {}
    for line in Path("/proc/interrupts").read_text(
            encoding="utf-8").splitlines()[1:]:
        if dut not in line and pci not in line and "lan743x" not in line:
            continue
        parts = line.split()
        nums = [int(x) for x in parts[1:] if x.isdigit()]
        n = sum(nums[:os.cpu_count()])
        per[parts[0].rstrip(":") + ":" + parts[-1]] = n
        total += n
    return total, per


def sysstat(dev, name):
    """DEV's interface statistic NAME."""
    return int(Path(f"/sys/class/net/{dev}/statistics/{name}").read_text(
        encoding="utf-8"))


def cpu_ticks():
    """(busy, total) CPU ticks of the guest since boot."""
    f = Path("/proc/stat").read_text(
        encoding="utf-8").splitlines()[0].split()[1:]
    v = [int(x) for x in f]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def ethtool_stats(dut):
    """ethtool -S counters of DUT as a dict."""
    out = sh(["ethtool", "-S", dut], check=False)
    st = {}
    for line in out.splitlines()[1:]:
        if ":" in line:
            k, v = line.rsplit(":", 1)
            try:
                st[k.strip()] = int(v)
            except ValueError:
                pass
    return st


class Net:
    """The DUT and its peer: a netns in the VM, or ssh to a remote host."""

    def __init__(self, dut, peer_if, remote):
        self.dut, self.peer_if, self.remote = dut, peer_if, remote

    def peer(self, cmd):
        """CMD run on the peer (its netns, or ssh)."""
        if self.remote:
            return ["ssh", "-o", "BatchMode=yes", self.remote,
                    " ".join(shlex.quote(c) for c in cmd)]
        return ["ip", "netns", "exec", "peer"] + cmd

    def setup(self):
        """Move the peer's interface into its netns and address it."""
        if not self.remote:
            sh("ip netns del peer", check=False)
            sh("ip netns add peer")
            sh(["ip", "link", "set", self.peer_if, "netns", "peer"])
            sh(["ip", "-n", "peer", "addr", "add", PEER_IP + "/24", "dev",
                self.peer_if])
            sh(["ip", "-n", "peer", "link", "set", self.peer_if, "up"])
            sh(["ip", "-n", "peer", "link", "set", "lo", "up"])

    def set_mtu(self, mtu):
        """Set the MTU of both ends (the DUT only with a remote peer). With
        LAN743X_BENCH_MTU_AT_UP=1 the DUT's MTU changes while it is down,
        so that every RX ring is allocated at that MTU, as on a board that
        comes up with it (a live change may leave a driver's idle rings
        with the buffers of the old MTU until they receive)."""
        now = int(Path(f"/sys/class/net/{self.dut}/mtu").read_text(
            encoding="utf-8"))
        if os.environ.get("LAN743X_BENCH_MTU_AT_UP") == "1" and now != mtu:
            sh(["ip", "link", "set", self.dut, "down"])
            sh(["ip", "link", "set", self.dut, "mtu", str(mtu)])
            self.dut_up()
        else:
            sh(["ip", "link", "set", self.dut, "mtu", str(mtu)])
        if self.remote:
            return
        sh(["ip", "-n", "peer", "link", "set", self.peer_if, "mtu", str(mtu)])

    def dut_up(self):
        """Address the DUT, bring it up; whether the peer answers."""
        sh(["ip", "addr", "flush", "dev", self.dut], check=False)
        sh(["ip", "addr", "add", DUT_IP + "/24", "dev", self.dut])
        sh(["ip", "link", "set", self.dut, "up"])
        for _ in range(100):
            if "Link detected: yes" in sh(["ethtool", self.dut], check=False):
                break
            time.sleep(0.1)
        for _ in range(30):
            if subprocess.run(["ping", "-c1", "-W1", PEER_IP],
                              capture_output=True, check=False).returncode == 0:
                return True
        return False


class HistTrigger:
    """An in-kernel histogram (hist trigger) on one trace event: set by
    start(), read and removed by stop()."""

    def __init__(self, event, spec):
        self.trig = TRACEFS / "events" / event / "trigger"
        self.spec = spec
        self.on = False

    def start(self):
        """Set the trigger; None, or the OSError if the kernel refused."""
        try:
            self.trig.write_text(self.spec)
        except OSError as e:
            return e
        self.on = True
        return None

    def stop(self):
        """The histogram's text, or None if start() did not set it."""
        if not self.on:
            return None
        text = (self.trig.parent / "hist").read_text(errors="replace")
        try:
            self.trig.write_text("!" + self.spec)
        except OSError:
            pass
        self.on = False
        return text


# an entry of a hist trigger keyed by order: "order: N } hitcount: M"
ORDER_HITS = re.compile(r"order:\s*(\d+)\s*}\s*hitcount:\s*(\d+)")


def pages_of(text):
    """Pages (order-0 units) in the text of a hist trigger keyed by
    order."""
    return sum(int(n) << int(o) for o, n in ORDER_HITS.findall(text or ""))


def driver_orders(text):
    """Allocations with lan743x on the stack, by order, from the text of a
    Tracer.HIST histogram."""
    driver = collections.Counter()
    for block in text.split("\n{ ")[1:]:
        mo = ORDER_HITS.search(block)
        if mo and "lan743x" in block:
            driver[mo.group(1)] += int(mo.group(2))
    dropped = re.search(r"Dropped:\s*(\d+)", text)
    return {"orders": dict(driver),
            "dropped": int(dropped.group(1)) if dropped else None}


PP_HOLD = "hist:keys=common_pid:vals=hitcount"


def driver_kib_during(fn):
    """Run fn(); return (its result, KiB of pages allocated with lan743x on
    the stack meanwhile, KiB of pages that entered a page_pool meanwhile),
    None where the kernel has no hist triggers. page_pool fills its cache
    with alloc_pages_bulk(), which does not fire kmem:mm_page_alloc, so its
    pages are counted by page_pool:page_pool_state_hold instead."""
    allocs = HistTrigger("kmem/mm_page_alloc", Tracer.HIST)
    hold = HistTrigger("page_pool/page_pool_state_hold", PP_HOLD)
    if allocs.start():
        return fn(), None, None
    hold.start()
    try:
        res = fn()
    finally:
        text = allocs.stop()
        htext = hold.stop()
    page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
    orders = driver_orders(text)["orders"]
    held = None if htext is None else page_kib * sum(
        int(n) for n in re.findall(r"hitcount:\s*(\d+)", htext))
    return (res, sum(n * (page_kib << int(o)) for o, n in orders.items()),
            held)


def free_kib():
    """Free memory in KiB from /proc/vmstat (free pages), after a settle."""
    sh(["sync"], check=False)
    time.sleep(0.5)
    for line in Path("/proc/vmstat").read_text(encoding="utf-8").splitlines():
        k, v = line.split()
        if k == "nr_free_pages":
            return int(v) * os.sysconf("SC_PAGE_SIZE") // 1024
    raise RuntimeError("no nr_free_pages in /proc/vmstat")


def load_module(path):
    """insmod PATH (after rmmod): the lan743x interface's name."""
    sh(["rmmod", "lan743x"], check=False)
    sh(["insmod", path])
    for _ in range(50):
        # udev may rename the interface right after it appears
        if shutil.which("udevadm"):     # not in the ARM guest's rootfs
            sh(["udevadm", "settle", "-t", "5"], check=False)
        if find_if("lan743x"):
            return find_if("lan743x")
        time.sleep(0.1)
    raise RuntimeError(f"no lan743x interface after insmod {path}")


PROFILE_CELLS = ("tcp-rx-1500", "tcp-rx-9000", "udp-rx-64")


def profile_cell(net, name, secs, out):
    """perf profile of the whole guest while one cell runs (not timed)."""
    mtu, direction, args = CELLS[name]
    net.set_mtu(mtu)
    srv = subprocess.Popen(["iperf3", "-s", "-1", "-B", DUT_IP]
                           if direction == "rx" else
                           net.peer(["iperf3", "-s", "-1", "-B", PEER_IP]),
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    data = out.with_suffix(".data")
    perf = subprocess.Popen(["perf", "record", "-a", "-g", "-F", "499",
                             "-o", str(data)],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    client = (net.peer(["iperf3", "-c", DUT_IP, "-t", str(secs)] + args)
              if direction == "rx" else
              ["iperf3", "-c", PEER_IP, "-t", str(secs)] + args)
    subprocess.run(client, capture_output=True, timeout=secs + 60, check=False)
    perf.send_signal(2)
    perf.wait(timeout=60)
    if srv.poll() is None:
        srv.kill()
    rep = sh(["perf", "report", "-i", str(data), "--stdio", "--no-children",
              "--sort", "sym", "-g", "none", "--percent-limit", "0.5"],
             check=False)
    out.write_text(rep)
    data.unlink(missing_ok=True)


def run_cell(net, name, secs, tracer, rpc, dut, pci):
    """Measure cell NAME for SECS s: its record."""
    mtu, direction, args = CELLS[name]
    net.set_mtu(mtu)
    srv = subprocess.Popen(
        (["iperf3", "-s", "-1", "-B", DUT_IP] if direction == "rx"
         else net.peer(["iperf3", "-s", "-1", "-B", PEER_IP])),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    dur = [] if "-k" in args else ["-t", str(secs)]
    client = (net.peer(["iperf3", "-c", DUT_IP, "-J"] + dur + args)
              if direction == "rx" else
              ["iperf3", "-c", PEER_IP, "-J"] + dur + args)
    rpc.snapshot(reset=True)
    irq0, _ = irq_counts(dut, pci)
    st0 = ethtool_stats(dut)
    c0 = {"rx": sysstat(dut, "rx_packets"), "tx": sysstat(dut, "tx_packets"),
          "rx_bytes": sysstat(dut, "rx_bytes")}
    busy0, tot0 = cpu_ticks()
    tracer.start()
    p = subprocess.run(client, text=True, capture_output=True,
                       timeout=secs + 60, check=False)
    trace = tracer.stop()
    busy1, tot1 = cpu_ticks()
    irq1, _ = irq_counts(dut, pci)
    st1 = ethtool_stats(dut)
    emu1 = rpc.snapshot()
    if srv.poll() is None:
        srv.wait(timeout=10)
    if srv.poll() is None:
        srv.kill()
    rec = {"cell": name, "mtu": mtu, "dir": direction}
    try:
        j = json.loads(p.stdout)
        end = j["end"]
        udp = j["start"]["test_start"]["protocol"] == "UDP"
        if not udp:
            rec["mbit_s"] = end["sum_received"]["bits_per_second"] / 1e6
            rec["retransmits"] = end["sum_sent"].get("retransmits", 0)
        else:
            rec["mbit_s"] = end["sum"]["bits_per_second"] / 1e6
            rec["udp_lost_percent"] = end["sum"].get("lost_percent")
            rec["udp_packets"] = end["sum"].get("packets")
    except (ValueError, KeyError) as e:
        rec["error"] = f"iperf3 output unusable: {e}: {p.stderr[-300:]}"
    rx_pk = sysstat(dut, "rx_packets") - c0["rx"]
    tx_pk = sysstat(dut, "tx_packets") - c0["tx"]
    rec["packets"] = rx_pk if direction == "rx" else tx_pk
    rec["rx_frames"], rec["tx_frames"] = rx_pk, tx_pk
    rec["irqs"] = irq1 - irq0
    rec["rx_bytes"] = sysstat(dut, "rx_bytes") - c0["rx_bytes"]
    rec["cpu_busy_ticks"] = busy1 - busy0
    rec["cpu_total_ticks"] = tot1 - tot0
    rec["trace"] = trace
    rec["ethtool_delta"] = {k: v - st0.get(k, 0) for k, v in st1.items()
                            if v != st0.get(k, 0)}
    if emu1:
        rec["emulator"] = emu1
    return rec


def mem_up(f, net, rep, name, tag):
    """Record the memory the driver takes at `ip link set up` (MTU 1500):
    RX/TX rings and RX buffers of every channel."""
    free0 = free_kib()
    up, drv_kib, pp_kib = driver_kib_during(net.dut_up)
    if not up:
        log(f"{name}: peer unreachable, cell skipped")
    free1 = free_kib()
    f.write(json.dumps({"cell": "mem-up", "mtu": 1500,
                        "dir": "up", "packets": 0,
                        "mem_up_kib": free0 - free1,
                        "driver_pages_up_kib": drv_kib,
                        "page_pool_up_kib": pp_kib,
                        "rep": rep, "module": name,
                        "tag": tag}) + "\n")
    f.flush()
    log(f"  {name}: ip link set up took {free0 - free1} KiB "
        f"(pages allocated by lan743x: {drv_kib} KiB, "
        f"pages into its page_pools: {pp_kib} KiB)")


def pool_pages(dut):
    """{page_pool id: pages it holds} of DUT's page_pools, from netlink
    (page-pool-get's inflight: pages taken from the page allocator and not
    given back, those on the ring, in the pool's caches and still in the
    stack); None without LAN743X_YNL (a kernel tree's tools/net/ynl)."""
    ynl = os.environ.get("LAN743X_YNL")
    if not ynl:
        return None
    cli = [c for c in (f"{ynl}/pyynl/cli.py", f"{ynl}/cli.py")
           if Path(c).exists()]
    spec = Path(ynl, "../../../Documentation/netlink/specs/netdev.yaml")
    if not cli or not spec.exists():
        raise RuntimeError(f"LAN743X_YNL={ynl}: no ynl cli.py or netdev spec")
    out = sh(["python3", cli[0], "--no-schema", "--spec", str(spec),
              "--dump", "page-pool-get", "--output-json"])
    ifindex = int(Path(f"/sys/class/net/{dut}/ifindex").read_text(
        encoding="utf-8"))
    return {p["id"]: p.get("inflight", 0) for p in json.loads(out)
            if p.get("ifindex") == ifindex}


def link_down(dut):
    """`ip link set DUT down`, as a netlink request of this process
    (RTM_NEWLINK, IFF_UP cleared), so that what the kernel frees meanwhile
    is freed in this process's context and no other process's exit is in
    the count."""
    ifindex = int(Path(f"/sys/class/net/{dut}/ifindex").read_text(
        encoding="utf-8"))
    ifi = struct.pack("=BBHiII", socket.AF_UNSPEC, 0, 0, ifindex, 0, 1)
    hdr = struct.pack("=IHHII", 16 + len(ifi), 16, 1 | 4, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as nl:
        nl.send(hdr + ifi)
        ack = nl.recv(4096)
    err = struct.unpack_from("=i", ack, 16)[0]
    if err:
        raise RuntimeError(f"{dut} down: {os.strerror(-err)}")


def shrink_slabs():
    """Have every SLUB cache give its empty slabs back to the page
    allocator (/sys/kernel/slab/*/shrink); the number of caches shrunk."""
    n = 0
    for f in sorted(Path("/sys/kernel/slab").glob("*/shrink")):
        try:
            f.write_text("1", encoding="utf-8")
            n += 1
        except OSError:
            pass
    return n


def pinned_after(rec, net, dut):
    """After a TCP RX cell: the pages the interface holds, per RX queue,
    counted as the pages freed while it goes down (kmem:mm_page_free in a
    hist trigger by order, filtered to this process, which takes it down
    with a netlink request): its RX buffers, the pages a page_pool keeps
    cached for reuse (it refills its cache with the pages the stack gives
    back, so after traffic it can hold more than at up) and the descriptor
    rings. For the series also its pools' inflight pages before the down
    (netlink), a second count of the pool's share. The interface is
    brought up again.

    Buffers from kmalloc() (upstream's first fill, GFP_KERNEL, takes
    skb heads from the kmalloc-2k slab at MTU 1500) are freed into their
    slab, which gives its page back only when it is empty and shrunk. So
    the slab caches are shrunk before the down (outside the count) and
    again right after it, counted apart: the pages of slabs the down
    emptied (slab_pages_freed_after_down). Pages still shared with other
    users (a slab not empty, a page fragment cache's current page) stay
    uncounted."""
    if not rec["cell"].startswith("tcp-rx") or "error" in rec:
        return
    pools = pool_pages(dut)
    spec = ("hist:keys=order:vals=hitcount"
            f" if common_pid == {os.getpid()}")
    shrink_slabs()
    hist = HistTrigger("kmem/mm_page_free", spec)
    if hist.start():
        return
    try:
        link_down(dut)
    finally:
        text = hist.stop()
    hist = HistTrigger("kmem/mm_page_free", spec)
    slab = None
    if not hist.start():
        try:
            shrink_slabs()
        finally:
            slab = pages_of(hist.stop())
    net.dut_up()
    pages = pages_of(text)
    queues = len(list(Path(f"/sys/class/net/{dut}/queues").glob("rx-*")))
    rec["freed_at_down_pages"] = pages
    rec["rx_queues"] = queues
    rec["pages_pinned_per_queue"] = pages / queues if queues else None
    if slab is not None:
        rec["slab_pages_freed_after_down"] = slab
        rec["pages_pinned_with_slab_per_queue"] = (
            (pages + slab) / queues if queues else None)
    if pools:
        rec["pool_pages"] = pools


def main():
    """Measure the cells of each module, REPS times; write the records."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--module", action="append", required=True,
                    help="NAME=PATH of a lan743x.ko; two for A/B")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--rpc", help="directory the host answers in, or "
                    "'console' (ConsoleRpc: no shared directory)")
    ap.add_argument("--echo-records", action="store_true",
                    help="print each record on stdout too (EchoFile)")
    ap.add_argument("--ftrace", default="",
                    help="comma list of kernel functions whose calls the "
                    "function tracer counts (e.g. arch_sync_dma_for_device,"
                    "arch_sync_dma_for_cpu)")
    ap.add_argument("--remote", help="ssh destination of the peer (boards)")
    ap.add_argument("--tag", default="", help="label, e.g. swiotlb=force")
    ap.add_argument("--profiles", action=argparse.BooleanOptionalAction,
                    default=True, help="a perf profile per module of the "
                    "cells in PROFILE_CELLS, after the repetitions")
    args = ap.parse_args()
    mods = [m.split("=", 1) for m in args.module]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rpc = ConsoleRpc() if args.rpc == "console" else Rpc(args.rpc)
    # lan743x's dependencies (phylink & co) from the kernel's module tree
    moddir = os.environ.get("LAN743X_MODDIR")
    dflag = ["-d", moddir] if moddir and Path(moddir, "lib").exists() else []
    sh(["modprobe"] + dflag + ["lan743x"], check=False)
    sh(["rmmod", "lan743x"], check=False)
    peer_if = None if args.remote else find_if("virtio_net")
    if not args.remote and not peer_if:
        sys.exit("error: no virtio-net peer interface found in the guest")
    cells = [c for c in args.cells.split(",") if c]
    bad = [c for c in cells if c not in CELLS]
    if bad:
        sys.exit(f"error: unknown cells {bad}; known: {list(CELLS)}")
    # Resume: what an earlier boot of this run already recorded (same tag)
    # is kept and not measured again; the host re-boots the VM after a
    # guest crash and the bench goes on at the repetition it lost.
    done = set()
    if (out / "records.jsonl").exists():
        kept = []
        for line in (out / "records.jsonl").read_text(
                encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                log(f"dropping a record cut by a crash: {line[:80]}")
                continue
            kept.append(line)
            if r.get("tag") == args.tag:
                done.add((r.get("rep"), r.get("module"), r.get("cell")))
        (out / "records.jsonl").write_text("".join(x + "\n" for x in kept),
                                           encoding="utf-8")
    if done:
        log(f"resuming: {len(done)} records of tag {args.tag!r} kept")
    # LAN743X_BENCH_CRASH_AT=REP[:oops]: the lab's tests of a crash at
    # repetition REP: as the int3 of text patching under TCG (its oops
    # line in the kernel log first, the one crash the bench retries), or
    # ":oops" any other (a result: the bench fails)
    crash_at, _, crash_kind = os.environ.get(
        "LAN743X_BENCH_CRASH_AT", "").partition(":")
    first = True
    # one progress line per cell measured: "cell K/N" of this run
    ncells = args.reps * len(mods) * len(cells)
    k = len([d for d in done if d[2] != "mem-up"])
    t0 = time.time()
    with open(out / "records.jsonl", "a", encoding="utf-8") as rf:
        f = EchoFile(rf) if args.echo_records else rf
        for rep in range(1, args.reps + 1):
            for name, path in mods:
                todo = [c for c in cells if (rep, name, c) not in done]
                if not todo and (rep, name, "mem-up") in done:
                    continue
                marker = out / f"crashed-{args.tag.replace('=', '-')}-{rep}"
                if crash_at == str(rep) and not marker.exists():
                    # lab test of the resume: crash the guest kernel once
                    marker.write_text("injected\n", encoding="utf-8")
                    log(f"LAN743X_BENCH_CRASH_AT={rep}: crashing the guest")
                    if crash_kind != "oops":
                        Path("/dev/kmsg").write_text(
                            "<0>Oops: int3: 0000 [#1] PREEMPT SMP NOPTI "
                            "(injected by the lab)\n", encoding="utf-8")
                    Path("/proc/sysrq-trigger").write_text("c", encoding="utf-8")
                dut = load_module(path)
                ring = re.search(r"\+ring([0-9]+)", name)
                if ring:
                    sh(["ethtool", "-G", dut, "rx", ring.group(1)])
                cb = re.search(r"\+cb([0-9]+)", name)
                if cb:
                    sh(["ethtool", "--set-tunable", dut, "rx-copybreak",
                        cb.group(1)])
                rxus = re.search(r"\+rxus([0-9]+)", name)
                if rxus:
                    sh(["ethtool", "-C", dut, "adaptive-rx", "off",
                        "rx-usecs", rxus.group(1)])
                if re.search(r"\+dim(\+|$)", name):
                    sh(["ethtool", "-C", dut, "adaptive-rx", "on"])
                pci = pci_addr(dut)
                net = Net(dut, peer_if, args.remote)
                if first:
                    net.setup()
                    first = False
                # memory the driver takes at `ip link set up` (MTU 1500):
                # RX/TX rings and RX buffers of every channel
                sh(["ip", "link", "set", dut, "mtu", "1500"])
                if (rep, name, "mem-up") in done:
                    net.dut_up()
                else:
                    mem_up(f, net, rep, name, args.tag)
                tracer = Tracer(dut, pci, [x for x in args.ftrace.split(",")
                                           if x])
                for cell in todo:
                    rec = run_cell(net, cell, args.secs, tracer, rpc, dut, pci)
                    rec.update(rep=rep, module=name, tag=args.tag)
                    pinned_after(rec, net, dut)
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
                    k += 1
                    log(f"cell {k}/{ncells} ({int(time.time() - t0)} s): "
                        f"{args.tag + ' ' if args.tag else ''}rep "
                        f"{rep}/{args.reps} {name} {cell}: "
                        f"{rec.get('mbit_s', 0):.1f} Mbit/s, "
                        f"{rec['packets']} pkts, {rec['irqs']} irqs"
                        + (f" ERROR {rec['error']}" if "error" in rec else ""))
    # a perf profile per module, after the measured repetitions so that
    # perf's own cost is in none of them
    if args.profiles and shutil.which("perf"):
        for name, path in mods:
            dut = load_module(path)
            net = Net(dut, peer_if, args.remote)
            net.dut_up()
            for cell in [c for c in cells if c in PROFILE_CELLS]:
                dest = out / f"perf-{args.tag or 'default'}-{name}-{cell}.txt"
                log(f"perf profile {name} {cell} -> {dest.name}")
                profile_cell(net, cell, args.secs, dest)
    elif args.profiles:
        log("note: no perf in the guest, no profiles")
    log("done")


if __name__ == "__main__":
    main()
