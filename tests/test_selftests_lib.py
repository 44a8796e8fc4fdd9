"""Host-side checks of the selftest pieces that no VM run reaches on purpose
(seconds, no VM):

- the selftests' iperf3_result() (drivers/net/hw/lib/py/reconfig.py, as
  the net-next stack's hw selftests patch creates it; the lan743x tests
  import it from there): an iperf3 JSON without a result (the
  UDP flood of napi.irq_rearm had no "sum" with a broken module) is a
  failure with a message, no KeyError; a TCP and a UDP result are read;
- lab/selftests/selftests.py: the results of a remote mode that does not run are
  not asked for (the ssh.* lines of net-next-2.txt in a netns-only run), and
  run_kselftest.sh's output of the ssh mode is named ssh.<test>; an
  expected result may be two alternatives (skip|fail);
- lab/selftests/selftests.py's run_guest() and report(), which both
  arches share: a guest crash (exit 86) boots once more, a second one is the
  result; the report gives each result's reason and the counts.
"""
import importlib.util
import json
import re
import sys
import types

import pytest
from conftest import LAB, ROOT

sys.path.insert(0, str(LAB / "selftests"))
import selftests

LIB = "tools/testing/selftests/drivers/net/hw/lib/py/reconfig.py"


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


@pytest.fixture(scope="module", name="lan743x_lib")
def fixture_lan743x_lib(tmp_path_factory):
    """hw/lib/py/reconfig.py of the net-next patches, imports stubbed."""
    # the patch that adds the selftests (its number moves with the series)
    patch = next(p for p in sorted((ROOT / "patches/net-next-2").glob("0*.patch"))
                 if f"diff --git a/{LIB} " in p.read_text())
    src = tmp_path_factory.mktemp("lib") / "reconfig.py"
    src.write_text(new_file_from_patch(patch, LIB))
    printed = []
    stubs = {"net": None, "net.lib": None, "drivers": None,
             "drivers.net": None}
    net_py = types.ModuleType("net.lib.py")
    net_py.KsftSkipEx = type("KsftSkipEx", (Exception,), {})
    net_py.ksft_pr = lambda *a: printed.append(" ".join(map(str, a)))
    for n in ("cmd", "defer", "ethtool", "ip", "ksft_eq", "ksft_true",
              "rand_port", "wait_port_listen"):
        setattr(net_py, n, None)
    drv_py = types.ModuleType("drivers.net.lib.py")
    drv_py.NetDrvEpEnv = type("NetDrvEpEnv", (), {})
    saved = {k: sys.modules.get(k) for k in
             list(stubs) + ["net.lib.py", "drivers.net.lib.py"]}
    for k in stubs:
        sys.modules[k] = types.ModuleType(k)
    sys.modules["net.lib.py"] = net_py
    sys.modules["drivers.net.lib.py"] = drv_py
    try:
        spec = importlib.util.spec_from_file_location("lan743x_lib", src)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return mod, printed


def run_of(ret, out):
    """A finished command as the selftests' library returns it."""
    return types.SimpleNamespace(ret=ret, stdout=out, stderr="")


def test_iperf3_result_without_sum_is_a_failure_message(lan743x_lib):
    """iperf3 JSON without a sum, or no JSON: no figures, a message why."""
    mod, printed = lan743x_lib
    printed.clear()
    # what the UDP flood of irq_rearm printed with the broken module: an
    # "end" without "sum" (and an error from iperf3)
    j = {"start": {}, "intervals": [], "end": {"cpu_utilization_percent": {}},
         "error": "unable to read from stream socket"}
    assert mod.iperf3_result(run_of(0, json.dumps(j))) == (None, None, None)
    assert printed and "no result" in printed[-1] and \
        "unable to read" in printed[-1], printed
    printed.clear()
    assert mod.iperf3_result(run_of(0, "iperf3: error")) == \
        (None, None, None)
    assert printed and "no JSON" in printed[-1], printed


