#!/usr/bin/env python3
"""The board kit's parsers: run_kselftest.sh's KTAP, /proc texts, ip -j,
ethtool -S, the hist triggers and function profiler of trace.sh, and the
rows of one bench cell (cell_metrics). Imported by board.py."""
import json
import re

#: the functions whose calls are the cache maintenance of streaming DMA on
#: a non-coherent ARM (i.MX6)
CACHE_FUNCS = ("arch_sync_dma_for_device", "arch_sync_dma_for_cpu")
USER_HZ_US = 10000  # one /proc/stat tick in microseconds (USER_HZ = 100)


class BoardError(Exception):
    """A refusal or a failure, with the message the user reads."""



def parse_ktap(text, tests):
    """{COLLECTION:FILE: pass|fail|skip|not run} from run_kselftest.sh's
    output."""
    res = {t: "not run" for t in tests}
    for m in re.finditer(r"^(not )?ok \d+ selftests: (\S+): (\S+)(.*)$",
                         text, re.MULTILINE):
        t = f"{m.group(2)}:{m.group(3)}"
        res[t] = ("skip" if "# SKIP" in m.group(4) else
                  "fail" if m.group(1) else "pass")
    return res


def cpu_ticks(stat):
    """{cpu: (busy, total)} ticks of a /proc/stat text ('cpu' = all)."""
    out = {}
    for line in stat.splitlines():
        f = line.split()
        if f and f[0].startswith("cpu"):
            v = [int(x) for x in f[1:]]
            idle = v[3] + (v[4] if len(v) > 4 else 0)
            out[f[0]] = (sum(v) - idle, sum(v))
    return out


def irq_count(text, dev, pci):
    """The interrupts of the device (lines naming DEV, its PCI address or
    lan743x) in a /proc/interrupts text."""
    lines = text.splitlines()
    if not lines:
        return 0
    ncpu = len(lines[0].split())
    n = 0
    for line in lines[1:]:
        if not any(s and s in line for s in (dev, pci, "lan743x")):
            continue
        cols = line.split()[1:1 + ncpu]
        n += sum(int(c) for c in cols if c.isdigit())
    return n


def rtnl(text):
    """{rx: {...}, tx: {...}} of ip -s -s -j link show."""
    try:
        return json.loads(text)[0].get("stats64", {})
    except (ValueError, IndexError):
        return {}


def ethtool_s(text):
    """ethtool -S as a dict."""
    st = {}
    for line in text.splitlines()[1:]:
        k, sep, v = line.rpartition(":")
        if sep and v.strip().lstrip("-").isdigit():
            st[k.strip()] = int(v)
    return st


