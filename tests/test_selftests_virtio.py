"""The series' generic drivers/net/hw tests on virtio-net, as netdev's CI
runs them: its VMs' NIC is virtio-net without VIRTIO_NET_F_NOTF_COAL, and
a generic test must skip there with a reason, never fail.

One boot of the x86 guest: the tests installed as kselftest CI installs
them (make install, lab/selftests/selftests.py's install_tests), the
guest's virtio-net port as NETIF and the lan743x port at the other end of
the emulated wire moved into a namespace as the remote
(lab/guest/selftests_virtio.sh, REMOTE_TYPE=netns), run_kselftest.sh -t
drivers/net/hw:coalesce.py -t drivers/net/hw:napi_contract.py.

coalesce.py (net-next-3) must skip each case: virtio-net without
NOTF_COAL reports its intervals but refuses to set rx-usecs
(-EOPNOTSUPP), and the skip names that. napi_contract.py (net-next-2)
asks nothing a driver may lack but tracefs and a jumbo MTU: each case
passes or skips with a reason. The guest's negotiated features are read
too: NOTF_COAL set would make the run not the CI's case, and fails it."""
import re
import shutil

import pytest
import selftests as st
from conftest import guest_module, run_vm, stack_env, vm_inputs

TESTS = ("coalesce.py", "napi_contract.py")
# virtio feature bit VIRTIO_NET_F_NOTF_COAL (include/uapi/linux/virtio_net.h)
NOTF_COAL = 53
# a case's line, as run_kselftest.sh prints the program's KTAP (indented)
CASE = re.compile(r"^# (not )?ok \d+ ([\w.-]+)(?: # (\w+)\s*(.*))?$")
# the program's own line
PROG = re.compile(r"^(not )?ok \d+ selftests: drivers/net/hw: (\S+?)\.py"
                  r"(?: # (\w+)\s*(.*))?$")


def judge(text):
    """{program: (its result, {case: (result, reason)})} of run_kselftest.sh
    output TEXT; a result is pass, skip or fail (XFAIL: pass). A program
    whose own line is missing (it never ended) is left out."""
    res, cases = {}, {}
    for line in text.splitlines():
        m = CASE.match(line)
        if m:
            word = (m.group(3) or "").upper()
            cases[m.group(2)] = ("fail" if m.group(1) else
                                 "skip" if word == "SKIP" else "pass",
                                 (m.group(4) or "").strip())
            continue
        m = PROG.match(line)
        if m:
            word = (m.group(3) or "").upper()
            prog = ("fail" if m.group(1) or word == "TIMEOUT" else
                    "skip" if word == "SKIP" else "pass")
            mine = {c.split(".", 1)[1]: v for c, v in cases.items()
                    if c.startswith(m.group(2) + ".")}
            res[m.group(2)] = (prog, mine)
            cases = {}
    return res


def problems(res):
    """What in RES (judge()) is not as a CI run on virtio-net needs."""
    bad = []
    for t in TESTS:
        name = t[:-3]
        if name not in res:
            bad.append(f"{t}: no result (did not run or never ended)")
            continue
        prog, cases = res[name]
        if prog == "fail":
            bad.append(f"{t}: the program failed")
        if not cases:
            bad.append(f"{t}: no case results")
        for case, (r, why) in cases.items():
            if r == "fail":
                bad.append(f"{name}.{case}: fail")
            elif r == "skip" and not why:
                bad.append(f"{name}.{case}: skip without a reason")
            elif name == "coalesce" and not (
                    r == "skip" and "rx-usecs" in why
                    and "not supported" in why):
                # virtio-net without NOTF_COAL refuses any rx-usecs but 0
                bad.append(f"{name}.{case}: {r} ({why!r}), not a skip "
                           "naming rx-usecs and EOPNOTSUPP")
    return bad


def test_judge_finds_failures():
    """The judgement fails a failed case, a program that failed, one that
    never ended and a coalesce skip for another reason (without a VM)."""
    good = ("# ok 1 coalesce.round_trip # SKIP eth0 cannot set rx-usecs: "
            "Netlink error: Operation not supported\n"
            "ok 1 selftests: drivers/net/hw: coalesce.py\n"
            "# ok 1 napi_contract.work_is_frames\n"
            "# ok 2 napi_contract.no_stranded_frame # SKIP no ping\n"
            "ok 2 selftests: drivers/net/hw: napi_contract.py\n")
    assert not problems(judge(good))
    failed = good.replace("# ok 1 napi_contract", "# not ok 1 napi_contract")
    assert problems(judge(failed)) == ["napi_contract.work_is_frames: fail"]
    prog = good.replace("ok 2 selftests", "not ok 2 selftests")
    assert problems(judge(prog)) == ["napi_contract.py: the program failed"]
    died = good.replace("ok 2 selftests: drivers/net/hw: napi_contract.py\n",
                        "")
    assert problems(judge(died))[0].startswith("napi_contract.py: no result")
    other = good.replace("cannot set rx-usecs", "no IRQ")
    assert problems(judge(other))[0].startswith("coalesce.round_trip: skip")
    bare = good.replace(" # SKIP no ping", " # SKIP")
    assert problems(judge(bare)) == [
        "napi_contract.no_stranded_frame: skip without a reason"]


def test_generic_selftests_skip_on_virtio(tmp_path, monkeypatch):
    """coalesce.py and napi_contract.py with virtio-net as NETIF: no case
    fails; coalesce.py's skip with rx-usecs' EOPNOTSUPP."""
    stack = "net-next-3"
    ko = guest_module(stack)
    qemu, obj = vm_inputs(stack)
    out = tmp_path / "out"
    out.mkdir()
    # the stack's tests (net-next-3 holds net-next-2's), installed
    monkeypatch.setenv("STACK", stack)
    monkeypatch.delenv("LAB_BASE", raising=False)
    install = st.install_tests(st.prepare_tests(out / "tests"),
                               out / "install")
    for t in TESTS:
        assert (install / "drivers/net/hw" / t).exists(), t
    shutil.copy(ko, out / "lan743x.ko")
    env = stack_env(stack, KERNEL=f"{obj}/arch/x86/boot/bzImage",
                    MODDIR=f"{obj}/mods", QEMU=qemu, VM_RWDIR=str(out),
                    VM_TIMEOUT="3600")
    p = run_vm(["bash", "lab/vm/vm.sh", "--", "lab/guest/selftests_virtio.sh",
                "--install", str(install), "--out", str(out / "res"),
                str(out / "lan743x.ko")] + list(TESTS), env, timeout=4000)
    log = p.stdout + p.stderr
    assert p.returncode == 0, log[-5000:]
    feats = (out / "res/features.txt").read_text(encoding="utf-8")
    print(feats)
    m = re.search(r"driver (\S+)\nfeatures ([01]+)", feats)
    assert m and m.group(1) == "virtio_net", feats
    assert m.group(2)[NOTF_COAL] == "0", \
        f"NOTF_COAL negotiated: not netdev CI's virtio-net ({feats})"
    text = (out / "res/ksft.ktap").read_text(encoding="utf-8",
                                             errors="replace")
    for line in text.splitlines():
        if CASE.match(line) or PROG.match(line):
            print(line)
    bad = problems(judge(text))
    if bad:
        pytest.fail("\n".join(bad) + "\n\n" + text[-8000:], pytrace=False)
