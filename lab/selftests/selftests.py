#!/usr/bin/env python3
"""Run the series' kselftests in the VM, upstream vs series module.

Boots the guest kernel once with the emulated LAN7430 (lab/vm/vm.sh) and runs
the series' tests (its drivers/net/hw tests, HW_TESTS, on both bases;
a stack's own tools/testing/selftests/drivers/net/lan743x where it has
one)
against the upstream module (base) and the series' module (base +
patches/) in turn
(lab/guest/selftests.sh), the virtio-net peer in a network namespace as the
remote end. The KTAP results are compared with
lab/selftests/expected/<stack>.txt: any result other than the expected one
(a new failure, an expected failure that passes, a skip, a missing test)
fails the run.

On both bases the tests are installed the way kselftest CI and a board
install them (make -C tools/testing/selftests TARGETS="drivers/net/hw"
install INSTALL_PATH=..., plus drivers/net/lan743x where the stack has
it, which builds hw's and net/lib's C helpers and BPF objects with clang
against the base's headers) and run with the install's run_kselftest.sh
(-t for each of our hw tests, HW_TESTS, and -c drivers/net/lan743x where
it exists) and a net.config, with REMOTE_TYPE=netns;
LAN743X_REMOTE_MODES="netns ssh" adds a pass with REMOTE_TYPE=ssh (an
sshd in the peer's namespace; results named ssh.<test>, expected in the
same file; see docs/selftests.md), for the modules in
LAN743X_SSH_MODULES (default: series). The expected
results of a mode that does not run (for a module) are not asked for.
LAN743X_RUNNER=direct runs each test file directly instead.

The tests come from base + the selftest parts of patches/ (or --tree, a
kernel tree such as build/linux), copied into the results directory with
the net selftest library and ynl they import.

--arch armv7 (make selftests ARCH=armv7, make arm-selftests) runs the
same tests the same way in the ARMv7 guest of lab/vm/vm.sh: 32-bit,
highmem, non-coherent PCI DMA, the Linux 7.3 base with the armv7-virt
kernel and the modules built for it. That guest has no host file system:
the tests go into its initramfs and its results come back on the console
(vm.sh --dir, VM_ARM_OUT). The install is the x86_64 one's Python (tests,
net and hw libraries, ynl and its specs): the C helpers and BPF objects
that make install builds for drivers/net/hw and net/lib are not
cross-built (libbpf and ynl's C library would need armhf libelf and zlib,
which a Debian 12 host cannot install beside its own without adding a
dpkg architecture), so they are left out of the ARM install, listed in
results (not-for-arm.txt). Our hw tests use none of
them. Results are compared with lab/selftests/expected/net-next-2.txt, with
the differences of the ARM guest (each with its reason) in
lab/selftests/expected/net-next-2-armv7.txt, which overrides lines of the
first.

Exit status: 0 all as expected, 1 mismatch, 2 setup error, 77 QEMU with
the lan7430 model not available.
"""

import argparse
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import ksft_results
from ksft_results import KTAP, RESULTS, WHOLE, ktap_result
from reasons import MATCH, Expected, excerpt, false_reasons, kconfig_of

sys.path.append(str(Path(__file__).resolve().parents[1] / "vm"))
from crash import first_problem, retryable

LAB = Path(__file__).resolve().parents[1]
ROOT = LAB.parent
# expected results per stack (each on its own base and library)
EXPECTED = LAB / "selftests" / "expected"
T0 = time.time()
# what the tests import, relative to the kernel tree
TREE_PATHS = ["tools/testing/selftests",
              "tools/net/ynl",
              # the families' specs and the schemas ynl's generator
              # validates them with (genetlink*.yaml, one level up)
              "Documentation/netlink",
              # libbpf (net/bpf.mk builds it for the hw BPF objects):
              # its sources, the tools' copies of the UAPI headers, the
              # build helpers and per-arch headers it includes. A lab
              # cache grown from an earlier, fuller extraction had them;
              # a fresh machine does not (make install failed there)
              "tools/lib",
              "tools/include",
              "tools/build",
              "tools/arch",
              # what the kselftest Makefile includes (make install)
              "tools/scripts",
              "scripts/subarch.include",
              # what make install of drivers/net/hw builds with: ynl's C
              # library includes family headers from include/uapi and
              # its generator looks for MAINTAINERS to find the tree's
              # top (without it, it loops forever); libbpf generates
              # its helper definitions with scripts/bpf_doc.py
              "include/uapi",
              "scripts/bpf_doc.py",
              "MAINTAINERS"]
TESTDIR = "tools/testing/selftests/drivers/net/lan743x"
CACHE = Path(os.environ.get("LAN743X_LAB_CACHE",
                            Path.home() / ".cache/lan743x-lab"))
# What make install builds and installs (net/lib comes with them); the
# lan743x directory only where the stack has one (none has since v3 of
# the 6.12 backport, which dropped v2's lan743x tests as the 7.3 series did)
TARGETS = ["drivers/net/hw", "drivers/net/lan743x"]
# Our generic tests in drivers/net/hw (run_kselftest.sh -t each: no other
# hw test runs), those of them the stack has; their results are named
# <file>.<case>.
HW_TESTS = ("reconfig_traffic.py reconfig_alloc_fail.py napi_contract.py "
            "coalesce.py")


def targets(ksft):
    """The TARGETS the selftests tree KSFT has."""
    return [t for t in TARGETS if (ksft / t / "Makefile").exists()]
# The kernel's own generic driver tests (written upstream, not by us) run
# after ours against each module, per base: relative to drivers/net.
GENERIC_7_3 = ("ping.py stats.py queues.py hw/pp_alloc_fail.py napi_id.py "
               "ring_reconfig.py hw/irq.py hw/tso.py")
