#!/usr/bin/env python3
"""sha256-verified bulk TCP transfer helper for e2e.sh.

  xfer.py recv PORT            -> listens, prints "<sha256> <bytes>" of data
  xfer.py send HOST PORT FILE  -> sends FILE, prints "<sha256> <bytes>"
"""
import hashlib
import socket
import sys
import time


def recv(port):
    """Accept one connection on PORT, print the sha256 and size of its data."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(1)
    print("listening", flush=True)
    conn, _ = srv.accept()
    h = hashlib.sha256()
    n = 0
    while True:
        b = conn.recv(1 << 20)
        if not b:
            break
        h.update(b)
        n += len(b)
    conn.close()
    print(h.hexdigest(), n, flush=True)


def send(host, port, path):
    """Send the file PATH to HOST:PORT, print its sha256 and size."""
    h = hashlib.sha256()
    n = 0
    for _ in range(100):
        try:
            s = socket.create_connection((host, port), timeout=120)
            break
        except OSError:
            time.sleep(0.2)
    else:
        raise SystemExit("connect failed")
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
            n += len(b)
            s.sendall(b)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    s.close()
    print(h.hexdigest(), n, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "recv":
        recv(int(sys.argv[2]))
    else:
        send(sys.argv[2], int(sys.argv[3]), sys.argv[4])
