"""The board kit (lab/board/, make board) without a board: its refusals
and its putting back of the board's state.

A fake `ssh` on PATH runs the remote command locally in a sandbox per
host (tmp_path/hosts/<host>): that host's fake uname, ip, ethtool,
iperf3, modinfo, insmod, rmmod, modprobe, ping and dmesg (FAKE below)
keep the state of its interfaces and its lan743x module in state.json, and
the paths /proc/ and /sys/ of the command are the sandbox's. A host whose
sandbox has a file "unreachable" answers as an unreachable host does (ssh
exit 255). Each refusal must leave both hosts' state as it was (module,
MTU, addresses, link), and a run that fails half-way must put it back.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading

import pytest
from conftest import ROOT, lab_module

KIT = ROOT / "lab" / "board"
sys.path.insert(0, str(KIT))
import board_parse
import board_report
import report  # lab/bench/report.py

outage = lab_module("lab/bench/outage.py")

BOARD, PEER = "board", "peer"
RELEASE = "7.3.0-board"
MAGIC = f"{RELEASE} SMP mod_unload ARMv7 p2v8"

# the fake commands of a host: one Python program, called by its name
FAKE = r'''
import fcntl, json, os, sys, time
H = os.environ["FAKE_HOST"]
cmd, args = os.path.basename(sys.argv[1]), sys.argv[2:]


def load():
    global lockf
    lockf = open(os.path.join(H, "state.lock"), "w")
    fcntl.flock(lockf, fcntl.LOCK_EX)
    with open(os.path.join(H, "state.json")) as f:
        return json.load(f)


def save(st):
    with open(os.path.join(H, "state.json"), "w") as f:
        json.dump(st, f, indent=1)
    mods = "".join(f"{m} 200000 0 - Live 0x00000000\n" for m in st["modules"])
    with open(os.path.join(H, "fs/proc/modules"), "w") as f:
        f.write(mods)


def fail(msg, rc=1):
    print(msg, file=sys.stderr)
    sys.exit(rc)


st = load()
ifs = st["ifs"]


def dev_of(a):
    return a[a.index("dev") + 1]


if cmd == "uname":
    print(st["release"] if "-r" in args else "armv7l")
elif cmd == "ip":
    a = [x for x in args if x not in ("-6",)]
    if a[:2] == ["link", "show"] and "dev" in a:
        if dev_of(a) not in ifs:
            fail(f'Device "{dev_of(a)}" does not exist.')
        print(f"3: {dev_of(a)}: <UP> mtu {ifs[dev_of(a)]['mtu']}")
    elif a[:3] == ["-o", "link", "show"]:
        for i, n in enumerate(ifs):
            print(f"{i + 1}: {n}: <UP> mtu {ifs[n]['mtu']}")
    elif a[:3] == ["-j", "addr", "show"]:
        i = ifs.get(dev_of(a))
        if i is None:
            fail("no such device")
        print(json.dumps([{"ifname": dev_of(a), "mtu": i["mtu"],
                           "flags": ["UP"] if i["up"] else [],
                           "addr_info": [{"local": x.split("/")[0],
                                          "prefixlen": int(x.split("/")[1]),
                                          "scope": "global"}
                                         for x in i["addrs"]]}]))
    elif a[:4] == ["-s", "-s", "-j", "link"]:
        i = ifs[dev_of(a)]
        i["pk"] = i.get("pk", 0) + 1000
        save(st)
        print(json.dumps([{"stats64": {
            "rx": {"packets": i["pk"], "bytes": 1500 * i["pk"],
                   "dropped": 0, "missed": 0},
            "tx": {"packets": i["pk"], "bytes": 1500 * i["pk"],
                   "dropped": 0}}}]))
    elif a[:2] in (["addr", "add"], ["addr", "del"]):
        i = ifs.get(dev_of(a))
        if i is None:
            fail("no such device")
        addr = a[2] if "/" in a[2] else a[2] + "/32"
        if a[1] == "add":
            if addr in i["addrs"]:
                fail("RTNETLINK answers: File exists", 2)
            i["addrs"].append(addr)
        else:
            if addr not in i["addrs"]:
                fail("RTNETLINK answers: Cannot assign requested address", 2)
            i["addrs"].remove(addr)
        save(st)
    elif a[:2] == ["link", "set"]:
        i = ifs.get(dev_of(a))
        if i is None:
            fail("no such device")
        if "mtu" in a:
            i["mtu"] = int(a[a.index("mtu") + 1])
        if "up" in a:
            i["up"] = True
        if "down" in a:
            i["up"] = False
        save(st)
    elif a[:3] == ["-o", "addr", "show"]:
        for n, i in ifs.items():
            for x in i["addrs"]:
                if x.split("/")[0] == a[-1]:
                    print(f"3: {n}    inet {x} scope global {n}")
    else:
        fail(f"fake ip: {args}")
elif cmd == "ethtool":
    dev = args[-1]
    if dev not in ifs:
        fail(f"no device {dev}", 75)
    if args[0] == "-i":
        print(f"driver: {ifs[dev]['driver']}\nbus-info: 0000:01:00.0")
    elif args[0] == "-S":
        print("NIC statistics:\n     rx_dropped: 0")
    else:
        print(f"Settings for {dev}:\n\tSpeed: {st['speed']}Mb/s")
elif cmd == "iperf3":
    if "-c" in args:
        # the server (on the other host) has its client: it ends
        import glob
        for tcp in glob.glob(os.path.join(os.environ["BOARD_SANDBOX"],
                                          "hosts/*/fs/proc/net/tcp")):
            os.unlink(tcp)
    if "-s" in args:
        # its socket, as /proc/net/tcp shows it, until a client (-c on
        # the other host) has run, as iperf3 -s -1 does
        lockf.close()
        tcp = os.path.join(H, "fs/proc/net/tcp")
        with open(tcp, "w") as f:
            f.write("  sl  local_address rem_address   st\n"
                    "   0: 0100007F:1451 00000000:0000 0A\n")
        for _ in range(600):
            if not os.path.exists(tcp):
                break
            time.sleep(0.05)
    elif "-u" in args:
        print(json.dumps({"end": {"sum_sent": {
            "bits_per_second": st["udp_mbit"] * 1e6}, "sum": {
            "bits_per_second": st["udp_mbit"] * 1e6}}}))
    elif st.get("tcp_fail"):
        fail("iperf3: error - unable to connect to server", 1)
    else:
        print(json.dumps({"end": {
            "sum_received": {"bits_per_second": 9.4e8, "seconds": 1.0},
            "sum_sent": {"retransmits": 3}}}))
elif cmd == "modinfo":
    if st.get("installed_vermagic") and args[-1] == "lan743x":
        print(st["installed_vermagic"] if "vermagic" in args else
              "/lib/modules/x/lan743x.ko")
    else:
        fail(f"modinfo: ERROR: Module {args[-1]} not found.")


def insmod(src):
    if "lan743x" in st["modules"]:
        fail("insmod: ERROR: could not insert module: File exists")
    st["modules"].append("lan743x")
    st["lan743x"] = src
    ifs[st["netif"]] = {"mtu": 1500, "up": False, "addrs": [],
                        "driver": "lan743x"}
    save(st)


if cmd == "insmod":
    insmod(args[-1])
elif cmd == "rmmod":
    if "lan743x" not in st["modules"]:
        fail("rmmod: ERROR: Module lan743x is not currently loaded")
    st["modules"].remove("lan743x")
    st["lan743x"] = None
    ifs.pop(st["netif"], None)
    save(st)
elif cmd == "modprobe":
    if args[0] != "-a":
        insmod("installed")
elif cmd == "ping":
    pass
elif cmd == "dmesg":
    print("[    1.0] fake dmesg")
'''

FAKE_SSH = r'''#!/bin/bash
# fake ssh: the command runs here, in the sandbox of its host
while [ $# -gt 0 ]; do
	case "$1" in
	-o | -p | -i | -F | -l) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
host=${1#*@}
shift
H=$BOARD_SANDBOX/hosts/$host
if [ ! -d "$H" ] || [ -e "$H/unreachable" ]; then
	echo "ssh: connect to host $host port 22: No route to host" >&2
	exit 255
fi
cmd="$*"
printf '%s\n' "$cmd" >>"$H/log"
cmd=${cmd//\/proc\//$H/fs/proc/}
cmd=${cmd//\/sys\//$H/fs/sys/}
cd "$H" || exit 255
conn=
[ ! -e "$H/ssh_connection" ] || conn=$(cat "$H/ssh_connection")
exec env -i PATH="$H/bin:$BOARD_SANDBOX/sysbin" FAKE_HOST="$H" HOME="$H" \
	BOARD_SANDBOX="$BOARD_SANDBOX" SSH_CONNECTION="$conn" bash -c "$cmd"
'''

# the real programs a fake host has besides its fakes
SYSBIN = ("bash", "sh", "cat", "mkdir", "rm", "tar", "sleep", "seq", "grep",
          "ls", "wc", "python3", "getconf", "sync", "env", "sed", "head",
          "tail", "true", "false", "test", "od", "tr", "mv", "cp", "chmod", "awk")
FAKES = ("uname", "ip", "ethtool", "iperf3", "modinfo", "insmod", "rmmod",
         "modprobe", "ping", "dmesg")


def host_state(netif_mtu, peer):
    """The initial state.json of the board (or of the partner)."""
    if peer:
        return {"release": "6.1.0-peer", "speed": 1000, "udp_mbit": 950,
                "netif": "eth1", "modules": [], "lan743x": None,
                "ifs": {"eth0": {"mtu": 1500, "up": True,
                                 "addrs": ["10.9.0.2/24"], "driver": "igb"},
                        "eth1": {"mtu": 1450, "up": True, "addrs": [],
                                 "driver": "igb"}}}
    return {"release": RELEASE, "speed": 1000, "udp_mbit": 950,
            "netif": "eth1", "modules": ["lan743x"], "lan743x": "installed",
            "installed_vermagic": MAGIC,
            "ifs": {"eth0": {"mtu": 1500, "up": True,
                             "addrs": ["10.9.0.1/24"], "driver": "fec"},
                    "eth1": {"mtu": netif_mtu, "up": True,
                             "addrs": ["10.0.0.5/24"], "driver": "lan743x"}}}


class Sandbox:
    """Two fake hosts behind a fake ssh, and the kit's command line."""

    def __init__(self, tmp):
        self.tmp = tmp
        sysbin = tmp / "sysbin"
        sysbin.mkdir()
        for p in SYSBIN:
            w = shutil.which(p)
            if w:
                (sysbin / p).symlink_to(w)
        (tmp / "fake.py").write_text(FAKE)
        (tmp / "bin").mkdir()
        ssh = tmp / "bin" / "ssh"
        ssh.write_text(FAKE_SSH)
        ssh.chmod(0o755)
        for name in (BOARD, PEER):
            h = tmp / "hosts" / name
            (h / "bin").mkdir(parents=True)
            for f in FAKES:
                p = h / "bin" / f
                p.write_text(f'#!/bin/bash\nexec python3 "{tmp}/fake.py" '
                             f'{f} "$@"\n')
                p.chmod(0o755)
            proc = h / "fs" / "proc"
            (proc / "net").mkdir(parents=True)
            (proc / "stat").write_text(
                "cpu  100 0 100 1000 0 0 0 0 0 0\n"
                "cpu0 50 0 50 500 0 0 0 0 0 0\n"
                "cpu1 50 0 50 500 0 0 0 0 0 0\n")
            (proc / "interrupts").write_text(
                "           CPU0       CPU1\n"
                " 300:         10         20   PCI-MSI  eth1\n")
            (proc / "meminfo").write_text("MemFree: 100000 kB\n"
                                          "Slab: 2000 kB\n")
            (proc / "vmstat").write_text("nr_free_pages 25000\n")
            net = h / "fs" / "sys" / "class" / "net" / "eth1"
            (net / "queues" / "rx-0").mkdir(parents=True)
            (net / "ifindex").write_text("3\n")
            (h / "state.json").write_text(json.dumps(
                host_state(1400, name == PEER), indent=1))
            # /proc/modules as the state says
            mods = "lan743x 200000 0 - Live 0x0\n" if name == BOARD else ""
            (proc / "modules").write_text(mods)
        self.ko = self.module(MAGIC)

    def module(self, magic, name="lan743x.ko"):
        """A file with a module's .modinfo strings (vermagic MAGIC)."""
        d = self.tmp / "ko" / re.sub(r"\W+", "_", magic)
        d.mkdir(parents=True, exist_ok=True)
        ko = d / name
        ko.write_bytes(b"\x7fELF\0\0\0\0license=GPL\0depends=\0vermagic="
                       + magic.encode() + b" \0name=lan743x\0")
        return ko

    def state(self, host):
        """The host's state.json (dict)."""
        return json.loads((self.tmp / "hosts" / host / "state.json")
                          .read_text())

    def edit(self, host, **kw):
        """Change the host's state.json."""
        st = self.state(host)
        st.update(kw)
        (self.tmp / "hosts" / host / "state.json").write_text(json.dumps(st))

    def log(self, host):
        """The commands the host ran (one a line)."""
        p = self.tmp / "hosts" / host / "log"
        return p.read_text() if p.exists() else ""

    def kit(self, *extra, series=None, ko=None):
        """Run lab/board/board.py against the sandbox: the process."""
        ko = ko or self.ko
        cmd = [sys.executable, str(KIT / "board.py"), "--dut",
               f"root@{BOARD}", "--peer", f"root@{PEER}", "--netif", "eth1",
               "--peer-if", "eth1", "--ko", f"upstream={ko}", "--ko",
               f"series={series or ko}", "--no-selftests", "--reps", "1",
               "--secs", "1", "--cells", "tcp-rx-1500", "--changes", "",
               "--tracefs", str(self.tmp / "no-tracefs"), "--remote-dir",
               str(self.tmp / "remote"), "--out", str(self.tmp / "out")]
        if "--ksft" in extra:
            # the selftests run: the later options of extra win over
            # the ones above, --no-selftests cannot be undone by one
            cmd.remove("--no-selftests")
        env = dict(os.environ, BOARD_SANDBOX=str(self.tmp),
                   PATH=f"{self.tmp / 'bin'}:{os.environ['PATH']}")
        return subprocess.run(cmd + list(extra), text=True,
                              capture_output=True, env=env, timeout=120,
                              check=False)