# the standard statistics (eth-mac, eth-ctrl, pause, rmon): bash tests of
# the forwarding library, with mausezahn traffic both ways. Not in the
# ARMv7 guest: its rootfs (lab/vm/rootfs-arm.sh) has no mausezahn or jq.
STD_STATS = "hw/ethtool_std_stats.sh hw/ethtool_rmon.sh"
GENERIC = {
    "6.12": "ping.py stats.py queues.py hw/pp_alloc_fail.py",
    "7.3": f"{GENERIC_7_3} {STD_STATS}",
}
# How the series' tests run, per base: "kselftest" (make install and
# run_kselftest.sh) or "direct" (each file run by itself, netns only); the
# remote modes (netns: the peer in a network namespace; ssh: the same
# tests again through an sshd in that namespace, REMOTE_TYPE=ssh); the
# modules the ssh mode runs for (the upstream module's netns results are
# the evidence that the tests fail on the bugs; over ssh it would repeat
# them at ~7 minutes a stack).
RUNNER = {"6.12": ("kselftest", "netns ssh", "series"),
          "7.3": ("kselftest", "netns ssh", "series")}
# a test program's own line in run_kselftest.sh's output
KSFT_PROG = re.compile(r"^(not )?ok \d+ selftests: (\S+): (\S+?)(?:\.py)?"
                       r"(?:\s+#\s*(\w+)?(.*))?$")


def progress(msg):
    """MSG on stderr, after the seconds since the start."""
    print(f"[{int(time.time() - T0):4d}s] {msg}", file=sys.stderr, flush=True)


def die(msg, code=2):
    """Exit with CODE, saying MSG."""
    print(f"selftests.py: error: {msg}", file=sys.stderr)
    sys.exit(code)


def last_line(cmd, what, code=2, env=None):
    """The last line CMD prints (a path); dies naming WHAT if it fails."""
    p = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, cwd=ROOT,
                       env=env, check=False)
    out = p.stdout.strip().splitlines()
    if p.returncode or not out:
        die(f"{what}: {' '.join(map(str, cmd))} failed (rc {p.returncode})",
            code)
    return out[-1]


def prepare_tests(dest, tree=None):
    """Copy the selftests (and what they import) of base + series to dest."""
    dest.mkdir(parents=True)
    if tree:
        for p in TREE_PATHS:
            if (Path(tree) / p).is_dir():
                shutil.copytree(Path(tree) / p, dest / p, symlinks=True)
            else:
                (dest / p).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(tree) / p, dest / p)
    else:
        src = last_line(["bash", str(LAB / "kernel" / "kbuild.sh"), "srcrepo"],
                        "base source repository")
        arch = subprocess.run(["git", "-C", src, "archive", "base"]
                              + TREE_PATHS, stdout=subprocess.PIPE,
                              check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
        # the whole chain of the stack (STACK, lab.conf): parents first
        chain = subprocess.run(
            ["bash", "-c", f'. "{LAB}/common.sh" && full_series'],
            text=True, capture_output=True, check=False)
        if chain.returncode:
            die(f"listing the stack's patches failed: {chain.stderr.strip()}")
        patches = [Path(p) for p in chain.stdout.split()]
        inc = [f"--include={p}/*" for p in TREE_PATHS]
        for p in patches:
            # only the hunks under TREE_PATHS: the rest is not extracted
            # not inside this repository's work tree (results/ is): git
            # apply would take the paths as relative to its top
            r = subprocess.run(["git", "apply", "-p1"] + inc + [str(p)],
                               cwd=dest, text=True, capture_output=True,
                               env=dict(os.environ, GIT_CEILING_DIRECTORIES=
                                        str(dest.parent)), check=False)
            if r.returncode:
                die(f"{p.name} does not apply to the extracted selftests: "
                    f"{r.stderr.strip()}")
    hw = dest / "tools/testing/selftests/drivers/net/hw"
    if not (dest / TESTDIR / "Makefile").exists() and \
            not any((hw / f).exists() for f in HW_TESTS.split()):
        die(f"neither {TESTDIR} nor any of {HW_TESTS} in base + patches/ "
            "(are the kselftest patches in the series?); use --tree to take "
            "the tests from a kernel tree")
    return dest / "tools/testing/selftests"


def kernel_headers():
    """The base's UAPI headers (make headers_install), built once per base
    version into the cache: the C helpers and BPF objects of
    drivers/net/hw and net/lib include them from usr/include of the tree
    (KHDR_INCLUDES), as kselftest CI builds them after make headers. The
    stacks change no UAPI header."""
    src = last_line(["bash", str(LAB / "kernel" / "kbuild.sh"), "srcrepo"],
                    "base source repository")
    ver = Path(src).name
    hdr = CACHE / "ksft-headers" / ver
    if (hdr / "usr/include/linux/netdev.h").exists():
        return hdr / "usr/include"
    shutil.rmtree(hdr, ignore_errors=True)
    hdr.mkdir(parents=True)
    p = subprocess.run(["make", "-s", "-C", src, f"O={hdr / 'obj'}",
                        "headers_install", f"INSTALL_HDR_PATH={hdr / 'usr'}"],
                       text=True, capture_output=True, check=False)
    if p.returncode or not (hdr / "usr/include/linux/netdev.h").exists():
        shutil.rmtree(hdr, ignore_errors=True)
        die(f"make headers_install in {src} failed (rc {p.returncode}): "
            f"{(p.stdout + p.stderr)[-1500:]}")
    shutil.rmtree(hdr / "obj", ignore_errors=True)
    return hdr / "usr/include"


def lab_base():
    """The base of the stack this run is for (common.sh's LAB_BASE)."""
    return subprocess.run(["bash", "-c",
                           f'. "{LAB}/common.sh" && echo "$LAB_BASE"'],
                          text=True, capture_output=True,
                          check=False).stdout.strip() or "base"


def build_tree(ksft, base, key=""):
    """A persistent copy of the extracted tree (per BASE) to build in.

    make install of drivers/net/hw builds its C helpers, YNL programs and
    BPF objects (and net/lib's), which takes minutes on this machine (the
    YNL C code generator alone): the build tree keeps them from run to
    run. The extraction is copied over it by content (rsync --checksum,
    times kept: an unchanged file keeps its old time, a changed one is
    newer than what was built from it), and Python, shell and Makefile
    sources that are gone from the extraction are deleted, so that no
    wildcard of a Makefile installs a stale file.
    """
    top = ksft.parents[2]
    bt = CACHE / "ksft-build" / (base + key)
    if key and not bt.exists() and (CACHE / "ksft-build" / base).is_dir():
        # what the subset's build made (libbpf, ynl) need not be redone
        shutil.copytree(CACHE / "ksft-build" / base, bt, symlinks=True)
    bt.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["rsync", "-rlt", "--checksum", f"{top}/", f"{bt}/"],
                       text=True, capture_output=True, check=False)
    if p.returncode:
        die(f"rsync of the selftests to {bt} failed: {p.stderr[-1000:]}")
    for sub in TREE_PATHS:
        d = bt / sub
        if not d.is_dir():
            continue
        for f in d.rglob("*"):
            if (f.suffix in (".py", ".sh", ".yaml", ".mk")
                    or f.name in ("Makefile", "config", "settings")) \
                    and f.is_file() and not (top / f.relative_to(bt)).exists():
                f.unlink()
    inc = bt / "usr/include"
    if inc.is_symlink() or inc.exists():
        if inc.is_symlink():
            inc.unlink()
        else:
            shutil.rmtree(inc)
    inc.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(kernel_headers(), inc, symlinks=True)
    return bt / "tools/testing/selftests"


