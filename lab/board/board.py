#!/usr/bin/env python3
"""The board kit (``make board``): selftests and the A/B bench of the
lan743x series on a real board with a link partner, both reached over ssh.

    board.py --dut root@board --peer root@peer --netif eth1 [--peer-if IF]
             [--kdir DIR | --kconfig FILE --src DIR] [--modules upstream,series]
             [--arch armv7] [--reps 5] [--out DIR]

1. Builds the upstream lan743x (the board kernel's source) and the
   series' (that source + patches/ of the matching stacks) out of tree
   against the board's kernel build tree (lab/board/build.sh), and refuses
   a module whose vermagic is not the running kernel's (uname -r on the
   board).
2. Installs the kselftests drivers/net/hw and drivers/net on the board,
   writes their net.config (REMOTE_TYPE=ssh to the partner) and runs the
   series' hw tests and the generic driver tests with each module.
3. The A/B bench, standard interfaces only: iperf3 -J both ways at MTU
   1500 and 9000, CPU from /proc/stat, IRQs from /proc/interrupts, rtnl,
   ethtool -S, qstats and page_pool stats (ynl, where it runs), DMA and
   cache maintenance counts from tracefs (hist triggers, the function
   profiler) where the kernel has them, memory held after the run; and the
   live MTU change under a paced UDP stream from the partner.
4. Writes records.jsonl, meta.json, summary.json, table.md and ratios.png
   to results/board-<time>/ (lab/board/board_report.py).

Every check that can refuse runs before anything on the board changes;
whatever the kit changes (module, MTU, addresses, link state) is put back
when it ends, also on an error. Exit status: 0 done, 2 refused or failed
(the message says which and why).
"""
import argparse
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

KIT = Path(__file__).resolve().parent
ROOT = KIT.parents[1]
sys.path.insert(0, str(KIT))
import board_report
from board_build import (
    build,
    build_ksft,
    check_vermagic,
    module_deps,
)
from board_parse import (
    BoardError,
    cell_metrics,
    free_kib,
    hist_sections,
    hits,
    meminfo_kib,
    page_allocs,
    parse_ktap,
)

T0 = time.time()
#: the bench's cells: (MTU, direction seen from the board); make bench's
#: names
CELLS = {"tcp-rx-1500": (1500, "rx"), "tcp-tx-1500": (1500, "tx"),
         "tcp-rx-9000": (9000, "rx"), "tcp-tx-9000": (9000, "tx")}
#: the live MTU changes under the partner's UDP stream: (from, to)
CHANGES = {"mtu-1500to9000": (1500, 9000), "mtu-9000to1500": (9000, 1500)}
#: the series' drivers/net/hw tests, and the kernel's generic driver tests
#: the series' changes reach (those the install has are run)
SERIES_TESTS = ("drivers/net/hw:reconfig_traffic.py",
                "drivers/net/hw:reconfig_alloc_fail.py",
                "drivers/net/hw:napi_contract.py",
                "drivers/net/hw:coalesce.py")
GENERIC_TESTS = ("drivers/net:ping.py", "drivers/net:stats.py",
                 "drivers/net:queues.py", "drivers/net:napi_id.py",
                 "drivers/net:ring_reconfig.py",
                 "drivers/net/hw:pp_alloc_fail.py", "drivers/net/hw:irq.py",
                 "drivers/net/hw:tso.py", "drivers/net/hw:ethtool_std_stats.sh",
                 "drivers/net/hw:ethtool_rmon.sh")
UDP_PORT = 5299
#: the UDP rate (Mbit/s, the sender's) below which a partner does not
#: drive the link at 1 Gbit/s: refused by default (--peer-min-mbit), a
#: warning with --peer-min-mbit 0
PEER_MBIT = 900


class Unreachable(BoardError):
    """A host that ssh cannot reach."""


def progress(msg):
    """MSG on stderr, after the seconds since the start."""
    print(f"[board {int(time.time() - T0):4d}s] {msg}", file=sys.stderr,
          flush=True)


