#!/bin/bash
# Guest side: for each NAME=KO, measure the RX outage of MTU changes and
# order>0 page allocations during jumbo RX after a 1500->9000 change.
#   lab/vm.sh /tmp/h5/bench/outage.sh OUTDIR NAME=KO...
set -u
OUT=$1; shift
NS=peer
DFLAG=()
[ -n "${LAN743X_MODDIR:-}" ] && [ -d "$LAN743X_MODDIR/lib/modules" ] && DFLAG=(-d "$LAN743X_MODDIR")
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
find_if() { for n in /sys/class/net/*; do [ "$(basename "$(readlink -f "$n/device/driver" 2>/dev/null)")" = "$1" ] && { basename "$n"; return 0; }; done; return 1; }
peer=$(find_if virtio_net)
ip netns add $NS; ip link set "$peer" netns $NS
ip -n $NS link set lo up; ip -n $NS addr add 192.0.2.2/24 dev "$peer"; ip -n $NS link set "$peer" up mtu 9000
mkdir -p "$OUT"
for m in "$@"; do
	name=${m%%=*} ko=${m#*=}
	rmmod lan743x 2>/dev/null
	for d in phylink libphy mdio_devres microchip; do modprobe "${DFLAG[@]}" $d 2>/dev/null || modprobe $d 2>/dev/null; done
	insmod "$ko" || { echo "$name: insmod failed"; continue; }
	for i in $(seq 1 100); do dut=$(find_if lan743x) && [ "$dut" != eth0 ] && break; sleep 0.2; done
	udevadm settle 2>/dev/null; dut=$(find_if lan743x)
	ip addr flush dev "$dut"; ip addr add 192.0.2.1/24 dev "$dut"; ip link set "$dut" up mtu 1500
	for i in $(seq 1 100); do [ "$(cat /sys/class/net/$dut/carrier)" = 1 ] && break; sleep 0.1; done
	for i in $(seq 1 30); do ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
	echo "== $name ($dut)"
	python3 /tmp/h5/bench/outage.py "$dut" "$NS" 20 > "$OUT/$name-outage.txt" 2>&1
	cat "$OUT/$name-outage.txt"
	python3 /tmp/h5/bench/order.py "$dut" "$NS" > "$OUT/$name-order.txt" 2>&1
	cat "$OUT/$name-order.txt"
	dmesg | grep -E "WARNING|BUG|Call Trace|DMA-API" | head -5
	ip link set "$dut" down mtu 1500
done
