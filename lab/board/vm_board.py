#!/usr/bin/env python3
"""The board kit run as a board owner runs it, against a lab guest.

The guest (ARMv7 by default: QEMU virt, Cortex-A15, non-coherent PCIe as
on i.MX6, the armv7-virt kernel; or an x86_64 kernel: --variant) is the board:
the emulated LAN7430 is its NETIF, and it is reached only over ssh, on a
management port (its virtio-net NIC, wired to a host tap: vm.sh's
VM_MGMT_TAP) where lab/guest/board_guest.sh starts an sshd. The link
partner is outside the guest: the DUT's wire is a host tap (VM_PARTNER_TAP)
in a network namespace of the host (lab/vm/partner.sh), where an sshd on a
veth pair takes the kit's ssh and iperf3 runs natively on the host's
cores. Both sshds take one key made for the run; nothing of the host's or
the guest's ssh setup is used or changed.

Then lab/board/board.py runs unchanged (no QMP, no lab path inside it),
with the modules the lab builds for the guest's kernel (--ko):

    python3 lab/board/vm_board.py [--arch armv7] [--modules upstream,series]
        [--reps 5] [--secs 3] [--cells tcp-rx-1500,tcp-rx-9000,mem-up]
        [--changes mtu-1500to9000] [--peer-min-mbit 900]
        [--selftests [--tests COLL:FILE,...]] [--variant VARIANT] [--out DIR]

--selftests runs the kit's selftests too: the kselftest install of
drivers/net and drivers/net/hw (the run_kselftest.sh layout) is built
as make selftests builds its tree, base + the stack's patches
(lab/selftests/selftests.py: prepare_tests, install_tests), and given
to the kit as --ksft (the ARMv7 guest gets its Python, without the
x86_64 helpers: DIR/selftests/not-for-board.txt). The board logs in to
the partner as a board owner's does (REMOTE_TYPE=ssh of the selftests):
the run's key and the partner's host key in the ~/.ssh of the board's
sessions (a home under the guest's /tmp, board_guest.sh), and a route
to the partner's management address through the host (forwarding on
the run's tap and veth only, which end with the run).

Results: DIR/kit (the kit's results: table.md, summary.json, meta.json,
records.jsonl, selftests-MODULE.ktap), DIR/vm.log (the guest's console),
DIR/kit.err (the kit's progress), DIR/selftests (the install given to the
kit and its make log). Needs root (tap devices, a network namespace).
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "selftests"))
import selftests
from bench import LAB, ROOT, build_modules, out_of, progress

#: the management network of the board (host end .1) and the partner's
#: (host end .1): the benchmarking range, not routed anywhere
BOARD_MGMT = ("198.18.7.1", "198.18.7.2")
PEER_MGMT = ("198.18.8.1", "198.18.8.2")
BOARD_NET, PEER_NET = "198.18.7.0/24", "198.18.8.0/24"
VARIANT = {"armv7": "armv7-virt", "x86_64": "bench"}
QEMU_ARCH = {"armv7": "arm", "x86_64": "x86_64"}
BOOT_S = 1800       # boot, host key and sshd of the ARMv7 guest under TCG
#: the lock a run holds while it uses the management networks: host-wide,
#: as they are, whatever lab cache the run uses
MGMT_LOCK = Path("/run/lock" if os.path.isdir("/run/lock") else "/tmp") / \
    "lan743x-vm-board.lock"


def sh(cmd, check=True):
    """Run CMD (a list) on the host; its CompletedProcess."""
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if check and p.returncode:
        sys.exit(f"vm_board: error: {' '.join(cmd)}: "
                 f"{(p.stderr or p.stdout).strip()[-500:]}")
    return p


def ssh_argv(key, host, cmd):
    """ssh to root@HOST with the run's KEY, running CMD."""
    return ["ssh", "-i", str(key), "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
            "-o", "ConnectTimeout=10", f"root@{host}", cmd]


