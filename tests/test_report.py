"""lab/bench/report.py: figures counted from trace lines are dropped, not
under-reported, when the trace ring buffer overran; the pinned RX pages
after a run, per queue and for the busiest one; the starvation rows; a
cell whose model counted descriptor errors fails."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lab" / "bench"))
import report
from report import metrics


def record(overrun):
    """A bench record whose trace ring buffer lost OVERRUN events."""
    return {"cell": "tcp-rx-1500", "packets": 1000, "mbit_s": 500.0,
            "cpu_busy_ticks": 10,
            "trace": {"trace_overrun": overrun, "napi_polls": 100,
                      "napi_work": 1000, "napi_full_budget": 5,
                      "dma_map_page_from_device_calls": 50,
                      "dma_map_page_from_device_bytes": 75000,
                      "page_alloc_orders_global": {"0": 300, "3": 2},
                      "page_pool_hold": 40,
                      "driver_page_allocs": {"orders": {"0": 7, "2": 1}}}}


def test_trace_figures_without_overrun():
    """Without overrun, the trace figures per packet are reported."""
    m = metrics(record(0))
    assert m["dma map calls/pkt"] == 0.05
    assert m["map bytes/pkt"] == 75
    assert m["NAPI polls/pkt"] == 0.1
    assert m["page_pool new pages/pkt"] == 0.04
    assert m["driver order>0 allocs/pkt"] == 0.001


def test_overrun_drops_trace_figures_keeps_histogram():
    """With overrun, the trace figures are dropped, the histogram kept."""
    m = metrics(record(12345))
    for k in ("dma map calls/pkt", "map bytes/pkt", "NAPI polls/pkt",
              "work/poll"):
        assert m[k] is None, k
    assert "page_pool new pages/pkt" not in m
    # the in-kernel histogram does not go through the ring buffer
    assert m["driver page allocs/pkt"] == 0.008
    assert m["Mbit/s"] == 500.0


def test_pages_pinned_mean_and_busiest_queue():
    """The pinned pages per queue, and the busiest queue's pool pages."""
    series = dict(record(0), pages_pinned_per_queue=104.5,
                  pool_pages={"4": 233, "5": 64, "6": 64, "7": 64})
    m = metrics(series)
    assert m["pages held per RX queue after the run (freed at down)"] == 104.5
    assert m["page_pool pages per queue after the run (inflight)"] == 106.25
    assert m["page_pool pages, busiest queue (inflight)"] == 233
    # upstream: no pool, no pool rows
    m = metrics(dict(record(0), pages_pinned_per_queue=64.0))
    assert "page_pool pages, busiest queue (inflight)" not in m
    assert "pages held per RX queue after the run (freed at down)" \
        not in metrics(record(0))


def test_pages_pinned_with_emptied_slabs():
    """The second count, with the slabs the down emptied, is its own row,
    and absent where the run could not count it."""
    key = ("pages held per RX queue after the run (freed at down, "
           "emptied slabs included)")
    m = metrics(dict(record(0), pages_pinned_per_queue=38.5,
                     pages_pinned_with_slab_per_queue=66.0))
    assert m[key] == 66.0
    assert m["pages held per RX queue after the run (freed at down)"] == 38.5
    assert key not in metrics(dict(record(0), pages_pinned_per_queue=38.5))


def emu(**kw):
    """The model's counters of one cell: nothing dropped, KW."""
    c = {"mmio": {"RX_TAIL0": {"r": 0, "w": 10}}, "irq_per_vector": [1],
         "rx_frames": 1000, "rx_no_desc_stalls": 0, "rx_drop_no_desc": 0,
         "rx_drop_size": 0, "rx_drop_filter": 0, "rx_drop_disabled": 0,
         "rx_drop_fifo_reset": 0, "rx_fifo_overflow": [0, 0, 0, 0],
         "rx_fifo_flushed": 0, "tx_pause_frames": 0, "desc_errors": 0,
         "wb_freed_ring_writes": 0}
    c.update(kw)
    return c


def test_starvation_rows():
    """Stalls, overflows, every device drop but the filter's, and pause
    frames per frame; rx_drop_no_desc is labelled what it counts."""
    r = dict(record(0), emulator=emu(
        rx_no_desc_stalls=300, rx_fifo_overflow=[5, 0, 1, 0],
        rx_drop_filter=7, rx_drop_disabled=2, rx_drop_no_desc=1,
        rx_fifo_flushed=1, tx_pause_frames=20))
    m = metrics(r)
    assert m["emu RX frames finding no descriptor/pkt"] == 0.3
    assert m["emu RX FIFO overflows (frames dropped, FIFO full)/pkt"] == 0.006
    # 6 overflows + 2 disabled + 1 too large + 1 flushed; not the filter's
    assert m["emu RX frames dropped by the device/pkt"] == 0.01
    assert m["emu pause frames sent/pkt"] == 0.02
    assert m["emu RX drops, frame larger than the ring"] == 1
    assert not any("no-desc drops" in k for k in m)
    assert m["emu descriptor errors (must be 0)"] == 0


def test_descriptor_errors_fail_the_cell():
    """A must-be-zero counter non-zero or missing, or no counters, fails
    the cell; a record without the emulator (a board) does not."""
    ok = dict(record(0), module="upstream", rep=1, emulator=emu())
    assert not report.cell_faults(ok)
    bad = dict(ok, emulator=emu(desc_errors=3))
    assert report.cell_faults(bad) == ["desc_errors = 3"]
    old = dict(ok, emulator={k: v for k, v in emu().items()
                             if k != "desc_errors"})
    assert "desc_errors missing" in report.cell_faults(old)[0]
    assert report.cell_faults(dict(ok, emulator={"error": "QMP"}))
    assert not report.cell_faults(record(0))
    assert report.failed_cells([ok, bad]) == [
        "default tcp-rx-1500 upstream rep 1: desc_errors = 3"]


def test_report_exits_non_zero_on_a_failed_cell(tmp_path, capsys):
    """report.py writes the table with the failed cells and exits 1."""
    recs = [dict(record(0), module=m, rep=1, tag="swiotlb=off",
                 emulator=emu(wb_freed_ring_writes=int(m == "series"),
                              model_settings={"rx-fifo-kib": 12}))
            for m in ("upstream", "series")]
    (tmp_path / "records.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in recs))
    sys.argv = ["report.py", str(tmp_path)]
    assert report.main() == 1
    t = (tmp_path / "table.md").read_text()
    assert "Model settings (--model, read back from the device): " \
        "rx-fifo-kib=12" in t
    assert "- swiotlb=off tcp-rx-1500 series rep 1: " \
        "wb_freed_ring_writes = 1" in t
    capsys.readouterr()
