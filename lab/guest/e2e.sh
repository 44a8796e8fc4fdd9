#!/bin/bash
# Guest-side end-to-end test of the lan743x driver against the LAN7430 model.
# Run inside the VM:  lab/vm/vm.sh lab/guest/e2e.sh   (ARCH=armv7 too)
# Probe, link, ping and iperf3 at MTU 1500 and 9000 both ways (the MTU set
# on the running interface), sha256 transfers, VLAN, RSS, down/up, reload,
# DMA-API debug, dmesg. In the ARMv7 guest (non-coherent PCI DMA) also:
# the calls of arm's DMA cache maintenance entry points
# (arch_sync_dma_for_device/arch_sync_dma_for_cpu, arch/arm/mm/
# dma-mapping.c) per packet, TX and RX at MTU 1500 ("SYNC" lines; the peer
# is virtio-net, which does not use the DMA API there, so every call is
# the lan743x's), with shorter defaults (TCG on a 32-bit guest is slow).
# Env: E2E_IPERF_TIME (s, default 10; ARM 5), E2E_XFER_MB (default 64;
#      ARM 16), E2E_PAUSE_FILE (touch $F.ready at the end, wait for $F.go),
#      E2E_UPDOWN (default 20; ARM 5), E2E_RELOAD (default 10; ARM 3),
#      E2E_LIVE=1 (live MTU and ethtool -G changes under traffic, then a
#      sha256 transfer), E2E_SYNC_TIME (s, default 3) and E2E_ARM_COUNT
#      (ftrace or kprobe, see below) for the ARM counts,
#      LAN743X_MODDIR (the kernel's module tree, or a dir holding
#      lan743x.ko), LAN743X_KO (a lan743x.ko to insmod, its dependencies
#      from LAN743X_MODDIR's tree or the guest's /lib/modules).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ARM=0
case "$(uname -m)" in arm*) ARM=1 ;; esac
if [ $ARM = 1 ]; then
    IPERF_T=${E2E_IPERF_TIME:-5}; XFER_MB=${E2E_XFER_MB:-16}
    NUPDOWN=${E2E_UPDOWN:-5}; NRELOAD=${E2E_RELOAD:-3}
else
    IPERF_T=${E2E_IPERF_TIME:-10}; XFER_MB=${E2E_XFER_MB:-64}
    NUPDOWN=${E2E_UPDOWN:-20}; NRELOAD=${E2E_RELOAD:-10}
fi
DUT_IP=10.74.30.1
PEER_IP=10.74.30.2
FAILS=0
RESULTS=()

pass() { echo "PASS: $*"; RESULTS+=("PASS: $*"); }
fail() { echo "FAIL: $*"; RESULTS+=("FAIL: $*"); FAILS=$((FAILS + 1)); }
info() { echo "---- $*"; }
P() { ip netns exec peer "$@"; }