def wait_tap(name, vm, secs=120):
    """Wait until QEMU has created the tap NAME."""
    t0 = time.time()
    while sh(["ip", "link", "show", "dev", name], check=False).returncode:
        if vm.poll() is not None or time.time() - t0 > secs:
            sys.exit(f"vm_board: error: no tap {name} (vm.sh rc "
                     f"{vm.poll()})")
        time.sleep(0.2)


def run_alive(pid):
    """Whether PID is a vm_board.py run that is still going."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"vm_board" in cmd


def hold_mgmt_lock(path=MGMT_LOCK):
    """Take the management networks for this run: a run that finds
    another holding them waits for it (and says so) rather than failing on
    its addresses. Returns the open lock file: the lock is held while it
    is open (to the end of the process)."""
    lock = open(path, "w", encoding="utf-8")  # noqa: SIM115  # pylint: disable=consider-using-with
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        progress("waiting for another vm_board.py run: it holds the "
                 "management networks")
        fcntl.flock(lock, fcntl.LOCK_EX)
        progress("the other run ended; going on")
    return lock


def clear_stale():
    """Remove what runs that were killed before their clean-up left on the
    host (their namespace, veth and tap, named by their pid): an address
    of theirs would take this run's routes. Refuse if a run that is still
    going holds the management networks."""
    for ns in sh(["ip", "netns", "list"], check=False).stdout.split():
        m = re.fullmatch(r"l7kit(\d+)", ns)
        if m and not run_alive(m.group(1)):
            sh(["bash", str(LAB / "vm" / "partner.sh"), "down", ns],
               check=False)
    links = json.loads(sh(["ip", "-j", "addr", "show"]).stdout or "[]")
    for link in links:
        name = link.get("ifname", "")
        m = re.fullmatch(r"l7k[vm](\d+)", name)
        if m and not run_alive(m.group(1)):
            sh(["ip", "link", "del", name], check=False)
            continue
        for a in link.get("addr_info", []):
            if a.get("local") in BOARD_MGMT + PEER_MGMT:
                sys.exit(f"vm_board: error: {name} holds {a['local']}, an "
                         f"address of this run's management networks (another "
                         f"run going?)")


def partner_sshd(ns, sshdir, veth):
    """The partner's management port (a veth pair into NS) and its sshd."""
    sh(["ip", "link", "add", veth, "type", "veth", "peer", "name",
        veth + "p", "netns", ns])
    sh(["ip", "addr", "add", f"{PEER_MGMT[0]}/24", "dev", veth])
    sh(["ip", "link", "set", veth, "up"])
    sh(["ip", "-n", ns, "addr", "add", f"{PEER_MGMT[1]}/24", "dev",
        veth + "p"])
    sh(["ip", "-n", ns, "link", "set", veth + "p", "up"])
    os.makedirs("/run/sshd", exist_ok=True)
    sh(["ip", "netns", "exec", ns, "/usr/sbin/sshd", "-f", "/dev/null",
        "-o", f"ListenAddress={PEER_MGMT[1]}",
        "-o", f"HostKey={sshdir}/host_ed25519",
        "-o", f"AuthorizedKeysFile={sshdir}/key.pub",
        "-o", "PermitRootLogin=prohibit-password", "-o", "UsePAM=no",
        "-o", "StrictModes=no", "-o", f"PidFile={sshdir}/partner-sshd.pid",
        "-o", "MaxStartups=64", "-o", "MaxSessions=64",
        "-E", str(sshdir / "partner-sshd.log")])
    # sshd binds its port after it has put itself in the background: the
    # kit's first ssh must not find the port closed
    t0 = time.time()
    while time.time() - t0 < 60:
        with socket.socket() as s:
            s.settimeout(2)
            if s.connect_ex((PEER_MGMT[1], 22)) == 0:
                return
        time.sleep(0.5)
    log = sshdir / "partner-sshd.log"
    sys.exit(f"vm_board: error: the partner's sshd does not listen on "
             f"{PEER_MGMT[1]}:22 after 60 s; its log:\n"
             + (log.read_text(errors="replace") if log.exists() else "(none)"))


