"""lab/bench/outage.py: the table totals lost packets, device drops and the
emulator's FIFO holds per module, and says n/a where a figure is missing."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lab" / "bench"))
from outage import table


def run(lost, sent, drops, model):
    """One outage run's result: LOST of SENT, device DROPS, MODEL counters."""
    r = {"lost": [0, lost], "gap_ms": [10.0, 20.0], "cmd_ms": [300.0, 400.0],
         "window_ms": [0.1, 0.2], "lost_total": lost, "sent": sent,
         "device_drops": drops}
    if model is not None:
        r["model"] = model
    return r


def rows(text):
    """{row label: [cell per module]} of the markdown table"""
    out = {}
    for ln in text.splitlines():
        if ln.startswith("| "):
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            out[cells[0]] = cells[1:]
    return out


def test_totals_per_module():
    """Lost packets, drops and FIFO holds are totalled per module."""
    res = {"outage": {
        "upstream": [run(3, 1000, {}, {"rx_fifo_holds": 0,
                                       "rx_drop_disabled": 4}),
                     run(2, 1000, {}, {"rx_fifo_holds": 0,
                                       "rx_drop_disabled": 2})],
        "series": [run(0, 999, {"RX Dropped Frames": 1},
                       {"rx_fifo_holds": 5, "rx_drop_disabled": 0}),
                   run(0, 1001, {}, {"rx_fifo_holds": 7,
                                     "rx_drop_disabled": 0})]},
        "order": {"upstream": {"order_gt0_softirq": 9, "received": 10}}}
    t = rows(table(res, ["upstream", "series"]))
    assert t["lost in all runs (sent - received)"] == ["5 of 2000",
                                                       "0 of 2000"]
    assert t["device drop/error counters (ethtool -S)"] == ["0", "1"]
    assert t["emulator rx_fifo_holds"] == ["0", "12"]
    assert t["emulator rx_drop_disabled"] == ["6", "0"]
    order = next(k for k in t if k.startswith("order>0"))
    assert t[order] == ["9 (10 frames)", "n/a"]


def test_model_counters_missing_is_na():
    """A run without the model's counters makes its figure n/a."""
    res = {"outage": {"series": [run(0, 10, {}, None),
                                 run(0, 10, {}, {"rx_fifo_holds": 1,
                                                 "rx_drop_disabled": 0})]},
           "order": {}}
    t = rows(table(res, ["series"]))
    assert t["emulator rx_fifo_holds"] == ["n/a"]
