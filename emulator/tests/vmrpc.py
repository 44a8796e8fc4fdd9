"""Drive the lab VM (lab/vm/vm.sh) from the host: run guest shell commands one
by one over the shared --rwdir (emulator/tests/guest-rpc.sh) while poking
the LAN7430 model over QMP (lab/vm/qmp.py).

    vm = VM(kernel=..., mods=..., ko=...)      # boots, loads the driver,
    vm.setup_net()                             # DUT 10.9.9.1 <-> peer ns
    rc, out = vm.sh("ping -c 3 10.9.9.2")
    vm.dut.fault("drop-ls", count=3)           # lab/vm/qmp.py Dut
    snap = vm.snapshot(); ...; vm.delta(snap)
    vm.close()

Used by emulator/tests/fault-evidence.py and tests/test_emulator_faults.py.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lab" / "vm"))
from crash import first_problem, retryable
from qmp import Dut

DUT_IP = "10.9.9.1"
PEER_IP = "10.9.9.2"


class VMError(RuntimeError):
    """The guest did not come up, or a command in it failed."""


#: boots of a VM before it fails: a boot that hangs is a lab event (under
#: TCG a 2-vCPU guest has hung in PCI enumeration after virtme fell back
#: from virtiofsd to 9p) and is killed and booted again, twice at most
BOOTS = 3
#: a boot that adds nothing to its console and log for this long before
#: the guest's first command is hung (the kernel prints all through a
#: boot; LAN743X_VM_SILENT_S overrides)
SILENT_S = float(os.environ.get("LAN743X_VM_SILENT_S", "120"))
#: vm.sh's exit status for a guest that crashed (a kernel panic)
CRASHED = 86


def descendants(pid):
    """The ids of every process below PID (from /proc), children first."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(0), []):
            out.append(c)
            todo.append(c)
    return out


# QEMU arguments that make the guest's and the model's time count guest
# instructions (2^SHIFT ns each) instead of following the host's clock,
# idle time skipped: one TCG thread, as icount requires
def icount_opts(shift):
    """The QEMU arguments of an icount run at 2^shift ns per instruction."""
    return f"-accel tcg,thread=single -icount shift={shift},sleep=off"


def list_delta(v, av):
    """b - a of a counter that is a list (per queue, per vector), of
    numbers or of lists (a histogram per vector), element by element."""
    return [list_delta(x, y) if isinstance(x, list) else x - y
            for x, y in zip(v, av)]


