"""lab/bench/lineout.py and lab/bench/partner.py without a VM: the
figures they take from the model's counters, the stream's datagram size,
their tables, and the errors they give before anything is built or
booted."""
import subprocess
import sys

import pytest
from conftest import ROOT

sys.path[:0] = [str(ROOT / "lab" / "bench"), str(ROOT / "lab" / "guest")]
import lineout
import partner


def counters(**kw):
    """A counters dict as the model's QMP reports it (emulator/README.md)."""
    c = {"vclock_ns": 0, "rx_wire_bytes": 0, "rx_frames": 0,
         "rx_drop_disabled": 0, "rx_no_desc_stalls": 0,
         "rx_fifo_overflow": [0, 0, 0, 0], "rx_fifo_flushed": 0,
         "rx_drop_filter": 0, "desc_errors": 0, "wb_freed_ring_writes": 0}
    c.update(kw)
    return c


def test_figures_are_the_interval_s_differences():
    """The figures of an interval are the counters' growth over it; the
    address filter's drops are not the device's losses."""
    c0 = counters(vclock_ns=10**9, rx_wire_bytes=1000, rx_frames=5,
                  rx_drop_disabled=2, rx_fifo_overflow=[1, 0, 0, 0],
                  rx_drop_filter=7)
    c1 = counters(vclock_ns=2 * 10**9, rx_wire_bytes=1000 + 125_000_000,
                  rx_frames=105, rx_drop_disabled=12,
                  rx_fifo_overflow=[4, 0, 2, 0], rx_drop_filter=9,
                  rx_no_desc_stalls=3)
    f = lineout.figures(c0, c1)
    assert f["drop_disabled"] == 10
    assert f["fifo_overflow"] == 5
    # every drop but the address filter's: 10 with RX off + 5 overflows
    assert f["device_drops"] == 15
    assert f["drops_per_ms"] == pytest.approx(15 / 1000)
    assert f["rx_frames"] == 100
    assert f["no_desc"] == 3
    assert f["model_ms"] == 1000
    assert f["wire_gbit_s"] == pytest.approx(1.0)
    assert f["faults"] == {"desc_errors": 0, "wb_freed_ring_writes": 0}


def test_fifo_off_is_the_longest_channel_s_window():
    """The FIFO-off figure is the channel whose FIFO was off longest in
    the interval (each channel switches once per change), in us; a model
    without the counter gives None, which the table shows as n/a."""
    c0 = counters(rx_fifo_off_ns=[1000, 5000, 0, 0])
    c1 = counters(rx_fifo_off_ns=[41_000, 7000, 30_000, 0])
    assert lineout.figures(c0, c1)["fifo_off_us"] == 40
    assert lineout.figures(counters(), counters())["fifo_off_us"] is None
    assert partner.fmt([None, None]) == "n/a"


def test_the_stream_fits_the_plan_s_smallest_mtu():
    """The stream's datagrams fit the smallest MTU a plan sets."""
    assert lineout.plan_mtus("1500to1400") == [1500, 1400]
    assert min(lineout.plan_mtus("9000to8000")) - lineout.UDP_IP == 7972
    # ring plans run at MTU 1500
    assert lineout.plan_mtus("rx128to512") == [1500]


def test_table_marks_a_refused_plan_and_gives_ranges():
    """A module that refused a plan's setup shows 'refused', the other
    its median [min, max]."""
    recs = [{"module": "upstream", "plan": "rx128to512", "rep": 1,
             "icount_shift": 2, "rate": "1G", "kind": "refused"}]
    for rep, n in enumerate((0, 3, 8), 1):
        for kind, v in (("change", n), ("noop", 0)):
            recs.append({"module": "series", "plan": "rx128to512",
                         "rep": rep, "icount_shift": 2, "rate": "1G",
                         "kind": kind,
                         **dict.fromkeys(k for k, _ in lineout.ROWS), "drop_disabled": v})
    t = lineout.table(recs, ["upstream", "series"], ["rx128to512"], [2],
                      ["1G"])
    row = next(ln for ln in t.splitlines() if "the change" in ln and
           "receiver or FIFO off" in ln)
    assert row.endswith("| refused | 3 [0, 8] |"), row
    row = next(ln for ln in t.splitlines() if "no change" in ln and
           "receiver or FIFO off" in ln)
    assert row.endswith("| refused | 0 |"), row


