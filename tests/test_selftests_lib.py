"""Host-side checks of the selftest pieces that no VM run reaches on purpose
(seconds, no VM):

- napi_polls() of drivers/net/hw/napi_contract.py, as the net-next
  stack's patch and the 6.12 backport's create it: each poll of NETIF is paired with the frames
  delivered on its CPU since the previous poll there, so a poll that
  returns its buffers as work (the upstream driver with jumbo frames) is
  told from one that returns its frames, and frames of other devices or
  CPUs are not counted;
- lab/selftests/selftests.py: the results of a remote mode that does not run are
  not asked for (the ssh.* lines of net-next-2.txt in a netns-only run), and
  run_kselftest.sh's output of the ssh mode is named ssh.<test>; an
  expected result may be two alternatives (skip|fail); the make install
  targets are those the stack's tree has (no drivers/net/lan743x on
  net-next);
- lab/selftests/selftests.py's run_guest() and report(), which both
  arches share: a guest crash (exit 86) boots once more, a second one is the
  result; the report gives each result's reason and the counts; an
  expected file that does not exist is a clear error.
"""
import importlib.util
import re
import subprocess
import sys
import types

import pytest
from conftest import LAB, ROOT

sys.path.insert(0, str(LAB / "selftests"))
import selftests

NAPI = "tools/testing/selftests/drivers/net/hw/napi_contract.py"


def new_file_from_patch(patch, path):
    """The content of a file a patch creates (new file, one hunk)."""
    text = patch.read_text()
    m = re.search(rf"^diff --git a/{re.escape(path)} .*?\n@@ [^\n]*\n",
                  text, re.MULTILINE | re.DOTALL)
    assert m, f"{path} not created by {patch.name}"
    out = []
    for line in text[m.end():].splitlines():
        if not line.startswith("+"):
            break
        out.append(line[1:])
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module", name="napi_contract",
                params=["net-next-2", "6.12-2"])
def fixture_napi_contract(tmp_path_factory, request):
    """hw/napi_contract.py of the net-next patches and of the 6.12
    backport's, lib.py stubbed."""
    # the patch that adds it (its number moves with the series)
    patch = next(p for p in sorted((ROOT / "patches" / request.param).glob(
        "0*.patch")) if f"diff --git a/{NAPI} " in p.read_text())
    src = tmp_path_factory.mktemp("napi") / "napi_contract.py"
    src.write_text(new_file_from_patch(patch, NAPI))
    lib = types.ModuleType("lib")
    lib_py = types.ModuleType("lib.py")
    lib_py.KsftSkipEx = type("KsftSkipEx", (Exception,), {})
    for n in ("NetDrvEpEnv", "cmd", "defer", "ip", "ksft_eq", "ksft_exit",
              "ksft_ge", "ksft_pr", "ksft_run"):
        setattr(lib_py, n, None)
    lib_py.ksft_disruptive = lambda f: f
    saved = {k: sys.modules.get(k) for k in ("lib", "lib.py")}
    sys.modules["lib"] = lib
    sys.modules["lib.py"] = lib_py
    try:
        spec = importlib.util.spec_from_file_location("napi_contract", src)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return mod


def trace_line(cpu, event, rest):
    """A line of a tracefs trace."""
    return (f"          <idle>-0       [{cpu:03d}] ..s1.  1.000000: "
            f"{event}: {rest}")


def napi_poll(cpu, dev, work, budget=64):
    """napi:napi_poll's line."""
    return trace_line(cpu, "napi_poll", "napi poll on napi struct "
                      f"00000000deadbeef for device {dev} work {work} "
                      f"budget {budget}")


def gro(cpu, dev):
    """net:napi_gro_receive_entry's line (abridged)."""
    return trace_line(cpu, "napi_gro_receive_entry",
                      f"dev={dev} napi_id=0x2001 queue_mapping=1 len=8980")


def test_napi_polls_pairs_frames_with_their_poll(napi_contract):
    """Frames delivered before a poll's event on its CPU are its frames;
    other CPUs' and devices' frames are not; a poll counting buffers
    shows more work than frames."""
    text = "\n".join([
        "# tracer: nop",
        gro(0, "eth0"), gro(0, "eth0"), gro(1, "eth0"), gro(0, "eth1"),
        # 2 jumbo frames of 3 buffers each, returned as 6: the bug
        napi_poll(0, "eth0", 6),
        napi_poll(1, "eth0", 1),
        # a TX poll, nothing delivered
        napi_poll(0, "eth0", 0),
        gro(0, "eth00"),
        napi_poll(0, "eth1", 1),
    ])
    polls = napi_contract.napi_polls(text, "eth0")
    assert polls == [(0, 6, 64, 2), (1, 1, 64, 1), (0, 0, 64, 0)]
    bad = [p for p in polls if p[1] < p[2] and p[1] != p[3]]
    assert bad == [(0, 6, 64, 2)]


