#!/bin/bash
# Guest side of lab/selftests/selftests.py: run the series' kselftests (our
# drivers/net/hw tests, LAN743X_HW_TESTS, and where the stack has it
# tools/testing/selftests/drivers/net/lan743x) against each given
# lan743x.ko, with the virtio-net peer moved into a network namespace as
# the remote end (REMOTE_TYPE=netns). Runs inside the VM as root:
#
#   lab/vm/vm.sh lab/guest/selftests.sh --tests DIR --out DIR [NAME=]KO...
#
#   --tests DIR  a selftests root (holding drivers/net/lan743x, net/lib/py,
#                drivers/net/lib/py; in-tree layout with tools/net/ynl next
#                to it, or an installed one). Default: $LAN743X_SELFTESTS.
#   --install DIR  a kselftest install directory (make -C
#                tools/testing/selftests TARGETS=drivers/net/lan743x install
#                INSTALL_PATH=DIR): the lan743x tests then run as kselftest
#                CI and a board run them, through DIR/run_kselftest.sh with
#                DIR/drivers/net/lan743x/net.config, once per remote mode
#                (LAN743X_REMOTE_MODES, default "netns"; "netns ssh"): netns = the
#                peer's network namespace (REMOTE_TYPE=netns); ssh = an
#                sshd started in that namespace with a key made for the run
#                (REMOTE_TYPE=ssh, REMOTE_ARGS=root@REMOTE_V4). The tests
#                are the same in both modes. KTAP in NAME/ksft-MODE.ktap.
#                LAN743X_SSH_MODULES (default: every module) limits the
#                ssh mode to the modules named.
#   --out DIR    KTAP output: DIR/NAME/<test>.ktap (default
#                $LAN743X_RESULTS, else /tmp/lan743x-selftests)
#   KO           lan743x.ko to test, NAME=path to label it (default: the
#                file's directory name); $LAN743X_KO when none is given,
#                else the kernel's own module (modprobe).
#   env: LAN743X_MODDIR (dir with lib/modules/<ver> for the module's
#        dependencies, set by lab/vm/vm.sh from MODDIR), LAN743X_PEER_MAC,
#        LAN743X_TESTS (space list of test files, default all in Makefile
#        and LAN743X_HW_TESTS; hw/FILE names one of drivers/net/hw;
#        "none": only the generic tests below),
#        LAN743X_HW_TESTS (space list of our tests in drivers/net/hw,
#        run with -t each after -c drivers/net/lan743x: no other hw test),
#        LAN743X_GENERIC (space list of the kernel's own generic driver
#        tests, relative to drivers/net, e.g. "ping.py hw/pp_alloc_fail.py";
#        each one that exists in the tree runs after ours, KTAP in
#        generic-<name>.ktap; one that does not exist is reported missing),
#        LAN743X_KSFT_WHOLE (make ksft: space list of kselftest
#        collections, e.g. "drivers/net drivers/net/hw"): instead of the
#        above, every file of those collections in the install's
#        kselftest-list.txt, each by run_kselftest.sh -o
#        LAN743X_KSFT_TIMEOUT (default 300 s) -t COLLECTION:FILE, with a
#        net.config of IPv4 and IPv6 on both ends (LAN743X_KSFT_FILES,
#        a space list of COLLECTION:FILE: only those); the output of each in
#        NAME/whole/<collection>-<file>.tap. A file whose output exists
#        from an earlier boot is not run again; one whose output has no
#        end (the guest died in it) is recorded as a failure, and the
#        run goes on with the next.
#        LAN743X_TEST_TIMEOUT (default 900): the bound of each test file
#        (run_kselftest.sh -o; timeout for the generic tests),
#        LAN743X_HANG_REPORT (default 600): a test step still running
#        after this many seconds gets a report on stderr of every
#        process's state and kernel wait and the kernel log's tail
#        (LAN743X_RUN_REPORT, default 1800: the same for the whole run),
#        plus the knobs of the tests (LAN743X_MIN_MBPS, LAN743X_XFER_SECS...).
#
# Prints each test's KTAP output; exit status 0 when every program ran
# (test results are judged by the host against lab/selftests/expected/STACK.txt).
set -u

