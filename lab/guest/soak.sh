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
#        LAN743X_SOAK_GUARD  seconds after which an iperf3 run counts as
#                      hung and is ended (default 80, 1800 with
#                      LAN743X_SOAK_PENDING=1: a run then spans paused
#                      changes)
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

# The ids of the interface's page_pools not destroyed (no detach-time)
attached() {
	pools "$1" | awk '$3 == "False" {print $1}' | sort | tr '\n' ' '
}

# Whether every word of $1 is one of $2
within() {
	local x
	for x in $1; do
		case " $2 " in *" $x "*) ;; *) return 1 ;; esac
	done
}

# TCP both ways in 20 s runs until $STOP exists: two loops, one sending
# to the peer (DUT TX) and one receiving from it (-R, DUT RX), each to its
# own server, each run's JSON in /tmp/soak-iperf-DIR-N.json (read after
# the soak, by traffic_log: a python3 start per run would take the
# guest's only CPU from the changes). Not one iperf3 --bidir run: its
# client connects the sending and the receiving streams at once, the
# client gives them directions in the order it made them and the server
# in the order it accepts them, which RSS may swap (one SYN-ACK reaching
# an RX queue polled before another's); then a stream has two senders,
# another two receivers, and the run can wait for ever with no frame
# moving (esnet/iperf issue 2029).
# No run starts while $PAUSE exists (make_pending stops the running
# ones); with frames made pending, a run spans paused changes, so its
# guard against a hung iperf3 is longer.
IPERF_PORTS="5201 5202"
GUARD=80
[ "$PENDING" = 1 ] && GUARD=1800
GUARD=${LAN743X_SOAK_GUARD:-$GUARD}
WD_FIFO=/tmp/soak-wd.fifo

# hung_report DIR N: what a run still going after the guard was waiting
# for: its processes' states and kernel waits, both ends' TCP sockets
# (ss -tnio) and TCP counters
hung_report() {
	local d c st
	echo "run $1-$2: still running after $GUARD s; iperf3 processes (pid, state, wchan):"
	for d in /proc/[0-9]*; do
		read -r c 2>/dev/null <"$d/comm" && [ "$c" = iperf3 ] || continue
		st=$(awk '{print $3}' "$d/stat")
		echo "  ${d#/proc/} $st $(cat "$d/wchan") $(tr '\0' ' ' <"$d/cmdline")"
	done
	echo "DUT's TCP sockets:"; ss -tnio
	echo "peer's TCP sockets:"; ip netns exec "$NS" ss -tnio
	echo "DUT: $(tcp_counters)"; echo "peer: $(peer_tcp_counters)"
}

# tcp_counters: this namespace's TCP timeouts and connections aborted by
# them (tcp_retries2 exhausted: the other end never told)
tcp_counters() {
	awk '/^TcpExt:/ { if (!h) { split($0, k); h = 1 } else split($0, v) }
	     END { for (i in k) if (k[i] ~ /^(TCPTimeouts|TCPAbortOnTimeout)$/) printf "%s %s ", k[i], v[i] }' \
		/proc/net/netstat
}

# peer_tcp_counters: tcp_counters in the peer's namespace
peer_tcp_counters() {
	ip netns exec "$NS" bash -c "$(declare -f tcp_counters); tcp_counters"
}

# watchdog PID DIR N: after $GUARD s, report the run (hung_report) and end
# it. It sleeps in bash's read on a FIFO nobody writes: no process of its
# own to leave behind when the run ends first and it is killed.
watchdog() {
	local x
	read -r -t "$GUARD" x <>"$WD_FIFO"
	kill -0 "$1" 2>/dev/null || return
	hung_report "$2" "$3" >"/tmp/soak-hung-$2-$3.txt" 2>&1
	kill -TERM "$1"
}

traffic() {
	local dir=$1 port=$2 n=0 rev= ipid wpid
	[ "$dir" = rx ] && rev=-R
	while [ ! -e "$STOP" ]; do
		while [ -e "$PAUSE" ] && [ ! -e "$STOP" ]; do sleep 0.2; done
		n=$((n + 1))
		# shellcheck disable=SC2086
		iperf3 -c "$REMOTE_V4" -p "$port" $rev -t 20 -P 2 -J \
			>"/tmp/soak-iperf-$dir-$n.json" 2>&1 &
		ipid=$!
		watchdog "$ipid" "$dir" "$n" &
		wpid=$!
		wait "$ipid"
		kill "$wpid" 2>/dev/null
		wait "$wpid" 2>/dev/null
	done
}

