"""make tree / make export: round trip, refusal to lose work, bad input."""
import os
import subprocess

from conftest import ROOT, run

# an exporter whose identity is not a placeholder (lab/series/identity.sh)
EXPORTER_EMAIL = "ex.porter@mail.lan743x-lab.dev"
EXPORTER = f"Ex Porter <{EXPORTER_EMAIL}>"
ASSISTED = "Assisted-by: LLM coccinelle sparse"


def lab_env(tmp_path, **extra):
    """The default stack (net-next on 7.3, after the real patches/net),
    with its tree and patches in tmp_path and a known exporter identity."""
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f"[user]\n\tname = Ex Porter\n"
                         f"\temail = {EXPORTER_EMAIL}\n")
    env = dict(os.environ, LAN743X_TREE=str(tmp_path / "linux"),
               LAN743X_PATCHES=str(tmp_path / "patches"),
               GIT_CONFIG_GLOBAL=str(gitconfig))
    env.pop("STACK", None)
    env.pop("LAB_BASE", None)
    env.update(extra)
    return env


def patch_ids(pdir):
    """git patch-id of each patch in PDIR (the cover letter left out)."""
    ids = []
    for p in sorted(pdir.glob("*.patch")):
        if p.name.startswith("0000-"):
            continue
        with p.open(encoding="utf-8") as f:
            out = subprocess.run(["git", "patch-id", "--stable"], stdin=f,
                                 capture_output=True, text=True, check=False)
        ids.append(out.stdout.split()[0])
    return ids