def ksft_install(out, arch):
    """The kselftest install for the kit (--ksft): drivers/net and
    drivers/net/hw of base + the stack's patches, as make selftests
    extracts and installs them (make ksft's targets, built in its
    build tree); for the ARMv7 guest without the x86_64 binaries (listed
    in not-for-board.txt). Its path."""
    d = out / "selftests"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    progress("the selftests: base + the stack's patches, make install of "
             + " ".join(selftests.WHOLE))
    # the kernel's make reads ARCH from the environment
    os.environ.pop("ARCH", None)
    tree = selftests.prepare_tests(d / "tests")
    install = selftests.install_tests(tree, d / "install", whole=True)
    gone = selftests.host_binaries(install) if arch == "armv7" else []
    (d / "not-for-board.txt").write_text("".join(f"{g}\n" for g in gone),
                                         encoding="utf-8")
    if gone:
        progress(f"{len(gone)} x86_64 binaries left out of the ARMv7 "
                 "board's install (selftests/not-for-board.txt)")
    # the extracted sources are make selftests' business, not the board's
    shutil.rmtree(d / "tests", ignore_errors=True)
    return install


def forwarding(dev):
    """IPv4 forwarding on the host's interface DEV only (the run's own
    tap and veth, gone with the run): the board's way to the partner's
    management port."""
    Path(f"/proc/sys/net/ipv4/conf/{dev}/forwarding").write_text(
        "1\n", encoding="ascii")


def peer_from_board(key, sshdir, ns, mtap, veth):
    """Let the board log in to the partner without a prompt, as the
    selftests' REMOTE_TYPE=ssh needs: a route between the two management
    ports through the host, the run's key and the partner's host key in
    the ~/.ssh of the board's sessions (under the guest's /tmp; refused
    anywhere else)."""
    for dev in (mtap, veth):
        forwarding(dev)
    sh(["ip", "-n", ns, "route", "replace", BOARD_NET, "via", PEER_MGMT[0]])
    hostkey = " ".join((sshdir / "host_ed25519.pub").read_text(
        encoding="ascii").split()[:2])
    setup = (f"ip route replace {PEER_NET} via {BOARD_MGMT[0]} && "
             "case ~ in /tmp/*) ;; *) echo \"the home of the board's "
             "sessions, $HOME, is not under /tmp\" >&2; exit 1 ;; esac && "
             "umask 077 && mkdir -p ~/.ssh && cat >~/.ssh/id_ed25519 && "
             f"echo '{PEER_MGMT[1]} {hostkey}' >~/.ssh/known_hosts && "
             f"ssh -o BatchMode=yes -o ConnectTimeout=10 root@{PEER_MGMT[1]}"
             " true")
    p = subprocess.run(ssh_argv(key, BOARD_MGMT[1], setup),
                       input=key.read_text(encoding="ascii"), text=True,
                       capture_output=True, check=False)
    if p.returncode:
        sys.exit("vm_board: error: the board cannot ssh to the partner "
                 f"{PEER_MGMT[1]}: {p.stderr.strip()[-500:]}")