def test_napi_contract_sees_every_delivery(napi_contract):
    """Every tracepoint a driver's frames may reach the stack through is
    traced (a driver that uses netif_receive_skb_list() is judged), and
    the stranded-frame count is NETIF's own (a packet socket bound to it),
    not the netns-wide IcmpInEchos that other traffic moves."""
    assert set(napi_contract.DELIVERY) >= {
        "net/napi_gro_receive_entry", "net/netif_receive_skb_entry",
        "net/netif_receive_skb_list_entry", "net/napi_gro_frags_entry"}
    assert hasattr(napi_contract, "EchoCounter")
    assert not hasattr(napi_contract, "_in_echos")


def test_targets_are_those_of_the_tree(tmp_path):
    """net-next's tree has no drivers/net/lan743x: make install builds
    drivers/net/hw only; 6.12's has both."""
    (tmp_path / "drivers/net/hw").mkdir(parents=True)
    (tmp_path / "drivers/net/hw/Makefile").write_text("")
    assert selftests.targets(tmp_path) == ["drivers/net/hw"]
    (tmp_path / "drivers/net/lan743x").mkdir(parents=True)
    (tmp_path / "drivers/net/lan743x/Makefile").write_text("")
    assert selftests.targets(tmp_path) == ["drivers/net/hw",
                                           "drivers/net/lan743x"]


def test_expected_of_modes_not_run_are_dropped(tmp_path):
    """Expected results of a mode (netns, ssh) not run are left out."""
    mk = tmp_path / "drivers/net/lan743x/Makefile"
    mk.parent.mkdir(parents=True)
    mk.write_text("TEST_PROGS = \\\n\tlink.py \\\n\tnapi.py \\\n\t#\n")
    exp = {"series": {"lab.load": 1, "link.link_up": 1, "ssh.link.link_up": 1,
                      "generic.ping.test_default_v4": 1},
           "upstream": {"link.link_up": 1, "ssh.link.link_up": 1}}

    def kept(modes, ssh_mods):
        """The expected tests left for MODES, ssh for SSH_MODS only."""
        e = {m: dict(v) for m, v in exp.items()}
        selftests.expected_for_modes(e, ["series", "upstream"], tmp_path,
                                     modes, ssh_mods)
        return {m: sorted(v) for m, v in e.items()}

    both = kept(["netns", "ssh"], ["series"])
    assert "ssh.link.link_up" in both["series"]
    assert both["upstream"] == ["link.link_up"]
    assert "ssh.link.link_up" not in kept(["netns"], ["series"])["series"]
    ssh_only = kept(["ssh"], ["series"])
    assert ssh_only["series"] == ["generic.ping.test_default_v4", "lab.load",
                                  "ssh.link.link_up"]
    assert kept(["netns", "ssh"], [])["upstream"] == ["link.link_up",
                                                     "ssh.link.link_up"]


def test_ssh_mode_results_are_prefixed(tmp_path):
    """The ssh mode's KTAP results are named ssh.*."""
    d = tmp_path / "series"
    d.mkdir()
    (d / "ksft-ssh.ktap").write_text(
        "TAP version 13\n1..2\n"
        "# selftests: drivers/net/lan743x: link.py\n"
        "# TAP version 13\n# 1..1\n# ok 1 link.link_up\n"
        "ok 1 selftests: drivers/net/lan743x: link.py\n"
        "# selftests: drivers/net/lan743x: napi.py\n"
        "# Traceback (most recent call last):\n"
        "not ok 2 selftests: drivers/net/lan743x: napi.py # exit=1\n")
    r = selftests.parse_ktap(tmp_path, ["series"])["series"]
    assert r == {"ssh.link.link_up": "pass", "ssh.napi": "fail"}


def test_expected_alternatives(tmp_path):
    """An expected "skip|fail" accepts either, its pattern matched
    whichever came; anything else, or no result, is a mismatch; an
    unknown result is an error."""
    f = tmp_path / "x.txt"
    f.write_text("series a.b skip|fail  # host-dependent precheck  "
                 "match: Traffic seems low|SKIP no failures\n"
                 "series a.c pass\n")
    exp = selftests.load_expected(f)
    out = {"series": {"a.b": "# Traffic seems low: 10\nnot ok 1 a.b"}}
    assert not selftests.compare({"series": {"a.b": "fail", "a.c": "pass"}},
                                 exp, ["series"], out)
    out = {"series": {"a.b": "ok 1 a.b # SKIP no failures"}}
    assert not selftests.compare({"series": {"a.b": "skip", "a.c": "pass"}},
                                 exp, ["series"], out)
    # neither alternative, or a missing result, is a mismatch
    assert selftests.compare({"series": {"a.b": "pass"}}, exp,
                             ["series"], {}) == [
                                 "series a.b: pass, expected skip|fail",
                                 "series a.c: missing, expected pass"]
    f.write_text("series a.b skip|maybe  # x\n")
    with pytest.raises(SystemExit):
        selftests.load_expected(f)