def comparable(st):
    """What must be as it was: the module, the interfaces (without the
    fake's packet counter)."""
    return {"modules": st["modules"], "lan743x": st["lan743x"],
            "ifs": {n: {k: v for k, v in i.items() if k != "pk"}
                    for n, i in st["ifs"].items()}}


@pytest.fixture(name="sb")
def fixture_sb(tmp_path):
    """A fresh sandbox."""
    return Sandbox(tmp_path)


def refused(sb, p, *words):
    """The kit exited 2 with a message holding WORDS, and neither host's
    state changed."""
    assert p.returncode == 2, p.stdout + p.stderr
    msg = p.stderr.split("error: ")[-1]
    for w in words:
        assert w in msg, msg
    for h in (BOARD, PEER):
        st = sb.state(h)
        assert comparable(st) == comparable(host_state(1400, h == PEER)), h
    assert not re.search(r"^(insmod|rmmod|modprobe)", sb.log(BOARD), re.MULTILINE), \
        sb.log(BOARD)


@pytest.mark.parametrize("host,role", [(BOARD, "board"), (PEER, "partner")])
def test_unreachable_host(sb, host, role):
    """A host ssh cannot reach (exit 255) is named; nothing changes."""
    (sb.tmp / "hosts" / host / "unreachable").touch()
    p = sb.kit()
    refused(sb, p, f"cannot reach the {role} root@{host}", "exit 255")


