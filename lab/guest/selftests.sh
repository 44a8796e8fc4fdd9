#!/bin/bash
# Guest side of lab/selftests.py: run the kernel's lan743x kselftests
# (tools/testing/selftests/drivers/net/lan743x) against each given
# lan743x.ko, with the virtio-net peer moved into a network namespace as
# the remote end (REMOTE_TYPE=netns). Runs inside the VM as root:
#
#   lab/vm.sh lab/guest/selftests.sh --tests DIR --out DIR [NAME=]KO...
#
#   --tests DIR  a selftests root (holding drivers/net/lan743x, net/lib/py,
#                drivers/net/lib/py; in-tree layout with tools/net/ynl next
#                to it, or an installed one). Default: $LAN743X_SELFTESTS.
#   --out DIR    KTAP output: DIR/NAME/<test>.ktap (default
#                $LAN743X_RESULTS, else /tmp/lan743x-selftests)
#   KO           lan743x.ko to test, NAME=path to label it (default: the
#                file's directory name); $LAN743X_KO when none is given,
#                else the kernel's own module (modprobe).
#   env: LAN743X_MODDIR (dir with lib/modules/<ver> for the module's
#        dependencies, set by lab/vm.sh from MODDIR), LAN743X_PEER_MAC,
#        LAN743X_TESTS (space list of test files, default all in Makefile,
#        "none": only the generic tests below),
#        LAN743X_GENERIC (space list of the kernel's own generic driver
#        tests, relative to drivers/net, e.g. "ping.py hw/pp_alloc_fail.py";
#        each one that exists in the tree runs after ours, KTAP in
#        generic-<name>.ktap; one that does not exist is reported missing),
#        plus the knobs of the tests (LAN743X_MIN_MBPS, LAN743X_XFER_MB...).
#
# Prints each test's KTAP output; exit status 0 when every program ran
# (test results are judged by the host against lab/selftests-expected.txt).
set -u

TESTS=${LAN743X_SELFTESTS:-}
OUT=${LAN743X_RESULTS:-/tmp/lan743x-selftests}
MODS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--tests) TESTS=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) MODS+=("$1"); shift ;;
	esac
done
[ ${#MODS[@]} -gt 0 ] || MODS=("${LAN743X_KO:-kernel=}")
[ -n "$TESTS" ] || { echo "selftests.sh: --tests DIR or LAN743X_SELFTESTS needed" >&2; exit 2; }
DIR=$TESTS/drivers/net/lan743x
[ -f "$DIR/Makefile" ] || { echo "selftests.sh: no $DIR/Makefile" >&2; exit 2; }

. "$(dirname "$0")/lib.sh"

state() {	# state DUT: what the tests change, on both ends
	ip -br link show dev "$1" | awk '{print $1, $2}'
	ip -o link show dev "$1" | grep -o 'mtu [0-9]*'
	ethtool -k "$1" | grep -v '\[fixed\]'
	ip -n "$NS" -o link | grep -o '^[0-9]*: [^:]*: .*mtu [0-9]*'
	ip -n "$NS" -br addr
	ls /sys/kernel/tracing/instances 2>/dev/null
	ps -eo comm | grep -E '^(iperf3|python3|ping)$' | sort | uniq -c
}

programs() {
	[ "${LAN743X_TESTS:-}" != none ] || return 0	# the generic tests only
	if [ -n "${LAN743X_TESTS:-}" ]; then
		echo "$LAN743X_TESTS"
		return
	fi
	sed -n '/^TEST_PROGS/,/^\s*#/p' "$DIR/Makefile" | grep -o '[a-z0-9_]*\.py'
}

# The body is a function, parsed whole before it runs: the script can be
# edited while a (long) run is in progress.
main() {
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
command -v iperf3 >/dev/null || log "warning: no iperf3 in the guest: iperf3 tests will skip"
peer_setup || exit 1
# the tests write caches next to themselves: keep them off read-only roots
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

for m in "${MODS[@]}"; do
	case "$m" in
	*=*) name=${m%%=*} ko=${m#*=} ;;
	*) ko=$m name=$(basename "$(dirname "$ko")") ;;
	esac
	mkdir -p "$OUT/$name"
	log "module $name: ${ko:-the kernel lan743x}"
	if ! load "$ko"; then
		echo "not ok 1 lab.load # could not load ${ko:-lan743x}" | tee "$OUT/$name/load.ktap"
		continue
	fi
	if ! dut=$(dut_setup); then
		echo "not ok 1 lab.load # no lan743x interface" | tee "$OUT/$name/load.ktap"
		continue
	fi
	echo "ok 1 lab.load" >"$OUT/$name/load.ktap"
	log "module $name: NETIF=$dut"
	state0=$(state "$dut")
	marker="lan743x-selftests-$name-$(date +%s%N)"
	echo "$marker" >/dev/kmsg
	for t in $(programs); do
		log "module $name: $t"
		echo "# module $name: $t"
		(cd "$DIR" && NETIF=$dut LOCAL_V4=$LOCAL_V4 REMOTE_V4=$REMOTE_V4 \
			REMOTE_TYPE=netns REMOTE_ARGS=$NS \
			timeout -k 10 900 python3 "./$t") 2>&1 | tee "$OUT/$name/${t%.py}.ktap"
		echo "# exit status ${PIPESTATUS[0]}" | tee -a "$OUT/$name/${t%.py}.ktap"
	done
	# the kernel's own generic driver tests, written upstream, not by us
	for g in ${LAN743X_GENERIC:-}; do
		gname=generic-$(echo "${g%.py}" | tr / -)
		if [ ! -f "$TESTS/drivers/net/$g" ]; then
			echo "ok 1 generic.${g%.py} # SKIP not in this kernel's selftests" |
				tee "$OUT/$name/$gname.ktap"
			continue
		fi
		log "module $name: generic $g"
		echo "# module $name: generic $g"
		(cd "$TESTS/drivers/net/$(dirname "$g")" && NETIF=$dut LOCAL_V4=$LOCAL_V4 \
			REMOTE_V4=$REMOTE_V4 REMOTE_TYPE=netns REMOTE_ARGS=$NS \
			timeout -k 10 900 python3 "./$(basename "$g")") 2>&1 |
			sed "s/^\(\s*\(not \)\?ok [0-9]* \)/\1generic./" |
			tee "$OUT/$name/$gname.ktap"
		echo "# exit status ${PIPESTATUS[0]}" | tee -a "$OUT/$name/$gname.ktap"
	done
	# the tests must leave both ends as they found them
	state1=$(state "$dut")
	if [ "$state0" = "$state1" ]; then
		echo "ok 1 lab.state_restored" | tee "$OUT/$name/state.ktap"
	else
		{ diff <(echo "$state0") <(echo "$state1") | sed 's/^/# /'
		  echo "not ok 1 lab.state_restored"; } | tee "$OUT/$name/state.ktap"
	fi
	# kernel warnings while this module ran fail the run
	bad=$(dmesg | awk -v m="$marker" 'f; index($0, m) {f=1}' |
		grep -E "WARNING|BUG|Call Trace|DMA-API|NETDEV WATCHDOG|refcount_t" | head -20)
	if [ -z "$bad" ]; then
		echo "ok 1 lab.dmesg_clean" | tee "$OUT/$name/dmesg.ktap"
	else
		{ echo "$bad" | sed 's/^/# /'; echo "not ok 1 lab.dmesg_clean"; } |
			tee "$OUT/$name/dmesg.ktap"
	fi
	ip link set "$dut" down
done
}
main; exit 0
