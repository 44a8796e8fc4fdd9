#!/usr/bin/env python3
"""The live change at line rate: what the device drops per change while
the link partner sends at 1 Gbit/s (``make lineout``).

The DUT's LAN7430 is wired to a host tap device in a network namespace
(lab/bench/partner.py guest()), so the sender runs on the host's cores,
not on the guest's vCPU. For each module (and each icount shift: model
time then follows the guest's instructions, not the host), one boot; for
each offered rate (--rates: 1 Gbit/s, line rate, and one the DUT keeps
up with, so that what a change drops is not hidden by what the load
drops) the partner's iperf3 sends one UDP stream through every plan
(lab/guest/outage.py PLANS: a setup and the change it measures), in
datagrams that fit the smallest MTU of the plans. Per plan and
repetition the guest runs, each between two reads of the model's
counters over QMP:

- the plan's setup (not measured: the MTU it starts from, rings
  allocated for it);
- the change (``ip link set mtu``, ``ethtool -G``);
- a command that changes nothing (``true``), the same round trip through
  the guest's command loop (lab/guest/partner_dut.sh), for comparison:
  the frames the device drops there are what the load alone costs.

Per interval: model time, frames received, frames dropped with the
receiver or the channel's FIFO off (the model's rx_drop_disabled: what
the change itself loses; 0 in the comparison interval), the longest
time one channel's FIFO was off (the model's rx_fifo_off_ns: the window
of a channel's switch, in model time), FIFO overflows,
every frame the device dropped (report.device_drops()), frames that
found no free descriptor, and the rate on the wire meter (is the link
at line rate?); and the frames the device dropped per ms of model time,
to compare intervals of different lengths.

    python3 lab/bench/lineout.py [--modules upstream,series] [--reps 5]
        [--plans 1500to9000,9000to1500,...] [--rates 1G,300M]
        [--icount 2] [--model K=V] [--out DIR]
    python3 lab/bench/lineout.py --table DIR

Results: DIR/records.jsonl, DIR/meta.json, DIR/table.md (median [min,
max] over the repetitions). Exits 1 when the model counted descriptor
errors or write-backs into freed rings.
"""

import argparse
import itertools
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "guest"))
from bench import progress, series_patch_ids
from outage import PLANS
from partner import (
    DUT_ADDR,
    common_args,
    fmt,
    guest,
    guest_run,
    load_run,
    prepare,
)
from report import MUST_BE_ZERO, device_drops

#: the plans measured by default: every one with a setup (one direction)
DEFAULT_PLANS = [k for k, v in PLANS.items() if v]
#: a command's bound in the guest (host seconds)
CMD_TIMEOUT = 900
#: IPv4 + UDP headers, subtracted from the MTU for the datagram size
UDP_IP = 28
#: (key, label) of the table's rows per interval
ROWS = [("drop_disabled", "frames dropped, receiver or FIFO off"),
        ("fifo_off_us", "longest time a channel's FIFO was off, us"),
        ("fifo_overflow", "FIFO overflows"),
        ("device_drops", "frames dropped by the device, all causes"),
        ("drops_per_ms", "frames dropped by the device per ms"),
        ("excess", "frames dropped beyond the load's rate (*)"),
        ("no_desc", "frames finding no free descriptor"),
        ("rx_frames", "frames received"),
        ("model_ms", "interval, ms of model time"),
        ("wire_gbit_s", "wire meter, Gbit/s")]


def plan_mtus(plan):
    """The MTUs a plan's commands set (its smallest sizes the stream)."""
    setup, change = PLANS[plan]
    words = (setup + " " + change).replace(";", " ").split()
    return [int(w) for a, w in itertools.pairwise(words)
            if a == "mtu"] or [1500]


class Guest:
    """The guest's command loop (lab/guest/partner_dut.sh) from the host."""

    def __init__(self, rw):
        self.rw, self.k = rw, 0

    def run(self, script):
        """Run SCRIPT in the guest: (exit status, output). Exits the
        bench if the guest does not answer within CMD_TIMEOUT."""
        self.k += 1
        return guest_run(self.rw, self.k, script, CMD_TIMEOUT)


def interval(dut, g, script):
    """Run SCRIPT in the guest between two reads of the model's counters:
    (exit status, output, the interval's figures)."""
    c0 = dut.counters()
    rc, out = g.run(script)
    c1 = dut.counters()
    return rc, out, figures(c0, c1)


