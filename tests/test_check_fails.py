"""Each check of `make check` must be able to fail.

Fixture patches against the base each introduce exactly one kind of
problem; `make check` must exit non-zero and name the patch and the check.
"""
import os
import re
import shutil

import pytest
from conftest import make_patch, run

INCLUDE_END = "#include \"lan743x_main.h\"\n"


def after_includes(text, snippet):
    """TEXT with SNIPPET inserted after its last #include."""
    assert INCLUDE_END in text
    return text.replace(INCLUDE_END, INCLUDE_END + snippet, 1)


FIXTURES = {
    # (a) checkpatch --strict: trailing whitespace is an ERROR
    "checkpatch": (lambda t: after_includes(
        t, "\n/* lab fixture: trailing whitespace */ \n"), "checkpatch"),
    # (b) a W=1-only gcc warning: -Wunused-const-variable
    "w1": (lambda t: after_includes(
        t, "\nstatic const int lan743x_fixture_unused = 1;\n"), "build-x86"),
    # (c) sparse: a global that should be static
    "sparse": (lambda t: after_includes(
        t, "\nint lan743x_fixture_global;\n"), "sparse"),
    # (d) breaks the ARMv7 build only
    "armbreak": (lambda t: after_includes(
        t, "\n#ifdef CONFIG_ARM\n#error \"lab fixture: ARM build only\"\n"
        "#endif\n"), "build-arm"),
    # (e) py-lint: an unused import in an upstream Python selftest
    "pylint": (lambda t: t.replace("\nimport ", "\nimport zlib\nimport ", 1),
               "py-lint", "tools/testing/selftests/drivers/net/ping.py"),
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_check_fails_on_fixture(name, srctree, tmp_path):
    """make check fails on the fixture NAME and names its patch and check."""
    edit, check, *path = FIXTURES[name]
    pdir = make_patch(srctree, tmp_path, name, edit, *path)
    p = run(["make", "-s", "check", f"PATCHES={pdir}", f"CHECKS={check}"])
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    # "FAIL <stack>:<dir>/<patch> <check>": the fixtures are checked on
    # the default stack's base
    assert re.search(rf"^FAIL \S+/0001-net-lan743x-lab-fixture-{name}\.patch "
                     rf"{check}$", out, re.MULTILINE), out
    assert re.search(r"check: \d+ passed, [1-9]\d* failed", out), out


def test_clean_fixture_passes_the_same_checks(srctree, tmp_path):
    """The control: a harmless comment change passes every build check."""
    pdir = make_patch(srctree, tmp_path, "clean", lambda t: after_includes(
        t, "\n/* lab fixture: a harmless comment */\n"))
    p = run(["make", "-s", "check", f"PATCHES={pdir}",
             "CHECKS=checkpatch,build-x86,sparse,build-arm"])
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "check: 4 passed, 0 failed" in out, out


def test_spatch_timeout_fails_the_check(srctree, tmp_path):
    """A coccinelle script that times out on the patched file fails make
    check: spatch names the timeout and exits 0, so the check reads its
    words (a fake spatch says them for the fixture's file and runs the
    real one for every other)."""
    real = shutil.which("spatch")
    assert real, "spatch not installed: make setup"
    fake = tmp_path / "bin" / "spatch"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/bash\n"
        'for a in "$@"; do f=$a; done\n'
        'if grep -qs "lab fixture: spatch timeout" "$f"; then\n'
        '  echo "timeout (we abort): $f"; exit 0\n'
        "fi\n"
        f'exec {real} "$@"\n')
    fake.chmod(0o755)
    pdir = make_patch(srctree, tmp_path, "spatchtimeout", lambda t:
                      after_includes(t, "\n/* lab fixture: spatch timeout */\n"))
    p = run(["make", "-s", "check", f"PATCHES={pdir}", "CHECKS=coccinelle"],
            env=dict(os.environ, PATH=f"{fake.parent}:{os.environ['PATH']}"))
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert re.search(r"^FAIL \S+/0001-net-lan743x-lab-fixture-spatchtimeout"
                     r"\.patch coccinelle$", out, re.MULTILINE), out
    assert "spatch failed: timeout (we abort)" in out, out
