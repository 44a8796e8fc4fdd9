import sys
sys.path.insert(0, "tests")
import conftest as c
qemu, obj = c.vm_inputs("net-next-2")
ko = c.guest_module("net-next-2")
src = c.lab_built("src", ["bash", "lab/kernel/kbuild.sh", "srcrepo"], env=c.stack_env("net-next-2"))
env = c.stack_env("net-next-2", QEMU=qemu, KERNEL=f"{obj}/arch/x86/boot/bzImage", MODDIR=f"{obj}/mods",
    DUT_OPTS=",fault-drop-ls-every=16", LAN743X_SOAK_PENDING="1", LAN743X_SOAK_CHANGES=sys.argv[2] if len(sys.argv) > 2 else "4",
    LAN743X_SOAK_PROGRESS="50", LAN743X_SOAK_GUARD=sys.argv[1], LAN743X_YNL=f"{src}/tools/net/ynl")
p = c.run(["bash", "lab/vm/vm.sh", "lab/guest/soak.sh", ko], env=env, timeout=7200)
print(p.stdout, "rc", p.returncode)
