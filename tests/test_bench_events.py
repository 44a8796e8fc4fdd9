"""The bench's guest-side tracing (lab/guest/bench_guest.py): DMA map calls
are counted on 6.12 (dma_map_page) and on 7.3 (dma_map_phys) alike, and a
kernel with neither stops the bench instead of reporting 0 map calls.

Until 2026-11-25 the bench enabled only dma_map_page, which 7.3 no longer
has: its tables on 7.3 said "dma map calls/pkt 0 [0, 0]" for both modules.
"""
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "lab" / "guest"))
import bench_guest

PCI = "0000:00:09.0"
LINE = ("          <idle>-0       [001] ..s1.   12.345678: {ev}: "
        + PCI + " dir=FROM_DEVICE dma_addr=1000 size=1536 "
        "phys_addr=2000 attrs=")


def parse(lines):
    """bench_guest.Tracer.parse() of the trace LINES of the DUT."""
    t = bench_guest.Tracer.__new__(bench_guest.Tracer)
    t.dut, t.pci = "enp0s9", PCI
    return t.parse("\n".join(lines) + "\n", 0)


def test_map_calls_counted_under_either_name():
    """dma_map_page (6.12) and dma_map_phys (7.3) count alike."""
    for ev in ("dma_map_page", "dma_map_phys"):
        out = parse([LINE.format(ev=ev)] * 3)
        assert out["dma_map_page_from_device_calls"] == 3, (ev, out)
        assert out["dma_map_page_from_device_bytes"] == 3 * 1536
    out = parse([LINE.format(ev="dma_unmap_phys")])
    assert out["dma_unmap_page_from_device_calls"] == 1


def test_7_3_events_are_picked():
    """7.3's events are all found, dma_map_phys among them."""
    have = {"napi/napi_poll", "dma/dma_map_phys", "dma/dma_unmap_phys",
            "dma/dma_sync_single_for_cpu", "dma/dma_sync_single_for_device",
            "net/netif_receive_skb", "net/napi_gro_receive_entry",
            "page_pool/page_pool_state_hold",
            "page_pool/page_pool_state_release", "kmem/mm_page_alloc"}
    found, missing = bench_guest.pick_events(have.__contains__)
    assert "dma/dma_map_phys" in found and "dma/dma_unmap_phys" in found
    assert not missing, missing


def test_a_kernel_without_map_events_is_named():
    """A kernel with neither map event is reported as missing one."""
    have = {"napi/napi_poll", "dma/dma_sync_single_for_cpu"}
    _, missing = bench_guest.pick_events(have.__contains__)
    assert "dma/dma_map_page or dma/dma_map_phys" in missing
