#!/usr/bin/env python3
"""After MTU 1500 -> 9000 on the running interface, 3 s of 8000-byte UDP
datagrams peer -> DUT: count kmem:mm_page_alloc events of order > 0 (all
callers) and the datagrams received."""
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

T = Path("/sys/kernel/tracing/instances/ord")
# AF_PACKET on the peer: its skbs are built from order-0 pages, so the
# order>0 allocations counted are the receiver's
SENDER = r"""
import sys, time
sys.path.insert(0, sys.argv[3])
import rawudp
s, smac = rawudp.packet_socket(sys.argv[1])
frame = rawudp.udp_frame(rawudp.mac(sys.argv[2]), smac, "192.0.2.2",
                         "192.0.2.1", (9997, 9998), bytes(8000), df=True)
end = time.monotonic() + 3; n = 0
while time.monotonic() < end:
    s.send(frame); n += 1
    if n % 20 == 0: time.sleep(0.002)
print(n)
"""


def main():
    """Count the order > 0 page allocations of 3 s of jumbo datagrams."""
    dut, ns = sys.argv[1], sys.argv[2]
    T.mkdir(exist_ok=True)
    subprocess.run(["ip", "link", "set", "dev", dut, "mtu", "1500"], check=True)
    time.sleep(1)
    subprocess.run(["ip", "link", "set", "dev", dut, "mtu", "9000"], check=True)
    time.sleep(1)
    rs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    rs.bind(("192.0.2.1", 9998))
    rs.settimeout(1)
    ev = T / "events/kmem/mm_page_alloc"
    (ev / "filter").write_text("order > 0")
    (T / "buffer_size_kb").write_text("8192")
    (T / "trace").write_text("")
    (ev / "enable").write_text("1")
    peer = subprocess.run(["ip", "-n", ns, "-o", "addr", "show", "to",
                           "192.0.2.2"], capture_output=True, text=True,
                          check=False).stdout
    pif = peer.split()[1]
    dmac = Path(f"/sys/class/net/{dut}/address").read_text(
        encoding="ascii").strip()
    snd = subprocess.Popen(["ip", "netns", "exec", ns, "python3", "-c", SENDER,
                            pif, dmac, str(Path(__file__).resolve().parent)],
                           stdout=subprocess.PIPE)
    got = 0
    end = time.monotonic() + 15
    while time.monotonic() < end:
        try:
            rs.recv(9000)
            got += 1
        except TimeoutError:
            if got or snd.poll() is not None:
                break
    sent = int(snd.communicate()[0])
    (ev / "enable").write_text("0")
    lines = [l for l in (T / "trace").read_text(encoding="utf-8").splitlines()
             if "mm_page_alloc" in l]
    orders = {}
    ctx = {"softirq": 0, "task": 0}
    for l in lines:
        o = l.split("order=")[1].split()[0]
        orders[o] = orders.get(o, 0) + 1
        flags = l.split("] ", 1)[1].split()[0]
        c = "softirq" if ("s" in flags or "h" in flags or "H" in flags) else "task"
        ctx[c] += 1
        k = f"{c}:order{o}"
        orders[k] = orders.get(k, 0) + 1
    print(json.dumps({"sent": sent, "received": got, "order_gt0": len(lines),
                      "order_gt0_softirq": ctx["softirq"],
                      "order_gt0_task": ctx["task"], "by_order": orders}))
    T.rmdir()


if __name__ == "__main__":
    main()
