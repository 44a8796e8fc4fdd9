#!/usr/bin/env python3
"""Outage of live MTU changes, run in the guest by lab/guest/outage.sh.

A UDP stream of RATE packets/s with sequence numbers goes from the peer
(network namespace NS) to the DUT through N live changes, GAP s apart,
as the plan LAN743X_OUTAGE_PLAN says (PLANS; default "1500-9000": the
MTU 1500 <-> 9000 alternately). Per change: packets lost and the longest
arrival gap in [start - 0.1 s, end + 0.5 s] of the change's command, the
command's duration and the window a receive channel was stopped (see
window()), from kprobes. A plan that measures one direction sets the
interface up before each change, outside the measured span: the MTU it
starts from, and rings allocated for it (an RX ring size round trip with
ethtool -G, where the driver has ring sizes: an MTU decrease alone keeps
the rings of the larger MTU).

usage: outage.py --setup                  once per boot, before loading lan743x
       outage.py DUT NS N [RATE] [GAP]   prints one JSON object
"""
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

TR = Path("/sys/kernel/tracing")
SENDER = r"""
import signal, socket, struct, sys, time
def done(*_):
    print(seq, flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rate = float(sys.argv[2]); end = time.monotonic() + float(sys.argv[1])
seq = 0; t0 = time.monotonic()
while time.monotonic() < end:
    s.sendto(struct.pack("!Q", seq) + bytes(56), (sys.argv[3], 9999))
    seq += 1
    d = t0 + seq / rate - time.monotonic()
    if d > 0: time.sleep(d)
print(seq)
"""


#: plan -> (setup before each measured change, the measured change):
#: shell commands with $D the interface; "" none. "rings" in a setup is
#: the RX ring size round trip (rings for the current MTU)
RINGS = ("n=$(ethtool -g $D 2>/dev/null | awk '/^Current/ {c=1} "
         "c && /^RX:/ {print $2}'); [ -z \"$n\" ] || "
         "{ ethtool -G $D rx $((n - 1)) && ethtool -G $D rx $n; }")
PLANS = {
    "1500-9000": None,      # the alternation, every change measured
    "1500to9000": ("ip link set $D mtu 1500; " + RINGS,
                   "ip link set $D mtu 9000"),
    "9000to1500": ("ip link set $D mtu 9000; " + RINGS,
                   "ip link set $D mtu 1500"),
    "8000to9000": ("ip link set $D mtu 8000; " + RINGS,
                   "ip link set $D mtu 9000"),
    "9000to8000": ("ip link set $D mtu 9000; " + RINGS,
                   "ip link set $D mtu 8000"),
    "1500to1400": ("ip link set $D mtu 1500; " + RINGS,
                   "ip link set $D mtu 1400"),
    "1400to1500": ("ip link set $D mtu 1400; " + RINGS,
                   "ip link set $D mtu 1500"),
    "rx128to512": ("ip link set $D mtu 1500; ethtool -G $D rx 128",
                   "ethtool -G $D rx 512"),
    "rx512to128": ("ip link set $D mtu 1500; ethtool -G $D rx 512",
                   "ethtool -G $D rx 128"),
}


PROBES = {"dms": "p lan743x:lan743x_rx_dma_stop",
          "dme": "r lan743x:lan743x_rx_dma_start",
          "rxd": "p lan743x:lan743x_rx_disable",
          "rxe": "r lan743x:lan743x_rx_enable",
          "swi": "p lan743x:lan743x_rx_switch",
          "swo": "r lan743x:lan743x_rx_switch",
          "msi": "p lan743x:lan743x_mac_set_mtu",
          "mso": "r lan743x:lan743x_mac_set_mtu",
          "cmi": "p lan743x:lan743x_netdev_change_mtu",
          "cmo": "r lan743x:lan743x_netdev_change_mtu"}


def kprobes_setup():
    """Register and enable the probes once per boot, before lan743x is
    loaded (probes on a module arm when it loads): every text patch under
    TCG risks an int3 oops in a concurrently running CPU, so they are not
    toggled per run. Returns the probes registered."""
    (TR / "trace_clock").write_text("mono")
    have = []
    for name, spec in PROBES.items():
        kind, sym = spec.split()
        fd = os.open(TR / "kprobe_events", os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, f"{kind}:lanw/{name} {sym}\n".encode())
            have.append(name)
        except OSError as e:
            print(f"outage.py: no probe {name} ({e})", file=sys.stderr)
        finally:
            os.close(fd)
    if have:
        (TR / "events/lanw/enable").write_text("1")
    return have


