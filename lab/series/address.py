#!/usr/bin/env python3
"""Fill in and address an exported stack (run by export.sh).

address.py TREE COVER EXPORTER DIR

DIR holds a ``git format-patch --cover-letter`` output. The cover letter's
subject and blurb come from COVER (first line: subject, then a blank line,
then the text). Each patch gets To: and Cc: as the tree's
scripts/get_maintainer.pl gives them for it (no git history: Debian's
source has none): To: the maintainers of what it touches, Cc: reviewers,
mailing lists and the rest, and the maintainers of page_pool and of
lib/dim (M: of their sections, whatever its S: status) when the patch's
driver changes call them. EXPORTER
(``Name <email>``) and the patch's own author and signers are left out.
The cover letter goes to all its patches' recipients.
"""

import re
import subprocess
import sys
from pathlib import Path

ENTRY_RE = re.compile(r"^(?P<addr>.*?)\s+\((?P<roles>[^()]*(?:\([^()]*\)[^()]*)*)\)$")
ADDR_RE = re.compile(r"<([^>]+)>|(\S+@\S+)")


def email_of(addr):
    """The bare address of ``Name <a@b>`` or ``a@b``, lower case."""
    m = ADDR_RE.search(addr)
    return (m.group(1) or m.group(2)).lower() if m else addr.lower()


def get_maintainer(tree, args):
    """(address, roles) pairs of scripts/get_maintainer.pl ARGS in TREE."""
    p = subprocess.run(
        ["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
         "--rolestats", "--no-remove-duplicates", *args],
        cwd=tree, text=True, capture_output=True, check=False)
    if p.returncode:
        sys.exit(f"error: get_maintainer.pl {' '.join(args)}: {p.stderr.strip()}")
    out = []
    for line in p.stdout.splitlines():
        m = ENTRY_RE.match(line.strip())
        if m:
            out.append((m.group("addr"), m.group("roles")))
        elif line.strip():
            out.append((line.strip(), ""))
    return out


def fold(name, addrs):
    """A To:/Cc: header, one address per line."""
    return f"{name}: " + ",\n    ".join(addrs) + "\n" if addrs else ""


# Library code a driver patch may call whose maintainers get_maintainer.pl
# of the patch alone does not name: a pattern of its calls, and a file of
# the library
LIBRARIES = [
    (re.compile(r"page_pool_"), "net/core/page_pool.c"),
    (re.compile(r"\b(?:net_dim|dim_[a-z_]+)\s*\("), "lib/dim/dim.c"),
]


def uses(text, pattern):
    """Whether a driver file's changed lines in the patch TEXT match
    PATTERN (a compiled regular expression)."""
    driver = False
    for line in text.split("\n---\n", 1)[-1].splitlines():
        if line.startswith("diff --git "):
            driver = " a/drivers/" in line
        elif driver and line[:1] in "+-" and pattern.search(line):
            return True
    return False


def uses_page_pool(text):
    """Whether a driver file's changed lines in the patch TEXT call page_pool."""
    return uses(text, LIBRARIES[0][0])


def recipients(tree, patch, skip):
    """(to, cc) of PATCH: lists of addresses, without those in SKIP."""
    to, cc = [], []
    entries = get_maintainer(tree, [str(patch)])
    text = patch.read_text(encoding="utf-8")
    for pattern, lib in LIBRARIES:
        if uses(text, pattern):
            # the library section's M: entries, which get_maintainer.pl
            # calls supporters where the section is S: Supported (PAGE
            # POOL on 6.12)
            entries += [(a, r) for a, r in get_maintainer(tree, ["-f", lib])
                        if r.startswith(("maintainer:", "supporter:"))
                        and "NETWORKING" not in r]
    seen = set(skip)
    for addr, roles in entries:
        key = email_of(addr)
        if key in seen:
            continue
        seen.add(key)
        (to if roles.startswith("maintainer:") else cc).append(addr)
    return to, cc


def add_headers(path, to, cc):
    """PATH with To: and Cc: before its Subject: header."""
    text = path.read_text(encoding="utf-8")
    head, sep, body = text.partition("\nSubject: ")
    path.write_text(head + "\n" + fold("To", to) + fold("Cc", cc)
                    + sep.lstrip("\n") + body, encoding="utf-8")


def main():
    """Fill in the cover letter, address every patch and the cover."""
    tree, cover, exporter, out = sys.argv[1:5]
    tree, out = Path(tree), Path(out)
    patches = sorted(p for p in out.glob("*.patch")
                     if not p.name.startswith("0000-"))
    cover_path = next(out.glob("0000-*.patch"))
    lines = Path(cover).read_text(encoding="utf-8").rstrip("\n").split("\n")
    text = cover_path.read_text(encoding="utf-8")
    text = text.replace("*** SUBJECT HERE ***", lines[0])
    text = text.replace("*** BLURB HERE ***", "\n".join(lines[2:]))
    cover_path.write_text(text, encoding="utf-8")

    all_to, all_cc = [], []
    for patch in patches:
        own = re.findall(r"^(?:From|Signed-off-by): (.*)$",
                         patch.read_text(encoding="utf-8"), re.MULTILINE)
        skip = {email_of(a) for a in own + [exporter]}
        to, cc = recipients(tree, patch, skip)
        add_headers(patch, to, cc)
        all_to += [a for a in to if a not in all_to]
        all_cc += [a for a in cc if a not in all_cc]
    all_cc = [a for a in all_cc if email_of(a) not in
              {email_of(t) for t in all_to}]
    add_headers(cover_path, all_to, all_cc)


if __name__ == "__main__":
    main()
