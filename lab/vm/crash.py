"""What a crashed guest's console says: the one crash the lab may retry.

A guest oops, BUG, WARNING, KASAN report, DMA-API error or panic is a
result: the test, selftest run or bench cell that was running fails with
it. The one exception is a fault of the emulation, not of the kernel:
under multi-threaded TCG a vCPU can run an int3 the kernel has just
removed while it patches its own text (static keys, static calls), which
the kernel reports as its first oops, "Oops: int3: 0000 [#1]" ("int3:
0000 [#1]" before 6.9). Only that signature, as the first oops of the
boot, is retried, and every retry is reported.
"""
import re
import sys

#: the first oops of a boot being an int3 trap (text patching under MTTCG)
INT3_RE = re.compile(r"(?:^|\]\s|\|\s)(?:Oops: )?int3: 0000 \[#1\]")
#: every line by which the kernels (x86 and ARM) report a problem
OOPS_RE = re.compile(r"Oops: |Internal error: |\bint3: 0000 \[#1\]|BUG: |"
                     r"WARNING: |Kernel panic|general protection fault|"
                     r"KASAN|DMA-API: ")


def first_problem(console):
    """The first line of CONSOLE that reports a kernel problem, or None."""
    for line in console.splitlines():
        if OOPS_RE.search(line):
            return line.strip()
    return None


def retryable(console):
    """Whether CONSOLE's crash is the TCG text-patching int3 signature:
    its first reported problem is that int3 oops, and nothing came
    before it."""
    first = first_problem(console)
    return bool(first and INT3_RE.search(first))


def main(argv):
    """`crash.py retryable CONSOLE_LOG`: exit 0 if the log's crash is the
    int3 signature (print so), 1 if it is any other problem or none (print
    the first problem line); 2 on bad usage."""
    if len(argv) != 2 or argv[0] != "retryable":
        print("usage: crash.py retryable CONSOLE_LOG", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        console = f.read()
    first = first_problem(console)
    if retryable(console):
        print(f"crash.py: the TCG text-patching int3 signature, retried: {first}")
        return 0
    print(f"crash.py: not retried, a result: {first or 'no problem reported'}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
