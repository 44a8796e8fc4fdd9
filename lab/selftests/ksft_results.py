"""make ksft (lab/selftests/selftests.py --whole): run_kselftest.sh's
output, one file at a time, into results per file and per case with their
reasons; the expected files' format; the per-file table."""

import re

KTAP = re.compile(r"^\s*(not )?ok \d+ (\S+)(?:\s+#\s*(?P<word>\w+)?"
                  r"(?P<raw>.*))?$")
RESULTS = ("pass", "fail", "skip", "xfail")
# the whole driver test targets, as netdev's CI runs them
WHOLE = ["drivers/net", "drivers/net/hw"]
# a test program's own line in run_kselftest.sh's output, its directive
# in groups 3 and 4 as KTAP has it
KSFT_PROG_D = re.compile(r"^(not )?ok \d+ (selftests: (?P<coll>\S+): "
                         r"(?P<file>\S+))(?:\s+#\s*(?P<word>\w+)?"
                         r"(?P<raw>.*))?$")


# a shell test's own result line (net/forwarding/lib.sh's log_test)
SH_CASE = re.compile(r"^TEST: (.*?)\s+\[\s*(OK|FAIL|SKIP|XFAIL)\s*\]")


def ktap_result(not_ok, word):
    """A KTAP line's result: its directive WORD's (SKIP, XFAIL) if it
    has one, else by ok or not ok (NOT_OK)."""
    return {"SKIP": "skip", "XFAIL": "xfail"}.get(
        (word or "").upper(), "fail" if not_ok else "pass")


def _directive(m):
    """(result, reason) of a match m of KTAP or KSFT_PROG_D: a skip's
    or xfail's reason is the directive's text, another result's the
    whole comment."""
    word, raw = m.group("word") or "", m.group("raw") or ""
    res = ktap_result(m.group(1), word)
    return res, (raw if res in ("skip", "xfail") else word + raw).strip()


def _why(block):
    """The reason of a failure among the comments a program printed
    before its result line (the library's 'Exception|' and 'Check|'
    lines, or a traceback): a failed check, else the failed command and
    its stderr, else the exception's own line, else the last comment;
    the install's path prefix dropped."""
    lines = [re.sub(r"^(Exception|Check|Warning)\|\s*", "", c).strip()
             for c in block]
    lines = [re.sub(r"/\S*/install/", "", c) for c in lines if c]
    pick = [c for c in lines if "Check failed" in c]
    if not pick:
        cmd = [c for c in lines if re.match(r"CMD(\[\w+\])?:", c)]
        err = [c for c in lines if c.startswith("STDERR:")]
        if cmd:
            pick = [f"{cmd[-1]}: {err[-1][7:].strip()}" if err else cmd[-1]]
    if not pick:
        pick = [c for c in lines
                if re.search(r"\w(Error|Ex|Exception|Failure|Exit):", c)]
    if not pick:
        pick = lines
    return pick[-1][:240] if pick else ""


def parse_run_kselftest(text):
    """The files run_kselftest.sh ran, in its output text: a list of
    {collection, file, result, reason, cases}, cases a list of (name,
    result, reason) from the program's own KTAP lines (or a shell test's
    'TEST: ... [ OK ]' lines), which run_kselftest.sh indents with '# '.
    A case's or file's failure takes as its reason its directive's text,
    else the last comment the program printed before it (the library's
    'Exception|' or 'Check failed' line). Each file's "output" is what
    it printed, its result line included; its "outputs", {case: what it
    printed since the case before, its result line included}: the text
    an expected result's pattern (match:) is matched against."""
    files, cases, block = [], [], []
    # what was printed since the file's start and since the last case's
    # line: each result's output (the expected files' patterns match it)
    ftext, ctext, outputs = [], [], {}
    # a shell test prints why a case failed after its TEST: line
    sh_case = None
    for line in text.splitlines():
        m = KSFT_PROG_D.match(line)
        if m:
            if sh_case:
                outputs[sh_case] += "".join(f"\n{x}" for x in ctext)
            res, reason = _directive(m)
            if res == "fail" and (not reason or reason.startswith("exit=")):
                why = _why(block)
                reason = f"{reason}: {why}" if reason and why else \
                    reason or why
            files.append({"collection": m.group("coll"),
                          "file": m.group("file"), "result": res,
                          "reason": reason, "cases": cases,
                          "output": "\n".join(ftext + [line]),
                          "outputs": outputs})
            cases, block, ftext, ctext, outputs = [], [], [], [], {}
            sh_case = None
            continue
        ftext.append(line)
        if not line.startswith("# "):
            continue
        inner = line[2:]
        sh = SH_CASE.match(inner)
        m = KTAP.match(inner)
        if sh_case and (sh or (m and not inner.startswith((" ", "#")))):
            # what the shell case before printed after its line
            outputs[sh_case] += "".join(f"\n{x}" for x in ctext)
            ctext = []
        ctext.append(inner)
        if sh:
            name = re.sub(r"[^\w.-]+", "_", sh.group(1)).strip("_")
            res = {"OK": "pass", "FAIL": "fail", "SKIP": "skip",
                   "XFAIL": "xfail"}[sh.group(2)]
            cases.append((name, res, _why(block) if res != "pass" else ""))
            outputs[name] = inner
            sh_case = name
            block, ctext = [], []
            continue
        if m and not inner.startswith((" ", "#")):
            res, reason = _directive(m)
            if res == "fail" and not reason:
                reason = _why(block)
            cases.append((m.group(2), res, reason))
            outputs[m.group(2)] = "\n".join(ctext)
            block, ctext = [], []
            continue
        comment = inner.lstrip("# ").strip()
        if comment and not re.match(r"^(TAP version|1\.\.\d|Totals:|"
                                    r"timeout set to|selftests: )",
                                    comment):
            block.append(comment)
    return files


