#!/usr/bin/env python3
"""Read or reset the lan7430 model's counters over QMP.

usage: qmp-counters.py SOCK [get|reset|raw] [--path /machine/peripheral/dut]

'get' prints the JSON from the device's "counters" QOM property (pretty),
'raw' prints it on one line, 'reset' writes reset-counters=true.
"""
import json
import socket
import sys


def qmp(sock_path, cmds):
    """Run QMP commands CMDS on the socket SOCK_PATH: their returns."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    f = s.makefile("rw")
    json.loads(f.readline())                    # greeting
    out = []
    for c in [{"execute": "qmp_capabilities"}] + cmds:
        f.write(json.dumps(c) + "\n")
        f.flush()
        while True:
            r = json.loads(f.readline())
            if "event" in r:
                continue
            break
        if "error" in r:
            raise SystemExit(f"QMP error: {r['error']}")
        out.append(r.get("return"))
    s.close()
    return out[1:]


def main():
    """Parse the command line, run the operation, print its result."""
    args = [a for a in sys.argv[1:] if not a.startswith("--path")]
    path = "/machine/peripheral/dut"
    for a in sys.argv[1:]:
        if a.startswith("--path="):
            path = a.split("=", 1)[1]
    sock = args[0]
    op = args[1] if len(args) > 1 else "get"
    if op == "reset":
        qmp(sock, [{"execute": "qom-set", "arguments":
                    {"path": path, "property": "reset-counters",
                     "value": True}}])
        print("reset")
        return
    r = qmp(sock, [{"execute": "qom-get", "arguments":
                    {"path": path, "property": "counters"}}])[0]
    d = json.loads(r)
    print(json.dumps(d, indent=None if op == "raw" else 1))


if __name__ == "__main__":
    main()
