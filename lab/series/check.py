#!/usr/bin/env python3
"""NIPA-style per-patch checks of the stacks (``make check``).

Every stack of lab.conf (or those named with --stack) is checked on its
own base, after its parent stacks' patches (net-next on 7.3 + net). For
patch i of a stack the tree is that start + patches 1..i. On it we run, in
order:

  build-x86   lan743x built for x86_64 with W=1 (the guest config)
  sparse      sparse (C=2) over the lan743x files
  build-arm   lan743x cross-built for ARMv7 (imx_v6_v7_defconfig) with W=1
  checkpatch  scripts/checkpatch.pl --strict on the patch
  kernel-doc  scripts/kernel-doc -Wall -none on the files the patch
              touches
  coccinelle  scripts/coccinelle/**/*.cocci (report mode) on the touched
              lan743x_* files, once for the whole stack: its last patch
              against its start; only when that adds a finding is each
              patch checked, to name the one that adds it (spatch is the
              most expensive check: per patch it took half of a cold
              run's check time). A finding that one patch adds and a later
              patch of the same stack removes is not seen.
  py-lint     ruff check and pylint --disable=R (the tree's .pylintrc) on
              the touched tools/testing/selftests/**/*.py files, as
              netdev's patchwork checks run them; import resolution
              (E0401, E0611) is left out: it depends on the sys.path the
              selftest library sets up at run time, not on the code

A check fails only on what the patch introduces: its diagnostics are
compared with the same check on the tree before the patch (base for the
first one), and the new ones are reported with file:line. A build that
breaks fails outright. Results are cached by tree, patch and tool
versions, so a warm run on an unchanged series takes seconds.
"""

import argparse
import collections
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
ROOT = LAB.parent
DRV = "drivers/net/ethernet/microchip"
CHECKS = ["build-x86", "sparse", "build-arm", "checkpatch", "kernel-doc",
          "coccinelle", "py-lint"]
#: stacks whose Python is not linted, with the reason
NO_PY_LINT = {
    "6.12": "the backport's selftests are net-next's adapted to 6.12's "
            "library, for boards; the linted ones are net-next's, which go "
            "upstream",
    "6.12-2": "the backport's selftests are net-next's adapted to 6.12's "
              "library, for boards; the linted ones are net-next's, which "
              "go upstream",
}
#: the Python files py-lint looks at
PY_RE = re.compile(r"^tools/testing/selftests/.*\.py$")
#: "file:line:col: CODE [*] message" (ruff --output-format=concise, pylint)
LINT_RE = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):\d+: "
                     r"(?P<code>[A-Z]+\d+)(?::| \[\*\])? (?P<msg>.*)$")
T0 = time.time()

DIAG_RE = re.compile(
    r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
    r"(?P<kind>warning|error|note|Error|Warning)?:?\s*(?P<msg>.*)$")


def progress(msg):
    """MSG on stderr, after the seconds since the start."""
    print(f"[{int(time.time() - T0):4d}s] {msg}", file=sys.stderr, flush=True)


def run(cmd, cwd=None, env=None, check=False):
    """(status, stdout and stderr) of CMD; with CHECK, exit if it fails."""
    p = subprocess.run(cmd, cwd=cwd, env=env, text=True, errors="replace",
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       check=False)
    if check and p.returncode:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{p.stdout}")
    return p.returncode, p.stdout


def lab_conf(stack, expr):
    """Evaluate a shell expression with common.sh loaded for STACK."""
    rc, out = run(["bash", "-c", f'. "{LAB}/common.sh" && {expr}'],
                  env=dict(os.environ, STACK=stack))
    if rc:
        sys.exit(out.rstrip())
    return out.strip()


#: kbuild.sh's switch to the check's own worktree and O= directories
CHECK_TREE = "LAN743X_CHECK_TREE"


def kbuild(*args, env=None):
    """The last line lab/kernel/kbuild.sh ARGS prints (a path); its other
    lines go to stderr. Exits if it fails."""
    rc, out = run(["bash", str(LAB / "kernel" / "kbuild.sh"), *args],
                  env=env)
    if rc:
        sys.exit(out.rstrip() or f"error: kbuild.sh {' '.join(args)} failed")
    lines = [line for line in out.splitlines() if line.strip()]
    for line in lines[:-1]:
        print(line, file=sys.stderr)
    return lines[-1]


