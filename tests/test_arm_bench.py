"""The bench's armv7 parsing (lab/bench/bench.py --arch armv7), no VM: console
lines of lab/guest/bench_guest.py --rpc console --echo-records, the
emulator counters merged into the records, the function tracer's
arch_sync_dma_for_device/_for_cpu lines counted per function and caller,
and lab/bench/report.py's per-packet figures of them."""
import json
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "lab" / "bench"))
sys.path.insert(0, str(ROOT / "lab" / "guest"))
import bench
import bench_guest
from report import caller_keys, metrics

PCI = "0000:00:02.0"
FUNCS = ("arch_sync_dma_for_device", "arch_sync_dma_for_cpu")


def fn_line(func, caller, cpu=1):
    """A function tracer line: FUNC called from CALLER on CPU."""
    return (f"          iperf3-245     [{cpu:03d}] ..s2.   123.456789: "
            f"{func} <-{caller}")


def ev_line(ev, rest):
    """A trace event line of event EV, its fields REST."""
    return f"          <idle>-0       [000] ..s1.   12.345678: {ev}: {rest}"


def parse(lines, funcs=FUNCS):
    """bench_guest.Tracer.parse() of LINES, tracing the functions FUNCS."""
    t = bench_guest.Tracer.__new__(bench_guest.Tracer)
    t.dut, t.pci, t.funcs = "eth1", PCI, tuple(funcs)
    return t.parse("\n".join(lines) + "\n", 0)


def test_function_tracer_lines_counted_by_function_and_caller():
    """Function tracer lines count per function asked for and per caller;
    event lines count as before."""
    lines = (
        [fn_line("arch_sync_dma_for_device", "__dma_sync_single_for_device")] * 5
        + [fn_line("arch_sync_dma_for_device", "dma_direct_map_phys", 0)] * 2
        + [fn_line("arch_sync_dma_for_cpu", "__dma_sync_single_for_cpu")] * 4
        # a traced function not asked for, and an event line between
        + [fn_line("dma_direct_map_phys", "dma_map_phys")]
        + [ev_line("dma_sync_single_for_device",
                   f"{PCI} dir=FROM_DEVICE dma_addr=1000 size=1536")] * 3
        + [ev_line("page_pool_state_release",
                   "page_pool=00000000abcd netmem=0000000012 pfn=0x1 "
                   "release=7")] * 2)
    out = parse(lines)
    assert out["fn_arch_sync_dma_for_device_calls"] == 7
    assert out["fn_arch_sync_dma_for_cpu_calls"] == 4
    assert out["fn_callers"] == {
        "arch_sync_dma_for_cpu<-__dma_sync_single_for_cpu": 4,
        "arch_sync_dma_for_device<-__dma_sync_single_for_device": 5,
        "arch_sync_dma_for_device<-dma_direct_map_phys": 2}
    assert "fn_dma_direct_map_phys_calls" not in out
    # the event lines still count as before
    assert out["dma_sync_single_for_device_from_device_calls"] == 3
    assert out["dma_sync_single_for_device_from_device_bytes"] == 3 * 1536
    assert out["page_pool_release"] == 2


def test_functions_read_zero_when_asked_for_and_absent_when_not():
    """A function asked for and not traced is 0; one not asked for is
    absent."""
    out = parse([ev_line("napi_poll", "napi poll on napi struct 1 for "
                         "device eth1 work 3 budget 64")])
    assert out["fn_arch_sync_dma_for_device_calls"] == 0
    assert out["fn_callers"] == {}
    assert out["napi_polls"] == 1
    out = parse([fn_line("arch_sync_dma_for_cpu", "x")], funcs=())
    assert not any(k.startswith("fn_") for k in out)