def tap_path(mdir, entry):
    """The run_kselftest.sh output of ENTRY (COLLECTION:FILE) in a
    module's directory MDIR, as selftests.sh names it."""
    return mdir / "whole" / (entry.replace("/", "-").replace(":", "-")
                             + ".tap")


def whole_results(outdir, name, entries, outputs=None):
    """make ksft: {test: (result, reason)} of module NAME from
    outdir/NAME/whole/*.tap, per file (COLLECTION:FILE) and per case
    (COLLECTION:CASE), and the entries (COLLECTION:FILE of the install's
    kselftest-list.txt) that did not run. OUTPUTS, if given, gets each
    test's output (what it printed, its result line included)."""
    res, notrun = {}, []
    outputs = {} if outputs is None else outputs
    for e in entries:
        tap = tap_path(outdir / name, e)
        if not tap.exists():
            notrun.append(e)
            continue
        text = tap.read_text(errors="replace")
        files = parse_run_kselftest(text)
        if not files:
            why = ("the run ended during this test (the VM was stopped)"
                   if "# exit status" not in text else
                   "run_kselftest.sh printed no result line")
            res[e] = ("fail", why)
            outputs[e] = f"{text}\n# {why}"
            continue
        for f in files:
            coll = f["collection"]
            res[f"{coll}:{f['file']}"] = (f["result"], f["reason"])
            outputs[f"{coll}:{f['file']}"] = f["output"]
            for case, r, why in f["cases"]:
                res[f"{coll}:{case}"] = (r, why)
                outputs[f"{coll}:{case}"] = f["outputs"].get(case, "")
    return res, notrun


def not_built(out):
    """make ksft: what make install left out, from its log (a Makefile's
    own 'excluding ...' warning), into out/not-built.txt."""
    log = (out / "make-install.log").read_text(errors="replace")
    lines = sorted({m.group(1).strip() for m in re.finditer(
        r"^Makefile:\d+: (excluding .*)$", log, re.MULTILINE)})
    (out / "not-built.txt").write_text("".join(f"{x}\n" for x in lines))
    return lines


def whole_entries(install):
    """COLLECTION:FILE of the install's WHOLE targets, in its order."""
    return [e for e in (install / "kselftest-list.txt").read_text().split()
            if e.split(":", 1)[0] in WHOLE]


def write_results(path, results, outputs=None):
    """{module: {test: (result, reason)}} in the expected files' format,
    each result but pass with a pattern (suggest_pattern()) from its
    output in OUTPUTS ({module: {test: output}}), to be reviewed before
    the file becomes an expected one."""
    with open(path, "w", encoding="utf-8") as f:
        for m, tests in results.items():
            for t, (r, why) in tests.items():
                why = " ".join(why.split())
                if r != "pass" and not t.startswith("lab."):
                    why = classify(why or "no reason printed", t)
                if r != "pass":
                    out = (outputs or {}).get(m, {}).get(t, "")
                    why += f"  match: {suggest_pattern(out, t)}"
                f.write(f"{m} {t} {r}" + (f"  # {why}" if why else "") + "\n")


# a path of the run's own directory, as the tests print it
RUN_PATH = r"/\S*?/(?:install|tests/tools/testing/selftests)/"
PREFIX = re.compile(r"^(?:#\s*)*(?:(?:Exception|Check|Warning)\|\s*)?")


