"""The stored patches' recipients: a patch whose driver changes call
page_pool or lib/dim goes to that library's maintainers as well
(lab/series/address.py), on both bases. 6.12's MAINTAINERS marks the PAGE POOL section
"S: Supported", so its get_maintainer.pl calls them supporters, not
maintainers; 7.3's calls them maintainers."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "lab/series"))
from address import LIBRARIES, uses, uses_page_pool

PAGE_POOL = ("Jesper Dangaard Brouer <hawk@kernel.org>",
             "Ilias Apalodimas <ilias.apalodimas@linaro.org>")


def header(text):
    """The mail header of a format-patch file (up to its Subject:)."""
    return text.split("\nSubject:", 1)[0]


def test_page_pool_patches_reach_its_maintainers():
    """Every patch of every stack that calls page_pool_*() in the driver
    names both page_pool maintainers in To: or Cc:, and at least one such
    patch exists on each base."""
    users = {"7.3": 0, "6.12": 0}
    missing = []
    for patch in sorted(ROOT.glob("patches/*/0*.patch")):
        if patch.name.startswith("0000-"):
            continue
        text = patch.read_text(encoding="utf-8")
        if not uses_page_pool(text):
            continue
        users["6.12" if patch.parent.name.startswith("6.12") else "7.3"] += 1
        missing += [f"{patch.parent.name}/{patch.name}: {who}"
                    for who in PAGE_POOL if who not in header(text)]
    assert all(users.values()), users
    assert not missing, "\n".join(missing)


def test_uses_page_pool_reads_the_driver_diff_only():
    """A page_pool call in the message or in a core file is not a use by
    the driver; one in a changed driver line is."""
    msg = "Subject: x\n\npage_pool_put_page() is mentioned here\n---\n"
    core = ("diff --git a/net/core/page_pool.c b/net/core/page_pool.c\n"
            "+\tpage_pool_put_page(pool, page, -1, false);\n")
    drv = ("diff --git a/drivers/net/ethernet/microchip/lan743x_main.c "
           "b/drivers/net/ethernet/microchip/lan743x_main.c\n"
           "+\tpage_pool_put_full_page(pool, page, false);\n")
    assert not uses_page_pool(msg + core)
    assert uses_page_pool(msg + drv)


DIM = "Tal Gilboa <talgi@nvidia.com>"


def test_dim_patches_reach_its_maintainer():
    """Every patch whose driver changes call net_dim() or another dim_*()
    function names lib/dim's maintainer, and such patches exist (the
    adaptive moderation of net-next-3)."""
    dim = LIBRARIES[1][0]
    users = [p for p in sorted(ROOT.glob("patches/*/0*.patch"))
             if not p.name.startswith("0000-")
             and uses(p.read_text(encoding="utf-8"), dim)]
    assert users
    missing = [p.name for p in users
               if DIM not in header(p.read_text(encoding="utf-8"))]
    assert not missing, missing


def test_dim_pattern():
    """A call of net_dim() or of a dim_*() helper is a use; the driver's
    own lan743x_rx_dim_reset() is not."""
    dim = LIBRARIES[1][0]
    drv = ("diff --git a/drivers/net/ethernet/microchip/lan743x_main.c "
           "b/drivers/net/ethernet/microchip/lan743x_main.c\n")
    assert uses(drv + "+\tnet_dim(&rx->dim, &sample);\n", dim)
    assert uses(drv + "+\tdim_park_on_top(&rx->dim);\n", dim)
    assert not uses(drv + "+\tlan743x_rx_dim_reset(rx);\n", dim)
