#!/bin/bash
# guest: load $1, iperf3 -R with MTU changes as mtu.py does, dump state
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
for r in "256 512" "64 64" "1024 1024" "128 128"; do
	set -- $r; ethtool -G "$dut" rx $1 tx $2; echo "rings $r rc $?"
	ping -c 2 -W 1 192.0.2.2 | tail -1
done
ethtool -g "$dut" | tail -5
ip link set "$dut" mtu 1500
ip netns exec $NS iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
sleep 1
iperf3 -c 192.0.2.2 -p 5201 -t 8 -R -i 1 -f m > /tmp/iperf.txt 2>&1 &
ip=$!
sleep 1.5
for m in 9000 1500 9000 1500; do
	ip link set dev "$dut" mtu $m; echo "mtu $m rc $? $(date +%s.%N)"; sleep 1
done
wait $ip
cat /tmp/iperf.txt | grep -E "sec|error"
ethtool -S "$dut" | grep -iE "rx|drop|err" | grep -v ": 0$" | head -40
ip -s link show "$dut"
grep lan743x /proc/interrupts
ping -c 3 -W 1 192.0.2.2 | tail -2
dmesg | tail -20
