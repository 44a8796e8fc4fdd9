"""The kernels a stack needs (lab/kernel/kbuild.sh): the base plus the
stack's changes outside the driver, its documentation, MAINTAINERS and the
selftests, with the kernel's build directory keyed by those changes. No
stack has such a change now; a fixture patch shows the mechanism."""
import os
import shutil

from conftest import run

KBUILD = ["bash", "lab/kernel/kbuild.sh"]
DRIVER = "0009-net-lan743x-use-page_pool-for-RX-buffers.patch"
# A core change for the fixtures: a line of net/core/page_pool.c changed
# (the patch text only has to hold a diff outside the driver; kbuild.sh
# applies it only when it builds a kernel, which these tests do not)
CORE = "0099-net-page_pool-fixture.patch"
CORE_TEXT = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Fixture <fixture@example.org>
Subject: [PATCH] net: page_pool: fixture

---
 net/core/page_pool.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/net/core/page_pool.c b/net/core/page_pool.c
--- a/net/core/page_pool.c
+++ b/net/core/page_pool.c
@@ -1,1 +1,1 @@
-// SPDX-License-Identifier: GPL-2.0
+// SPDX-License-Identifier: GPL-2.0-only
--
2.39.5
"""


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
    """Every stack changes only the driver, its documentation, MAINTAINERS
    and the selftests: its kernels are the base alone, on 7.3 and on 6.12
    (whose backport carries no core change since its page_pools are not
    bound to NAPI)."""
    for stack in ("net", "net-next-1", "net-next-2", "net-next-3"):
        assert not kbuild(stack, "core", "guest"), stack
    for stack in ("6.12", "6.12-2", "6.12-3"):
        for variant in ("guest", "bench", "debug", "armv7-virt",
                        "armv7-imx"):
            assert not kbuild(stack, "core", variant), (stack, variant)


def with_core(tmp_path):
    """A copy of patches/6.12 in tmp_path/core with the fixture's core
    patch after its own."""
    d = tmp_path / "core"
    shutil.copytree("patches/6.12", d)
    (d / CORE).write_text(CORE_TEXT, encoding="utf-8")
    return d


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


def test_a_core_patch_is_part_of_the_kernels(tmp_path):
    """A patch of the stack with a diff outside the driver is listed as a
    core part of every variant that builds a kernel, not of the
    module-only armv7-imx."""
    core = with_core(tmp_path)
    for variant in ("guest", "bench", "debug", "armv7-virt"):
        assert [os.path.basename(p) for p in
                kbuild("6.12", "core", variant, patches=core)] == [CORE], \
            variant
    assert not kbuild("6.12", "core", "armv7-imx", patches=core)


def test_kernel_key_follows_the_core_parts(tmp_path):
    """A core part gives the kernels a new build directory (a new kernel
    is built); a change to a driver patch does not, nor does either
    change the module-only armv7-imx directory."""
    core = with_core(tmp_path)
    driver = edited(tmp_path, "driver", DRIVER,
                    "\t\tbuffer_info->page = NULL;",
                    "\t\tbuffer_info->page = NULL; /* fixture */")
    for variant in ("guest", "armv7-virt"):
        now = kbuild("6.12", "objdir", variant)
        assert kbuild("6.12", "objdir", variant, patches=core) != now, variant
        assert kbuild("6.12", "objdir", variant, patches=driver) == now, variant
    now = kbuild("6.12", "objdir", "armv7-imx")
    assert kbuild("6.12", "objdir", "armv7-imx", patches=core) == now
