"""The board kit (lab/board/board.py, `make board`) run as a board owner
runs it, against a lab guest as the board (lab/board/vm_board.py): reached
only over ssh on a management port, the link partner outside the guest (a
network namespace of the host, whose UDP sender shares the host's cores
with the emulator: its rate follows the host's load, so the kit runs
with --peer-min-mbit 0 and the test checks that a rate below the kit's
threshold is a warning in the table and one at or above is not; the
refusal itself is tests/test_board.py's), both modules loaded in turn, a
TCP receive cell and the live MTU change measured from the partner, the board's module, MTU
and addresses put back at the end. Short (1 repetition of 2 s): the
path, not figures. Needs root (taps, a network namespace, sshd).

* test_kit_on_the_x86_guest (make test): the x86_64 guest kernel the
  suite builds, which has no hist triggers: the kit must give the rows it
  can and list the tracing rows as ones this kernel cannot give, with the
  reason, not fail.
* test_stale_runs_cleared (make test): what a killed run left on the
  host is removed; a live holder of the management addresses refused.
* tests/test_board_vm_selftests.py: the kit's selftests on the same
  guest (collected with LAN743X_KIT_SELFTESTS=1 only).
* tests/test_board_vm_arm.py: the same on the ARMv7 guest, with its
  tracing rows (collected with LAN743X_ARM=1 only).
"""
import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, vm_inputs

sys.path.insert(0, str(ROOT / "lab" / "board"))
from board import PEER_MBIT  # pylint: disable=wrong-import-position

#: rows from the board's tracing (hist triggers, kprobes), by the kit's names
TRACED = ("dma map calls/pkt", "sync-dev calls/pkt", "NAPI polls/pkt",
          "arch_sync_dma_for_device calls/pkt",
          "arch_sync_dma_for_cpu calls/pkt",
          "pages held per RX queue after the run (freed at down)")
#: the kit's names for what a kernel without hist triggers and kprobes
#: cannot give (meta.json "unavailable")
NO_HIST = "NAPI, DMA, page allocation and page_pool event rows"
NO_CACHE = "arch_sync_dma_for_* calls/pkt (cache maintenance)"


def row(table, cell, metric):
    """The (upstream, series) cells of TABLE's row CELL | METRIC, or None."""
    m = re.search(rf"^\| {re.escape(cell)} \| {re.escape(metric)} \| "
                  r"([^|]+) \| ([^|]+) \|", table, re.MULTILINE)
    return (m.group(1).strip(), m.group(2).strip()) if m else None


