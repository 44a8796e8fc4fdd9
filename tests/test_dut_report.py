"""lab/vm/dut_report.py, no VM: the check vm.sh makes of the model's
counters at QEMU's exit (the exit-report property): descriptor errors and
write-backs into a freed ring fail the run, a model without those
counters fails it, no report (QEMU killed) is left to the crash checks."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "lab" / "vm" / "dut_report.py"


def run(tmp_path, counters):
    """dut_report.py on a report holding COUNTERS (None: no file)."""
    f = tmp_path / "report.json"
    if counters is not None:
        f.write_text(json.dumps(counters))
    p = subprocess.run([sys.executable, str(SCRIPT), str(f)],
                       capture_output=True, text=True, check=False)
    return p.returncode, p.stderr


def test_clean_run_passes(tmp_path):
    """Both counters 0: exit 0."""
    rc, err = run(tmp_path, {"desc_errors": 0, "wb_freed_ring_writes": 0})
    assert rc == 0, err


def test_descriptor_error_fails_with_its_kind(tmp_path):
    """A descriptor error fails, naming its kind."""
    rc, err = run(tmp_path, {"desc_errors": 2, "wb_freed_ring_writes": 0,
                             "desc_errors_by_kind": {"rx-own": 2,
                                                     "tail": 0}})
    assert rc == 1, err
    assert "desc_errors" in err and "rx-own" in err, err


def test_freed_ring_write_fails(tmp_path):
    """A write-back into a freed ring fails."""
    rc, err = run(tmp_path, {"desc_errors": 0, "wb_freed_ring_writes": 1})
    assert rc == 1 and "wb_freed_ring_writes" in err, err


def test_missing_counter_fails(tmp_path):
    """A model without the counters fails (not a silent pass)."""
    rc, err = run(tmp_path, {"desc_tail_errors": 0})
    assert rc == 1 and "lack" in err, err


def test_no_report_is_not_a_verdict(tmp_path):
    """No report: exit 3, which vm.sh leaves to its crash handling."""
    rc, err = run(tmp_path, None)
    assert rc == 3, err


def test_vm_sh_uses_it():
    """vm.sh gives the model the report file and fails a run on it."""
    text = (ROOT / "lab" / "vm" / "vm.sh").read_text()
    assert "exit-report=$DUT_REPORT" in text
    assert 'dut_report.py" "$DUT_REPORT"' in text and "rc=87" in text
