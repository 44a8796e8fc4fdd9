"""make test runs the check beside pytest (lab/test.sh): the check builds in
a worktree, O= directories and a lock of its own (lab/kernel/kbuild.sh,
LAN743X_CHECK_TREE), so neither waits for the other's builds, and make
test fails when either fails."""
import fcntl
import os
import stat
import subprocess
import tempfile
from pathlib import Path

from conftest import LAB, ROOT, run
from test_stale_git_lock import fake_cache, kbuild

CHECK = {"LAN743X_CHECK_TREE": "check"}


def test_check_objdirs_are_its_own(tmp_path):
    """The checking variants get O= directories of the check's own (the
    stacks' and the fixture patches' apart); the others keep theirs."""
    cache, _src, _ = fake_cache(tmp_path)
    for variant in ("guest", "armv7-imx"):
        main = kbuild(cache, "objdir", variant)
        check = kbuild(cache, "objdir", variant, **CHECK)
        assert main.returncode == 0 and check.returncode == 0, \
            main.stderr + check.stderr
        fixtures = kbuild(cache, "objdir", variant,
                          LAN743X_CHECK_TREE="check-fixtures")
        assert main.stdout != check.stdout, variant
        assert fixtures.stdout not in (main.stdout, check.stdout), variant
    bench = [kbuild(cache, "objdir", "bench", **e).stdout for e in ({}, CHECK)]
    assert bench[0] == bench[1]


def test_check_tree_does_not_wait_for_the_main_tree(tmp_path):
    """With the main tree's lock held (a VM kernel's build), the check's
    tree is handed out at once: a worktree of the base, not the main tree."""
    cache, src, _ = fake_cache(tmp_path)
    with open(cache / "src-7.3.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = subprocess.run(
            ["bash", str(LAB / "kernel" / "kbuild.sh"), "srctree"],
            env={**{k: v for k, v in os.environ.items() if k != "LAB_BASE"},
                 "LAN743X_LAB_CACHE": str(cache), "STACK": "net-next-1",
                 **CHECK},
            text=True, capture_output=True, timeout=60, check=False)
        assert p.returncode == 0, p.stderr
        wt = p.stdout.strip().splitlines()[-1]
        assert wt == f"{src}-check"
        head = run(["git", "-C", wt, "rev-parse", "HEAD"]).stdout
        assert head == run(["git", "-C", str(src), "rev-parse", "base"]).stdout
        # and the main tree still waits for its lock's holder
        try:
            q = subprocess.run(
                ["bash", str(LAB / "kernel" / "kbuild.sh"), "srctree"],
                env={**{k: v for k, v in os.environ.items()
                        if k != "LAB_BASE"},
                     "LAN743X_LAB_CACHE": str(cache), "STACK": "net-next-1"},
                text=True, capture_output=True, timeout=5, check=False)
            waited = False
            out = q.stdout
        except subprocess.TimeoutExpired:
            waited, out = True, ""
        assert waited, f"the main tree was handed out under its lock: {out}"


def fake_py(tmp_path, check_rc, test_rc):
    """A python for lab/test.sh whose check and pytest exit as given."""
    f = tmp_path / "py"
    f.write_text("#!/bin/bash\n"
                 "case \"$*\" in\n"
                 f"*check.py*) echo 'check: 1 passed'; exit {check_rc} ;;\n"
                 f"*pytest*) echo 'pytest ran'; exit {test_rc} ;;\n"
                 "esac\nexit 99\n")
    f.chmod(f.stat().st_mode | stat.S_IXUSR)
    return f


def test_make_test_fails_with_either():
    """lab/test.sh exits 0 only when both the check and pytest pass, and
    shows the check's lines with their prefix."""
    for check_rc, test_rc in ((0, 0), (1, 0), (0, 1)):
        with tempfile.TemporaryDirectory() as d:
            py = fake_py(Path(d), check_rc, test_rc)
            p = subprocess.run(["bash", str(LAB / "test.sh")], cwd=ROOT,
                               env=dict(os.environ, PY=str(py),
                                        PYTEST_XDIST=""),
                               text=True, capture_output=True, timeout=60,
                               check=False)
        ok = check_rc == 0 and test_rc == 0
        assert (p.returncode == 0) == ok, (check_rc, test_rc, p.stdout,
                                           p.stderr)
        assert "[check] check: 1 passed" in p.stdout, p.stdout
        assert "pytest ran" in p.stdout, p.stdout
        if check_rc:
            assert "the check failed" in p.stderr, p.stderr