def kprobe_on():
    """True if kprobes_setup() ran in this boot; clears the trace."""
    if not (TR / "events/lanw/cmi").exists():
        print("outage.py: no lanw probes (outage.py --setup not run)",
              file=sys.stderr)
        return False
    (TR / "trace").write_text("")
    return True


def kprobe_events():
    """(time, probe name) of the probe hits since kprobe_on()."""
    out = []
    for line in (TR / "trace").read_text().splitlines():
        if line.startswith("#"):
            continue
        f = line.split()
        for i, x in enumerate(f):
            if x.endswith(":") and x[:-1] in PROBES and i > 0:
                out.append((float(f[i - 1][:-1]), x[:-1]))
    return out


def window(evs, t0, t1):
    """ms a receive channel was closed during one change, from what the
    probes saw: from the first lan743x_rx_disable() to the return of the
    last lan743x_rx_enable() when the change disabled a channel's FIFO
    (kind "fifo": FIFO and DMA stopped; frames for the channel are
    dropped, the FIFO holds none), else from the first
    lan743x_rx_dma_stop() to the return of the last
    lan743x_rx_dma_start() (kind "dma": DMA stopped, the FIFO keeps
    receiving), else from the first lan743x_rx_switch() to the return of
    the last (kind "switch": a switch that calls neither pair, its FIFO
    off inside it; an upper bound, with the NAPI stop before the FIFO's
    and the delivery of the old ring after), else, when the change did not
    restart the channels, the
    MAC's maximum frame size update, lan743x_mac_set_mtu(), which stops
    and restarts MAC RX (kind "mac"; a module where it is inlined, such as
    upstream's, has no such probe), else the whole ndo_change_mtu call,
    an upper bound (kind "mtu"). The FIFO pair comes
    first: a change that disables the FIFO and then stops the DMA calls
    both, and its receiver is closed from the FIFO's disable, which the
    model's rx_drop_disabled counts. (None, None) if the probes saw no
    call."""
    ev = [(t, n) for t, n in evs if t0 <= t <= t1]
    for start, end, kind in (("rxd", "rxe", "fifo"), ("dms", "dme", "dma"),
                             ("swi", "swo", "switch"), ("msi", "mso", "mac"),
                             ("cmi", "cmo", "mtu")):
        ts = [t for t, n in ev if n == start]
        te = [t for t, n in ev if n == end]
        if ts and te:
            return (max(te) - min(ts)) * 1000, kind
    return None, None


def udp_rcvbuf_errors():
    """Datagrams the kernel dropped because the socket was full."""
    lines = [ln.split() for ln in Path("/proc/net/snmp").read_text(
        encoding="utf-8").splitlines() if ln.startswith("Udp:")]
    return int(dict(zip(lines[0][1:], lines[1][1:]))["RcvbufErrors"])


def ethtool_stats(dut):
    """ethtool -S counters of DUT as a dict."""
    out = subprocess.run(["ethtool", "-S", dut], capture_output=True,
                         text=True, check=False).stdout
    st = {}
    for ln in out.splitlines()[1:]:
        k, _, v = ln.rpartition(":")
        if v.strip().isdigit():
            st[k.strip()] = int(v)
    return st


