#!/bin/bash
# Guest side of lab/bench/partner.py: the DUT alone in the guest, its
# link partner on the host (lab/vm/partner.sh). Loads KO, addresses the
# DUT as DUT_ADDR, waits for the partner to answer, starts iperf3 -s and
# waits until the host writes RWDIR/done (or 30 minutes pass).
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
iperf3 -s -D
echo "PARTNER-DUT-READY $dut"
touch "$rw/ready"
for _ in $(seq 1800); do
	[ -e "$rw/done" ] && break
	sleep 1
done
echo "PARTNER-DUT-END"
