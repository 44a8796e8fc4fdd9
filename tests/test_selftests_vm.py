"""lab/selftests/selftests.py: the series' kselftests in the VM, upstream and
series module, against the stack's expected results
(lab/selftests/expected/<stack>.txt), once per stack on its base.

On both bases the tests (our drivers/net/hw ones, and 6.12's
drivers/net/lan743x) are installed with make install and run with run_kselftest.sh and
a net.config, as kselftest CI and a board run them, with
REMOTE_TYPE=netns for both modules and again with REMOTE_TYPE=ssh (an
sshd in the peer's namespace) for the series' module (RUNNER in
lab/selftests/selftests.py).

Under make test the two stacks' runs start first, one on each of two of
the three pytest-xdist workers (tests/conftest.py): --dist loadfile gives
a file to one worker, so 6.12's run is in a file of its own
(test_selftests_vm_6_12.py) and starts on another worker. Without
xdist they run one after the other, unless LAN743X_SELFTESTS_PARALLEL=1
starts them side by side (one VM per stack, both on the first test's
call).

Never skipped: QEMU, the kernel and the modules are built by the lab, so a
failure to build any of them fails, as does any result other than expected.
"""
import os
import signal
import subprocess
import sys
import tempfile

import pytest
from conftest import ROOT, VM_STACKS, qemu_build, stack_env, vm_inputs

# the guest's bound (vm.sh's VM_TIMEOUT): a passing run takes 14-21 min
VM_TIMEOUT = 2700
# the whole run's, builds included (they are warm by then: vm_inputs)
WAIT = VM_TIMEOUT + 900
# stack -> (Popen, stdout file, stderr file)
RUNS = {}


def start(stack):
    """Start lab/selftests/selftests.py for STACK, its output into temporary files
    (two runs at once must not block on a full pipe)."""
    # open until finish() has read them
    out = tempfile.TemporaryFile("w+")  # noqa: SIM115
    err = tempfile.TemporaryFile("w+")  # noqa: SIM115
    # the VM's own bound comes first (selftests.py then reports the
    # console's tail and what ran); WAIT is the last resort
    p = subprocess.Popen([sys.executable, "lab/selftests/selftests.py"], cwd=ROOT,
                         text=True, stdout=out, stderr=err,
                         env=stack_env(stack, VM_TIMEOUT=str(VM_TIMEOUT)),
                         start_new_session=True)
    RUNS[stack] = (p, out, err)


def finish(stack):
    """Wait for STACK's run: its exit status, stdout and stderr. A run
    that outlives WAIT is killed (its whole process group: vm.sh and
    QEMU too) and fails with what it printed until then."""
    p, out, err = RUNS.pop(stack)
    try:
        p.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    with out, err:
        out.seek(0)
        err.seek(0)
        o, e = out.read(), err.read()
    assert p.returncode >= 0, (f"selftests.py for {stack} still ran after "
                               f"{WAIT} s and was killed; its output until "
                               f"then:\n{o[-3000:]}\n{e[-6000:]}\n"
                               "the guest's hang reports:\n"
                               f"{hang_reports(e) or 'none'}")
    return p.returncode, o, e


def hang_reports(stderr, limit=10000):
    """The guest's hang reports in STDERR (lab/guest/selftests.sh: a step
    still running after LAN743X_HANG_REPORT seconds): each whole, the
    first ones first, at most LIMIT characters. They come long before
    the end of stderr, which a failure's message otherwise shows."""
    out, keep = [], False
    for ln in stderr.splitlines():
        if ln.startswith("[selftests.sh] ") and " still runs after " in ln:
            keep = True
        elif not ln.startswith(("[selftests.sh]   ",
                                "[selftests.sh] kernel stack of ")):
            keep = False
        if keep:
            out.append(ln)
    return "\n".join(out)[:limit]


def selected(request):
    """The stacks whose test_selftests_vm this pytest run runs."""
    return [it.callspec.params["stack"] for it in request.session.items
            if it.originalname == "test_selftests_vm"]


def run_selftests(stack, request):
    """Run (or finish the run started for) STACK and check its result."""
    if stack not in RUNS:
        qemu_build()
        together = [stack]
        if os.environ.get("LAN743X_SELFTESTS_PARALLEL") == "1":
            together += [s for s in selected(request)
                         if s != stack and s not in RUNS]
        # the kernels one at a time (each build uses both cores), then
        # the runs together
        for s in together:
            vm_inputs(s)
        for s in together:
            start(s)
    rc, stdout, stderr = finish(stack)
    summary = [ln for ln in stdout.splitlines()
               if ln.startswith("selftests: ")]
    assert rc != 77, "selftests.py could not find QEMU: " + stderr[-2000:]
    assert rc == 0 and summary, (stdout[-4000:] + "\n" + stderr[-3000:]
                                 + "\nthe guest's hang reports:\n"
                                 + (hang_reports(stderr) or "none"))
    # the tests ran through run_kselftest.sh (both bases)
    assert "run_kselftest.sh" in stderr, stderr[-3000:]


@pytest.mark.parametrize("stack", [s for s in VM_STACKS if s != "6.12-2"])
def test_selftests_vm(stack, request):
    """STACK's kselftests give the expected results (not the 6.12 backport's)."""
    run_selftests(stack, request)