def test_wrong_netif(sb):
    """A NETIF the board does not have is refused, its interfaces named."""
    p = sb.kit("--netif", "eth7")
    refused(sb, p, "no interface eth7", "eth0, eth1")


def test_netif_not_lan743x(sb):
    """A NETIF that another driver drives is refused."""
    p = sb.kit("--netif", "eth0")
    refused(sb, p, "eth0 on the board is driven by fec", "not lan743x")


def test_module_not_for_running_kernel(sb):
    """A module built for another kernel is refused before any module is
    unloaded (its vermagic against uname -r)."""
    other = sb.module("7.3.0-other SMP mod_unload ARMv7 p2v8")
    p = sb.kit(series=other)
    refused(sb, p, "module series", "7.3.0-other", RELEASE,
            "does not match the board's running kernel")


def test_module_other_flags(sb):
    """The same release with other vermagic flags (another config) is
    refused too: the board's own lan743x's vermagic is the reference."""
    other = sb.module(f"{RELEASE} SMP preempt mod_unload ARMv7 p2v8")
    p = sb.kit(series=other)
    refused(sb, p, "module series", "preempt", "does not match")


@pytest.mark.parametrize("host,role", [(BOARD, "board"), (PEER, "partner")])
def test_iperf3_missing(sb, host, role):
    """iperf3 missing on either end is named before anything changes."""
    (sb.tmp / "hosts" / host / "bin" / "iperf3").unlink()
    p = sb.kit()
    refused(sb, p, f"iperf3 on the {role} (root@{host})")