TESTS=${LAN743X_SELFTESTS:-}
INSTALL=
OUT=${LAN743X_RESULTS:-/tmp/lan743x-selftests}
MODS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--tests) TESTS=$2; shift 2 ;;
	--install) INSTALL=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) MODS+=("$1"); shift ;;
	esac
done
[ ${#MODS[@]} -gt 0 ] || MODS=("${LAN743X_KO:-kernel=}")
[ -n "$TESTS" ] || { echo "selftests.sh: --tests DIR or LAN743X_SELFTESTS needed" >&2; exit 2; }
DIR=$TESTS/drivers/net/lan743x	# a stack's own, if any (v2 of the 6.12 backport had one)
HAVE_DIR=
[ -f "$DIR/Makefile" ] && HAVE_DIR=1
[ -z "$INSTALL" ] || [ -x "$INSTALL/run_kselftest.sh" ] ||
	{ echo "selftests.sh: no $INSTALL/run_kselftest.sh" >&2; exit 2; }
SSHDIR=/tmp/lan743x-ssh

. "$(dirname "$0")/lib.sh"

state() {	# state DUT: what the tests change, on both ends
	ip -br link show dev "$1" | awk '{print $1, $2}'
	ip -o link show dev "$1" | grep -o 'mtu [0-9]*'
	ethtool -k "$1" | grep -v '\[fixed\]'
	ip -n "$NS" -o link | grep -o '^[0-9]*: [^:]*: .*mtu [0-9]*'
	ip -n "$NS" -br addr
	ls /sys/kernel/tracing/instances 2>/dev/null
	ps -eo comm | grep -E '^(iperf3|python3|ping)$' | sort | uniq -c
}

programs() {
	[ "${LAN743X_TESTS:-}" != none ] || return 0	# the generic tests only
	if [ -n "${LAN743X_TESTS:-}" ]; then
		echo "$LAN743X_TESTS"
		return
	fi
	[ -z "$HAVE_DIR" ] ||
		sed -n '/^TEST_PROGS/,/^\s*#/p' "$DIR/Makefile" | grep -o '[a-z0-9_]*\.py'
	for t in ${LAN743X_HW_TESTS:-}; do
		[ ! -f "$TESTS/drivers/net/hw/$t" ] || echo "hw/$t"
	done
}

ssh_setup() {	# an sshd in the peer's namespace, a key and a client config
	local d=$SSHDIR i
	[ -f "$d/sshd.pid" ] && kill -0 "$(cat "$d/sshd.pid")" 2>/dev/null && return 0
	command -v ssh-keygen >/dev/null && [ -x /usr/sbin/sshd ] ||
		{ log "no ssh-keygen or /usr/sbin/sshd (openssh-server, lab/setup.sh)"; return 1; }
	rm -rf "$d"; mkdir -p "$d/bin" "$d/home"; chmod 700 "$d"
	ssh-keygen -q -t ed25519 -N '' -C lan743x-selftests -f "$d/id" || return 1
	ssh-keygen -q -t ed25519 -N '' -f "$d/host" || return 1
	cp "$d/id.pub" "$d/authorized_keys"
	# PAM where the system has its configuration (a Debian install; with
	# UsePAM no, sshd refuses the pubkey of a root whose password is
	# locked); the ARM guest's root file system is unpacked packages
	# without the common-* files pam-auth-update makes, and no shadow
	local pam=no
	[ -f /etc/pam.d/common-account ] && pam=yes
	cat >"$d/sshd_config" <<-EOF
		ListenAddress $REMOTE_V4
		HostKey $d/host
		AuthorizedKeysFile $d/authorized_keys
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM $pam
		StrictModes no
		PidFile $d/sshd.pid
		MaxSessions 100
		MaxStartups 100
		SetEnv HOME=$d/home
	EOF
	cat >"$d/ssh_config" <<-EOF
		Host *
		  IdentityFile $d/id
		  IdentitiesOnly yes
		  BatchMode yes
		  StrictHostKeyChecking no
		  UserKnownHostsFile /dev/null
		  LogLevel ERROR
		  ControlMaster auto
		  ControlPath $d/cm-%C
		  ControlPersist 600
		  ServerAliveInterval 5
		  ServerAliveCountMax 12
	EOF
	# The guest's root file system is the host's, /root included: its
	# .bashrc (which bash reads for a command run by sshd) runs pyenv's
	# init, ~45 s per remote command under TCG, and puts pyenv's python3
	# first on PATH. The peer is a machine of its own: SetEnv HOME above
	# gives its sessions an empty home, so they run with sshd's default
	# PATH (/usr/bin/python3), as on a board's peer.
	# The library calls plain ssh and scp: a board's ~/.ssh/config does
	# what these wrappers do here (the guest's root is read-only). -n:
	# the library never feeds a remote command's stdin.
	printf '#!/bin/sh\nexec /usr/bin/ssh -n -F %s "$@"\n' "$d/ssh_config" >"$d/bin/ssh"
	printf '#!/bin/sh\nexec /usr/bin/scp -F %s "$@"\n' "$d/ssh_config" >"$d/bin/scp"
	chmod +x "$d/bin/ssh" "$d/bin/scp"
	mkdir -p /run/sshd && chmod 755 /run/sshd
	ip netns exec "$NS" /usr/sbin/sshd -f "$d/sshd_config" -E "$d/sshd.log" ||
		{ log "sshd failed: $(tail -3 "$d/sshd.log" 2>/dev/null)"; return 1; }
	for i in $(seq 1 20); do
		PATH=$d/bin:$PATH ssh "root@$REMOTE_V4" true 2>/dev/null && break
		sleep 0.5
	done
	PATH=$d/bin:$PATH ssh "root@$REMOTE_V4" true ||
		{ log "ssh root@$REMOTE_V4 fails: $(tail -3 "$d/sshd.log" 2>/dev/null)"; return 1; }
	log "sshd in netns $NS: ssh root@$REMOTE_V4 works"
}

ssh_teardown() {
	[ -f "$SSHDIR/ssh_config" ] &&
		/usr/bin/ssh -F "$SSHDIR/ssh_config" -O exit "root@$REMOTE_V4" 2>/dev/null
	[ -f "$SSHDIR/sshd.pid" ] && kill "$(cat "$SSHDIR/sshd.pid")" 2>/dev/null
	rm -f "$SSHDIR/sshd.pid"
}

hang_report() {	# hang_report SECS WHAT: after SECS (0: never), where everything waits
	local p
	[ "$1" -gt 0 ] 2>/dev/null || return 0
	# the sleep holds none of the step's pipes: killed, this subshell
	# goes at once and the orphaned sleep keeps no reader waiting
	sleep "$1" </dev/null >/dev/null 2>&1 || return
	{
		echo "[selftests.sh] $2 still runs after $1 s: the processes, their kernel waits, the kernel log's tail"
		ps -eo pid,ppid,stat,wchan:32,etimes,args | sed 's/^/[selftests.sh]   /'
		for p in $(ps -eo pid=,stat= | awk '$2 ~ /^D/ {print $1}'); do
			echo "[selftests.sh] kernel stack of $p (uninterruptible):"
			sed 's/^/[selftests.sh]   /' "/proc/$p/stack" 2>/dev/null
		done
		dmesg | tail -40 | sed 's/^/[selftests.sh]   /'
	} >&2
}

watched() {	# watched WHAT CMD...: CMD, with a hang report if it runs long
	local w rc
	hang_report "${LAN743X_HANG_REPORT:-600}" "$1" &
	w=$!
	shift
	"$@"
	rc=$?
	kill "$w" 2>/dev/null
	wait "$w" 2>/dev/null
	return $rc
}

ksft_run() {	# ksft_run MODE NAME DUT: run_kselftest.sh with a net.config
	local mode=$1 name=$2 dut=$3 d
	local args=() t path=$PATH
	case "$mode" in
	netns) ;;
	ssh) ssh_setup || { echo "not ok 1 lab.ssh_setup # no sshd in the peer namespace" |
			tee "$OUT/$name/ksft-$mode.ktap"; return; }
	     path=$SSHDIR/bin:$PATH ;;
	*) log "unknown remote mode $mode"; return ;;
	esac
	# the same net.config next to the lan743x tests and our hw tests
	for d in lan743x hw; do
		[ -d "$INSTALL/drivers/net/$d" ] || continue
		netconfig "$INSTALL/drivers/net/$d/net.config" "$dut" "$mode"
	done
	if [ -n "${LAN743X_TESTS:-}" ]; then
		# hw/FILE: one of our drivers/net/hw tests; FILE: a lan743x one
		for t in $LAN743X_TESTS; do
			case $t in
			hw/*) args+=(-t "drivers/net/hw:${t#hw/}") ;;
			*) args+=(-t "drivers/net/lan743x:$t") ;;
			esac
		done
	else
		# only our tests of drivers/net/hw, never its others
		args=()
		[ ! -d "$INSTALL/drivers/net/lan743x" ] || args=(-c drivers/net/lan743x)
		for t in ${LAN743X_HW_TESTS:-}; do
			[ -f "$INSTALL/drivers/net/hw/$t" ] &&
				args+=(-t "drivers/net/hw:$t")
		done
	fi
	log "module $name: run_kselftest.sh ${args[*]} ($mode)"
	echo "# module $name: run_kselftest.sh ${args[*]}, REMOTE_TYPE=$mode"
	t=$SECONDS
	# each test's result line is followed by its wall time (a comment)
	# each test file within a bound: drivers/net/hw's settings say
	# timeout=0 (none), and one test that never ends would hold the run
	# until the VM's own timeout, with nothing to say where it waits
	(cd "$INSTALL" && PATH=$path watched "run_kselftest.sh ($mode)" \
		./run_kselftest.sh -o "${LAN743X_TEST_TIMEOUT:-900}" "${args[@]}") 2>&1 |
		while IFS= read -r l; do
			printf '%s\n' "$l"
			case $l in
			"ok "*" selftests: "* | "not ok "*" selftests: "*)
				echo "lan743x-selftests: $name $mode: ended: ${l#*selftests: }" >/dev/kmsg
				echo "# lab: $((SECONDS - t)) s since the start" ;;
			esac
		done | tee "$OUT/$name/ksft-$mode.ktap"
	echo "# exit status ${PIPESTATUS[0]}" | tee -a "$OUT/$name/ksft-$mode.ktap"
	log "module $name: run_kselftest.sh ($mode) took $((SECONDS - t)) s"
	[ "$mode" != ssh ] || cp "$SSHDIR/sshd.log" "$OUT/$name/sshd.log" 2>/dev/null
	rm -f "$INSTALL/drivers/net/lan743x/net.config" "$INSTALL/drivers/net/hw/net.config"
}

ksft_whole() {	# ksft_whole NAME DUT: every file of LAN743X_KSFT_WHOLE
	local name=$1 dut=$2 d c e tap t re
	d=$OUT/$name/whole
	mkdir -p "$d"
	re=$(echo "$LAN743X_KSFT_WHOLE" | sed 's/  */|/g')
	for c in $LAN743X_KSFT_WHOLE; do
		netconfig "$INSTALL/$c/net.config" "$dut" netns v6
	done
	# a for loop, not a read loop: a test must not eat the list on stdin
	for e in $(grep -E "^($re):" "$INSTALL/kselftest-list.txt"); do
		if [ -n "${LAN743X_KSFT_FILES:-}" ] &&
			! [[ " $LAN743X_KSFT_FILES " == *" $e "* ]]; then
			continue	# not one of the files asked for
		fi
		tap=$d/$(echo "$e" | tr '/:' '--').tap
		if [ -f "$tap" ] && grep -q '^# exit status' "$tap"; then
			continue	# done in an earlier boot
		fi
		if [ -f "$tap" ]; then
			# started in an earlier boot that never ended it
			{ echo "not ok 1 selftests: ${e%%:*}: ${e#*:} # the guest died during this test (the console log of the earlier boot has why)"
			  echo "# exit status crash"; } | tee -a "$tap"
			continue
		fi
		log "module $name: $e"
		# a file that set an MTU below 1280 took the IPv6 addresses
		# with it: each file starts with both ends' addresses, as a
		# freshly configured CI machine has them
		ip link set "$dut" up
		ip addr replace "$LOCAL_V4/24" dev "$dut"
		ipv6_setup "$dut" >/dev/null 2>&1 || log "module $name: no IPv6 before $e"
		echo "# module $name: run_kselftest.sh -o ${LAN743X_KSFT_TIMEOUT:-300} -t $e" >"$tap"
		sync
		t=$SECONDS
		(cd "$INSTALL" && ./run_kselftest.sh -o "${LAN743X_KSFT_TIMEOUT:-300}" -t "$e" </dev/null) 2>&1 |
			tee -a "$tap"
		{ echo "# lab: $((SECONDS - t)) s"
		  echo "# exit status ${PIPESTATUS[0]}"; } | tee -a "$tap"
		sync
	done
	for c in $LAN743X_KSFT_WHOLE; do rm -f "$INSTALL/$c/net.config"; done
}

