"""The bench's figures against a known truth: a fixed burst of 10 000
64-byte UDP datagrams into the DUT, through the upstream and the series
module. What the guest measures (netdev counters, /proc/interrupts, NAPI
tracepoints) must agree with what the emulator saw (its own counters)."""
import json

import pytest
from conftest import run, stack_env, vm_inputs

BURST = 10000


@pytest.fixture(scope="module", name="records")
def fixture_records(tmp_path_factory, stack):
    """The bench's records of a udp-burst cell, both modules, on STACK."""
    out = tmp_path_factory.mktemp("bench")
    # QEMU and the stack's guest kernel first, without the bench's time
    # limit: on a cold cache they take longer than the bench itself, and a
    # build that fails fails here with its reason
    vm_inputs(stack)
    p = run(["python3", "lab/bench/bench.py", "--variant", "guest", "--reps", "1",
             "--cells", "udp-burst", "--swiotlb", "off", "--out", str(out)],
            timeout=1500, env=stack_env(stack))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    recs = [json.loads(x) for x in
            (out / "records.jsonl").read_text().splitlines()]
    assert {r["module"] for r in recs} == {"upstream", "series"}
    return recs


@pytest.mark.parametrize("module", ["upstream", "series"])
def test_burst_counts_agree(records, module):
    """Frames, interrupts and NAPI work agree with the model's counters."""
    r = next(x for x in records
             if x["module"] == module and x["cell"] == "udp-burst")
    emu = r.get("emulator")
    assert emu and "error" not in emu, f"no emulator counters: {emu}"
    assert r.get("udp_packets") == BURST, r.get("error")
    # every datagram the peer sent reached the DUT's wire side
    assert emu["rx_frames"] + emu["rx_drop_no_desc"] >= BURST
    # the driver saw exactly the frames the model delivered (same window)
    assert abs(r["rx_frames"] - emu["rx_frames"]) <= 3, (r["rx_frames"],
                                                          emu["rx_frames"])
    # interrupts: one handler run per message the model raised
    emu_irqs = sum(emu["irq_per_vector"])
    assert abs(r["irqs"] - emu_irqs) <= max(3, emu_irqs // 50), (
        r["irqs"], emu_irqs)
    # NAPI: work reported by the polls covers the delivered frames
    t = r["trace"]
    assert t["napi_polls"] > 0
    assert t["napi_work"] >= BURST * 0.99
    # every RX descriptor written back was consumed from a driver tail
    assert sum(emu["rx_desc_written"]) >= r["rx_frames"]
