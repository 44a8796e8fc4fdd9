#!/usr/bin/env python3
"""UDP stream peer -> DUT at 1000 pkt/s with sequence numbers through N MTU
changes 1500 <-> 9000; per change: lost packets and the longest arrival
gap in the 0.6 s around it."""
import socket, statistics, subprocess, sys, threading, time
dut, ns, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
PORT = 9999
rs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rs.bind(("192.0.2.1", PORT))
rs.settimeout(1.0)
SENDER = r"""
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + float(sys.argv[1]); seq = 0; t0 = time.monotonic()
while time.monotonic() < end:
    s.sendto(struct.pack("!Q", seq) + bytes(56), ("192.0.2.1", 9999))
    seq += 1
    nxt = t0 + seq * 0.001
    d = nxt - time.monotonic()
    if d > 0: time.sleep(d)
print(seq)
"""
dur = 6 + n * 0.6 + 6
snd = subprocess.Popen(["ip", "netns", "exec", ns, "python3", "-c", SENDER, str(dur)],
                       stdout=subprocess.PIPE)
arr = []
stop = False
def rx():
    while not stop:
        try:
            b = rs.recv(2048)
        except socket.timeout:
            continue
        arr.append((time.monotonic(), int.from_bytes(b[:8], "big")))
th = threading.Thread(target=rx); th.start()
while not arr:
    time.sleep(0.1)
time.sleep(1.0)
changes = []
mtu = 1500
for i in range(n):
    mtu = 9000 if mtu == 1500 else 1500
    t0 = time.monotonic()
    subprocess.run(["ip", "link", "set", "dev", dut, "mtu", str(mtu)], check=True)
    t1 = time.monotonic()
    changes.append((t0, t1))
    time.sleep(0.6 - (t1 - t0) if t1 - t0 < 0.6 else 0)
sent = int(snd.communicate()[0])
time.sleep(0.5); stop = True; th.join()
got = set(s for _, s in arr)
print(f"sent {sent} received {len(arr)} lost {sent - len(got)}")
gaps, losts, cmdt = [], [], []
for t0, t1 in changes:
    w = [(t, s) for t, s in arr if t0 - 0.1 <= t <= t1 + 0.5]
    if len(w) < 2:
        continue
    g = max(b[0] - a[0] for a, b in zip(w, w[1:]))
    lost = (w[-1][1] - w[0][1] + 1) - len(set(s for _, s in w))
    gaps.append(g * 1000); losts.append(lost); cmdt.append((t1 - t0) * 1000)
base = [(b[0] - a[0]) * 1000 for a, b in zip(arr, arr[1:]) if b[0] < changes[0][0] - 0.1]
print(f"changes {len(gaps)}; baseline gap before changes: max {max(base):.1f} ms")
print(f"lost per change: median {statistics.median(losts)} max {max(losts)} total {sum(losts)}")
print(f"longest gap per change (ms): median {statistics.median(gaps):.1f} max {max(gaps):.1f}")
print(f"ip link set mtu duration (ms): median {statistics.median(cmdt):.1f} max {max(cmdt):.1f}")
print("losts", losts)
print("gaps", [round(g, 1) for g in gaps])
