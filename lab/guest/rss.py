#!/usr/bin/env python3
"""Deterministic RSS check: known UDP flows, a fixed key, predicted queues.

iperf3's TCP flows take ephemeral ports the kernel picks, and with a random
key all of them land on one RX queue now and then (8 flows whose ports differ
in three bits: about one run in 64).  So the checks send flows of their own,
from fixed ports, hashed with a fixed key, and compare each RX queue's frame
count with the Toeplitz hash of every flow looked up in the device's
indirection table as `ethtool -x` shows it.

  rss.py key                      the key to give `ethtool -X ... hkey`
  rss.py send SRC DST             (in the peer's netns) FLOWS x PER frames
  rss.py expect SRC DST TABLE     frames per RX queue the flows should add
  rss.py verify BEFORE AFTER EXP  compare "RX Queue n Frames" deltas

TABLE is the output of `ethtool -x`; BEFORE/AFTER/EXP are space-separated
per-queue counts.  verify exits 0 when every queue that should get flows got
at least its frames, no other queue got more than NOISE frames (ARP and
other stray frames reach queue 0), and at least two queues got flows.
"""
import ipaddress
import re
import socket
import struct
import sys

# the Microsoft RSS verification key (its hash values are published)
KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b4"
                    "77cb2da38030f20c6a42b73bbeac01fa")
FLOWS = 64              # UDP flows: SPORT + i -> DPORT + i
PER = 8                 # frames per flow
SPORT, DPORT = 40000, 9999
NOISE = 7               # stray frames tolerated on a queue without flows


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
    for i in range(FLOWS):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((src, SPORT + i))
        for _ in range(PER):
            s.sendto(b"r" * 32, (dst, DPORT + i))
        s.close()


def verify(before, after, exp):
    b, a, e = ([int(x) for x in v.split()] for v in (before, after, exp))
    if not len(b) == len(a) == len(e):
        raise SystemExit("rss.py: queue counts of different lengths")
    d = [y - x for x, y in zip(b, a)]
    bad = [q for q in range(len(e))
           if (e[q] and d[q] < e[q]) or (not e[q] and d[q] > NOISE)]
    used = sum(1 for x in e if x)
    ok = not bad and used >= 2
    print(f"{'ok' if ok else 'wrong'}: frames per RX queue {d}, the flows' "
          f"hash predicts {e}" + (f"; queues {bad} differ" if bad else "") +
          ("" if used >= 2 else "; the flows hash to one queue only"))
    return ok


def main(argv):
    if argv[:1] == ["key"]:
        print(":".join(f"{b:02x}" for b in KEY))
    elif argv[:1] == ["send"] and len(argv) == 3:
        send(argv[1], argv[2])
    elif argv[:1] == ["expect"] and len(argv) == 4:
        print(" ".join(str(x) for x in expect(argv[1], argv[2], argv[3])))
    elif argv[:1] == ["verify"] and len(argv) == 4:
        return 0 if verify(*argv[1:]) else 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
