#!/bin/sh
# Board side of the kit's counters from the kernel's tracing interface
# (tracefs hist triggers and the function profiler): counts, not traces,
# so nothing is lost at line rate. The kit copies this file to the board.
#
#   trace.sh TRACEFS STATE probe               what this kernel can count
#   trace.sh TRACEFS STATE start PCI NETIF CACHE
#                                              set the counters of a cell;
#                                              CACHE: how the cache
#                                              maintenance calls are counted
#                                              (profiler, kprobes or none)
#   trace.sh TRACEFS STATE stop                print them ("=== name"
#                                              sections), remove them
#   trace.sh TRACEFS STATE downcount NETIF     count the pages freed while
#                                              NETIF goes down (this process
#                                              becomes `ip link set down`)
#   trace.sh TRACEFS STATE upcount NETIF       pages allocated by lan743x
#                                              and pages into page_pools
#                                              while NETIF comes up
#
# STATE: a file where the triggers set are kept, to remove them. Every
# trigger is removed by stop (and by any later start).
T=$1
S=$2
cmd=$3
shift 3

# the first of the events EVENT... this kernel has
ev() {
	for e in "$@"; do
		if [ -d "$T/events/$e" ]; then
			echo "$e"
			return 0
		fi
	done
	return 1
}

MAP=$(ev dma/dma_map_phys dma/dma_map_page)
UNMAP=$(ev dma/dma_unmap_phys dma/dma_unmap_page)
SCPU=$(ev dma/dma_sync_single_for_cpu)
SDEV=$(ev dma/dma_sync_single_for_device)
NAPI=$(ev napi/napi_poll)
PPH=$(ev page_pool/page_pool_state_hold)
PPR=$(ev page_pool/page_pool_state_release)
ALLOC=$(ev kmem/mm_page_alloc)
FREE=$(ev kmem/mm_page_free)
# the cache maintenance of streaming DMA on a non-coherent arch
FUNCS=${BOARD_TRACE_FUNCS:-arch_sync_dma_for_device arch_sync_dma_for_cpu}

has_hist() { [ -n "$ALLOC" ] && [ -e "$T/events/$ALLOC/hist" ] || grep -q "hist trigger" "$T/README" 2>/dev/null; }

# set NAME EVENT SPEC: a hist trigger, noted in STATE
set_trig() {
	if echo "$3" >"$T/events/$2/trigger" 2>/dev/null; then
		printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$S"
	else
		echo "=== unavailable $1"
		echo "trigger refused: $3"
	fi
}

clear_all() {
	[ -f "$S" ] || return 0
	while IFS='	' read -r name e spec; do
		case "$name" in
		profile)
			echo 0 >"$T/function_profile_enabled" 2>/dev/null
			echo >"$T/set_ftrace_filter" 2>/dev/null
			;;
		kprobe) echo "-:$e" >>"$T/kprobe_events" 2>/dev/null ;;
		*) echo "!$spec" >"$T/events/$e/trigger" 2>/dev/null ;;
		esac
	done <"$S"
	rm -f "$S"
}

stacktrace_key() {
	# common_stacktrace since Linux 6.5, stacktrace before
	if grep -q common_stacktrace "$T/README" 2>/dev/null; then
		echo common_stacktrace
	else
		echo stacktrace
	fi
}

case "$cmd" in
probe)
	[ -d "$T/events" ] || { echo "tracefs=no"; exit 0; }
	echo "tracefs=yes"
	if has_hist; then echo "hist=yes"; else echo "hist=no"; fi
	echo "map=$MAP"
	echo "unmap=$UNMAP"
	echo "sync_cpu=$SCPU"
	echo "sync_dev=$SDEV"
	echo "napi=$NAPI"
	echo "pp_hold=$PPH"
	echo "pp_release=$PPR"
	echo "page_alloc=$ALLOC"
	echo "page_free=$FREE"
	if [ -e "$T/function_profile_enabled" ]; then
		ok=yes
		for f in $FUNCS; do
			grep -qx "$f" "$T/available_filter_functions" 2>/dev/null || ok=no
		done
		echo "profiler=$ok"
	else
		echo "profiler=no"
	fi
	if [ -e "$T/kprobe_events" ]; then echo "kprobes=yes"; else echo "kprobes=no"; fi
	# kprobes oops on a Thumb-2 kernel: the host uses them only on one
	# known not to be
	if [ -r /proc/config.gz ] && command -v zcat >/dev/null; then
		if zcat /proc/config.gz | grep -q '^CONFIG_THUMB2_KERNEL=y'; then
			echo "thumb2=yes"
		else
			echo "thumb2=no"
		fi
	else
		echo "thumb2=unknown"
	fi
	;;
start)
	pci=$1 dev=$2
	clear_all
	: >"$S"
	for e in $MAP $UNMAP $SCPU $SDEV; do
		set_trig "${e#dma/}" "$e" "hist:keys=common_cpu:vals=hitcount,size if device == \"$pci\""
	done
	[ -z "$NAPI" ] || set_trig napi_poll "$NAPI" "hist:keys=work,budget:vals=hitcount if dev_name == \"$dev\""
	[ -z "$PPH" ] || set_trig pp_hold "$PPH" "hist:keys=common_cpu:vals=hitcount"
	[ -z "$PPR" ] || set_trig pp_release "$PPR" "hist:keys=common_cpu:vals=hitcount"
	[ -z "$ALLOC" ] || set_trig page_alloc "$ALLOC" "hist:keys=$(stacktrace_key),order:vals=hitcount:size=8192"
	case "${3:-none}" in
	profiler)
		if echo "$FUNCS" >"$T/set_ftrace_filter" 2>/dev/null; then
			echo 0 >"$T/function_profile_enabled"
			# enabling resets the counts
			echo 1 >"$T/function_profile_enabled" &&
				printf 'profile\t-\t-\n' >>"$S"
		fi
		;;
	kprobes)
		for f in $FUNCS; do
			echo "p:lanboard/$f $f" >>"$T/kprobe_events" || continue
			set_trig "kp_$f" "lanboard/$f" "hist:keys=common_cpu:vals=hitcount"
			# after its trigger: clear_all removes that first
			printf 'kprobe\tlanboard/%s\t-\n' "$f" >>"$S"
		done
		;;
	esac
	;;
stop)
	[ -f "$S" ] || exit 0
	while IFS='	' read -r name e spec; do
		echo "=== $name"
		case "$name" in
		profile) cat "$T"/trace_stat/function[0-9]* 2>/dev/null ;;
		kprobe) ;;
		*) cat "$T/events/$e/hist" ;;
		esac
	done <"$S"
	clear_all
	;;
downcount)
	dev=$1
	[ -n "$FREE" ] || { echo "no kmem/mm_page_free" >&2; exit 3; }
	spec="hist:keys=order:vals=hitcount if common_pid == $$"
	: >"$S"
	echo "$spec" >"$T/events/$FREE/trigger" || exit 3
	printf 'page_free\t%s\t%s\n' "$FREE" "$spec" >>"$S"
	# this process (the pid of the filter) takes the interface down
	exec ip link set dev "$dev" down
	;;
upcount)
	dev=$1
	clear_all
	: >"$S"
	[ -z "$ALLOC" ] || set_trig page_alloc "$ALLOC" "hist:keys=$(stacktrace_key),order:vals=hitcount:size=8192"
	[ -z "$PPH" ] || set_trig pp_hold "$PPH" "hist:keys=common_cpu:vals=hitcount"
	ip link set dev "$dev" up
	;;
clear) clear_all ;;
*)
	echo "trace.sh: unknown command $cmd" >&2
	exit 2
	;;
esac
