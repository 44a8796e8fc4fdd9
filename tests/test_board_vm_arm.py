"""The board kit against the ARMv7 guest as the board (see
tests/test_board_vm.py), collected only with LAN743X_ARM=1 as
tests/test_vm_arm.py (the ARMv7 guest takes hours cold). The armv7-virt
kernel has hist triggers and kprobe events, and /proc/config.gz tells the
kit it is not Thumb-2: the kit's tracing rows must be in the table, and
the page_pool rows (ynl copied from the kernel's source, python3-yaml in
the guest); the only rows the kit may list as unavailable are upstream's
module's qstats. The run before that kernel had the tracing rows
(measurements/board-armv7guest-20261202) lists them as unavailable, which
fails this test."""
from test_board_vm import TRACED, row, run_kit


def test_kit_on_the_armv7_guest(tmp_path):
    """The kit end to end on the ARMv7 guest, with its tracing rows."""
    table, meta = run_kit(tmp_path, "--arch", "armv7")
    for metric in TRACED:
        r = row(table, "tcp-rx-1500", metric)
        assert r and "n/a" not in r, f"tcp-rx-1500 | {metric}: {r}\n{table}"
    # the pools' netlink statistics, with ynl from the kernel's source
    # (upstream's module has no page_pool: n/a there)
    r = row(table, "tcp-rx-1500",
            "page_pool pages per queue after the run (inflight)")
    assert r and "n/a" not in r[1], f"page_pool inflight: {r}\n{table}"
    # what is left unavailable is upstream's module's own: it reports no
    # per-queue statistics (netdev_stat_ops is the series')
    miss = meta.get("unavailable", {})
    assert all(k.endswith("with upstream") for k in miss), miss
