#!/usr/bin/env python3
"""Outage of live MTU changes, run in the guest by lab/guest/outage.sh.

A UDP stream of RATE packets/s with sequence numbers goes from the peer
(network namespace NS) to the DUT through N MTU changes 1500 <-> 9000,
GAP s apart. Per change: packets lost and the longest arrival gap in
[start - 0.1 s, end + 0.5 s] of `ip link set mtu`, the command's duration
and the receive-closed window: from the first register write that closes
the receive path (MAC_RX with RXEN clear, or FCT_RX_CTL with a channel's
disable bit) to the last one that opens it again (MAC_RX with RXEN set,
or FCT_RX_CTL with a channel's enable bit), from a kprobe on
lan743x_csr_write() (x86_64 argument registers).

usage: outage.py DUT NS N [RATE] [GAP]   prints one JSON object
"""
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

MAC_RX, FCT_RX_CTL = 0x104, 0xAC
TR = Path("/sys/kernel/tracing")
SENDER = r"""
import socket, struct, sys, time
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


def kprobe_on():
    """Trace MAC_RX and FCT_RX_CTL writes; False if kprobes are missing."""
    try:
        (TR / "trace_clock").write_text("mono")
        (TR / "kprobe_events").write_text(
            "p:lanw/csr lan743x:lan743x_csr_write off=%si:s32 val=%dx:u32\n")
        ev = TR / "events/lanw/csr"
        (ev / "filter").write_text(f"off == {MAC_RX} || off == {FCT_RX_CTL}")
        (TR / "trace").write_text("")
        (ev / "enable").write_text("1")
        return True
    except OSError as e:
        print(f"outage.py: no receive-window probe: {e}", file=sys.stderr)
        return False


def kprobe_events():
    """(time, offset, value) of the traced writes, then remove the probe."""
    (TR / "events/lanw/csr/enable").write_text("0")
    out = []
    for line in (TR / "trace").read_text().splitlines():
        if "csr:" not in line or line.startswith("#"):
            continue
        f = line.split()
        t = float(next(x for x in f if x.endswith(":") and "." in x)[:-1])
        kv = dict(x.split("=") for x in f if "=" in x)
        out.append((t, int(kv["off"], 0), int(kv["val"], 0)))
    (TR / "kprobe_events").write_text("")
    return out


def closes(off, val):
    return (off == MAC_RX and not val & 1) or \
        (off == FCT_RX_CTL and val & (0xF << 24))


def opens(off, val):
    return (off == MAC_RX and val & 1) or \
        (off == FCT_RX_CTL and val & (0xF << 28))


def window(evs, t0, t1):
    """ms the receive path was closed during one change, 0 if never."""
    start = end = None
    for t, off, val in evs:
        if not t0 <= t <= t1:
            continue
        if closes(off, val) and start is None:
            start = t
        if opens(off, val) and start is not None:
            end = t
    return 0.0 if start is None or end is None else (end - start) * 1000


def main():
    dut, ns, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rate = float(sys.argv[4]) if len(sys.argv) > 4 else 1000
    gap = float(sys.argv[5]) if len(sys.argv) > 5 else 0.6
    rs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rs.bind(("0.0.0.0", 9999))
    rs.settimeout(1.0)
    dut_ip = subprocess.run(["ip", "-4", "-br", "addr", "show", "dev", dut],
                            capture_output=True, text=True,
                            check=True).stdout.split()[2].split("/")[0]
    dur = 3 + n * gap * 1.5 + 10
    snd = subprocess.Popen(["ip", "netns", "exec", ns, "python3", "-c",
                            SENDER, str(dur), str(rate), dut_ip],
                           stdout=subprocess.PIPE)
    arr, stop = [], [False]

    def rx():
        while not stop[0]:
            try:
                b = rs.recv(2048)
            except socket.timeout:
                continue
            arr.append((time.monotonic(), int.from_bytes(b[:8], "big")))

    th = threading.Thread(target=rx)
    th.start()
    while not arr:
        time.sleep(0.1)
    probed = kprobe_on()
    time.sleep(2.0)
    changes, mtu = [], 1500
    for _ in range(n):
        mtu = 9000 if mtu == 1500 else 1500
        t0 = time.monotonic()
        subprocess.run(["ip", "link", "set", "dev", dut, "mtu", str(mtu)],
                       check=True)
        t1 = time.monotonic()
        changes.append((t0, t1))
        time.sleep(max(0, gap - (t1 - t0)))
    evs = kprobe_events() if probed else []
    snd.terminate()
    snd.wait()
    time.sleep(0.5)
    stop[0] = True
    th.join()
    res = {"changes": n, "rate": rate, "received": len(arr),
           "lost": [], "gap_ms": [], "cmd_ms": [], "window_ms": []}
    for t0, t1 in changes:
        w = [(t, s) for t, s in arr if t0 - 0.1 <= t <= t1 + 0.5]
        if len(w) < 2:
            res["lost"].append(None)
            continue
        res["gap_ms"].append(max(b[0] - a[0] for a, b in zip(w, w[1:])) * 1000)
        res["lost"].append((w[-1][1] - w[0][1] + 1) - len({s for _, s in w}))
        res["cmd_ms"].append((t1 - t0) * 1000)
        if probed:
            res["window_ms"].append(window(evs, t0, t1))
    base = [(b[0] - a[0]) * 1000 for a, b in zip(arr, arr[1:])
            if b[0] < changes[0][0] - 0.1]
    res["baseline_gap_ms_max"] = max(base) if base else None
    for k in ("lost", "gap_ms", "cmd_ms", "window_ms"):
        v = [x for x in res[k] if x is not None]
        if v:
            res[k + "_median"] = statistics.median(v)
            res[k + "_max"] = max(v)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
