#!/usr/bin/env python3
"""The board kit's builds (host side): the kernel tree, the modules (the
upstream driver of the board kernel's source, and the series' with the
patches of patches/), the kselftests install, and the vermagic check.
lab/board/build.sh does the compiling. Imported by board.py."""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from board_parse import BoardError

KIT = Path(__file__).resolve().parent
ROOT = KIT.parents[1]
T0 = time.time()
#: the stacks of patches/ whose patches make the series' module, by the
#: source's version
STACKS = {"7": ("net", "net-next-1", "net-next-2", "net-next-3"),
          "6.12": ("6.12", "6.12-2")}


def progress(msg):
    """MSG on stderr, after the seconds since the start."""
    print(f"[board {int(time.time() - T0):4d}s] {msg}", file=sys.stderr,
          flush=True)



def src_version(src):
    """(VERSION, PATCHLEVEL) of the kernel source SRC."""
    text = (Path(src) / "Makefile").read_text(errors="replace")
    v = re.search(r"^VERSION = (\d+)", text, re.MULTILINE)
    p = re.search(r"^PATCHLEVEL = (\d+)", text, re.MULTILINE)
    if not v or not p:
        raise BoardError(f"{src}: not a kernel source tree (no VERSION in "
                         "its Makefile)")
    return int(v.group(1)), int(p.group(1))


def series_patches(src, stacks=None):
    """The patch files of the series for the source SRC: the stacks of
    patches/ for its version (or STACKS, a comma list), cover letters
    left out."""
    if stacks:
        names = [s for s in stacks.split(",") if s]
    else:
        v, p = src_version(src)
        names = STACKS.get(f"{v}.{p}") or STACKS.get(str(v))
        if not names:
            raise BoardError(f"the series has no stack for Linux {v}.{p} "
                             f"(patches/: 7.x and 6.12); --stacks to choose")
    out = []
    for s in names:
        d = ROOT / "patches" / s
        if not d.is_dir():
            raise BoardError(f"no patches/{s}")
        out += sorted(p for p in d.glob("0*.patch")
                      if not p.name.startswith("0000-"))
    return out


def core_changes(patches):
    """Files outside the driver, Documentation/, MAINTAINERS and
    tools/testing/ that PATCHES change: the board's kernel itself must
    carry those changes."""
    out = set()
    for p in patches:
        for m in re.finditer(r"^diff --git a/(\S+)", p.read_text(
                errors="replace"), re.MULTILINE):
            f = m.group(1)
            if not re.match(r"(drivers/net/ethernet/microchip/|Documentation/"
                            r"|MAINTAINERS$|tools/testing/)", f):
                out.add(f)
    return sorted(out)


def build_sh(args, *cmd):
    """lab/board/build.sh CMD...: the path it prints last."""
    p = subprocess.run(["bash", str(KIT / "build.sh")] + [str(c) for c in cmd],
                       text=True, stdout=subprocess.PIPE, check=False,
                       env=dict(os.environ, BOARD_ARCH=args.arch))
    if p.returncode or not p.stdout.strip():
        raise BoardError(f"lab/board/build.sh {cmd[0]} failed (exit "
                         f"{p.returncode}; its messages above)")
    return p.stdout.strip().splitlines()[-1]


def kernel_tree(args):
    """(KDIR, SRC): the board kernel's build tree and its source."""
    if args.kconfig:
        src = args.src
        if not src:
            raise BoardError("KCONFIG= needs SRC=, the kernel source the "
                             "board's kernel was built from")
        cache = Path.home() / ".cache/lan743x-board"
        key = subprocess.run(["sha256sum", args.kconfig], text=True,
                             capture_output=True, check=True).stdout[:16]
        kdir = build_sh(args, "tree", args.kconfig, src,
                        cache / f"obj-{args.arch}-{key}")
        return Path(kdir), Path(src)
    kdir = Path(args.kdir)
    if not (kdir / ".config").is_file():
        raise BoardError(f"KDIR={kdir}: no .config (the board kernel's "
                         "build tree, where it was built with O= or in "
                         "place)")
    src = Path(args.src) if args.src else (
        (kdir / "source").resolve() if (kdir / "source").exists() else kdir)
    return kdir, src