def git(src, *args, check=True):
    """git ARGS in SRC: its output; with CHECK, raise if it fails."""
    rc, out = run(["git", "-C", str(src), *args])
    if check and rc:
        raise RuntimeError(f"git {' '.join(args)}: {out}")
    return out.strip()


def norm_path(path, src, obj=None):
    """Make a diagnostic's path relative to the source tree."""
    p = path
    for prefix in filter(None, [str(src), str(obj) if obj else None]):
        if p.startswith(prefix + "/"):
            p = p[len(prefix) + 1:]
    while p.startswith(("../", "./")):
        p = p.split("/", 1)[1]
    return p


#: a coccinelle report (coccilib.report.print_report): "file:line:col-col:
#: message", the message free-form ("WARNING: ...", "ERROR: ...", "WARNING
#: opportunity for ...")
COCCI_RE = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):\d+-\d+: "
                      r"(?P<msg>.*)$")


def parse_cocci(text, src):
    """[(file, line, message)] of spatch's reports in TEXT."""
    return [(norm_path(m["file"], src), int(m["line"]), m["msg"].strip())
            for m in map(COCCI_RE.match, (ln.strip() for ln in
                                          text.splitlines())) if m]


#: kernel-doc's own format since its Python rewrite (7.3): "Warning:
#: file:line message" (6.12's Perl one writes "file:line: warning: ...",
#: which parse_diags reads)
#: ("Warning: 174", a line alone, is one it writes for some comments: a
#: finding in the file it was given)
KDOC_RE = re.compile(r"^(?P<kind>Warning|Error): (?:(?P<file>[^\s:]+):)?"
                     r"(?P<line>\d+)(?::? (?P<msg>.*))?$")


def parse_kdoc(text, src, f):
    """[(file, line, message)] of kernel-doc's "Warning: file:line ..."
    lines in TEXT, kernel-doc having been run on F."""
    return [(norm_path(m["file"], src) if m["file"] else f, int(m["line"]),
             f"{m['kind'].lower()}: {(m['msg'] or '').strip()}")
            for m in map(KDOC_RE.match, (ln.strip() for ln in
                                         text.splitlines())) if m]


def parse_diags(text, src, obj=None, only=DRV + "/lan743x"):
    """Return [(file, line, message)] of compiler-style diagnostics."""
    diags = []
    for raw in text.splitlines():
        m = DIAG_RE.match(raw.strip())
        if not m or not m.group("kind"):
            continue
        f = norm_path(m.group("file"), src, obj)
        if only and not f.startswith(only):
            continue
        if m.group("kind").lower() == "note":
            continue
        diags.append((f, int(m.group("line")),
                      f"{m.group('kind').lower()}: {m.group('msg')}"))
    return diags


#: the option gcc names at the end of a warning it was asked for
GCC_OPTION_RE = re.compile(r"\[-W[^\]]+\]$")
#: CPU seconds spatch may spend on one script and file before it is
#: stopped (prlimit; SIGXCPU); reaching it is a failure of the check
#: (tool_failures), not a clean result. CPU time, not wall-clock: make
#: test runs the check at a low priority beside the tests (lab/test.sh),
#: which stretches its wall-clock time by any amount. spatch's own
#: --timeout counts wall-clock seconds: SPATCH_WALL, a bound on a hang.
SPATCH_TIMEOUT = int(os.environ.get("LAN743X_SPATCH_TIMEOUT", "120"))
SPATCH_WALL = 30 * SPATCH_TIMEOUT
#: lines by which a tool says it gave up rather than reported
TOOL_FAIL_RE = {
    # kernel-doc exits 0 when it cannot read a file; a crash is Python's
    "kernel-doc": re.compile(r"^(Error: .*|Traceback \(most recent .*)$"),
    # spatch's words for a timeout and an exception (strings of spatch)
    "spatch": re.compile(r"^(.*timeout \(we abort\).*|Timeout at .*|"
                         r".*Common\.Timeout.*|EXN.*|Fatal error.*)$"),
}


def runnable_cocci(script):
    """Whether spatch can run SCRIPT here: one with OCaml rules needs an
    OCaml compiler (spatch exits 255 without one, "No OCaml compiler
    found!"), which the lab does not install; such scripts are left out,
    as every check of theirs would fail alike on the base and the patch."""
    if shutil.which("ocamlopt") or shutil.which("ocamlopt.opt"):
        return True
    return not re.search(r"^@\s*(script|initialize|finalize)\s*:\s*ocaml",
                         script.read_text(errors="replace"), re.MULTILINE)


