#!/bin/bash
# Guest side of `make soak`: live MTU and ring-size changes of a running
# lan743x interface under bidirectional TCP traffic, then the leak checks.
# Runs inside the VM as root (best on the debug kernel: KASAN, kmemleak,
# lockdep, DMA-API debug):
#
#   lab/vm/vm.sh lab/guest/soak.sh [KO]
#
#   KO  lan743x.ko to load (default $LAN743X_KO, else the kernel's own)
#   env: LAN743X_SOAK_CHANGES  number of changes (default 1000): MTU 1500 <-> 9000,
#                      every 4th change an ethtool -G ring resize instead
#        LAN743X_YNL   tools/net/ynl of a kernel tree (with
#                      Documentation/netlink/specs two levels up) for the
#                      page_pool check; without it that check is skipped
#                      and says so
#        LAN743X_SOAK_PENDING=1  a frame pending at each change: the model
#                      runs with fault-drop-ls-every=N (lab/vm/vm.sh
#                      DUT_OPTS; make soak ARCH=armv7), so every Nth frame
#                      it writes has no LS and stays half-assembled in the
#                      driver until the next frame. Before each change the
#                      traffic is paused (SIGSTOP to iperf3 on both ends),
#                      and the peer sends single UDP frames until one is not
#                      received (rx_packets): that one is pending when
#                      the change stops the channels, whose drain counts it
#                      lost (rx_dropped). Counted: the changes made with a
#                      frame pending, and those whose rx_dropped rose.
#
# Prints "soak: PASS <what>" / "soak: FAIL <what>" lines and a summary;
# exit status 0 only if every check passed.
set -u
. "$(dirname "$0")/lib.sh"

CHANGES=${LAN743X_SOAK_CHANGES:-1000}
KO=${1:-${LAN743X_KO:-}}
YNL=${LAN743X_YNL:-}
# tools/net/ynl's command line: pyynl/cli.py since 6.14 (7.3), cli.py
# before (6.12). A YNL dir without either is an error, not a skipped check.
YNL_CLI=
if [ -n "$YNL" ]; then
	for c in "$YNL/pyynl/cli.py" "$YNL/cli.py"; do
		[ -f "$c" ] && { YNL_CLI=$c; break; }
	done
	[ -n "$YNL_CLI" ] || { echo "soak: no ynl cli.py in $YNL (pyynl/cli.py or cli.py)" >&2; exit 2; }
fi
PENDING=${LAN743X_SOAK_PENDING:-0}
PENDING_MAX=64		# UDP frames tried for one pending frame
IPERF_PIDS=
# a progress line (and the kernel log check) every PROGRESS changes
PROGRESS=${LAN743X_SOAK_PROGRESS:-100}
FAILS=0
STOP=/tmp/soak.stop
ok() { echo "soak: PASS $*"; }
bad() { echo "soak: FAIL $*"; FAILS=$((FAILS + 1)); }

# page_pools of ifindex $1 as "id inflight detached" lines
pools() {
	python3 "$YNL_CLI" --no-schema \
		--spec "$YNL/../../../Documentation/netlink/specs/netdev.yaml" \
		--dump page-pool-get --output-json 2>/dev/null |
		python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("ifindex") == int(sys.argv[1]):
        print(p["id"], p.get("inflight", 0), "detach-time" in p)' "$1"
}

# bidirectional TCP in 20 s runs until $STOP exists; one line per run
traffic() {
	local n=0
	while [ ! -e "$STOP" ]; do
		n=$((n + 1))
		timeout 80 iperf3 -c "$REMOTE_V4" -t 20 --bidir -P 2 -J \
			>"/tmp/soak-iperf-$n.json" 2>&1
		python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    e = d.get("end", {})
    print("run", sys.argv[2], "error" if d.get("error") else "ok",
          int(e.get("sum_received", {}).get("bytes", 0) +
              e.get("sum_received_bidir_reverse", {}).get("bytes", 0)))
except Exception as x:
    print("run", sys.argv[2], "error 0", x)' "/tmp/soak-iperf-$n.json" $n
	done >/tmp/soak-traffic.log
}

