#!/bin/bash
# Boot the lab VM, run N pings DUT->peer, and report the model's counters
# per ping (each ping = 1 TX + 1 RX frame on the DUT).
# usage: emulator/tests/counters-per-packet.sh [N] [ping-size]
# L7_LOAD='iperf3 -c 10.9.9.2 -t 3' replaces the ping load (N then only
# scales the per-unit figures).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-200}
SZ=${2:-56}
RW=$(mktemp -d /tmp/l7cnt.XXXXXX)
export QMP_SOCK=$RW/qmp.sock VM_RWDIR=$RW
GUEST='set -e
for n in /sys/class/net/*; do d=$(basename "$(readlink -f $n/device/driver 2>/dev/null)"); [ "$d" = lan743x ] && D=$(basename $n); [ "$(cat $n/address)" = 02:74:30:00:00:02 ] && P=$(basename $n); done
ip netns add peer; ip link set $P netns peer
ip netns exec peer ip link set $P up; ip netns exec peer ip addr add 10.9.9.2/24 dev $P
ip addr add 10.9.9.1/24 dev $D; ip link set $D up
for i in $(seq 50); do [ "$(cat /sys/class/net/$D/carrier)" = 1 ] && break; sleep 0.2; done
ping -c 3 10.9.9.2 >/dev/null; sleep 1
touch '"$RW"'/ready; while [ ! -e '"$RW"'/go ]; do sleep 0.1; done
ip netns exec peer iperf3 -s -D 2>/dev/null; sleep 0.5
'"${L7_LOAD:-ping -q -c $N -i 0.02 -s $SZ 10.9.9.2}"'
sleep 1; touch '"$RW"'/done; while [ ! -e '"$RW"'/exit ]; do sleep 0.1; done'
echo "$GUEST" > "$RW/guest.sh"
"$ROOT/lab/vm.sh" sh "$RW/guest.sh" > "$RW/vm.log" 2>&1 &
VMPID=$!
for i in $(seq 1 600); do [ -e "$RW/ready" ] && break; kill -0 $VMPID 2>/dev/null || break; sleep 0.5; done
[ -e "$RW/ready" ] || { cat "$RW/vm.log"; exit 1; }
"$ROOT/emulator/qmp-counters.py" "$QMP_SOCK" reset >/dev/null
touch "$RW/go"
for i in $(seq 1 600); do [ -e "$RW/done" ] && break; sleep 0.5; done
"$ROOT/emulator/qmp-counters.py" "$QMP_SOCK" raw > "$RW/counters.json"
touch "$RW/exit"
wait $VMPID || true
grep -a -E "packets transmitted" "$RW/vm.log" || true
python3 - "$RW/counters.json" "$N" <<'EOP'
import json, sys
c = json.load(open(sys.argv[1])); n = int(sys.argv[2])
print("counters for %d pings (per ping in brackets):" % n)
for k, v in c["mmio"].items():
    if v["r"] or v["w"]:
        print("  mmio %-20s r=%-7d w=%-7d [r %.2f w %.2f]" % (k, v["r"], v["w"], v["r"]/n, v["w"]/n))
for k, v in c.items():
    if k == "mmio":
        continue
    if isinstance(v, list):
        print("  %-24s %s [%s]" % (k, v, " ".join("%.2f" % (x/n) for x in v)))
    elif v and k != "int_mod_unit_ns":
        print("  %-24s %d [%.2f]" % (k, v, v/n))
EOP
rm -rf "$RW"