def figures(c0, c1):
    """The interval's figures from the model's counters C0 before and C1
    after (emulator/README.md, Counters)."""
    d = {k: c1[k] - c0[k] for k in ("vclock_ns", "rx_wire_bytes",
                                    "rx_frames", "rx_drop_disabled",
                                    "rx_no_desc_stalls")}
    dd0, dd1 = device_drops(c0), device_drops(c1)
    return {"drop_disabled": d["rx_drop_disabled"],
            "fifo_overflow": sum(c1["rx_fifo_overflow"]) -
            sum(c0["rx_fifo_overflow"]),
            "device_drops": None if dd0 is None or dd1 is None else dd1 - dd0,
            "drops_per_ms": (None if dd0 is None or dd1 is None or
                             not d["vclock_ns"] else
                             (dd1 - dd0) / (d["vclock_ns"] / 1e6)),
            "fifo_off_us": fifo_off_us(c0, c1),
            "no_desc": d["rx_no_desc_stalls"], "rx_frames": d["rx_frames"],
            "model_ms": d["vclock_ns"] / 1e6,
            "wire_gbit_s": (d["rx_wire_bytes"] * 8 / d["vclock_ns"]
                            if d["vclock_ns"] else None),
            "faults": {k: c1.get(k, 0) - c0.get(k, 0) for k in MUST_BE_ZERO}}


def fifo_off_us(c0, c1):
    """The longest time, in us of model time, that one channel's FIFO was
    off between the counter reads C0 and C1 (rx_fifo_off_ns: the window
    of a channel's switch); None from a model without that counter."""
    if "rx_fifo_off_ns" not in c0 or "rx_fifo_off_ns" not in c1:
        return None
    return max(b - a for a, b in zip(c0["rx_fifo_off_ns"],
                                     c1["rx_fifo_off_ns"],
                                     strict=True)) / 1000


def stream(ns, size, rate, port, log):
    """The partner's UDP stream at RATE offered (iperf3's -b), datagrams
    of SIZE bytes, to the guest's server on PORT, until stop(); its
    output into LOG."""
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, "iperf3", "-c", DUT_ADDR, "-p",
         str(port), "-u", "-b", rate, "-l", str(size), "-t", "86400"],
        stdout=log, stderr=subprocess.STDOUT)


def stop(p):
    """End the stream: SIGINT (iperf3 tells its server), then SIGKILL."""
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def alive(p, log):
    """Exit the bench if the stream P ended (its output is in LOG)."""
    if p.poll() is not None:
        log.flush()
        said = Path(log.name).read_text(encoding="utf-8", errors="replace")
        sys.exit(f"error: the partner's stream ended (iperf3 rc "
                 f"{p.returncode}): {said[-500:]}")


def run_plan(dut, g, name, plan, reps, base, stream_ctl):
    """REPS repetitions of PLAN under the stream STREAM_CTL = (Popen,
    log): records, each with BASE's fields."""
    setup, change = PLANS[plan]
    recs = []
    for rep in range(1, reps + 1):
        b = dict(base, module=name, plan=plan, rep=rep)
        rc, out = g.run(setup)
        if rc:
            recs.append(dict(b, kind="refused", output=out[-500:]))
            progress(f"{name} {plan}: the setup failed (rc {rc}): "
                     f"{out.strip()[-200:]}")
            break
        for kind, script in (("change", change), ("noop", "true")):
            alive(*stream_ctl)
            rc, out, fig = interval(dut, g, script)
            recs.append(dict(b, kind=kind, rc=rc, output=out[-500:], **fig))
            progress(f"{name} {plan} {base['rate']} rep {rep} {kind}: rc "
                     f"{rc}, {fig['drop_disabled']} dropped with RX off, "
                     f"{fig['device_drops']} by the device, "
                     f"{fig['model_ms']:.3g} ms, wire "
                     f"{fig['wire_gbit_s'] or 0:.3f} Gbit/s")
            if rc:
                sys.exit(f"error: {name}: {script!r} failed (rc {rc}): "
                         f"{out.strip()[-300:]}")
    return recs


def run_boot(dut, g, ns, name, plans, args, shift, out):
    """Every rate and plan in one boot: records."""
    size = min(m for p in plans for m in plan_mtus(p)) - UDP_IP
    recs = []
    for i, rate in enumerate(args.rates):
        log = open(out / f"iperf3-{name}-{rate}-s{shift}.log", "w",  # noqa: SIM115  # pylint: disable=consider-using-with
                   encoding="utf-8")
        p = stream(ns, size, rate, 5201 + i, log)
        try:
            time.sleep(3)
            for plan in plans:
                recs += run_plan(dut, g, name, plan, args.reps,
                                 {"icount_shift": shift, "rate": rate,
                                  "datagram": size}, (p, log))
        finally:
            stop(p)
            log.close()
    return recs


