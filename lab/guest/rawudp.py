"""IPv4/UDP frames built whole, sent through an AF_PACKET socket.

A packet socket on the peer puts exactly one frame on the wire per send,
addressed to the DUT's MAC, with no neighbour lookup and no socket buffer
of the peer's stack in between: the frame the DUT's model receives is the
one built here. lab/guest/order.py (jumbo datagrams) and
lab/guest/pender.py (single frames left pending) use it; it runs on the
guest's python3 (standard library only).
"""
import socket
import struct


def csum(b):
    """The Internet checksum (RFC 1071) of the bytes b (even length)."""
    t = sum(struct.unpack(f"!{len(b) // 2}H", b))
    t = (t >> 16) + (t & 0xFFFF)
    t += t >> 16
    return ~t & 0xFFFF


def mac(m):
    """'aa:bb:cc:dd:ee:ff' as 6 bytes."""
    return bytes(int(x, 16) for x in m.split(":"))


def udp_frame(dmac, smac, sip, dip, ports, payload, ident=0, df=False):
    """An Ethernet frame with one IPv4/UDP datagram (UDP checksum 0).

    dmac, smac: 6 bytes; sip, dip: dotted quads; ports: (source,
    destination); ident: the IP identification (low 16 bits used).
    """
    udp = struct.pack("!HHHH", ports[0], ports[1], 8 + len(payload), 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(payload),
                     ident & 0xFFFF, 0x4000 if df else 0, 64, 17, 0,
                     socket.inet_aton(sip), socket.inet_aton(dip))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return dmac + smac + b"\x08\x00" + ip + udp + payload


def packet_socket(ifname):
    """A raw packet socket bound to ifname, and ifname's MAC (6 bytes)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    return s, s.getsockname()[4]