def install_tests(ksft, dest, whole=False):
    """make install of our tests, as kselftest CI does: TARGETS
    drivers/net/hw (its C helpers, YNL programs and BPF objects built
    with clang against the base's headers) and drivers/net/lan743x, plus
    net/lib (INSTALL_DEP_TARGETS). Built in build_tree(), installed to
    dest. whole (make ksft): TARGETS WHOLE instead, in a build tree of
    its own (<base>-whole), so that the subset's stays as it is."""
    (CACHE / "ksft-build").mkdir(parents=True, exist_ok=True)
    base = lab_base()
    with open(CACHE / "ksft-build" / f".lock-{base}", "w",
              encoding="utf-8") as lock:
        # two stacks on one base share the build tree (and the whole
        # targets' tree starts as a copy of it): one at a time; the
        # other base's builds beside it
        fcntl.flock(lock, fcntl.LOCK_EX)
        bt = build_tree(ksft, base, "-whole" if whole else "")
        tg = WHOLE if whole else targets(bt)
        t = time.time()
        p = subprocess.run(["make", "-s", "-C", str(bt),
                            "TARGETS=" + " ".join(tg), "install",
                            f"INSTALL_PATH={dest}"], text=True,
                           capture_output=True, check=False)
    (dest.parent / "make-install.log").write_text(p.stdout + p.stderr)
    progress(f"make install: rc {p.returncode}, {time.time() - t:.0f} s")
    missing = [d for d in tg + ["net/lib/py"]
               if not (dest / d).is_dir()]
    missing += [f"drivers/net/hw/{f}" for f in HW_TESTS.split()
                if (bt / "drivers/net/hw" / f).exists()
                and not (dest / "drivers/net/hw" / f).exists()]
    if p.returncode or not (dest / "run_kselftest.sh").exists() or missing:
        die(f"make install of the selftests failed (rc {p.returncode}, "
            f"missing {missing}): {(p.stdout + p.stderr)[-1500:]}")
    return dest


def _ksft_lines(text, prefix, r, out):
    """Results of run_kselftest.sh's output: the programs' own KTAP lines
    (indented by '# '), named PREFIX + test; a program's line only when
    it printed none (it died, timed out or skipped as a whole). OUT gets
    each result's output: what the program printed since the case
    before (a program's own line: all it printed), its line included."""
    seen_in_prog = 0
    prog_text, case_text = [], []
    for line in text.splitlines():
        prog_text.append(line)
        m = KSFT_PROG.match(line)
        if m:
            prog = m.group(3).rsplit("/", 1)[-1]
            directive = (m.group(4) or "").upper()
            if directive == "TIMEOUT":
                r[f"{prefix}{prog}.timeout"] = "fail"
                out[f"{prefix}{prog}.timeout"] = "\n".join(prog_text)
            elif not seen_in_prog:
                r[f"{prefix}{prog}"] = ("skip" if directive == "SKIP" else
                                        "fail" if m.group(1) else "pass")
                out[f"{prefix}{prog}"] = "\n".join(prog_text)
            seen_in_prog = 0
            prog_text, case_text = [], []
            continue
        if not line.startswith("# "):
            continue
        inner = line[2:]
        case_text.append(inner)
        if re.match(r"^1\.\.0\s*#\s*SKIP", inner):
            continue    # the program's own line says skip
        m = KTAP.match(inner)
        if not m or inner.startswith((" ", "#")):
            continue
        r[prefix + m.group(2)] = ktap_result(m.group(1), m.group("word"))
        out[prefix + m.group(2)] = "\n".join(case_text)
        case_text = []
        seen_in_prog += 1


