import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "lab"
sys.path.insert(0, str(LAB))
DRV = "drivers/net/ethernet/microchip"


def run(cmd, **kw):
    kw.setdefault("cwd", ROOT)
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


@pytest.fixture(scope="session")
def srctree():
    """The cached base source tree (created by kbuild.sh if missing)."""
    p = run(["bash", "lab/kbuild.sh", "srctree"])
    assert p.returncode == 0, p.stderr
    return Path(p.stdout.strip().splitlines()[-1])


def make_patch(srctree, outdir, name, edit, path=DRV + "/lan743x_main.c"):
    """Write a git-am-able patch that applies to base: edit(text) -> text."""
    work = Path(outdir) / f"repo-{name}"
    work.mkdir(parents=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="Lab Fixture",
               GIT_AUTHOR_EMAIL="fixture@lan743x-lab.invalid",
               GIT_COMMITTER_NAME="Lab Fixture",
               GIT_COMMITTER_EMAIL="fixture@lan743x-lab.invalid")
    base = run(["git", "-C", str(srctree), "show", f"base:{path}"]).stdout
    f = work / path
    f.parent.mkdir(parents=True)
    f.write_text(base)
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "base"]):
        assert run(cmd, cwd=work, env=env).returncode == 0
    f.write_text(edit(base))
    msg = (f"net: lan743x: lab fixture {name}\n\n"
           f"Fixture for the lab's own tests: {name}.\n\n"
           "Signed-off-by: Lab Fixture <fixture@lan743x-lab.invalid>\n")
    assert run(["git", "commit", "-qam", msg], cwd=work, env=env).returncode == 0
    pdir = Path(outdir) / f"patches-{name}"
    p = run(["git", "format-patch", "-q", "-1", "-o", str(pdir)], cwd=work,
            env=env)
    assert p.returncode == 0, p.stderr
    return pdir


def last_line(p):
    """The last line a lab command printed (the path it reports)."""
    lines = p.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def vm_inputs():
    """QEMU with the lan7430 model and the guest kernel's build directory,
    or skip the calling test with the reason they are not available."""
    import shutil
    if not shutil.which("vng"):
        pytest.skip("virtme-ng (vng) not installed: cannot boot the lab VM")
    p = run(["bash", "emulator/build.sh"])
    if p.returncode:
        pytest.skip("QEMU with the lan7430 model cannot be built here: " +
                    p.stderr[-500:])
    qemu = last_line(p)
    p = run(["bash", "lab/kbuild.sh", "kernel", "guest"])
    if p.returncode:
        pytest.skip("guest kernel not available (lab/kbuild.sh kernel guest): " +
                    p.stderr[-500:])
    return qemu, last_line(p)