def test_guest_crash_is_run_again_once(tmp_path, capsys):
    """run_guest(), shared by both arches of lab/selftests/selftests.py: a
    crash on the int3 of text patching under TCG (exit 86, its oops line)
    boots again once, with that boot's environment and log; a second
    crash is the run's result; any other crash is the result at once."""
    count = tmp_path / "boots"
    count.write_text("")
    script = tmp_path / "guest.sh"
    # exits 86 on the boots listed in $CRASH with $OOPS as vm.sh's crash
    # line, prints a KTAP line each time
    script.write_text(
        f'echo x >> "{count}"; n=$(wc -l < "{count}")\n'
        'echo "ok $n boot_$n"; echo "noise $LOGVAR"\n'
        'case " $CRASH " in *" $n "*) echo "vm.sh: | $OOPS"; exit 86;; esac\n'
        'exit 3\n')
    int3 = "[    3.1] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI"
    gpf = "[    3.1] Oops: general protection fault: 0000 [#1] SMP"
    oops = {"OOPS": int3}
    env = {"PATH": "/usr/bin:/bin", "CRASH": "1", **oops}
    mkdir = tmp_path / "m"
    mkdir.mkdir()
    (mkdir / "stale").write_text("")
    rc, boot = selftests.run_guest(
        ["bash", str(script)], env, tmp_path, ["m"], "the test guest",
        lambda b: f"log-{b}.txt", ("noise",),
        boot_env=lambda b: {"LOGVAR": f"boot{b}"})
    err = capsys.readouterr().err
    assert (rc, boot) == (3, 2), err
    assert not mkdir.exists(), "results of the crashed boot kept"
    assert (tmp_path / "log-1.txt").read_text() == \
        f"ok 1 boot_1\nnoise boot1\nvm.sh: | {int3}\n"
    assert (tmp_path / "log-2.txt").read_text() == "ok 2 boot_2\nnoise boot2\n"
    assert "repeating the run once" in err and "ok 2 boot_2" in err, err

    count.write_text("")
    env["CRASH"] = "1 2"
    rc, boot = selftests.run_guest(
        ["bash", str(script)], env, tmp_path, ["m"], "the test guest",
        lambda b: f"log-{b}.txt", ("noise",))
    assert (rc, boot) == (86, 2)
    assert count.read_text().count("x") == 2, "booted more than twice"

    # a general protection fault: the result, no second boot
    count.write_text("")
    env.update(CRASH="1", OOPS=gpf)
    capsys.readouterr()
    rc, boot = selftests.run_guest(
        ["bash", str(script)], env, tmp_path, ["m"], "the test guest",
        lambda b: f"log-{b}.txt", ("noise",))
    err = capsys.readouterr().err
    assert (rc, boot) == (86, 1), err
    assert count.read_text().count("x") == 1, "booted again after an oops"
    assert "general protection fault" in err and "not retried" in err, err


def test_report_counts_and_reasons(capsys):
    """report() counts each result and prints the reasons of failures
    expected."""
    results = {"series": {"a": "pass", "b": "fail", "c": "skip"}}
    expected = {"series": {"a": ("pass", ""), "b": selftests.Expected(
        "fail", "no XDP", re.compile("no XDP support")), "c": ("pass", "")}}
    bad = selftests.compare(results, expected, ["series"],
                            {"series": {"b": "# no XDP support\nnot ok 2 b"}})
    n = selftests.report(results, expected, ["series"], bad,
                         tag=lambda m, t: " [x]" if t == "b" else "")
    out = capsys.readouterr().out
    assert n == {"pass": 1, "fail": 1, "skip": 1, "xfail": 0}
    assert "  series    fail  b [x]  (no XDP)" in out, out
    assert len(bad) == 1 and "MISMATCH" in out and " c" in out, out


def test_missing_expected_file_is_a_clear_error(tmp_path):
    """selftests.py with an expected file that does not exist: a one-line
    error naming it, exit 2, nothing built or booted (make ksft instead
    takes every result as new: a stack's first whole run)."""
    missing = tmp_path / "none.txt"
    p = subprocess.run([sys.executable, str(LAB / "selftests" / "selftests.py"),
                        "--expected", str(missing)], capture_output=True,
                       text=True, timeout=60, check=False, cwd=ROOT)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == f"selftests.py: error: no expected results {missing}"
