"""The expected results (lab/selftests/expected/*.txt): an entry
(Expected), a test's output in a mismatch (excerpt()), and what a
reason claims that this machine can check: the guest kernel's config
(kconfig_of()), the host's tools the lab uses, the guest's ethtool
(false_reasons())."""

import os
import re
import shutil
import subprocess
from pathlib import Path

CACHE = Path(os.environ.get("LAN743X_LAB_CACHE",
                            Path.home() / ".cache/lan743x-lab"))


class Expected(tuple):
    """An expected result: (result, reason, pattern, where). result is
    one word of RESULTS or two (skip|fail); pattern (a compiled regular
    expression, None for pass) is what the test's output must match
    when its result is not pass; where is FILE:LINE."""
    __slots__ = ()

    def __new__(cls, result, reason="", pattern=None, where=""):
        return super().__new__(cls, (result, reason, pattern, where))

    result = property(lambda self: self[0])
    reason = property(lambda self: self[1])
    pattern = property(lambda self: self[2])
    where = property(lambda self: self[3])


# the pattern of an expected result: the end of its comment
MATCH = re.compile(r"^(?P<reason>.*?)\s+match: (?P<pattern>.*)$")


def excerpt(text, lines=25, width=300):
    """The last LINES lines of TEXT, each cut to WIDTH, indented: a
    test's output in a mismatch."""
    tail = (text or "(no output recorded)").splitlines()[-lines:]
    return "\n".join("    | " + (x if len(x) <= width else
                                 x[:width] + "...") for x in tail)


def kconfig_of(kernel):
    """The .config of the build of KERNEL (its build directory, or an
    image in it such as OBJ/arch/x86/boot/bzImage), or None."""
    p = Path(kernel).resolve()
    for d in [p] + list(p.parents)[:4]:
        if (d / ".config").is_file():
            return d / ".config"
    return None


# What a reason may claim that this machine can check (false_reasons()):
# the guest kernel's config, the host's tools the lab uses, the guest's
# ethtool. Each: (a pattern of the reason, its check's name).
CLAIMS = [
    (re.compile(r"\bno clang\b|clang (?:is )?not (?:installed|here)"),
     "clang"),
    (re.compile(r"guest kernel (?:has no|lacks) ([^;]*)"), "kconfig"),
    (re.compile(r"pahole >= ([\d.]+), Debian 12 has ([\d.]+)"), "pahole"),
    (re.compile(r"guest's ethtool ([\d.]+) has no --json for -l"),
     "ethtool"),
]


def _configs(clause):
    """The CONFIG_ symbols a reason's clause names: CONFIG_A(_B) is
    CONFIG_A and CONFIG_A_B, CONFIG_A/CONFIG_B both."""
    names = []
    for m in re.finditer(r"CONFIG_(\w+?)(?:\((_\w+)\))?(?![\w(])", clause):
        names.append(f"CONFIG_{m.group(1)}")
        if m.group(2):
            names.append(f"CONFIG_{m.group(1)}{m.group(2)}")
    return names


def _version(text):
    """The first dotted version number in TEXT as a tuple of ints."""
    m = re.search(r"(\d+(?:\.\d+)+)", text or "")
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def _run(cmd):
    """stdout and stderr of CMD, or None when it cannot run."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=30, check=False)
    except OSError:
        return None
    return p.stdout + p.stderr


def guest_ethtool():
    """The ethtool the x86_64 guest runs: the lab's in the cache
    (lab/common.sh puts it first on the guest's PATH), else the host's."""
    lab = CACHE / "tools" / "bin" / "ethtool"
    return str(lab) if lab.exists() else shutil.which("ethtool")


def false_reasons(expected, kconfig=None, which=shutil.which, run=_run,
                  ethtool=None):
    """The reasons of EXPECTED ({module: {test: Expected}}) that claim
    what is not so here, one line each (FILE:LINE: what): 'no clang'
    with clang installed, 'the guest kernel has no CONFIG_X' with X set
    in KCONFIG (the text of the guest kernel's .config; None: not
    checked), a pahole bound that the host's pahole meets, a guest
    ethtool of another version or with --json for -l. WHICH and RUN find
    and run the host's tools; ETHTOOL is the guest's (guest_ethtool())."""
    bad = []
    seen = set()
    for tests in expected.values():
        for t, e in tests.items():
            reason, where = e[1], (e[3] if len(e) > 3 else "")
            if (where, reason) in seen:
                continue
            seen.add((where, reason))
            for rx, what in CLAIMS:
                for m in rx.finditer(reason):
                    err = _check_claim(what, m, kconfig, which, run,
                                       ethtool or guest_ethtool())
                    if err:
                        bad.append(f"{where}: {t}: the reason says "
                                   f"{m.group(0)!r}, but {err}")
    return bad


def _check_claim(what, m, kconfig, which, run, ethtool):
    """What is false in claim M of kind WHAT, or None (see
    false_reasons())."""
    if what == "clang":
        path = which("clang")
        return f"clang is installed ({path})" if path else None
    if what == "kconfig":
        if kconfig is None:
            return None
        names = _configs(m.group(1))
        on = [c for c in names
              if re.search(rf"^{c}=[ym]$", kconfig, re.MULTILINE)]
        if not names:
            return None
        return (f"the guest kernel's config sets {', '.join(on)}"
                if on else None)
    if what == "pahole":
        if not which("pahole"):
            return None
        have = _version(run(["pahole", "--version"]))
        need, said = _version(m.group(1)), _version(m.group(2))
        if have and have >= need:
            return f"the host's pahole is {'.'.join(map(str, have))}"
        if have and have != said:
            return (f"the host's pahole is {'.'.join(map(str, have))}, "
                    f"not {m.group(2)}")
        return None
    if what == "ethtool":
        if not ethtool:
            return "no ethtool found to check it"
        have = _version(run([ethtool, "--version"]))
        said = _version(m.group(1))
        if not have or have[:len(said)] != said:
            return (f"the guest's ethtool ({ethtool}) is "
                    f"{'.'.join(map(str, have or ()))}")
        out = run([ethtool, "--json", "-l", "lo"]) or ""
        if "JSON output not available" not in out:
            return (f"{ethtool} --json -l does not refuse JSON: "
                    f"{out.strip()[:200]!r}")
    return None