def test_iperf3_result_reads_tcp_and_udp(lan743x_lib):
    """The rate and retransmits of TCP, the rate of UDP."""
    mod, _ = lan743x_lib
    tcp = {"end": {"sum_received": {"bits_per_second": 9.4e8},
                   "sum_sent": {"bits_per_second": 9.5e8, "retransmits": 3}}}
    rate, retr, _ = mod.iperf3_result(run_of(0, json.dumps(tcp)))
    assert (round(rate), retr) == (940, 3)
    udp = {"end": {"sum": {"bits_per_second": 2.5e8, "lost_packets": 0}}}
    rate, retr, _ = mod.iperf3_result(run_of(0, json.dumps(udp)))
    assert (round(rate), retr) == (250, None)


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
    """An expected "skip|fail" accepts either; anything else, or no
    result, is a mismatch; an unknown result is an error."""
    f = tmp_path / "x.txt"
    f.write_text("series a.b skip|fail  # host-dependent precheck\n"
                 "series a.c pass\n")
    exp = selftests.load_expected(f)
    assert not selftests.compare({"series": {"a.b": "fail", "a.c": "pass"}},
                                 exp, ["series"])
    assert not selftests.compare({"series": {"a.b": "skip", "a.c": "pass"}},
                                 exp, ["series"])
    # neither alternative, or a missing result, is a mismatch
    assert selftests.compare({"series": {"a.b": "pass"}}, exp,
                             ["series"]) == ["series a.b: pass, expected skip|fail",
                                             "series a.c: missing, expected pass"]
    f.write_text("series a.b skip|maybe  # x\n")
    with pytest.raises(SystemExit):
        selftests.load_expected(f)


def test_guest_crash_is_run_again_once(tmp_path, capsys):
    """run_guest(), shared by both arches of lab/selftests/selftests.py: a
    crash of the emulated machine (exit 86) boots again once, with that
    boot's environment and log; a second crash is the run's result."""
    count = tmp_path / "boots"
    count.write_text("")
    script = tmp_path / "guest.sh"
    # exits 86 on the boots listed in $CRASH, prints a KTAP line each time
    script.write_text(
        f'echo x >> "{count}"; n=$(wc -l < "{count}")\n'
        'echo "ok $n boot_$n"; echo "noise $LOGVAR"\n'
        'case " $CRASH " in *" $n "*) exit 86;; esac; exit 3\n')
    env = {"PATH": "/usr/bin:/bin", "CRASH": "1"}
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
    assert (tmp_path / "log-1.txt").read_text() == "ok 1 boot_1\nnoise boot1\n"
    assert (tmp_path / "log-2.txt").read_text() == "ok 2 boot_2\nnoise boot2\n"
    assert "repeating the run once" in err and "ok 2 boot_2" in err, err

    count.write_text("")
    env["CRASH"] = "1 2"
    rc, boot = selftests.run_guest(
        ["bash", str(script)], env, tmp_path, ["m"], "the test guest",
        lambda b: f"log-{b}.txt", ("noise",))
    assert (rc, boot) == (86, 2)
    assert count.read_text().count("x") == 2, "booted more than twice"


def test_report_counts_and_reasons(capsys):
    """report() counts each result and prints the reasons of failures
    expected."""
    results = {"series": {"a": "pass", "b": "fail", "c": "skip"}}
    expected = {"series": {"a": ("pass", ""), "b": ("fail", "no XDP"),
                           "c": ("pass", "")}}
    bad = selftests.compare(results, expected, ["series"])
    n = selftests.report(results, expected, ["series"], bad,
                         tag=lambda m, t: " [x]" if t == "b" else "")
    out = capsys.readouterr().out
    assert n == {"pass": 1, "fail": 1, "skip": 1, "xfail": 0}
    assert "  series    fail  b [x]  (no XDP)" in out, out
    assert len(bad) == 1 and "MISMATCH" in out and " c" in out, out