def test_slow_partner_refused(sb):
    """A partner whose UDP sender does not reach the threshold is refused;
    the address and the module state the check needed are put back."""
    sb.edit(PEER, udp_mbit=400)
    p = sb.kit()
    refused(sb, p, "the partner cannot drive the link at 1 Gbit/s",
            "400 Mbit/s", "PEER_MIN_MBIT=0")


def test_slow_link_refused(sb):
    """A partner link negotiated below 1000 Mb/s is refused."""
    sb.edit(PEER, speed=100)
    p = sb.kit()
    refused(sb, p, "its link runs at 100 Mb/s")


def test_slow_partner_warned(sb):
    """--peer-min-mbit 0 runs anyway; the table carries the warning, the
    rows have make bench's names, and the state is put back."""
    sb.edit(PEER, udp_mbit=400)
    p = sb.kit("--peer-min-mbit", "0")
    assert p.returncode == 0, p.stderr
    table = (sb.tmp / "out" / "table.md").read_text()
    assert "WARNING: the partner cannot drive the link" in table
    for row in ("| tcp-rx-1500 | Mbit/s |", "| tcp-rx-1500 | CPU us/pkt |",
                "| tcp-rx-1500 | IRQs/pkt |", "| tcp-rx-1500 | retransmits |"):
        assert row in table, table
    assert (sb.tmp / "out" / "ratios.png").stat().st_size > 0
    assert "Emulator-only rows" in table and "RX tail writes/pkt" in table
    assert "no tracefs" in table
    recs = [json.loads(x) for x in (sb.tmp / "out" / "records.jsonl")
            .read_text().splitlines()]
    assert {r["module"] for r in recs} == {"upstream", "series"}
    log = sb.log(BOARD)
    assert re.search(r"^.*insmod .*/ko/upstream/lan743x.ko", log, re.MULTILINE), log
    for h in (BOARD, PEER):
        assert comparable(sb.state(h)) == comparable(
            host_state(1400, h == PEER)), h


