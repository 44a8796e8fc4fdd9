"""The kernels a stack needs (lab/kernel/kbuild.sh): the base plus the
stack's changes outside the driver, its documentation, MAINTAINERS and the
selftests, with the kernel's build directory keyed by those changes."""
import os
import shutil

from conftest import run

KBUILD = ["bash", "lab/kernel/kbuild.sh"]
CORE = "0009-net-page_pool-allow-enabling-recycling-late-fix-fals.patch"
DRIVER = "0010-net-lan743x-use-page_pool-for-RX-buffers.patch"


def kbuild(stack, *args, patches=None):
    """The lines kbuild.sh ARGS prints for STACK (it must succeed)."""
    env = dict(os.environ, STACK=stack)
    env.pop("LAB_BASE", None)
    env.pop("LAN743X_PATCHES", None)
    if patches:
        env["LAN743X_PATCHES"] = str(patches)
    p = run(KBUILD + list(args), env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_core_parts_of_the_stacks():
    """The 7.3 stacks change only the driver, its documentation,
    MAINTAINERS and the selftests: their kernels are the base alone. The
    6.12 kernels carry the backported page_pool helper, the one patch of
    the 6.12 backport outside those (in its first stack, 6.12, so the
    second, 6.12-2, carries it through its parent); armv7-imx builds no
    kernel."""
    for stack in ("net", "net-next-1", "net-next-2"):
        assert not kbuild(stack, "core", "guest"), stack
    for stack in ("6.12", "6.12-2"):
        for variant in ("guest", "bench", "debug", "armv7-virt"):
            assert [os.path.basename(p) for p in
                    kbuild(stack, "core", variant)] == [CORE], (stack,
                                                                variant)
        assert not kbuild(stack, "core", "armv7-imx"), stack


def edited(tmp_path, name, patch, old, new):
    """A copy of patches/6.12 in tmp_path/NAME with OLD replaced by NEW
    (once, in a line added by PATCH)."""
    d = tmp_path / name
    shutil.copytree("patches/6.12", d)
    f = d / patch
    text = f.read_text(encoding="utf-8")
    assert text.count("\n+" + old) == 1, (patch, old)
    f.write_text(text.replace("\n+" + old, "\n+" + new), encoding="utf-8")
    return d


def test_kernel_key_follows_the_core_parts(tmp_path):
    """A change to a core part gives the 6.12 kernels a new build
    directory (a new kernel is built); a change to a driver patch does
    not, nor does either change the module-only armv7-imx directory."""
    core = edited(tmp_path, "core", CORE, "\tWARN_ON(!napi || pool->p.napi);",
                  "\tWARN_ON_ONCE(!napi || pool->p.napi);")
    driver = edited(tmp_path, "driver", DRIVER,
                    "\t\tpage_pool_put_full_page(rx->page_pool, ",
                    "\t\tpage_pool_put_page(rx->page_pool, ")
    for variant in ("guest", "armv7-virt"):
        now = kbuild("6.12", "objdir", variant)
        assert kbuild("6.12", "objdir", variant, patches=core) != now, variant
        assert kbuild("6.12", "objdir", variant, patches=driver) == now, variant
    now = kbuild("6.12", "objdir", "armv7-imx")
    assert kbuild("6.12", "objdir", "armv7-imx", patches=core) == now
