#!/bin/bash
# Guest side of the ARMv7 e2e (lab/vm/vm-arm.sh, one boot per module):
#   1. a kprobe on each of arm's DMA cache maintenance entry points
#      (arch_sync_dma_for_device/arch_sync_dma_for_cpu, arch/arm/mm/
#      dma-mapping.c), counted through tracefs' kprobe_profile;
#   2. lab/guest/e2e.sh with the module in $LAN743X_MODDIR (probe, link,
#      ping and iperf3 at MTU 1500 and 9000 both ways, the MTU set on the
#      running interface, sha256 transfers, VLAN, RSS, down/up, reload,
#      DMA-API debug, dmesg);
#   3. per-packet counts of those calls for TX and RX traffic (iperf3 at
#      MTU 1500 one way at a time; the peer is virtio-net, which does not use
#      the DMA API here, so every call is the lan743x's);
#   4. with E2E_ARM_LIVE=1 (the series' module): live MTU changes and
#      ethtool -G ring changes under traffic, then a sha256 transfer;
#   5. DMA-API debug error count and the kernel log once more.
# Prints "E2E-ARM RESULT: PASS" or "... FAIL (n failures)"; exit status 0/1.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
T=/sys/kernel/tracing
DUT_IP=10.74.30.1
PEER_IP=10.74.30.2
SYNC_T=${E2E_ARM_SYNC_TIME:-3}
FAILS=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
info() { echo "---- $*"; }
P() { ip netns exec peer "$@"; }
. "$HERE/klog.sh"

# Counting method (E2E_ARM_COUNT): "ftrace" (default) = the function
# tracer filtered to the two functions, hits = the sum over CPUs of the
# ring buffer's entries + overrun (per_cpu/cpuN/stats: every event written,
# kept or overwritten); "kprobe" = kprobe events and kprobe_profile's hit
# counts. The kprobe way oopses on this Thumb-2 kernel (t16_emulate_push,
# docs/arm-guest.md), so it is not the default until the kernel is ARM-mode.
COUNT=${E2E_ARM_COUNT:-ftrace}
total() {	# total hits of both functions so far (ftrace) / of one (kprobe)
	if [ "$COUNT" = kprobe ]; then
		awk -v e="$1" '$1 == e || $1 == "lab/" e { print $2 }' "$T/kprobe_profile"
	else
		cat "$T"/per_cpu/cpu*/stats | awk '/^entries:|^overrun:/ { s += $2 } END { print s + 0 }'
	fi
}
# ftrace: one counter for both functions, split by the trace's function
# names at the end of each measured interval (buffer large enough for it)
split_trace() {	# print "for_device for_cpu" of the events in the buffer
	awk '/arch_sync_dma_for_device/ { d++ } /arch_sync_dma_for_cpu/ { c++ }
		END { print d + 0, c + 0 }' "$T/trace"
}
hits() {
	if [ "$COUNT" = kprobe ]; then total "$1"; else
		case "$1" in sync_dev) split_trace | cut -d" " -f1 ;; *) split_trace | cut -d" " -f2 ;; esac
	fi
}
stat_of() { cat "/sys/class/net/$DUT/statistics/$1"; }

info "kernel $(uname -r), $(uname -m), $(nproc) CPUs, module ${LAN743X_MODDIR:-?}"
grep -E '^(MemTotal|HighTotal|LowTotal):' /proc/meminfo | sed 's/^/    /'
if [ -d /proc/device-tree ]; then
	pcie=$(ls -d /proc/device-tree/pcie@* 2>/dev/null | head -1)
	if [ -e "$pcie/dma-coherent" ]; then
		echo "    device tree: $(basename "$pcie") has dma-coherent (coherent PCI DMA)"
	else
		echo "    device tree: $(basename "$pcie") without dma-coherent (non-coherent PCI DMA)"
	fi
fi

# 1. count the cache maintenance for streaming DMA
M0=$(date +%s%N)
echo "lan743x-e2e-arm-mark-$M0" >/dev/kmsg
if [ "$COUNT" = kprobe ]; then
	echo 'p:lab/sync_dev arch_sync_dma_for_device' >>"$T/kprobe_events" &&
		echo 'p:lab/sync_cpu arch_sync_dma_for_cpu' >>"$T/kprobe_events" &&
		echo 0 >"$T/tracing_on" && echo 1 >"$T/events/lab/enable" &&
		pass "kprobes on arch_sync_dma_for_device/arch_sync_dma_for_cpu" ||
		fail "kprobes on arch_sync_dma_for_device/arch_sync_dma_for_cpu: $(tail -3 "$T/error_log" 2>/dev/null)"