def build(args, out):
    """{module name: lan743x.ko} (built or given) and the series' patches
    (None when nothing was built)."""
    kos = {n: Path(p) for n, p in args.ko.items() if n in args.names}
    need = [n for n in args.names if n not in kos]
    if not need:
        return kos, None
    kdir, src = kernel_tree(args)
    patches = series_patches(src, args.stacks)
    core = core_changes(patches)
    if core and "series" in need:
        progress("warning: the series changes the kernel itself too ("
                 + ", ".join(core) + "): the board's kernel must carry "
                 "those changes, the module alone does not")
    for n in need:
        progress(f"building the {n} module")
        kos[n] = Path(build_sh(args, "module", n, kdir, src, out / "modules",
                               *(patches if n == "series" else [])))
    return kos, {"kdir": str(kdir), "src": str(src),
                 "patches": [str(p.relative_to(ROOT)) for p in patches],
                 "core_changes": core}


def build_ksft(args, out, meta):
    """make install of the selftests (base + the series' selftest hunks):
    the install directory."""
    kdir, src = Path(meta["kdir"]), Path(meta["src"])
    patches = [ROOT / p for p in meta["patches"]]
    progress("make install of the kselftests drivers/net/hw and drivers/net")
    ksft = Path(build_sh(args, "ksft", kdir, src, out / "selftests",
                         *patches))
    missing = kconfig_missing(
        kdir / ".config", [out / "selftests" / "ksft-src" / "tools/testing/"
                           f"selftests/{d}/config"
                           for d in ("drivers/net", "drivers/net/hw")])
    meta["kconfig_missing"] = missing
    if missing:
        progress("warning: the board's kernel lacks options the selftests "
                 "ask for (their cases that need them skip or fail): "
                 + " ".join(missing))
    return ksft


def kconfig_missing(config, fragments):
    """The options of FRAGMENTS (the selftests' config files) that the
    kernel CONFIG does not have as asked (=n ones: set there)."""
    have = {}
    for line in Path(config).read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"(CONFIG_\w+)=(.*)", line)
        if m:
            have[m.group(1)] = m.group(2)
    out = []
    for f in fragments:
        if not Path(f).exists():
            continue
        for line in Path(f).read_text(encoding="utf-8").splitlines():
            m = re.match(r"(CONFIG_\w+)=(.*)", line)
            if not m:
                continue
            k, v = m.groups()
            got = have.get(k, "n")
            # built in where a module is asked for does as well
            ok = got == v or (v == "m" and got == "y")
            if not ok and f"{k}={v}" not in out:
                out.append(f"{k}={v}")
    return out


def vermagic(ko):
    """The vermagic string of the module file KO (modinfo, else its
    .modinfo text)."""
    p = subprocess.run(["modinfo", "-F", "vermagic", str(ko)], text=True,
                       capture_output=True, check=False)
    if p.returncode == 0 and p.stdout.strip():
        return p.stdout.strip()
    m = re.search(rb"(?:^|\0)vermagic=([^\0]*)\0", Path(ko).read_bytes())
    if not m:
        raise BoardError(f"{ko}: no vermagic (not a kernel module?)")
    return m.group(1).decode(errors="replace").strip()


def check_vermagic(kos, release, dut_magic):
    """Refuse a module not built for the running kernel: RELEASE is the
    board's uname -r, DUT_MAGIC the vermagic of the board's own lan743x
    (or None)."""
    for name, ko in kos.items():
        vm = vermagic(ko)
        if vm.split()[0] != release or (dut_magic and vm != dut_magic):
            want = dut_magic or f"{release} ..."
            raise BoardError(
                f"module {name} ({ko}) does not match the board's running "
                f"kernel: its vermagic is '{vm}', the board runs "
                f"'{release}' (uname -r; its own lan743x: '{want}'). Build "
                "it against the build tree of the kernel the board runs "
                "(KDIR=), or boot that kernel; nothing was changed on the "
                "board")


#: what lan743x needs where they are modules: loaded when a module built
#: without the tree's Module.symvers records no dependencies
KNOWN_DEPS = ("phylink", "libphy", "mdio_devres", "microchip", "ptp",
              "pps_core")


def module_deps(ko):
    """The modules KO depends on (modinfo depends), for modprobe;
    KNOWN_DEPS when it records none."""
    p = subprocess.run(["modinfo", "-F", "depends", str(ko)], text=True,
                       capture_output=True, check=False)
    if p.returncode == 0:
        deps = [d for d in p.stdout.strip().split(",") if d]
    else:
        m = re.search(rb"(?:^|\0)depends=([^\0]*)\0", Path(ko).read_bytes())
        deps = [d for d in m.group(1).decode().split(",") if d] if m else []
    return deps or list(KNOWN_DEPS)
