"""The expected results name their reason (seconds, no VM):

- lab/selftests/selftests.py's compare(): a test listed fail whose output
  does not match the line's pattern (a new way of failing) is a mismatch
  that shows the pattern and the output; the matching output passes;
- load_expected(): a non-pass line without a pattern, or with one that
  matches any output, is refused with FILE:LINE;
- false_reasons(): a reason that claims what is not so here (no clang
  with clang installed, a guest kernel without a CONFIG_ it has, another
  ethtool) is caught; every reason of the real expected files holds;
- every pattern of the make ksft expected files matches the output
  recorded for it in measurements/ (the runs they were taken from).
"""
import gzip
import re
import subprocess
import sys

from conftest import LAB, ROOT

sys.path.insert(0, str(LAB / "selftests"))
import ksft_results
import selftests

EXPECTED = LAB / "selftests" / "expected"
CACHE = selftests.CACHE

# generic.ping's output in make test, as recorded (paths shortened)
ELF_FAIL = """\
# Exception| net.lib.py.utils.CmdExitFailure: Command failed
# Exception| CMD: ip link set dev enp0s10 mtu 1500 xdpgeneric obj /r/tests/tools/testing/selftests/net/lib/xdp_dummy.bpf.o sec xdp
# Exception|   EXIT: 255
# Exception|   STDERR: Cannot initialize ELF context!
# Exception|\x20
not ok 3 generic.ping.test_xdp_generic_sb"""
# the same case failing another way: the program loads, the device
# refuses it
OTHER_FAIL = """\
# Exception| net.lib.py.utils.CmdExitFailure: Command failed
# Exception| CMD: ip link set dev enp0s10 mtu 1500 xdpgeneric obj /r/tests/tools/testing/selftests/net/lib/xdp_dummy.bpf.o sec xdp
# Exception|   EXIT: 2
# Exception|   STDERR: Error: MTU too large for XDP.
# Exception|\x20
not ok 3 generic.ping.test_xdp_generic_sb"""


def expected_file(tmp_path, text):
    """An expected file of TEXT, loaded."""
    f = tmp_path / "exp.txt"
    f.write_text(text)
    return selftests.load_expected(f)