@pytest.mark.parametrize("args,msg", [
    (["--plans", "1500-9000"], "unknown plans"),
    (["--reps", "0"], "--reps must be at least 1"),
    (["--icount", "2,x"], "shifts are integers"),
    (["--rates", "1G,fast"], "--rates: 1 to 4 rates"),
    (["--model", "rx-fifo-kib"], "KEY=VALUE")])
def test_bad_arguments_are_refused_before_building(args, msg):
    """Bad arguments get a clear error (exit 2) before any build."""
    p = subprocess.run([sys.executable, "lab/bench/lineout.py", *args],
                       cwd=ROOT, capture_output=True, text=True, timeout=60,
                       check=False)
    assert p.returncode == 2, p.stderr
    assert msg in p.stderr


def test_excess_is_beyond_the_no_change_rate():
    """The excess of a change is its drops less the same repetition's
    no-change rate times its length."""
    base = {"module": "series", "plan": "rx128to512", "rate": "1G",
            "icount_shift": 2}
    recs = [dict(base, rep=1, kind="change", device_drops=130, model_ms=2.0),
            dict(base, rep=1, kind="noop", device_drops=50, model_ms=1.0,
                 drops_per_ms=50.0),
            dict(base, rep=2, kind="change", device_drops=10, model_ms=1.0),
            dict(base, rep=2, kind="noop", device_drops=0, model_ms=1.0,
                 drops_per_ms=0.0)]
    lineout.add_excess(recs)
    assert [r["excess"] for r in recs] == [30.0, None, 10.0, None]


def test_partner_table_leaves_out_failed_runs_and_counts_them():
    """A run whose iperf3 failed (no traffic: a 0 on the wire meter) is not
    in the medians; a row says how many failed."""
    recs = [{"module": "series", "cell": "udp-1g", "icount_shift": 1,
             "wire_gbit_s": w, "partner_core_idle": 0.8,
             "iperf3_mbit_s": 1.0, "error": e}
            for w, e in ((0.99, None), (1.0, None), (0.0, "busy"))]
    t = partner.table(recs, ["series"], ["udp-1g"], [1])
    assert "| udp-1g | icount shift 1 | rate on the model's wire meter, " \
           "Gbit/s | 0.995 [0.99, 1] |" in t
    assert "runs whose iperf3 failed (not in the rows above) | 1 of 3 |" in t


def test_partner_shifts():
    """--icount: empty is the host's clock; integers 0-10 only."""
    assert partner.parse_shifts("") == [None]
    assert partner.parse_shifts("0,2") == [0, 2]
    for bad in ("11", "-1", "a"):
        with pytest.raises(ValueError, match="shifts are integers"):
            partner.parse_shifts(bad)


def test_partner_settings_follow_the_module_name():
    """A module name's +rxusN, +dim, +ringN and +cbN become the guest's
    ethtool commands, as the bench's guest applies them."""
    assert not partner.settings("series")
    assert partner.settings("series+rxus50") == [
        "ethtool -C $D adaptive-rx off rx-usecs 50"]
    assert partner.settings("series+ring512+dim") == [
        "ethtool -G $D rx 512", "ethtool -C $D adaptive-rx on"]


def test_partner_interrupts_per_frame():
    """The interrupt and descriptor rows are per frame the model
    received."""
    recs = [{"module": "series", "cell": "tcp-1500", "icount_shift": 2,
             "wire_gbit_s": 0.5, "partner_core_idle": 0.99,
             "iperf3_mbit_s": 1.0, "error": None, "rx_frames": 1000,
             "irqs": 250, "no_desc": 10}]
    t = partner.table(recs, ["series"], ["tcp-1500"], [2])
    assert "| interrupts per frame received | 0.25 |" in t
    assert "per frame received | 0.01 |" in t
