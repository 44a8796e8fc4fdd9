"""make ksft's pieces that need no VM (seconds):

- lab/selftests/ksft_results.py's parse_run_kselftest(): run_kselftest.sh's
  output into one result per file (its 'selftests: COLLECTION: FILE'
  line) and one per case (the program's KTAP lines, or a shell test's
  'TEST: ... [ OK ]' lines), each skip and failure with its reason; a
  timeout, a skipped file and the line the guest writes for a file it
  died in;
- whole_results(): the per-file outputs of a module named as the
  expected file names them, a file whose output never ended (the VM was
  stopped in it) a failure, a file never started listed as not run;
- lab/guest/lib.sh's netconfig: the net.config in NIPA's layout, with
  IPv6 of both ends only when asked for; its ipv6_setup: REMOTE_V6 on the
  peer's port, whatever devices the namespace has besides it;
- make test's subset covers each drivers/net/hw test the stacks add or
  change (the named hw tests of make selftests).
"""
import subprocess
import sys

from conftest import LAB, ROOT

sys.path.insert(0, str(LAB / "selftests"))
import ksft_results
import selftests

OUTPUT = """\
TAP version 13
1..1
# timeout set to 300
# selftests: drivers/net: ping.py
# TAP version 13
# 1..3
# ok 1 ping.test_default_v4
# ok 2 ping.test_xdp_generic_sb # SKIP no XDP support in the device
# # Exception| Traceback (most recent call last):
# # Exception|   File "ping.py", line 10, in test_tcp
# # Exception| lib.py.utils.CmdExitFailure: Command failed: socat
# not ok 3 ping.test_tcp
# # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
not ok 1 selftests: drivers/net: ping.py # exit=1
TAP version 13
1..1
# timeout set to 300
# selftests: drivers/net/hw: tso.py
# TAP version 13
# 1..1
# ok 1 tso.ipv4 # SKIP Device does not support LSO queue stats
not ok 1 selftests: drivers/net/hw: tso.py # TIMEOUT 300 seconds
TAP version 13
1..1
# timeout set to 300
# selftests: drivers/net/hw: ethtool.sh
# TEST: ethtool pause autoneg                                   [ OK ]
# TEST: ethtool set speed 1000 duplex full                      [FAIL]
# TEST: advertise 100baseT1                                     [SKIP]
ok 1 selftests: drivers/net/hw: ethtool.sh
TAP version 13
1..1
# timeout set to 300
# selftests: drivers/net/hw: devmem.py
# TAP version 13
# 1..0 # SKIP no devmem support
ok 1 selftests: drivers/net/hw: devmem.py # SKIP
"""


def test_parse_files_and_cases():
    """One result per file, one per case, with their reasons."""
    files = ksft_results.parse_run_kselftest(OUTPUT)
    assert len(files) == 4
    got = [(f["collection"], f["file"], f["result"]) for f in files]
    assert got == [("drivers/net", "ping.py", "fail"),
                   ("drivers/net/hw", "tso.py", "fail"),
                   ("drivers/net/hw", "ethtool.sh", "pass"),
                   ("drivers/net/hw", "devmem.py", "skip")]
    ping, tso, eth, devmem = files[0], files[1], files[2], files[3]
    assert ping["cases"] == [
        ("ping.test_default_v4", "pass", ""),
        ("ping.test_xdp_generic_sb", "skip", "no XDP support in the device"),
        ("ping.test_tcp", "fail",
         "lib.py.utils.CmdExitFailure: Command failed: socat")]
    assert ping["reason"] == "exit=1"
    assert tso["reason"] == "TIMEOUT 300 seconds"
    assert tso["cases"] == [("tso.ipv4", "skip",
                             "Device does not support LSO queue stats")]
    assert [c[:2] for c in eth["cases"]] == [
        ("ethtool_pause_autoneg", "pass"),
        ("ethtool_set_speed_1000_duplex_full", "fail"),
        ("advertise_100baseT1", "skip")]
    assert devmem["cases"] == []