find_dut() {
    local n
    for n in /sys/class/net/*; do
        [ "$(basename "$(readlink -f "$n/device/driver" 2>/dev/null)")" = lan743x ] &&
            { basename "$n"; return 0; }
    done
    return 1
}

wait_dut() {    # wait for the interface to exist
    local i
    for i in $(seq 1 100); do
        DUT=$(find_dut) && return 0
        sleep 0.2
    done
    return 1
}

wait_link() {   # wait for carrier on $DUT
    local i
    for i in $(seq 1 100); do
        [ "$(cat /sys/class/net/$DUT/carrier 2>/dev/null)" = 1 ] && return 0
        sleep 0.1
    done
    return 1
}

load_driver() {
    if [ -n "${LAN743X_KO:-}" ]; then
        # one module file; phylink & co from the kernel's module tree
        local d=()
        [ -n "${LAN743X_MODDIR:-}" ] && [ -d "$LAN743X_MODDIR/lib/modules" ] &&
            d=(-d "$LAN743X_MODDIR")
        modprobe "${d[@]}" phylink 2>/dev/null; modprobe "${d[@]}" microchip 2>/dev/null
        insmod "$LAN743X_KO"
    elif [ -n "${LAN743X_MODDIR:-}" ]; then
        if [ -d "$LAN743X_MODDIR/lib/modules" ]; then
            modprobe -d "$LAN743X_MODDIR" lan743x
        else
            modprobe phylink 2>/dev/null; modprobe microchip 2>/dev/null
            insmod "$(find "$LAN743X_MODDIR" -name 'lan743x.ko*' | head -1)"
        fi
    else
        modprobe lan743x
    fi
}

. "$(dirname "$0")/klog.sh"
dmesg_bad() {   # print suspicious kernel log lines since marker $1
    dmesg | klog_bad "$1"
}
mark() { echo "lan743x-e2e-mark-$1" > /dev/kmsg; echo "lan743x-e2e-mark-$1"; }

ping_ok() {     # ping_ok <netns-prefix|""> <dst> <size>
    local pre=$1 dst=$2 sz=$3
    $pre ping -c 3 -i 0.2 -W 3 -M do -s "$sz" "$dst" >/tmp/ping.out 2>&1
}

set_mtu() {
    ip link set dev "$DUT" mtu "$1" && P ip link set dev "$PEER" mtu "$1"
}

iperf_run() {   # iperf_run <mtu> <dir: tx|rx>
    local mtu=$1 dir=$2 extra="" out
    [ "$dir" = rx ] && extra="-R"
    out=$(timeout $((IPERF_T + 60)) iperf3 -c "$PEER_IP" -P 4 -t "$IPERF_T" $extra -J 2>/dev/null)
    python3 -c '
import json,sys
d=json.loads(sys.stdin.read())
e=d["end"]
r=e.get("sum_received",{}).get("bits_per_second",0)/1e6
s=e.get("sum_sent",{}).get("bits_per_second",0)/1e6
rt=e.get("sum_sent",{}).get("retransmits",0)
b=e.get("sum_received",{}).get("bytes",0)
print("%.1f %.1f %d %d"%(r,s,rt,b))' <<<"$out" 2>/dev/null
}

xfer_run() {    # xfer_run <mtu> <dir: tx|rx>
    local mtu=$1 dir=$2 rres sres port=$((5300 + RANDOM % 1000))
    if [ "$dir" = tx ]; then
        P python3 "$HERE/xfer.py" recv $port >/tmp/xfer.recv 2>&1 &
        sleep 1
        sres=$(timeout 600 python3 "$HERE/xfer.py" send "$PEER_IP" $port /tmp/e2e.blob)
    else
        python3 "$HERE/xfer.py" recv $port >/tmp/xfer.recv 2>&1 &
        sleep 1
        sres=$(timeout 600 ip netns exec peer python3 "$HERE/xfer.py" send "$DUT_IP" $port /tmp/e2e.blob)
    fi
    wait
    rres=$(tail -1 /tmp/xfer.recv)
    echo "sent=[$sres] recv=[$rres]"
    [ -n "$sres" ] && [ "$sres" = "$rres" ]
}

# ARM: counting arm's DMA cache maintenance (E2E_ARM_COUNT): "ftrace"
# (default) = the function tracer filtered to the two functions, hits = the
# sum over CPUs of the ring buffer's entries + overrun (per_cpu/cpuN/stats:
# every event written, kept or overwritten); "kprobe" = kprobe events and
# kprobe_profile's hit counts. The kprobe way oopses on a Thumb-2 kernel
# (t16_emulate_push), so it is not the default.
T=/sys/kernel/tracing
COUNT=${E2E_ARM_COUNT:-ftrace}
SYNC_T=${E2E_SYNC_TIME:-3}
total() {	# total hits of both functions so far (ftrace) / of one (kprobe)
    if [ "$COUNT" = kprobe ]; then
        awk -v e="$1" '$1 == e || $1 == "lab/" e { print $2 }' "$T/kprobe_profile"
    else
        cat "$T"/per_cpu/cpu*/stats | awk '/^entries:|^overrun:/ { s += $2 } END { print s + 0 }'
    fi
}
# ftrace: one counter for both functions, split by the trace's function
# names at the end of each measured interval (buffer large enough for it)
split_trace() {	# print "for_device for_cpu" of the events in the buffer
    awk '/arch_sync_dma_for_device/ { d++ } /arch_sync_dma_for_cpu/ { c++ }
        END { print d + 0, c + 0 }' "$T/trace"
}
hits() {
    if [ "$COUNT" = kprobe ]; then total "$1"; else
        case "$1" in sync_dev) split_trace | cut -d" " -f1 ;; *) split_trace | cut -d" " -f2 ;; esac
    fi
}
stat_of() { cat "/sys/class/net/$DUT/statistics/$1"; }

