"""Each check of `make check` must be able to fail.

Fixture patches against the base each introduce exactly one kind of
problem; `make check` must exit non-zero and name the patch and the check.
"""
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from conftest import make_patch, run

INCLUDE_END = "#include \"lan743x_main.h\"\n"


def after_includes(text, snippet):
    """TEXT with SNIPPET inserted after its last #include."""
    assert INCLUDE_END in text
    return text.replace(INCLUDE_END, INCLUDE_END + snippet, 1)


# coccinelle's scripts/coccinelle/misc/array_size.cocci reports this
ARRAY_SIZE_FINDING = (
    "\nstatic const int lan743x_fixture_tab[] = { 1, 2 };\n\n"
    "static int __maybe_unused lan743x_fixture_n(void)\n{\n"
    "\treturn sizeof(lan743x_fixture_tab) / sizeof(lan743x_fixture_tab[0]);"
    "\n}\n")


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
    # (f) kernel-doc: a parameter the comment does not describe
    "kerneldoc": (lambda t: after_includes(
        t, "\n/**\n * lan743x_fixture_kdoc() - lab fixture\n */\n"
        "static int __maybe_unused lan743x_fixture_kdoc(int x)\n{\n"
        "\treturn x;\n}\n"), "kernel-doc"),
    # (g) coccinelle: misc/array_size.cocci's "Use ARRAY_SIZE"
    "coccinelle": (lambda t: after_includes(t, ARRAY_SIZE_FINDING),
                   "coccinelle"),
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


def fake_spatch(tmp_path, marker, action):
    """A spatch in tmp_path/bin that runs ACTION (shell) for a file holding
    MARKER and the real spatch for every other file."""
    real = shutil.which("spatch")
    assert real, "spatch not installed: make setup"
    fake = tmp_path / "bin" / "spatch"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/bash\n"
        'for a in "$@"; do f=$a; done\n'
        f'if grep -qs "{marker}" "$f"; then\n'
        f"{action}"
        "fi\n"
        f'exec {real} "$@"\n')
    fake.chmod(0o755)
    return fake


def test_spatch_timeout_fails_the_check(srctree, tmp_path):
    """A coccinelle script that times out on the patched file fails make
    check: spatch names the timeout and exits 0, so the check reads its
    words (a fake spatch says them for the fixture's file and runs the
    real one for every other)."""
    fake = fake_spatch(tmp_path, "lab fixture: spatch timeout",
                       '  echo "timeout (we abort): $f"; exit 0\n')
    pdir = make_patch(srctree, tmp_path, "spatchtimeout", lambda t:
                      after_includes(t, "\n/* lab fixture: spatch timeout */\n"))
    p = run(["make", "-s", "check", f"PATCHES={pdir}", "CHECKS=coccinelle"],
            env=dict(os.environ, PATH=f"{fake.parent}:{os.environ['PATH']}"))
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert re.search(r"^FAIL \S+/0001-net-lan743x-lab-fixture-spatchtimeout"
                     r"\.patch coccinelle$", out, re.MULTILINE), out
    assert "spatch failed: timeout (we abort)" in out, out



def test_spatch_cpu_limit_fails_the_check(srctree, tmp_path):
    """A coccinelle script that spends more than its CPU seconds on the
    patched file is stopped (SIGXCPU) and fails make check, naming the
    limit. A fake spatch spins on the fixture's file with
    misc/array_size.cocci (which takes the real one under a second on the
    base's file), says nothing for the other scripts on it, and runs the
    real one on every other file, so that no result of the fake's is
    cached for a real file."""
    fake = fake_spatch(
        tmp_path, "lab fixture: spatch spins",
        '  case "$*" in *misc/array_size.cocci*) while :; do :; done ;; esac\n'
        "  exit 0\n")
    # a file content of its own each run: no result cached for an earlier
    # one stands for this run's
    nonce = f"{os.getpid()}-{time.time_ns()}"
    pdir = make_patch(srctree, tmp_path, "spatchspins", lambda t: after_includes(
        t, f"\n/* lab fixture: spatch spins {nonce} */\n"))
    p = run(["make", "-s", "check", f"PATCHES={pdir}", "CHECKS=coccinelle"],
            env=dict(os.environ, LAN743X_SPATCH_TIMEOUT="2",
                     PATH=f"{fake.parent}:{os.environ['PATH']}"),
            timeout=600)  # without the limit the fake spins on
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert re.search(r"^FAIL \S+/0001-net-lan743x-lab-fixture-spatchspins"
                     r"\.patch coccinelle$", out, re.MULTILINE), out
    assert ("array_size.cocci: spatch failed: stopped after 2 s of CPU "
            "(SIGXCPU)") in out, out


def make_series(srctree, outdir, name, edits):
    """Patches 0001.. in one directory, the i-th applying EDITS[i] (text ->
    text) to lan743x_main.c as the ones before it leave it."""
    pdir = Path(outdir) / f"patches-{name}"
    pdir.mkdir()
    for i, edit in enumerate(edits, 1):
        def before(t, done=edits[:i - 1]):
            for e in done:
                t = e(t)
            return t
        one = make_patch(srctree, Path(outdir) / str(i), f"{name}-{i}", edit,
                         before=before)
        (p,) = one.glob("*.patch")
        (pdir / f"{i:04d}-{p.name[5:]}").write_text(p.read_text())
    return pdir




def test_coccinelle_names_the_patch_that_adds_a_finding(srctree, tmp_path):
    """coccinelle runs once on the stack's result; when that adds a
    finding, each patch is checked and the one that adds it is named (the
    second patch, which keeps the finding, is not)."""
    pdir = make_series(srctree, tmp_path, "cocci", [
        lambda t: after_includes(t, ARRAY_SIZE_FINDING),
        lambda t: after_includes(t, "\n/* lab fixture: a comment */\n")])
    p = run(["make", "-s", "check", f"PATCHES={pdir}", "CHECKS=coccinelle"])
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert re.search(r"^FAIL \S+/0001-net-lan743x-lab-fixture-cocci-1\.patch "
                     r"coccinelle$", out, re.MULTILINE), out
    assert "array_size.cocci" in out, out
    assert not re.search(r"^FAIL \S+/0002-", out, re.MULTILINE), out
    assert re.search(r"^FAIL \S+/0001\.\.0002 \(the stack's result\) "
                     r"coccinelle$", out, re.MULTILINE), out


def test_coccinelle_does_not_see_a_finding_a_later_patch_removes(
        srctree, tmp_path):
    """The stated limit of checking coccinelle once per stack: a finding
    one patch adds and the next removes passes (if this fails, the check
    runs per patch again and docs/lab.md must say so)."""
    pdir = make_series(srctree, tmp_path, "coccigone", [
        lambda t: after_includes(t, ARRAY_SIZE_FINDING),
        lambda t: t.replace(ARRAY_SIZE_FINDING, "\n")])
    p = run(["make", "-s", "check", f"PATCHES={pdir}", "CHECKS=coccinelle"])
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert re.search(r"^PASS \S+/0001\.\.0002 \(the stack's result\) "
                     r"coccinelle$", out, re.MULTILINE), out
    assert "check: 1 passed, 0 failed" in out, out