def test_whole_results(tmp_path):
    """Per-file outputs of a module: finished, died in, never started."""
    whole = tmp_path / "series" / "whole"
    whole.mkdir(parents=True)
    (whole / "drivers-net-ping.py.tap").write_text(
        OUTPUT.split("TAP version 13\n1..1\n")[1] + "# exit status 1\n")
    # the guest's line for a file a crashed boot was running
    (whole / "drivers-net-hw-irq.py.tap").write_text(
        "# module series: run_kselftest.sh -o 300 -t drivers/net/hw:irq.py\n"
        "not ok 1 selftests: drivers/net/hw: irq.py # the guest died "
        "during this test\n# exit status crash\n")
    # stopped in the middle, never ended
    (whole / "drivers-net-hw-tso.py.tap").write_text(
        "# selftests: drivers/net/hw: tso.py\n# ok 1 tso.ipv4\n")
    entries = ["drivers/net:ping.py", "drivers/net/hw:irq.py",
               "drivers/net/hw:tso.py", "drivers/net/hw:csum.py"]
    outputs = {}
    res, notrun = ksft_results.whole_results(tmp_path, "series", entries,
                                             outputs)
    assert notrun == ["drivers/net/hw:csum.py"]
    assert res["drivers/net:ping.py"][0] == "fail"
    assert res["drivers/net:ping.test_default_v4"] == ("pass", "")
    assert res["drivers/net:ping.test_xdp_generic_sb"][0] == "skip"
    assert res["drivers/net/hw:irq.py"] == (
        "fail", "the guest died during this test")
    assert res["drivers/net/hw:tso.py"][0] == "fail"
    assert "stopped" in res["drivers/net/hw:tso.py"][1]
    # selftests.sh's own checks, a failed one with what it printed
    (tmp_path / "series" / "state.ktap").write_text(
        "# 2c2\n# < mtu 1500\n# ---\n# > mtu 1501\nnot ok 1 lab.state_restored\n")
    (tmp_path / "series" / "load.ktap").write_text("ok 1 lab.load\n")
    lab = ksft_results.lab_results(tmp_path / "series")
    assert lab == {"lab.load": ("pass", ""), "lab.state_restored": (
        "fail", "lab: 2c2 < mtu 1500 --- > mtu 1501")}
    res.update(lab)
    ksft_results.lab_results(tmp_path / "series", outputs)
    # each result's own output: a case's since the case before
    assert outputs["drivers/net:ping.test_tcp"].splitlines() == [
        "# Exception| Traceback (most recent call last):",
        '# Exception|   File "ping.py", line 10, in test_tcp',
        "# Exception| lib.py.utils.CmdExitFailure: Command failed: socat",
        "not ok 3 ping.test_tcp"]
    # the expected file's format, read back by its own loader, each
    # result but pass with a pattern its own output matches
    out = tmp_path / "results.txt"
    ksft_results.write_results(out, {"series": res}, {"series": outputs})
    back = selftests.load_expected(out)
    assert {t: v[0] for t, v in back["series"].items()} == \
        {t: v[0] for t, v in res.items()}
    got = {"series": {t: v[0] for t, v in res.items()}}
    assert not selftests.compare(got, back, ["series"],
                                 {"series": outputs})
    assert back["series"]["drivers/net:ping.test_tcp"].pattern.pattern == \
        "lib.py.utils.CmdExitFailure: Command failed: socat".replace(
            ".", "\\.")


def netconfig(tmp_path, *args):
    """lib.sh's netconfig FILE DUT ARGS..., as a dict."""
    f = tmp_path / "net.config"
    script = f'. "{LAB}/guest/lib.sh" && netconfig "$@"'
    subprocess.run(["bash", "-c", script, "netconfig", str(f), "enp0s10"]
                   + list(args), check=True)
    lines = [x for x in f.read_text().splitlines() if not x.startswith("#")]
    return dict(x.split("=", 1) for x in lines)


