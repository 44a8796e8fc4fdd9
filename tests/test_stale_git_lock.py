"""A run killed while git worked in the cached kernel tree leaves git's
index.lock behind; the next run, holding the lab's lock on that tree,
removes it instead of failing on it (lab/kernel/kbuild.sh with_src_lock)."""
import os
import subprocess

from conftest import LAB, run


def fake_cache(tmp_path):
    """A lab cache whose 7.3 base is unpacked (a bare git tree standing for
    it) and which has a worktree, as the bench kernel's, both locked by a
    git that was killed."""
    cache = tmp_path / "cache"
    version = "7.3.4-1~bpo13+1"
    debs = cache / "debian" / "linux-source-7.3"
    debs.mkdir(parents=True)
    (debs / "version").write_text(version + "\n")
    tarball = debs / "root" / "usr" / "src" / "linux-source-7.3.tar.xz"
    tarball.parent.mkdir(parents=True)
    tarball.write_bytes(b"")  # never read: the tree is unpacked already
    src = cache / "src" / f"linux-{version}"
    src.mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "-C", str(src), "init", "-q"], check=True)
    (src / "Makefile").write_text("# base\n")
    subprocess.run([*git, "-C", str(src), "add", "Makefile"], check=True)
    subprocess.run([*git, "-C", str(src), "commit", "-qm", "base"],
                   check=True)
    subprocess.run([*git, "-C", str(src), "tag", "base"], check=True)
    (src / ".git" / "lab-base-version").write_text(version + "\n")
    wt = cache / "src" / f"linux-{version}-bench"
    subprocess.run([*git, "-C", str(src), "worktree", "add", "-q",
                    "--detach", str(wt), "base"], check=True)
    wt_gitdir = (wt / ".git").read_text().split("gitdir: ", 1)[1].strip()
    return cache, src, wt_gitdir


def kbuild(cache, *args, **extra):
    """lab/kernel/kbuild.sh ARGS on CACHE (the 7.3 base), EXTRA in its
    environment."""
    env = dict(os.environ, LAN743X_LAB_CACHE=str(cache), STACK="net-next-1",
               **extra)
    env.pop("LAB_BASE", None)
    return run(["bash", str(LAB / "kernel" / "kbuild.sh"), *args], env=env)


def test_stale_index_lock_removed(tmp_path):
    """The lock an interrupted git left goes, with a note; git works."""
    cache, src, _ = fake_cache(tmp_path)
    lock = src / ".git" / "index.lock"
    lock.write_bytes(b"\0" * 64)
    # the failure it guards: git refuses to work in the tree
    p = run(["git", "-C", str(src), "checkout", "-q", "-f", "base"])
    assert p.returncode != 0 and "index.lock" in p.stderr
    p = kbuild(cache, "srctree")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(src)
    assert not lock.exists()
    assert "removed src/linux-7.3.4-1~bpo13+1/.git/index.lock" in p.stderr
    p = run(["git", "-C", str(src), "checkout", "-q", "-f", "base"])
    assert p.returncode == 0, p.stderr
    # nothing to remove: nothing said
    p = kbuild(cache, "srctree")
    assert p.returncode == 0 and "removed" not in p.stderr


def test_stale_lock_removed_under_check_lock(tmp_path):
    """check.py holds the tree's lock itself and says so; kbuild.sh then
    clears the stale lock without taking the lock again."""
    cache, src, _ = fake_cache(tmp_path)
    lock = src / ".git" / "HEAD.lock"
    lock.write_text("")
    p = kbuild(cache, "srctree", LAN743X_SRC_LOCKED="1")
    assert p.returncode == 0, p.stderr
    assert not lock.exists()


def test_worktree_lock_is_its_own(tmp_path):
    """A variant with a worktree of its own (bench) clears the worktree's
    stale lock, never the main tree's (another run may hold that one)."""
    cache, src, wt_gitdir = fake_cache(tmp_path)
    main_lock = src / ".git" / "index.lock"
    main_lock.write_text("")
    wt_lock = os.path.join(wt_gitdir, "index.lock")
    with open(wt_lock, "w", encoding="utf-8"):
        pass
    # kbuild.sh's functions without its last line (main), $0 its own path
    env = dict(os.environ, LAN743X_LAB_CACHE=str(cache), STACK="net-next-1")
    env.pop("LAB_BASE", None)
    kb = LAB / "kernel" / "kbuild.sh"
    p = run(["bash", "-c", "source <(sed '$d' \"$0\") && with_src_lock bench",
             str(kb)], env=env)
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(wt_lock)
    assert main_lock.exists()