def git(tree, *args, env=None):
    """git ARGS in TREE: its output (it must succeed)."""
    p = run(["git", "-C", str(tree), *args], env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


def commit_edit(tree, text, subject, env=None):
    """Append TEXT to lan743x_main.h in TREE and commit it as SUBJECT."""
    f = tree / "drivers/net/ethernet/microchip/lan743x_main.h"
    f.write_text(f.read_text() + text)
    git(tree, "commit", "-qam", subject, env=env)


def test_round_trip_and_refusal(tmp_path):
    """tree -> commits -> export -> tree gives the same patches; tree.sh
    refuses to overwrite unexported commits or uncommitted edits."""
    env = lab_env(tmp_path)
    (tmp_path / "patches").mkdir()
    p = run(["bash", "lab/series/tree.sh"], env=env)
    assert p.returncode == 0, p.stderr
    tree = tmp_path / "linux"
    # the tree is the base plus the parent stack (patches/net)
    assert git(tree, "rev-parse", "HEAD") == git(tree, "rev-parse",
                                                  "stack-base")
    # one commit by the exporting user (signed off by them in an earlier
    # export), one by somebody else who signed it off (a backport)
    commit_edit(tree, "/* one */\n",
                f"net: lan743x: one\n\nSigned-off-by: {EXPORTER}", env=env)
    commit_edit(tree, "/* two */\n", "net: lan743x: two\n\n"
                "Signed-off-by: Some One <some.one@kernel.dev>",
                env=dict(env, GIT_AUTHOR_NAME="Some One",
                         GIT_AUTHOR_EMAIL="some.one@kernel.dev"))
    # and one by the lab's old placeholder identity (v1's patches)
    ph = "Lab Developer <dev@lan743x-lab.invalid>"
    commit_edit(tree, "/* three */\n",
                "net: lan743x: three\n\nSigned-off-by: " + ph,
                env=dict(env, GIT_AUTHOR_NAME="Lab Developer",
                         GIT_AUTHOR_EMAIL="dev@lan743x-lab.invalid"))

    # local commits not exported: refuse, and say how
    p = run(["bash", "lab/series/tree.sh"], env=env)
    assert p.returncode != 0
    assert "make export" in p.stderr and "FORCE=1" in p.stderr

    p = run(["bash", "lab/series/export.sh"], env=env)
    assert p.returncode == 0, p.stderr
    pdir = tmp_path / "patches"
    names = sorted(x.name for x in pdir.glob("*.patch"))
    assert names[0] == "0000-cover-letter.patch" and len(names) == 4
    first = (pdir / names[1]).read_text()
    assert "Subject: [RFC PATCH net-next v4 1/3] net: lan743x: one" in first
    # the stored form: no Signed-off-by of the exporter or a placeholder,
    # somebody else's kept; the assistant's trailer once on every patch
    assert "From: Ex Porter <" + EXPORTER_EMAIL in first
    assert "Signed-off-by:" not in first
    second = (pdir / names[2]).read_text()
    assert "From: Some One <some.one@kernel.dev>" in second
    assert second.count("Signed-off-by:") == 1
    assert "Signed-off-by: Some One <some.one@kernel.dev>" in second
    third = (pdir / names[3]).read_text()
    assert "Signed-off-by:" not in third
    for text in (first, second, third):
        assert text.count(ASSISTED) == 1, text
    assert "base-commit:" in (pdir / names[0]).read_text()
    cover = (pdir / names[0]).read_text()
    assert "*** SUBJECT HERE ***" not in cover
    assert "continues Sven Van Asbroeck" in cover
    ids = patch_ids(pdir)

    # exported: re-creating the tree is allowed and round-trips
    p = run(["bash", "lab/series/tree.sh"], env=env)
    assert p.returncode == 0, p.stderr
    p = run(["bash", "lab/series/export.sh"], env=env)
    assert p.returncode == 0, p.stderr
    assert patch_ids(pdir) == ids
    assert git(tree, "log", "--format=%s", "stack-base..HEAD").split("\n")[:3] == [
        "net: lan743x: three", "net: lan743x: two", "net: lan743x: one"]

    # each patch is addressed as get_maintainer.pl says, the exporter left out
    assert "To: Bryan Whitehead <bryan.whitehead@microchip.com>" in first
    assert "netdev@vger.kernel.org" in first
    head = first.split("\nSubject:")[0]
    assert EXPORTER_EMAIL not in head.split("\nTo:", 1)[1]

    # the whole chain from one tree: "one" moves into the parent stack
    n_parent = len(list((ROOT / "patches/net-next-1").glob("0*.patch"))) - 1
    n_net = len(list((ROOT / "patches/net").glob("0*.patch"))) - 1
    proot = tmp_path / "proot"
    bad = run(["bash", "lab/series/export.sh"],
              env=dict(env, LAN743X_PATCHES_ROOT=str(proot), CHAIN="net=x"))
    assert bad.returncode != 0 and "stack net: x commits" in bad.stderr
    p = run(["bash", "lab/series/export.sh"],
            env=dict(env, LAN743X_PATCHES_ROOT=str(proot),
                     CHAIN=f"net={n_net} net-next-1={n_parent + 1}"))
    assert p.returncode == 0, p.stderr
    moved = sorted((proot / "net-next-1").glob("*.patch"))
    assert len(moved) == n_parent + 2
    assert "net-next v4 " in moved[-1].read_text()
    assert "net: lan743x: one" in moved[-1].read_text()
    assert len(list((proot / "net").glob("*.patch"))) == n_net + 1
    assert len(list(pdir.glob("*.patch"))) == 3
    assert git(tree, "rev-list", "--count", "stack-base..HEAD").strip() == "2"

    # uncommitted edits: refuse
    f = tree / "MAINTAINERS"
    f.write_text(f.read_text() + "x\n")
    p = run(["bash", "lab/series/tree.sh"], env=env)
    assert p.returncode != 0 and "uncommitted" in p.stderr


def test_signoff_is_the_exporters_once(tmp_path):
    """make export SIGNOFF=1: exactly one Signed-off-by per patch, the
    exporter's, who becomes the author of a placeholder's commit; refused,
    with nothing written, for a placeholder identity."""
    env = lab_env(tmp_path)
    pdir = tmp_path / "patches"
    pdir.mkdir()
    p = run(["bash", "lab/series/tree.sh"], env=env)
    assert p.returncode == 0, p.stderr
    tree = tmp_path / "linux"
    ph = "Seed 1 maintainers <maintainers@users.noreply.a-seed-1.example>"
    commit_edit(tree, "/* one */\n", "net: lan743x: one\n\n"
                f"Signed-off-by: {ph}\nSigned-off-by: {EXPORTER}",
                env=dict(env, GIT_AUTHOR_NAME="Seed 1 maintainers",
                         GIT_AUTHOR_EMAIL="maintainers@users.noreply."
                         "a-seed-1.example"))
    commit_edit(tree, "/* two */\n", "net: lan743x: two", env=env)

    # a placeholder exporter: refused, nothing written
    bad = tmp_path / "badconfig"
    bad.write_text("[user]\n\tname = Lab Developer\n"
                   "\temail = dev@lan743x-lab.invalid\n")
    p = run(["bash", "lab/series/export.sh"],
            env=dict(env, SIGNOFF="1", GIT_CONFIG_GLOBAL=str(bad)))
    assert p.returncode != 0 and "placeholder identity" in p.stderr
    assert not list(pdir.glob("*.patch"))
    p = run(["bash", "lab/series/export.sh"], env=dict(env, SIGNOFF="yes"))
    assert p.returncode != 0 and "SIGNOFF=yes" in p.stderr

    p = run(["bash", "lab/series/export.sh"], env=dict(env, SIGNOFF="1"))
    assert p.returncode == 0, p.stderr
    patches = sorted(pdir.glob("0*.patch"))[1:]
    assert len(patches) == 2
    for f in patches:
        text = f.read_text()
        sobs = [ln for ln in text.splitlines()
                if ln.startswith("Signed-off-by:")]
        assert sobs == [f"Signed-off-by: {EXPORTER}"], (f.name, sobs)
        assert f"From: {EXPORTER}" in text
        assert text.count(ASSISTED) == 1
        assert "noreply" not in text.split("\n---\n")[0]


def test_patch_that_does_not_apply_is_named(tmp_path):
    """tree.sh names the patch that does not apply and shows its hunk."""
    env = lab_env(tmp_path)
    pdir = tmp_path / "patches"
    pdir.mkdir()
    (pdir / "0001-net-lan743x-bogus.patch").write_text(
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: T <t@x.invalid>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n"
        "Subject: [PATCH] net: lan743x: bogus\n\n---\n"
        " drivers/net/ethernet/microchip/lan743x_main.h | 2 +-\n\n"
        "diff --git a/drivers/net/ethernet/microchip/lan743x_main.h "
        "b/drivers/net/ethernet/microchip/lan743x_main.h\n"
        "--- a/drivers/net/ethernet/microchip/lan743x_main.h\n"
        "+++ b/drivers/net/ethernet/microchip/lan743x_main.h\n"
        "@@ -1,3 +1,3 @@\n this line is not there\n-nor this\n+x\n"
        " nor that\n-- \n2.39\n")
    p = run(["bash", "lab/series/tree.sh"], env=env)
    assert p.returncode != 0
    assert "0001-net-lan743x-bogus.patch does not apply" in p.stderr
    assert "this line is not there" in p.stderr


def test_wrong_base_is_a_one_line_error(tmp_path):
    """A base package that does not exist is one line of error."""
    conf = tmp_path / "lab"
    conf.mkdir()
    for d in ("", "series", "kernel"):
        (conf / d).mkdir(exist_ok=True)
        for f in (ROOT / "lab" / d).iterdir():
            if f.is_file():
                (conf / d / f.name).write_text(f.read_text())
    text = (conf / "lab.conf").read_text().replace(
        "BASE_6_12_PKG=linux-source-6.12", "BASE_6_12_PKG=linux-source-9.99")
    (conf / "lab.conf").write_text(text)
    p = run(["bash", str(conf / "series" / "tree.sh")],
            env=lab_env(tmp_path, STACK="6.12"))
    assert p.returncode != 0
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: linux-source-9.99")