sync_setup() {	# the counters of arm's cache maintenance, off until measured
    if [ "$COUNT" = kprobe ]; then
        echo 'p:lab/sync_dev arch_sync_dma_for_device' >>"$T/kprobe_events" &&
            echo 'p:lab/sync_cpu arch_sync_dma_for_cpu' >>"$T/kprobe_events" &&
            echo 0 >"$T/tracing_on" && echo 1 >"$T/events/lab/enable" &&
            pass "kprobes on arch_sync_dma_for_device/arch_sync_dma_for_cpu" ||
            fail "kprobes on arch_sync_dma_for_device/arch_sync_dma_for_cpu: $(tail -3 "$T/error_log" 2>/dev/null)"
    else
        echo 0 >"$T/tracing_on"
        echo 16384 >"$T/buffer_size_kb"
        echo 'arch_sync_dma_for_device arch_sync_dma_for_cpu' >"$T/set_ftrace_filter" &&
            echo function >"$T/current_tracer" &&
            pass "function tracer on $(tr '\n' ' ' <"$T/set_ftrace_filter")" ||
            fail "function tracer on arch_sync_dma_for_device/arch_sync_dma_for_cpu"
    fi
}

sync_counts() {	# cache maintenance per packet, each direction at MTU 1500
    local dir extra t0 r0 t1 r1 d0 c0 dd dc all tp rp
    info "DMA cache maintenance per packet (calls / lan743x packets, MTU 1500, iperf3 ${SYNC_T}s)"
    for dir in tx rx; do
        extra=""; [ $dir = rx ] && extra=-R
        t0=$(stat_of tx_packets); r0=$(stat_of rx_packets)
        if [ "$COUNT" = kprobe ]; then d0=$(hits sync_dev); c0=$(hits sync_cpu)
        else echo >"$T/trace"; echo 1 >"$T/tracing_on"; fi
        timeout 120 iperf3 -c $PEER_IP -t "$SYNC_T" $extra >/dev/null 2>&1
        t1=$(stat_of tx_packets); r1=$(stat_of rx_packets)
        if [ "$COUNT" = kprobe ]; then dd=$(($(hits sync_dev) - d0)); dc=$(($(hits sync_cpu) - c0))
        else
            echo 0 >"$T/tracing_on"
            all=$(total); read -r dd dc < <(split_trace)
            [ "$all" = $((dd + dc)) ] || echo "    note: the trace buffer overran ($all events, $((dd + dc)) kept): per-function split of the kept ones, scaled"
            if [ $((dd + dc)) -gt 0 ] && [ "$all" != $((dd + dc)) ]; then
                dd=$((dd * all / (dd + dc))); dc=$((all - dd))
            fi
        fi
        tp=$((t1 - t0)); rp=$((r1 - r0))
        python3 -c "
d, c, t, r = $dd, $dc, $tp, $rp
print('SYNC %s: sync_for_device=%d sync_for_cpu=%d tx_packets=%d rx_packets=%d '
      'per_packet(tx+rx): for_device=%.3f for_cpu=%.3f' %
      ('$dir', d, c, t, r, d / max(t + r, 1), c / max(t + r, 1)))"
        if [ $((dd + dc)) -gt 0 ] && [ $((tp + rp)) -gt 100 ]; then
            pass "$dir: arch_sync_dma_* rises with traffic (+$dd for_device, +$dc for_cpu over $((tp + rp)) packets)"
        else
            fail "$dir: arch_sync_dma_* did not rise with traffic (+$dd/+$dc over $((tp + rp)) packets)"
        fi
    done
    if [ "$COUNT" = kprobe ]; then
        d0=$(hits sync_dev); c0=$(hits sync_cpu); sleep "$SYNC_T"
        echo "    SYNC idle ${SYNC_T}s: sync_for_device=$(($(hits sync_dev) - d0)) sync_for_cpu=$(($(hits sync_cpu) - c0))"
    else
        echo >"$T/trace"; echo 1 >"$T/tracing_on"; sleep "$SYNC_T"; echo 0 >"$T/tracing_on"
        echo "    SYNC idle ${SYNC_T}s: for_device for_cpu = $(split_trace)"
    fi
}

