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
#                      traffic is paused (SIGSTOP to iperf3 on both ends,
#                      and the peer's frames sent to an address nobody has,
#                      since its kernel keeps retransmitting), and the peer
#                      sends single UDP frames until one is not received
#                      (rx_packets): that one is pending when the change
#                      stops the channels, whose drain counts it lost
#                      (rx_dropped). Each such frame must be counted lost
#                      by its change, or have been delivered after all
#                      (late, in a starved guest; then it was not pending).
#
# Prints "soak: PASS <what>" / "soak: FAIL <what>" lines and a summary;
# exit status 0 only if every check passed.
set -u
HERE=$(dirname "$0")
. "$HERE/lib.sh"

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
PAUSE=/tmp/soak.pause
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

# bidirectional TCP in 20 s runs until $STOP exists, each run's JSON in
# /tmp/soak-iperf-N.json (read after the soak, by traffic_log: a python3
# start per run would take the guest's only CPU from the changes).
# No run starts while $PAUSE exists (make_pending stops the running
# one); with frames made pending, a run spans paused changes, so its
# guard against a hung iperf3 is longer.
traffic() {
	local n=0 limit=80
	[ "$PENDING" = 1 ] && limit=1800
	rm -f /tmp/soak-iperf-*.json
	while [ ! -e "$STOP" ]; do
		while [ -e "$PAUSE" ] && [ ! -e "$STOP" ]; do sleep 0.2; done
		n=$((n + 1))
		timeout "$limit" iperf3 -c "$REMOTE_V4" -t 20 --bidir -P 2 -J \
			>"/tmp/soak-iperf-$n.json" 2>&1
	done
}

# traffic_log: one line per run, "run N ok|error BYTES [ERROR]"
traffic_log() {
	python3 -c '
import glob, json
runs = sorted(glob.glob("/tmp/soak-iperf-*.json"),
              key=lambda f: int(f.split("-")[-1].split(".")[0]))
for f in runs:
    n = f.split("-")[-1].split(".")[0]
    try:
        d = json.load(open(f))
        e = d.get("end", {})
        print("run", n, "error" if d.get("error") else "ok",
              int(e.get("sum_received", {}).get("bytes", 0) +
                  e.get("sum_received_bidir_reverse", {}).get("bytes", 0)),
              d.get("error", ""))
    except Exception as x:
        print("run", n, "error 0", x)'
}

# The peer's side of make_pending: lab/guest/pender.py, one process in the
# peer's namespace for the whole soak, reading the DUT's rx_packets
# through a descriptor opened before it entered the namespace (fd 3).
PENDER_PID=
PENDING_RX=

# start_pender DUT: the sender, on two FIFOs (fd 5 requests, 6 answers)
start_pender() {
	local dut=$1
	rm -f /tmp/soak-req /tmp/soak-ans
	mkfifo /tmp/soak-req /tmp/soak-ans
	ip netns exec "$NS" python3 -u "$HERE/pender.py" "$PEER" \
		"$(cat "/sys/class/net/$dut/address")" "$LOCAL_V4" "$REMOTE_V4" "$PENDING_MAX" \
		3<"/sys/class/net/$dut/statistics/rx_packets" \
		</tmp/soak-req >/tmp/soak-ans &
	PENDER_PID=$!
	exec 5>/tmp/soak-req 6</tmp/soak-ans
}

# IPERF_PIDS: the running iperf3 processes (both ends: one PID namespace),
# found without starting a process (pidof: seconds under TCG, each change)
iperf_pids() {
	local d c
	IPERF_PIDS=
	for d in /proc/[0-9]*; do
		read -r c 2>/dev/null <"$d/comm" && [ "$c" = iperf3 ] &&
			IPERF_PIDS+=" ${d#/proc/}"
	done
}

# now_ms: NOW, milliseconds of the epoch, without date(1)
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	NOW=$((t / 1000))
}