class Host:
    """One end reached over ssh (the board or its partner)."""

    def __init__(self, spec, role, opts=()):
        self.spec, self.role = spec, role
        self.opts = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                     "-o", "ServerAliveInterval=15"] + list(opts)

    def argv(self, cmd):
        """The ssh command line that runs the shell command CMD there."""
        return ["ssh"] + self.opts + [self.spec, cmd]

    def run(self, cmd, timeout=600, stdin=None):
        """CMD run there: the CompletedProcess; Unreachable when ssh
        itself fails (exit 255)."""
        try:
            # no input: /dev/null, never the kit's terminal (a remote
            # ssh or test reading it would stop the run)
            io = {"input": stdin} if stdin is not None else \
                {"stdin": subprocess.DEVNULL}
            p = subprocess.run(self.argv(cmd), text=stdin is None or
                               isinstance(stdin, str), capture_output=True,
                               timeout=timeout, check=False, **io)
        except subprocess.TimeoutExpired as e:
            raise BoardError(f"{self.role} {self.spec}: {cmd!r} did not end "
                             f"within {timeout} s") from e
        if p.returncode == 255:
            err = p.stderr if isinstance(p.stderr, str) else \
                p.stderr.decode(errors="replace")
            last = (err.strip().splitlines() or ["no message"])[-1]
            raise Unreachable(f"cannot reach the {self.role} {self.spec} "
                              f"over ssh (ssh exit 255: {last})")
        return p

    def sh(self, cmd, timeout=600, what=None):
        """CMD's stdout; BoardError naming WHAT (or CMD) if it fails."""
        p = self.run(cmd, timeout=timeout)
        if p.returncode:
            raise BoardError(f"{self.role} {self.spec}: {what or cmd} "
                             f"failed (exit {p.returncode}): "
                             f"{(p.stderr or p.stdout).strip()[-400:]}")
        return p.stdout

    def ok(self, cmd):
        """Whether CMD succeeds there."""
        return self.run(cmd).returncode == 0

    def popen(self, cmd):
        """CMD started there, its output readable as it comes."""
        return subprocess.Popen(self.argv(cmd), text=True,
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def put(self, local, remote_dir):
        """Copy the file or directory LOCAL into REMOTE_DIR there (tar
        over ssh)."""
        local = Path(local)
        tar = subprocess.run(["tar", "-C", str(local.parent), "-cf", "-",
                              local.name], capture_output=True, check=True)
        p = self.run(f"mkdir -p {shlex.quote(remote_dir)} && tar -C "
                     f"{shlex.quote(remote_dir)} -xf -", stdin=tar.stdout)
        if p.returncode:
            raise BoardError(f"copying {local} to {self.role} "
                             f"{self.spec}:{remote_dir} failed: "
                             f"{p.stderr.decode(errors='replace')[-300:]}")


class Undo:
    """What the kit changed, put back in reverse order."""

    def __init__(self):
        self.steps = []

    def push(self, what, fn):
        """Remember how to undo WHAT: fn()."""
        self.steps.append((what, fn))

    def run(self):
        """Undo everything (each step even when one fails); the steps
        that failed."""
        failed = []
        while self.steps:
            what, fn = self.steps.pop()
            try:
                fn()
            except Exception as e:  # noqa: BLE001  # pylint: disable=broad-exception-caught
                failed.append(f"{what}: {e}")
                print(f"error: could not restore {what}: {e}",
                      file=sys.stderr)
        return failed


def parse_args(argv=None):
    """The kit's options, checked."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dut", required=True, help="ssh destination of the "
                    "board (user@host; root or passwordless sudo-less root)")
    ap.add_argument("--peer", required=True,
                    help="ssh destination of the link partner")
    ap.add_argument("--netif", required=True,
                    help="the board's LAN7430 interface (not the one ssh "
                    "uses)")
    ap.add_argument("--peer-if", default=None, help="the partner's "
                    "interface on the link (default: the one holding "
                    "--remote-v4 already)")
    ap.add_argument("--modules", default="upstream,series")
    ap.add_argument("--ko", action="append", default=[], metavar="NAME=PATH",
                    help="a module already built (no build for NAME)")
    ap.add_argument("--kdir", help="the board kernel's build tree")
    ap.add_argument("--kconfig", help="a config to build a tree from "
                    "(with --src; modules_prepare only)")
    ap.add_argument("--src", help="the kernel source (default: KDIR's "
                    "'source' link, or KDIR)")
    ap.add_argument("--stacks", help="comma list of patches/ stacks for "
                    "the series (default: by the source's version)")
    ap.add_argument("--arch", default="armv7",
                    choices=("armv7", "arm64", "x86_64"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--cells", default=",".join(CELLS) + ",mem-up")
    ap.add_argument("--changes", default=",".join(CHANGES),
                    help="live MTU changes ('' = none)")
    ap.add_argument("--live-rate", type=int, default=10000,
                    help="the partner's UDP stream, datagrams/s")
    ap.add_argument("--live-port", type=int, default=UDP_PORT,
                    help="its UDP port on the board")
    ap.add_argument("--local-v4", default="192.0.2.1")
    ap.add_argument("--remote-v4", default="192.0.2.2")
    ap.add_argument("--prefix", type=int, default=24)
    ap.add_argument("--local-v6", default="")
    ap.add_argument("--remote-v6", default="")
    ap.add_argument("--peer-from-dut", default=None, help="ssh destination "
                    "of the partner as the board reaches it (REMOTE_ARGS of "
                    "net.config; default: --peer)")
    ap.add_argument("--peer-min-mbit", type=int, default=PEER_MBIT,
                    help="refuse a partner whose UDP sender reaches less "
                    "(0: only warn)")
    ap.add_argument("--net-config", action="append", default=[],
                    metavar="KEY=VALUE", help="a further line of net.config, "
                    "e.g. PATH_MAX_MTU=1500 (a switch that passes no jumbo "
                    "frames)")
    ap.add_argument("--ksft", help="a kselftest install (make install's "
                    "INSTALL_PATH, with run_kselftest.sh) to run instead of "
                    "building one")
    ap.add_argument("--tests", help="comma list of the selftests to run, "
                    "those the install has (COLLECTION:FILE, e.g. drivers/"
                    "net/hw:napi_contract.py; default: the series' and the "
                    "generic ones)")
    ap.add_argument("--no-selftests", action="store_true")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--tracefs", default="/sys/kernel/tracing")
    ap.add_argument("--cache-counts", default="auto",
                    choices=("auto", "profiler", "kprobes", "none"),
                    help="how arch_sync_dma_for_* calls are counted (auto: "
                    "the function profiler, else kprobes on a kernel known "
                    "not to be Thumb-2)")
    ap.add_argument("--remote-dir", default="/tmp/lan743x-board")
    ap.add_argument("--ssh-opt", action="append", default=[],
                    help="an extra ssh option, e.g. -p2222")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    args.names = [m for m in args.modules.split(",") if m]
    if not args.names or args.names[0] != "upstream" or \
            len(set(args.names)) != len(args.names):
        ap.error("--modules: upstream first, then the others, each once")
    try:
        args.ko = dict(k.split("=", 1) for k in args.ko)
    except ValueError:
        ap.error("--ko NAME=PATH")
    for n, p in args.ko.items():
        if not Path(p).is_file():
            ap.error(f"--ko {n}={p}: no such file")
    for n in args.names:
        if n not in args.ko and n not in ("upstream", "series"):
            ap.error(f"--modules: {n} is built only from --ko {n}=PATH")
    if any(n not in args.ko for n in args.names) and \
            bool(args.kdir) == bool(args.kconfig):
        ap.error("give the board kernel's build tree (KDIR=) or a config "
                 "to build one from (KCONFIG=, with SRC=)")
    args.cells = [c for c in args.cells.split(",") if c]
    args.changes = [c for c in args.changes.split(",") if c]
    bad = [c for c in args.cells if c not in CELLS and c != "mem-up"] + \
        [c for c in args.changes if c not in CHANGES]
    if bad:
        ap.error(f"unknown cells {bad}; known: {list(CELLS)}, mem-up, "
                 f"{list(CHANGES)}")
    if args.reps < 1 or args.secs < 1:
        ap.error("--reps and --secs: at least 1")
    if args.reps < 5:
        progress(f"note: {args.reps} repetitions; the project's figures "
                 "need at least 5")
    args.peer_from_dut = args.peer_from_dut or args.peer
    if args.ksft and not (Path(args.ksft) / "run_kselftest.sh").is_file():
        ap.error(f"--ksft {args.ksft}: no run_kselftest.sh there")
    args.tests = [t for t in (args.tests or "").split(",") if t]
    if any(not re.fullmatch(r"[\w./-]+:[\w.-]+", t) for t in args.tests):
        ap.error(f"--tests {args.tests}: COLLECTION:FILE,...")
    bad = [c for c in args.net_config if not re.fullmatch(r"[A-Z_0-9]+=\S*", c)]
    if bad:
        ap.error(f"--net-config {bad[0]!r}: KEY=VALUE")
    return args


# --- the board's state ------------------------------------------------

def link_state(host, dev):
    """{mtu, up, addrs} of DEV on HOST (ip -j addr show)."""
    j = json.loads(host.sh(f"ip -j addr show dev {shlex.quote(dev)}",
                           what=f"ip addr show dev {dev}") or "[]")
    if not j:
        raise BoardError(f"{host.role}: no interface {dev}")
    i = j[0]
    return {"mtu": i.get("mtu"), "up": "UP" in (i.get("flags") or []),
            "addrs": [f"{a['local']}/{a['prefixlen']}"
                      for a in i.get("addr_info", [])
                      if a.get("scope") != "link"]}


def preflight(args, dut, peer):
    """Everything that can refuse before the board changes: the facts
    found (dict)."""
    progress(f"reaching the board {args.dut} and the partner {args.peer}")
    f = {}
    f["dut_kernel"] = dut.sh("uname -r").strip()
    f["dut_machine"] = dut.sh("uname -m").strip()
    f["peer_kernel"] = peer.sh("uname -r").strip()
    q = shlex.quote(args.netif)
    if not dut.ok(f"ip link show dev {q} >/dev/null 2>&1"):
        names = dut.run("ip -o link show").stdout
        have = re.findall(r"^\d+: ([^:@\s]+)", names, re.MULTILINE)
        raise BoardError(f"the board has no interface {args.netif} (NETIF); "
                         f"it has: {', '.join(have) or 'none'}")
    drv = re.search(r"^driver: (\S+)", dut.run(f"ethtool -i {q}").stdout,
                    re.MULTILINE)
    if not drv or drv.group(1) != "lan743x":
        raise BoardError(f"{args.netif} on the board is driven by "
                         f"{drv.group(1) if drv else 'nothing ethtool -i '}"
                         "names), not lan743x: NETIF must be the LAN7430")
    bus = re.search(r"^bus-info: (\S+)", dut.run(f"ethtool -i {q}").stdout,
                    re.MULTILINE)
    f["pci"] = bus.group(1) if bus else ""
    conn = dut.run("echo $SSH_CONNECTION").stdout.split()
    if len(conn) >= 3 and conn[2] in " ".join(
            link_state(dut, args.netif)["addrs"]):
        raise BoardError(f"ssh reaches the board through {args.netif} "
                         f"({conn[2]}): the kit takes it down and reloads its "
                         "driver; reach the board through another interface")
    missing = []
    for host, tools in ((dut, ("iperf3", "ethtool", "ip", "python3",
                               "insmod", "rmmod", "modprobe")),
                        (peer, ("iperf3", "ip", "python3", "ethtool"))):
        for t in tools:
            if not host.ok(f"command -v {t} >/dev/null 2>&1"):
                missing.append(f"{t} on the {host.role} ({host.spec})")
    if missing:
        raise BoardError("missing: " + ", ".join(missing)
                         + "; install them (Debian: apt-get install iperf3 "
                         "ethtool iproute2 python3 kmod)")
    # the partner's interface on the link
    if args.peer_if:
        if not peer.ok(f"ip link show dev {shlex.quote(args.peer_if)} "
                       ">/dev/null 2>&1"):
            raise BoardError(f"the partner has no interface {args.peer_if} "
                             "(PEER_IF)")
        f["peer_if"] = args.peer_if
    else:
        m = re.search(r"^\d+:\s+(\S+)\s+inet\s", peer.run(
            f"ip -o addr show to {shlex.quote(args.remote_v4)}").stdout, re.MULTILINE)
        if not m:
            raise BoardError(f"no interface of the partner holds "
                             f"{args.remote_v4}: name it (PEER_IF=)")
        f["peer_if"] = m.group(1)
    # lan743x: a module the kit can load back afterwards
    mods = dut.run("cat /proc/modules").stdout
    f["loaded"] = bool(re.search(r"^lan743x ", mods, re.MULTILINE))
    if not f["loaded"] and dut.ok("test -d /sys/module/lan743x"):
        raise BoardError("lan743x is built into the board's kernel: the kit "
                         "loads modules in turn (CONFIG_LAN743X=m)")
    inst = dut.run("modinfo -F vermagic lan743x")
    f["dut_magic"] = inst.stdout.strip() if inst.returncode == 0 else None
    if f["loaded"] and not f["dut_magic"]:
        raise BoardError("lan743x is loaded on the board but not installed "
                         "for its kernel (modinfo lan743x fails): the kit "
                         "could not load it back afterwards; install it, or "
                         "rmmod it first")
    f["dut_if"] = link_state(dut, args.netif)
    f["peer_ifstate"] = link_state(peer, f["peer_if"])
    return f


def partner_check(args, dut, peer, facts, warnings):
    """The partner must send 1 Gbit/s: its link speed (ethtool) and a UDP
    sender test at 1 Gbit/s to the board (the sender's own rate: what the
    board drops is not the partner's). Below --peer-min-mbit the kit
    refuses (0: a warning in the table instead)."""
    res = {}
    sp = re.search(r"Speed: (\d+)Mb/s", peer.run(
        f"ethtool {shlex.quote(facts['peer_if'])}").stdout)
    res["link_mbit"] = int(sp.group(1)) if sp else None
    srv = iperf_server(dut, args.local_v4)
    p = peer.run(f"iperf3 -c {args.local_v4} -u -b 1G -l 1400 -t 3 -J",
                 timeout=60)
    try:
        srv.wait(timeout=10)
    except subprocess.TimeoutExpired:
        srv.kill()
    try:
        end = json.loads(p.stdout)["end"]
        s = end.get("sum_sent") or end["sum"]
        res["udp_sent_mbit"] = s["bits_per_second"] / 1e6
    except (ValueError, KeyError) as e:
        raise BoardError(f"the partner's UDP test (iperf3 -u -b 1G to the "
                         f"board) gave no result: {e}: "
                         f"{(p.stderr or p.stdout)[-300:]}") from None
    why = []
    if res["link_mbit"] is not None and res["link_mbit"] < 1000:
        why.append(f"its link runs at {res['link_mbit']} Mb/s")
    limit = args.peer_min_mbit or PEER_MBIT
    if res["udp_sent_mbit"] < limit:
        why.append(f"it sent UDP at {res['udp_sent_mbit']:.0f} Mbit/s "
                   f"(below {limit})")
    if why:
        msg = ("the partner cannot drive the link at 1 Gbit/s: "
               + "; ".join(why))
        if args.peer_min_mbit > 0:
            raise BoardError(msg + ": the bench would measure the partner; "
                             "use a faster partner, or PEER_MIN_MBIT=0 "
                             "(BOARD_ARGS=--peer-min-mbit=0) to run anyway "
                             "with this warning in the table")
        warnings.append(msg)
        progress("warning: " + msg)
    return res


def cache_mode(asked, probe, thumb2):
    """How the cache maintenance calls are counted: ASKED (--cache-counts:
    auto, profiler, kprobes, none) against what the board's kernel has
    (trace.sh probe: PROBE) and whether it is a Thumb-2 kernel (THUMB2:
    True, False or None, unknown; kprobes oops on one). auto: the
    function profiler, else kprobe events on a kernel known not to be
    Thumb-2, else none."""
    prof = probe.get("profiler") == "yes"
    kp = probe.get("kprobes") == "yes" and probe.get("hist") == "yes"
    if thumb2 is None:
        thumb2 = {"yes": True, "no": False}.get(probe.get("thumb2"))
    if asked == "profiler":
        return "profiler" if prof else "none"
    if asked == "kprobes":
        return "kprobes" if kp else "none"
    if asked == "none":
        return "none"
    if prof:
        return "profiler"
    return "kprobes" if kp and thumb2 is False else "none"


#: a listening socket of iperf3's port (5201 = 0x1451) in /proc/net/tcp*
LISTENING = ("cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk "
             "'$2 ~ /:1451$/ && $4 == \"0A\" { f = 1 } END { exit !f }'")


def iperf_server(host, addr, timeout=60):
    """iperf3 -s -1 started on HOST at ADDR, once its socket listens (its
    own output is buffered when it is not a terminal): the process."""
    if host.ok(LISTENING):
        raise BoardError(f"port 5201 already listens on the {host.role} "
                         "(another iperf3 -s?): stop it first")
    srv = host.popen(f"exec iperf3 -s -1 -B {addr}")
    end = time.time() + timeout
    while not host.ok(LISTENING):
        if srv.poll() is not None:
            raise BoardError(f"iperf3 -s on the {host.role} ended: "
                             f"{srv.communicate()[1].strip()[-300:]}")
        if time.time() > end:
            srv.kill()
            raise BoardError(f"iperf3 -s on the {host.role} did not listen "
                             f"on {addr} within {timeout} s")
        time.sleep(0.2)
    return srv


def set_mtu(host, dev, mtu):
    """ip link set DEV mtu MTU on HOST."""
    host.sh(f"ip link set dev {shlex.quote(dev)} mtu {int(mtu)}")


def restore_link(host, dev, state):
    """Put DEV of HOST back to STATE (link_state()): MTU, addresses (the
    kit's removed, the original ones back), up or down."""
    q = shlex.quote(dev)
    host.sh(f"ip link set dev {q} mtu {state['mtu']}")
    now = link_state(host, dev)["addrs"]
    for a in now:
        if a not in state["addrs"]:
            host.sh(f"ip addr del {a} dev {q}")
    for a in state["addrs"]:
        if a not in now:
            host.sh(f"ip addr add {a} dev {q}")
    host.sh(f"ip link set dev {q} {'up' if state['up'] else 'down'}")


class Board:
    """The run on the board: modules, addresses, cells."""

    def __init__(self, args, dut, peer, facts, out):
        self.args, self.dut, self.peer, self.facts = args, dut, peer, facts
        self.out = out
        self.w = args.remote_dir
        self.dev = args.netif
        self.q = shlex.quote(args.netif)
        self.loaded = None
        self.trace = {}
        self.unavailable = {}
        self.cache = "none"

    # modules ----------------------------------------------------------

    def load(self, name, ko_remote, deps):
        """rmmod lan743x, insmod the module NAME; wait for NETIF."""
        progress(f"loading {name}")
        dep = f"modprobe -a {' '.join(deps)} 2>/dev/null; " if deps else ""
        p = self.dut.run(f"{dep}rmmod lan743x 2>/dev/null; insmod "
                         f"{shlex.quote(ko_remote)}")
        self.loaded = name
        if p.returncode:
            tail = self.dut.run("dmesg | tail -5").stdout.strip()
            raise BoardError(f"insmod of {name} failed: "
                             f"{p.stderr.strip()[-300:]} (dmesg: {tail})")
        for _ in range(50):
            if self.dut.ok(f"ip link show dev {self.q} >/dev/null 2>&1"):
                return
            time.sleep(0.2)
        raise BoardError(f"no {self.dev} after insmod of {name} (renamed by "
                         "udev? NETIF must be the name it gets)")

    def restore_module(self):
        """Put back the board's own lan743x (or none, as it was)."""
        if self.loaded is None:
            return
        self.dut.sh("rmmod lan743x 2>/dev/null; true")
        if self.facts["loaded"]:
            self.dut.sh("modprobe lan743x", what="modprobe lan743x (the "
                        "board's own module)")
            for _ in range(50):
                if self.dut.ok(f"ip link show dev {self.q} >/dev/null 2>&1"):
                    break
                time.sleep(0.2)
        self.loaded = None

    def address(self):
        """LOCAL_V4 (V6) on NETIF, the link up, the partner answering."""
        self.dut.run(f"ip addr add {self.args.local_v4}/{self.args.prefix} "
                     f"dev {self.q}")
        if self.args.local_v6:
            self.dut.run(f"ip -6 addr add {self.args.local_v6}/64 dev "
                         f"{self.q} nodad")
        self.up()

    def up(self):
        """NETIF up; BoardError unless the partner answers a ping."""
        self.dut.sh(f"ip link set dev {self.q} up")
        if not self.dut.ok(f"for i in $(seq 30); do ping -c1 -W1 "
                           f"{self.args.remote_v4} >/dev/null 2>&1 && exit 0;"
                           " done; exit 1"):
            raise BoardError(f"the partner ({self.args.remote_v4}) does not "
                             f"answer on {self.dev}")

    # counters ---------------------------------------------------------

    def snapshot(self):
        """The board's counters now: /proc/stat, /proc/interrupts, rtnl
        stats, ethtool -S, meminfo (dict of texts)."""
        t = self.dut.sh(
            f"cat /proc/stat; echo @@; cat /proc/interrupts; echo @@; "
            f"ip -s -s -j link show dev {self.q}; echo @@; "
            f"ethtool -S {self.q} 2>/dev/null; echo @@; cat /proc/meminfo")
        parts = t.split("@@\n")
        if len(parts) != 5:
            raise BoardError("the board's counters came back malformed")
        return dict(zip(("stat", "irq", "rtnl", "ethtool", "meminfo"), parts))

    def ynl(self, op, req=None, dump=True):
        """A netdev family request over ynl on the board (its JSON), or
        None when the board cannot run ynl."""
        if "ynl" not in self.trace:
            cli = f"{self.w}/ksft-ynl/ynl/pyynl/cli.py"
            spec = f"{self.w}/ksft-ynl/ynl/netdev.yaml"
            if self.dut.ok(f"test -f {cli} && python3 -c 'import yaml'"):
                self.trace["ynl"] = f"python3 {cli} --spec {spec} --no-schema"
            elif self.dut.ok("command -v ynl >/dev/null 2>&1"):
                self.trace["ynl"] = "ynl --family netdev"
            else:
                self.trace["ynl"] = None
                self.unavailable["qstats, page_pool rows"] = (
                    "no ynl on the board (python3-yaml and the kit's copy of "
                    "tools/net/ynl, or a ynl command)")
        if not self.trace["ynl"]:
            return None
        cmd = f"{self.trace['ynl']} {'--dump' if dump else '--do'} {op}"
        if req:
            cmd += f" --json {shlex.quote(json.dumps(req))}"
        p = self.dut.run(cmd + " --output-json")
        if p.returncode:
            # ynl's cli prints a netlink error ("Netlink error: Operation
            # not supported") on stdout; the last line says why
            said = (p.stderr.strip() or p.stdout.strip()).splitlines()
            self.unavailable[f"ynl {op} with {self.loaded}"] = (
                said[-1][-200:] if said else f"exit status {p.returncode}")
            return None
        try:
            return json.loads(p.stdout)
        except ValueError:
            return None

    def ifindex(self):
        """NETIF's ifindex."""
        return int(self.dut.sh(f"cat /sys/class/net/{self.q}/ifindex"))

    def tr(self, *cmd):
        """lab/board/trace.sh on the board: its output."""
        return self.dut.run(
            f"sh {self.w}/trace.sh {shlex.quote(self.args.tracefs)} "
            f"{self.w}/trace.state " + " ".join(shlex.quote(c) for c in cmd)
        ).stdout

    def probe(self):
        """What this kernel can count; the reasons of the rows it cannot
        give go to self.unavailable."""
        kv = dict(line.split("=", 1) for line in self.tr("probe").split()
                  if "=" in line)
        self.trace.update(kv)
        u = self.unavailable
        if kv.get("tracefs") != "yes":
            u["NAPI, DMA, page allocation, page_pool event and cache "
              "maintenance rows"] = (f"no tracefs at {self.args.tracefs} "
                                     "(CONFIG_FTRACE, mounted)")
            return
        if kv.get("hist") != "yes":
            u["NAPI, DMA, page allocation and page_pool event rows"] = \
                "no hist triggers (CONFIG_HIST_TRIGGERS)"
        if not kv.get("map"):
            u["dma map/unmap/sync rows"] = ("no dma:* tracepoints (Linux "
                                            "6.12 or later, CONFIG_FTRACE)")
        if not kv.get("pp_hold"):
            u["page_pool new/released pages"] = "no page_pool tracepoints"
        self.cache = cache_mode(self.args.cache_counts, kv,
                                self.facts.get("thumb2"))
        if self.cache == "none":
            u["arch_sync_dma_for_* calls/pkt (cache maintenance)"] = (
                "neither the function profiler for arch_sync_dma_for_device"
                "/_cpu (CONFIG_FUNCTION_PROFILER, a non-coherent arch) nor "
                "kprobe events on a kernel known not to be Thumb-2 "
                "(CONFIG_KPROBE_EVENTS; --cache-counts)")

    # cells ------------------------------------------------------------

    def iperf(self, cell, secs):
        """One iperf3 run of CELL: (client JSON text, stderr)."""
        mtu, direction = CELLS[cell]
        del mtu
        a = self.args
        srv_host, cli_host, to = ((self.dut, self.peer, a.local_v4)
                                  if direction == "rx" else
                                  (self.peer, self.dut, a.remote_v4))
        srv = iperf_server(srv_host, to)
        try:
            p = cli_host.run(f"iperf3 -c {to} -J -t {secs} -P 4",
                             timeout=secs + 60)
        finally:
            try:
                srv.wait(timeout=15)
            except subprocess.TimeoutExpired:
                srv.kill()
        return p.stdout, p.stderr

    def cell(self, name, module, rep):
        """Measure cell NAME: its record."""
        mtu, direction = CELLS[name]
        set_mtu(self.peer, self.facts["peer_if"], mtu)
        set_mtu(self.dut, self.dev, mtu)
        self.up()
        s0 = self.snapshot()
        q0 = self.ynl("qstats-get", {"ifindex": self.ifindex()})
        tracing = self.trace.get("tracefs") == "yes"
        if tracing:
            self.tr("start", self.facts["pci"], self.dev, self.cache)
        js, err = self.iperf(name, self.args.secs)
        hists = self.tr("stop") if tracing else ""
        s1 = self.snapshot()
        q1 = self.ynl("qstats-get", {"ifindex": self.ifindex()})
        rec = {"cell": name, "module": module, "rep": rep, "mtu": mtu,
               "dir": direction, "raw": {"before": s0, "after": s1,
                                         "hists": hists,
                                         "qstats": [q0, q1]}}
        rec["metrics"] = cell_metrics(s0, s1, js, err, hists, direction,
                                      self.dev, self.facts["pci"], q0, q1)
        if name.startswith("tcp-rx"):
            rec["metrics"].update(self.held_after())
        return rec

    def held_after(self):
        """Memory the driver holds after an RX run: its page_pools'
        inflight pages (netlink) and the pages freed while the interface
        goes down (per RX queue); then up again."""
        m = {}
        pools = self.ynl("page-pool-get")
        if pools is not None:
            ifi = self.ifindex()
            mine = [p.get("inflight", 0) for p in pools
                    if p.get("ifindex") == ifi]
            if mine:
                m["page_pool pages per queue after the run (inflight)"] = \
                    sum(mine) / len(mine)
                m["page_pool pages, busiest queue (inflight)"] = max(mine)
        st = self.ynl("page-pool-stats-get")
        if st:
            ifi = self.ifindex()
            for s in st:
                if (s.get("info") or {}).get("ifindex") != ifi:
                    continue
                for k, v in s.items():
                    if isinstance(v, int):
                        key = f"page_pool stats {k} (after the run)"
                        m[key] = m.get(key, 0) + v
        if self.trace.get("page_free") and self.trace.get("hist") == "yes":
            self.tr("downcount", self.dev)
            text = self.tr("stop")
            pages = sum(int(n) << int(o) for o, n in re.findall(
                r"order:\s*(\d+)\s*}\s*hitcount:\s*(\d+)", text))
            queues = int(self.dut.sh(
                f"ls -d /sys/class/net/{self.q}/queues/rx-* | wc -l"))
            if queues:
                m["pages held per RX queue after the run (freed at down)"] = \
                    pages / queues
        slab = meminfo_kib(self.dut.sh("cat /proc/meminfo"), "Slab")
        m["Slab KiB after the run"] = slab
        self.up()
        return m

    def mem_up(self, module, rep):
        """The memory `ip link set up` takes with the module just loaded:
        its record."""
        self.dut.sh(f"ip link set dev {self.q} down")
        free0 = free_kib(self.dut)
        text = ""
        if self.trace.get("hist") == "yes":
            self.tr("upcount", self.dev)
            text = self.tr("stop")
        else:
            self.dut.sh(f"ip link set dev {self.q} up")
        free1 = free_kib(self.dut)
        m = {"KiB taken by ip link set up (free pages)": free0 - free1}
        if text:
            page_kib = int(self.dut.sh("getconf PAGESIZE")) // 1024
            sec = hist_sections(text)
            if "page_alloc" in sec:
                drv = [(o, n) for o, n, lan in page_allocs(sec["page_alloc"])
                       if lan]
                m["KiB of pages lan743x allocated at up"] = sum(
                    n * (page_kib << o) for o, n in drv)
            if "pp_hold" in sec:
                m["KiB of pages into lan743x page_pools at up"] = \
                    page_kib * hits(sec["pp_hold"])[0]
        self.up()
        return {"cell": "mem-up", "module": module, "rep": rep, "mtu": 1500,
                "metrics": m}

    def live_change(self, change, module, rep):
        """One live MTU change under the partner's paced UDP stream: its
        record (frames lost and the longest receive gap, as the board's
        receiver counted the partner's sequence numbers)."""
        a, b = CHANGES[change]
        set_mtu(self.peer, self.facts["peer_if"], max(a, b))
        set_mtu(self.dut, self.dev, a)
        self.up()
        secs = 4
        recv = self.dut.popen(f"exec python3 {self.w}/udpseq.py recv --bind "
                              f"{self.args.local_v4} --port "
                              f"{self.args.live_port} --secs {secs + 60}")
        ready = recv.stdout.readline()
        if "ready" not in ready:
            recv.kill()
            raise BoardError(f"the board's UDP receiver did not start: "
                             f"{recv.stderr.read()[-300:]}")
        send = self.peer.popen(f"exec python3 {self.w}/udpseq.py send --to "
                               f"{self.args.local_v4} --port "
                               f"{self.args.live_port} --rate "
                               f"{self.args.live_rate} --secs {secs}")
        if "started" not in send.stdout.readline():
            send.kill()
            recv.kill()
            raise BoardError(f"the partner's UDP sender did not start: "
                             f"{send.stderr.read()[-300:]}")
        # the change in the stream's second second
        time.sleep(1.5)
        ch = self.dut.sh(
            "python3 -c " + shlex.quote(
                "import subprocess, time\n"
                "t = time.monotonic()\n"
                f"r = subprocess.run(['ip', 'link', 'set', 'dev', "
                f"{self.dev!r}, 'mtu', '{b}']).returncode\n"
                "print(r, (time.monotonic() - t) * 1000)\n"))
        so, _ = send.communicate(timeout=secs + 60)
        ro, rerr = recv.communicate(timeout=secs + 90)
        rc, ms = ch.split()
        try:
            sent = json.loads(so.strip().splitlines()[-1])["sent"]
            got = json.loads(ro.strip().splitlines()[-1])
        except (ValueError, KeyError, IndexError) as e:
            raise BoardError(f"the live change's UDP stream gave no counts: "
                             f"{e}: {rerr[-300:]}") from None
        if int(rc):
            raise BoardError(f"ip link set mtu {b} failed on the board "
                             f"during {change} ({module})")
        return {"cell": change, "module": module, "rep": rep,
                "metrics": {"lost packets": sent - got["received"],
                            "longest gap, ms": got["max_gap_ms"],
                            "ip link set mtu, ms": float(ms)},
                "raw": {"sent": sent, "recv": got}}

    # selftests --------------------------------------------------------

    def net_config(self):
        """net.config of drivers/net and drivers/net/hw on the board."""
        a = self.args
        lines = [f"NETIF={self.dev}", f"LOCAL_V4={a.local_v4}",
                 f"REMOTE_V4={a.remote_v4}", "REMOTE_TYPE=ssh",
                 f"REMOTE_ARGS={a.peer_from_dut}"]
        if a.local_v6 and a.remote_v6:
            lines += [f"LOCAL_V6={a.local_v6}", f"REMOTE_V6={a.remote_v6}"]
        lines += a.net_config
        return "\n".join(lines) + "\n"

    def selftests(self, name, tests):
        """run_kselftest.sh of TESTS with the module NAME loaded: {test:
        result} (the KTAP goes to selftests-NAME.ktap)."""
        progress(f"selftests with {name}: {len(tests)} files")
        cmd = (f"cd {self.w}/ksft && ./run_kselftest.sh "
               + " ".join(f"-t {t}" for t in tests) + " </dev/null")
        p = self.dut.run(cmd, timeout=3 * 3600)
        ktap = p.stdout + (f"\n# stderr:\n{p.stderr}" if p.stderr else "")
        (self.out / f"selftests-{name}.ktap").write_text(ktap)
        return parse_ktap(p.stdout, tests)


# --- the run ----------------------------------------------------------

def run(args, out):
    """The whole run; the results directory's table text."""
    dut = Host(args.dut, "board", args.ssh_opt)
    peer = Host(args.peer, "partner", args.ssh_opt)
    facts = preflight(args, dut, peer)
    kos, bmeta = build(args, out)
    if bmeta:
        cfg = Path(bmeta["kdir"], ".config").read_text(encoding="utf-8",
                                                       errors="replace")
        facts["thumb2"] = "CONFIG_THUMB2_KERNEL=y" in cfg.splitlines()
    check_vermagic(kos, facts["dut_kernel"], facts["dut_magic"])
    ksft = None
    if not args.no_selftests:
        if not dut.ok(f"ssh -o BatchMode=yes {shlex.quote(args.peer_from_dut)}"
                      " true"):
            raise BoardError(f"the board cannot ssh to the partner as "
                             f"{args.peer_from_dut} without a password "
                             "(REMOTE_TYPE=ssh of the selftests): set up a "
                             "key, or give --peer-from-dut")
        if args.ksft:
            ksft = Path(args.ksft)
        elif bmeta is None:
            raise BoardError("the selftests are built from the kernel "
                             "source: give KDIR= (or --ksft DIR, or "
                             "--no-selftests)")
        else:
            ksft = build_ksft(args, out, bmeta)
    meta = {"dut": args.dut, "peer": args.peer, "netif": args.netif,
            "arch": args.arch, "reps": args.reps, "secs": args.secs,
            "modules": args.names, "kos": {n: str(k) for n, k in kos.items()},
            "build": bmeta, "warnings": [], "dut_kernel": facts["dut_kernel"],
            "dut_machine": facts["dut_machine"], "facts": facts,
            "emulated": False}
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    b = Board(args, dut, peer, facts, out)
    undo = Undo()
    failed = []
    try:
        undo.push(f"the board's {args.netif}",
                  lambda: restore_link(dut, args.netif, facts["dut_if"]))
        undo.push("the board's lan743x module", b.restore_module)
        undo.push(f"the partner's {facts['peer_if']}",
                  lambda: restore_link(peer, facts["peer_if"],
                                       facts["peer_ifstate"]))
        pq = shlex.quote(facts["peer_if"])
        mine = f"{args.remote_v4}/{args.prefix}"
        if mine not in facts["peer_ifstate"]["addrs"]:
            peer.sh(f"ip addr add {mine} dev {pq}")
            undo.push(f"the partner's address {mine}",
                      lambda: peer.sh(f"ip addr del {mine} dev {pq}"))
        if args.remote_v6:
            peer.run(f"ip -6 addr add {args.remote_v6}/64 dev {pq} nodad")
        peer.sh(f"ip link set dev {pq} up")
        dut.sh(f"rm -rf {b.w} && mkdir -p {b.w}/ko")
        undo.push("the kit's files on the board", lambda: dut.run(
            f"rm -rf {b.w}"))
        for f in ("trace.sh", "udpseq.py"):
            dut.put(KIT / f, b.w)
        peer.put(KIT / "udpseq.py", b.w)
        remote_ko = {}
        for n, ko in kos.items():
            d = f"{b.w}/ko/{n}"
            dut.run(f"mkdir -p {d}")
            dut.put(ko, d)
            remote_ko[n] = f"{d}/{ko.name}"
        src = Path(bmeta["src"]) if bmeta else \
            (Path(args.src) if args.src else None)
        if src and (src / "tools/net/ynl/pyynl/cli.py").exists():
            # ynl's Python and the netdev spec (qstats, page_pool rows)
            dut.run(f"mkdir -p {b.w}/ksft-ynl/ynl")
            dut.put(src / "tools/net/ynl/pyynl", f"{b.w}/ksft-ynl/ynl")
            dut.put(src / "Documentation/netlink/specs/netdev.yaml",
                    f"{b.w}/ksft-ynl/ynl")
        b.probe()
        # the board's own module (as it was) answers the partner check
        if not facts["loaded"]:
            b.load(args.names[0], remote_ko[args.names[0]],
                   module_deps(kos[args.names[0]]))
        b.address()
        meta["partner"] = partner_check(args, dut, peer, facts,
                                        meta["warnings"])
        if ksft:
            dut.put(ksft, f"{b.w}/.ksft")
            dut.sh(f"mv {b.w}/.ksft/{shlex.quote(ksft.name)} {b.w}/ksft")
            cfg = b.net_config()
            for d in ("drivers/net", "drivers/net/hw"):
                dut.run(f"cat > {b.w}/ksft/{d}/net.config", stdin=cfg)
            have = dut.run(f"cd {b.w}/ksft && ls -d drivers/net/hw/* "
                           "drivers/net/*").stdout.split()
            tests = [t for t in args.tests or SERIES_TESTS + GENERIC_TESTS
                     if t.replace(":", "/", 1) in have]
            meta["selftests"] = {}
            for n in args.names:
                b.load(n, remote_ko[n], module_deps(kos[n]))
                b.address()
                meta["selftests"][n] = b.selftests(n, tests)
                (out / "meta.json").write_text(json.dumps(meta, indent=1))
        if not args.no_bench:
            recs = out / "records.jsonl"
            with open(recs, "a", encoding="utf-8") as f:
                for rep in range(1, args.reps + 1):
                    for n in args.names:
                        b.load(n, remote_ko[n], module_deps(kos[n]))
                        todo = []
                        if "mem-up" in args.cells:
                            b.dut.run(f"ip addr add {args.local_v4}/"
                                      f"{args.prefix} dev {b.q}")
                            todo.append(b.mem_up(n, rep))
                        else:
                            b.address()
                        for c in args.cells:
                            if c in CELLS:
                                progress(f"rep {rep}/{args.reps} {n} {c}")
                                todo.append(b.cell(c, n, rep))
                        for c in args.changes:
                            progress(f"rep {rep}/{args.reps} {n} {c}")
                            todo.append(b.live_change(c, n, rep))
                        f.writelines(json.dumps(r) + "\n" for r in todo)
                        f.flush()
    finally:
        meta["unavailable"] = b.unavailable
        failed = undo.run()
        meta["restore_failed"] = failed
        (out / "meta.json").write_text(json.dumps(meta, indent=1))
    if failed:
        raise BoardError("the run ended but the board or the partner could "
                         "not be put back as it was: " + "; ".join(failed))
    return board_report.report(out)


def main(argv=None):
    """Run the kit; 0 when done, 2 on a refusal or failure."""
    args = parse_args(argv)
    out = Path(args.out or ROOT / "results" /
               time.strftime("board-%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        print(run(args, out))
    except BoardError as e:
        (out / "error.txt").write_text(str(e) + "\n")
        print(f"error: {e}", file=sys.stderr)
        return 2
    progress(f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
