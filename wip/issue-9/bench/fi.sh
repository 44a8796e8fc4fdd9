#!/bin/bash
set -u
NS=peer
DFLAG=(-d "$LAN743X_MODDIR")
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
find_if() { for n in /sys/class/net/*; do [ "$(basename "$(readlink -f "$n/device/driver" 2>/dev/null)")" = "$1" ] && { basename "$n"; return 0; }; done; return 1; }
peer=$(find_if virtio_net)
ip netns add $NS; ip link set "$peer" netns $NS
ip -n $NS link set lo up; ip -n $NS addr add 192.0.2.2/24 dev "$peer"; ip -n $NS link set "$peer" up mtu 9000
for d in phylink libphy mdio_devres microchip; do modprobe "${DFLAG[@]}" $d 2>/dev/null; done
insmod "$1"; sleep 1
dut=$(find_if lan743x)
ip addr add 192.0.2.1/24 dev "$dut"; ip link set "$dut" up mtu 1500
for i in $(seq 1 100); do [ "$(cat /sys/class/net/$dut/carrier)" = 1 ] && break; sleep 0.1; done
for i in $(seq 1 30); do ping -c 1 -W 1 192.0.2.2 >/dev/null 2>&1 && break; done
F=/sys/kernel/debug/fail_page_alloc
HELPER=$(sed -n '/^CHANGE = r"""/,/^"""/p' /tmp/h5/linux/tools/testing/selftests/drivers/net/lan743x/reconfig.py | sed '1d;$d')
for space in ${LAN743X_SPACES:-0}; do
	echo 0 > $F/verbose; echo Y > $F/task-filter; echo N > $F/ignore-gfp-wait; echo 0 > $F/min-order
	echo $space > $F/space; echo 8 > $F/times; echo 100 > $F/probability
	r=$(python3 -c "$HELPER" "$dut" mtu 9000 0)
	echo 0 > $F/probability
	echo "space $space: errno $r, times left $(cat $F/times), space left $(cat $F/space), mtu $(cat /sys/class/net/$dut/mtu)"
	ip link set "$dut" mtu 1500
done
dmesg | grep -E "lan743x|cannot|Error" | tail -8
ip link set "$dut" mtu 1500
ip netns exec $NS iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
sleep 1
timeout 40 iperf3 -c 192.0.2.2 -p 5201 -t 8 -R -i 1 -f m > /tmp/iperf.txt 2>&1 &
ip=$!
sleep 1.5
for m in 9000 1500 9000 1500; do
	ip link set dev "$dut" mtu $m; echo "mtu $m rc $? $(date +%s.%N)"; sleep 1
done
wait $ip
cat /tmp/iperf.txt | grep -E "sec|error"
ping -c 3 -W 1 192.0.2.2 | tail -2
ethtool -S "$dut" | grep -iE "rx|drop|err|tx" | grep -v ": 0$" | head -30
ip -s link show "$dut"
grep lan743x /proc/interrupts
cat /sys/class/net/$dut/queues/tx-0/tx_timeout 2>/dev/null
tc -s qdisc show dev "$dut" | head -5
dmesg | grep -E "WARN|BUG|Call Trace" | head
