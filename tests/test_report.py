"""lab/bench/report.py: figures counted from trace lines are dropped, not
under-reported, when the trace ring buffer overran; the pinned RX pages
after a run, per queue and for the busiest one."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lab" / "bench"))
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
