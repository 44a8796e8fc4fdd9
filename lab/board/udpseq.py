#!/usr/bin/env python3
"""A paced UDP stream with sequence numbers, for the live MTU change.

    udpseq.py send --to ADDR [--port P] [--rate PPS] [--secs S] [--size B]
    udpseq.py recv --bind ADDR [--port P] [--secs S]

The sender (on the link partner) prints {"started": true} when it starts,
sends RATE datagrams a second for SECS seconds, each carrying its
sequence number, then END markers, and prints {"sent": N}. The receiver
(on the board) prints {"ready": true} once it listens and counts what
arrives until an END marker (or SECS seconds, a limit for a stream whose
markers are lost), then prints {"received": distinct sequence numbers,
"highest": the highest one, "max_gap_ms": the longest time between two
datagrams}. Frames lost = sent - received. Standard library only: the kit
copies this file to both ends.
"""
import argparse
import json
import socket
import struct
import sys
import time

HDR = struct.Struct("!Q")
#: the sequence number of the end markers
END = 2**64 - 1


def send(args):
    """Send the paced stream; print how many datagrams went out."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    pad = b"\0" * max(0, args.size - HDR.size)
    print(json.dumps({"started": True}), flush=True)
    t0 = time.monotonic()
    n = 0
    end = t0 + args.secs
    while True:
        now = time.monotonic()
        if now >= end:
            break
        due = int((now - t0) * args.rate)
        while n < due:
            try:
                s.sendto(HDR.pack(n) + pad, (args.to, args.port))
            except OSError:
                # ENOBUFS, or no route while the other end changes: the
                # datagram counts as sent, and as lost if it never arrives
                pass
            n += 1
        time.sleep(0.0002)
    for _ in range(20):
        try:
            s.sendto(HDR.pack(END) + pad, (args.to, args.port))
        except OSError:
            pass
        time.sleep(0.01)
    print(json.dumps({"sent": n, "rate": args.rate, "secs": args.secs}))


def recv(args):
    """Count the stream's datagrams; print the counts and the longest gap."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((args.bind, args.port))
    s.settimeout(0.2)
    seen = set()
    last = None
    gap = 0.0
    end = time.monotonic() + args.secs
    print(json.dumps({"ready": True}), flush=True)
    while time.monotonic() < end:
        try:
            data = s.recv(65536)
        except TimeoutError:
            continue
        now = time.monotonic()
        if len(data) < HDR.size:
            continue
        seq = HDR.unpack_from(data)[0]
        if seq == END:
            break
        seen.add(seq)
        if last is not None:
            gap = max(gap, now - last)
        last = now
    print(json.dumps({"received": len(seen),
                      "highest": max(seen) if seen else None,
                      "max_gap_ms": round(gap * 1000, 3)}), flush=True)


def main(argv=None):
    """Parse the arguments, run the sender or the receiver."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("send")
    a.add_argument("--to", required=True)
    a.add_argument("--rate", type=int, default=10000)
    a.add_argument("--size", type=int, default=64)
    b = sub.add_parser("recv")
    b.add_argument("--bind", required=True)
    a.add_argument("--secs", type=float, default=4)
    b.add_argument("--secs", type=float, default=60,
                   help="at most this long without an END marker")
    for p in (a, b):
        p.add_argument("--port", type=int, default=5299)
    args = ap.parse_args(argv)
    if args.cmd == "send":
        send(args)
    else:
        recv(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
