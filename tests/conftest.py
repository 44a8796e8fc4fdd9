"""Shared fixtures and helpers of the lab's tests, and the order make
test runs the test files in."""
import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "lab"
# the lab's Python modules, by concern (check, bench, report, selftests, qmp)
for _d in ("series", "bench", "selftests", "vm"):
    sys.path.insert(0, str(LAB / _d))
# emulator/tests/vmrpc.py: the VM the tests boot (lab_vm())
sys.path.append(str(ROOT / "emulator" / "tests"))
DRV = "drivers/net/ethernet/microchip"


def lab_module(path):
    """The lab's Python file at PATH (relative to the project root), loaded
    under its own name plus its folder's, so that two files of one name in
    different folders (lab/bench/outage.py, lab/guest/outage.py) never stand
    for each other whatever sys.path holds."""
    p = ROOT / path
    name = f"{p.parent.name}_{p.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, p)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# The ARMv7 guest (tests/test_vm_arm.py) takes about 2 hours cold, more
# than CI's budget: collected only when asked for, never a skip.
collect_ignore = [] if os.environ.get("LAN743X_ARM") == "1" else \
    ["test_vm_arm.py", "test_board_vm_arm.py"]
# The board kit's selftests on the x86_64 guest take minutes per module:
# collected only with LAN743X_KIT_SELFTESTS=1.
if os.environ.get("LAN743X_KIT_SELFTESTS") != "1":
    collect_ignore.append("test_board_vm_selftests.py")
# ... and on the ARMv7 guest with both
if os.environ.get("LAN743X_KIT_SELFTESTS") != "1" or \
        os.environ.get("LAN743X_ARM") != "1":
    collect_ignore.append("test_board_vm_selftests_arm.py")

# The stacks whose kernels and modules the VM tests run, each on its own
# base (lab.conf): net-next on 7.3 (what is submitted), 6.12-2 (the whole
# 6.12 backport: 6.12-2 on its parent 6.12).
VM_STACKS = [s for s in os.environ.get(
    "LAN743X_VM_STACKS", "net-next-2,6.12-2").split(",") if s]


# The suite's guests get one vCPU each (VM_CPUS, lab/vm/vm.sh; a test that
# needs two says so, tests/test_review_bugs.py): make test runs three
# of them side by side on two cores. With two vCPUs each, two guests kept
# four TCG threads on the two cores and a spinning vCPU waited for a
# preempted one: the selftests of a base took 1264-1390 s with two vCPUs
# and 765 s with one, with the same results (README "Measured times").
VM_CPUS_ASKED = os.environ.get("VM_CPUS")  # the ARM guest keeps its own
os.environ.setdefault("VM_CPUS", "1")

# make test's three xdist workers (Makefile PYTEST_XDIST: --dist loadfile)
# take a test file at a time, in this order: the selftests in the VM (a
# file per base, ~13 min each, so two workers start with one) first,
# then the small unit files, then the rest (a file's tests share their
# module fixtures: the VM they boot, the modules they build, and the
# state one test leaves for the next). Not
# --dist loadgroup: pytest-xdist 3.8 marks a group by rewriting
# item._nodeid, which pytest 9 no longer reads (nodeid comes from
# item._id), so every group was ignored and a file's tests ran on both
# workers, each booting its own VM and finding the other's state missing.
# Without xdist only the order changes.
FIRST = ["test_selftests_vm.py", "test_selftests_vm_6_12.py",
         "test_check_parsing.py"]
# the selftests files of stacks not asked for (LAN743X_VM_STACKS) are not
# collected rather than skipped (added to the ARM guest's file above)
collect_ignore += ([] if [s for s in VM_STACKS if s != "6.12-2"]
                   else ["test_selftests_vm.py"]) + \
    ([] if "6.12-2" in VM_STACKS else ["test_selftests_vm_6_12.py"])


def pytest_collection_modifyitems(items):
    """Order the test files as FIRST says (the rest keep their order)."""
    def rank(item):
        name = Path(str(item.fspath)).name
        return FIRST.index(name) if name in FIRST else len(FIRST)
    items.sort(key=rank)


def run(cmd, check=False, **kw):
    """Run CMD in the repository (text, output captured); its status is
    the caller's to check."""
    kw.setdefault("cwd", ROOT)
    return subprocess.run(cmd, text=True, capture_output=True, check=check,
                          **kw)


def run_vm(cmd, env, timeout):
    """Run CMD (lab/vm/vm.sh ...) with ENV. A guest crash (vm.sh exit 86)
    is booted once more only when its console shows the TCG
    text-patching int3 signature (lab/vm/crash.py), and the retry is
    printed; any other crash is the result."""
    fd, console = tempfile.mkstemp(
        prefix="lan743x-lab-console.", dir="/tmp")
    os.close(fd)
    env = dict(env, VM_CONSOLE_LOG=console)
    p = run(cmd, env=env, timeout=timeout)
    if p.returncode == 86:
        c = run([sys.executable, str(LAB / "vm/crash.py"), "retryable",
                 console])
        print(c.stdout + p.stderr[-3000:])
        if c.returncode == 0:
            p = run(cmd, env=env, timeout=timeout)
    return p