def parse_ktap(outdir, modules, outputs=None):
    """{module: {test: result}} from outdir/<module>/*.ktap; OUTPUTS, if
    given, gets {module: {test: output}}: what the test printed for its
    result (since the result line before it in its file), its result
    line included, which the expected results' patterns must match."""
    res = {}
    outputs = {} if outputs is None else outputs
    for name in modules:
        mdir = outdir / name
        if not mdir.is_dir():
            continue
        r = res.setdefault(name, {})
        out = outputs.setdefault(name, {})
        for f in sorted(mdir.glob("*.ktap")):
            seen = 0
            text = f.read_text(errors="replace")
            if f.stem.startswith("ksft-"):
                # run_kselftest.sh in a remote mode: ksft-<mode>.ktap
                mode = f.stem[len("ksft-"):]
                before = len(r)
                _ksft_lines(text, "" if mode == "netns" else f"{mode}.", r,
                            out)
                if len(r) == before and not re.search(r"^(not )?ok 1 lab\.",
                                                      text, re.MULTILINE):
                    r[f.stem] = "fail"
                    out[f.stem] = text
                else:
                    said = []
                    for line in text.splitlines():
                        said.append(line)
                        m = KTAP.match(line)
                        if m and m.group(2).startswith("lab."):
                            r[m.group(2)] = "fail" if m.group(1) else "pass"
                            out[m.group(2)] = "\n".join(said)
                        if KTAP.match(line) or KSFT_PROG.match(line):
                            said = []
                continue
            said = []
            for line in text.splitlines():
                said.append(line)
                if re.match(r"^1\.\.0\s*#\s*SKIP", line):
                    r[f.stem] = "skip"
                    out[f.stem] = "\n".join(said)
                    said = []
                    seen += 1
                    continue
                m = KTAP.match(line)
                if not m:
                    continue
                seen += 1
                r[m.group(2)] = ktap_result(m.group(1), m.group("word"))
                out[m.group(2)] = "\n".join(said)
                said = []
            if not seen:
                # the program died before printing a result
                r[f.stem] = "fail"
                out[f.stem] = text
    return res


def load_expected(path):
    """{module: {test: Expected}} of an expected file; lines
    'MODULE TEST RESULT  # REASON  match: PATTERN'. Anything but pass
    needs both: the reason, for the reader, and the pattern (a Python
    regular expression, searched in the test's output, ^ and $ at each
    line) that the output of that result must match, so that a new way
    of failing (or skipping) is not taken for the expected one. A result
    may be two, as skip|fail: for a test whose outcome depends on the
    host (an upstream test's rate precheck under TCG), the reason saying
    which outcome comes when; the pattern is matched whichever of them
    is not pass. A pattern that matches an empty output (.*) is refused:
    it would match any."""
    exp = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        body, _, comment = line.partition("#")
        body, comment = body.strip(), comment.strip()
        if not body:
            continue
        where = f"{path}:{n}"
        f = body.split()
        if len(f) != 3 or not f[2] or \
                any(r not in RESULTS for r in f[2].split("|")):
            die(f"{where}: want 'MODULE TEST pass|fail|skip|xfail "
                f"[# reason  match: pattern]' (or two, as skip|fail), got "
                f"{line!r}")
        m = MATCH.match(comment)
        reason, pat = (m.group("reason").strip(), m.group("pattern").strip()) \
            if m else (comment, "")
        if f[2] == "pass":
            if pat:
                die(f"{where}: a pass takes no 'match:' pattern ({f[1]})")
            exp.setdefault(f[0], {})[f[1]] = Expected(f[2], reason, None,
                                                      where)
            continue
        if not reason:
            die(f"{where}: expected {f[2]} of {f[1]} needs a '# reason'")
        if not pat:
            die(f"{where}: expected {f[2]} of {f[1]} has no pattern: end its "
                "reason with '  match: REGEX', what the test's output says "
                "for that reason (see the file's header)")
        try:
            rx = re.compile(pat, re.MULTILINE)
        except re.error as e:
            die(f"{where}: the pattern of {f[1]} is not a regular "
                f"expression: {e}: {pat!r}")
        if rx.search(""):
            die(f"{where}: the pattern of {f[1]} matches an empty output, "
                f"so any: {pat!r}")
        exp.setdefault(f[0], {})[f[1]] = Expected(f[2], reason, rx, where)
    return exp


def expected_for_modes(expected, modules, ksft, modes, ssh_mods):
    """Drop the expected results of remote modes that do not run: ssh.*
    of a module not run over ssh, and the lan743x programs' own results
    (named <program>.<case>) when the netns mode does not run."""
    progs = set()
    mk = ksft / "drivers/net/lan743x/Makefile"
    if mk.exists():
        progs = set(re.findall(r"^\s*(\w+)\.py", mk.read_text(),
                               re.MULTILINE))
    progs |= {f[:-3] for f in HW_TESTS.split()
              if (ksft / "drivers/net/hw" / f).exists()}
    for m in modules:
        keep = {}
        for t, v in expected.get(m, {}).items():
            head = t.split(".", 1)[0]
            if head == "ssh":
                if "ssh" not in modes or (ssh_mods and m not in ssh_mods):
                    continue
            elif head in progs and "netns" not in modes:
                continue
            keep[t] = v
        expected[m] = keep


def check_reasons(expected, config):
    """End the run (a setup error) if a reason of EXPECTED is false
    here (false_reasons()), the guest kernel's claims checked against
    CONFIG (its .config; not checked when there is none)."""
    kconfig = None
    if config and Path(config).is_file():
        kconfig = Path(config).read_text(encoding="utf-8", errors="replace")
    else:
        progress(f"no guest kernel .config ({config}): the reasons' "
                 "CONFIG_ claims are not checked")
    bad = false_reasons(expected, kconfig)
    if bad:
        die("reasons of the expected results that are false here:\n  "
            + "\n  ".join(bad))


