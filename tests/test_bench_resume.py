"""The bench survives the one crash of the emulated machine it may retry:
the int3 of text patching under multi-threaded TCG (here its oops line
written to the kernel log, then a panic with sysrq 'c', at the second
repetition) is detected from the guest console by lab/vm/vm.sh (exit 86,
oops lines on stderr) and lab/vm/crash.py, the bench re-boots the VM and
resumes at the repetition it lost, and no record written before the crash
is lost or measured twice. Any other crash is a result: the bench fails
with its first line (the second test)."""
import json
import os

from conftest import run, vm_inputs


def test_bench_resumes_after_guest_crash(tmp_path):
    """A guest panic at repetition 2: the bench re-boots and resumes, no
    record lost or written twice."""
    out = tmp_path / "bench"
    # QEMU and the guest kernel first, outside the bench's time limit (a
    # cold cache builds them here; a failed build fails with its reason)
    vm_inputs()
    env = dict(os.environ, LAN743X_BENCH_CRASH_AT="2")
    p = run(["python3", "lab/bench/bench.py", "--variant", "guest", "--reps", "2",
             "--secs", "1", "--modules", "upstream,series", "--cells",
             "udp-burst",
             "--swiotlb", "off", "--out", str(out)], env=env, timeout=1800)
    log = p.stdout + p.stderr
    assert p.returncode == 0, log[-4000:]
    # the crash happened, was recognised as one, and the VM was re-booted
    assert (out / "crashed-swiotlb-off-2").exists(), log[-3000:]
    assert "GUEST CRASHED" in log and "sysrq" in log, log[-3000:]
    assert "boot 2 after a guest crash" in log, log[-3000:]
    recs = [json.loads(x) for x in
            (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    keys = [(r["rep"], r["module"], r["cell"]) for r in recs]
    # every (repetition, cell) exactly once: rep 1 kept, rep 2 re-run
    assert sorted(keys) == sorted(
        (rep, mod, cell) for rep in (1, 2) for mod in ("upstream", "series")
        for cell in ("mem-up", "udp-burst")), keys


def test_bench_fails_on_any_other_crash(tmp_path):
    """A guest panic that is not the int3 signature ends the bench with
    an error naming it: it is not retried."""
    out = tmp_path / "bench"
    vm_inputs()
    env = dict(os.environ, LAN743X_BENCH_CRASH_AT="1:oops")
    p = run(["python3", "lab/bench/bench.py", "--variant", "guest", "--reps", "1",
             "--secs", "1", "--modules", "upstream,series", "--cells",
             "udp-burst",
             "--swiotlb", "off", "--out", str(out)], env=env, timeout=1800)
    log = p.stdout + p.stderr
    assert p.returncode != 0, log[-3000:]
    assert "the guest kernel crashed" in log and "not retried" in log, \
        log[-3000:]
    assert "Kernel panic - not syncing: sysrq triggered crash" in log, \
        log[-3000:]
    assert "after a guest crash" not in log, log[-3000:]