# make_pending: traffic paused, a frame half-assembled in the driver;
# status 0 if one is (a UDP frame not received), with PENDING_RX the DUT's
# rx_packets then
make_pending() {
	local ans
	# no new run from now. One starting this instant, after the PIDs
	# are read, runs on, but its peer's frames go nowhere either (the
	# neighbour entry below) and so cannot reach the DUT.
	touch "$PAUSE"
	sleep 0.3
	iperf_pids
	# shellcheck disable=SC2086
	[ -z "$IPERF_PIDS" ] || kill -STOP $IPERF_PIDS 2>/dev/null
	echo go >&5
	read -r -t 300 ans <&6 || { log "pending: no answer from the sender"; return 1; }
	[ "${ans%% *}" = pending ] || return 1
	PENDING_RX=${ans##* }
}

resume_traffic() {
	local ans
	echo restore >&5
	read -r -t 60 ans <&6 || log "pending: the sender did not restore the neighbour entry"
	# shellcheck disable=SC2086
	[ -z "$IPERF_PIDS" ] || kill -CONT $IPERF_PIDS 2>/dev/null
	IPERF_PIDS=
	rm -f "$PAUSE"
}

main() {
	local dut ifindex i mtu rc t0 t1 nfail=0 rings r leaks pl
	local pend=0 counted=0 late=0 d0 d1 p0 p1 what
	# where a change's time goes (ms): making the frame pending, the change
	local ms_pend=0 ms_change=0 ta NOW
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
	rm -f "$STOP" "$PAUSE"
	traffic &
	local tpid=$!
	sleep 2

	[ "$PENDING" = 1 ] && start_pender "$dut"
	rings=("256 512" "64 64" "1024 1024" "128 128")
	t0=$(date +%s)
	for i in $(seq 1 "$CHANGES"); do
		if [ "$PENDING" = 1 ]; then
			p0=-1
			now_ms; ta=$NOW
			make_pending "$dut" && pend=$((pend + 1)) && p0=$PENDING_RX
			now_ms; ms_pend=$((ms_pend + NOW - ta))
			read -r d0 <"/sys/class/net/$dut/statistics/rx_dropped"
		fi
		now_ms; ta=$NOW
		if [ $((i % 4)) = 0 ]; then
			r=${rings[$(((i / 4) % 4))]}
			what="ethtool -G rx ${r% *} tx ${r#* }"
			ethtool -G "$dut" rx "${r% *}" tx "${r#* }" 2>/tmp/soak-err
			rc=$?
		else
			# the other MTU: setting the current one again would be
			# no change at all (the core returns before the driver)
			read -r mtu <"/sys/class/net/$dut/mtu"
			mtu=$((mtu == 9000 ? 1500 : 9000))
			what="mtu $mtu"
			ip link set dev "$dut" mtu "$mtu" 2>/tmp/soak-err
			rc=$?
		fi
		now_ms; ms_change=$((ms_change + NOW - ta))
		[ $rc = 0 ] || { nfail=$((nfail + 1)); log "change $i failed: $(cat /tmp/soak-err)"; }
		if [ "$PENDING" = 1 ]; then
			read -r d1 <"/sys/class/net/$dut/statistics/rx_dropped"
			read -r p1 <"/sys/class/net/$dut/statistics/rx_packets"
			if [ "$d1" -gt "$d0" ]; then
				counted=$((counted + 1))
			elif [ "$p0" != -1 ] && [ "$p1" -gt "$p0" ]; then
				# delivered after all, only late (a starved guest):
				# it was not pending when the channels stopped
				late=$((late + 1))
			elif [ "$p0" != -1 ]; then
				log "change $i ($what): its pending frame neither delivered nor counted lost"
			fi
			resume_traffic
		fi
		if [ $((i % PROGRESS)) = 0 ]; then
			log "$i changes, $(($(date +%s) - t0)) s (making frames pending $((ms_pend / 1000)) s, the changes $((ms_change / 1000)) s)"
			[ "$PENDING" = 1 ] && echo "soak: progress: $i changes, $pend with a frame pending, $counted counted lost, $late delivered late"
			dmesg | grep -qE 'WARNING|BUG|KASAN|DMA-API|possible .*lock|stalled pool' &&
				{ log "kernel complained, stopping early"; break; }
		fi
		sleep 0.1
	done
	t1=$(date +%s)
	[ $nfail = 0 ] && ok "$i changes in $((t1 - t0)) s, none failed" ||
		bad "$nfail of $i changes failed"
	if [ "$PENDING" = 1 ]; then
		# each frame pending at a change is counted lost by it, or
		# was delivered late (then it was not pending)
		if [ "$counted" -gt 0 ] && [ $((counted + late)) = "$pend" ]; then
			ok "pending: $pend of $i changes made with a frame pending, $counted counted it lost, $late delivered it late"
		else
			bad "pending: $pend of $i changes made with a frame pending, $counted counted it lost, $late delivered it late, $((pend - counted - late)) neither"
		fi
	fi

	# the link still carries full-size frames at the final MTU
	mtu=$(cat "/sys/class/net/$dut/mtu")
	ip -n "$NS" link set dev "$PEER" mtu "$mtu"
	if ping -c 3 -W 2 -M do -s $((mtu - 28)) "$REMOTE_V4" >/dev/null; then
		ok "DF ping of $mtu bytes after the changes"
	else
		bad "no DF ping of $mtu bytes after the changes"
	fi

	if [ -n "$PENDER_PID" ]; then
		exec 5>&- 6<&-
		wait "$PENDER_PID"
	fi
	touch "$STOP"
	wait "$tpid"
	pkill iperf3
	local runs errs bytes
	traffic_log >/tmp/soak-traffic.log
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
