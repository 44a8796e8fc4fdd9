#!/usr/bin/env python3
"""Check the LAN7430 model's counters that a run must end with at 0.

The model writes its counters (JSON) into the file its exit-report
property names when QEMU exits; lab/vm/vm.sh passes that file here after
the guest has powered off:

    python3 lab/vm/dut_report.py FILE

Exit 0: desc_errors and wb_freed_ring_writes are 0. Exit 1: either is
not, or is missing (a model without them), with the counts on stderr.
Exit 3: no report (QEMU did not exit normally: killed or crashed, which
the runner reports otherwise).
"""
import json
import sys
from pathlib import Path

MUST_BE_ZERO = ("desc_errors", "wb_freed_ring_writes")


def check(path):
    """(exit status, message) for the report at PATH."""
    p = Path(path)
    if not p.exists() or not p.stat().st_size:
        return 3, f"no model counters at exit ({path}): QEMU did not exit normally"
    try:
        c = json.loads(p.read_text(encoding="utf-8"))
    except ValueError as e:
        return 1, f"the model's exit report {path} is not JSON: {e}"
    missing = [k for k in MUST_BE_ZERO if k not in c]
    if missing:
        return 1, (f"the model's counters lack {', '.join(missing)} "
                   "(an emulator older than the lab: rebuild it)")
    bad = {k: c[k] for k in MUST_BE_ZERO if c[k]}
    if bad:
        kinds = {k: v for k, v in c.get("desc_errors_by_kind", {}).items()
                 if v}
        return 1, (f"the model counted {bad} (must be 0); descriptor "
                   f"errors by kind: {kinds}")
    return 0, "the model counted no descriptor error"


def main(argv=None):
    """Check FILE; print the verdict on stderr."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: dut_report.py FILE", file=sys.stderr)
        return 2
    rc, msg = check(args[0])
    print(f"dut_report: {msg}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
