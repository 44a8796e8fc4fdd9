"""The board kit's selftests on the ARMv7 guest as the board: the kit as a
board owner runs it by default (lab/board/board.py without --tests: the
series' drivers/net/hw tests and the generic driver tests of
board.GENERIC_TESTS), over real ssh, the board logging in to the link
partner outside it (REMOTE_TYPE=ssh), each module loaded in turn. Checked
as on the x86_64 guest (tests/test_board_vm_selftests.py), and: every
generic test upstream's module passes, the series' module passes too or
skips with a reason.

The ARMv7 guest under TCG takes most of an hour for this: collected only
with LAN743X_ARM=1 and LAN743X_KIT_SELFTESTS=1 (tests/conftest.py).
"""
import sys

from conftest import ROOT
from test_board_vm import run_kit
from test_board_vm_selftests import check_kit_selftests, skip_reasons

sys.path.insert(0, str(ROOT / "lab" / "board"))
from board import GENERIC_TESTS  # pylint: disable=wrong-import-position


def test_kit_selftests_on_the_armv7_guest(tmp_path):
    """The kit's default selftests on the ARMv7 guest, both modules."""
    table, meta = run_kit(tmp_path, "--arch", "armv7", "--selftests",
                          timeout=3 * 3600)
    check_kit_selftests(tmp_path, table, meta)
    up, ours = meta["selftests"]["upstream"], meta["selftests"]["series"]
    generic = [t for t in GENERIC_TESTS if t in up]
    assert generic, f"the kit ran none of {GENERIC_TESTS}: {up}"
    ktap = (tmp_path / "vmb" / "kit" / "selftests-series.ktap").read_text(
        encoding="utf-8")
    for t in generic:
        if up[t] != "pass":
            continue
        assert ours.get(t) in ("pass", "skip"), (t, up[t], ours.get(t))
        if ours[t] == "skip":
            assert skip_reasons(ktap, t), f"{t} skipped with no reason"
