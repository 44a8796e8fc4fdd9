#!/bin/bash
set -u
NS=peer
DFLAG=(-d "$LAN743X_MODDIR")
find_if() { for n in /sys/class/net/*; do [ "$(basename "$(readlink -f "$n/device/driver" 2>/dev/null)")" = "$1" ] && { basename "$n"; return 0; }; done; return 1; }
peer=$(find_if virtio_net)
ip netns add $NS; ip link set "$peer" netns $NS
ip -n $NS link set lo up; ip -n $NS addr add 192.0.2.2/24 dev "$peer"; ip -n $NS link set "$peer" up mtu 9000
for d in phylink libphy mdio_devres microchip; do modprobe "${DFLAG[@]}" $d 2>/dev/null; done
insmod "$1"; sleep 1
dut=$(find_if lan743x)
ip addr add 192.0.2.1/24 dev "$dut"; ip link set "$dut" up mtu 9000
for i in $(seq 1 100); do [ "$(cat /sys/class/net/$dut/carrier)" = 1 ] && break; sleep 0.1; done
for i in $(seq 1 30); do ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
ip netns exec $NS iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
sleep 1
timeout 60 iperf3 -c 192.0.2.2 -p 5201 -t ${LAN743X_SECS:-20} --bidir -P 4 -f m > /tmp/iperf.txt 2>&1 &
ip=$!
sleep 1
n=0
while kill -0 $ip 2>/dev/null; do
	m=$((n % 2 ? 9000 : 1500)); ip link set dev "$dut" mtu $m; n=$((n+1)); sleep 0.2
done
echo "$n changes"
grep -E "SUM|error" /tmp/iperf.txt | tail -4
dmesg | grep -A45 -E "WARNING|BUG" | head -80