def run_kit(tmp_path, *args, timeout=3600):
    """vm_board.py ARGS, short; (table.md, meta.json) after checking the
    run ended well: both modules measured, the partner's rate measured and
    warned of in the table exactly when below line rate, the board put
    back. TIMEOUT: seconds the whole run may take."""
    out = tmp_path / "vmb"
    p = subprocess.run(["python3", "lab/board/vm_board.py", *args,
                        "--reps", "1", "--secs", "2", "--cells",
                        "tcp-rx-1500", "--changes", "mtu-1500to9000",
                        "--peer-min-mbit", "0", "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True,
                       timeout=timeout, check=False)
    log = p.stdout + p.stderr
    if (out / "kit.err").exists():
        log += (out / "kit.err").read_text(encoding="utf-8", errors="replace")
    assert p.returncode == 0, log[-4000:]
    table = (out / "kit" / "table.md").read_text(encoding="utf-8")
    meta = json.loads((out / "kit" / "meta.json").read_text(encoding="utf-8"))
    assert meta["restore_failed"] == [], meta
    slow = meta["partner"]["udp_sent_mbit"] < PEER_MBIT
    warned = [w for w in meta["warnings"]
              if w.startswith("the partner cannot drive the link")]
    assert bool(warned) == slow, (meta["partner"], meta["warnings"])
    assert ("WARNING: the partner cannot drive the link" in table) == slow
    for cell, metric in (("tcp-rx-1500", "Mbit/s"),
                         ("mtu-1500to9000", "lost packets")):
        r = row(table, cell, metric)
        assert r and "n/a" not in r, f"{cell} | {metric}: {r}\n{table}"
    return table, meta


def test_kit_on_the_x86_guest(tmp_path):
    """The kit end to end on the suite's x86_64 guest kernel: the rows it
    can give, the tracing rows listed as unavailable with their reason."""
    vm_inputs()
    table, meta = run_kit(tmp_path, "--arch", "x86_64", "--variant", "guest")
    miss = meta.get("unavailable", {})
    assert "CONFIG_HIST_TRIGGERS" in miss.get(NO_HIST, ""), miss
    assert NO_CACHE in miss, miss
    for metric in TRACED:
        r = row(table, "tcp-rx-1500", metric)
        assert r is None or "n/a" in r, f"{metric}: {r}\n{table}"


def test_stale_runs_cleared():
    """What a killed run left on the host (its namespace, with the
    partner's management veth, named by a pid that no longer runs) is
    removed before a run sets up its own: an address of the old veth
    would take the new run's route to the partner. An interface of
    another kind holding a management address is refused, not touched."""
    import vm_board  # pylint: disable=import-outside-toplevel
    dead = 4194301
    while Path(f"/proc/{dead}").exists():
        dead -= 1
    ns, veth = f"l7kit{dead}", f"l7kv{dead}"

    def sh(*cmd):
        subprocess.run(cmd, check=True, capture_output=True)

    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "link", "add", veth, "type", "veth", "peer", "name",
           veth + "p", "netns", ns)
        sh("ip", "addr", "add", f"{vm_board.PEER_MGMT[0]}/24", "dev", veth)
        vm_board.clear_stale()
        left = subprocess.run(["ip", "-br", "link"], capture_output=True,
                              text=True, check=True).stdout
        assert veth not in left, left
        assert ns not in subprocess.run(["ip", "netns", "list"],
                                        capture_output=True, text=True,
                                        check=True).stdout
        sh("ip", "link", "add", "l7ktest0", "type", "veth", "peer", "name",
           "l7ktest1")
        sh("ip", "addr", "add", f"{vm_board.BOARD_MGMT[0]}/24", "dev",
           "l7ktest0")
        try:
            vm_board.clear_stale()
            raise AssertionError("a live holder of 198.18.7.1 was accepted")
        except SystemExit as e:
            assert "l7ktest0 holds 198.18.7.1" in str(e), e
        assert "l7ktest0" in subprocess.run(
            ["ip", "-br", "link"], capture_output=True, text=True,
            check=True).stdout
    finally:
        for c in (["ip", "link", "del", "l7ktest0"], ["ip", "link", "del", veth],
                  ["ip", "netns", "del", ns]):
            subprocess.run(c, capture_output=True, check=False)


def test_second_run_waits_for_the_management_networks(tmp_path, capfd):
    """A run that finds another holding the management networks waits for
    it, saying so, instead of failing on its addresses (as make test's kit
    run did beside a kit run started by hand)."""
    import fcntl  # pylint: disable=import-outside-toplevel
    import threading  # pylint: disable=import-outside-toplevel

    import vm_board  # pylint: disable=import-outside-toplevel
    path = tmp_path / "mgmt.lock"
    with open(path, "w", encoding="utf-8") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        got = []
        t = threading.Thread(target=lambda: got.append(
            vm_board.hold_mgmt_lock(path)))
        t.start()
        t.join(2)
        assert t.is_alive() and not got
        assert "waiting for another vm_board.py run" in capfd.readouterr().err
    # the other run ended: this one takes the lock and goes on
    t.join(10)
    assert not t.is_alive() and got
    assert "the other run ended" in capfd.readouterr().err
    got[0].close()
    # with nobody holding it: taken at once, nothing said
    vm_board.hold_mgmt_lock(path).close()
    assert "waiting" not in capfd.readouterr().err