def stack_env(stack, **extra):
    """The environment in which lab commands work on STACK and its base."""
    env = dict(os.environ, STACK=stack, **extra)
    env.pop("LAB_BASE", None)
    return env


@pytest.fixture(scope="module", params=VM_STACKS, name="stack")
def fixture_stack(request):
    """Each VM test module runs once per stack (base kernel + modules)."""
    return request.param


@pytest.fixture(scope="session", name="srctree")
def fixture_srctree():
    """The cached base source tree (created by kbuild.sh if missing)."""
    p = run(["bash", "lab/kernel/kbuild.sh", "srctree"])
    assert p.returncode == 0, p.stderr
    return Path(p.stdout.strip().splitlines()[-1])


def make_patch(srctree, outdir, name, edit, path=DRV + "/lan743x_main.c",
               before=None):
    """Write a git-am-able patch that applies to base: edit(text) -> text;
    with BEFORE (text -> text), to the base as BEFORE leaves it (a later
    patch of a series)."""
    work = Path(outdir) / f"repo-{name}"
    work.mkdir(parents=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="Lab Fixture",
               GIT_AUTHOR_EMAIL="fixture@lan743x-lab.invalid",
               GIT_COMMITTER_NAME="Lab Fixture",
               GIT_COMMITTER_EMAIL="fixture@lan743x-lab.invalid")
    base = run(["git", "-C", str(srctree), "show", f"base:{path}"]).stdout
    if before:
        base = before(base)
    f = work / path
    f.parent.mkdir(parents=True)
    f.write_text(base)
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "base"]):
        assert run(cmd, cwd=work, env=env).returncode == 0
    f.write_text(edit(base))
    # as the stored patches are: no Signed-off-by, the assistant's trailer
    msg = (f"net: lan743x: lab fixture {name}\n\n"
           f"Fixture for the lab's own tests: {name}.\n\n"
           "Assisted-by: LLM coccinelle sparse\n")
    assert run(["git", "commit", "-qam", msg], cwd=work, env=env).returncode == 0
    pdir = Path(outdir) / f"patches-{name}"
    p = run(["git", "format-patch", "-q", "-1", "-o", str(pdir)], cwd=work,
            env=env)
    assert p.returncode == 0, p.stderr
    return pdir


def last_line(p):
    """The last line a lab command printed (the path it reports)."""
    lines = p.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def lab_built(what, cmd, env=None, **kw):
    """Run a lab build step (QEMU, kernel, module): it must succeed. The
    lab builds these itself, so a failure is a test failure with its
    reason, never a skip."""
    p = run(cmd, env=env, **kw)
    if p.returncode or not last_line(p):
        pytest.fail(f"{what} failed to build ({' '.join(cmd)}, rc "
                    f"{p.returncode}):\n{p.stderr[-1500:]}", pytrace=False)
    return last_line(p)


def qemu_build():
    """emulator/build.sh: QEMU with the lan7430 model (must build)."""
    return lab_built("QEMU with the lan7430 model", ["bash", "emulator/build.sh"])


def vm_inputs(stack=None):
    """QEMU with the lan7430 model and the guest kernel's build directory
    for STACK's base (default: the default stack). Both are built by the
    lab: failing to build either fails the calling test."""
    if not shutil.which("vng"):
        pytest.fail("virtme-ng (vng) not installed: run 'make setup'",
                    pytrace=False)
    qemu = qemu_build()
    env = stack_env(stack) if stack else None
    obj = lab_built(f"the guest kernel ({stack or 'default stack'})",
                    ["bash", "lab/kernel/kbuild.sh", "kernel", "guest"], env=env)
    return qemu, obj


# What has to happen before counters are read (the model has written every
# reply, the kernel has counted the ones passed up, a timer has fired) is
# waited for, never slept on: a busy host delays it by any amount.  HANG_S
# only ends a hang, far beyond any load.
HANG_S = 300


def wait_until(what, done):
    """Wait until done() is true; after HANG_S s, fail naming WHAT."""
    t0 = time.monotonic()
    while not done():
        if time.monotonic() - t0 > HANG_S:
            pytest.fail(f"{what}: not after {HANG_S} s (a hang)",
                        pytrace=False)
        time.sleep(0.2)


def echo_replies(vm):
    """The guest kernel's count of echo replies received (IcmpInEchoReps)."""
    _rc, out = vm.sh("nstat -saz IcmpInEchoReps | "
                     "awk '$1 == \"IcmpInEchoReps\" {print $2}'")
    return int(out.strip() or 0)