def tool_failures(tool, f, rc, out):
    """[(file, 0, message)] when TOOL failed on F instead of reporting:
    a line that says it gave up, or a non-zero exit status (spatch;
    kernel-doc's is 0 even when it cannot read the file). A check compares
    them as diagnostics: one the patch brings is a failure, one the base
    already has is not."""
    why = [ln.strip() for ln in out.splitlines()
           if TOOL_FAIL_RE[tool].match(ln.strip())]
    if tool == "spatch" and rc == -signal.SIGXCPU:
        why = [f"stopped after {SPATCH_TIMEOUT} s of CPU (SIGXCPU)"]
    if tool == "spatch" and rc and not why:
        why = [f"exit status {rc}: " +
               (out.strip().splitlines() or ["no output"])[-1]]
    return [(f, 0, f"{tool} failed: {w}") for w in why]


#: a line number inside a message ("Return ... on line 2217"): a patch
#: that moves the code does not make the message new
MSG_LINE_RE = re.compile(r"\bline \d+")


def new_diags(before, after):
    """Diagnostics in 'after' beyond those in 'before' (line-insensitive,
    also for line numbers inside the messages)."""
    def key(f, msg):
        return f, MSG_LINE_RE.sub("line N", msg)
    left = collections.Counter(key(f, msg) for f, _, msg in before)
    out = []
    for f, line, msg in after:
        if left[key(f, msg)] > 0:
            left[key(f, msg)] -= 1
        else:
            out.append((f, line, msg))
    return out


#: Part of the results' cache key with the build directories (keyed by base,
#: configs and compiler) and the linters' versions. Bump it when a check, its
#: parsing or the way lab/kernel/kbuild.sh builds a tree changes what a check
#: reports; edits that change no result (moves, comments, lint) keep it, so
#: they do not turn a warm `make check` cold.
CHECKS_REVISION = 1
#: coccinelle's own revision in its cache keys: 3 since its reports are
#: parsed as spatch writes them (parse_cocci); before, none was read
COCCI_REV = 3
#: kernel-doc's: 3 since it runs with -Wall and 7.3's "Warning: file:line"
#: lines are read
KDOC_REV = 3


def lint_versions():
    """ruff's and pylint's versions (part of the results' cache key)."""
    out = []
    for cmd in ([sys.executable, "-m", "ruff", "--version"],
                [sys.executable, "-m", "pylint", "--version"]):
        try:
            out.append(subprocess.run(cmd, capture_output=True, text=True,
                                      check=False).stdout)
        except OSError:
            out.append("none")
    return "|".join(out)


