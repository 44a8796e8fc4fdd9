"""lab/bench/bench.py's matrix per --arch and --full, no VM: the default is
a first run's subset (TCP RX at MTU 1500 and 9000, 5 repetitions; x86_64:
swiotlb off only), --full the whole matrix of each arch; explicit options
win; the Makefile passes ARCH and FULL through."""
import os
import subprocess

import bench
import pytest
from conftest import ROOT, run


@pytest.fixture(autouse=True)
def no_bench_env(monkeypatch):
    """No BENCH_* variable of the caller's environment."""
    for v in ("BENCH_REPS", "BENCH_SECS", "BENCH_CELLS", "BENCH_SWIOTLB",
              "BENCH_MODULES", "BENCH_FULL"):
        monkeypatch.delenv(v, raising=False)


def test_default_is_the_subset_on_x86_64():
    """Without options: x86_64, the subset of cells, swiotlb off."""
    a = bench.bench_args(bench.__doc__, [])
    assert (a.arch, a.cells, a.swiotlb, a.reps, a.secs, a.variant,
            a.modules) == ("x86_64", "tcp-rx-1500,tcp-rx-9000", "off", 5, 5,
                           "bench", "upstream,series")


def test_full_is_every_cell_and_both_swiotlb_settings_on_x86_64():
    """--full: every cell, swiotlb off and forced."""
    a = bench.bench_args(bench.__doc__, ["--full"])
    # '' = every cell of lab/guest/bench_guest.py
    assert (a.cells, a.swiotlb) == ("", "off,force")


def test_armv7_subset_and_full():
    """armv7's subset and its --full cells."""
    a = bench.bench_args(bench.__doc__, ["--arch", "armv7"])
    assert (a.cells, a.swiotlb, a.secs, a.variant) == \
        ("tcp-rx-1500,tcp-rx-9000", "", 3, "armv7-virt")
    a = bench.bench_args(bench.__doc__, ["--arch", "armv7", "--full"])
    assert a.cells == "tcp-rx-1500,tcp-tx-1500,tcp-rx-9000"


def test_explicit_options_win(monkeypatch):
    """Options given win over --full; BENCH_FULL=1 is --full."""
    a = bench.bench_args(bench.__doc__, [
        "--full", "--cells", "udp-burst", "--swiotlb", "force", "--secs",
        "1", "--reps", "2", "--variant", "guest"])
    assert (a.cells, a.swiotlb, a.secs, a.reps, a.variant) == \
        ("udp-burst", "force", 1, 2, "guest")
    monkeypatch.setenv("BENCH_FULL", "1")
    assert bench.bench_args(bench.__doc__, []).swiotlb == "off,force"


def test_x86_64_guest_command():
    """The subset's guest: its cells, no perf profiles; --full: every
    cell (no --cells) and the profiles."""
    mods = {"upstream": "/u.ko", "series": "/s.ko"}
    g = bench.x86_64_guest(bench.bench_args(bench.__doc__, []), mods,
                           "/r", "/r/rpc-off", "off")
    assert g[g.index("--cells") + 1] == "tcp-rx-1500,tcp-rx-9000"
    assert "--no-profiles" in g and g[g.index("--tag") + 1] == "swiotlb=off"
    assert [g[i + 1] for i, x in enumerate(g) if x == "--module"] == \
        ["upstream=/u.ko", "series=/s.ko"]
    g = bench.x86_64_guest(bench.bench_args(bench.__doc__, ["--full"]), mods,
                           "/r", "/r/rpc-force", "force")
    assert "--cells" not in g and "--no-profiles" not in g


@pytest.mark.parametrize("argv", [
    ["--arch", "armv7", "--swiotlb", "force"],
    ["--swiotlb", "sometimes"],
    ["--arch", "arm"]])
@pytest.mark.usefixtures("capsys")
def test_bad_options_are_usage_errors(argv):
    """Options that do not fit together are usage errors (exit 2)."""
    with pytest.raises(SystemExit) as e:
        bench.bench_args(bench.__doc__, argv)
    assert e.value.code == 2