def test_console_lines():
    """The console's RPC and record lines, a cut record, other lines."""
    p = bench.parse_console_line
    assert p("LAN743X-RPC 12 reset=1\r\n") == ("rpc", 12, True)
    assert p("LAN743X-RPC 3 reset=0") == ("rpc", 3, False)
    assert p("LAN743X-RPC x reset=0") is None
    assert p("[   12.3] LAN743X-RPC 3 reset=0") is None
    rec = {"cell": "tcp-rx-1500", "packets": 10, "emulator": {"console_rpc": 2}}
    assert p("LAN743X-REC " + json.dumps(rec) + "\r\n") == ("rec", rec)
    # a record cut by a kernel message on the console
    kind, text = p('LAN743X-REC {"cell": "tcp-rx-1500", "pac[  99.1] oops')
    # a ("bad-rec", str): pylint mixes it up with the ("rpc", int, bool) case
    assert kind == "bad-rec" and text.startswith('{"cell"')  # pylint: disable=no-member
    assert p("[bench-guest 08:00:00] rep 1/5 upstream tcp-rx-1500") is None


def test_guest_side_and_host_side_agree(capsys, monkeypatch, tmp_path):
    """What bench_guest prints (ConsoleRpc, EchoFile) is what the host
    parses, and the host's counters replace the placeholder."""
    monkeypatch.setenv("LAN743X_RPC_MARGIN", "0")
    rpc = bench_guest.ConsoleRpc()
    emu0 = rpc.snapshot(reset=True)
    emu1 = rpc.snapshot()
    rec = {"cell": "tcp-rx-1500", "packets": 4, "emulator": emu1}
    with open(tmp_path / "r.jsonl", "w", encoding="utf-8") as f:
        bench_guest.EchoFile(f).write(json.dumps(rec) + "\n")
    assert json.loads((tmp_path / "r.jsonl").read_text(encoding="utf-8")) == rec
    parsed = [bench.parse_console_line(x)
              for x in capsys.readouterr().out.splitlines()]
    assert parsed[:2] == [("rpc", 1, True), ("rpc", 2, False)]
    assert emu0 == {"console_rpc": 1} and parsed[2] == ("rec", rec)
    snaps = {1: {"mmio": {}}, 2: {"mmio": {"RX_TAIL0": {"r": 0, "w": 3}}}}
    merged = bench.merge_console_rpc(parsed[2][1], snaps)
    assert merged["emulator"] == snaps[2]
    assert metrics(merged)["RX tail writes/pkt"] == 0.75
    lost = bench.merge_console_rpc(
        {"emulator": {"console_rpc": 9}}, snaps)
    assert "error" in lost["emulator"]


def record(callers, packets=1000):
    """A bench record whose function tracer counted CALLERS."""
    return {"cell": "tcp-rx-1500", "packets": packets,
            "trace": {"trace_overrun": 0,
                      "fn_arch_sync_dma_for_device_calls":
                          sum(v for k, v in callers.items()
                              if k.startswith("arch_sync_dma_for_device")),
                      "fn_callers": callers,
                      "dma_sync_single_for_device_from_device_calls": 1200,
                      "dma_sync_single_for_device_from_device_bytes":
                          1200 * 1536,
                      "page_alloc_orders_global": {"0": 10},
                      "page_pool_hold": 200, "page_pool_release": 190}}


def test_report_per_packet_and_callers_zero_filled():
    """Per-packet figures per caller; a caller only the other module has
    reads 0."""
    series = record({"arch_sync_dma_for_device<-__dma_sync_single_for_device":
                     1200})
    upstream = record({"arch_sync_dma_for_device<-dma_direct_map_phys": 1000})
    keys = caller_keys([series, upstream])
    m = metrics(series, keys)
    assert m["arch_sync_dma_for_device calls/pkt"] == 1.2
    assert m["arch_sync_dma_for_device<-__dma_sync_single_for_device "
             "calls/pkt"] == 1.2
    # a caller the other module's records have: 0 here, not unknown
    assert m["arch_sync_dma_for_device<-dma_direct_map_phys calls/pkt"] == 0
    assert m["sync-dev calls/pkt"] == 1.2
    assert m["sync-dev bytes/pkt"] == 1843.2
    assert m["page_pool released pages/pkt"] == 0.19
    mu = metrics(upstream, keys)
    assert mu["arch_sync_dma_for_device<-dma_direct_map_phys calls/pkt"] == 1
    assert mu["arch_sync_dma_for_device<-__dma_sync_single_for_device "
              "calls/pkt"] == 0