def main():
    """Set the kprobes up (--setup), or measure and print the outage."""
    if sys.argv[1:] == ["--setup"]:
        sys.exit(0 if kprobes_setup() else 1)
    dut, ns, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rate = float(sys.argv[4]) if len(sys.argv) > 4 else 1000
    gap = float(sys.argv[5]) if len(sys.argv) > 5 else 0.6
    # a receiver starved of CPU must not lose datagrams in its socket
    Path("/proc/sys/net/core/rmem_max").write_text(str(16 << 20),
                                                  encoding="utf-8")
    rs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    sockdrop0 = udp_rcvbuf_errors()
    st0 = ethtool_stats(dut)
    rs.bind(("0.0.0.0", 9999))
    rs.settimeout(1.0)
    dut_ip = subprocess.run(["ip", "-4", "-br", "addr", "show", "dev", dut],
                            capture_output=True, text=True,
                            check=True).stdout.split()[2].split("/")[0]
    # the sender runs until it is stopped after the last change
    dur = 3 + n * (gap * 2 + 10) + 10
    snd = subprocess.Popen(["ip", "netns", "exec", ns, "python3", "-c",
                            SENDER, str(dur), str(rate), dut_ip],
                           stdout=subprocess.PIPE)
    arr, stop = [], [False]

    def rx():
        while not stop[0]:
            try:
                b = rs.recv(2048)
            except TimeoutError:
                continue
            arr.append((time.monotonic(), int.from_bytes(b[:8], "big")))

    th = threading.Thread(target=rx, daemon=True)
    th.start()
    while not arr:
        time.sleep(0.1)
    probed = kprobe_on()
    time.sleep(2.0)
    plan = os.environ.get("LAN743X_OUTAGE_PLAN") or "1500-9000"
    if plan not in PLANS:
        sys.exit(f"outage.py: unknown plan {plan!r} (one of "
                 f"{', '.join(PLANS)})")
    env = dict(os.environ, D=dut)
    changes, mtu, refused = [], 1500, 0
    for _ in range(n):
        if PLANS[plan] is None:
            mtu = 9000 if mtu == 1500 else 1500
            cmd = f"ip link set $D mtu {mtu}"
        else:
            setup, cmd = PLANS[plan]
            subprocess.run(["sh", "-c", setup], env=env, check=False,
                           capture_output=True)
            time.sleep(gap)
        t0 = time.monotonic()
        rc = subprocess.run(["sh", "-c", cmd], env=env, check=False,
                            capture_output=True).returncode
        t1 = time.monotonic()
        if rc:
            refused += 1
        else:
            changes.append((t0, t1))
        time.sleep(max(0, gap - (t1 - t0)))
    if not changes:
        # a result all the same (no change measured, each one refused):
        # a module without the plan's operation (7.3's lan743x has no
        # ethtool -G) is a row of the table, not a failed run
        print(f"outage.py: {dut} refused every change of plan {plan}",
              file=sys.stderr)
    evs = kprobe_events() if probed else []
    time.sleep(0.5)
    snd.terminate()
    # SIGTERM between sendto() and the count's increment undercounts by
    # one: a received sequence number proves that packet was sent
    sent = max(int(snd.communicate()[0] or 0),
               max((q for _, q in arr), default=-1) + 1)
    time.sleep(0.5)
    stop[0] = True
    th.join()
    st1 = ethtool_stats(dut)
    res = {"changes": len(changes), "plan": plan, "refused": refused,
           "rate": rate, "received": len(arr),
           "sent": sent,
           "lost_total": sent - len({s for _, s in arr}),
           "device_drops": {k: v - st0.get(k, 0) for k, v in st1.items()
                            if v != st0.get(k, 0) and
                            any(w in k.lower() for w in
                                ("drop", "err", "miss", "fifo", "discard"))},
           "socket_drops": udp_rcvbuf_errors() - sockdrop0,
           "probe_events": len(evs),
           "lost": [], "gap_ms": [], "cmd_ms": [], "window_ms": [],
           "window_kind": []}
    for t0, t1 in changes:
        w = [(t, s) for t, s in arr if t0 - 0.1 <= t <= t1 + 0.5]
        if len(w) < 2:
            res["lost"].append(None)
            continue
        res["gap_ms"].append(max(b[0] - a[0]
                                  for a, b in itertools.pairwise(w)) * 1000)
        res["lost"].append((w[-1][1] - w[0][1] + 1) - len({s for _, s in w}))
        res["cmd_ms"].append((t1 - t0) * 1000)
        if probed:
            ms, kind = window(evs, t0, t1)
            res["window_ms"].append(ms)
            res["window_kind"].append(kind)
    first = changes[0][0] if changes else float("inf")
    base = [(b[0] - a[0]) * 1000 for a, b in itertools.pairwise(arr)
            if b[0] < first - 0.1]
    res["baseline_gap_ms_max"] = max(base) if base else None
    for k in ("lost", "gap_ms", "cmd_ms", "window_ms"):
        v = [x for x in res[k] if x is not None]
        if v:
            res[k + "_median"] = statistics.median(v)
            res[k + "_max"] = max(v)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