def compare(results, expected, modules, outputs):
    """The mismatches of RESULTS against EXPECTED, one entry each: a
    result not expected, or an expected one other than pass whose
    output (OUTPUTS: {module: {test: output}}) does not match its
    pattern, which names the pattern, the reason and the output's
    tail."""
    bad = []
    for mod in modules:
        got = results.get(mod, {})
        want = expected.get(mod, {})
        for t in sorted(set(got) | set(want)):
            g = got.get(t, "missing")
            w = want.get(t, Expected("not listed"))
            if g not in w[0].split("|"):
                bad.append(f"{mod} {t}: {g}, expected {w[0]}")
                continue
            if g == "pass":
                continue
            pat = w[2] if len(w) > 2 else None
            text = (outputs or {}).get(mod, {}).get(t)
            if pat is None or text is None or not pat.search(text):
                why = f"/{pat.pattern}/" if pat is not None else \
                    "no pattern"
                bad.append(f"{mod} {t}: {g}, but not as expected: its "
                           f"output does not match {why}"
                           f" ({w[3] if len(w) > 3 else 'expected'}: "
                           f"{w[1]})\n{excerpt(text)}")
    return bad


def run_guest(cmd, env, out, names, what, log_name, echo, boot_env=None,
              boots=(1, 2), keep=False):
    """Run the guest command cmd (vm.sh with the guest's
    selftests.sh), its output into out/log_name(boot) and its KTAP lines
    and the lines starting with one of echo to stderr as they come.

    A crash of the guest kernel (exit 86) is a result and fails the run,
    except the int3 of text patching under multi-threaded TCG
    (lab/vm/crash.py), a fault of the emulation: that run is repeated
    once, and says so; a second crash fails. The results of names are
    cleared before each boot unless keep (make ksft resumes where a
    crashed boot stopped, one boot at a time: boots=(n,)); boot_env(boot)
    gives variables to add to env for that boot. Returns (exit status,
    boot)."""
    for boot in boots:
        benv = dict(env, **boot_env(boot)) if boot_env else env
        progress(f"booting {what}: {', '.join(names)}"
                 + (" (again, after a guest crash)" if boot > 1 else ""))
        for name in () if keep else names:
            shutil.rmtree(out / name, ignore_errors=True)
        with open(out / log_name(boot), "w", encoding="utf-8") as log, \
                subprocess.Popen(cmd, env=benv, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True,
                                 cwd=ROOT) as p:
            for line in p.stdout:
                log.write(line)
                if KTAP.match(line) or line.startswith(echo):
                    print(line, end="", file=sys.stderr, flush=True)
            rc = p.wait()
        if rc != 86:
            break
        text = (out / log_name(boot)).read_text(errors="replace")
        if not retryable(text):
            print(f"{Path(sys.argv[0]).name}: the guest kernel crashed: "
                  f"{first_problem(text)} (console lines above); a result, "
                  "not retried", file=sys.stderr)
            break
        print(f"{Path(sys.argv[0]).name}: the guest kernel crashed on the "
              "int3 of text patching under TCG (console lines above); "
              "repeating the run once", file=sys.stderr)
    return rc, boot


def report(results, expected, names, bad, tag=None):
    """Print each result with the expected one's reason, then the
    mismatches; tag(module, test) adds a mark after a test's name.
    Returns the counts of each result."""
    for m in names:
        for t, r in sorted(results.get(m, {}).items()):
            w = expected.get(m, {}).get(t, ("not listed", ""))
            why = f"  ({w[1]})" if w[1] and r in w[0].split("|") else ""
            print(f"  {m:9s} {r:5s} {t}{tag(m, t) if tag else ''}{why}")
    for b in bad:
        print(f"MISMATCH {b}")
    return {r: sum(v == r for m in names for v in results.get(m, {}).values())
            for r in RESULTS}


ARM_EXPECTED = EXPECTED / "net-next-2-armv7.txt"
# what the generic tests, run from source, import (relative to the tree)
GUEST_TREE = ["tools/testing/selftests/drivers/net",
              "tools/testing/selftests/net/lib",
              "tools/testing/selftests/kselftest",
              "tools/net/ynl",
              "Documentation/netlink"]
EM_ARM = 40     # ELF e_machine of 32-bit ARM


def build(what, cmd, env=None):
    """Run the lab's build CMD of WHAT, timed: the path it prints."""
    t = time.time()
    out = last_line(cmd, what, env=env)
    progress(f"{what}: {time.time() - t:.0f} s: {out}")
    return out


def host_binaries(tree):
    """Drop the ELF files that are not 32-bit ARM from tree (the x86_64
    C helpers of make install); return their relative paths."""
    gone = []
    for f in sorted(tree.rglob("*")):
        if not f.is_file() or f.is_symlink():
            continue
        with open(f, "rb") as fh:
            head = fh.read(20)
        if head[:4] != b"\x7fELF":
            continue
        # e_machine at offset 18, little-endian on both hosts
        if int.from_bytes(head[18:20], "little") != EM_ARM:
            gone.append(str(f.relative_to(tree)))
            f.unlink()
    return gone


def guest_tree(src, dest):
    """The part of the extracted tree the generic tests import."""
    for p in GUEST_TREE:
        if (src / p).is_dir():
            shutil.copytree(src / p, dest / p, symlinks=True)
    return host_binaries(dest)