# traffic_log: one line per run, "run DIR-N ok|error BYTES [ERROR]", and
# for a failed run the bytes each stream received
traffic_log() {
	python3 -c '
import glob, json, re
def key(f):
    m = re.search(r"-(tx|rx)-(\d+)\.json$", f)
    return (m.group(1), int(m.group(2)))
for f in sorted(glob.glob("/tmp/soak-iperf-*-*.json"), key=key):
    d, n = key(f)
    try:
        j = json.load(open(f))
        e = j.get("end", {})
        print("run %s-%d" % (d, n), "error" if j.get("error") else "ok",
              int(e.get("sum_received", {}).get("bytes", 0)),
              j.get("error", ""))
        if j.get("error"):
            got = {}
            for i in j.get("intervals", []):
                for s in i.get("streams", []):
                    got[s["socket"]] = got.get(s["socket"], 0) + s["bytes"]
            print("  streams (socket: bytes over its intervals):", got,
                  "intervals:", len(j.get("intervals", [])))
    except Exception as x:
        print("run %s-%d" % (d, n), "error 0", x)'
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
	local dut ifindex i mtu rc t0 t1 nfail=0 rings r leaks pl p n
	local pend=0 counted=0 late=0 kept=0 d0 d1 p0 p1 pp0 pp1 what
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

	if [ "$PENDING" = 1 ]; then
		# Making a frame pending blinds the peer's path to the DUT for
		# most of each change, so a retransmitted segment often finds it
		# blind again: with the defaults (tcp_retries2 15, orphans 8) an
		# end gives a connection up without telling the other (counted
		# in TCPAbortOnTimeout), whose iperf3 may then wait for ever. The
		# soak's blinding is the lab's, so both ends retry for longer
		# than the guard.
		for n in "" "$NS"; do
			${n:+ip netns exec "$n"} sh -c 'echo 30 >/proc/sys/net/ipv4/tcp_retries2 &&
				echo 30 >/proc/sys/net/ipv4/tcp_orphan_retries' ||
				log "could not raise tcp_retries2/tcp_orphan_retries ${n:+in $n}"
		done
	fi
	for p in $IPERF_PORTS; do ip netns exec "$NS" iperf3 -s -D -p "$p"; done
	sleep 1
	rm -f "$STOP" "$PAUSE" /tmp/soak-iperf-*.json /tmp/soak-hung-*.txt "$WD_FIFO"
	mkfifo "$WD_FIFO"
	traffic tx "${IPERF_PORTS% *}" &
	local tpid=$!
	traffic rx "${IPERF_PORTS#* }" &
	local rpid=$!
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
			# the page_pools in use before the change: a change that
			# keeps them keeps the rings, and the pending frame with
			# them (an MTU increase adds pools beside them)
			pp0=$(attached "$ifindex")
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
			pp1=$(attached "$ifindex")
			if [ "$p0" != -1 ] && [ -n "$pp0" ] && within "$pp0" "$pp1"; then
				# an MTU change that kept the rings (within the
				# buffers, or growing them as they are refilled):
				# the frame stays pending in them (no change to judge)
				kept=$((kept + 1))
			elif [ "$d1" -gt "$d0" ]; then
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
			[ "$PENDING" = 1 ] && echo "soak: progress: $i changes, $pend with a frame pending, $kept kept the rings, $counted counted lost, $late delivered late"
			dmesg | grep -qE 'WARNING|BUG|KASAN|DMA-API|possible .*lock|stalled pool' &&
				{ log "kernel complained, stopping early"; break; }
		fi
		sleep 0.1
	done
	t1=$(date +%s)
	[ $nfail = 0 ] && ok "$i changes in $((t1 - t0)) s, none failed" ||
		bad "$nfail of $i changes failed"
	if [ "$PENDING" = 1 ]; then
		# each frame pending at a change that replaced the rings is
		# counted lost by it, or was delivered late (then it was not
		# pending); a change that kept the rings (their page_pools)
		# keeps the frame pending in them
		if [ "$counted" -gt 0 ] && [ $((counted + late + kept)) = "$pend" ]; then
			ok "pending: $pend of $i changes made with a frame pending, $kept kept the rings, $counted counted it lost, $late delivered it late"
		else
			bad "pending: $pend of $i changes made with a frame pending, $kept kept the rings, $counted counted it lost, $late delivered it late, $((pend - kept - counted - late)) neither"
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
	wait "$tpid" "$rpid"
	pkill iperf3
	local runs rxr errs bytes
	traffic_log >/tmp/soak-traffic.log
	runs=$(grep -c '^run ' /tmp/soak-traffic.log)
	rxr=$(grep -c '^run rx-' /tmp/soak-traffic.log)
	errs=$(grep -cE '^run [a-z]+-[0-9]+ error' /tmp/soak-traffic.log)
	bytes=$(awk '/^run / {s += $4} END {printf "%.0f", s}' /tmp/soak-traffic.log)
	[ "$errs" = 0 ] && [ "$rxr" -gt 0 ] && [ "$bytes" -gt 0 ] &&
		ok "traffic: $runs iperf3 runs ($((runs - rxr)) DUT to peer, $rxr peer to DUT), $bytes bytes received, no run failed" ||
		bad "traffic: $errs of $runs iperf3 runs failed ($((runs - rxr)) DUT to peer, $rxr peer to DUT, $bytes bytes)"
	[ "$errs" = 0 ] || grep -A1 -E '^run [a-z]+-[0-9]+ error' /tmp/soak-traffic.log | head -20
	for f in /tmp/soak-hung-*.txt; do [ -e "$f" ] && cat "$f"; done
	echo "soak: tcp: DUT $(tcp_counters); peer $(peer_tcp_counters)"

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
