"""lab/bench/outage.py: the table totals lost packets, device drops and the
emulator's FIFO holds per module, says n/a where a figure is missing, gives
the starvation rows per received frame and the line-rate estimate, and
fails a repetition whose model counted descriptor errors."""
import subprocess
import sys

from conftest import ROOT, lab_module

outage = lab_module("lab/bench/outage.py")
table = outage.table


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


def zero_model(**kw):
    """A repetition's model counters: the must-be-zero ones at 0, KW."""
    return dict({"rx_fifo_holds": 0, "rx_drop_disabled": 0,
                 "desc_errors": 0, "wb_freed_ring_writes": 0}, **kw)


def test_starvation_rows_per_received_frame():
    """Stalls, overflows, device drops and pause frames are divided by the
    frames the model received, over all repetitions."""
    m1 = zero_model(rx_frames=1000, rx_no_desc_stalls=100,
                    rx_fifo_overflow=10, device_drops=30, tx_pause_frames=4)
    m2 = zero_model(rx_frames=3000, rx_no_desc_stalls=0,
                    rx_fifo_overflow=0, device_drops=10, tx_pause_frames=0)
    res = {"outage": {"series": [run(0, 10, {}, m1), run(0, 10, {}, m2)]},
           "order": {}}
    t = rows(table(res, ["series"]))
    assert t["frames finding no free RX descriptor, per received frame"] \
        == ["0.025 (100 of 4000)"]
    assert t["FIFO overflows (frames dropped, FIFO full), per received "
             "frame"] == ["0.0025 (10 of 4000)"]
    drops = next(k for k in t if k.startswith("frames dropped by the device"))
    assert t[drops] == ["0.01 (40 of 4000)"]
    assert t["pause frames sent, per received frame"] == ["0.001 (4 of 4000)"]
    assert t["emulator desc_errors (must be 0)"] == ["0"]
    assert not outage.failed(res)


def test_descriptor_errors_fail_and_missing_counter_fails():
    """A non-zero or missing must-be-zero counter fails the repetition."""
    bad = run(0, 10, {}, zero_model(desc_errors=2))
    old = run(0, 10, {}, {"rx_fifo_holds": 0, "rx_drop_disabled": 0})
    res = {"outage": {"upstream": [bad], "series": [old]}, "order": {}}
    t = rows(table(res, ["upstream", "series"]))
    assert t["emulator desc_errors (must be 0)"] == ["FAILED: 2",
                                                     "FAILED: missing"]
    f = outage.failed(res)
    assert "upstream rep 1: desc_errors = 2" in f
    assert any(x.startswith("series rep 1: wb_freed_ring_writes missing")
               for x in f)


def test_line_rate_estimate():
    """Window x 1 Gbit/s in frames, less what the FIFO holds when it kept
    receiving (DMA stopped), never below 0."""
    # 1 ms at 1 Gbit/s: 125000 bytes = 1000 frames of 105 + 20 bytes
    assert outage.line_rate_lost(1.0, "mtu", 32, 105) == 1000
    # 1518-byte frames: 125000 / 1538; a 32 KiB FIFO holds 21 of them
    assert round(outage.line_rate_lost(1.0, "dma", 32, 1518), 3) == \
        round(125000 / 1538 - 21, 3)
    assert outage.line_rate_lost(0.01, "dma", 32, 1518) == 0
    assert outage.line_rate_lost(None, "dma", 32, 1518) is None
    r = dict(run(0, 10, {}, None), window_ms=[1.0, 2.0],
             window_kind=["dma", "fifo"], rx_fifo_kib=12)
    t = rows(table({"outage": {"series": [r]}, "order": {}}, ["series"]))
    small = f"frames of {outage.OUTAGE_FRAME} bytes lost at 1 Gbit/s line " \
        "rate, estimate (**)"
    per = 125000 / (outage.OUTAGE_FRAME + 20)
    held = 12 * 1024 // outage.OUTAGE_FRAME
    want = (f"{outage.fmt((per - held + 2 * per) / 2)} "
            f"[{outage.fmt(per - held)}, {outage.fmt(2 * per)}] n=2")
    assert t[small] == [want]
    assert t["RX FIFO per channel, KiB (rx-fifo-kib)"] == ["12"]


def test_outage_finds_its_qmp_client(tmp_path):
    """outage.py reads the model's counters with lab/vm/qmp.py: in a fresh
    interpreter (no test paths) the client is importable from it, so a
    missing socket is the error seen (a missing module once left every
    repetition without counters)."""
    code = ("import sys; sys.path.insert(0, 'lab/bench'); import outage; "
            f"assert outage.model_counters({str(tmp_path / 'no.sock')!r}) "
            "is None")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert "No module named" not in p.stderr, p.stderr
    assert "no emulator counters over QMP" in p.stderr, p.stderr


def test_window_is_the_fifo_one_when_a_fifo_was_disabled():
    """A change that disables a FIFO and then stops the DMA (v4's switch)
    is closed from the FIFO's disable: the window is rx_disable to
    rx_enable, kind "fifo", never the shorter DMA pair credited with a
    FIFO that was off. Without a FIFO disable the DMA pair is the
    window."""
    guest_outage = lab_module("lab/guest/outage.py")
    both = [(1.000, "rxd"), (1.001, "dms"), (1.004, "dme"), (1.005, "rxe")]
    ms, kind = guest_outage.window(both, 0, 2)
    assert kind == "fifo" and abs(ms - 5.0) < 1e-6, (ms, kind)
    ms, kind = guest_outage.window(both[1:3], 0, 2)
    assert kind == "dma" and abs(ms - 3.0) < 1e-6, (ms, kind)
    assert guest_outage.window([(1.0, "cmi"), (1.5, "cmo")], 0, 2)[1] == "mtu"
    # the MAC's maximum frame size update inside a longer ndo_change_mtu
    ms, kind = guest_outage.window([(1.0, "cmi"), (1.2, "msi"),
                                    (1.3, "mso"), (1.5, "cmo")], 0, 2)
    assert kind == "mac" and abs(ms - 100.0) < 1e-6, (ms, kind)
    assert guest_outage.window([], 0, 2) == (None, None)
    # a switch that calls neither pair (its stop and start inlined): the
    # whole lan743x_rx_switch(), before the MAC's update that follows it
    ms, kind = guest_outage.window([(1.0, "swi"), (1.002, "swo"),
                                    (1.01, "swi"), (1.013, "swo"),
                                    (1.02, "msi"), (1.021, "mso")], 0, 2)
    assert kind == "switch" and abs(ms - 13.0) < 1e-6, (ms, kind)


def test_ring_plan_refused_by_one_module():
    """A module without the plan's operation (7.3's lan743x has no
    ethtool -G) is a row of refusals and n/a, not a failed run; the
    command's row names ethtool -G."""
    refused = {"lost": [], "gap_ms": [], "cmd_ms": [], "window_ms": [],
               "lost_total": 0, "sent": 1000, "device_drops": {},
               "plan": "rx128to512", "refused": 10, "changes": 0}
    measured = dict(run(1, 1000, {}, None), plan="rx128to512", refused=0)
    res = {"outage": {"upstream": [refused], "series": [measured]},
           "order": {}}
    text = table(res, ["upstream", "series"])
    assert "refused by the driver: upstream 10, series 0" in text
    t = rows(text)
    assert t["ethtool -G, ms"][0] == "n/a"
    assert t["ethtool -G, ms"][1].startswith("350")
    assert t["lost packets"][0] == "n/a"
    assert "ip link set mtu, ms" not in t