def main_armv7(args):
    """The run in the ARMv7 guest (--arch armv7): the net-next stack on
    7.3, the modules in its initramfs, the results over the console."""
    os.environ["LAB_BASE"] = "7.3"
    os.environ["STACK"] = "net-next-2"
    names = (args.modules or "upstream series").split()
    if not names or any(n not in ("upstream", "series") for n in names):
        die(f"--modules: upstream and/or series, not {args.modules!r}")

    expected = load_expected(EXPECTED / "net-next-2.txt")
    # STD_STATS do not run in this guest: their results are not expected
    stems = tuple(p for f in STD_STATS.split()
                  for p in (f"generic.{Path(f).stem}.",
                            f"generic-hw-{Path(f).stem}"))
    for tests in expected.values():
        for t in [t for t in tests if t.startswith(stems)]:
            del tests[t]
    arm = load_expected(ARM_EXPECTED)
    for m, tests in arm.items():
        expected.setdefault(m, {}).update(tests)

    jobs = dict(os.environ, JOBS=os.environ.get("JOBS", "2"))
    qemu = build("qemu-system-arm",
                 ["bash", str(ROOT / "emulator/build.sh"), "--arch", "arm"])
    kbuild = ["bash", str(LAB / "kernel" / "kbuild.sh")]
    obj = build("armv7-virt kernel", kbuild + ["kernel", "armv7-virt"],
                env=jobs)
    rootfs = build("armhf rootfs",
                   ["bash", str(LAB / "vm" / "rootfs-arm.sh")])
    check_reasons(expected, kconfig_of(obj))
    which = {"upstream": "base", "series": "series"}
    kos = {n: build(f"{n} lan743x.ko",
                    kbuild + ["module", "armv7-virt", which[n]], env=jobs)
           for n in names}

    out = Path(args.out or ROOT / "results" /
               time.strftime("selftests-armv7-%Y%m%d-%H%M%S")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    progress(f"results in {out}")
    ksft = prepare_tests(out / "tests")
    progress("make install of the selftests (the x86_64 build's "
             "Python; no C helper for ARM)")
    install = install_tests(ksft, out / "install")
    gone = host_binaries(install)
    gone += guest_tree(out / "tests", out / "guest")
    (out / "not-for-arm.txt").write_text("".join(f"{g}\n" for g in gone))
    progress(f"{len(gone)} x86_64 helpers left out of the ARM guest "
             "(not-for-arm.txt)")

    modes = os.environ.get("LAN743X_REMOTE_MODES", RUNNER["7.3"][1])
    ssh_mods = os.environ.get("LAN743X_SSH_MODULES", RUNNER["7.3"][2])
    env = dict(os.environ, QEMU=qemu, KERNEL=obj, ROOTFS=rootfs,
               VM_TIMEOUT=os.environ.get("VM_TIMEOUT", "10800"),
               LAN743X_REMOTE_MODES=modes, LAN743X_SSH_MODULES=ssh_mods,
               LAN743X_HW_TESTS=os.environ.get("LAN743X_HW_TESTS",
                                               HW_TESTS),
               LAN743X_GENERIC=os.environ.get("LAN743X_GENERIC",
                                              GENERIC_7_3))
    # the guest loads the modules from its own /lib/modules
    env.pop("LAN743X_MODDIR", None)
    if os.environ.get("LAN743X_TESTS"):
        env["LAN743X_TESTS"] = os.environ["LAN743X_TESTS"]
    env["ARCH"] = "armv7"
    cmd = ["bash", str(LAB / "vm" / "vm.sh")]
    for n in names:
        cmd += ["--ko", f"{n}={kos[n]}"]
    cmd += ["--dir", f"{out / 'guest'}=/st/tree",
            "--dir", f"{install}=/st/install", "--",
            "lab/guest/selftests.sh", "--tests",
            "/st/tree/tools/testing/selftests", "--install", "/st/install",
            "--out", "/out"] + [f"{n}=/ko/{n}/lan743x.ko" for n in names]
    # the console of each boot in a file of its own (vm.sh)
    env["VM_ARM_OUT"] = str(out)
    rc, boot = run_guest(cmd, env, out, names, "the ARMv7 guest",
                         lambda b: f"guest-{b}.log",
                         ("[selftests.sh]", "vm.sh: "),
                         boot_env=lambda b: {"VM_CONSOLE_LOG": str(
                             out / f"console-{b}.log")})

    outputs = {}
    results = parse_ktap(out, names, outputs)
    if rc:
        print(f"selftests.py: the guest run failed (rc {rc}), see "
              f"{out}/guest-{boot}.log", file=sys.stderr)
    expected_for_modes(expected, names, ksft, modes.split(),
                       ssh_mods.split())
    if env.get("LAN743X_TESTS"):
        for m in names:
            expected[m] = {t: v for t, v in expected.get(m, {}).items()
                           if t in results.get(m, {})}
    bad = compare(results, expected, names, outputs)
    counts = report(results, expected, names, bad, tag=lambda m, t:
                    " [armv7]" if t in arm.get(m, {}) else "")
    print(f"selftests (armv7): {counts['pass']} passed, {counts['fail']} "
          f"failed, {counts['skip']} skipped; {len(bad)} not as in net-next-2.txt + "
          f"{ARM_EXPECTED.name}")
    sys.exit(1 if bad or rc or not results else 0)


def main():
    """Run the kselftests of both modules in the guest of ARCH; compare
    with the expected results."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--arch", default="x86_64", choices=("x86_64", "armv7"),
                    help="the guest (make selftests ARCH=...)")
    ap.add_argument("--modules", help="which modules, of upstream and "
                    "series (default: both)")
    ap.add_argument("--tree", help="take the tests from this kernel tree "
                    "instead of base + patches/")
    ap.add_argument("--kernel", help="guest kernel bzImage (default: "
                    "kbuild.sh kernel guest)")
    ap.add_argument("--moddir", help="guest module tree (MODDIR of vm.sh)")
    ap.add_argument("--module", action="append", metavar="NAME=KO",
                    help="module to test (default: upstream and series)")
    ap.add_argument("--expected", default=str(
        EXPECTED / f"{os.environ.get('STACK') or 'net-next-2'}.txt"),
        help="expected results (default: lab/selftests/expected/STACK.txt)")
    ap.add_argument("--out", help="results dir (default results/selftests-*)")
    ap.add_argument("--tests", default=os.environ.get("LAN743X_TESTS", ""),
                    help="space-separated test files (default all)")
    ap.add_argument("--whole", action="store_true",
                    help="make ksft: every file of drivers/net and "
                    "drivers/net/hw, IPv4 and IPv6, compared with "
                    "lab/selftests/expected/STACK-ksft.txt")
    ap.add_argument("--files", default=os.environ.get("LAN743X_KSFT_FILES",
                                                      ""),
                    help="with --whole: only these files (space-separated "
                    "COLLECTION:FILE, as kselftest-list.txt names them, "
                    "e.g. drivers/net/hw:tso.py)")
    args = ap.parse_args()
    if args.whole and args.expected == ap.get_default("expected"):
        args.expected = str(EXPECTED / (
            f"{os.environ.get('STACK') or 'net-next-2'}-ksft.txt"))
    # the kernel's make (make install of the selftests) reads ARCH from the
    # environment: the lab's builds get theirs on their command lines
    os.environ.pop("ARCH", None)
    if args.files and not args.whole:
        die("--files (FILES) selects files of make ksft: it needs --whole")
    if args.modules and any(n not in ("upstream", "series")
                            for n in args.modules.split()):
        die(f"--modules: upstream and/or series, not {args.modules!r}")
    if args.arch == "armv7":
        main_armv7(args)

    expected = {}
    if Path(args.expected).exists():
        expected = load_expected(Path(args.expected))
    elif args.whole:
        # make ksft on a stack run whole for the first time: every result
        # is then new, and all are written out to become its expected file
        progress(f"no {args.expected}: every result will be new")
    else:
        die(f"no expected results {args.expected}")
    progress("qemu with the lan7430 model")
    qemu = last_line(["bash", str(ROOT / "emulator" / "build.sh")],
                     "QEMU with the lan7430 model", code=77)

    if args.kernel:
        kernel, moddir = args.kernel, args.moddir
    else:
        progress("guest kernel (kbuild.sh kernel guest)")
        obj = Path(last_line(["bash", str(LAB / "kernel" / "kbuild.sh"), "kernel",
                              "guest"], "guest kernel"))
        kernel = str(obj / "arch/x86/boot/bzImage")
        moddir = args.moddir or str(obj / "mods")
    check_reasons(expected, kconfig_of(kernel))
    if args.module:
        mods = [m.split("=", 1) for m in args.module]
    else:
        progress("modules: upstream (base) and series (base + patches/)")
        # A single-module build in the full guest build tree does not
        # resolve phylink & co from Module.symvers; the guest loads them
        # from the same build's modules, so unresolved is only a warning.
        menv = dict(os.environ, KBUILD_MODPOST_WARN="1")
        which = {"upstream": "base", "series": "series"}
        mods = [[n, last_line(["bash", str(LAB / "kernel" / "kbuild.sh"),
                               "module", "guest", which[n]],
                              f"{n} module", env=menv)]
                for n in (args.modules or "upstream series").split()]

    # the stack in the name: two stacks' runs may start in the same second
    stack = os.environ.get("STACK", "net-next-2")
    out = Path(args.out or ROOT / "results" / time.strftime(
        f"{'ksft' if args.whole else 'selftests'}-{stack}-%Y%m%d-%H%M%S"))
    # absolute: git apply runs in it, bounded by GIT_CEILING_DIRECTORIES
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    progress(f"results in {out}")
    ksft = prepare_tests(out / "tests", args.tree)
    base = subprocess.run(["bash", "-c",
                           f'. "{LAB}/common.sh" && echo "$LAB_BASE"'],
                          text=True, capture_output=True,
                          check=False).stdout.strip()
    runner, modes, ssh_mods = RUNNER.get(base, ("direct", "netns", ""))
    runner = os.environ.get("LAN743X_RUNNER", runner)
    install = None
    if args.whole:
        runner = "kselftest"
        progress(f"make install of the selftests (TARGETS={' '.join(WHOLE)})")
        install = install_tests(ksft, out / "install", whole=True)
        for x in ksft_results.not_built(out):
            progress(f"not built: {x}")
    elif runner == "kselftest":
        progress("make install of the selftests (TARGETS="
                 f"{' '.join(targets(ksft))})")
        install = install_tests(ksft, out / "install")

    # the guest may only write to the results dir: the modules go there too
    guest_mods = []
    for name, ko in mods:
        d = out / "ko" / name
        d.mkdir(parents=True, exist_ok=True)
        if ko.endswith(".xz"):
            with open(d / "lan743x.ko", "wb") as f:
                subprocess.run(["xz", "-dc", ko], stdout=f, check=True)
        else:
            shutil.copy(ko, d / "lan743x.ko")
        guest_mods.append(f"{name}={d / 'lan743x.ko'}")

    env = dict(os.environ, ARCH="x86_64", KERNEL=kernel, QEMU=qemu,
               VM_RWDIR=str(out),
               VM_TIMEOUT=os.environ.get("VM_TIMEOUT", "5400"))
    if moddir:
        env["MODDIR"] = moddir
    else:
        env.pop("MODDIR", None)
    if args.tests:
        env["LAN743X_TESTS"] = args.tests
    env["LAN743X_REMOTE_MODES"] = os.environ.get("LAN743X_REMOTE_MODES",
                                                 modes)
    env["LAN743X_SSH_MODULES"] = os.environ.get("LAN743X_SSH_MODULES",
                                                ssh_mods)
    env["LAN743X_HW_TESTS"] = os.environ.get("LAN743X_HW_TESTS", HW_TESTS)
    env["LAN743X_GENERIC"] = os.environ.get("LAN743X_GENERIC",
                                            GENERIC.get(base, ""))
    guest = ["bash", str(LAB / "guest" / "selftests.sh"), "--tests",
             str(ksft), "--out", str(out)] + \
        (["--install", str(install)] if install else []) + guest_mods
    cmd = ["bash", str(LAB / "vm" / "vm.sh"), "--"] + guest
    if args.whole:
        main_whole(args, cmd, env, out, [n for n, _ in mods], install,
                   expected)

    def console(boot):
        return "console.log" if boot == 1 else "console-2.log"
    rc, boot = run_guest(cmd, env, out, [n for n, _ in mods], "the VM",
                         console, ("[selftests.sh]", "vm.sh: "))

    names = [n for n, _ in mods]
    outputs = {}
    results = parse_ktap(out, names, outputs)
    if rc:
        print(f"selftests.py: the VM run failed (rc {rc}), see "
              f"{out / console(boot)}", file=sys.stderr)
    if runner == "kselftest":
        expected_for_modes(expected, names, ksft,
                           env["LAN743X_REMOTE_MODES"].split(),
                           env["LAN743X_SSH_MODULES"].split())
    if args.tests:
        # a subset: compare only what ran (lab.* checks always run)
        ran_only(expected, results, names)
    bad = compare(results, expected, names, outputs)
    n = report(results, expected, names, bad)
    print(f"selftests: {n['pass']} passed, {n['fail']} failed"
          + (f", {n['skip']} skipped" if n["skip"] else "")
          + f"; {len(bad)} not as in {Path(args.expected).name}")
    sys.exit(1 if bad or rc or not results else 0)


def ran_only(expected, got, names, keep=()):
    """Cut EXPECTED to a subset run: for each module of NAMES, the tests
    that ran (in GOT) and those in KEEP."""
    for m in names:
        expected[m] = {t: v for t, v in expected.get(m, {}).items()
                       if t in got.get(m, {}) or t in keep}


def whole_subset(entries, files):
    """The ENTRIES (the install's COLLECTION:FILE) named in FILES, in the
    install's order; a name that is not one of them ends the run with the
    names it could have been."""
    unknown = [f for f in files if f not in entries]
    if unknown:
        near = [e for e in entries
                if any(e.endswith(":" + u.rsplit(":", 1)[-1].split("/")[-1])
                       for u in unknown)]
        die(f"--files: not a file of {' '.join(WHOLE)}: {' '.join(unknown)}"
            + (f" (did you mean {' '.join(near)}?)" if near else
               " (COLLECTION:FILE, as kselftest-list.txt names it)"))
    return [e for e in entries if e in files]


def main_whole(args, cmd, env, out, names, install, expected):
    """make ksft: every file of WHOLE against each module, one boot after
    another until each file has run (a boot that crashes or times out is
    followed by one that goes on from the next file, as long as a boot
    gets further than the one before); results per file and per case,
    compared with EXPECTED (those of args.expected)."""
    entries = ksft_results.whole_entries(install)
    if args.files:
        entries = whole_subset(entries, args.files.split())
        env = dict(env, LAN743X_KSFT_FILES=" ".join(entries))
    env = dict(env, LAN743X_KSFT_WHOLE=" ".join(WHOLE),
               LAN743X_KSFT_TIMEOUT=os.environ.get("LAN743X_KSFT_TIMEOUT",
                                                   "300"),
               LAN743X_GENERIC="", LAN743X_REMOTE_MODES="netns",
               # hours by design: no whole-run report (each file has its
               # own bound, LAN743X_KSFT_TIMEOUT)
               LAN743X_RUN_REPORT=os.environ.get("LAN743X_RUN_REPORT", "0"),
               VM_TIMEOUT=os.environ.get("VM_TIMEOUT", "28800"))
    done, rc, boot = -1, 0, 0

    def finished():
        return sum(1 for n in names
                   for f in (out / n / "whole").glob("*.tap")
                   if "# exit status" in f.read_text(errors="replace"))
    while True:
        boot += 1
        rc, _ = run_guest(cmd, env, out, names, "the VM (make ksft)",
                          lambda b: f"console-{b}.log",
                          ("[selftests.sh]", "vm.sh: "), boots=(boot,),
                          keep=True)
        now = finished()
        if rc == 0 or now >= len(entries) * len(names) or now <= done:
            break
        progress(f"boot {boot} ended with rc {rc} after {now} files: "
                 "booting again, on from the next file")
        done = now
    results, outputs = {}, {}
    for n in names:
        outputs[n] = {}
        results[n], notrun, tap = ksft_results.module_results(out, n, entries,
                                                              outputs[n])
        (out / n / "not-run.txt").write_text("".join(f"{e}\n"
                                                     for e in notrun))
        (out / n / "ksft.tap").write_text(tap, encoding="utf-8")
        if notrun:
            progress(f"module {n}: {len(notrun)} files did not run: "
                     f"{' '.join(notrun)}")
    ksft_results.write_results(out / "results.txt", results, outputs)
    (out / "table.md").write_text(ksft_results.file_table(results, names, entries))
    got = {m: {t: v[0] for t, v in r.items()} for m, r in results.items()}
    if args.files:
        # a subset: its files' own lines and what ran
        ran_only(expected, got, names, keep=entries)
    bad = compare(got, expected, names, outputs)
    n = report(got, expected, names, bad)
    print(f"ksft: {n['pass']} passed, {n['fail']} failed, {n['skip']} "
          f"skipped; {len(bad)} not as in {Path(args.expected).name}; "
          f"per-test results in {out / 'results.txt'}")
    sys.exit(1 if bad or rc or not got else 0)


if __name__ == "__main__":
    main()
