#!/bin/bash
# Guest side of lab/bench/crashrate.py: enable and disable the napi,
# dma and kmem tracepoints CYCLES times (default 5), as the bench does
# around each cell. Every enable/disable flips static keys and static
# calls, which x86 patches live with INT3 (smp_text_poke_batch_finish()).
# Prints one "tracetoggle: ..." line; exit 0 when every write succeeded.
set -u
CYCLES=${LAN743X_TOGGLE_CYCLES:-5}
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
[ -d $T/events ] || { echo "tracetoggle: no tracefs"; exit 3; }
GROUPS_FOUND=()
for g in napi dma kmem; do
	[ -e "$T/events/$g/enable" ] && GROUPS_FOUND+=("$g")
done
[ ${#GROUPS_FOUND[@]} -gt 0 ] || { echo "tracetoggle: none of napi/dma/kmem"; exit 3; }
# LAN743X_TOGGLE_LOAD=1: keep every CPU busy in the kernel (allocations,
# hence kmem tracepoints) while the tracepoints are patched, as the
# bench's traffic does; default off (the minimal reproducer)
LOADPIDS=()
if [ "${LAN743X_TOGGLE_LOAD:-0}" = 1 ]; then
	for c in $(seq 1 "$(nproc)"); do
		(while :; do head -c 256k /dev/urandom | cat >/dev/null; done) &
		LOADPIDS+=($!)
	done
fi
fails=0
t0=$(date +%s%N)
for i in $(seq 1 "$CYCLES"); do
	for g in "${GROUPS_FOUND[@]}"; do
		echo 1 >"$T/events/$g/enable" || fails=$((fails + 1))
	done
	# a little traffic through the enabled tracepoints
	head -c 1M /dev/urandom >/dev/null
	for g in "${GROUPS_FOUND[@]}"; do
		echo 0 >"$T/events/$g/enable" || fails=$((fails + 1))
	done
done
t1=$(date +%s%N)
[ ${#LOADPIDS[@]} -eq 0 ] || kill "${LOADPIDS[@]}" 2>/dev/null
echo "tracetoggle: cycles=$CYCLES groups=${GROUPS_FOUND[*]} failed_writes=$fails ms=$(((t1 - t0) / 1000000)) cpus=$(nproc) load=${LAN743X_TOGGLE_LOAD:-0}"
[ "$fails" -eq 0 ]