class Checker:
    """The checks of one stack (or directory of patches) on its base."""

    def __init__(self, args):
        self.args = args
        self.passed = self.failed = 0      # run()'s counts
        self.src = Path(kbuild("srctree"))
        self.obj = {}
        self.cache = Path(os.environ.get(
            "LAN743X_LAB_CACHE",
            Path.home() / ".cache" / "lan743x-lab")) / "check-results"
        self.cache.mkdir(parents=True, exist_ok=True)
        # keyed by the O= directories of the main tree: the check's own
        # (CHECK_TREE) follow from the same inputs, and results cached
        # before it had them stay valid
        main_env = {k: v for k, v in os.environ.items() if k != CHECK_TREE}
        objdirs = "".join(kbuild("objdir", v, env=main_env)
                          for v in ("guest", "armv7-imx"))
        objdirs += "sparse-lab-2"  # the lab's own sparse (see state_sparse)
        self.version = hashlib.sha256(
            f"checks {CHECKS_REVISION}".encode() + objdirs.encode() +
            lint_versions().encode()
        ).hexdigest()[:12]
        self.state_cache = {}
        self.sparse = lab_conf(args.stack.split(":")[0], "sparse_bin")

    # -- tree handling -------------------------------------------------
    def objdir(self, variant):
        """VARIANT's prepared build directory (prepared once)."""
        if variant not in self.obj:
            progress(f"preparing the {variant} build tree")
            self.obj[variant] = Path(kbuild("prepare", variant))
        return self.obj[variant]

    def touched(self, patch):
        """The files PATCH changes."""
        files = []
        for line in Path(patch).read_text(encoding="utf-8",
                                          errors="replace").splitlines():
            m = re.match(r"^\+\+\+ b/(\S+)", line)
            if m:
                files.append(m.group(1))
        return files

    # -- state checks (run on a tree, compared parent vs child) ---------
    def build(self, variant, extra, fresh=True):
        """Build the driver's directory for VARIANT with make options EXTRA:
        (status, output, build directory). FRESH: every object compiled
        again (each file's warnings are printed)."""
        obj = self.objdir(variant)
        for o in (obj / DRV).glob("lan743x*.o") if fresh else ():
            o.unlink()
        arch = (["ARCH=arm", "CROSS_COMPILE=arm-linux-gnueabihf-"]
                if variant == "armv7-imx" else ["ARCH=x86_64"])
        cc = "arm-linux-gnueabihf-gcc" if variant == "armv7-imx" else "gcc"
        env = dict(os.environ, KBUILD_MODPOST_WARN="1")
        if subprocess.run(["which", "ccache"], capture_output=True,
                          check=False).returncode == 0:
            env.setdefault("CCACHE_DIR", str(self.cache.parent / "ccache"))
            cc = "ccache " + cc
        rc, out = run(["make", "-s", "-C", str(self.src), f"O={obj}", *arch,
                       f"CC={cc}", f"-j{os.cpu_count()}", *extra,
                       DRV + "/"], env=env)
        return rc, out, obj

    def state_build(self, variant):
        """The W=1 build's diagnostics of VARIANT."""
        # -Wno-error: CONFIG_WERROR would turn a new W=1 warning into a
        # build failure; we want it reported as what it is
        rc, out, obj = self.build(variant, ["W=1", "KCFLAGS=-Wno-error"])
        diags = parse_diags(out, self.src, obj)
        return {"ok": rc == 0, "diags": diags,
                "tail": "" if rc == 0 else "\n".join(out.splitlines()[-25:])}

    def state_sparse(self):
        """sparse's diagnostics (C=2) of the guest build."""
        # the lab's own sparse (lab/common.sh sparse_bin): the kernel turns
        # C=2 off with only a warning when its checker is too old
        # C=2 runs sparse over every file whether or not it is compiled;
        # with build-x86's options the objects build-x86 has just made are
        # up to date and not compiled again. What is compiled (a tree
        # build-x86 has not built) prints gcc's warnings, which are
        # build-x86's to report: each ends in its option, "[-W...]"
        rc, out, obj = self.build("guest", ["W=1", "KCFLAGS=-Wno-error",
                                            "C=2", f"CHECK={self.sparse}"],
                                  fresh=False)
        if "is not available or not up to date" in out:
            return {"ok": False, "diags": [],
                    "tail": "sparse did not run: " + "\n".join(
                        ln for ln in out.splitlines() if "C=2" in ln)}
        diags = [d for d in parse_diags(out, self.src, obj)
                 if not GCC_OPTION_RE.search(d[2])]
        return {"ok": rc == 0, "diags": diags,
                "tail": "" if rc == 0 else "\n".join(out.splitlines()[-25:])}

    def state_kerneldoc(self, files):
        """kernel-doc -Wall -none's diagnostics of the C files among FILES."""
        diags, tool_failed = [], False
        for f in files:
            if not (self.src / f).exists() or not re.search(r"\.[ch]$", f):
                continue
            # -Wall: netdev's CI runs it so (return values, short
            # descriptions)
            rc, out = run([str(self.src / "scripts/kernel-doc"), "-Wall",
                           "-none", f], cwd=self.src)
            diags += parse_diags(out, self.src, only=None)
            diags += parse_kdoc(out, self.src, f)
            failed = tool_failures("kernel-doc", f, rc, out)
            diags += failed
            tool_failed = tool_failed or bool(failed)
        return {"ok": True, "diags": diags, "tool_failed": tool_failed}

    def cocci_scripts(self):
        """The tree's coccinelle scripts."""
        base = self.src / "scripts/coccinelle"
        return sorted(p for p in base.rglob("*.cocci"))

    def state_cocci(self, files):
        """The report-mode coccinelle scripts' diagnostics of the driver's
        C files among FILES (cached by file content)."""
        diags, tool_failed = [], False
        cfiles = [f for f in files if re.match(DRV + r"/lan743x_\w+\.c$", f)
                  and (self.src / f).exists()]
        for f in cfiles:
            h = hashlib.sha256((self.src / f).read_bytes()).hexdigest()
            key = self.cache / f"cocci-{h}-{self.version}-r{COCCI_REV}.json"
            if key.exists():
                diags += [tuple(d) for d in json.loads(key.read_text())]
                continue
            scripts = [s for s in self.cocci_scripts()
                       if "virtual report" in s.read_text(errors="replace")
                       and runnable_cocci(s)]

            def spatch(script, f=f):
                # SIGXCPU at the limit (SIGKILL 5 s after, if ignored)
                return run(["prlimit",
                            f"--cpu={SPATCH_TIMEOUT}:{SPATCH_TIMEOUT + 5}",
                            "spatch", "-D", "report", "--very-quiet",
                            "--no-show-diff", "--no-includes",
                            "--include-headers", "--timeout",
                            str(SPATCH_WALL), "--cocci-file",
                            str(script), f], cwd=self.src)
            # spatch is single-threaded: one script per core at a time,
            # the reports kept in the scripts' order
            with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                outs = list(pool.map(spatch, scripts))
            fd, failed = [], []
            for s, (rc, out) in zip(scripts, outs):
                for d in parse_cocci(out, self.src):
                    fd.append((d[0], d[1], f"{s.name}: {d[2]}"))
                failed += [(d[0], d[1], f"{s.name}: {d[2]}")
                           for d in tool_failures("spatch", f, rc, out)]
            # a failed or timed-out script is not cached: it runs again
            if not failed:
                key.write_text(json.dumps(fd))
            tool_failed = tool_failed or bool(failed)
            diags += fd + failed
        return {"ok": True, "diags": diags, "tool_failed": tool_failed}

    def state_pylint(self, files):
        """ruff's and pylint's diagnostics of the selftests among FILES."""
        diags = []
        rc_file = self.src / ".pylintrc"
        for f in files:
            if not PY_RE.match(f) or not (self.src / f).exists():
                continue
            _, out = run([sys.executable, "-m", "ruff", "check", "--no-cache",
                          "--output-format=concise", f], cwd=self.src)
            _, out2 = run([sys.executable, "-m", "pylint", "--disable=R",
                           "--disable=import-error,no-name-in-module",
                           "--score=n"] +
                          ([f"--rcfile={rc_file}"] if rc_file.exists()
                           else []) + [f], cwd=self.src)
            for tool, text in (("ruff", out), ("pylint", out2)):
                for raw in text.splitlines():
                    m = LINT_RE.match(raw.strip())
                    if m:
                        diags.append((norm_path(m["file"], self.src),
                                      int(m["line"]),
                                      f"{tool} {m['code']}: {m['msg']}"))
        return {"ok": True, "diags": diags}

    def state(self, name, files):
        """Run state check 'name' on the current tree, cached by tree id."""
        tree = git(self.src, "rev-parse", "HEAD^{tree}")
        fkey = ",".join(sorted(files))
        # coccinelle's states and per-file results carry COCCI_REV: the
        # revision of how its output is read
        rev = {"coccinelle": f"|cocci-{COCCI_REV}",
               "kernel-doc": f"|kdoc-{KDOC_REV}"}.get(name, "")
        key = hashlib.sha256(
            f"{name}|{tree}|{fkey}|{self.version}{rev}".encode()
        ).hexdigest()[:24]
        path = self.cache / f"state-{key}.json"
        if path.exists():
            return json.loads(path.read_text())
        t = time.time()
        if name == "build-x86":
            r = self.state_build("guest")
        elif name == "build-arm":
            r = self.state_build("armv7-imx")
        elif name == "sparse":
            r = self.state_sparse()
        elif name == "kernel-doc":
            r = self.state_kerneldoc(files)
        elif name == "coccinelle":
            r = self.state_cocci(files)
        elif name == "py-lint":
            r = self.state_pylint(files)
        else:
            raise ValueError(name)
        r["diags"] = [list(d) for d in r["diags"]]
        r["secs"] = round(time.time() - t, 1)
        # a tool that failed (a time limit, a crash) is run again next
        # time, not remembered as this tree's result
        if not r.pop("tool_failed", False):
            path.write_text(json.dumps(r))
        return r

    # -- patch checks ---------------------------------------------------
    def checkpatch(self, patch):
        """checkpatch.pl --strict on PATCH: (ok, problems)."""
        # The bases are Debian's source tarballs, without upstream's git
        # history: checkpatch cannot look up a Fixes: tag's commit there
        # (UNKNOWN_COMMIT_ID). Its format is still checked (GIT_COMMIT_ID);
        # the ids themselves are checked against upstream's history by hand.
        rc, out = run([str(self.src / "scripts/checkpatch.pl"), "--strict",
                       "--ignore", "UNKNOWN_COMMIT_ID",
                       "--no-color", "--show-types", str(patch)],
                      cwd=self.src)
        problems = []
        lines = out.splitlines()
        for i, line in enumerate(lines):
            if re.match(r"^(ERROR|WARNING|CHECK):", line):
                where = ""
                for nxt in lines[i + 1:i + 3]:
                    m = re.search(r"FILE: (\S+)", nxt)
                    if m:
                        where = m.group(1)
                        break
                problems.append(f"{where or Path(patch).name}: {line}")
        # The stored patches carry no Signed-off-by: only the human who
        # submits them can sign them off (make export SIGNOFF=1), so
        # MISSING_SIGN_OFF is the one problem let through; with it
        # checkpatch exits non-zero, so its exit status alone no longer
        # tells. Anything else, a sign-off problem included, still fails.
        nosob = [p for p in problems if ":MISSING_SIGN_OFF:" in p]
        problems = [p for p in problems if p not in nosob]
        # FILE_PATH_CHANGES ("does MAINTAINERS need updating?") comes with
        # every added or deleted file. When each such file is already in
        # a directory a MAINTAINERS entry lists (a new test of
        # drivers/net/hw, say), nothing needs updating: not a problem.
        kept = [p for p in problems if "FILE_PATH_CHANGES" not in p]
        if len(kept) < len(problems) and self.maintained(patch):
            return not kept, kept
        if nosob:
            ok = not problems and "total: " in out
            return ok, problems or ([] if ok else [out[-500:]])
        ok = rc == 0 and not problems
        return ok, problems

    def maintained(self, patch):
        """Whether every file @patch adds or deletes lies in a directory
        (F: dir/) of the tree's MAINTAINERS."""
        text = Path(patch).read_text(encoding="utf-8", errors="replace")
        files = re.findall(r"^diff --git a/(\S+) b/\S+\n(?:new|deleted) file mode",
                           text, re.MULTILINE)
        mnt = self.src / "MAINTAINERS"
        if not files or not mnt.exists():
            return False
        dirs = re.findall(r"^F:\s+(\S+/)$", mnt.read_text(errors="replace"),
                          re.MULTILINE)
        return all(any(f.startswith(d) for d in dirs) for f in files)

    def run(self):
        """Check every patch in turn; prints the results, returns 1 if any
        check failed."""
        patches = self.args.patches
        checks = self.args.checks
        src = self.src
        results = []  # (patch, check, ok, details)
        git(src, "am", "--abort", check=False)
        git(src, "checkout", "-q", "-f", "base")
        git(src, "clean", "-fdq")
        for patch in self.args.parents:
            rc, out = run(["git", "-C", str(src), "am", "-q", patch])
            if rc:
                git(src, "am", "--abort", check=False)
                git(src, "checkout", "-q", "-f", "base")
                print(f"FAIL {Path(patch).name} apply (parent stack)")
                self.passed, self.failed = 0, 1
                print(f"check: 0 passed, 1 failed ({len(patches)} patches)")
                return 1
        prev = {}
        start = git(src, "rev-parse", "HEAD")
        applied = []  # (name, commit, files) of each patch applied
        for patch in [None] + patches:
            if patch is not None:
                name = Path(patch).name
                rc, out = run(["git", "-C", str(src), "am", "-q", str(patch)])
                if rc:
                    git(src, "am", "--abort", check=False)
                    results.append((name, "apply", False,
                                    out.strip().splitlines()[-6:]))
                    self.report(results[-1])
                    break
                files = self.touched(patch)
            else:
                name = "base" + (" + parents" if self.args.parents else "")
                files = []
            # files whose kernel-doc/coccinelle results we compare:
            # those the *next* patch touches are measured on this state
            # too, so compute per pair below instead.
            cur = {}
            for c in checks:
                if c in ("build-x86", "sparse", "build-arm"):
                    progress(f"{name}: {c}")
                    cur[c] = self.state(c, [])
            if patch is None:
                prev = cur
                base_bad = [c for c, r in cur.items() if not r["ok"]]
                if base_bad:
                    sys.exit(f"error: the base itself fails {base_bad}: "
                             "is the toolchain installed? (make setup)")
                continue
            applied.append((name, git(src, "rev-parse", "HEAD"), files))
            for c in checks:
                if c == "coccinelle":
                    continue  # once for the stack, below
                if c == "checkpatch":
                    ok, det = self.checkpatch(patch)
                elif c in ("kernel-doc", "py-lint"):
                    ok, det = self.compare(c, name, files)
                else:
                    r = cur[c]
                    if not r["ok"]:
                        ok, det = False, ["build failed:"] + \
                            r["tail"].splitlines()
                    else:
                        new = new_diags([tuple(d) for d in prev[c]["diags"]],
                                        [tuple(d) for d in r["diags"]])
                        ok = not new
                        det = [f"{f}:{ln}: {m}" for f, ln, m in new]
                results.append((name, c, ok, det))
                self.report(results[-1])
            prev = cur
        if "coccinelle" in checks and applied:
            results += self.cocci_stack(start, applied)
        git(src, "checkout", "-q", "-f", "base")
        failed = [r for r in results if not r[2]]
        self.passed, self.failed = len(results) - len(failed), len(failed)
        print(f"check {self.args.stack}: {self.passed} passed, "
              f"{self.failed} failed ({len(patches)} patches, "
              f"{int(time.time() - T0)}s)", flush=True)
        return 1 if failed else 0

    def compare(self, check, name, files, since="HEAD~1"):
        """State check CHECK on FILES at HEAD (patch NAME, or NAME the
        stack's patches) against SINCE: (ok, the diagnostics HEAD adds)."""
        progress(f"{name}: {check}")
        after = self.state(check, files)
        parent = git(self.src, "rev-parse", since)
        head = git(self.src, "rev-parse", "HEAD")
        git(self.src, "checkout", "-q", parent)
        before = self.state(check, files)
        git(self.src, "checkout", "-q", head)
        new = new_diags([tuple(d) for d in before["diags"]],
                        [tuple(d) for d in after["diags"]])
        return not new, [f"{f}:{ln}: {m}" for f, ln, m in new]

    def cocci_stack(self, start, applied):
        """coccinelle on the stack's last commit against START, for the
        files its patches (APPLIED: name, commit, files) touch; if that
        adds a finding, each patch against its parent too, so that the
        report names the patch that adds it. The results to report."""
        src = self.src
        files = sorted({f for _, _, fs in applied for f in fs})
        first, last = applied[0][0], applied[-1][0]
        what = (last if len(applied) == 1 else
                f"{first[:4]}..{last[:4]} (the stack's result)")
        git(src, "checkout", "-q", applied[-1][1])
        ok, det = self.compare("coccinelle", what, files, since=start)
        if ok:
            r = (what, "coccinelle", True, [])
            self.report(r)
            return [r]
        results = []
        for name, commit, fs in applied:
            git(src, "checkout", "-q", commit)
            ok, pdet = self.compare("coccinelle", name, fs)
            if not ok:
                results.append((name, "coccinelle", ok, pdet))
                self.report(results[-1])
        if len(applied) > 1 or not results:
            results.append((what, "coccinelle", False, det))
            self.report(results[-1])
        return results

    def report(self, r):
        """Print one result (patch, check, ok, details)."""
        name, check, ok, det = r
        print(f"{'PASS' if ok else 'FAIL'} {self.args.stack}/{name} {check}",
              flush=True)
        for d in det[:40]:
            print(f"    {d}", flush=True)


