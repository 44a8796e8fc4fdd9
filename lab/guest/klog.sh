#!/bin/bash
# klog_bad MARKER: print the suspicious kernel log lines (read from stdin,
# e.g. dmesg) that follow the line containing MARKER. Sourced by e2e.sh;
# tests/test_klog.py feeds it recorded lines.
#
# Lines from the clocksource watchdog are left out: under TCG a vCPU
# thread that the host deschedules misses the watchdog's cross-CPU read
# ("clocksource: Watchdog remote CPU 1 read timed out"), which says
# nothing about the driver. Everything else that matches stays a failure.
klog_bad() {
	awk -v m="$1" 'f; index($0, m) {f=1}' |
		grep -v -E '\] clocksource: ' |
		grep -E -i "WARNING|BUG|Call Trace|lan743x.*(error|fail|timeout|warn)|TR Register|DMA-API|refcount|list_(add|del) corruption|hung task|NETDEV WATCHDOG|timed out" || true
}
