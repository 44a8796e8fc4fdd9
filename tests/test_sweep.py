"""lab/bench/sweep.py, no VM: the corners (one factor at a time from the
base, or every combination), and the report from synthetic records: per
figure upstream vs series at each corner, a direction only where the
[min, max] ranges are disjoint with five values each, and whether it
holds at every corner, depends on a factor, or is not resolved (overlap,
too few values, all-zero data)."""
import json
import subprocess

import pytest
import sweep
from conftest import ROOT


def test_corners_one_factor_at_a_time():
    """The base with every factor given, then each factor flipped alone;
    the stop's fixed part moves mac-disable-us and dma-stop-us together."""
    c = sweep.corners()
    assert [n for n, _, _ in c] == ["base", "rx-fifo-kib=12",
                                    "stop-fixed-us=100", "peer-pause=1",
                                    "wb-at-stop=0"]
    assert c[0][2] == {"rx-fifo-kib": 32, "mac-disable-us": 0,
                       "dma-stop-us": 0, "peer-pause": 0, "wb-at-stop": 1}
    assert c[2][2]["mac-disable-us"] == c[2][2]["dma-stop-us"] == 100
    assert len(sweep.corners(factorial=True)) == 16
    assert "rx-fifo-kib=20" in [n for n, _, _ in sweep.corners(mid=True)]
    assert sweep.model_args({"peer-pause": 1}) == ["--model", "peer-pause=1"]


def emu(stalls, frames=1000, overflow=0, pause=0):
    """The model's counters of one bench cell."""
    return {"mmio": {"RX_TAIL0": {"r": 0, "w": 1}}, "irq_per_vector": [1],
            "rx_frames": frames, "rx_no_desc_stalls": stalls,
            "rx_fifo_overflow": [overflow, 0, 0, 0], "rx_fifo_flushed": 0,
            "rx_drop_no_desc": 0, "rx_drop_disabled": 0,
            "tx_pause_frames": pause, "desc_errors": 0,
            "wb_freed_ring_writes": 0}


