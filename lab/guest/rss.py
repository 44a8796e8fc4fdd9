#!/usr/bin/env python3
"""Deterministic RSS check: known UDP flows, a fixed key, predicted queues.

iperf3's TCP flows take ephemeral ports the kernel picks, and with a random
key all of them land on one RX queue now and then (8 flows whose ports differ
in a few low bits: about one check in 32 to 64).  So the checks send flows of their own,
from fixed ports, hashed with a fixed key, and compare each RX queue's frame
count with the Toeplitz hash of every flow looked up in the device's
indirection table as `ethtool -x` shows it.

  rss.py key                    the key to give `ethtool -X ... hkey`
  rss.py check DEV NS SRC DST   send the flows from netns NS (SRC) to DST
                                on DEV and compare DEV's "RX Queue n
                                Frames" with the prediction
  rss.py send SRC DST           (in the peer's netns) FLOWS x PER frames

check reads DEV's table (`ethtool -x`) and counters (`ethtool -S`), sends,
and reads the counters again until the prediction holds (WAIT_S at most:
a limit that ends a hang, not a speed, as a busy host delays the count). It
prints one line and exits 0 when every queue that should get flows got at
least its frames, no other queue got more than NOISE frames (ARP and other
stray frames reach queue 0), and at least two queues got flows; 1 when
not; 2 when a command it runs fails.
"""
import ipaddress
import re
import socket
import struct
import subprocess
import sys
import time

# the Microsoft RSS verification key (its hash values are published)
KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b4"
                    "77cb2da38030f20c6a42b73bbeac01fa")
FLOWS = 64              # UDP flows: SPORT + i -> DPORT + i
PER = 8                 # frames per flow
SPORT, DPORT = 40000, 9999
NOISE = 7               # stray frames tolerated on a queue without flows
WAIT_S = 120            # the longest wait for the frames to be counted


def toeplitz(key, data):
    """the Toeplitz hash of data (bytes) with key (bytes), as RSS defines it"""
    k = int.from_bytes(key, "big")
    klen = len(key) * 8
    h = 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                h ^= (k >> (klen - 32 - (i * 8 + b))) & 0xFFFFFFFF
    return h


def flow_input(src, dst, i):
    """hash input of flow i: IPv4 source, destination, then the UDP ports"""
    return (ipaddress.IPv4Address(src).packed +
            ipaddress.IPv4Address(dst).packed +
            struct.pack(">HH", SPORT + i, DPORT + i))


def table(text):
    """the indirection table's entries, in order, from `ethtool -x`"""
    ent = []
    for line in text.splitlines():
        m = re.match(r"\s*(\d+):((\s+\d+)+)\s*$", line)
        if m:
            if int(m.group(1)) != len(ent):
                raise SystemExit("rss.py: indirection table out of order: "
                                 + line)
            ent += [int(x) for x in m.group(2).split()]
    n = len(ent)
    if n == 0 or n & (n - 1):
        raise SystemExit(f"rss.py: indirection table of {n} entries, "
                         "not a power of two")
    return ent


def expect(src, dst, text, nq=4):
    """frames per RX queue the FLOWS x PER frames should add"""
    ent = table(text)
    out = [0] * nq
    for i in range(FLOWS):
        q = ent[toeplitz(KEY, flow_input(src, dst, i)) & (len(ent) - 1)]
        if q >= nq:
            raise SystemExit(f"rss.py: table entry {q}, only {nq} queues")
        out[q] += PER
    return out


def send(src, dst):
    """From SRC, PER datagrams to DST on each of the FLOWS flows."""
    for i in range(FLOWS):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((src, SPORT + i))
        for _ in range(PER):
            s.sendto(b"r" * 32, (dst, DPORT + i))
        s.close()


def judge(before, after, exp):
    """(ok, the line to print) for per-queue counts before/after and the
    prediction exp (lists of ints)"""
    if not len(before) == len(after) == len(exp):
        raise SystemExit("rss.py: queue counts of different lengths")
    d = [y - x for x, y in zip(before, after)]
    bad = [q for q in range(len(exp))
           if (exp[q] and d[q] < exp[q]) or (not exp[q] and d[q] > NOISE)]
    used = sum(1 for x in exp if x)
    ok = not bad and used >= 2
    return ok, (f"{'ok' if ok else 'wrong'}: frames per RX queue {d}, the "
                f"flows' hash predicts {exp}" +
                (f"; queues {bad} differ" if bad else "") +
                ("" if used >= 2 else "; the flows hash to one queue only"))


def verify(before, after, exp):
    """judge() on space-separated counts; prints the line"""
    ok, line = judge(*([int(x) for x in v.split()]
                       for v in (before, after, exp)))
    print(line)
    return ok


def out_of(cmd):
    """CMD's standard output; exits 2 with its stderr if it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode:
        print(f"rss.py: {' '.join(cmd)} failed: {p.stderr.strip()}",
              file=sys.stderr)
        sys.exit(2)
    return p.stdout


def rx_queue_frames(dev, nq=4):
    """DEV's "RX Queue n Frames" of `ethtool -S`, queues 0..nq-1"""
    got = dict(re.findall(r"RX Queue (\d+) Frames: (\d+)",
                          out_of(["ethtool", "-S", dev])))
    if any(str(q) not in got for q in range(nq)):
        raise SystemExit(f"rss.py: ethtool -S {dev} lists no RX Queue "
                         f"0..{nq - 1} Frames")
    return [int(got[str(q)]) for q in range(nq)]


def check(dev, ns, src, dst):
    """Send the flows from NS and judge DEV's RX queue counts against
    the hash's prediction (for WAIT_S at most); prints the line."""
    exp = expect(src, dst, out_of(["ethtool", "-x", dev]))
    before = rx_queue_frames(dev)
    out_of(["ip", "netns", "exec", ns, sys.executable, __file__, "send",
            src, dst])
    end = time.monotonic() + WAIT_S     # until the frames are counted
    while True:
        ok, line = judge(before, rx_queue_frames(dev), exp)
        if ok or time.monotonic() >= end:
            break
        time.sleep(0.5)
    print(line)
    return ok


def main(argv):
    """The command of __doc__: its exit status."""
    if argv[:1] == ["key"]:
        print(":".join(f"{b:02x}" for b in KEY))
    elif argv[:1] == ["send"] and len(argv) == 3:
        send(argv[1], argv[2])
    elif argv[:1] == ["check"] and len(argv) == 5:
        return 0 if check(*argv[1:]) else 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
