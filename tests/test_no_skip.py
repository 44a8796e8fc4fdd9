"""What the lab builds itself never turns into a skip: a QEMU that does not
build makes the VM tests FAIL with the reason (a lab that could not build
its emulator once passed with 13 tests skipped).

The test copies the repository, breaks emulator/lan7430.c with a syntax
error and runs a VM test of the copy. The copy shares the lab cache, so
QEMU rebuilds incrementally and stops at the broken file; the next build
from the real tree copies the good file back (emulator/build.sh copies its
sources into the cached QEMU tree whenever they differ).
"""
import re
import subprocess
import sys

from conftest import ROOT, run


def copy_repo(dest):
    """Copy the files git knows of (as they are in the work tree) to DEST."""
    files = run(["git", "ls-files", "-z"]).stdout.split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if not src.is_file():
            continue
        d = dest / f
        d.parent.mkdir(parents=True, exist_ok=True)
        d.write_bytes(src.read_bytes())
        d.chmod(src.stat().st_mode)


def test_broken_emulator_build_fails_not_skips(tmp_path):
    """A QEMU that does not build fails test_qtests, with the reason."""
    repo = tmp_path / "repo"
    copy_repo(repo)
    c = repo / "emulator/lan7430.c"
    c.write_text(c.read_text() + "\nthis is not C;\n")
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         "tests/test_vm.py::test_qtests"],
        cwd=repo, text=True, capture_output=True, timeout=1800, check=False)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out[-3000:]
    # a fixture's failure is reported as an error: either way not a skip
    assert re.search(r"\b1 (failed|error)\b", out), out[-3000:]
    assert "skipped" not in out and "passed" not in out, out[-3000:]
    assert "QEMU with the lan7430 model failed to build" in out, out[-3000:]
    assert "lan7430.c" in out, out[-3000:]
