#!/usr/bin/env python3
"""Hardware RX timestamps in the guest, with the standard interfaces only.

  tstamp.py set DEV FILTER     SIOCSHWTSTAMP on DEV: TX off, the RX
                               filter FILTER (none, all, ptp-v2-event)
  tstamp.py recv PORT N WAIT   receive N UDP datagrams on PORT (WAIT s at
                               most for all of them, a limit against a
                               hang) with SO_TIMESTAMPING raw hardware
                               stamps; prints "received R stamped S"

Exit status: 0, or 2 when a call fails (the error on stderr).
"""
import ctypes
import fcntl
import socket
import struct
import sys
import time

SIOCSHWTSTAMP = 0x89B0
SO_TIMESTAMPING = 37
SOF_TIMESTAMPING_RX_HARDWARE = 1 << 2
SOF_TIMESTAMPING_RAW_HARDWARE = 1 << 6
FILTERS = {"none": 0, "all": 1, "ptp-v2-event": 12}


def set_filter(dev, name):
    """SIOCSHWTSTAMP: tx_type off, rx_filter NAME; prints what the driver
    answered (it may widen the filter)."""
    cfg = ctypes.create_string_buffer(struct.pack("iii", 0, 0,
                                                  FILTERS[name]))
    ifr = struct.pack("16sP", dev.encode(), ctypes.addressof(cfg))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s.fileno(), SIOCSHWTSTAMP, ifr)
    flags, tx, rx = struct.unpack("iii", cfg.raw[:12])
    print(f"hwtstamp {dev}: flags {flags} tx_type {tx} rx_filter {rx}")


def recv(port, n, wait):
    """N datagrams on PORT; how many carried a raw hardware stamp."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING,
                 SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE)
    s.bind(("", port))
    s.settimeout(1.0)
    got = stamped = 0
    end = time.monotonic() + wait
    print("ready", flush=True)
    while got < n and time.monotonic() < end:
        try:
            _data, anc, _flags, _addr = s.recvmsg(2048, 256)
        except TimeoutError:
            continue
        got += 1
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING and \
                    len(data) >= 48:
                # three timespecs: software, (deprecated), raw hardware
                sec, nsec = struct.unpack("qq", data[32:48])
                if sec or nsec:
                    stamped += 1
    print(f"received {got} stamped {stamped}")


def main(argv):
    """The command of __doc__: its exit status."""
    try:
        if argv[:1] == ["set"] and len(argv) == 3 and argv[2] in FILTERS:
            set_filter(argv[1], argv[2])
        elif argv[:1] == ["recv"] and len(argv) == 4:
            recv(int(argv[1]), int(argv[2]), float(argv[3]))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except OSError as e:
        print(f"tstamp.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