def main(argv=None):
    """Boot the board, set up the partner, run the kit; its exit code."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--arch", choices=sorted(VARIANT), default="armv7")
    ap.add_argument("--modules", default="upstream,series")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--secs", type=int, default=3)
    ap.add_argument("--cells", default="tcp-rx-1500,tcp-rx-9000,mem-up")
    ap.add_argument("--changes", default="mtu-1500to9000")
    ap.add_argument("--peer-min-mbit", type=int, default=900)
    ap.add_argument("--variant", default=None,
                    help="the guest kernel's lab variant (default: "
                    "armv7-virt on armv7, bench on x86_64; guest: the x86_64 "
                    "kernel make test builds, without hist triggers)")
    ap.add_argument("--selftests", action="store_true",
                    help="run the kit's selftests too: the series' "
                    "drivers/net/hw tests and the generic driver tests "
                    "per module, from a kselftest install of base + the "
                    "stack's patches (--ksft of the kit)")
    ap.add_argument("--tests", default=None, help="with --selftests: the "
                    "kit's --tests (COLLECTION:FILE,...; default: the "
                    "series' and the generic driver tests)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    # a kill (SIGTERM) ends the run through the clean-up below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("vm_board: killed"))
    if os.geteuid():
        ap.error("needs root (tap devices, a network namespace)")
    out = Path(args.out or ROOT / "results" /
               time.strftime("vm-board-%Y%m%d-%H%M%S")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    names = [m for m in args.modules.split(",") if m]
    variant = args.variant or VARIANT[args.arch]

    progress(f"kernel {variant}, modules {','.join(names)}, QEMU")
    obj = Path(out_of(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                       variant]))
    kos = build_modules(names, variant)
    qemu = out_of(["bash", str(ROOT / "emulator" / "build.sh"), "--arch",
                   QEMU_ARCH[args.arch]])
    ksft = ksft_install(out, args.arch) if args.selftests else None

    sshdir = out / "ssh"
    sshdir.mkdir(exist_ok=True)
    for f in ("key", "host_ed25519"):
        if not (sshdir / f).exists():
            sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                f"lan743x-vm-board-{f}", "-f", str(sshdir / f)])
    key = sshdir / "key"

    mgmt_lock = hold_mgmt_lock()  # noqa: F841  # pylint: disable=unused-variable
    clear_stale()
    tag = f"{os.getpid()}"
    ns, tap, mtap, veth = (f"l7kit{tag}", f"l7kw{tag}", f"l7km{tag}",
                           f"l7kv{tag}")
    env = dict(os.environ, QEMU=qemu, VM_PARTNER_TAP=tap, VM_MGMT_TAP=mtap,
               VM_TIMEOUT=str(4 * 3600),
               VM_CONSOLE_LOG=str(out / "console.log"))
    env.pop("ARCH", None)
    if args.arch == "armv7":
        env.update(ARCH="armv7", KERNEL=str(obj), MODDIR=str(obj / "mods"))
        guest_key = "/etc/lan743x-board.pub"
        cmd = ["--file", f"{key}.pub={guest_key}", "--", "bash",
               "lab/guest/board_guest.sh", guest_key, f"{BOARD_MGMT[1]}/24"]
    else:
        env.update(KERNEL=str(obj / "arch/x86/boot/bzImage"),
                   MODDIR=str(obj / "mods"))
        cmd = ["--", "bash", str(LAB / "guest" / "board_guest.sh"),
               f"{key}.pub", f"{BOARD_MGMT[1]}/24"]
    log = open(out / "vm.log", "w", encoding="utf-8")  # noqa: SIM115  # pylint: disable=consider-using-with
    progress(f"booting the {args.arch} guest as the board "
             f"(management {BOARD_MGMT[1]}, partner {PEER_MGMT[1]})")
    vm = subprocess.Popen(["bash", str(LAB / "vm" / "vm.sh")] + cmd,
                          env=env, stdout=log, stderr=subprocess.STDOUT,
                          cwd=ROOT)
    rc = 2
    try:
        wait_tap(mtap, vm)
        sh(["ip", "addr", "add", f"{BOARD_MGMT[0]}/24", "dev", mtap])
        sh(["ip", "link", "set", mtap, "up"])
        p = sh(["bash", str(LAB / "vm" / "partner.sh"), "up", tap, ns,
                "192.0.2.2/24"], check=False)
        if p.returncode:
            sys.exit(f"vm_board: error: the partner: {p.stderr.strip()}")
        # a tap's carrier never changes, so its operstate stays UNKNOWN;
        # a NIC's reads UP with the link, and the selftests' forwarding
        # library (ethtool_std_stats.sh, ethtool_rmon.sh) waits for
        # "state UP" of the partner's interface (600 tries, then fails):
        # a carrier off and on gives the tap its UP
        for c in ("off", "on"):
            sh(["ip", "-n", ns, "link", "set", "dev", tap, "carrier", c])
        partner_sshd(ns, sshdir, veth)
        t0 = time.time()
        while True:
            if vm.poll() is not None:
                sys.exit(f"vm_board: error: the guest ended (vm.sh rc "
                         f"{vm.returncode}) before its sshd answered; see "
                         f"{out / 'vm.log'}")
            if time.time() - t0 > BOOT_S:
                sys.exit(f"vm_board: error: no ssh to the board within "
                         f"{BOOT_S} s; see {out / 'vm.log'}")
            p = sh(ssh_argv(key, BOARD_MGMT[1], "cat /proc/version"),
                   check=False)
            if p.returncode == 0:
                break
            time.sleep(5)
        progress(f"board up after {time.time() - t0:.0f} s: "
                 f"{p.stdout.strip()[:80]}")
        p = sh(ssh_argv(key, BOARD_MGMT[1],
                        "for n in /sys/class/net/*; do "
                        "[ \"$(basename \"$(readlink -f $n/device/driver)\")\""
                        " = lan743x ] && basename $n; done"), check=False)
        netif = (p.stdout.split() or [""])[0]
        if not netif:
            sys.exit("vm_board: error: the board has no lan743x interface")
        if ksft:
            peer_from_board(key, sshdir, ns, mtap, veth)
        kit = ["python3", str(LAB / "board" / "board.py"),
               "--dut", f"root@{BOARD_MGMT[1]}",
               "--peer", f"root@{PEER_MGMT[1]}", "--netif", netif,
               "--peer-if", tap, "--arch", args.arch,
               "--reps", str(args.reps), "--secs", str(args.secs),
               "--cells", args.cells, "--changes", args.changes,
               "--peer-min-mbit", str(args.peer_min_mbit),
               "--out", str(out / "kit")]
        for n in names:
            kit += ["--ko", f"{n}={kos[n]}"]
        # the kernel's source, as a board owner passes SRC=: the kit copies
        # ynl and the netdev spec from it (qstats and page_pool rows)
        src = (obj / "source").resolve()
        if (src / "tools/net/ynl/pyynl/cli.py").exists():
            kit += ["--src", str(src)]
        if ksft:
            kit += ["--ksft", str(ksft)]
            if args.tests:
                kit += ["--tests", args.tests]
        else:
            kit.append("--no-selftests")
        for o in ("-i", str(key), "-oStrictHostKeyChecking=no",
                  "-oUserKnownHostsFile=/dev/null", "-oLogLevel=ERROR"):
            kit.append(f"--ssh-opt={o}")
        (out / "kit-cmd.txt").write_text(" ".join(kit) + "\n")
        progress(f"the kit: {' '.join(kit[:12])} ...")
        with open(out / "kit.err", "w", encoding="utf-8") as err:
            rc = subprocess.run(kit, stderr=err, check=False,
                                cwd=ROOT).returncode
        progress(f"the kit ended with {rc}; results in {out / 'kit'}")
    finally:
        if vm.poll() is None:
            sh(ssh_argv(key, BOARD_MGMT[1], "touch /tmp/board-stop"),
               check=False)
            try:
                vm.wait(timeout=300)
            except subprocess.TimeoutExpired:
                vm.kill()
        sh(["bash", str(LAB / "vm" / "partner.sh"), "down", ns],
           check=False)
        sh(["ip", "link", "del", veth], check=False)
        log.close()
    return rc


if __name__ == "__main__":
    sys.exit(main())
