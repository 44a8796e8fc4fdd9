"""TX completion interrupts per TX frame of saturated TCP TX (DUT -> peer)
on the x86_64 guest under icount (shift 2), net-next-3's module, for
tx-usecs 50, 400 (the default) and 1000: whether the TX interval changes
how many interrupts a sent frame costs (the question adaptive-tx asks).
Counted: the model's interrupts per vector and its TX frames."""
import json
import os
import subprocess
import sys

ROOT = "/work/main"
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
        ko=ko, cpus=1, qemu_opts=icount_opts(2))
try:
    vm.setup_net()
    for usecs in (50, 400, 1000):
        rc, o = vm.sh(f"ethtool -C {vm.ifname} tx-usecs {usecs}")
        assert rc == 0, o
        for rep in range(5):
            c0 = vm.dut.counters()
            vm.sh(f"iperf3 -c {PEER_IP} -t 5 -P 2", timeout=120)
            c1 = vm.dut.counters()
            irq = list_delta(c1["irq_per_vector"], c0["irq_per_vector"])
            r = {"tx_usecs": usecs, "rep": rep, "tx_frames": c1["tx_frames"] - c0["tx_frames"],
                 "rx_frames": c1["rx_frames"] - c0["rx_frames"], "irq_per_vector": irq}
            out.write(json.dumps(r) + "\n")
            out.flush()
            print(r, flush=True)
finally:
    vm.close()
