"""TX completion interrupts per TX frame of saturated TCP TX (DUT -> peer)
on the x86_64 guest under icount (shift 2), net-next-3's module, at the
intervals of net_dim's TX profiles (1, 8, 32, 64, 128 us: the library's
EQE profiles, all adaptive-tx could choose) and at the default 400 us in
the same boot: whether adaptive-tx with the library's profiles could take
fewer TX interrupts per sent frame than the fixed default.
Counted: the model's interrupts per vector and its TX frames.

  run.py OUT.jsonl [SHIFT]   (icount shift, default 2: 2^SHIFT ns an
  instruction)"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
sys.path.insert(0, f"{ROOT}/emulator/tests")
from vmrpc import PEER_IP, VM, icount_opts, list_delta  # noqa: E402

os.chdir(ROOT)
env = dict(os.environ, STACK="net-next-3", JOBS="1", KBUILD_MODPOST_WARN="1")
last = lambda cmd: subprocess.run(cmd, capture_output=True, text=True, env=env).stdout.split()[-1]  # noqa: E731
obj = last(["bash", "lab/kernel/kbuild.sh", "kernel", "guest"])
qemu = last(["bash", "emulator/build.sh"])
ko = last(["bash", "lab/kernel/kbuild.sh", "module", "guest", "series"])
out = open(sys.argv[1], "w", encoding="utf-8")
vm = VM(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage", mods=f"{obj}/mods",
        ko=ko, cpus=1, qemu_opts=icount_opts(int(sys.argv[2]) if len(sys.argv) > 2 else 2))
try:
    vm.setup_net()
    for usecs in (1, 8, 32, 64, 128, 400):
        rc, o = vm.sh(f"ethtool -C {vm.ifname} tx-usecs {usecs}")
        assert rc == 0, o
        for rep in range(5):
            c0 = vm.dut.counters()
            vm.sh(f"iperf3 -c {PEER_IP} -t 5 -P 2", timeout=120)
            c1 = vm.dut.counters()
            irq = list_delta(c1["irq_per_vector"], c0["irq_per_vector"])
            r = {"tx_usecs": usecs, "rep": rep, "tx_frames": c1["tx_frames"] - c0["tx_frames"],
                 "rx_frames": c1["rx_frames"] - c0["rx_frames"], "irq_per_vector": irq}
            r["icount_shift"] = int(sys.argv[2]) if len(sys.argv) > 2 else 2
            out.write(json.dumps(r) + "\n")
            out.flush()
            print(r, flush=True)
finally:
    vm.close()
