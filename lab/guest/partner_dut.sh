#!/bin/bash
# Guest side of lab/bench/partner.py and lab/bench/lineout.py: the DUT
# alone in the guest, its link partner on the host (lab/vm/partner.sh).
# Loads KO, addresses the DUT as DUT_ADDR, waits for the partner to
# answer, starts iperf3 servers and waits until the host writes RWDIR/done (or
# two hours pass). Meanwhile it runs the host's commands in turn: the
# host writes RWDIR/cmd-K (K = 1, 2, ...; a shell script, $D the DUT's
# interface), the guest runs it and writes its output to RWDIR/out-K and
# then its exit status to RWDIR/rc-K.
#
#   partner_dut.sh KO DUT_ADDR/PREFIX PARTNER_ADDR RWDIR
set -u
ko=$1 addr=$2 peer=$3 rw=$4
. "$(dirname "$0")/lib.sh"
load "$ko" || { echo "partner_dut.sh: the module did not load" >&2; exit 1; }
dut=$(dut_setup) || { echo "partner_dut.sh: no interface" >&2; exit 1; }
ip addr flush dev "$dut"
ip addr add "$addr" dev "$dut"
ip link set dev "$dut" mtu 9000 up
for _ in $(seq 300); do
	ping -c 1 -W 1 "$peer" >/dev/null 2>&1 && break
	sleep 0.2
done
ping -c 1 -W 2 "$peer" >/dev/null || { echo "partner_dut.sh: no answer from $peer" >&2; exit 1; }
# a server per stream the host may start in one boot (ports 5201-5204):
# one that a stopped client left busy does not refuse the next stream
for port in 5201 5202 5203 5204; do
	iperf3 -s -D -p "$port"
done
echo "PARTNER-DUT-READY $dut"
touch "$rw/ready"
k=1 end=$(($(date +%s) + 7200))
while [ ! -e "$rw/done" ] && [ "$(date +%s)" -lt "$end" ]; do
	if [ -e "$rw/cmd-$k" ]; then
		D=$dut bash "$rw/cmd-$k" >"$rw/out-$k" 2>&1
		echo $? >"$rw/rc-$k.tmp"
		mv "$rw/rc-$k.tmp" "$rw/rc-$k"
		k=$((k + 1))
		continue
	fi
	sleep 0.05
done
# the kernel's log, for the host's record of the run
dmesg >"$rw/dmesg.txt" 2>&1
echo "PARTNER-DUT-END"
