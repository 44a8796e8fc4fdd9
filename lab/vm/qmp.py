#!/usr/bin/env python3
"""QMP client for the LAN7430 model (emulator/): counters, faults, pacing.

Uses the PyPI ``qemu.qmp`` package (synchronous ``legacy`` API), talking to
the QMP unix socket lab/vm/vm.sh opens ($QMP_SOCK).

Module use::

    from qmp import Dut
    with Dut(sock) as dut:
        dut.reset()                             # zero the model's counters
        c = dut.counters()                      # dict, see emulator/README.md
        dut.fault("rx-len-short", count=5)      # next 5 RX frames
        dut.fault("drop-ls", every=100)         # every 100th RX frame
        dut.fault("rx-stall", count=1, ms=200)  # parameters as keywords
        dut.fired("rx-len-short")               # how often it fired
        dut.clear()                             # all faults off
        dut.rate(50)                            # pace the wire at 50 Mbit/s
        dut.rate()                              # -> 50

CLI::

    lab/vm/qmp.py SOCK counters [--raw]
    lab/vm/qmp.py SOCK reset
    lab/vm/qmp.py SOCK fault NAME [--count N] [--every N] [PARAM=VALUE ...]
    lab/vm/qmp.py SOCK clear
    lab/vm/qmp.py SOCK faults                      # current fault settings
    lab/vm/qmp.py SOCK rate [MBPS]
    lab/vm/qmp.py SOCK link up|down                # QMP set_link
    lab/vm/qmp.py SOCK knob [NAME [VALUE]]         # fidelity knobs (KNOBS)
"""
import argparse
import json
import sys

from qemu.qmp.legacy import QEMUMonitorProtocol

DEFAULT_PATH = "/machine/peripheral/dut"

#: fault name -> {keyword: QOM property} of its parameters
FAULTS = {
    "rx-len-short": {},     # LS frame length written back as length / 2
    "rx-len-long": {},      # ... as the frame's buffer space + 1024
    "rx-len-zero": {},      # ... as 0
    "drop-fs": {},          # FS left out of the first descriptor
    "ext-missing": {},      # LS with EXT set, no extension descriptor after it
    "drop-ls": {},          # LS left out of the last descriptor
    "spurious-irq": {"vectors": "fault-spurious-irq-vectors",
                     "period_us": "fault-spurious-irq-period-us"},
    "wb-delay-desc": {"us": "fault-wb-delay-us"},
    "wb-delay-head": {"us": "fault-wb-delay-us"},
    "link-flap": {"down_ms": "fault-link-flap-down-ms",
                  "period_ms": "fault-link-flap-period-ms"},
    "rx-stall": {"ms": "fault-rx-stall-ms"},
    "rx-swr-head": {},      # after the next RX_SWR, RX_HEAD reads non-zero
    "rx-irq-hold": {"ms": "fault-rx-irq-hold-ms"},  # no RX interrupt for ms
}


#: fidelity knobs of the model (runtime QOM properties, emulator/README.md):
#: name -> what it sets
KNOBS = {
    "rx-fifo-kib": "RX FIFO per channel, KiB (estimate 12-32, default 32)",
    "peer-pause": "1: the link partner honours pause frames (FCPT x 512 "
                  "bit times, XON, refresh), 0 (default): ignores them",
    "peer-pause-lag-frames": "frames a pausing partner still sends after "
                             "XOFF (default 1)",
    "phy-lp-pause": "1 (default): the PHY's link partner advertises pause, "
                    "0: not (driver sees it at the next link up)",
    "dma-stop-us": "DMA channel stop: fixed part (us) after the frame it "
                   "waits for (RX: the one on the wire for it), default 0",
    "dma-reset-us": "DMAC/channel soft reset duration (us), default 0",
    "fifo-reset-us": "FCT FIFO reset duration (us), default 0",
    "mac-disable-us": "MAC RX/TX disable: fixed part (us) after the frame "
                      "on the wire ends, default 0",
    "desc-check": "1: descriptor errors detected (tail out of range, RX "
                  "OWN clear below the tail at fetch, TX FS/LS/EXT/length) "
                  "and the channel stopped; 0: none, tails wrapped",
    "rx-wb-batch": "1 (default): RX write-backs batched per RX_CFG_A, "
                   "0: per frame (old model)",
    "tx-wb-batch": "1 (default): TX head write-back/IOC batched per "
                   "TX_CFG_A, 0: per fetch (old model)",
    "wb-at-stop": "write-backs pending at a completed DMA stop: 1 (default) "
                  "written after it (late), 0: flushed at the stop",
    "quirk-extra-buffer": "every Nth RX frame (0 off) takes one more "
                          "descriptor: no data in it, LS + length on it",
    "quirk-status-every-desc": "every Nth RX frame (0 off): status in data1 "
                               "of every descriptor, not only LS",
    "quirk-hash-store": "every Nth hashed RX frame (0 off) with "
                        "RSS_HASH_STORE: hash over data2/data3 of LS",
}


class QMPError(RuntimeError):
    """A QMP command returned an error."""