def series(pdir):
    """The patches of directory PDIR, the cover letter left out."""
    return sorted(str(p.resolve()) for p in Path(pdir).glob("*.patch")
                  if not p.name.startswith("0000-"))


def check_stack(args, stack, patches_dir=None):
    """Check one stack on its base; returns (passed, failed, rc)."""
    args = argparse.Namespace(**vars(args))
    args.stack = stack
    os.environ["STACK"] = stack
    os.environ.pop("LAB_BASE", None)
    base = lab_conf(stack, 'echo "$LAB_BASE"')
    if patches_dir is None:
        args.patches = series(ROOT / "patches" / stack)
        args.parents = lab_conf(stack, "parent_series").split()
    else:
        args.stack = f"{stack}:{Path(patches_dir).name}"
        args.patches = series(patches_dir)
        args.parents = []
    if not args.patches:
        print(f"check {args.stack}: no patches: nothing to check")
        return 0, 0, 0
    if stack in NO_PY_LINT and "py-lint" in args.checks:
        args.checks = [c for c in args.checks if c != "py-lint"]
        print(f"check {stack}: no py-lint: {NO_PY_LINT[stack]}", flush=True)
    # The check works in a worktree of the base and O= directories of its
    # own (kbuild.sh, CHECK_TREE): VM kernels and modules, built from the
    # main tree, build beside it, and so do the checks of fixture patches
    # (a tree of theirs). One check of a tree at a time (kbuild.sh takes
    # the same lock; our children are told we hold it).
    os.environ[CHECK_TREE] = "check-fixtures" if patches_dir else "check"
    cache = Path(os.environ.get("LAN743X_LAB_CACHE",
                                Path.home() / ".cache" / "lan743x-lab"))
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"src-{base}-{os.environ[CHECK_TREE]}.lock", "w",
              encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"waiting for another check of the {base} base")
            fcntl.flock(lock, fcntl.LOCK_EX)
        os.environ["LAN743X_SRC_LOCKED"] = "1"
        try:
            c = Checker(args)
            rc = c.run()
            return c.passed, c.failed, rc
        finally:
            os.environ.pop("LAN743X_SRC_LOCKED", None)