def meminfo_kib(text, key):
    """KEY's KiB in a /proc/meminfo text, or None."""
    m = re.search(rf"^{key}:\s+(\d+) kB", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def free_kib(host):
    """Free memory of HOST in KiB (/proc/vmstat nr_free_pages), after a
    settle."""
    t = host.sh("sync; sleep 0.5; grep '^nr_free_pages ' /proc/vmstat; "
                "getconf PAGESIZE").split()
    return int(t[1]) * int(t[2]) // 1024


def hist_sections(text):
    """{name: text} of trace.sh stop's "=== name" sections."""
    out = {}
    name = None
    for line in text.splitlines(keepends=True):
        if line.startswith("=== "):
            name = line[4:].strip()
            out[name] = ""
        elif name:
            out[name] += line
    return out


def hits(text):
    """(hitcount, size) summed over a hist trigger's entries."""
    n = sum(int(x) for x in re.findall(r"hitcount:\s*(\d+)", text))
    s = sum(int(x) for x in re.findall(r"\bsize:\s*(\d+)", text))
    return n, s


def page_allocs(text):
    """[(order, hitcount, lan743x on the stack)] of a stack x order
    histogram of kmem:mm_page_alloc."""
    out = []
    for block in re.split(r"\n(?={ )", "\n" + text):
        m = re.search(r"order:\s*(\d+)\s*}\s*hitcount:\s*(\d+)", block)
        if m:
            out.append((int(m.group(1)), int(m.group(2)),
                        "lan743x" in block))
    return out


def profile_calls(text, fn):
    """Calls of FN in the function profiler's trace_stat text."""
    n = 0
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == fn and f[1].isdigit():
            n += int(f[1])
    return n


def cell_metrics(s0, s1, js, err, hists, direction, dev, pci, q0, q1):
    """The rows of one cell from its snapshots (before S0, after S1), the
    iperf3 JSON text JS and the trace.sh sections HISTS."""
    m = {}
    secs = None
    try:
        end = json.loads(js)["end"]
        m["Mbit/s"] = end["sum_received"]["bits_per_second"] / 1e6
        m["retransmits"] = end["sum_sent"].get("retransmits", 0)
        secs = end["sum_received"].get("seconds")
    except (ValueError, KeyError) as e:
        raise BoardError(f"iperf3 gave no result: {e}: "
                         f"{(err or js)[-300:]}") from None
    r0, r1 = rtnl(s0["rtnl"]), rtnl(s1["rtnl"])
    pk = (r1.get(direction, {}).get("packets", 0) -
          r0.get(direction, {}).get("packets", 0))

    def per(v):
        return v / pk if pk and v is not None else None

    c0, c1 = cpu_ticks(s0["stat"]), cpu_ticks(s1["stat"])
    busy = c1["cpu"][0] - c0["cpu"][0]
    m["CPU us/pkt"] = per(busy * USER_HZ_US)
    for c in sorted(k for k in c1 if k != "cpu" and k in c0):
        tot = c1[c][1] - c0[c][1]
        if tot:
            m[f"CPU busy % {c}"] = 100 * (c1[c][0] - c0[c][0]) / tot
    irqs = irq_count(s1["irq"], dev, pci) - irq_count(s0["irq"], dev, pci)
    m["IRQs/pkt"] = per(irqs)
    if secs:
        m["IRQs/s"] = irqs / secs
    m["packets"] = pk
    for d in ("rx", "tx"):
        for k, v in r1.get(d, {}).items():
            if re.search(r"drop|err|miss|over|fifo", k) and \
                    isinstance(v, int):
                m[f"rtnl {d}_{k}"] = v - r0.get(d, {}).get(k, 0)
    e0, e1 = ethtool_s(s0["ethtool"]), ethtool_s(s1["ethtool"])
    for k, v in e1.items():
        if re.search(r"drop|err|miss|fifo|fail|over|alloc|pause|discard", k):
            m[f"ethtool -S {k}"] = v - e0.get(k, 0)
    if q0 and q1:
        a, b = (q0[0] if isinstance(q0, list) else q0), \
            (q1[0] if isinstance(q1, list) else q1)
        for k, v in b.items():
            if isinstance(v, int) and k not in ("ifindex",) and \
                    "packets" not in k and "bytes" not in k:
                m[f"qstats {k}"] = v - a.get(k, 0)
    sec = hist_sections(hists)
    for name, row in (("dma_map_phys", "dma map"), ("dma_map_page", "dma map"),
                      ("dma_unmap_phys", "dma unmap"),
                      ("dma_unmap_page", "dma unmap"),
                      ("dma_sync_single_for_cpu", "sync-cpu"),
                      ("dma_sync_single_for_device", "sync-dev")):
        if name in sec:
            n, size = hits(sec[name])
            m[f"{row} calls/pkt"] = per(n)
            bytes_row = {"dma map": "map", "dma unmap": "unmap"}.get(row, row)
            m[f"{bytes_row} bytes/pkt"] = per(size)
    if "napi_poll" in sec:
        polls = work = full = 0
        for w, b, n in re.findall(r"work:\s*(\d+),\s*budget:\s*(\d+)\s*}\s*"
                                  r"hitcount:\s*(\d+)", sec["napi_poll"]):
            polls += int(n)
            work += int(w) * int(n)
            full += int(n) if int(w) >= int(b) > 0 else 0
        m["NAPI polls/pkt"] = per(polls)
        m["work/poll"] = work / polls if polls else None
        m["full-budget polls %"] = 100 * full / polls if polls else None
    if "pp_hold" in sec:
        m["page_pool new pages/pkt"] = per(hits(sec["pp_hold"])[0])
    if "pp_release" in sec:
        m["page_pool released pages/pkt"] = per(hits(sec["pp_release"])[0])
    if "page_alloc" in sec:
        al = page_allocs(sec["page_alloc"])
        m["page allocs/pkt (all)"] = per(sum(n for _, n, _ in al))
        m["order>0 allocs/pkt (all)"] = per(sum(n for o, n, _ in al if o))
        m["driver page allocs/pkt"] = per(sum(n for _, n, d in al if d))
        m["driver order>0 allocs/pkt"] = per(
            sum(n for o, n, d in al if d and o))
    for fn in CACHE_FUNCS:
        if "profile" in sec:
            m[f"{fn} calls/pkt"] = per(profile_calls(sec["profile"], fn))
        elif f"kp_{fn}" in sec:
            m[f"{fn} calls/pkt"] = per(hits(sec[f"kp_{fn}"])[0])
    return m
