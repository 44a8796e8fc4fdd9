"""The board kit against the ARMv7 guest as the board (see
tests/test_board_vm.py), collected only with LAN743X_ARM=1 as
tests/test_vm_arm.py (the ARMv7 guest takes hours cold). The armv7-virt
kernel has hist triggers and kprobe events, and /proc/config.gz tells the
kit it is not Thumb-2: the kit's tracing rows must be in the table. The
run before that kernel had them (measurements/board-armv7guest-20261202)
lists them as unavailable, which fails this test."""
from test_board_vm import NO_CACHE, NO_HIST, TRACED, row, run_kit


def test_kit_on_the_armv7_guest(tmp_path):
    """The kit end to end on the ARMv7 guest, with its tracing rows."""
    table, meta = run_kit(tmp_path, "--arch", "armv7")
    for metric in TRACED:
        r = row(table, "tcp-rx-1500", metric)
        assert r and "n/a" not in r, f"tcp-rx-1500 | {metric}: {r}\n{table}"
    miss = meta.get("unavailable", {})
    assert NO_HIST not in miss and NO_CACHE not in miss, miss