def load_error(tmp_path, text):
    """load_expected()'s error for an expected file of TEXT (it ends the
    run: exit 2, one line on stderr)."""
    f = tmp_path / "bad.txt"
    f.write_text(text)
    p = subprocess.run(
        [sys.executable, "-c", ("import sys; sys.path.insert(0, sys.argv[1]);"
                                " import selftests; from pathlib import Path;"
                                " selftests.load_expected(Path(sys.argv[2]))"),
         str(LAB / "selftests"), str(f)],
        capture_output=True, text=True, check=False, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    return p.stderr.strip()


def test_other_failure_of_a_failing_test_fails_the_compare(tmp_path):
    """(a) a test listed fail that fails for another reason is a
    mismatch naming the pattern, the reason and the actual output; (b)
    the same failure as listed passes."""
    exp = expected_file(tmp_path, (
        "series generic.ping.test_xdp_generic_sb fail  # needs "
        "xdp_dummy.bpf.o, not built in the source tree  match: "
        r"(?s)xdp_dummy\.bpf\.o sec xdp.*STDERR: Cannot initialize ELF "
        "context!\n"))
    got = {"series": {"generic.ping.test_xdp_generic_sb": "fail"}}
    assert not selftests.compare(got, exp, ["series"], {
        "series": {"generic.ping.test_xdp_generic_sb": ELF_FAIL}})
    bad = selftests.compare(got, exp, ["series"], {
        "series": {"generic.ping.test_xdp_generic_sb": OTHER_FAIL}})
    assert len(bad) == 1, bad
    assert bad[0].startswith("series generic.ping.test_xdp_generic_sb: "
                             "fail, but not as expected"), bad[0]
    assert "Cannot initialize ELF context" in bad[0]     # the pattern
    assert "not built in the source tree" in bad[0]      # the reason
    assert "exp.txt:1" in bad[0]
    assert "STDERR: Error: MTU too large for XDP." in bad[0]  # the output
    # no output recorded for it: not taken as the expected failure
    assert selftests.compare(got, exp, ["series"], {})


def test_other_skip_fails_and_parse_ktap_records_outputs(tmp_path):
    """A skip listed with its reason, parsed from a run's KTAP file as
    make test records it: the listed skip passes, a skip with another
    reason fails."""
    exp = expected_file(tmp_path, (
        "upstream reconfig_traffic.ring_change.rx skip  # no rings-get "
        "(EOPNOTSUPP)  match: SKIP no ring parameters: .*Operation not "
        "supported\n"
        "upstream reconfig_traffic.mtu_change.rx pass\n"))
    d = tmp_path / "run" / "upstream"
    d.mkdir(parents=True)

    def run(skip_line):
        (d / "ksft-netns.ktap").write_text(
            "TAP version 13\n1..1\n"
            "# selftests: drivers/net/hw: reconfig_traffic.py\n"
            "# TAP version 13\n# 1..2\n"
            "# # MTU 9000: 1488 rx packets, 8790 bytes each\n"
            "# ok 1 reconfig_traffic.mtu_change.rx\n"
            f"# {skip_line}\n"
            "ok 1 selftests: drivers/net/hw: reconfig_traffic.py\n")
        outputs = {}
        res = selftests.parse_ktap(tmp_path / "run", ["upstream"], outputs)
        return selftests.compare(res, exp, ["upstream"], outputs), outputs

    bad, outputs = run("ok 2 reconfig_traffic.ring_change.rx # SKIP no ring "
                       "parameters: Netlink error: Operation not supported")
    assert not bad, bad
    # a case's output: what its program printed since the case before
    assert outputs["upstream"]["reconfig_traffic.mtu_change.rx"].endswith(
        "1..2\n# MTU 9000: 1488 rx packets, 8790 bytes each\n"
        "ok 1 reconfig_traffic.mtu_change.rx")
    assert outputs["upstream"]["reconfig_traffic.ring_change.rx"] == (
        "ok 2 reconfig_traffic.ring_change.rx # SKIP no ring parameters: "
        "Netlink error: Operation not supported")
    bad, _ = run("ok 2 reconfig_traffic.ring_change.rx # SKIP refused them "
                 "all")
    assert len(bad) == 1 and "SKIP refused them all" in bad[0], bad


def test_missing_pattern_is_refused(tmp_path):
    """(c) a fail, skip or xfail without a pattern, or with one that
    matches any output, or a pass with one, is refused with FILE:LINE."""
    for res in ("fail", "skip", "xfail", "skip|fail"):
        err = load_error(tmp_path, f"series lab.load pass\nseries a.b {res}"
                         "  # lan743x has no XDP\n")
        assert f"bad.txt:2: expected {res} of a.b has no pattern" in err, err
    err = load_error(tmp_path, "series a.b fail  # x  match: .*\n")
    assert "bad.txt:1: the pattern of a.b matches an empty output" in err
    err = load_error(tmp_path, "series a.b fail  # x  match: (unclosed\n")
    assert "bad.txt:1: the pattern of a.b is not a regular expression" in err
    err = load_error(tmp_path, "series a.b pass  # x  match: y\n")
    assert "bad.txt:1: a pass takes no 'match:' pattern" in err


CONFIG = "CONFIG_BPF_SYSCALL=y\n# CONFIG_NET_SCHED is not set\n"


def claims(tmp_path, reason, kconfig=CONFIG, clang="/usr/bin/clang",
           ethtool_out="ethtool version 6.14.2\n"):
    """false_reasons() of one expected line with REASON, the host's
    clang at CLANG (None: none), the guest's ethtool printing
    ETHTOOL_OUT for --version."""
    exp = expected_file(tmp_path, f"series a.b fail  # {reason}  match: x\n")

    def which(name):
        return clang if name == "clang" else None

    def run(cmd):
        if cmd[1] == "--version":
            return ethtool_out
        return ("ethtool: bad command line argument(s)\n"
                "JSON output not available for this subcommand\n")
    return selftests.false_reasons(exp, kconfig, which=which, run=run,
                                   ethtool="/x/ethtool")


def test_false_reason_is_caught(tmp_path):
    """(d) 'no clang here' with clang installed, a CONFIG_ the guest
    kernel has, another guest ethtool: each is reported with FILE:LINE;
    the same reasons where they hold are not."""
    bad = claims(tmp_path, "a BPF object the lab does not build (no clang "
                 "here)")
    assert len(bad) == 1 and "exp.txt:1" in bad[0] and \
        "clang is installed (/usr/bin/clang)" in bad[0], bad
    assert not claims(tmp_path, "no clang here", clang=None)
    net_sched = ("lab: the guest kernel has no CONFIG_NET_SCHED "
                 "(drivers/net/config lifts it)")
    assert not claims(tmp_path, net_sched)
    bad = claims(tmp_path, net_sched, kconfig=CONFIG + "CONFIG_NET_SCHED=y\n")
    assert len(bad) == 1 and "sets CONFIG_NET_SCHED" in bad[0], bad
    # CONFIG_A(_B) names both, CONFIG_A/CONFIG_B too
    nc = ("the guest kernel has no CONFIG_NETCONSOLE(_DYNAMIC) or "
          "CONFIG_CONFIGFS_FS")
    bad = claims(tmp_path, nc, kconfig="CONFIG_NETCONSOLE_DYNAMIC=y\n")
    assert len(bad) == 1 and "CONFIG_NETCONSOLE_DYNAMIC" in bad[0], bad
    bad = claims(tmp_path, "the guest kernel has no CONFIG_PPP/CONFIG_PPPOE",
                 kconfig="CONFIG_PPPOE=m\n")
    assert len(bad) == 1 and "sets CONFIG_PPPOE" in bad[0], bad
    eth = "lab: the guest's ethtool 6.14 has no --json for -l"
    assert not claims(tmp_path, eth)
    bad = claims(tmp_path, eth, ethtool_out="ethtool version 6.1\n")
    assert len(bad) == 1 and "is 6.1" in bad[0], bad


def guest_config(base):
    """The text of the guest kernel's .config of BASE (6.12 or 7.3): the
    lab's build in the cache where there is one, else its config
    fragments (what they set is set in the kernel)."""
    for c in sorted((CACHE / "obj").glob("guest-*/.config")):
        head = c.read_text(errors="replace")[:300]
        if re.search(rf"Linux/x86_64 {re.escape(base)}\.", head):
            return c.read_text(errors="replace")
    kc = LAB / "kernel" / "kconfig"
    return (kc / "vm-min.config").read_text() + \
        (kc / "guest.config").read_text()


def test_reasons_of_the_expected_files_hold():
    """No reason of the real expected files claims what is not so here
    (the guest kernel's config of the file's base, clang, pahole, the
    guest's ethtool); every non-pass line has its pattern (the loader)."""
    files = sorted(EXPECTED.glob("*.txt"))
    assert len(files) >= 6
    for f in files:
        exp = selftests.load_expected(f)
        base = "6.12" if f.name.startswith("6.12") else "7.3"
        assert not selftests.false_reasons(exp, guest_config(base)), f


def recorded_outputs(tapgz):
    """{test: (result, output)} of a make ksft module's taps
    (ksft_results.merge's <module>.tap: every file's run_kselftest.sh
    output in turn)."""
    with gzip.open(tapgz, "rt", errors="replace") as f:
        text = f.read()
    out = {}
    for chunk in re.split(r"^(?=# module \S+: run_kselftest)", text,
                          flags=re.MULTILINE):
        for f in ksft_results.parse_run_kselftest(chunk):
            coll = f["collection"]
            out[f"{coll}:{f['file']}"] = (f["result"], f["output"])
            for case, res, _ in f["cases"]:
                out[f"{coll}:{case}"] = (res, f["outputs"][case])
    return out


# each make ksft expected file: its run, the runs of single files alone
# whose results it took (per module)
KSFT = {"net-next-2-ksft.txt": ("ksft-7.3-20261128",
                                {"series": ["rmon-alone.tap.gz",
                                            "napi_contract-v4-series.tap.gz"],
                                 "upstream": [
                                     "napi_contract-v4-upstream.tap.gz"]}),
        "6.12-2-ksft.txt": ("ksft-6.12-20261128b",
                            {"series": ["ppalloc-alone.tap.gz",
                                        "napi_contract-v4-series.tap.gz"],
                             "upstream": [
                                 "napi_contract-v4-upstream.tap.gz"]})}


def test_ksft_patterns_match_the_recorded_outputs():
    """Every pattern of the make ksft expected files matches the output
    of that result in the run it was taken from (measurements/), where
    that run has that result; each file has hundreds of them."""
    for name, (run, alone) in KSFT.items():
        exp = selftests.load_expected(EXPECTED / name)
        checked = 0
        for mod, tests in exp.items():
            outs = [recorded_outputs(ROOT / "measurements" / run /
                                     f"{mod}.tap.gz")]
            outs += [recorded_outputs(ROOT / "measurements" / run / a)
                     for a in alone.get(mod, [])]  # pylint: disable=no-member
            for t, e in tests.items():
                if e.pattern is None:
                    continue
                fails = [o[t][1] for o in outs
                         if t in o and o[t][0] != "pass"]
                if not fails:
                    continue
                assert any(e.pattern.search(o) for o in fails), \
                    f"{e.where}: {t}: /{e.pattern.pattern}/ not in\n" + \
                    selftests.excerpt(fails[0])
                checked += 1
        assert checked > 100, (name, checked)
