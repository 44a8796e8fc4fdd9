"""The board kit's selftests (lab/board/board.py without --no-selftests)
run as a board owner runs them, against the suite's x86_64 guest as the
board (lab/board/vm_board.py --selftests): the kselftest install of base
+ the stack's patches copied to the board, the board logging in to the
link partner (a network namespace of the host) over ssh with the run's
key (REMOTE_TYPE=ssh), each module loaded in turn, a KTAP file per
module. The series' drivers/net/hw tests only (--tests; the generic
driver tests are make selftests' business): with the series' module,
each passes, or skips with the reason stated in its output.

Minutes per module under TCG: collected with LAN743X_KIT_SELFTESTS=1
only (tests/conftest.py). Needs root (taps, a network namespace, sshd).
"""
import re
import sys

from conftest import ROOT, vm_inputs
from test_board_vm import run_kit

sys.path.insert(0, str(ROOT / "lab" / "board"))
from board import SERIES_TESTS  # pylint: disable=wrong-import-position


def skip_reasons(ktap, test):
    """The reasons TEST (COLLECTION:FILE) gave for its skips in the KTAP
    text of run_kselftest.sh: its cases' '# SKIP reason' lines, and its
    own line's."""
    coll, name = test.split(":")
    out, mine = [], False
    for line in ktap.splitlines():
        if re.match(r"# selftests: \S+: \S+$", line):
            mine = line == f"# selftests: {coll}: {name}"
        prog = re.match(rf"(?:not )?ok \d+ selftests: {re.escape(coll)}: "
                        rf"{re.escape(name)}\b.*# SKIP\s*(.*)$", line)
        case = re.match(r"#\s+(?:not )?ok \d+ \S+.*# SKIP\s*(.*)$", line)
        if prog or (mine and case):
            out.append((prog or case).group(1).strip())
    return [r for r in out if r]


def test_kit_selftests_on_the_x86_guest(tmp_path):
    """A KTAP file per module, with the tests' own output in it; the
    series' own tests with the series' module passed, or skipped with a
    reason; upstream's module fails napi_contract.py's budget case."""
    vm_inputs()
    table, meta = run_kit(tmp_path, "--arch", "x86_64", "--variant", "guest",
                          "--selftests", "--tests", ",".join(SERIES_TESTS))
    check_kit_selftests(tmp_path, table, meta)


def check_kit_selftests(tmp_path, table, meta):
    """What a kit run with --selftests must show (run_kit()'s TABLE and
    META, its output under TMP_PATH): see test_kit_selftests_on_the_x86_guest."""
    kit = tmp_path / "vmb" / "kit"
    for m in ("upstream", "series"):
        ktap = (kit / f"selftests-{m}.ktap").read_text(encoding="utf-8")
        assert meta["selftests"].get(m), meta.get("selftests")
        # run_kselftest.sh's per-test lines, not only its summary
        assert re.search(r"^#\s+(?:not )?ok \d+ ", ktap, re.MULTILINE), \
            f"{m}: no test output in the KTAP file\n{ktap[-2000:]}"
    ktap = (kit / "selftests-series.ktap").read_text(encoding="utf-8")
    got = meta["selftests"]["series"]
    # those the install of the VM tests' stack has (coalesce.py comes with
    # the moderation patches, a later stack)
    install = tmp_path / "vmb" / "selftests" / "install"
    have = [t for t in SERIES_TESTS
            if (install / t.replace(":", "/", 1)).exists()]
    assert have, f"the install has none of {SERIES_TESTS}"
    ours = [t for t in SERIES_TESTS if t in got]
    assert ours == have, f"the kit ran {ours} of {have}: {got}"
    for t in ours:
        assert got[t] in ("pass", "skip"), f"{t}: {got[t]}\n{ktap[-4000:]}"
        if got[t] == "skip":
            assert skip_reasons(ktap, t), f"{t} skipped with no reason"
    assert "## selftests" in table, table
    # the A/B the kit shows a board owner: upstream fails the NAPI budget
    # contract the series fixes, for that reason only
    up = (kit / "selftests-upstream.ktap").read_text(encoding="utf-8")
    if "drivers/net/hw:napi_contract.py" in have:
        assert meta["selftests"]["upstream"].get(
            "drivers/net/hw:napi_contract.py") == "fail", meta["selftests"]
        assert re.findall(r"^#\s+not ok \d+ (napi_contract\.\S+)", up,
                          re.MULTILINE) == ["napi_contract.work_is_frames"], \
            up[-3000:]