class Dut:
    """The LAN7430 device behind a QMP socket."""

    def __init__(self, sock, path=DEFAULT_PATH, timeout=10.0, netdev="dut"):
        self.path = path
        self.netdev = netdev
        self._qmp = QEMUMonitorProtocol(sock)
        self._qmp.connect()
        self._timeout = timeout

    # -- plumbing ---------------------------------------------------------
    def close(self):
        """Close the QMP connection (once)."""
        if self._qmp:
            self._qmp.close()
            self._qmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def cmd(self, command, args=None):
        """Run a QMP command; returns its "return", raises QMPError."""
        r = self._qmp.cmd_raw(command, args)
        if "error" in r:
            raise QMPError(f"{command} {args or ''}: {r['error']}")
        return r.get("return")

    def get(self, prop):
        """The DUT's QOM property PROP."""
        return self.cmd("qom-get", {"path": self.path, "property": prop})

    def set(self, prop, value):
        """Set the DUT's QOM property PROP to VALUE."""
        self.cmd("qom-set", {"path": self.path, "property": prop,
                             "value": value})

    # -- counters ---------------------------------------------------------
    def counters(self):
        """The model's counters as a dict (emulator/README.md, Counters)."""
        return json.loads(self.get("counters"))

    def reset(self):
        """Zero the model's counters (fault settings are kept)."""
        self.set("reset-counters", True)

    # -- faults -----------------------------------------------------------
    def fault(self, name, count=None, every=None, **params):
        """Arm fault NAME: fire on the next COUNT opportunities and/or on
        every EVERYth one (0 turns that form off).  Keyword parameters
        (see FAULTS) are set first, e.g. fault("rx-stall", count=1, ms=50).
        Opportunities: an RX frame written to the ring; a timer tick for
        spurious-irq (period_us) and link-flap (period_ms); the first tick
        of those is immediate."""
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r} (known: "
                             f"{', '.join(FAULTS)})")
        for k, v in params.items():
            if k not in FAULTS[name]:
                raise ValueError(f"fault {name} has no parameter {k!r} (has: "
                                 f"{', '.join(FAULTS[name]) or 'none'})")
            self.set(FAULTS[name][k], int(v))
        if count is None and every is None:
            count = 1
        if every is not None:
            self.set(f"fault-{name}-every", int(every))
        if count is not None:
            self.set(f"fault-{name}", int(count))

    def clear(self, name=None):
        """Clear one fault (its count and every), or all faults and end
        those in progress (link back up, stall over, write-backs done)."""
        if name is None:
            self.set("fault-clear", True)
        else:
            self.set(f"fault-{name}-every", 0)
            self.set(f"fault-{name}", 0)

    def fired(self, name=None):
        """How often fault NAME fired (all faults as a dict if no name)."""
        f = self.counters()["fault_fired"]
        return f if name is None else f[name]

    def faults(self):
        """Current settings: {name: {"count", "every", params...}}."""
        out = {}
        for name, params in FAULTS.items():
            d = {"count": self.get(f"fault-{name}"),
                 "every": self.get(f"fault-{name}-every")}
            for k, prop in params.items():
                d[k] = self.get(prop)
            out[name] = d
        return out

    # -- pacing and link --------------------------------------------------
    def rate(self, mbps=None):
        """Set the wire rate in Mbit/s (0 = unpaced) and/or return it."""
        if mbps is not None:
            self.set("rate", int(mbps))
        return self.get("rate")

    def knob(self, name, value=None):
        """Set fidelity knob NAME (see KNOBS) and/or return its value."""
        if name not in KNOBS:
            raise ValueError(f"unknown knob {name!r} (known: "
                             f"{', '.join(sorted(KNOBS))})")
        if value is not None:
            self.set(name, int(value))
        return self.get(name)

    def link(self, up):
        """QMP set_link on the DUT's NIC (the model's link state follows)."""
        self.cmd("set_link", {"name": self.netdev, "up": bool(up)})


def _main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("sock", help="QMP unix socket ($QMP_SOCK of lab/vm/vm.sh)")
    ap.add_argument("--path", default=DEFAULT_PATH, help="QOM path of the DUT")
    sub = ap.add_subparsers(dest="op", required=True)
    p = sub.add_parser("counters", help="print the counters (JSON)")
    p.add_argument("--raw", action="store_true", help="one line")
    sub.add_parser("reset", help="zero the counters")
    p = sub.add_parser("fault", help="arm a fault")
    p.add_argument("name", choices=sorted(FAULTS))
    p.add_argument("--count", type=int)
    p.add_argument("--every", type=int)
    p.add_argument("params", nargs="*", metavar="PARAM=VALUE")
    p = sub.add_parser("clear", help="clear one or all faults")
    p.add_argument("name", nargs="?", choices=sorted(FAULTS))
    sub.add_parser("faults", help="print the fault settings")
    p = sub.add_parser("rate", help="set/print the wire rate (Mbit/s)")
    p.add_argument("mbps", nargs="?", type=int)
    p = sub.add_parser("link", help="set_link up/down")
    p.add_argument("state", choices=["up", "down"])
    p = sub.add_parser("knob", help="set/print a fidelity knob (all if none)")
    p.add_argument("name", nargs="?", choices=sorted(KNOBS))
    p.add_argument("value", nargs="?", type=lambda v: int(v, 0))
    a, extra = ap.parse_known_args(argv)
    if extra and a.op != "fault":
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    if a.op == "fault":
        a.params += extra

    with Dut(a.sock, path=a.path) as dut:
        if a.op == "counters":
            print(json.dumps(dut.counters(), indent=None if a.raw else 1))
        elif a.op == "reset":
            dut.reset()
        elif a.op == "fault":
            kw = {}
            for pv in a.params:
                k, _, v = pv.partition("=")
                kw[k] = int(v, 0)
            dut.fault(a.name, count=a.count, every=a.every, **kw)
            print(json.dumps({a.name: dut.faults()[a.name]}))
        elif a.op == "clear":
            dut.clear(a.name)
        elif a.op == "faults":
            print(json.dumps(dut.faults(), indent=1))
        elif a.op == "rate":
            print(dut.rate(a.mbps))
        elif a.op == "link":
            dut.link(a.state == "up")
        elif a.op == "knob":
            names = [a.name] if a.name else sorted(KNOBS)
            print(json.dumps({n: dut.knob(n, a.value if a.name else None)
                              for n in names}))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