#: the table's note on the excess row
NOTE = ("(*) the change interval's device drops less what the same "
        "repetition's no-change interval dropped per ms of model time, "
        "times the change interval's length: what the change cost beyond "
        "what the load alone drops in that time")


def add_excess(recs):
    """Give each change record its "excess" (NOTE) from the no-change
    record of the same repetition; the no-change records get None."""
    key = ("module", "plan", "rate", "rep", "icount_shift")
    noop = {tuple(r.get(k) for k in key): r for r in recs
            if r["kind"] == "noop"}
    for r in recs:
        if r["kind"] == "noop":
            r["excess"] = None
        elif r["kind"] == "change":
            n = noop.get(tuple(r.get(k) for k in key))
            r["excess"] = (None if n is None or r["device_drops"] is None or
                           n.get("drops_per_ms") is None else
                           r["device_drops"] - n["drops_per_ms"] * r["model_ms"])
    return recs


def table(recs, names, plans, shifts, rates=("1G",)):
    """The markdown table: a row per plan, rate, clock, interval and
    figure, and the note."""
    add_excess(recs)
    lines = ["| plan | offered | clock | interval | per interval | " +
             " | ".join(names) + " |",
             "|---|---|---|---|---|" + "---|" * len(names)]
    for plan, rate, sh in itertools.product(plans, rates, shifts):
        clock = "host" if sh is None else f"icount shift {sh}"
        for kind in ("change", "noop"):
            for key, label in ROWS:
                cells = []
                for m in names:
                    rs = [r for r in recs if r["module"] == m and
                          r["plan"] == plan and r.get("rate") == rate and
                          r.get("icount_shift") == sh]
                    if any(r["kind"] == "refused" for r in rs):
                        cells.append("refused")
                        continue
                    cells.append(fmt([r[key] for r in rs
                                      if r["kind"] == kind]))
                what = "the change" if kind == "change" else "no change"
                lines.append(f"| {plan} | {rate} | {clock} | {what} | "
                             f"{label} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ["", NOTE])


def retable(d):
    """Write and print the table of the run in directory D from its
    records.jsonl and meta.json."""
    meta, recs = load_run(d, "lineout")
    t = table(recs, meta["modules"], meta["plans"], meta["icount"],
              meta.get("rates", ["1G"]))
    (d / "table.md").write_text(t + "\n")
    print(t)
    return 0


def main(argv=None):
    """Measure the live changes under a line-rate stream, per module."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--modules", default="upstream,series")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--plans", default=",".join(DEFAULT_PLANS))
    ap.add_argument("--rates", default="1G",
                    help="comma-separated rates the partner offers, as "
                         "iperf3's -b (at most 4)")
    common_args(ap, "2")
    args = ap.parse_args(argv)
    if args.table:
        return retable(Path(args.table))
    plans = [p for p in args.plans.split(",") if p]
    bad = [p for p in plans if p not in DEFAULT_PLANS]
    if bad or not plans:
        ap.error(f"unknown plans {bad}: {', '.join(DEFAULT_PLANS)}")
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    args.rates = [r for r in args.rates.split(",") if r]
    if not 0 < len(args.rates) <= 4 or not all(
            re.fullmatch(r"[0-9]+[KMG]?", r) for r in args.rates):
        ap.error(f"--rates: 1 to 4 rates as iperf3's -b (e.g. 1G,300M), "
                 f"not {','.join(args.rates)!r}")
    r = prepare(ap, args, "lineout")
    names, out, shifts, model = r.names, r.out, r.shifts, args.model
    obj, mods, qemu = r.obj, r.mods, r.qemu
    recs = []
    for shift in shifts:
        for name in names:
            with guest(name, mods[name], obj, qemu, out, model, shift) as \
                    (dut, ns, _tap, rw):
                recs += run_boot(dut, Guest(rw), ns, name, plans, args,
                                 shift, out)
    with open(out / "records.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in recs)
    (out / "meta.json").write_text(json.dumps(
        {"argv": sys.argv[1:], "model": model, "icount": shifts,
         "series_patch_ids": series_patch_ids(),
         "modules": names, "plans": plans, "rates": args.rates},
        indent=1) + "\n")
    t = table(recs, names, plans, shifts, args.rates)
    (out / "table.md").write_text(t + "\n")
    print(t)
    bad = sum(v for r in recs for v in r.get("faults", {}).values())
    if bad:
        print(f"error: the model counted {bad} descriptor errors or "
              "write-backs into freed rings", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