else
	echo 0 >"$T/tracing_on"
	echo 16384 >"$T/buffer_size_kb"
	echo 'arch_sync_dma_for_device arch_sync_dma_for_cpu' >"$T/set_ftrace_filter" &&
		echo function >"$T/current_tracer" &&
		pass "function tracer on $(tr '\n' ' ' <"$T/set_ftrace_filter")" ||
		fail "function tracer on arch_sync_dma_for_device/arch_sync_dma_for_cpu"
fi
# 2. the x86 e2e, shorter (TCG on a 32-bit ARM guest is slow)
info "lab/guest/e2e.sh"
E2E_IPERF_TIME=${E2E_IPERF_TIME:-5} E2E_XFER_MB=${E2E_XFER_MB:-16} \
	E2E_UPDOWN=${E2E_UPDOWN:-5} E2E_RELOAD=${E2E_RELOAD:-3} \
	bash "$HERE/e2e.sh" 2>&1 | sed 's/^/  | /'
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && pass "e2e.sh" || fail "e2e.sh exit $rc"

DUT=""
for n in /sys/class/net/*; do
	[ "$(basename "$(readlink -f "$n/device/driver" 2>/dev/null)")" = lan743x ] && DUT=$(basename "$n")
done
[ -n "$DUT" ] || { fail "no lan743x interface after e2e.sh"; echo "E2E-ARM RESULT: FAIL ($FAILS failures)"; exit 1; }
PEER=$(P ls /sys/class/net | grep -v '^lo$' | head -1)
# e2e.sh killed its iperf3 server; bring one back (its own log, daemon)
P iperf3 -s -D >/dev/null 2>&1
ip addr add $DUT_IP/24 dev "$DUT" 2>/dev/null
ip link set "$DUT" up
for i in $(seq 1 50); do [ "$(cat /sys/class/net/$DUT/carrier)" = 1 ] && break; sleep 0.1; done
sleep 1
ping -c 1 -W 3 $PEER_IP >/dev/null || fail "no ping after e2e.sh"

# 3. cache maintenance per packet, each direction at MTU 1500
info "DMA cache maintenance per packet (calls / lan743x packets, MTU 1500, iperf3 ${SYNC_T}s)"
for dir in tx rx; do
	extra=""; [ $dir = rx ] && extra=-R
	t0=$(stat_of tx_packets); r0=$(stat_of rx_packets)
	if [ "$COUNT" = kprobe ]; then d0=$(hits sync_dev); c0=$(hits sync_cpu)
	else echo >"$T/trace"; echo 1 >"$T/tracing_on"; fi
	timeout 120 iperf3 -c $PEER_IP -t "$SYNC_T" $extra >/dev/null 2>&1
	t1=$(stat_of tx_packets); r1=$(stat_of rx_packets)
	if [ "$COUNT" = kprobe ]; then dd=$(($(hits sync_dev) - d0)); dc=$(($(hits sync_cpu) - c0))
	else
		echo 0 >"$T/tracing_on"
		all=$(total); read -r dd dc < <(split_trace)
		[ "$all" = $((dd + dc)) ] || echo "    note: the trace buffer overran ($all events, $((dd + dc)) kept): per-function split of the kept ones, scaled"
		if [ $((dd + dc)) -gt 0 ] && [ "$all" != $((dd + dc)) ]; then
			dd=$((dd * all / (dd + dc))); dc=$((all - dd))
		fi
	fi
	tp=$((t1 - t0)); rp=$((r1 - r0))
	python3 -c "
d, c, t, r = $dd, $dc, $tp, $rp
print('SYNC %s: sync_for_device=%d sync_for_cpu=%d tx_packets=%d rx_packets=%d '
      'per_packet(tx+rx): for_device=%.3f for_cpu=%.3f' %
      ('$dir', d, c, t, r, d / max(t + r, 1), c / max(t + r, 1)))"
	if [ $((dd + dc)) -gt 0 ] && [ $((tp + rp)) -gt 100 ]; then
		pass "$dir: arch_sync_dma_* rises with traffic (+$dd for_device, +$dc for_cpu over $((tp + rp)) packets)"
	else
		fail "$dir: arch_sync_dma_* did not rise with traffic (+$dd/+$dc over $((tp + rp)) packets)"
	fi
done
if [ "$COUNT" = kprobe ]; then
	d0=$(hits sync_dev); c0=$(hits sync_cpu); sleep "$SYNC_T"
	echo "    SYNC idle ${SYNC_T}s: sync_for_device=$(($(hits sync_dev) - d0)) sync_for_cpu=$(($(hits sync_cpu) - c0))"
else
	echo >"$T/trace"; echo 1 >"$T/tracing_on"; sleep "$SYNC_T"; echo 0 >"$T/tracing_on"
	echo "    SYNC idle ${SYNC_T}s: for_device for_cpu = $(split_trace)"
fi

# 4. live MTU and ring changes under traffic (the series' module)
if [ "${E2E_ARM_LIVE:-0}" = 1 ]; then
	info "live MTU and ethtool -G changes under traffic"
	ethtool -g "$DUT" | sed 's/^/    /'
	timeout 120 iperf3 -c $PEER_IP -t 20 --bidir >/tmp/live-iperf.out 2>&1 &
	ipid=$!
	sleep 2
	ok=1
	for m in 9000 1500 4000 1500; do
		P ip link set dev "$PEER" mtu 9000
		ip link set dev "$DUT" mtu $m 2>/tmp/live.err || { ok=0; echo "    mtu $m: $(cat /tmp/live.err)"; }
		sleep 1
	done
	for r in "256 256" "128 512" "512 128" "1024 1024" "512 512"; do
		ethtool -G "$DUT" rx "${r% *}" tx "${r#* }" 2>/tmp/live.err || { ok=0; echo "    ethtool -G rx ${r% *} tx ${r#* }: $(cat /tmp/live.err)"; }
		sleep 1
	done
	wait $ipid; irc=$?
	[ $ok = 1 ] && pass "live: 4 MTU changes and 5 ethtool -G changes on the running interface" ||
		fail "live MTU/ring changes"
	[ $irc = 0 ] && pass "live: iperf3 --bidir across the changes ran to the end" ||
		{ fail "live: iperf3 --bidir exit $irc"; tail -5 /tmp/live-iperf.out; }
	ethtool -g "$DUT" | sed 's/^/    /'
	P ip link set dev "$PEER" mtu 1500
	ip link set dev "$DUT" mtu 9000 && P ip link set dev "$PEER" mtu 9000
	sleep 1
	dd if=/dev/urandom of=/tmp/live.blob bs=1M count=16 status=none
	port=5444
	P python3 "$HERE/xfer.py" recv $port >/tmp/live.recv 2>&1 &
	sleep 1
	s=$(timeout 300 python3 "$HERE/xfer.py" send $PEER_IP $port /tmp/live.blob)
	wait
	r=$(tail -1 /tmp/live.recv)
	[ -n "$s" ] && [ "$s" = "$r" ] && pass "live: sha256 16MiB at MTU 9000 after the changes: $s" ||
		fail "live: sha256 after the changes: sent=[$s] recv=[$r]"
	ping -c 3 -i 0.2 -W 3 -M do -s 8972 $PEER_IP >/dev/null && pass "live: ping 8972 bytes" || fail "live: ping 8972 bytes"
	ip link set dev "$DUT" mtu 1500; P ip link set dev "$PEER" mtu 1500
fi

# 5. DMA-API debug and the kernel log over the whole run
e=$(cat /sys/kernel/debug/dma-api/error_count 2>/dev/null)
[ "$e" = 0 ] && pass "DMA-API debug: 0 errors (whole run)" || fail "DMA-API debug: '$e' errors"
b=$(dmesg | klog_bad "lan743x-e2e-arm-mark-$M0")
[ -z "$b" ] && pass "dmesg clean (whole run)" || fail "dmesg: $b"
[ "$COUNT" = kprobe ] && echo 0 >"$T/events/lab/enable"
[ "$COUNT" = kprobe ] || echo nop >"$T/current_tracer"
P pkill iperf3 2>/dev/null
if [ $FAILS -eq 0 ]; then echo "E2E-ARM RESULT: PASS"; exit 0; fi
echo "E2E-ARM RESULT: FAIL ($FAILS failures)"
exit 1