# The body is a function, parsed whole before it runs: the script can be
# edited while a (long) run is in progress.
main() {
# /dev/stdout and the mounts the kselftests need (lib.sh)
ksft_console
command -v iperf3 >/dev/null || log "warning: no iperf3 in the guest: iperf3 tests will skip"
peer_setup || exit 1
# a run far beyond its usual time says where it waits, whatever the step
# (a module's load or removal, a link change between the tests)
hang_report "${LAN743X_RUN_REPORT:-1800}" "the whole run" &
run_report=$!
# the tests write caches next to themselves: keep them off read-only roots
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

for m in "${MODS[@]}"; do
	case "$m" in
	*=*) name=${m%%=*} ko=${m#*=} ;;
	*) ko=$m name=$(basename "$(dirname "$ko")") ;;
	esac
	mkdir -p "$OUT/$name"
	log "module $name: ${ko:-the kernel lan743x}"
	if ! load "$ko"; then
		echo "not ok 1 lab.load # could not load ${ko:-lan743x}" | tee "$OUT/$name/load.ktap"
		continue
	fi
	if ! dut=$(dut_setup); then
		echo "not ok 1 lab.load # no lan743x interface" | tee "$OUT/$name/load.ktap"
		continue
	fi
	echo "ok 1 lab.load" >"$OUT/$name/load.ktap"
	log "module $name: NETIF=$dut"
	# make ksft: IPv6 on both ends too, as netdev's CI configures them
	[ -z "${LAN743X_KSFT_WHOLE:-}" ] || ipv6_setup "$dut" ||
		log "module $name: no IPv6 between the ends"
	state0=$(state "$dut")
	marker="lan743x-selftests-$name-$(date +%s%N)"
	echo "$marker" >/dev/kmsg
	if [ -n "$INSTALL" ] && [ -n "${LAN743X_KSFT_WHOLE:-}" ]; then
		ksft_whole "$name" "$dut"
	elif [ -n "$INSTALL" ] && [ "${LAN743X_TESTS:-}" != none ]; then
		for mode in ${LAN743X_REMOTE_MODES:-netns}; do
			if [ "$mode" = ssh ] && [ -n "${LAN743X_SSH_MODULES:-}" ] &&
			   ! echo " $LAN743X_SSH_MODULES " | grep -q " $name "; then
				continue
			fi
			ksft_run "$mode" "$name" "$dut"
		done
	fi
	for t in $([ -z "$INSTALL" ] && programs); do
		log "module $name: $t"
		echo "# module $name: $t"
		echo "lan743x-selftests: $name: starts $t" >/dev/kmsg
		t0=$SECONDS
		case $t in hw/*) tdir=$TESTS/drivers/net/hw ;; *) tdir=$DIR ;; esac
		(cd "$tdir" && NETIF=$dut LOCAL_V4=$LOCAL_V4 REMOTE_V4=$REMOTE_V4 \
			REMOTE_TYPE=netns REMOTE_ARGS=$NS \
			watched "$t" timeout -k 10 "${LAN743X_TEST_TIMEOUT:-900}" python3 "./${t#hw/}") 2>&1 |
			tee "$OUT/$name/$(basename "${t%.py}").ktap"
		echo "# exit status ${PIPESTATUS[0]}" | tee -a "$OUT/$name/$(basename "${t%.py}").ktap"
		log "module $name: $t took $((SECONDS - t0)) s"
	done
	# the kernel's own generic driver tests, written upstream, not by us
	for g in ${LAN743X_GENERIC:-}; do
		gname=generic-$(echo "${g%.*}" | tr / -)
		# Python tests, or bash ones of the forwarding library
		interp=python3
		case $g in *.sh) interp=bash ;; esac
		if [ ! -f "$TESTS/drivers/net/$g" ]; then
			echo "ok 1 generic.${g%.*} # SKIP not in this kernel's selftests" |
				tee "$OUT/$name/$gname.ktap"
			continue
		fi
		log "module $name: generic $g"
		echo "lan743x-selftests: $name: starts generic $g" >/dev/kmsg
		t=$SECONDS
		echo "# module $name: generic $g"
		(cd "$TESTS/drivers/net/$(dirname "$g")" && NETIF=$dut LOCAL_V4=$LOCAL_V4 \
			REMOTE_V4=$REMOTE_V4 REMOTE_TYPE=netns REMOTE_ARGS=$NS \
			watched "generic $g" timeout -k 10 "${LAN743X_TEST_TIMEOUT:-900}" \
			$interp "./$(basename "$g")") 2>&1 |
			sed "s/^\(\s*\(not \)\?ok [0-9]* \)/\1generic./" |
			tee "$OUT/$name/$gname.ktap"
		echo "# exit status ${PIPESTATUS[0]}" | tee -a "$OUT/$name/$gname.ktap"
		log "module $name: generic $g took $((SECONDS - t)) s"
	done
	# the tests must leave both ends as they found them
	state1=$(state "$dut")
	if [ "$state0" = "$state1" ]; then
		echo "ok 1 lab.state_restored" | tee "$OUT/$name/state.ktap"
	else
		{ diff <(echo "$state0") <(echo "$state1") | sed 's/^/# /'
		  echo "not ok 1 lab.state_restored"; } | tee "$OUT/$name/state.ktap"
	fi
	# kernel warnings while this module ran fail the run
	# the log since this module's start; a problem is shown with the
	# test that was running (the last lan743x-selftests line before it)
	# and the whole report, call trace included
	since=$(dmesg | awk -v m="$marker" 'f; index($0, m) {f=1}')
	printf '%s\n' "$since" >"$OUT/$name/dmesg.log"
	pat="WARNING|BUG|Call Trace|DMA-API|NETDEV WATCHDOG|refcount_t"
	first=$(printf '%s\n' "$since" | grep -nE "$pat" | head -1 | cut -d: -f1)
	if [ -z "$first" ]; then
		echo "ok 1 lab.dmesg_clean" | tee "$OUT/$name/dmesg.ktap"
	else
		{ printf '%s\n' "$since" | head -n "$first" | grep "lan743x-selftests: " | tail -1
		  printf '%s\n' "$since" | tail -n +"$first" | head -60
		} | sed 's/^/# /' >"$OUT/$name/dmesg.ktap"
		echo "not ok 1 lab.dmesg_clean" >>"$OUT/$name/dmesg.ktap"
		cat "$OUT/$name/dmesg.ktap"
	fi
	ip link set "$dut" down
done
ssh_teardown
kill "$run_report" 2>/dev/null
}
main; exit 0