live_changes() {	# live MTU and ring changes under traffic, then sha256
    local ipid rpid ok m r irc rrc s port
    info "live MTU and ethtool -G changes under traffic"
    ethtool -g "$DUT" | sed 's/^/    /'
    # TCP both ways as two runs, not one iperf3 --bidir: its server gives
    # the two streams their directions in the order it accepts them, which
    # RSS may swap, and then the run can wait for ever (esnet/iperf
    # issue 2029)
    timeout 120 iperf3 -c $PEER_IP -t 20 >/tmp/live-iperf.out 2>&1 &
    ipid=$!
    timeout 120 iperf3 -c $PEER_IP -p 5202 -R -t 20 >/tmp/live-iperf-r.out 2>&1 &
    rpid=$!
    sleep 2
    ok=1
    for m in 9000 1500 4000 1500; do
        P ip link set dev "$PEER" mtu 9000
        ip link set dev "$DUT" mtu $m 2>/tmp/live.err || { ok=0; echo "    mtu $m: $(cat /tmp/live.err)"; }
        sleep 1
    done
    for r in "256 256" "128 512" "512 128" "1024 1024" "512 512"; do
        ethtool -G "$DUT" rx "${r% *}" tx "${r#* }" 2>/tmp/live.err || { ok=0; echo "    ethtool -G rx ${r% *} tx ${r#* }: $(cat /tmp/live.err)"; }
        sleep 1
    done
    wait $ipid; irc=$?
    wait $rpid; rrc=$?
    [ $ok = 1 ] && pass "live: 4 MTU changes and 5 ethtool -G changes on the running interface" ||
        fail "live MTU/ring changes"
    [ $irc = 0 ] && [ $rrc = 0 ] && pass "live: iperf3 both ways (DUT to peer, peer to DUT) across the changes ran to the end" ||
        { fail "live: iperf3 exit $irc (DUT to peer), $rrc (peer to DUT)"; tail -5 /tmp/live-iperf.out /tmp/live-iperf-r.out; }
    ethtool -g "$DUT" | sed 's/^/    /'
    P ip link set dev "$PEER" mtu 1500
    ip link set dev "$DUT" mtu 9000 && P ip link set dev "$PEER" mtu 9000
    sleep 1
    dd if=/dev/urandom of=/tmp/live.blob bs=1M count=16 status=none
    port=5444
    P python3 "$HERE/xfer.py" recv $port >/tmp/live.recv 2>&1 &
    sleep 1
    s=$(timeout 300 python3 "$HERE/xfer.py" send $PEER_IP $port /tmp/live.blob)
    wait
    r=$(tail -1 /tmp/live.recv)
    [ -n "$s" ] && [ "$s" = "$r" ] && pass "live: sha256 16MiB at MTU 9000 after the changes: $s" ||
        fail "live: sha256 after the changes: sent=[$s] recv=[$r]"
    ping -c 3 -i 0.2 -W 3 -M do -s 8972 $PEER_IP >/dev/null && pass "live: ping 8972 bytes" || fail "live: ping 8972 bytes"
    ip link set dev "$DUT" mtu 1500; P ip link set dev "$PEER" mtu 1500
}

# ---------------------------------------------------------------------------
M0=$(date +%s%N)
mark "$M0-start" >/dev/null
info "kernel $(uname -r), $(uname -m), $(nproc) CPUs, module ${LAN743X_KO:-${LAN743X_MODDIR:-of the kernel}}"
if [ $ARM = 1 ]; then
    grep -E '^(MemTotal|HighTotal|LowTotal):' /proc/meminfo | sed 's/^/    /'
    pcie=$(ls -d /proc/device-tree/pcie@* 2>/dev/null | head -1)
    if [ -e "$pcie/dma-coherent" ]; then
        echo "    device tree: $(basename "$pcie") has dma-coherent (coherent PCI DMA)"
    else
        echo "    device tree: $(basename "$pcie") without dma-coherent (non-coherent PCI DMA)"
    fi
    sync_setup
fi

# 1. probe
if ! find_dut >/dev/null; then
    load_driver 2>/dev/null