@pytest.mark.parametrize("target,vars_,want", [
    ("bench", [], "lab/bench/bench.py --arch x86_64"),
    ("bench", ["ARCH=armv7", "FULL=1"], "lab/bench/bench.py --arch armv7 --full"),
    ("arm-bench", [], "lab/bench/bench.py --arch armv7"),
    ("selftests", ["ARCH=armv7"], "lab/selftests/selftests.py --arch armv7"),
    ("arm-selftests", [], "lab/selftests/selftests.py --arch armv7"),
    ("e2e", ["ARCH=armv7"], "ARCH=armv7 bash lab/vm/e2e.sh"),
    ("arm-e2e", [], "ARCH=armv7 bash lab/vm/e2e.sh"),
    ("soak", [], "lab/kernel/kbuild.sh kernel debug)"),
    ("soak", ["ARCH=armv7"], "lab/kernel/kbuild.sh kernel armv7-debug"),
    ("soak", ["ARCH=armv7"], "LAN743X_SOAK_PENDING=1"),
    ("bench", ["MODEL=rx-fifo-kib=12 peer-pause=1"],
     "--model rx-fifo-kib=12 --model peer-pause=1"),
    ("outage", ["MODEL=peer-pause=1"],
     "lab/bench/outage.py    --model peer-pause=1"),
    ("outage", ["PLAN=9000to1500"],
     "lab/bench/outage.py   --plan 9000to1500")])
def test_make_passes_arch_and_full(target, vars_, want):
    """What make runs for a target (make -n, the recipes of its setup
    prerequisite left out)."""
    p = subprocess.run(["make", "-n", "-s", "-o", "setup", target, *vars_],
                       cwd=ROOT, capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert want in p.stdout, p.stdout


def test_model_settings():
    """--model KEY=VALUE, repeatable: ints in order, a later KEY wins;
    they reach vm.sh as DUT_OPTS; a malformed one is a usage error."""
    a = bench.bench_args(bench.__doc__, [
        "--model", "rx-fifo-kib=12", "--model", "peer-pause=1",
        "--model", "rx-fifo-kib=0x14"])
    assert a.model == {"rx-fifo-kib": 20, "peer-pause": 1}
    assert bench.dut_opts(a.model) == ",rx-fifo-kib=20,peer-pause=1"
    assert bench.bench_args(bench.__doc__, []).model == {}
    for bad in ("rx-fifo-kib", "rx-fifo-kib=big", "Rx=1", "x,y=1", "a=-1"):
        with pytest.raises(ValueError):
            bench.parse_model([bad])


@pytest.mark.parametrize("names, stack, msg", [
    (["upstream", "series+dim"], "net-next-2", "ethtool -C is net-next-3's"),
    (["upstream", "series+rxus50"], None, "ethtool -C is net-next-3's"),
    (["upstream+cb0", "series"], "net-next-3", "no rx-copybreak tunable"),
    (["upstream", "series+dimx"], "net-next-3", "unknown module"),
])
def test_module_suffixes_refused(names, stack, msg, monkeypatch, capsys):
    """The moderation suffixes need net-next-3's module; bad names fail
    before anything is built, with the reason."""
    if stack:
        monkeypatch.setenv("STACK", stack)
    else:
        monkeypatch.delenv("STACK", raising=False)
    with pytest.raises(SystemExit) as e:
        bench.build_modules(names, "bench")
    assert msg in str(e.value)
    assert "modules:" not in capsys.readouterr().out


def test_bad_modules_fail_before_the_kernel_build(tmp_path):
    """make bench with a module name it cannot build stops with the reason
    before the kernel's build, not after it."""
    p = run(["python3", "lab/bench/bench.py", "--modules",
             "upstream,series+dimx", "--out", str(tmp_path / "out")],
            env=dict(os.environ, STACK="net-next-3"), timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "unknown module 'series+dimx'" in out, out
    assert "kernel (" not in out, out