# make_pending DUT: traffic paused, a frame half-assembled in the driver;
# status 0 if one is (a UDP frame not received)
make_pending() {
	local dut=$1 k a b last
	IPERF_PIDS=$(pidof iperf3)
	# shellcheck disable=SC2086
	[ -z "$IPERF_PIDS" ] || kill -STOP $IPERF_PIDS
	# quiet: no frame for 0.3 s (a stopped receiver still ACKs what is
	# in flight)
	for k in $(seq 1 20); do
		a=$(cat "/sys/class/net/$dut/statistics/rx_packets")
		sleep 0.3
		b=$(cat "/sys/class/net/$dut/statistics/rx_packets")
		[ "$a" = "$b" ] && break
	done
	for k in $(seq 1 "$PENDING_MAX"); do
		last=$(cat "/sys/class/net/$dut/statistics/rx_packets")
		ip netns exec "$NS" bash -c "echo p >/dev/udp/$LOCAL_V4/9" 2>/dev/null
		sleep 0.1
		[ "$(cat "/sys/class/net/$dut/statistics/rx_packets")" = "$last" ] && return 0
	done
	return 1
}

resume_traffic() {
	# shellcheck disable=SC2086
	[ -z "$IPERF_PIDS" ] || kill -CONT $IPERF_PIDS 2>/dev/null
	IPERF_PIDS=
}

