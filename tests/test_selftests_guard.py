"""lab/guest/selftests.sh's guard of a test step (watched, hang_report):
a step that runs past LAN743X_HANG_REPORT seconds gets one report of
every process's state and the kernel log's tail on stderr; a step that
ends, however it ends, returns its own exit status at once, and the
report's pending timer holds none of the step's pipes (an orphan holding
the pipe would keep the run's reader waiting until it expired). A
failure of test_selftests_vm quotes the reports (hang_reports())."""
import subprocess
import time

from conftest import LAB
from test_selftests_vm import hang_reports

# the two functions, without the rest of the script (which runs a VM's
# tests when sourced)
FUNCS = (f"eval \"$(sed -n '/^hang_report()/,/^}}/p;/^watched()/,/^}}/p' "
         f"{LAB / 'guest' / 'selftests.sh'})\"")


def step(report_after, body):
    """Run body under watched with the report after report_after s, its
    output through a pipe as in the guest; (exit status, output, wall s)."""
    script = (f"{FUNCS}\n(LAN743X_HANG_REPORT={report_after} "
              f"watched 'the step' {body}) 2>&1 | cat\n"
              "exit ${PIPESTATUS[0]}")
    t0 = time.monotonic()
    p = subprocess.run(["bash", "-c", script], capture_output=True,
                       text=True, timeout=120, check=False)
    return p.returncode, p.stdout, time.monotonic() - t0


def test_quick_step_returns_its_status_without_report():
    """A step that ends early: its status, its output, no report, no wait."""
    rc, out, secs = step(30, "sh -c 'echo done; exit 3'")
    assert rc == 3, out
    assert out == "done\n"
    # the pending report (30 s) does not hold the pipe
    assert secs < 10, f"the step ended but its pipe stayed open {secs:.0f} s"


def test_long_step_gets_one_report():
    """A step past its report time: one report with the process table."""
    rc, out, secs = step(1, "sleep 4")
    assert rc == 0, out
    lines = out.splitlines()
    assert sum("the step still runs after 1 s" in ln for ln in lines) == 1, out
    # the process table, with the step's own sleep in it
    assert any("STAT" in ln and "WCHAN" in ln for ln in lines), out
    assert any("sleep 4" in ln for ln in lines), out
    assert secs < 15, out


def test_zero_means_no_report():
    """LAN743X_HANG_REPORT=0: never a report."""
    rc, out, secs = step(0, "sleep 2")
    assert rc == 0 and out == "", out
    assert secs < 10


def test_failure_message_finds_the_report():
    """The report, among the run's other lines, is what a failure of
    test_selftests_vm quotes: whole, without the lines around it."""
    _, out, _ = step(1, "sleep 3")
    report = out.strip().splitlines()
    assert len(report) > 3, out
    stderr = "\n".join(["ok 1 generic.ping.test_v4",
                        "[selftests.sh] module series: NETIF=enp0s10"]
                       + report
                       + ["[selftests.sh] module series: generic ping.py",
                          "not ok 1 lab.state_restored"])
    assert hang_reports(stderr, limit=10**6).splitlines() == report
    assert len(hang_reports(stderr, limit=100)) == 100
    assert hang_reports("ok 1 lab.load\n") == ""
