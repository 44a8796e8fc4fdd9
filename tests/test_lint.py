"""The lab's own Python is held to the standard make check holds the
kernel's selftests to (lab/series/check.py, py-lint): ruff check and
pylint --disable=R, both clean. The configuration is ruff.toml and
.pylintrc at the top of the repository; the files are every *.py of lab/,
tests/ and emulator/ that git knows of or would add (tracked or not
ignored), so a new script is linted without being listed here.

The linters are the versions lab/setup.sh pins (make setup installs
them): another release has other rules. A missing or different linter
fails the test, it is never skipped.
"""
import importlib.metadata
import re
import sys

import pytest
from conftest import ROOT, run

DIRS = ("lab", "tests", "emulator")


def pinned():
    """{tool: version} of the linters lab/setup.sh installs."""
    text = (ROOT / "lab/setup.sh").read_text(encoding="utf-8")
    return dict(re.findall(r"\b(ruff|pylint)==([0-9][0-9.]*)\b", text))


def python_files():
    """The lab's *.py files: tracked, or untracked and not ignored."""
    p = run(["git", "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--"] + [f"{d}/*.py" for d in DIRS])
    assert p.returncode == 0, p.stderr
    files = sorted({f for f in p.stdout.split("\0")
                    if f and (ROOT / f).is_file()})
    assert files, "git ls-files found no Python files"
    return files


def linter(tool):
    """Fail unless TOOL is installed at the version lab/setup.sh pins."""
    want = pinned().get(tool)
    assert want, f"lab/setup.sh pins no {tool} version"
    try:
        have = importlib.metadata.version(tool)
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(f"{tool} is not installed: run 'make setup' "
                    f"({tool}=={want})", pytrace=False)
    if have != want:
        pytest.fail(f"{tool} {have} installed, lab/setup.sh pins {want}: "
                    "run 'make setup'", pytrace=False)


def lint(cmd):
    """Run a linter on every file: its findings fail the test."""
    p = run([sys.executable, "-m"] + cmd + python_files())
    out = (p.stdout + p.stderr).strip()
    if p.returncode or out:
        pytest.fail(f"{' '.join(cmd)} (rc {p.returncode}):\n{out}",
                    pytrace=False)


def test_ruff():
    """ruff check with ruff.toml (ruff's default rules)."""
    linter("ruff")
    lint(["ruff", "check", "--no-cache", "--quiet",
          "--output-format=concise"])


def test_pylint():
    """pylint with .pylintrc (--disable=R and import resolution)."""
    linter("pylint")
    lint(["pylint", "--rcfile", str(ROOT / ".pylintrc"), "--score=n",
          "--persistent=n"])


def test_python_files_found():
    """The file list covers every directory, including guest scripts."""
    files = python_files()
    for prefix in ("lab/guest/", "tests/", "emulator/"):
        assert any(f.startswith(prefix) for f in files), prefix
    assert "tests/test_lint.py" in files