def escape(text):
    """TEXT as a regular expression that matches it, escaping only what
    is special (re.escape() also escapes spaces and dashes)."""
    return re.sub(r"([\\.^$*+?{}\[\]|()])", r"\\\1", text)


def _literal(text, numbers=True):
    """TEXT as a regular expression that matches it literally, but for
    the run's own paths (any) and, if NUMBERS, its numbers (any)."""
    out, pos = [], 0
    rx = RUN_PATH
    if numbers:
        rx += r"|(?<![\w.])\d+(?:\.\d+)?(?![\w.])"
    for m in re.finditer(rx, text):
        out.append(escape(text[pos:m.start()]))
        out.append(r"\S*/" if m.group(0).startswith("/") else
                   r"[\d.]+" if "." in m.group(0) else r"\d+")
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def suggest_pattern(output, test=""):
    """A pattern (the expected files' match:) for a result from its
    OUTPUT (what it printed, its result line last, or a shell test's
    TEST: line first): the directive's text of its result line (a skip's
    reason, a file's exit=N or TIMEOUT; a bare '# SKIP' when it gave
    none), else the line that says why it failed (a failed check, a
    command's stderr, an exception, the last comment), literally but for
    the run's paths and numbers; else its result line."""
    lines = [x for x in (output or "").splitlines() if x.strip()]
    sh = SH_CASE.match(lines[0].lstrip("# ")) if lines else None
    last = lines[-1] if lines else ""
    m = KSFT_PROG_D.match(last) or KTAP.match(last.lstrip("# "))
    if sh:
        said, result = lines[1:], lines[0].lstrip("# ")
    else:
        said, result = lines[:-1], last.lstrip("# ")
        if m and (m.group("raw") or "").strip():
            d = (m.group("word") or "") + m.group("raw")
            return _literal(d.strip(), numbers=False)
        if m and m.group("word"):
            return f"# {m.group('word')}$"
    said = [PREFIX.sub("", x).strip() for x in said]
    said = [x for x in said if x and not re.match(
        r"^(TAP version|1\.\.\d|Totals:|timeout set to|overriding timeout|"
        r"selftests: |Interface: |module \S+: run_kselftest)", x)]
    pick = [x for x in said if "Check failed" in x] or \
        [x for x in said if x.startswith("STDERR:") and x[7:].strip()] or \
        [x for x in said if re.search(r"\w(Error|Exception|Failure):", x)] \
        or said
    if pick:
        pat = _literal(pick[-1][:160])
        if re.search(pat, output, re.MULTILINE):
            return pat
    if result:
        return "^" + re.sub(r"ok \\?\d+ ", r"ok \\d+ ",
                            _literal(result, numbers=False), count=1)
    # no output recorded: the test's own result line
    return rf"ok \d+ (?:selftests: \S+ )?{escape(test.split(':', 1)[-1])}\b"


def file_summary(results, entry):
    """A file's result and its reason for the table: the file's own line,
    and its cases counted, with their distinct skip and failure reasons
    (at most two of each)."""
    coll, fname = entry.split(":", 1)
    if entry not in results:
        return "not run", ""
    res, why = results[entry]
    stem = fname.rsplit(".", 1)[0]
    cases = {t: v for t, v in results.items()
             if t.startswith(f"{coll}:{stem}.") and t != entry}
    counts = {r: sum(v[0] == r for v in cases.values()) for r in RESULTS}
    parts = [f"{counts[r]} {r}" for r in RESULTS if counts[r]]
    notes = []
    for r in ("fail", "skip", "xfail"):
        seen = []
        for t, v in cases.items():
            if v[0] == r and v[1] not in seen:
                seen.append(v[1])
                short = short_reason(v[1], t)
                notes.append(f"{r} {t.split(':', 1)[1]}: {short or '-'}")
            if len(seen) >= 2:
                break
    text = "; ".join(filter(None, [short_reason(why, entry),
                                   ", ".join(parts)]
                            + notes))
    return res, " ".join(text.replace("|", "/").split())