class VM:
    """A booted lab VM, its guest commands and the model's QMP socket.

    A boot that prints nothing for SILENT_S s, does not reach the guest's
    first command within boot_timeout s, or crashes (vm.sh exit 86) is
    killed with everything it started and booted again, BOOTS boots in
    all; each retry is logged (stderr, the VM's log, self.boot_retries).
    boot_cmd (tests of this logic) replaces lab/vm/vm.sh's command line,
    "{rw}" standing for the shared directory; qmp=False: no QMP socket to
    connect to (self.dut is None); qemu_opts: more QEMU arguments (e.g.
    icount_opts())."""

    def __init__(self, qemu=None, kernel=None, mods=None, ko=None,
                 dut_opts="", boot_timeout=300, log=None, cpus=None,
                 boot_cmd=None, silent_s=None, qmp=True, qemu_opts=None):
        self.rw = tempfile.mkdtemp(prefix="l7vm.", dir="/tmp")
        self.qmp_sock = os.path.join(self.rw, "qmp.sock")
        self.mods, self.ko = mods, ko
        self.n = 0
        self.mark_n = 0
        self.ifname = self.peer_ifname = None   # setup_net()
        self.last_iperf = None                  # iperf()
        self.log_path = log or os.path.join(self.rw, "vm.log")
        # the kernel console (vm.sh), kept after the VM as vm.sh keeps it
        fd, self.console_path = tempfile.mkstemp(
            prefix="lan743x-lab-console.", dir="/tmp")
        os.close(fd)
        env = dict(os.environ, QMP_SOCK=self.qmp_sock, VM_RWDIR=self.rw,
                   DUT_OPTS=dut_opts, VM_CONSOLE_LOG=self.console_path)
        if qemu:
            env["QEMU"] = qemu
        if kernel:
            env["KERNEL"] = kernel
        env.pop("MODDIR", None)
        if cpus:                # else lab/vm/vm.sh's VM_CPUS (default 2)
            env["VM_CPUS"] = str(cpus)
        if qemu_opts:           # lab/vm/vm.sh's VM_EXTRA_QEMU_OPTS
            env["VM_EXTRA_QEMU_OPTS"] = qemu_opts
        cmd = [str(ROOT / "lab/vm/vm.sh"), "bash",
               str(ROOT / "emulator/tests/guest-rpc.sh"), self.rw]
        cmd = [a.replace("{rw}", self.rw) for a in boot_cmd] if boot_cmd \
            else ["bash"] + cmd
        # QEMU writes the console log as long as it runs: close() closes it
        self._logf = open(  # noqa: SIM115  # pylint: disable=consider-using-with
            self.log_path, "w", encoding="utf-8")
        self.boot_retries = []
        silent = SILENT_S if silent_s is None else silent_s
        t0 = time.time()
        for boot in range(1, BOOTS + 1):
            why = self._boot(cmd, env, boot_timeout, silent)
            if why is None:
                break
            self.boot_retries.append(why)
            msg = (f"vmrpc: boot {boot} of {BOOTS} failed: {why}"
                   + ("; killed, booting again" if boot < BOOTS else ""))
            print(msg, file=sys.stderr, flush=True)
            self._logf.write(msg + "\n")
            self._logf.flush()
        else:
            err = VMError(f"VM did not come up in {BOOTS} boots ("
                          + "; ".join(self.boot_retries) + "):\n"
                          + self.log_tail())
            self._logf.close()
            shutil.rmtree(self.rw, ignore_errors=True)
            raise err
        self.boot_s = time.time() - t0
        self.dut = Dut(self.qmp_sock) if qmp else None

    def _output_size(self):
        """Bytes in the console and the log so far (growth = progress)."""
        n = 0
        for p in (self.console_path, self.log_path):
            try:
                n += os.path.getsize(p)
            except OSError:
                pass
        return n

    def _boot(self, cmd, env, boot_timeout, silent):
        """Start one boot and wait for the guest's first command (its
        guest.up): None when it came, else why the boot was killed (a
        retry); a boot that ends otherwise raises VMError."""
        up = os.path.join(self.rw, "guest.up")
        if os.path.exists(up):
            os.unlink(up)
        self._logf.flush()
        start = os.path.getsize(self.log_path)
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=self._logf,
            stderr=subprocess.STDOUT)
        t0 = last = time.time()
        size = self._output_size()
        while not os.path.exists(up):
            now = time.time()
            rc = self.proc.poll()
            if rc is not None:
                # this boot's log: vm.sh prints a crash's console lines
                with open(self.log_path, encoding="utf-8",
                          errors="replace") as f:
                    f.seek(start)
                    text = f.read()
                if rc == CRASHED and retryable(text):
                    return "the guest crashed before its first command on " \
                        "the int3 of text patching under TCG (vm.sh exit " \
                        f"{rc})"
                if rc == CRASHED:
                    raise VMError("the guest kernel crashed before its first "
                                  f"command: {first_problem(text)} (a "
                                  "result, not retried):\n"
                                  + self.log_tail())
                raise VMError(f"VM did not come up (exit {rc}):\n"
                              + self.log_tail())
            if self._output_size() != size:
                size, last = self._output_size(), now
            if now - last > silent:
                self.kill()
                return f"no console output for {silent:g} s"
            if now - t0 > boot_timeout:
                self.kill()
                return f"no guest command after {boot_timeout:g} s"
            time.sleep(0.2)
        return None

    # -- plumbing -----------------------------------------------------------
    def log_tail(self, n=3000):
        """The last N characters of the VM's log (vm.sh, the guest
        command's output), then of its kernel console."""
        out = []
        for what, p in (("log", self.log_path),
                        ("console", self.console_path)):
            try:
                text = Path(p).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if text:
                out.append(f"--- {what} ({p}), tail:\n{text[-n:]}")
        return "\n".join(out)

    def sh(self, cmd, timeout=120):
        """Run cmd (bash) in the guest; returns (rc, output)."""
        n = self.n
        self.n += 1
        tmp = os.path.join(self.rw, f"cmd.{n}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(cmd)
        os.rename(tmp, os.path.join(self.rw, f"cmd.{n}"))
        rc_path = os.path.join(self.rw, f"rc.{n}")
        t0 = time.time()
        while not os.path.exists(rc_path):
            if self.proc.poll() is not None:
                raise VMError(f"VM exited during {cmd!r}:\n{self.log_tail()}")
            if time.time() - t0 > timeout:
                raise VMError(f"guest command timed out: {cmd!r}")
            time.sleep(0.05)
        rc = int(Path(rc_path).read_text(encoding="utf-8").strip() or 255)
        out = Path(os.path.join(self.rw, f"out.{n}")).read_text(
            encoding="utf-8", errors="replace")
        return rc, out

    def kill(self):
        """Kill the VM now (no shutdown): vm.sh and every process it
        started (QEMU, virtme-ng, virtiofsd), by their ids."""
        pids = descendants(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.kill()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def close(self):
        """Stop the guest (exit, then kill after 60 s) and clean up."""
        try:
            if self.__dict__.get("dut"):
                self.dut.close()
            if self.proc.poll() is None:
                with open(os.path.join(self.rw, f"cmd.{self.n}"), "w",
                          encoding="utf-8") as f:
                    f.write("exit")
                try:
                    self.proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.kill()
        finally:
            self._logf.close()
            shutil.rmtree(self.rw, ignore_errors=True)

    # -- guest setup --------------------------------------------------------
    def load_driver(self):
        """Load lan743x: the module KO (after its dependencies from MODS),
        MODS' lan743x, or the guest kernel's."""
        if self.ko:
            load = (f"modprobe -d {self.mods} phylink && "
                    f"{{ modprobe -d {self.mods} microchip 2>/dev/null || true; }} && "
                    f"insmod {self.ko}")
        elif self.mods:
            load = f"modprobe -d {self.mods} lan743x"
        else:
            load = "modprobe lan743x"
        rc, out = self.sh(load)
        if rc:
            raise VMError("loading the driver failed: " + out)

    def pin_neighbours(self):
        """Static ARP both ways, IPv6 off: after this the DUT receives no
        frame but the answers to what the test sends (no ARP, ND or MLD),
        so a fault that fires on the next N frames hits exactly those."""
        rc, out = self.sh(rf'''
. /tmp/l7.env
for ns in "" "ip netns exec peer"; do
  $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1
  $ns sysctl -qw net.ipv6.conf.default.disable_ipv6=1
done
ip neigh replace {PEER_IP} lladdr 02:74:30:00:00:02 dev $D nud permanent
ip netns exec peer ip neigh replace {DUT_IP} lladdr 02:74:30:00:00:01 dev $P nud permanent
sleep 0.5
ping -c 2 -W 2 {PEER_IP} > /dev/null
''')
        if rc:
            raise VMError("pinning neighbours failed: " + out)

    def rx_ring_size(self):
        """The DUT's current RX ring size (ethtool -g)."""
        _rc, out = self.sh(". /tmp/l7.env\nethtool -g $D | awk "
                           "'/^Current/ {c=1} c && /^RX:/ {print $2}'")
        return int(out.strip())

    def mtu_new_rings(self, mtu):
        """The DUT at MTU with RX rings allocated for it: a decrease alone
        keeps the rings and their larger buffers (the series reprograms
        only the MAC when the frames fit), so the RX ring size is changed
        and set back, each a live change that replaces the rings at the
        current MTU. Returns (rc, output)."""
        return self.sh(f'''
. /tmp/l7.env
ip link set $D mtu {mtu} || exit 1
n=$(ethtool -g $D | awk '/^Current/ {{c=1}} c && /^RX:/ {{print $2}}')
ethtool -G $D rx $((n - 1)) && ethtool -G $D rx $n
''', timeout=240)

    def setup_net(self):
        """DUT 10.9.9.1 in the root ns, the virtio-net peer 10.9.9.2 in
        netns 'peer'; writes D=/P= to /tmp/l7.env; iperf3 server on the
        peer."""
        self.load_driver()
        rc, out = self.sh(rf'''
set -e
for i in $(seq 100); do
  for n in /sys/class/net/*; do
    d=$(basename "$(readlink -f $n/device/driver 2>/dev/null)")
    [ "$d" = lan743x ] && D=$(basename $n)
    [ "$(cat $n/address)" = 02:74:30:00:00:02 ] && P=$(basename $n)
  done
  [ -n "$D" ] && [ -n "$P" ] && break; sleep 0.1
done
echo "D=$D P=$P" > /tmp/l7.env
ip netns add peer; ip link set $P netns peer
ip netns exec peer ip link set $P up
ip netns exec peer ip addr add {PEER_IP}/24 dev $P
ip addr add {DUT_IP}/24 dev $D; ip link set $D up
for i in $(seq 100); do [ "$(cat /sys/class/net/$D/carrier)" = 1 ] && break; sleep 0.1; done
ping -c 3 -W 2 {PEER_IP} > /dev/null
ip netns exec peer iperf3 -s -D
sleep 0.5
cat /tmp/l7.env
''')
        if rc:
            raise VMError("network setup failed: " + out)
        m = re.search(r"D=(\S+) P=(\S+)", out)
        self.ifname, self.peer_ifname = m.group(1), m.group(2)

    # -- observation --------------------------------------------------------
    def mark(self):
        """Write a new tag to the guest's kernel log; returns the tag."""
        self.mark_n += 1
        tag = f"l7-fault-mark-{self.mark_n}"
        self.sh(f"echo {tag} > /dev/kmsg")
        return tag

    def dmesg_since(self, tag):
        """The kernel log's non-empty lines after the tag TAG (mark())."""
        _, out = self.sh(f"dmesg | sed -n '/{tag}/,$p' | tail -n +2")
        return [l for l in out.splitlines() if l.strip()]

    def snapshot(self):
        """Guest-side counters: interface statistics, nstat, lan743x IRQs,
        carrier changes, ethtool -S."""
        _, out = self.sh(r'''
. /tmp/l7.env
cd /sys/class/net/$D/statistics && for f in *; do echo "stat $f $(cat $f)"; done
echo "stat carrier_changes $(cat /sys/class/net/$D/carrier_changes)"
nstat -saz | awk 'NR>1 && NF>=2 {print "nstat", $1, $2}'
grep -E 'lan743x|'$D /proc/interrupts | awk '{s=0; for(i=2;i<=NF;i++) if ($i ~ /^[0-9]+$/) s+=$i; print "irq", $NF "/" $(NF-1), s}'
for n in $(awk -F: '/lan743x/ {gsub(/ /, "", $1); print $1}' /proc/interrupts); do
  echo "unhandled irq$n $(awk '$1 == "unhandled" {print $2}' /proc/irq/$n/spurious 2>/dev/null)"
done
ethtool -S $D 2>/dev/null | awk -F: 'NF==2 {gsub(/^ +| +$/, "", $1); gsub(/ /, "", $2); print "ethtool", $1, $2}'
''')
        snap = {"stat": {}, "nstat": {}, "irq": {}, "unhandled": {},
                "ethtool": {}}
        for line in out.splitlines():
            p = line.split()
            if len(p) >= 3 and p[0] in snap and re.match(r"^-?\d+$", p[-1]):
                snap[p[0]][" ".join(p[1:-1])] = int(p[-1])
        snap["model"] = self.dut.counters()
        return snap

    @staticmethod
    def delta(a, b):
        """Non-zero differences b - a per section (model: flat numbers)."""
        out = {}
        for sec in ("stat", "nstat", "irq", "unhandled", "ethtool"):
            d = {k: v - a[sec].get(k, 0) for k, v in b[sec].items()
                 if v - a[sec].get(k, 0)}
            out[sec] = d
        m = {}
        for k, v in b["model"].items():
            av = a["model"].get(k)
            if isinstance(v, (int, float)) and isinstance(av, (int, float)):
                if v != av:
                    m[k] = v - av
            elif isinstance(v, list) and isinstance(av, list):
                if v != av:
                    m[k] = list_delta(v, av)
            elif k == "mmio":
                dd = {}
                for reg, rw in v.items():
                    o = av.get(reg, {"r": 0, "w": 0})
                    if rw != o:
                        dd[reg] = {"r": rw["r"] - o["r"], "w": rw["w"] - o["w"]}
                if dd:
                    m[k] = dd
            elif isinstance(v, dict):
                dd = {kk: vv - av.get(kk, 0) for kk, vv in v.items()
                      if vv != av.get(kk, 0)}
                if dd:
                    m[k] = dd
        out["model"] = m
        return out

    def ping(self, count=20, interval=0.05, size=56, wait=1, deadline=None):
        """ping the peer.  ping stops waiting for replies twice the largest
        RTT after its last request, so on a busy host a late reply counts
        as lost; with deadline (s), ping waits until all count replies are
        in, or the deadline has passed: for pings that must all come back
        (count-based, the deadline only ends a hang)."""
        until = f"-w {deadline:d} " if deadline else ""
        _, out = self.sh(f"ping -q -c {count:d} -i {interval} -s {size:d} "
                         f"-W {wait:d} {until}{PEER_IP}",
                         timeout=120 + (deadline or 0))
        m = re.search(r"(\d+) packets transmitted, (\d+) received", out)
        r = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)", out)
        return {"sent": int(m.group(1)) if m else 0,
                "recv": int(m.group(2)) if m else 0,
                "rtt_min_avg_max": tuple(float(x) for x in r.groups()) if r else None,
                "summary": " ".join(l.strip() for l in out.splitlines()
                                    if "packets" in l or "rtt" in l)}

    def iperf(self, secs=5, reverse=False, omit=1):
        """iperf3 TCP DUT -> peer (reverse: peer -> DUT), MTU 1500; returns
        the goodput in Mbit/s measured by the receiver after the first omit
        seconds (slow start): with -R the client is the receiver and its
        intervals are used; otherwise the client's intervals count what the
        sender wrote (bursty), so iperf3's sum_received (server bytes over
        the client's duration: data in flight at the end adds ~0.1-0.3%)
        is used.  self.last_iperf keeps the raw figures."""
        _, out = self.sh(f"iperf3 -c {PEER_IP} -t {secs:d} -O {omit:d} -f m -J "
                         f"{'-R' if reverse else ''}", timeout=secs + omit + 60)
        try:
            j = json.loads(out[out.index("{"):])
            ivs = [i["sum"] for i in j["intervals"] if not i["sum"].get("omitted")]
            nbytes = sum(i["bytes"] for i in ivs)
            dur = sum(i["seconds"] for i in ivs)
            self.last_iperf = {
                "intervals_mbps": [round(i["sum"]["bits_per_second"] / 1e6, 2)
                                   for i in j["intervals"]],
                "sum_received_mbps": round(
                    j["end"]["sum_received"]["bits_per_second"] / 1e6, 2),
                "sum_sent_mbps": round(
                    j["end"]["sum_sent"]["bits_per_second"] / 1e6, 2)}
            if not reverse:
                return j["end"]["sum_received"]["bits_per_second"] / 1e6
            return nbytes * 8 / dur / 1e6
        except (ValueError, KeyError, ZeroDivisionError) as e:
            raise VMError(f"iperf3 failed: {e}\n{out[-2000:]}") from e


def send_flows(n):
    """Python for the peer: one 32-byte UDP datagram from each of N source
    ports to the DUT, so that RSS sees N flows."""
    return ("import socket\n"
            f"for i in range({n}):\n"
            "    s = socket.socket(2, 2); s.bind(('', 40000 + i))\n"
            f"    s.sendto(b'y' * 32, ('{DUT_IP}', 9999 + i)); s.close()\n")