def test_failure_half_way_puts_back(sb):
    """iperf3 failing in a cell ends the run with its message; the
    board's own module is loaded again, NETIF has its MTU, addresses and
    link back, the partner its MTU and no address of the kit's."""
    sb.edit(PEER, tcp_fail=True)
    p = sb.kit()
    assert p.returncode == 2, p.stderr
    assert "iperf3 gave no result" in p.stderr
    assert "insmod" in sb.log(BOARD)
    for h in (BOARD, PEER):
        assert comparable(sb.state(h)) == comparable(
            host_state(1400, h == PEER)), h


def test_rows_are_make_bench_rows():
    """Every row the kit names as make bench's is one that lab/bench's
    report (or make outage) produces, and every make bench row is either
    counted by the kit or listed as emulator-only."""
    rec = {"packets": 10, "mbit_s": 1, "retransmits": 0,
           "cpu_busy_ticks": 1, "irqs": 1,
           "trace": {"napi_polls": 1, "napi_work": 1, "napi_full_budget": 0,
                     "dma_map_page_from_device_calls": 1,
                     "fn_arch_sync_dma_for_device_calls": 1,
                     "fn_arch_sync_dma_for_cpu_calls": 1,
                     "page_alloc_orders_global": {"0": 1},
                     "page_pool_release": 1,
                     "driver_page_allocs": {"orders": {"0": 1}}},
           "emulator": {"mmio": {"RX_TAIL0": {"w": 1}}, "rx_frames": 1,
                        "irq_per_vector": [1], "rx_fifo_overflow": [0],
                        "desc_errors": 0, "wb_freed_ring_writes": 0},
           "pages_pinned_per_queue": 1, "pool_pages": {"1": 1}}
    bench = set(report.metrics(rec)) | set(report.metrics(
        {"mem_up_kib": 1, "driver_pages_up_kib": 1, "page_pool_up_kib": 1}))
    bench |= {label for _, label in outage.ROWS}
    same = set(board_report.SAME_ROWS)
    emu = set(board_report.EMULATOR_ONLY)
    assert same <= bench, same - bench
    assert emu <= bench, emu - bench
    assert not same & emu
    left = bench - same - emu
    # make outage's model-time window has no board counterpart
    assert left <= {"RX channel stopped, ms (*)"}, left


def test_parsers():
    """The board-side texts: /proc/stat, /proc/interrupts, the hist
    triggers and the function profiler, a KTAP summary."""
    c = board_parse.cpu_ticks("cpu  10 0 10 70 10 0 0 0 0 0\n"
                              "cpu0 5 0 5 35 5 0 0 0 0 0\n")
    assert c["cpu"] == (20, 100) and c["cpu0"] == (10, 50)
    irq = ("           CPU0       CPU1\n"
           " 300:         10         20   GICv2  eth1\n"
           " 301:          1          2   GICv2  other\n")
    assert board_parse.irq_count(irq, "eth1", "0000:01:00.0") == 30
    hist = ("=== dma_map_phys\n"
            "{ common_cpu:          0 } hitcount:         12  size:      1800\n"
            "{ common_cpu:          1 } hitcount:          3  size:       450\n"
            "=== napi_poll\n"
            "{ work:         64, budget:         64 } hitcount:          2\n"
            "{ work:          4, budget:         64 } hitcount:          6\n"
            "=== page_alloc\n"
            "{ common_stacktrace:\n         __alloc_pages+0x1\n"
            "         lan743x_rx_init_ring_element+0x2 [lan743x]\n"
            ", order:          1 } hitcount:          5\n"
            "{ common_stacktrace:\n         __alloc_pages+0x1\n"
            "         tcp_sendmsg+0x3\n"
            ", order:          0 } hitcount:          7\n"
            "=== profile\n"
            "  Function                               Hit    Time\n"
            "  --------                               ---    ----\n"
            "  arch_sync_dma_for_cpu                  30    1.0 us\n")
    snap = {"stat": "cpu  10 0 10 70 0\n", "irq": irq,
            "rtnl": json.dumps([{"stats64": {"rx": {"packets": 0}}}]),
            "ethtool": "", "meminfo": ""}
    after = dict(snap, rtnl=json.dumps([{"stats64": {"rx": {"packets": 10}}}]))
    js = json.dumps({"end": {"sum_received": {"bits_per_second": 1e9,
                                              "seconds": 1},
                             "sum_sent": {"retransmits": 0}}})
    m = board_parse.cell_metrics(snap, after, js, "", hist, "rx", "eth1",
                                 "0000:01:00.0", None, None)
    assert m["dma map calls/pkt"] == 1.5 and m["map bytes/pkt"] == 225
    assert m["NAPI polls/pkt"] == 0.8 and m["work/poll"] == 19
    assert m["full-budget polls %"] == 25
    assert m["driver order>0 allocs/pkt"] == 0.5
    assert m["page allocs/pkt (all)"] == 1.2
    assert m["arch_sync_dma_for_cpu calls/pkt"] == 3
    assert m["arch_sync_dma_for_device calls/pkt"] == 0
    ktap = ("ok 1 selftests: drivers/net/hw: reconfig_traffic.py\n"
            "not ok 2 selftests: drivers/net: ping.py # exit=1\n"
            "ok 3 selftests: drivers/net/hw: tso.py # SKIP\n")
    r = board_parse.parse_ktap(ktap, ["drivers/net/hw:reconfig_traffic.py",
                                      "drivers/net:ping.py",
                                      "drivers/net/hw:tso.py",
                                      "drivers/net:stats.py"])
    assert r == {"drivers/net/hw:reconfig_traffic.py": "pass",
                 "drivers/net:ping.py": "fail",
                 "drivers/net/hw:tso.py": "skip",
                 "drivers/net:stats.py": "not run"}