def file_table(results, names, entries):
    """Markdown: one row per file, the result of each module in NAMES
    with its reason."""
    rows = ["| test file | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names)]
    for e in entries:
        cells = []
        for n in names:
            res, why = file_summary(results.get(n, {}), e)
            cells.append(f"**{res}**" + (f" ({why})" if why else ""))
        rows.append(f"| {e} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


# What a skip's or failure's reason comes from, by the text the program
# printed: "device" = a feature lan743x (or the model of it) does not
# have; "lab" = a limit of this lab, with what would lift it. The first
# pattern that matches the reason wins; a reason none matches is given
# as the test's own.
CLASSES = [
    (r"failed to find valid kernel BTF",
     ("lab: the guest kernel has no BTF (CONFIG_DEBUG_INFO_BTF needs "
      "pahole >= 1.26, Debian 12 has 1.24; a newer pahole lifts it); "
      "lan743x has no XDP either")),
    (r"hitless_key_update .*Check failed \d+ != 0",
     ("lab: under TCG the receiver falls behind the test's traffic, the "
      "RX FIFO overflows and the model drops frames (the MAC's RX Dropped "
      "Frames, the driver's rx_dropped), key change or not (ip -s sampled "
      "0.3 s apart under the same traffic, no key change: 240 to 475 "
      "more); the test counts any RX drop in its window")),
    (r"hitless_key_update .*Check failed [0-9.]+ >= 0\.2\b",
     ("lab: 6.12's test bounds the key change by 0.2 s of wall clock and "
      "makes it with a new ethtool process, which alone takes longer "
      "under TCG (7.3's sets the key over netlink from the test itself "
      "and stays within its 0.15 s)")),
    (r"ethtool --json -c",
     ("device: lan743x has no interrupt coalescing settings here "
      "(get_coalesce: net-next-3 adds them on 7.3)")),
    (r"receive-hashing: on not in Features",
     ("device: lan743x reports no RX hash (NETIF_F_RXHASH): the driver "
      "sets RFE_RSS_CFG's hash store bit but never reads a hash, and "
      "where the descriptor carries it is not known here")),
    (r"ethtool --json -l",
     ("lab: the guest's ethtool 6.14 has no --json for -l (a newer "
      "ethtool lifts it)")),
    (r"^\S*\bpsp\.",
     ("lab: the guest kernel has no CONFIG_INET_PSP (drivers/net/config "
      "lifts it); lan743x has no PSP offload either")),
    (r"Family 'devlink' not supported",
     ("lab: the guest kernel has no CONFIG_NET_DEVLINK; lan743x registers "
      "no devlink instance either")),
    (r"Family 'net-shaper' not supported",
     ("lab: the guest kernel has no CONFIG_NET_SHAPER (drivers/net/config "
      "lifts it); lan743x has no net_shaper_ops either")),
    (r"netconsole|NETCONSOLE",
     ("lab: the guest kernel has no CONFIG_NETCONSOLE(_DYNAMIC) or "
      "CONFIG_CONFIGFS_FS (drivers/net/config lifts it)")),
    (r"nr_hugepages|udmabuf|HUGETLB",
     ("lab: the guest kernel has no CONFIG_HUGETLBFS/CONFIG_UDMABUF "
      "(hw/config lifts it); lan743x has no queue API for devmem either")),
    (r"pppoe",
     ("lab: the guest kernel has no CONFIG_PPP/CONFIG_PPPOE "
      "(drivers/net/config lifts it)")),
    ((r"RTNETLINK answers: Operation not supported|tc .*qdisc|"
      r"Specified qdisc kind is unknown"),
     ("lab: the guest kernel has no CONFIG_NET_SCHED (drivers/net/config "
      "lifts it)")),
    (r"Unknown device type|type (macsec|vxlan|netkit|ipip|gre)",
     ("lab: the guest kernel lacks that link type (the targets' config "
      "fragments lift it)")),
    (r"AF_XDP|xsk",
     ("device: lan743x has no XDP, so no AF_XDP (the guest kernel has no "
      "CONFIG_XDP_SOCKETS either)")),
    (r"XDP|xdp",
     "device: lan743x has no XDP"),
    (r"ethtool -L|channels|combined",
     "device: lan743x has no ethtool -L (channels-set)"),
    (r"only works on netdevsim",
     "device: a netdevsim-only case"),
    (r"did not ramp up",
     ("lab: the emulated link under TCG does not reach the rate the test "
      "waits for")),
    (r"missing packets at pf_packet",
     ("lab: the receiver's fixed wait ended before the frames came (TCG on "
      "a loaded host; seen on both modules, in different cases from run "
      "to run)")),
    (r"Cannot find device \"(vveth|eth)\d+\"",
     ("lab: a net/forwarding-style test takes its ports from "
      "forwarding.config (NETIFS), which the lab does not write; it fell "
      "back to veth names (a forwarding.config naming the DUT and the "
      "peer's port in one namespace would lift it)")),
    (r"LOCAL_PREFIX_V6 required",
     ("lab: the netkit tests want LOCAL_PREFIX_V6 in net.config (a routed "
      "IPv6 prefix for the netkit peers), which the lab's does not have; "
      "the guest kernel has no CONFIG_NETKIT either")),
    (r"timed out after|Traffic seems low",
     ("lab: the test's own time or rate limit (a command's timeout, a "
      "packet rate precheck) is not met under TCG on a loaded host; make "
      "test runs the same file with the host less busy")),
    (r"TIMEOUT",
     "timeout: the per-test timeout (LAN743X_KSFT_TIMEOUT) expired"),
    (r"(?i)not support|unsupported|does not report",
     "device"),
]


def classify(reason, test=""):
    """reason with what it comes from in front (CLASSES, matched against
    the test's name, a space and the reason)."""
    if not reason:
        return reason
    for pat, what in CLASSES:
        if re.search(pat, f"{test} {reason}"):
            return f"{what}: {reason}"
    return f"test: {reason}"


def short_reason(reason, test=""):
    """The class of a reason (CLASSES) where it has one, else the reason,
    cut to 150 characters: for the table."""
    for pat, what in CLASSES:
        if reason and re.search(pat, f"{test} {reason}") and \
                what != "device":
            return what
    short = classify(reason, test)
    return short if len(short) <= 150 else short[:147] + "..."


def lab_results(mdir, outputs=None):
    """{lab.*: (result, reason)} of a module's directory (selftests.sh's
    load, state and dmesg checks); a failure's reason is what the check
    printed before its line (the state's diff, the kernel's warnings),
    else where to look. OUTPUTS, if given, gets each check's output
    (what it printed, its result line included)."""
    r = {}
    outputs = {} if outputs is None else outputs
    for f in sorted(mdir.glob("*.ktap")):
        said, text = [], []
        for line in f.read_text(errors="replace").splitlines():
            text.append(line)
            m = KTAP.match(line)
            if m and m.group(2).startswith("lab."):
                why = ""
                if m.group(1):
                    why = "lab: " + (" ".join(said)[:240] or
                                     f"see {f.name} of the module's results")
                r[m.group(2)] = ("fail" if m.group(1) else "pass", why)
                outputs[m.group(2)] = "\n".join(text)
                said, text = [], []
            elif line.startswith("#"):
                said.append(line.lstrip("# ").strip())
    return r


def module_results(run, name, entries, outputs=None):
    """Module NAME's results in make ksft's run directory RUN: {test:
    (result, reason)} of its files, their cases and selftests.sh's lab.*
    checks; the entries that did not run; the raw output of every file,
    in the order of ENTRIES. OUTPUTS, if given, gets each test's output."""
    r, notrun = whole_results(run, name, entries, outputs)
    r.update(lab_results(run / name, outputs))
    taps = [tap_path(run / name, e) for e in entries]
    return r, notrun, "".join(t.read_text(errors="replace")
                              for t in taps if t.exists())


def merge(runs, dest):
    """The results of make ksft's run directories RUNS (one module each,
    or more) into DEST: results.txt (the expected files' format),
    table.md (a row per file), <module>.tap (the raw output of every
    file in order), not-run-<module>.txt and not-built.txt."""
    results, names, entries = {}, [], []
    dest.mkdir(parents=True, exist_ok=True)
    for run in runs:
        entries = entries or whole_entries(run / "install")
        for mdir in sorted(d for d in run.iterdir()
                           if (d / "whole").is_dir()):
            name = mdir.name
            names.append(name)
            results[name], notrun, tap = module_results(run, name, entries)
            (dest / f"not-run-{name}.txt").write_text(
                "".join(f"{e}\n" for e in notrun))
            (dest / f"{name}.tap").write_text(tap, encoding="utf-8")
        if (run / "not-built.txt").exists():
            (dest / "not-built.txt").write_text(
                (run / "not-built.txt").read_text())
    write_results(dest / "results.txt", results)
    (dest / "table.md").write_text(file_table(results, names, entries))
    return results, names, entries


def main():
    """merge RUN... --out DIR (see merge())."""
    import argparse  # pylint: disable=import-outside-toplevel
    from pathlib import Path  # pylint: disable=import-outside-toplevel
    ap = argparse.ArgumentParser(description=merge.__doc__.split("\n", maxsplit=1)[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args()
    results, names, entries = merge(a.runs, a.out)
    for n in names:
        counts = {r: sum(results[n].get(e, ("not run",))[0] == r
                         for e in entries)
                  for r in RESULTS + ("not run",)}
        print(f"{n}: files " + ", ".join(f"{v} {k}" for k, v in
                                         counts.items() if v))


if __name__ == "__main__":
    main()