fi
if wait_dut; then pass "probe: lan743x bound to $DUT"; else fail "probe: no lan743x interface"; exit 1; fi
PEER=""
for n in /sys/class/net/*; do
    [ "$(cat $n/address)" = "${LAN743X_PEER_MAC:-02:74:30:00:00:02}" ] && PEER=$(basename $n)
done
[ -n "$PEER" ] && pass "peer: virtio-net $PEER" || { fail "peer: virtio-net peer not found"; exit 1; }
bad=$(dmesg | grep -E -i "lan743x|microchip|LAN88xx" | grep -E -i "warn|error|fail|timeout" || true)
if [ -z "$bad" ] && ! dmesg | grep -q "Call Trace"; then pass "probe: dmesg clean"; else fail "probe: dmesg: $bad"; fi
dmesg | grep -E "lan743x" | sed 's/^/    /'

# 2. link
ip link set "$DUT" up
if wait_link; then pass "link up"; else fail "link did not come up"; fi
sp=$(ethtool "$DUT" | awk '/Speed:/{print $2}'); dx=$(ethtool "$DUT" | awk '/Duplex:/{print $2}')
[ "$sp" = 1000Mb/s ] && [ "$dx" = Full ] && pass "link 1000/full ($sp $dx)" || fail "link speed/duplex $sp $dx"

# 3. ethtool
info "ethtool -i";  ethtool -i "$DUT" && pass "ethtool -i" || fail "ethtool -i"
info "ethtool -k";  ethtool -k "$DUT" | grep -E "^(rx-checksumming|tx-checksumming|scatter-gather|tcp-segmentation-offload):" && pass "ethtool -k" || fail "ethtool -k"
info "ethtool -S";  ethtool -S "$DUT" | head -20 && pass "ethtool -S" || fail "ethtool -S"

# 4. namespaces and addresses
ip netns add peer
ip link set "$PEER" netns peer
P ip link set lo up
P ip link set "$PEER" up
P ip addr add $PEER_IP/24 dev "$PEER"
ip addr add $DUT_IP/24 dev "$DUT"
P iperf3 -s -D >/dev/null 2>&1
# a second server: the live changes' traffic toward the DUT (iperf3 -R)
P iperf3 -s -D -p 5202 >/dev/null 2>&1
dd if=/dev/urandom of=/tmp/e2e.blob bs=1M count="$XFER_MB" status=none
sleep 1

declare -A IPERF
for mtu in 1500 9000; do
    info "MTU $mtu (set on the running interface)"
    if set_mtu $mtu; then pass "ip link set mtu $mtu"; else fail "ip link set mtu $mtu"; fi
    sz=$((mtu - 28))
    ping_ok "" $PEER_IP $sz && pass "ping DUT->peer mtu $mtu" || { fail "ping DUT->peer mtu $mtu"; cat /tmp/ping.out; }
    ping_ok "P" $DUT_IP $sz && pass "ping peer->DUT mtu $mtu" || { fail "ping peer->DUT mtu $mtu"; cat /tmp/ping.out; }
    for dir in tx rx; do
        r=$(iperf_run $mtu $dir)
        rx=${r%% *}
        # data went through: a count (bytes received), not a rate, which a
        # busy host lowers at will; the rate is information
        if [ -n "$r" ] && [ "${r##* }" -gt 0 ]; then
            pass "iperf3 -P 4 mtu $mtu $dir: ${rx} Mbit/s (recv) [recv sent retrans bytes: $r]"
        else
            fail "iperf3 -P 4 mtu $mtu $dir: '$r'"
        fi
        IPERF["$mtu-$dir"]=$rx
    done
    for dir in tx rx; do
        out=$(xfer_run $mtu $dir)
        if [ $? -eq 0 ]; then pass "sha256 ${XFER_MB}MiB mtu $mtu $dir: $out"; else fail "sha256 ${XFER_MB}MiB mtu $mtu $dir: $out"; cat /tmp/xfer.recv; fi
    done
done

# 4b. an 802.1Q VLAN at MTU 9000: the tagged frame is 4 bytes longer than
# the MTU allows untagged, the RX buffers must have room for the tag
info "VLAN 802.1Q at MTU 9000"
VID=42
if ip link add link "$DUT" name "$DUT.$VID" type vlan id $VID &&
   P ip link add link "$PEER" name vpeer type vlan id $VID; then
    ip addr add 10.42.0.1/24 dev "$DUT.$VID"; ip link set "$DUT.$VID" mtu 9000 up
    P ip addr add 10.42.0.2/24 dev vpeer; P ip link set vpeer mtu 9000 up
    sleep 1
    ping_ok "" 10.42.0.2 $((9000 - 28)) && pass "VLAN $VID mtu 9000: ping DUT->peer full size" ||
        { fail "VLAN $VID mtu 9000: ping DUT->peer full size"; cat /tmp/ping.out; }
    ping_ok "P" 10.42.0.1 $((9000 - 28)) && pass "VLAN $VID mtu 9000: ping peer->DUT full size" ||
        { fail "VLAN $VID mtu 9000: ping peer->DUT full size"; cat /tmp/ping.out; }
    ip link del "$DUT.$VID"; P ip link del vpeer
else
    fail "VLAN: cannot create 802.1Q interfaces (CONFIG_VLAN_8021Q?)"
fi
set_mtu 1500

# 5. RSS: 4 RX channels with a fixed key; known UDP flows from the peer
# must land on the queues their Toeplitz hash picks from the table
info "RSS"
if ethtool -X "$DUT" equal 4 hkey "$(python3 "$HERE/rss.py" key)" 2>/dev/null; then
    r=$(python3 "$HERE/rss.py" check "$DUT" peer "$PEER_IP" "$DUT_IP") &&
        pass "RSS: $r" || fail "RSS: ${r:-rss.py failed}"
    ethtool -X "$DUT" default 2>/dev/null || ethtool -X "$DUT" equal 1 2>/dev/null
else
    fail "RSS: ethtool -X failed"
fi

info "interrupts"; grep -E "lan743x" /proc/interrupts | sed 's/^/    /'
dmesg | grep -E "lan743x.*(MSIX|MSI|legacy)" | tail -1 | sed 's/^/    /'

# 6. down/up
info "down/up x$NUPDOWN"
M1=$(date +%s%N); mark "$M1-updown" >/dev/null
ok=1
for i in $(seq 1 "$NUPDOWN"); do
    ip link set "$DUT" down || ok=0
    ip link set "$DUT" up || ok=0
    wait_link || { ok=0; echo "no link after up #$i"; }
done
ping_ok "" $PEER_IP 56 || ok=0
b=$(dmesg_bad "$M1-updown")
[ $ok = 1 ] && [ -z "$b" ] && pass "down/up x$NUPDOWN" || fail "down/up x$NUPDOWN: $b"

# 7. rmmod/insmod
info "rmmod/insmod x$NRELOAD"
M2=$(date +%s%N); mark "$M2-reload" >/dev/null
ok=1
for i in $(seq 1 "$NRELOAD"); do
    rmmod lan743x || modprobe -r lan743x || { ok=0; echo "rmmod failed #$i"; }
    load_driver || { ok=0; echo "load failed #$i"; }
    wait_dut || { ok=0; echo "no interface after load #$i"; }
done
if wait_dut; then
    ip addr add $DUT_IP/24 dev "$DUT" 2>/dev/null
    ip link set "$DUT" up
    wait_link || ok=0
    sleep 1
    ping_ok "" $PEER_IP 56 || { ok=0; cat /tmp/ping.out; }
fi
b=$(dmesg_bad "$M2-reload")
[ $ok = 1 ] && [ -z "$b" ] && pass "rmmod/insmod x$NRELOAD + ping" || fail "rmmod/insmod x$NRELOAD: $b"

# 7b. ARM: DMA cache maintenance per packet; live changes (E2E_LIVE=1)
[ $ARM = 1 ] && sync_counts
[ "${E2E_LIVE:-0}" = 1 ] && live_changes

# 8. DMA-API debug
if [ -d /sys/kernel/debug/dma-api ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null && [ -d /sys/kernel/debug/dma-api ]; then
    e=$(cat /sys/kernel/debug/dma-api/error_count)
    [ "$e" = 0 ] && pass "DMA-API debug: 0 errors" || fail "DMA-API debug: $e errors"
else
    echo "SKIP: DMA-API debug not enabled in this kernel"
fi

# 9. whole-run kernel log
b=$(dmesg_bad "$M0-start")
[ -z "$b" ] && pass "dmesg clean for the whole run" || fail "dmesg: $b"

if [ $ARM = 1 ]; then
    [ "$COUNT" = kprobe ] && echo 0 >"$T/events/lab/enable"
    [ "$COUNT" = kprobe ] || echo nop >"$T/current_tracer"
fi
P pkill iperf3 2>/dev/null
# optional host hand-shake (e.g. to read QMP counters before the VM exits)
if [ -n "${E2E_PAUSE_FILE:-}" ]; then
    touch "$E2E_PAUSE_FILE.ready"
    for i in $(seq 1 3000); do [ -e "$E2E_PAUSE_FILE.go" ] && break; sleep 0.1; done
fi
echo
echo "==== iperf3 (Mbit/s, -P 4, receiver side) ===="
for k in 1500-tx 1500-rx 9000-tx 9000-rx; do echo "  mtu ${k%-*} ${k#*-}: ${IPERF[$k]:-n/a}"; done
echo "==== summary ===="
printf '%s\n' "${RESULTS[@]}"
if [ $FAILS -eq 0 ]; then echo "E2E RESULT: PASS"; exit 0; fi
echo "E2E RESULT: FAIL ($FAILS failures)"; exit 1
