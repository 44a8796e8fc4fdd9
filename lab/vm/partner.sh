#!/bin/bash
# The link partner outside the DUT's guest: the host end of the DUT's
# wire (a tap device QEMU created, VM_PARTNER_TAP of lab/vm/vm.sh) in a
# network namespace of its own, where the partner's tools run natively
# on the host's cores, not on the guest's vCPUs.
#
#   partner.sh up TAP NS ADDR/PREFIX   wait for TAP (60 s at most), move it
#                                      into NS (created), address it, up
#   partner.sh down NS                 end NS's processes, delete NS
#
# Run as root. The tap keeps its QEMU file descriptor across the move.
set -euo pipefail
die() { echo "partner.sh: error: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces, tap devices)"
case "${1:-}" in
up)
	[ $# = 4 ] || die "usage: partner.sh up TAP NS ADDR/PREFIX"
	tap=$2 ns=$3 addr=$4
	[[ "$addr" =~ ^[0-9.]+/[0-9]+$ ]] || die "ADDR/PREFIX: $addr"
	for _ in $(seq 600); do
		ip link show dev "$tap" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ip link show dev "$tap" >/dev/null 2>&1 ||
		die "no tap device $tap after 60 s (did QEMU start with VM_PARTNER_TAP=$tap?)"
	ip netns add "$ns" 2>/dev/null || true
	ip link set dev "$tap" netns "$ns"
	ip -n "$ns" link set dev lo up
	ip -n "$ns" addr add "$addr" dev "$tap"
	ip -n "$ns" link set dev "$tap" mtu 9000 up
	;;
down)
	[ $# = 2 ] || die "usage: partner.sh down NS"
	ns=$2
	pids=$(ip netns pids "$ns" 2>/dev/null || true)
	[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
	# a process still dying keeps the namespace's mount busy
	for _ in $(seq 50); do
		[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
		sleep 0.1
	done
	ip netns del "$ns" 2>/dev/null || true
	;;
*) die "usage: partner.sh up TAP NS ADDR/PREFIX | down NS" ;;
esac
