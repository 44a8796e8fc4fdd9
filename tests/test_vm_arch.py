"""lab/vm/vm.sh, one launcher for both guests: ARCH=x86_64 (virtme-ng, the
host's root) or ARCH=armv7 (QEMU virt, an initramfs, the PCIe host made
non-coherent). Checked on QEMU's real command line with a stand-in QEMU
that records its arguments and files (no guest boots: seconds)."""
import base64
import os
import re
import stat
import subprocess

import pytest
from conftest import run

# QEMU's virt machine as the device tree it dumps: a pcie node that says
# dma-coherent (what hw/arm/virt.c create_pcie() writes)
VIRT_DTS = """/dts-v1/;
/ {
\t#address-cells = <2>;
\t#size-cells = <2>;
\tpcie@10000000 {
\t\tcompatible = "pci-host-ecam-generic";
\t\tdma-coherent;
\t};
};
"""


def stand_in_qemu(tmp_path, console="LAN743X-ARM-EXIT=0"):
    """A qemu-system-* that writes the dumped DT when asked (-M
    ...,dumpdtb=FILE), else records its arguments, keeps the -dtb and
    -initrd files it was given and prints CONSOLE as the guest's console."""
    dts = tmp_path / "virt.dts"
    dts.write_text(VIRT_DTS)
    (tmp_path / "console.txt").write_text(console + "\n")
    qemu = tmp_path / "qemu-system-stand-in"
    qemu.write_text(f"""#!/bin/bash
for a in "$@"; do
    case "$a" in *dumpdtb=*) printf '%s\\n' "$@" > {tmp_path}/dump-args
        dtc -I dts -O dtb -o "${{a##*dumpdtb=}}" {dts}; exit 0 ;; esac
done
printf '%s\\n' "$@" > {tmp_path}/args
prev=""
for a in "$@"; do
    case "$prev" in
    -dtb) cp "$a" {tmp_path}/got.dtb ;;
    -initrd) cp "$a" {tmp_path}/got.cpio ;;
    esac
    prev=$a
done
cat {tmp_path}/console.txt
""")
    qemu.chmod(qemu.stat().st_mode | stat.S_IXUSR)
    return qemu


def arm_run(tmp_path, *args, console="LAN743X-ARM-EXIT=0", **env):
    """Run vm.sh ARCH=armv7 ARGS with ENV on a stand-in QEMU that prints
    CONSOLE: vm.sh's process."""
    qemu = stand_in_qemu(tmp_path, console)
    kernel = tmp_path / "zImage"
    kernel.write_bytes(b"\0" * 4096)
    rootfs = tmp_path / "rootfs.cpio"
    rootfs.write_bytes(b"\0" * 512)
    e = dict(os.environ, ARCH="armv7", QEMU=str(qemu), KERNEL=str(kernel),
             ROOTFS=str(rootfs), VM_TIMEOUT="60")
    e.pop("MODDIR", None)
    e.update(env)
    return run(["bash", "lab/vm/vm.sh", *args], env=e, timeout=120)


def initrd_file(tmp_path, name):
    """A file of the per-run cpio (the stand-in rootfs is not a cpio: the
    overlay is read from where it starts)."""
    data = (tmp_path / "got.cpio").read_bytes()
    ov = data[data.index(b"070701"):]
    d = tmp_path / "initrd"
    d.mkdir(exist_ok=True)
    subprocess.run(["cpio", "-id", "--quiet", name], cwd=d, input=ov,
                   check=True)
    return d / name


def test_armv7_command_line_and_noncoherent_dt(tmp_path):
    """The armv7 guest's QEMU command line, initrd and a device tree whose
    PCIe host is not DMA-coherent."""
    ko = tmp_path / "lan743x.ko"
    ko.write_bytes(b"ko")
    p = arm_run(tmp_path, "--ko", f"series={ko}", "lab/guest/e2e.sh",
                LAN743X_X="forwarded")
    assert p.returncode == 0, p.stderr[-2000:]
    a = (tmp_path / "args").read_text().split("\n")
    assert a[a.index("-M") + 1] == "virt,highmem=off"
    assert a[a.index("-cpu") + 1] == "cortex-a15"
    assert a[a.index("-kernel") + 1] == str(tmp_path / "zImage")
    devs = [a[i + 1] for i, x in enumerate(a) if x == "-device"]
    assert devs[0].startswith("lan7430,id=dut,netdev=p0,"), devs
    assert devs[1].startswith("virtio-net-pci,id=peer,netdev=p1,"), devs
    assert any(x.startswith("unix:") for x in a[a.index("-qmp") + 1:][:1])
    assert "rdinit=/init" in a[a.index("-append") + 1]
    # the DT QEMU gets has no dma-coherent on the pcie node
    props = subprocess.run(["fdtget", "-p", str(tmp_path / "got.dtb"),
                            "/pcie@10000000"], capture_output=True,
                           text=True, check=True).stdout.split()
    assert "compatible" in props and "dma-coherent" not in props
    assert "PCIe DMA NON-coherent" in p.stderr
    # the module in the initramfs and its guest path in the environment
    envf = initrd_file(tmp_path, "lab-env").read_text()
    assert "LAN743X_KO_series=/ko/series/lan743x.ko" in envf
    assert "LAN743X_X=forwarded" in envf
    assert initrd_file(tmp_path, "ko/series/lan743x.ko").read_bytes() == b"ko"
    assert initrd_file(tmp_path, "lab-cmd").read_text().split() == \
        ["lab/guest/e2e.sh"]