def main():
    """Check the stacks (or a directory of patches) the options name."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--stack", default="",
                    help="comma-separated stacks to check (default: all "
                    "of lab.conf's STACKS, each on its base)")
    ap.add_argument("--patches", default=None,
                    help="check this directory of patches instead, on the "
                    "base of --stack (default: the default stack), without "
                    "parents (lab fixtures)")
    ap.add_argument("--checks", default=",".join(CHECKS),
                    help="comma-separated subset of " + ",".join(CHECKS))
    args = ap.parse_args()
    args.checks = [c for c in args.checks.split(",") if c]
    bad = [c for c in args.checks if c not in CHECKS]
    if bad:
        sys.exit(f"error: unknown check(s) {bad}; known: {CHECKS}")
    all_stacks = lab_conf(os.environ.get("STACK", "") or "net-next-2",
                          'echo "$STACKS"').split()
    stacks = [s for s in args.stack.split(",") if s] or (
        [os.environ.get("STACK") or lab_conf("net-next-2", 'echo "$STACK_DEFAULT"')]
        if args.patches else all_stacks)
    unknown = [s for s in stacks if s not in all_stacks]
    if unknown:
        sys.exit(f"error: unknown stack(s) {unknown}; lab.conf has {all_stacks}")
    for tool in ["git", "make", "gcc", "sparse", "arm-linux-gnueabihf-gcc",
                 "spatch", "perl", "prlimit"]:
        need = {"sparse": "sparse", "build-arm": "arm-linux-gnueabihf-gcc",
                "coccinelle": "spatch"}
        if tool in need.values() and not any(
                need.get(c) == tool for c in args.checks):
            continue
        if subprocess.run(["which", tool], capture_output=True,
                          check=False).returncode:
            sys.exit(f"error: '{tool}' not found; run 'make setup' first")
    if "py-lint" in args.checks and subprocess.run(
            [sys.executable, "-c", "import pylint, ruff"],
            capture_output=True, check=False).returncode:
        sys.exit("error: pylint or ruff not found; run 'make setup' first")
    passed = failed = npatches = 0
    rc = 0
    for stack in stacks:
        p, f, r = check_stack(args, stack, args.patches)
        passed, failed, rc = passed + p, failed + f, rc or r
        npatches += len(series(args.patches or ROOT / "patches" / stack))
    print(f"check: {passed} passed, {failed} failed ({npatches} patches in "
          f"{len(stacks)} stack{'s' if len(stacks) > 1 else ''}, "
          f"{int(time.time() - T0)}s)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
