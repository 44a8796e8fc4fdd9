#!/usr/bin/env python3
"""Drive every fault knob of the LAN7430 model against a lan743x driver in
the lab VM and record what the driver does (stats, stack counters, ping,
dmesg); also measure the wire pacing with iperf3.

usage: emulator/tests/fault-evidence.py [--ko PATH] [--out FILE.json]
                                        [--only NAME,...] [--no-pacing]

Defaults: kernel and modules of `lab/kernel/kbuild.sh kernel guest`, driver
`lab/kernel/kbuild.sh module guest base` (the unmodified upstream lan743x.ko).
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from vmrpc import ROOT, VM

CAPTURE = r'''
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0)); s.settimeout(4)
lens = []
try:
    while len(lens) < int(sys.argv[2]):
        b, a = s.recvfrom(65535)
        if a[2] == socket.PACKET_HOST and b[6:12] == bytes.fromhex("027430000002"):
            lens.append(len(b))
except socket.timeout:
    pass
print("captured frame lengths (AF_PACKET, from peer):", lens)
'''


def kb(*args):
    """The path lab/kernel/kbuild.sh ARGS prints (exits if it fails)."""
    p = subprocess.run(["bash", str(ROOT / "lab/kernel/kbuild.sh"), *args],
                       cwd=ROOT, capture_output=True, text=True, check=False)
    if p.returncode:
        sys.exit(f"kbuild.sh {args} failed: {p.stderr[-2000:]}")
    return p.stdout.strip().splitlines()[-1]


# name -> (fault kwargs, traffic, settle seconds)
STEPS = [
    ("rx-len-short", {"count": 5}, "ping", 0),
    ("rx-len-long", {"count": 5}, "ping+capture", 0),
    ("rx-len-zero", {"count": 5}, "ping", 0),
    ("drop-fs", {"count": 5}, "ping", 0),
    ("drop-ls", {"count": 5}, "ping", 0),
    ("spurious-irq", {"count": 2000, "vectors": 0xFF, "period_us": 500}, "ping", 1),
    ("wb-delay-head", {"count": 5, "us": 200000}, "ping", 0),
    ("wb-delay-desc", {"count": 3, "us": 300000}, "ping-slow", 0),
    ("link-flap", {"count": 1, "down_ms": 3000}, "ping-long", 1),
    ("link-flap-short", {"count": 1, "down_ms": 100}, "sleep3", 0),
    ("rx-stall", {"count": 1, "ms": 500}, "ping", 0),
    ("rx-stall-every", {"every": 50, "ms": 200}, "iperf-rx", 0),
]


def run_step(vm, name, kw, traffic, settle):
    """Arm fault NAME (arguments KW) under TRAFFIC; what the driver did."""
    fault = name.replace("-short", "").replace("-every", "") \
        if name in ("link-flap-short", "rx-stall-every") else name
    res = {"knob": fault, "args": kw, "traffic": traffic}
    tag = vm.mark()
    if traffic == "ping+capture":
        # AF_PACKET capture of the next frames from the peer (python
        # starts slowly under TCG: arm the fault only once it listens)
        quoted = CAPTURE.replace("'", "'\"'\"'")
        vm.sh(f". /tmp/l7.env; python3 -c '{quoted}' $D 10 > /tmp/cap 2>&1 & "
              "sleep 3")
    a = vm.snapshot()
    vm.dut.fault(fault, **kw)
    t0 = time.time()
    if traffic.startswith("ping"):
        if traffic == "ping+capture":
            _, out = vm.sh("ping -q -c 20 -i 0.05 -W 1 10.9.9.2; sleep 5; "
                            "cat /tmp/cap")
            res["capture"] = [l for l in out.splitlines() if "captured" in l]
            res["ping"] = [l for l in out.splitlines() if "packets" in l or "rtt" in l]
        elif traffic == "ping-slow":
            res["ping"] = vm.ping(count=20, interval=0.1, wait=2)
        elif traffic == "ping-long":
            res["ping"] = vm.ping(count=80, interval=0.1, wait=1)
        else:
            res["ping"] = vm.ping(count=20, interval=0.05, wait=1)
    elif traffic == "sleep3":
        vm.sh("sleep 3")
    elif traffic == "iperf-rx":
        res["iperf_rx_mbps"] = round(vm.iperf(secs=4, reverse=True), 1)
        res["iperf"] = vm.last_iperf
        vm.sh("ip netns exec peer nstat -az TcpRetransSegs 2>&1 | tail -1")
    time.sleep(settle)
    res["secs"] = round(time.time() - t0, 1)
    b = vm.snapshot()
    vm.dut.clear()
    res["delta"] = vm.delta(a, b)
    res["fired"] = res["delta"]["model"].get("fault_fired", {})
    res["dmesg"] = [l for l in vm.dmesg_since(tag) if "l7-fault-mark" not in l]
    time.sleep(0.5)
    res["recovery_ping"] = vm.ping(count=3, interval=0.2, wait=2)["summary"]
    return res


def pacing(vm):
    """iperf3 goodput each way at model rates 50, 1000 and unpaced."""
    out = {}
    for label, rate, rev in (("rate50_tx", 50, False), ("rate50_rx", 50, True),
                             ("unpaced_tx", 0, False), ("rate1000_tx", 1000, False),
                             ("unpaced_rx", 0, True)):
        vm.dut.rate(rate)
        vm.dut.reset()
        mbps = vm.iperf(secs=8, reverse=rev)
        c = vm.dut.counters()
        out[label] = {"rate": rate, "mbps": round(mbps, 2),
                      "iperf": vm.last_iperf,
                      "limit": round(0.9415 * rate, 2) if rate else None,
                      "pct_of_limit": round(100 * mbps / (0.9415 * rate), 1) if rate else None,
                      "tx_pace_holds": c["tx_pace_holds"],
                      "rx_pace_holds": c["rx_pace_holds"]}
        print("pacing", label, out[label], flush=True)
    vm.dut.rate(1000)
    return out


def main():
    """Boot the VM, run the steps (and pacing), write the JSON report."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--ko", help="lan743x.ko (default: kbuild.sh module guest base)")
    ap.add_argument("--out", default="/tmp/h6/evidence.json")
    ap.add_argument("--only", help="comma separated step names")
    ap.add_argument("--no-pacing", action="store_true")
    ap.add_argument("--dut-opts", default="")
    a = ap.parse_args()

    obj = kb("kernel", "guest")
    ko = a.ko or kb("module", "guest", "base")
    qemu = subprocess.run(["bash", str(ROOT / "emulator/build.sh")], cwd=ROOT,
                          capture_output=True, text=True,
                          check=False).stdout.strip().splitlines()[-1]
    vm = VM(qemu=qemu, kernel=obj + "/arch/x86/boot/bzImage", mods=obj + "/mods",
            ko=ko, dut_opts=a.dut_opts)
    report = {"ko": ko, "kernel": obj, "qemu": qemu, "boot_s": round(vm.boot_s, 1),
              "steps": {}}
    try:
        vm.setup_net()
        only = set(a.only.split(",")) if a.only else None
        for name, kw, traffic, settle in STEPS:
            if only and name not in only:
                continue
            r = run_step(vm, name, kw, traffic, settle)
            report["steps"][name] = r
            print(json.dumps({name: r}, indent=1), flush=True)
        if not a.no_pacing:
            report["pacing"] = pacing(vm)
        _, out = vm.sh("dmesg | grep -iE 'lan743x|WARNING|BUG|Call Trace' | tail -40")
        report["dmesg_tail"] = out.splitlines()
    finally:
        vm.close()
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
        print("written", a.out)


if __name__ == "__main__":
    main()
