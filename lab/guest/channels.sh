#!/bin/bash
# Guest-side checks of ethtool -L (set_channels, net-next patch 16) on a
# running lan743x interface, with the series' module:
#
#   lab/vm/vm.sh lab/guest/channels.sh KO      (DUT_DEVICE=pci11010 for 4 TX)
#
#   KO  lan743x.ko to load
#   env: LAN743X_YNL  tools/net/ynl of a kernel tree (with
#                     Documentation/netlink/specs two levels up) for the
#                     queue and qstats checks (skipped and said so without)
#
# Prints "channels: PASS <what>" / "channels: FAIL <what>" and a summary;
# exit status 0 only if every check passed. docs/design.md has a run.
set -u
exec 2>&1	# one stream: the console interleaves two badly
HERE=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/klog.sh"

KO=${1:-${LAN743X_KO:-}}
YNL=${LAN743X_YNL:-}
FAILS=0
ok() { echo "channels: PASS $*"; }
bad() { echo "channels: FAIL $*"; FAILS=$((FAILS + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

ynl() {	# ynl ARGS...: the netdev family, JSON out
	python3 "$YNL/pyynl/cli.py" --no-schema \
		--spec "$YNL/../../../Documentation/netlink/specs/netdev.yaml" \
		--output-json "$@" 2>/dev/null
}

# "RX Queue n Frames" (and "TX Queue n Frames" on a PCI11x1x) as "a b c d"
rxq() { ethtool -S "$DUT" | awk '/RX Queue [0-3] Frames/{printf "%s ", $NF}'; }
txq() { ethtool -S "$DUT" | awk '/TX Queue [0-3] Frames/{printf "%s ", $NF}'; }
# the channels whose counter grew by more than 50 between two snapshots
grew() {
	python3 -c 'import sys
b, a = sys.argv[1].split(), sys.argv[2].split()
print(" ".join(str(i) for i, (x, y) in enumerate(zip(b, a))
               if int(y) - int(x) > 50))' "$1" "$2"
}
cur() { ethtool -l "$DUT" | awk -v k="$1:" '/^Current/{c=1} c && $1 == k {print $2}'; }
maxof() { ethtool -l "$DUT" | awk -v k="$1:" '/^Pre-set/{c=1} /^Current/{c=0} c && $1 == k {print $2}'; }
# distinct entries of the RSS indirection table, sorted, space separated
indir() {
	ethtool -x "$DUT" | awk '/^ *[0-9]+:/{for (i = 2; i <= NF; i++) print $i}' |
		sort -un | tr '\n' ' ' | sed 's/ $//'
}
# known UDP flows from the peer (lab/guest/rss.py): each RX queue must get
# the frames the flows' Toeplitz hash and the table give it, and two at least
rss_flows() {	# rss_flows WHAT
	local r
	if r=$(python3 "$HERE/rss.py" check "$DUT" "$NS" "$REMOTE_V4" "$LOCAL_V4"); then
		ok "$1: RSS flows $r"
	else
		bad "$1: RSS flows ${r:-rss.py failed}"
	fi
}
nqueues() { ls -d "/sys/class/net/$DUT/queues/$1-"* | wc -l; }
iperf() {	# iperf SECS [-R]: 8 TCP flows to/from the peer, Mbit/s received
	timeout $(($1 + 40)) iperf3 -c "$REMOTE_V4" -P 8 -t "$1" ${2:-} -J 2>/dev/null |
		python3 -c 'import json, sys
try:
    d = json.load(sys.stdin)
    print("%.1f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))
except Exception:
    print("0")'
}

M0=$(date +%s%N)
echo "lan743x-channels-mark-$M0" >/dev/kmsg
load "$KO" || { bad "load $KO"; exit 1; }
peer_setup || exit 1
DUT=$(dut_setup) || { bad "no lan743x interface"; exit 1; }
ip netns exec "$NS" iperf3 -s -D >/dev/null 2>&1
sleep 1
ok "module $(modinfo -F srcversion "$KO" 2>/dev/null) on $DUT, $(cat "/sys/class/net/$DUT/device/device")"
ethtool -l "$DUT"

MAXRX=$(maxof RX); MAXTX=$(maxof TX)
check "ethtool -l: max RX 4, current RX $(cur RX) TX $(cur TX) = max TX $MAXTX" \
	test "$MAXRX" = 4 -a "$(cur RX)" = 4 -a "$(cur TX)" = "$MAXTX"

# a real RSS key (the emulated device resets it to 0, every flow hashes to
# entry 0), fixed so that the flows' queues are known, and the default
# table: the driver's, not a user-set one
ethtool -X "$DUT" hkey "$(python3 "$HERE/rss.py" key)" default || bad "ethtool -X hkey default"
check "default table over 4 RX channels: entries [$(indir)]" test "$(indir)" = "0 1 2 3"

b=$(rxq); r=$(iperf 3 -R); a=$(rxq)
echo "  RX 4 channels: $r Mbit/s, RX Queue Frames [$b] -> [$a]"
rss_flows "4 RX channels"

# the change on the running interface, under RX traffic
tx1=1
b=$(rxq)
timeout 60 iperf3 -c "$REMOTE_V4" -P 8 -t 8 -R -J >/tmp/ch-live.json 2>/dev/null &
ip=$!
sleep 3
t0=$(date +%s%N)
if ethtool -L "$DUT" rx 2 tx $tx1; then
	ok "ethtool -L rx 2 tx $tx1 under traffic, $(( ($(date +%s%N) - t0) / 1000000 )) ms"
else
	bad "ethtool -L rx 2 tx $tx1 under traffic"
fi
wait $ip
live=$(python3 -c 'import json
d = json.load(open("/tmp/ch-live.json"))
print("%.1f %d" % (d["end"]["sum_received"]["bits_per_second"] / 1e6,
                   d["end"]["sum_received"]["bytes"]))' 2>/dev/null)
check "iperf3 -R across the change completed: [${live:-none}] Mbit/s bytes" test -n "$live"
check "link stayed up: operstate $(cat "/sys/class/net/$DUT/operstate")" \
	test "$(cat "/sys/class/net/$DUT/operstate")" = up
check "ethtool -l current RX $(cur RX) TX $(cur TX)" test "$(cur RX)" = 2 -a "$(cur TX)" = $tx1
check "sysfs queues rx $(nqueues rx) tx $(nqueues tx)" test "$(nqueues rx)" = 2 -a "$(nqueues tx)" = $tx1
check "default table respread over 2: entries [$(indir)]" test "$(indir)" = "0 1"

b=$(rxq); r=$(iperf 3 -R); a=$(rxq)
echo "  RX 2 channels: $r Mbit/s, RX Queue Frames [$b] -> [$a]"
g=$(grew "$b" "$a")
check "2 RX channels: flows on RX channels [$g] only (0 and 1)" test -n "$g" -a "${g//[01 ]/}" = ""
rss_flows "2 RX channels"
if [ "$MAXTX" -gt 1 ]; then
	b=$(txq); r=$(iperf 3); a=$(txq)
	echo "  TX 1 queue: $r Mbit/s, TX Queue Frames [$b] -> [$a]"
	check "TX 1 of $MAXTX: frames on TX channels [$(grew "$b" "$a")] only (0)" test "$(grew "$b" "$a")" = 0
fi

# qstats: the queues in use listed, the device totals still all channels
if [ -n "$YNL" ]; then
	q=$(ynl --dump queue-get --json "{\"ifindex\": $(cat "/sys/class/net/$DUT/ifindex")}" |
		python3 -c 'import json, sys
q = json.load(sys.stdin)
print(sum(x["type"] == "rx" for x in q), sum(x["type"] == "tx" for x in q))')
	check "netdev queue-get: rx tx queues [$q]" test "$q" = "2 $tx1"
	sleep 1
	s=$(ynl --dump qstats-get --json '{"scope": "queue"}' |
		python3 -c 'import json, sys
ifi = int(sys.argv[1])
q = [x for x in json.load(sys.stdin) if x["ifindex"] == ifi]
print(len(q), sum(x.get("rx-packets", 0) for x in q))' "$(cat "/sys/class/net/$DUT/ifindex")")
	d=$(ynl --dump qstats-get | python3 -c 'import json, sys
ifi = int(sys.argv[1])
x = [x for x in json.load(sys.stdin) if x["ifindex"] == ifi][0]
print(x["rx-packets"], x["rx-bytes"], x["tx-packets"], x["tx-bytes"])' "$(cat "/sys/class/net/$DUT/ifindex")")
	k=$(for f in rx_packets rx_bytes tx_packets tx_bytes; do
		printf "%s " "$(cat "/sys/class/net/$DUT/statistics/$f")"; done)
	echo "  qstats queues [count, rx-packets sum] [$s]; device [$d]; ip link [${k% }]"
	check "qstats device rx/tx packets/bytes = ndo_get_stats64 within 10 packets" \
		python3 -c 'import sys
d, k = [int(v) for v in sys.argv[1].split()], [int(v) for v in sys.argv[2].split()]
sys.exit(not (abs(d[0] - k[0]) <= 10 and abs(d[2] - k[2]) <= 10 and
              abs(d[1] - k[1]) <= 15000 and abs(d[3] - k[3]) <= 15000))' "$d" "$k"
	check "qstats per queue: 2 + $tx1 queues, their rx-packets below the device's (channels 2, 3 in the base)" \
		python3 -c 'import sys
s, d = sys.argv[1].split(), sys.argv[2].split()
sys.exit(not (int(s[0]) == 2 + int(sys.argv[3]) and int(s[1]) < int(d[0])))' "$s" "$d" "$tx1"
else
	echo "channels: SKIP queue-get and qstats: no LAN743X_YNL"
fi

# down and up keep the counts and the table
ip link set "$DUT" down; ip link set "$DUT" up
for i in $(seq 1 100); do [ "$(cat "/sys/class/net/$DUT/carrier")" = 1 ] && break; sleep 0.1; done
check "down/up: current RX $(cur RX) TX $(cur TX), entries [$(indir)]" \
	test "$(cur RX)" = 2 -a "$(cur TX)" = $tx1 -a "$(indir)" = "0 1"
check "down/up: ping" ping -c 2 -W 3 "$REMOTE_V4"

# refused requests leave the counts as they are
check "ethtool -L other 0 refused" bash -c "! ethtool -L $DUT other 0"
check "ethtool -L combined 1 refused" bash -c "! ethtool -L $DUT combined 1"
check "ethtool -L rx 5 refused" bash -c "! ethtool -L $DUT rx 5"
check "ethtool -L rx 0 refused" bash -c "! ethtool -L $DUT rx 0"
check "counts unchanged after the refusals: RX $(cur RX) TX $(cur TX)" \
	test "$(cur RX)" = 2 -a "$(cur TX)" = $tx1

# a user-set table: kept across -L, and the core refuses a count below it
ethtool -X "$DUT" equal 2 || bad "ethtool -X equal 2"
check "ethtool -X equal 3 refused with 2 RX queues in use" bash -c "! ethtool -X $DUT equal 3"
check "ethtool -L rx 1 refused with a user table over 2" bash -c "! ethtool -L $DUT rx 1"
ethtool -L "$DUT" rx 4 tx "$MAXTX" || bad "ethtool -L rx 4 tx $MAXTX"
check "user table kept at rx 4: entries [$(indir)]" test "$(indir)" = "0 1"
ethtool -X "$DUT" default || bad "ethtool -X default"
check "ethtool -X default: entries [$(indir)]" test "$(indir)" = "0 1 2 3"
check "restored: current RX $(cur RX) TX $(cur TX), sysfs rx $(nqueues rx) tx $(nqueues tx)" \
	test "$(cur RX)" = 4 -a "$(cur TX)" = "$MAXTX" -a "$(nqueues rx)" = 4 -a "$(nqueues tx)" = "$MAXTX"

b=$(rxq); r=$(iperf 3 -R); a=$(rxq)
echo "  RX 4 channels again: $r Mbit/s, RX Queue Frames [$b] -> [$a]"
rss_flows "4 RX channels again"

# -L back and forth under bidirectional traffic
timeout 80 iperf3 -c "$REMOTE_V4" -P 4 -t 10 --bidir -J >/tmp/ch-bidir.json 2>/dev/null &
ip=$!
n=0
for i in $(seq 1 10); do
	rx=$((i % 4 + 1)); tx=$(( (i % MAXTX) + 1 ))
	ethtool -L "$DUT" rx $rx tx $tx && n=$((n + 1))
	sleep 0.5
done
wait $ip
check "10 changes under bidirectional traffic: $n succeeded, iperf3 exit $?" test "$n" = 10
ethtool -L "$DUT" rx 4 tx "$MAXTX"

k=$(dmesg | klog_bad "lan743x-channels-mark-$M0")
check "kernel log clean${k:+: $k}" test -z "$k"

ip netns exec "$NS" pkill iperf3 2>/dev/null
echo "channels: $FAILS failed"
[ "$FAILS" = 0 ]