def test_netconfig_v4_v6(tmp_path):
    """NIPA's keys; V6 of both ends only with v6; REMOTE_ARGS per mode."""
    assert netconfig(tmp_path, "netns", "v6") == {
        "NETIF": "enp0s10", "LOCAL_V4": "192.0.2.1",
        "REMOTE_V4": "192.0.2.2", "LOCAL_V6": "2001:db8:743::1",
        "REMOTE_V6": "2001:db8:743::2", "REMOTE_TYPE": "netns",
        "REMOTE_ARGS": "ksft-lan743x-peer"}
    v4 = netconfig(tmp_path, "ssh")
    assert "LOCAL_V6" not in v4 and "REMOTE_V6" not in v4
    assert v4["REMOTE_TYPE"] == "ssh"
    assert v4["REMOTE_ARGS"] == "root@192.0.2.2"



# `ip -n NS -o link show` in the guest of a kernel with CONFIG_IPV6_SIT=y:
# a new namespace gets sit0, listed before the peer's port
# pylint: disable=line-too-long
NS_LINKS = r"""1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00
2: sit0@NONE: <NOARP> mtu 1480 qdisc noop state DOWN mode DEFAULT group default qlen 1000\    link/sit 0.0.0.0 brd 0.0.0.0
3: {a}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc pfifo_fast state UP mode DEFAULT group default qlen 1000\    link/ether 02:74:30:00:00:09 brd ff:ff:ff:ff:ff:ff
4: {b}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc pfifo_fast state UP mode DEFAULT group default qlen 1000\    link/ether 02:74:30:00:00:02 brd ff:ff:ff:ff:ff:ff
"""
# pylint: enable=line-too-long


def ipv6_setup(tmp_path, links, peer_mac="02:74:30:00:00:02"):
    """lib.sh's ipv6_setup enp0s9 with `ip` and `ping` stubbed: the `ip`
    commands it ran, one per line, and its exit status."""
    log = tmp_path / "ip.log"
    log.write_text("")
    script = f"""
        . "{LAB}/guest/lib.sh"
        ip() {{
            echo "$*" >>"{log}"
            [ "$*" != "-n $NS -o link show" ] || printf '%s' "$LINKS"
        }}
        ping() {{ return 0; }}
        ipv6_setup enp0s9"""
    rc = subprocess.run(["bash", "-c", script], check=False,
                        env={"LINKS": links, "LAN743X_PEER_MAC": peer_mac,
                             "PATH": "/usr/bin:/bin"},
                        capture_output=True, text=True).returncode
    return log.read_text().splitlines(), rc


def test_ipv6_setup_finds_the_peer_port(tmp_path):
    """REMOTE_V6 goes on the port with PEER_MAC, not on a tunnel's
    fallback device listed first (IPv6 between the ends never came up in
    6.12's guest, which has sit0 built in), nor on another port; without
    that port, on the first Ethernet port; with none, a clear failure."""
    peer = "-n ksft-lan743x-peer -6 addr replace 2001:db8:743::2/64 dev {} nodad"
    ran, rc = ipv6_setup(tmp_path, NS_LINKS.format(a="eth1", b="enp0s10"))
    assert rc == 0
    assert "-6 addr replace 2001:db8:743::1/64 dev enp0s9 nodad" in ran
    assert peer.format("enp0s10") in ran
    ran, rc = ipv6_setup(tmp_path, NS_LINKS.format(a="eth1", b="enp0s10"),
                         peer_mac="02:74:30:00:00:07")
    assert rc == 0 and peer.format("eth1") in ran
    lo_sit = "".join(NS_LINKS.splitlines(keepends=True)[:2])
    ran, rc = ipv6_setup(tmp_path, lo_sit)
    assert rc == 1 and not any("addr replace" in x for x in ran)