main() {
	local dut ifindex i mtu rc t0 t1 nfail=0 rings r leaks pl
	local pend=0 counted=0 d0 d1
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	dmesg -C
	[ -w /sys/kernel/debug/kmemleak ] && echo clear >/sys/kernel/debug/kmemleak

	peer_setup || { bad "no peer"; return 1; }
	ip -n "$NS" link set dev "$PEER" mtu 9000
	load "$KO" || { bad "module did not load"; return 1; }
	dut=$(dut_setup) || { bad "no lan743x interface"; return 1; }
	ifindex=$(cat "/sys/class/net/$dut/ifindex")
	ip link set dev "$dut" mtu 9000
	log "DUT $dut (ifindex $ifindex), $CHANGES changes"

	# the page_pool listing works: the running interface has pools
	if [ -n "$YNL_CLI" ]; then
		pl=$(pools "$ifindex")
		[ -n "$pl" ] && ok "page_pool: $(echo "$pl" | wc -l) pools of $dut listed while up" ||
			bad "page_pool: no pool of $dut listed while up (ynl failed?)"
	fi

	ip netns exec "$NS" iperf3 -s -D
	sleep 1
	rm -f "$STOP"
	traffic &
	local tpid=$!
	sleep 2

	rings=("256 512" "64 64" "1024 1024" "128 128")
	t0=$(date +%s)
	for i in $(seq 1 "$CHANGES"); do
		if [ "$PENDING" = 1 ]; then
			make_pending "$dut" && pend=$((pend + 1))
			d0=$(cat "/sys/class/net/$dut/statistics/rx_dropped")
		fi
		if [ $((i % 4)) = 0 ]; then
			r=${rings[$(((i / 4) % 4))]}
			ethtool -G "$dut" rx "${r% *}" tx "${r#* }" 2>/tmp/soak-err
			rc=$?
		else
			mtu=$((i % 2 ? 1500 : 9000))
			ip link set dev "$dut" mtu "$mtu" 2>/tmp/soak-err
			rc=$?
		fi
		[ $rc = 0 ] || { nfail=$((nfail + 1)); log "change $i failed: $(cat /tmp/soak-err)"; }
		if [ "$PENDING" = 1 ]; then
			d1=$(cat "/sys/class/net/$dut/statistics/rx_dropped")
			[ "$d1" -gt "$d0" ] && counted=$((counted + 1))
			resume_traffic
		fi
		if [ $((i % PROGRESS)) = 0 ]; then
			log "$i changes, $(($(date +%s) - t0)) s"
			[ "$PENDING" = 1 ] && echo "soak: progress: $i changes, $pend with a frame pending, $counted counted lost"
			dmesg | grep -qE 'WARNING|BUG|KASAN|DMA-API|possible .*lock|stalled pool' &&
				{ log "kernel complained, stopping early"; break; }
		fi
		sleep 0.1
	done
	t1=$(date +%s)
	[ $nfail = 0 ] && ok "$i changes in $((t1 - t0)) s, none failed" ||
		bad "$nfail of $i changes failed"
	if [ "$PENDING" = 1 ]; then
		[ "$counted" -gt 0 ] &&
			ok "pending: $pend of $i changes made with a frame pending, $counted counted it lost" ||
			bad "pending: $pend of $i changes made with a frame pending, none counted it lost"
	fi

	# the link still carries full-size frames at the final MTU
	mtu=$(cat "/sys/class/net/$dut/mtu")
	ip -n "$NS" link set dev "$PEER" mtu "$mtu"
	if ping -c 3 -W 2 -M do -s $((mtu - 28)) "$REMOTE_V4" >/dev/null; then
		ok "DF ping of $mtu bytes after the changes"
	else
		bad "no DF ping of $mtu bytes after the changes"
	fi

	touch "$STOP"
	wait "$tpid"
	pkill iperf3
	local runs errs bytes
	runs=$(grep -c '^run' /tmp/soak-traffic.log)
	errs=$(grep -c '^run [0-9]* error' /tmp/soak-traffic.log)
	bytes=$(awk '{s += $4} END {printf "%.0f", s}' /tmp/soak-traffic.log)
	[ "$errs" = 0 ] && [ "$bytes" -gt 0 ] &&
		ok "traffic: $runs iperf3 runs, $bytes bytes received, no run failed" ||
		bad "traffic: $errs of $runs iperf3 runs failed ($bytes bytes)"
	[ "$errs" = 0 ] || grep error /tmp/soak-traffic.log | head -5

	# every page back in its pool once the interface is down
	ip link set dev "$dut" down
	if [ -n "$YNL_CLI" ]; then
		for i in $(seq 1 30); do
			pl=$(pools "$ifindex")
			[ -z "$pl" ] && break
			sleep 1
		done
		[ -z "$pl" ] && ok "page_pool: no pool of $dut left after down (none in flight)" ||
			bad "page_pool: pools left after down (id inflight detached): $(echo $pl)"
	else
		echo "soak: SKIP page_pool check (LAN743X_YNL not set)"
	fi
	rmmod lan743x || bad "rmmod lan743x"

	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan >/sys/kernel/debug/kmemleak
		sleep 5
		echo scan >/sys/kernel/debug/kmemleak
		leaks=$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)
		if grep -qE 'lan743x|page_pool' /sys/kernel/debug/kmemleak; then
			bad "kmemleak: objects allocated by lan743x/page_pool unreferenced"
			grep -B2 -A20 -E 'lan743x|page_pool' /sys/kernel/debug/kmemleak | head -60
		else
			ok "kmemleak: none from lan743x or page_pool ($leaks unreferenced elsewhere)"
		fi
	else
		echo "soak: SKIP kmemleak (kernel without it)"
	fi

	if dmesg | grep -qE 'WARNING|BUG|KASAN|DMA-API|possible .*lock|stalled pool|Call Trace'; then
		bad "kernel log (first lines follow)"
		dmesg | grep -B5 -A40 -m1 -E 'WARNING|BUG|KASAN|DMA-API|possible .*lock|stalled pool' | head -80
	else
		ok "kernel log clean (no WARNING/BUG/KASAN/DMA-API/lockdep)"
	fi
	echo "soak: $FAILS failed"
	[ $FAILS = 0 ]
}

main "$@"