def test_udpseq_counts():
    """The live change's stream: what the receiver counts is what the
    sender sent when nothing is lost (loopback, one second)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    udp = [sys.executable, str(KIT / "udpseq.py")]
    recv = subprocess.Popen(udp + ["recv", "--bind", "127.0.0.1", "--port",
                                   str(port), "--secs", "30"],
                            text=True, stdout=subprocess.PIPE)
    assert "ready" in recv.stdout.readline()
    out = {}

    def send():
        out["s"] = subprocess.run(udp + ["send", "--to", "127.0.0.1",
                                         "--port", str(port), "--rate",
                                         "2000", "--secs", "1"], text=True,
                                  capture_output=True, check=True).stdout
    t = threading.Thread(target=send)
    t.start()
    t.join()
    # the END markers end the receiver, long before its 30 s
    got = json.loads(recv.communicate(timeout=10)[0].splitlines()[-1])
    sent = json.loads(out["s"].splitlines()[-1])["sent"]
    assert json.loads(out["s"].splitlines()[0]) == {"started": True}
    assert sent > 1000
    assert got["received"] == sent and got["highest"] == sent - 1
    assert 0 < got["max_gap_ms"] < 500


def test_series_patches_and_config(tmp_path):
    """The series for a 7.x source is net, then net-next-1, -2, -3 in
    order (cover letters left out); neither changes the kernel outside the
    driver, and a patch that does is named; the selftests' options missing
    from a kernel config are listed."""
    import board_build  # pylint: disable=import-outside-toplevel
    src = tmp_path / "src"
    src.mkdir()
    (src / "Makefile").write_text("VERSION = 7\nPATCHLEVEL = 3\n")
    ps = board_build.series_patches(src)
    stacks = [p.parent.name for p in ps]
    assert stacks == sorted(stacks, key=["net", "net-next-1", "net-next-2",
                                         "net-next-3"].index)
    assert stacks[0] == "net" and "net-next-3" in stacks
    assert not any(p.name.startswith("0000-") for p in ps)
    assert board_build.core_changes(ps) == []
    (src / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 12\n")
    ps = board_build.series_patches(src)
    assert {p.parent.name for p in ps} == {"6.12", "6.12-2"}
    assert board_build.core_changes(ps) == []
    core = tmp_path / "0001-core.patch"
    core.write_text("diff --git a/net/core/page_pool.c b/net/core/page_pool.c\n"
                    "diff --git a/drivers/net/ethernet/microchip/lan743x_main.c"
                    " b/drivers/net/ethernet/microchip/lan743x_main.c\n"
                    "diff --git a/tools/testing/selftests/x b/tools/testing/"
                    "selftests/x\n")
    assert board_build.core_changes(ps + [core]) == ["net/core/page_pool.c"]
    (src / "Makefile").write_text("VERSION = 5\nPATCHLEVEL = 10\n")
    with pytest.raises(board_parse.BoardError, match="no stack for Linux 5.10"):
        board_build.series_patches(src)
    cfg = tmp_path / "config"
    cfg.write_text("CONFIG_IPV6=y\nCONFIG_VLAN_8021Q=y\nCONFIG_TLS=m\n")
    frag = tmp_path / "frag"
    frag.write_text("CONFIG_IPV6=y\nCONFIG_VLAN_8021Q=m\nCONFIG_TLS=y\n"
                    "CONFIG_FAILSLAB=y\nCONFIG_DEBUG_INFO_BTF_MODULES=n\n")
    assert board_build.kconfig_missing(cfg, [frag]) == [
        "CONFIG_TLS=y", "CONFIG_FAILSLAB=y"]



def test_netif_carries_ssh(sb):
    """A NETIF that the ssh connection arrives through is refused (the kit
    takes it down)."""
    (sb.tmp / "hosts" / BOARD / "ssh_connection").write_text(
        "10.0.0.9 50000 10.0.0.5 22\n")
    p = sb.kit()
    refused(sb, p, "ssh reaches the board through eth1", "10.0.0.5")


# a kselftest install whose run_kselftest.sh reports what it was asked,
# fails reconfig_traffic.py with the upstream module and checks the
# net.config the kit wrote
RUN_KSELFTEST = r"""#!/bin/bash
mod=$(python3 -c 'import json, os; print(json.load(open(os.environ["FAKE_HOST"] + "/state.json"))["lan743x"])')
n=0
while [ $# -gt 0 ]; do
	[ "$1" = -t ] || { shift; continue; }
	t=$2; shift 2
	n=$((n + 1))
	col=${t%%:*} f=${t#*:}
	if ! grep -qx REMOTE_TYPE=ssh "$col/net.config" ||
		! grep -qx NETIF=eth1 "$col/net.config"; then
		echo "not ok $n selftests: $col: $f # no net.config"
	elif [ "$f" = reconfig_traffic.py ] && [[ "$mod" == */upstream/* ]]; then
		echo "not ok $n selftests: $col: $f # exit=1"
	elif [ "$f" = tso.py ]; then
		echo "ok $n selftests: $col: $f # SKIP"
	else
		echo "ok $n selftests: $col: $f"
	fi
done
"""


def fake_install(tmp):
    """A kselftest install directory with a few of the tests."""
    d = tmp / "install"
    for f in ("drivers/net/hw/reconfig_traffic.py",
              "drivers/net/hw/napi_contract.py", "drivers/net/hw/tso.py",
              "drivers/net/ping.py"):
        (d / f).parent.mkdir(parents=True, exist_ok=True)
        (d / f).write_text("#!/usr/bin/env python3\n")
    r = d / "run_kselftest.sh"
    r.write_text(RUN_KSELFTEST)
    r.chmod(0o755)
    return d


def test_selftests_need_ssh_to_partner(sb):
    """The selftests' REMOTE_TYPE=ssh: a board that cannot ssh to the
    partner is refused before anything changes."""
    p = sb.kit("--ksft", str(fake_install(sb.tmp)), "--no-bench")
    refused(sb, p, "the board cannot ssh to the partner as root@peer")


def test_selftests_and_live_change(sb):
    """With each module: the selftests the install has, their results per
    module in the table; the live MTU changes under the partner's UDP
    stream (loopback in the sandbox) with make outage's rows; the state
    put back."""
    (sb.tmp / "hosts" / BOARD / "bin" / "ssh").symlink_to(sb.tmp / "bin"
                                                          / "ssh")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = sb.kit("--ksft", str(fake_install(sb.tmp)), "--cells", "mem-up",
               "--changes", "mtu-1500to9000", "--local-v4", "127.0.0.1",
               "--remote-v4", "127.0.0.2", "--live-port", str(port),
               "--live-rate", "2000")
    assert p.returncode == 0, p.stderr
    table = (sb.tmp / "out" / "table.md").read_text()
    rows = {line.split(" | ")[0].lstrip("| ") + " " + line.split(" | ")[1]:
            line for line in table.splitlines() if line.startswith("| ")}
    assert "| drivers/net/hw:reconfig_traffic.py | fail | pass |" in table
    assert "| drivers/net/hw:napi_contract.py | pass | pass |" in table
    assert "| drivers/net/hw:tso.py | skip | skip |" in table
    assert "| drivers/net:ping.py | pass | pass |" in table
    assert "| drivers/net:stats.py |" not in table   # not in the install
    assert (sb.tmp / "out" / "selftests-upstream.ktap").exists()
    lost = rows["mtu-1500to9000 lost packets"]
    assert lost.startswith("| mtu-1500to9000 | lost packets | 0 [0, 0] | "
                           "0 [0, 0] |"), lost
    assert "mtu-1500to9000 longest gap, ms" in rows
    assert "mtu-1500to9000 ip link set mtu, ms" in rows
    assert "mem-up KiB taken by ip link set up (free pages)" in rows
    recs = [json.loads(x) for x in (sb.tmp / "out" / "records.jsonl")
            .read_text().splitlines()]
    live = [r for r in recs if r["cell"] == "mtu-1500to9000"]
    assert len(live) == 2 and all(r["raw"]["sent"] > 1000 for r in live)
    for h in (BOARD, PEER):
        assert comparable(sb.state(h)) == comparable(
            host_state(1400, h == PEER)), h


def test_selftests_chosen(sb):
    """--tests: only the selftests named, of those the install has."""
    (sb.tmp / "hosts" / BOARD / "bin" / "ssh").symlink_to(sb.tmp / "bin"
                                                          / "ssh")
    p = sb.kit("--ksft", str(fake_install(sb.tmp)), "--no-bench", "--tests",
               "drivers/net/hw:napi_contract.py,drivers/net:stats.py")
    assert p.returncode == 0, p.stderr
    table = (sb.tmp / "out" / "table.md").read_text()
    assert "| drivers/net/hw:napi_contract.py | pass | pass |" in table
    for t in ("reconfig_traffic.py", "ping.py", "stats.py"):
        assert t not in table, table
    p = sb.kit("--ksft", str(fake_install(sb.tmp)), "--tests", "ping.py")
    assert p.returncode == 2 and "COLLECTION:FILE" in p.stderr, p.stderr


def test_cache_counts_mode():
    """The cache maintenance counts: the function profiler first; kprobes
    only on a kernel known not to be Thumb-2 (kprobes oop there), unless
    asked for; what the kernel lacks is never chosen."""
    import board  # pylint: disable=import-outside-toplevel
    full = {"profiler": "yes", "kprobes": "yes", "hist": "yes"}
    kp = {"profiler": "no", "kprobes": "yes", "hist": "yes"}
    assert board.cache_mode("auto", full, None) == "profiler"
    assert board.cache_mode("auto", kp, False) == "kprobes"
    assert board.cache_mode("auto", kp, True) == "none"
    assert board.cache_mode("auto", kp, None) == "none"
    assert board.cache_mode("auto", dict(kp, thumb2="no"), None) == "kprobes"
    assert board.cache_mode("kprobes", kp, None) == "kprobes"
    assert board.cache_mode("profiler", kp, False) == "none"
    assert board.cache_mode("auto", dict(kp, hist="no"), False) == "none"
    hist = ("=== kp_arch_sync_dma_for_device\n"
            "{ common_cpu:          0 } hitcount:         40\n"
            "{ common_cpu:          1 } hitcount:          2\n"
            "=== kprobe\n")
    snap = {"stat": "cpu  10 0 10 70 0\n", "irq": "CPU0\n",
            "rtnl": json.dumps([{"stats64": {"tx": {"packets": 0}}}]),
            "ethtool": "", "meminfo": ""}
    after = dict(snap, rtnl=json.dumps([{"stats64": {"tx": {"packets": 21}}}]))
    js = json.dumps({"end": {"sum_received": {"bits_per_second": 1},
                             "sum_sent": {}}})
    m = board_parse.cell_metrics(snap, after, js, "", hist, "tx", "eth1",
                                 "x", None, None)
    assert m["arch_sync_dma_for_device calls/pkt"] == 2
    assert "arch_sync_dma_for_cpu calls/pkt" not in m


def test_iperf3_port_taken(sb):
    """An iperf3 server already listening on the board (port 5201) is
    named instead of measuring against it; the state is put back."""
    (sb.tmp / "hosts" / BOARD / "fs" / "proc" / "net" / "tcp").write_text(
        "  sl  local_address rem_address   st\n"
        "   0: 00000000:1451 00000000:0000 0A\n")
    p = sb.kit()
    refused(sb, p, "port 5201 already listens on the board")


def test_lan743x_built_in(sb):
    """A driver built into the kernel cannot be swapped: refused."""
    sb.edit(BOARD, modules=[])
    (sb.tmp / "hosts" / BOARD / "fs" / "proc" / "modules").write_text("")
    (sb.tmp / "hosts" / BOARD / "fs" / "sys" / "module" / "lan743x").mkdir(
        parents=True)
    p = sb.kit()
    assert p.returncode == 2, p.stderr
    assert "lan743x is built into the board's kernel" in p.stderr
    assert not re.search(r"^(insmod|rmmod|modprobe)", sb.log(BOARD),
                         re.MULTILINE)


def test_lan743x_not_installed(sb):
    """A lan743x loaded from elsewhere (none installed for the running
    kernel) could not be loaded back: refused before it is unloaded."""
    st = sb.state(BOARD)
    del st["installed_vermagic"]
    (sb.tmp / "hosts" / BOARD / "state.json").write_text(json.dumps(st))
    p = sb.kit()
    assert p.returncode == 2, p.stderr
    assert "loaded on the board but not installed" in p.stderr
    assert not re.search(r"^(insmod|rmmod|modprobe)", sb.log(BOARD),
                         re.MULTILINE)
    assert sb.state(BOARD)["modules"] == ["lan743x"]


def test_ynl_error_is_the_reason(sb):
    """A ynl request the loaded module refuses (upstream's has no
    per-queue statistics) is listed as unavailable with ynl's own message,
    which its cli prints on stdout, not as a bare "failed"."""
    ynl = sb.tmp / "hosts" / BOARD / "bin" / "ynl"
    ynl.write_text('#!/bin/bash\ncase "$*" in\n'
                   '*qstats-get*) echo "Netlink error: Operation not '
                   'supported"; exit 1 ;;\n'
                   '*) echo "[]" ;;\nesac\n')
    ynl.chmod(0o755)
    p = sb.kit()
    assert p.returncode == 0, p.stderr
    meta = json.loads((sb.tmp / "out" / "meta.json").read_text())
    miss = meta.get("unavailable", {})
    reasons = [v for k, v in miss.items() if k.startswith("ynl qstats-get")]
    assert reasons, miss
    assert all(r == "Netlink error: Operation not supported"
               for r in reasons), miss