def test_make_test_covers_the_stacks_tests():
    """Each drivers/net/hw test a stack adds or changes is one make
    test's selftests run by name (HW_TESTS or the 7.3 GENERIC list)."""
    changed = set()
    for p in sorted((ROOT / "patches").glob("*/0*.patch")):
        for line in p.read_text().splitlines():
            if line.startswith("diff --git a/tools/testing/selftests/"
                               "drivers/net/hw/") and line.endswith(".py"):
                name = line.split()[-1].split("drivers/net/hw/", 1)[1]
                if "/" not in name:
                    changed.add(name)
    named = set(selftests.HW_TESTS.split()) | {
        g.split("/", 1)[1] for g in selftests.GENERIC["7.3"].split()
        if g.startswith("hw/")}
    assert changed, "no drivers/net/hw test in patches/"
    assert changed <= named, changed - named


def test_reasons_say_device_or_lab():
    """A skip for a feature lan743x lacks reads 'device:', one for a lab
    limit 'lab:' with what lifts it; a reason of no known kind is the
    test's own."""
    c = ksft_results.classify
    assert c("device does not support native-XDP",
             "drivers/net:ping.test_xdp_native_sb").startswith(
                 "device: lan743x has no XDP")
    assert c("CMD: ip link set dev enp0s10 xdpdrv obj x.bpf.o: libbpf: "
             "failed to find valid kernel BTF").startswith(
                 "lab: the guest kernel has no BTF")
    assert "lifts it" in c("Netlink error: Unknown device type",
                           "drivers/net:psp.py")
    assert c("some new reason").startswith("test: some new reason")
    assert c("") == ""


def test_whole_subset():
    """make ksft FILES=...: the files asked for, in the install's order;
    a name that is not a file of the targets is a clear error that says
    what it may have meant, before anything runs."""
    entries = ["drivers/net:ping.py", "drivers/net/hw:tso.py",
               "drivers/net/hw:uso.py"]
    assert selftests.whole_subset(
        entries, ["drivers/net/hw:uso.py", "drivers/net:ping.py"]) == \
        ["drivers/net:ping.py", "drivers/net/hw:uso.py"]
    run = subprocess.run(
        [sys.executable, "-c",
         ("import sys; sys.path.insert(0, sys.argv[1]); import selftests; "
          "selftests.whole_subset(sys.argv[2:3], sys.argv[3:])"),
         str(LAB / "selftests"), "drivers/net/hw:tso.py",
         "hw/tso.py"], capture_output=True, text=True, check=False)
    assert run.returncode != 0
    assert "not a file of drivers/net drivers/net/hw: hw/tso.py" in run.stderr
    assert "did you mean drivers/net/hw:tso.py?" in run.stderr
    assert "Traceback" not in run.stderr


def test_files_needs_whole():
    """--files without --whole is refused, not ignored."""
    run = subprocess.run([sys.executable, str(LAB / "selftests" /
                                              "selftests.py"),
                          "--files", "drivers/net:ping.py"],
                         capture_output=True, text=True, check=False,
                         cwd=ROOT)
    assert run.returncode == 2 and "needs --whole" in run.stderr


def test_rss_reasons():
    """The rss_ctx and toeplitz results the series' RSS work leaves: a
    drop count or a wall-clock bound of the key change is the lab's, a
    missing coalescing or RX hash op the device's."""
    c = ksft_results.classify
    t = "drivers/net/hw:rss_ctx.test_hitless_key_update"
    assert c("Check failed 200 != 0", t).startswith("lab: under TCG")
    assert c("Check failed 0.459172 >= 0.2", t).startswith("lab: 6.12's")
    assert c("Command failed: ethtool --json -c enp0s10",
             "drivers/net/hw:rss_ctx.test_rss_key_indir").startswith(
                 "device: lan743x has no interrupt coalescing")
    assert c("Check failed receive-hashing: on not in Features for x:",
             "drivers/net/hw:toeplitz.test.tcp_ipv4").startswith(
                 "device: lan743x reports no RX hash")
    # another case's count check is not the key change's
    assert c("Check failed 200 != 0",
             "drivers/net/hw:rss_ctx.test_rss_resize").startswith("test:")
