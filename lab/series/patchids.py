#!/usr/bin/env python3
"""The code identity of the series' patches: `git patch-id --stable` of
each patch file of the stacks up to a stack (the cover letters left out).
A patch-id is of the diff alone, so a message that changes keeps it; a
change of code does not.

    python3 lab/series/patchids.py [STACK]   # JSON {patch: id}

bench.py records them with each run (meta.json "series_patch_ids") and
tables.py compares a quoted run's with the current patches'.
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAIN = ("net", "net-next-1", "net-next-2", "net-next-3")


def stacks_to(stack="net-next-2"):
    """The 7.3 stacks from net up to STACK, in order."""
    if stack not in CHAIN:
        raise ValueError(f"not a stack of the 7.3 chain: {stack}")
    return CHAIN[:CHAIN.index(stack) + 1]


def patch_ids(stack="net-next-2", root=ROOT):
    """{"<stack>/<patch file>": patch-id} of the stacks up to STACK."""
    ids = {}
    for s in stacks_to(stack):
        for p in sorted((Path(root) / "patches" / s).glob("0*.patch")):
            if p.name.startswith("0000-"):
                continue
            with p.open("rb") as f:
                out = subprocess.run(["git", "patch-id", "--stable"],
                                     stdin=f, capture_output=True,
                                     check=True).stdout.decode()
            if not out.split():
                raise ValueError(f"{p}: no diff, no patch-id")
            ids[f"{s}/{p.name}"] = out.split()[0]
    return ids


if __name__ == "__main__":
    print(json.dumps(patch_ids(*sys.argv[1:2]), indent=1))