# The model's counters that must read 0 after every test that booted a VM
# (report.py's MUST_BE_ZERO): descriptor errors the model detected, and
# write-backs into a ring the driver had already replaced. A counter
# missing from the model's JSON is a failure (an emulator older than the
# lab), never a pass.
MUST_BE_ZERO = ("desc_errors", "wb_freed_ring_writes")


def model_clean(vm, when):
    """Fail unless the MUST_BE_ZERO counters of VM's model read 0; WHEN
    says at which point. The counters only grow: what an earlier check
    reported (kept on the VM) is not reported again, so a later test fails
    only for errors of its own. A VM that is gone (killed, crashed) is not
    read: its test has failed already."""
    if vm.proc.poll() is not None or vm.dut is None:
        return
    c = vm.dut.counters()
    seen = vm.__dict__.setdefault("model_zero_seen", {})
    missing = [k for k in MUST_BE_ZERO if k not in c]
    if missing and not seen.get("missing"):
        seen["missing"] = True
        pytest.fail(f"{when}: the model's counters lack {', '.join(missing)}"
                    " (an emulator older than the lab: rebuild it with "
                    "emulator/build.sh)", pytrace=False)
    bad = {k: c[k] - seen.get(k, 0) for k in MUST_BE_ZERO
           if k in c and c[k] != seen.get(k, 0)}
    seen.update({k: c[k] for k in MUST_BE_ZERO if k in c})
    if bad:
        pytest.fail(f"{when}: the model counted " + ", ".join(
            f"{k} = {v}" for k, v in bad.items()) + " (must be 0; the "
            "model's trace events lan743x_desc_* say which descriptor)",
            pytrace=False)


@contextlib.contextmanager
def lab_vm(**kw):
    """The shared VM of a test module's fixture: boots emulator/tests/
    vmrpc.py's VM with KW (it boots again after a hung or crashed boot; a
    VM that does not come up fails the test with its console's tail),
    yields it, and at the end asserts the model's MUST_BE_ZERO counters
    before it closes the VM. Each test that uses it is checked after its
    body too (check_model_after_test)."""
    # imported here: the unit tests import conftest without booting VMs
    from vmrpc import VM, VMError  # pylint: disable=import-outside-toplevel
    try:
        v = VM(**kw)
    except VMError as e:
        pytest.fail(f"the lab VM did not boot: {str(e)[-1500:]}",
                    pytrace=False)
    try:
        yield v
        model_clean(v, "at the end of the module's tests (the VM's "
                    "fixture teardown)")
    finally:
        v.close()


def guest_module(stack, module="series"):
    """STACK's lan743x.ko for the x86 guest (kbuild.sh module guest
    MODULE: base, series or series:N), built by the lab: a failure to
    build it fails the calling test."""
    return lab_built(f"the {stack} stack's lan743x module ({module})",
                     ["bash", "lab/kernel/kbuild.sh", "module", "guest",
                      module], env=stack_env(stack))


def ynl_into(vm, src):
    """The kernel tree SRC's ynl library and netdev spec copied into VM's
    shared directory, as ynl/lib and ynl/netdev.yaml (the library is
    tools/net/ynl/pyynl/lib since 6.14, tools/net/ynl/lib before; a tree
    with neither fails the caller, a check that needs it is not
    skipped). Returns the directory (Path)."""
    spec = Path(src) / "Documentation/netlink/specs/netdev.yaml"
    libs = [Path(src) / "tools/net/ynl" / d / "lib" for d in ("pyynl", ".")]
    lib = next((x for x in libs if (x / "ynl.py").exists()), None)
    assert lib and spec.exists(), \
        f"no ynl library ({' or '.join(map(str, libs))}) or netdev spec " \
        f"in {src}"
    d = Path(vm.rw) / "ynl"
    shutil.copytree(lib, d / "lib")
    shutil.copy(spec, d / "netdev.yaml")
    return d


@contextlib.contextmanager
def net_vm(qemu, obj, ko):
    """lab_vm() on the x86 guest kernel built in OBJ with the module KO,
    the network up (setup_net loads the module) and the neighbours
    pinned; the VM's load_mark is the kernel log's mark before the load."""
    with lab_vm(qemu=qemu, kernel=f"{obj}/arch/x86/boot/bzImage",
                mods=f"{obj}/mods", ko=ko) as v:
        v.load_mark = v.mark()
        v.setup_net()
        v.pin_neighbours()
        yield v


@pytest.fixture(autouse=True)
def check_model_after_test(request):
    """After every test that uses a lab VM (the fixture "vm" of lab_vm()),
    its model counted no descriptor error (model_clean)."""
    yield
    vm = getattr(request.node, "funcargs", {}).get("vm")
    if hasattr(vm, "dut") and hasattr(vm, "proc"):
        model_clean(vm, f"after {request.node.name}")