def test_armv7_taps_only_in_the_guests_run(tmp_path):
    """VM_PARTNER_TAP and VM_MGMT_TAP wire the DUT and the virtio-net NIC
    to host taps in the guest's QEMU, and the device-tree dump (a QEMU run
    of its own) has no network: a tap backend there would create the
    host's taps and delete them when the dump exits, under a host that
    had already configured them. Fails with the network in the dump."""
    p = arm_run(tmp_path, "true", VM_PARTNER_TAP="l7tw1",
                VM_MGMT_TAP="l7tm1")
    assert p.returncode == 0, p.stderr[-2000:]
    a = (tmp_path / "args").read_text().split("\n")
    nets = [a[i + 1] for i, x in enumerate(a) if x == "-netdev"]
    assert nets == ["tap,id=p0,ifname=l7tw1,script=no,downscript=no",
                    "tap,id=p1,ifname=l7tm1,script=no,downscript=no"], nets
    dump = (tmp_path / "dump-args").read_text().split("\n")
    assert "-netdev" not in dump and "-device" not in dump, dump


def test_mgmt_tap_refusals(tmp_path):
    """A management tap that is not an interface name, or is the DUT's
    wire too, is refused before QEMU starts."""
    p = arm_run(tmp_path, "true", VM_MGMT_TAP="bad name")
    assert p.returncode == 2 and "not an interface name" in p.stderr
    p = arm_run(tmp_path, "true", VM_PARTNER_TAP="l7x", VM_MGMT_TAP="l7x")
    assert p.returncode == 2 and "the same device" in p.stderr
    assert not (tmp_path / "args").exists()


def test_armv7_coherent_keeps_qemus_dt(tmp_path):
    """VM_ARM_COHERENT=1 keeps QEMU's device tree (coherent PCIe)."""
    p = arm_run(tmp_path, "true", VM_ARM_COHERENT="1")
    assert p.returncode == 0, p.stderr[-2000:]
    props = subprocess.run(["fdtget", "-p", str(tmp_path / "got.dtb"),
                            "/pcie@10000000"], capture_output=True,
                           text=True, check=True).stdout.split()
    assert "dma-coherent" in props


@pytest.mark.parametrize("console,rc", [
    ("LAN743X-ARM-EXIT=3", 3),
    ("[    1.0] Kernel panic - not syncing: Fatal exception", 86),
    ("the guest went silent", 86)])
def test_armv7_exit_status(tmp_path, console, rc):
    """The guest's status from the console; a panic or no status: 86."""
    p = arm_run(tmp_path, "true", console=console)
    assert p.returncode == rc, p.stderr[-2000:]


def test_x86_64_command_line(tmp_path):
    """ARCH=x86_64 (the default): vng with the DUT and the peer on one hub;
    --ko is the module's host path in the guest's environment."""
    args = tmp_path / "args"
    qemu = tmp_path / "qemu-system-x86_64"
    qemu.write_text("#!/bin/bash\nprintf '%s\\n' \"$@\" > " + str(args) +
                    "\nexit 0\n")
    qemu.chmod(qemu.stat().st_mode | stat.S_IXUSR)
    kernel = tmp_path / "bzImage"
    kernel.write_bytes(b"\0" * 4096)
    ko = tmp_path / "lan743x.ko"
    ko.write_bytes(b"ko")
    e = dict(os.environ, QEMU=str(qemu), KERNEL=str(kernel), VM_TIMEOUT="120")
    e.pop("ARCH", None)
    p = run(["bash", "lab/vm/vm.sh", "--ko", f"series={ko}", "true"], env=e,
            timeout=180)
    assert args.exists(), "QEMU was not started:\n" + p.stderr[-2000:]
    assert "vm.sh: arch=x86_64" in p.stderr
    a = args.read_text().split("\n")
    devs = [a[i + 1] for i, x in enumerate(a) if x == "-device"]
    assert any(d.startswith("lan7430,id=dut,netdev=p0,") for d in devs), devs
    assert any(d.startswith("virtio-net-pci,id=peer,netdev=p1,")
               for d in devs), devs
    m = re.search(r"virtme\.exec=`([^`]*)`", a[a.index("-append") + 1])
    assert m, a
    assert f"LAN743X_KO_series={ko}" in base64.b64decode(m.group(1)).decode()


@pytest.mark.parametrize("arch,args,err", [
    ("arm", ["true"], "ARCH=arm: x86_64 or armv7"),
    ("x86_64", ["--file", "/etc/hostname=/x", "true"],
     "--file and --dir are for ARCH=armv7")])
def test_usage_errors(tmp_path, arch, args, err):
    """An unknown ARCH, or armv7's options on x86_64: usage errors."""
    qemu = stand_in_qemu(tmp_path)
    kernel = tmp_path / "bzImage"
    kernel.write_bytes(b"\0")
    e = dict(os.environ, ARCH=arch, QEMU=str(qemu), KERNEL=str(kernel))
    p = run(["bash", "lab/vm/vm.sh", *args], env=e, timeout=60)
    assert p.returncode == 2 and err in p.stderr, p.stderr[-1000:]


@pytest.mark.parametrize("env,err", [
    ({"ARCH": "arm"}, "e2e: ARCH x86_64 or armv7, not 'arm'"),
    ({"ARCH": "armv7", "STACK": "net"}, "e2e: STACK net-next-2 or 6.12-2")])
def test_e2e_runner_usage_errors(tmp_path, env, err):
    """lab/vm/e2e.sh (make e2e, make arm-e2e) refuses an ARCH or STACK it
    has no guest for, before building anything."""
    e = dict(os.environ, E2E_LOGDIR=str(tmp_path), **env)
    e.setdefault("STACK", "net-next-2")
    p = run(["bash", "lab/vm/e2e.sh"], env=e, timeout=60)
    assert p.returncode != 0 and err in p.stderr, p.stderr[-1000:]
    assert "kernel" not in p.stderr, p.stderr[-1000:]