def write_corner(d, name, levels, stalls, lost):
    """A corner directory: bench records with STALLS {module: [per rep
    stalls per 1000 frames]} at both MTUs, outage lost {module: [..]}."""
    c = d / name
    (c / "bench").mkdir(parents=True)
    (c / "outage").mkdir()
    recs = [{"cell": cell, "module": m, "rep": i, "tag": "swiotlb=off",
             "packets": 1000, "emulator": emu(s)}
            for cell in sweep.CELLS for m, reps in stalls.items()
            for i, s in enumerate(reps, 1)]
    (c / "bench" / "records.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in recs))
    (c / "outage" / "outage.json").write_text(json.dumps(
        {"outage": {m: [{"lost": v}] for m, v in lost.items()},
         "order": {}}))
    (c / "corner.json").write_text(json.dumps(
        {"name": name, "levels": levels, "model": {}, "rc": {}}))


BASE = {"rx-fifo-kib": 0, "stop-fixed-us": 0, "peer-pause": 0,
        "wb-at-stop": 0}


@pytest.fixture(name="sweep_dir")
def fixture_sweep_dir(tmp_path):
    """Three corners, five values per module each: the series starves
    less at every one (disjoint ranges), but loses more per change than
    upstream once the partner honours pause."""
    write_corner(tmp_path, "base", BASE,
                 {"upstream": [100, 120, 110, 115, 105],
                  "series": [50, 60, 70, 55, 65]},
                 {"upstream": [30, 40, 35, 38, 32],
                  "series": [10, 20, 15, 12, 18]})
    write_corner(tmp_path, "rx-fifo-kib=12", dict(BASE, **{"rx-fifo-kib": 1}),
                 {"upstream": [200, 210, 220, 205, 215],
                  "series": [150, 160, 170, 155, 165]},
                 {"upstream": [60, 70, 65, 62, 68],
                  "series": [30, 30, 31, 32, 29]})
    write_corner(tmp_path, "peer-pause=1", dict(BASE, **{"peer-pause": 1}),
                 {"upstream": [10] * 5, "series": [5] * 5},
                 {"upstream": [0, 2, 1, 1, 0], "series": [5, 7, 6, 6, 5]})
    return tmp_path


def test_report_holds_and_depends(sweep_dir):
    """Per figure and corner median [min, max]; 'holds' where every
    corner resolves to the same direction, 'depends on peer-pause' where
    the corner that flips it alone differs; all-zero data is no
    direction."""
    text, v = sweep.report(sweep_dir)
    key = ("frames finding no free RX descriptor/frame", "tcp-rx-9000")
    assert v[key] == "holds (series < upstream)"
    assert v["frames lost per MTU change", "mtu-change"] == \
        "depends on peer-pause"
    assert "| base | 0.11 [0.1, 0.12] | 0.06 [0.05, 0.07] | < |" \
        in text
    assert "| peer-pause=1 | 1.00 [0, 2.00] | 6.00 [5.00, 7.00] | > |" in text
    assert (sweep_dir / "sweep.md").read_text() == text + "\n"
    # a figure whose values are all zero (no overflow counted anywhere)
    # states no direction
    assert v["RX FIFO overflows/frame", "tcp-rx-1500"].startswith(
        "not resolved at base (no data)")


def test_overlap_and_too_few_are_not_resolved(sweep_dir):
    """Overlapping ranges, equal medians included, and fewer than five
    values are no direction, whatever the medians say."""
    write_corner(sweep_dir, "wb-at-stop=1", dict(BASE, **{"wb-at-stop": 1}),
                 {"upstream": [100, 120, 110, 115, 105],
                  "series": [90, 101, 95, 99, 93]},
                 {"upstream": [30, 40, 35], "series": [10, 20, 15]})
    text, v = sweep.report(sweep_dir)
    key = ("frames finding no free RX descriptor/frame", "tcp-rx-9000")
    assert v[key] == "not resolved at wb-at-stop=1 (not resolved)"
    assert "| wb-at-stop=1 | 0.11 [0.1, 0.12] | 0.095 [0.09, 0.101] | " \
        "not resolved |" in text
    assert v["frames lost per MTU change", "mtu-change"] == \
        "not resolved at wb-at-stop=1 (too few)"
    up = {"median": 1, "min": 0, "max": 2, "n": 5}
    assert sweep.direction(up, dict(up)) == "not resolved"
    assert sweep.direction(up, {"median": 3, "min": 2.5, "max": 4,
                                "n": 5}) == ">"


def test_missing_corner_figure_is_incomplete(sweep_dir):
    """A corner without outage results makes that figure incomplete."""
    (sweep_dir / "peer-pause=1" / "outage" / "outage.json").unlink()
    _, v = sweep.report(sweep_dir)
    assert v["frames lost per MTU change", "mtu-change"] == \
        "incomplete: no figure at peer-pause=1"


def test_factorial_dependence_is_the_factor_that_flips_alone():
    """With several corners, the factors of pairs that differ in one
    factor alone and disagree."""
    lv = {"base": {"a": 0, "b": 0}, "a": {"a": 1, "b": 0},
          "b": {"a": 0, "b": 1}, "ab": {"a": 1, "b": 1}}
    dirs = {"base": "<", "a": "<", "b": ">", "ab": ">"}
    assert sweep.verdict(dirs, lv) == "depends on b"


@pytest.mark.parametrize("vars_,want", [
    ([], "lab/bench/sweep.py run --arch x86_64"),
    (["REPS=3", "ARCH=armv7"], "lab/bench/sweep.py run --arch armv7 --reps 3"),
    (["FACTORIAL=1"], "--factorial"),
    (["SCOPED=1", "CORNERS=base,wb-at-stop=0"],
     "--scoped --corners base,wb-at-stop=0")])
def test_make_sweep(vars_, want):
    """make sweep runs sweep.py with ARCH, REPS and FACTORIAL."""
    p = subprocess.run(["make", "-n", "-s", "-o", "setup", "sweep", *vars_],
                       cwd=ROOT, capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert want in p.stdout, p.stdout


def test_run_gives_every_corner_its_settings(tmp_path, monkeypatch, capsys):
    """sweep.py run: per corner the bench's TCP RX cells and the outage,
    upstream vs series, REPS, every factor as --model; corner.json keeps
    the settings and exit statuses (no VM: the commands are recorded)."""
    cmds = []

    class Done:
        """subprocess.run's result."""
        returncode = 0

    monkeypatch.setattr(sweep.subprocess, "run",
                        lambda cmd, check: cmds.append(cmd) or Done())
    assert sweep.main(["run", "--reps", "3", "--out", str(tmp_path)]) == 0
    assert len(cmds) == 2 * len(sweep.corners())
    bench_cmd, outage_cmd = cmds[2], cmds[3]    # the rx-fifo-kib=12 corner
    assert bench_cmd[1].endswith("lab/bench/bench.py")
    assert bench_cmd[bench_cmd.index("--cells") + 1] == \
        "tcp-rx-1500,tcp-rx-9000"
    assert bench_cmd[bench_cmd.index("--reps") + 1] == "3"
    assert outage_cmd[1].endswith("lab/bench/outage.py")
    for cmd in (bench_cmd, outage_cmd):
        models = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--model"]
        assert models == ["rx-fifo-kib=12", "mac-disable-us=0",
                          "dma-stop-us=0", "peer-pause=0", "wb-at-stop=1"]
    # no "=" in a corner's path: virtme takes shared directories as
    # NAME=PATH (a bench in "rx-fifo-kib=12/" could not start its guest)
    assert not [p for p in tmp_path.rglob("*") if "=" in p.name]
    c = json.loads((tmp_path / "rx-fifo-kib-12" / "corner.json").read_text())
    assert c["rc"] == {"bench": 0, "outage": 0}
    assert (tmp_path / "sweep.md").exists()
    capsys.readouterr()
    cmds.clear()
    sweep.main(["run", "--arch", "armv7", "--out", str(tmp_path / "arm")])
    assert not [c for c in cmds if c[1].endswith("outage.py")]


def test_scoped_runs_what_a_factor_acts_on(tmp_path, monkeypatch, capsys):
    """--scoped: the base runs the bench cells and the outage, a corner
    that flips one factor only the sources ACTS names for it; the report
    shows the others as not run and leaves them out of the verdict."""
    cmds = []

    class Done:
        """subprocess.run's result."""
        returncode = 0

    monkeypatch.setattr(sweep.subprocess, "run",
                        lambda cmd, check: cmds.append(cmd) or Done())
    assert sweep.main(["run", "--scoped", "--corners",
                       "base,peer-pause=1,wb-at-stop=0",
                       "--out", str(tmp_path)]) == 0
    ran = [c[1].rsplit("/", 1)[1] for c in cmds]
    assert ran == ["bench.py", "outage.py", "bench.py", "outage.py",
                   "outage.py"]
    c = json.loads((tmp_path / "wb-at-stop-0" / "corner.json").read_text())
    assert c["ran"] == ["outage"]
    text = capsys.readouterr().out
    assert "| wb-at-stop=0 | not run | not run |" in text
    assert "not run: wb-at-stop=0" in text
    assert sweep.main(["run", "--corners", "nope", "--out",
                       str(tmp_path)]) == 2
    assert sweep.main(["run", "--scoped", "--factorial", "--out",
                       str(tmp_path)]) == 2
