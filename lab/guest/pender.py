"""The peer's side of `make soak`'s pending frames (lab/guest/soak.sh).

Usage (in the peer's network namespace, fd 3 the DUT's rx_packets
attribute opened before entering it; a sysfs attribute read at offset 0
is rendered afresh):

    python3 pender.py PEER_IF DUT_MAC DUT_IP PEER_IP TRIES 3<rx_packets

One process for the whole soak: a process started per frame costs
seconds under TCG. Requests on stdin, one answer line each on stdout:

- "go": point the peer's neighbour entry for the DUT at an address
  nobody has, so that the peer's own frames (TCP of the stopped iperf3
  runs: its kernel still retransmits and acknowledges) no longer reach
  the DUT (the model's address filter drops them) and cannot complete or
  displace the pending frame; wait for the link to go quiet (rx_packets
  unchanged for 0.3 s, at most 6 s), then send single UDP frames until
  one is not received within 0.5 s and still not after 0.5 s more: that
  one is half-assembled in the driver. Answer "pending K RX" (K frames
  sent, RX the rx_packets seen) or "none".
- "restore": remove the neighbour entry (the peer resolves the DUT
  again); answer "ok".

The neighbour entry is written over rtnetlink from this process, not by
running ip(8): that too is a process start per change.
"""
import os
import socket
import struct
import sys
import time

import rawudp

RTM_NEWNEIGH, RTM_DELNEIGH, NLMSG_ERROR = 28, 29, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_REPLACE, NLM_F_CREATE = 1, 4, 0x100, 0x400
NDA_DST, NDA_LLADDR = 1, 2
NUD_PERMANENT = 0x80
NOBODY = "02:00:00:00:00:fe"


def rta(kind, data):
    """One netlink attribute, padded to 4 bytes."""
    a = struct.pack("=HH", 4 + len(data), kind) + data
    return a + b"\0" * (-len(a) % 4)


class Neigh:
    """The peer's neighbour entry for one IPv4 address, over rtnetlink."""

    def __init__(self, ifname, ip):
        self.ifindex = socket.if_nametoindex(ifname)
        self.ip = socket.inet_aton(ip)
        self.nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                socket.NETLINK_ROUTE)
        self.nl.bind((0, 0))
        self.seq = 0

    def _request(self, kind, flags, attrs):
        """Send one request; its error code (0: done)."""
        self.seq += 1
        nd = struct.pack("=BBHiHBB", socket.AF_INET, 0, 0, self.ifindex,
                         NUD_PERMANENT, 0, 0)
        body = nd + b"".join(attrs)
        hdr = struct.pack("=IHHII", 16 + len(body), kind,
                          NLM_F_REQUEST | NLM_F_ACK | flags, self.seq, 0)
        self.nl.send(hdr + body)
        while True:
            msg = self.nl.recv(65536)
            while len(msg) >= 16:
                length, mtype, _, seq, _ = struct.unpack("=IHHII", msg[:16])
                if mtype == NLMSG_ERROR and seq == self.seq:
                    return -struct.unpack("=i", msg[16:20])[0]
                msg = msg[(length + 3) & ~3:]

    def replace(self, lladdr):
        """The entry, permanent, at lladdr."""
        err = self._request(RTM_NEWNEIGH, NLM_F_REPLACE | NLM_F_CREATE,
                            [rta(NDA_DST, self.ip),
                             rta(NDA_LLADDR, rawudp.mac(lladdr))])
        if err:
            raise OSError(err, "RTM_NEWNEIGH: " + os.strerror(err))

    def delete(self):
        """The entry removed (none is no error)."""
        err = self._request(RTM_DELNEIGH, 0, [rta(NDA_DST, self.ip)])
        if err and err != 2:	# ENOENT
            raise OSError(err, "RTM_DELNEIGH: " + os.strerror(err))


def rx():
    """The DUT's rx_packets."""
    return int(os.pread(3, 64, 0))


def moved(last, secs):
    """Whether rx_packets leaves last within secs."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if rx() != last:
            return True
        time.sleep(0.02)
    return False


def main():
    """Serve "go" and "restore" requests until stdin closes."""
    dev, dip, sip = sys.argv[1], sys.argv[3], sys.argv[4]
    dmac = rawudp.mac(sys.argv[2])
    tries = int(sys.argv[5])
    s, smac = rawudp.packet_socket(dev)
    neigh = Neigh(dev, dip)
    n = 0
    for line in sys.stdin:
        if line.strip() == "restore":
            neigh.delete()
            print("ok", flush=True)
            continue
        neigh.replace(NOBODY)
        end = time.monotonic() + 6
        while time.monotonic() < end and moved(rx(), 0.3):
            pass
        res = "none"
        for k in range(1, tries + 1):
            n += 1
            last = rx()
            s.send(rawudp.udp_frame(dmac, smac, sip, dip,
                                    (40000, 9), struct.pack("!I", n), ident=n))
            if not moved(last, 0.5) and not moved(last, 0.5):
                res = f"pending {k} {last}"
                break
        print(res, flush=True)


if __name__ == "__main__":
    main()
