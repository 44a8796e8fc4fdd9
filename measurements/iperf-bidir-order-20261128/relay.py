"""A TCP relay between an iperf3 client and server that connects the
client's data connections to the server in reverse order (the control
connection first, as made): what a swapped completion order of the
handshakes gives the server's accept()."""
import socket, sys, threading, time

LPORT, SPORT, NDATA, SWAP = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "swap"

def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass

ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", LPORT)); ls.listen(16)
conns = []
for i in range(1 + NDATA):
    c, _ = ls.accept()
    if i == 0:
        # control: connect it now (the client waits for the server's reply)
        s = socket.create_connection(("127.0.0.1", SPORT))
        threading.Thread(target=pipe, args=(c, s), daemon=True).start()
        threading.Thread(target=pipe, args=(s, c), daemon=True).start()
    else:
        # each data stream sends its 37-byte cookie first: hold them all
        conns.append(c)
order = list(reversed(conns)) if SWAP else conns
for c in order:
    s = socket.create_connection(("127.0.0.1", SPORT))
    time.sleep(0.2)
    threading.Thread(target=pipe, args=(c, s), daemon=True).start()
    threading.Thread(target=pipe, args=(s, c), daemon=True).start()
time.sleep(3600)
