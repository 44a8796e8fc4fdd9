#!/bin/bash
# Guest side of lab/board/vm_board.py: the lab's guest as a board for the
# board kit. The management port (the virtio-net NIC with PEER_MAC, wired
# to a host tap by vm.sh's VM_MGMT_TAP) gets MGMT_ADDR; an sshd on it takes
# root logins with the key in KEY_PUB (host key and state under /tmp, so
# that nothing of the x86_64 guest's shared root file system changes), and
# its sessions have a home of their own under /tmp (/tmp/board-ssh/home:
# the ~/.ssh where the host puts the key with which the board logs in to
# its partner, for the selftests); the board's own lan743x (the kernel's)
# is loaded, as on a board; the guest
# then runs until /tmp/board-stop exists (the host creates it over ssh)
# or 3 hours pass.
#
#   board_guest.sh KEY_PUB MGMT_ADDR/PREFIX
set -u
[ $# = 2 ] || { echo "usage: board_guest.sh KEY_PUB MGMT_ADDR/PREFIX" >&2; exit 2; }
key=$1 addr=$2
. "$(dirname "$0")/lib.sh"
[ -s "$key" ] || { log "no public key at $key"; exit 2; }
mgmt=""
for n in /sys/class/net/*; do
	[ "$(cat "$n/address" 2>/dev/null)" = "$PEER_MAC" ] && mgmt=$(basename "$n")
done
[ -n "$mgmt" ] || { log "no management port (MAC $PEER_MAC)"; exit 1; }
ip link set lo up
ip addr add "$addr" dev "$mgmt" || exit 1
ip link set "$mgmt" up || exit 1
# the board's own driver, installed for its kernel and loaded, as a board
# boots with it (the x86_64 guest's modules are in LAN743X_MODDIR: put them
# where modprobe and modinfo look, in the guest's mount table only, and
# before sshd's mount namespace below copies that table)
if [ -n "${LAN743X_MODDIR:-}" ] && [ -d "$LAN743X_MODDIR/lib/modules" ]; then
	mount --bind "$LAN743X_MODDIR/lib/modules" /lib/modules || exit 1
	DFLAG=()
fi
load "" || log "note: the kernel's own lan743x did not load"
# the x86_64 guest's /tmp is an overlay on the host's (virtme-ng): the kit's
# rm -rf of a directory the host also has there fails (EIO), and what the
# kit leaves would land on the host; the board gets a /tmp of its own,
# after the key is read (it may be under the host's /tmp)
keytext=$(cat "$key") || exit 1
if [ "$(stat -f -c %T /tmp)" = overlayfs ]; then
	mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 1
fi
mkdir -p /run/sshd /tmp/board-ssh
chmod 700 /tmp/board-ssh
printf '%s\n' "$keytext" >/tmp/board-ssh/authorized_keys
ssh-keygen -q -t ed25519 -N '' -f /tmp/board-ssh/host_ed25519 || exit 1
# sshd without PAM refuses a root whose password field reads locked (the
# guest's shadow file, or what the x86_64 guest sees of the host's): it
# runs in a mount namespace of its own, where a copy of the shadow file
# gives root the field "*" (no password, not locked); nothing else sees it
{ getent shadow 2>/dev/null | grep -v '^root:'; echo 'root:*:19000:0:99999:7:::'; } \
	>/tmp/board-ssh/shadow
chmod 600 /tmp/board-ssh/shadow
# and a copy of the passwd file gives root a home under /tmp for the
# sessions: ~/.ssh there is the board's own (ssh reads it from the passwd
# entry, not from $HOME), and neither the x86_64 guest's /root (the
# host's, its .bashrc and ~/.ssh) nor the ARMv7 guest's is read or changed
mkdir -p /tmp/board-ssh/home
chmod 700 /tmp/board-ssh/home
awk -F: -v OFS=: '$1 == "root" { $6 = "/tmp/board-ssh/home" } 1' \
	/etc/passwd >/tmp/board-ssh/passwd || exit 1
grep -q '^root:' /tmp/board-ssh/passwd ||
	echo 'root:x:0:0:root:/tmp/board-ssh/home:/bin/sh' >>/tmp/board-ssh/passwd
chmod 644 /tmp/board-ssh/passwd
# a root file system without one (the ARMv7 initramfs) gets an empty file
# to mount over; it is the guest's own
[ -e /etc/shadow ] || install -m 600 /dev/null /etc/shadow || exit 1
# virtme-ng (the x86_64 guest) points /dev/stdout and /dev/stderr at its
# own virtio ports, which a session's command cannot open (EBUSY):
# run_kselftest.sh writes each test's output to /dev/stdout, all of it
# lost there. For sshd's sessions they are the process's own, as on a
# board: a copy of /dev/virtio-ports with those two links changed
vports=""
if [ -e /dev/virtio-ports/virtme.dev_stdout ]; then
	vports=/tmp/board-ssh/virtio-ports
	mkdir -p "$vports" && cp -a /dev/virtio-ports/. "$vports/" &&
		ln -sfn /proc/self/fd/1 "$vports/virtme.dev_stdout" &&
		ln -sfn /proc/self/fd/2 "$vports/virtme.dev_stderr" || exit 1
fi
# the sessions' PATH: sshd's default, after the directory of the newer
# tools vm.sh puts first on the lab guests' PATH (lab/common.sh
# guest_tools: Debian 12's ethtool 6.1 lacks the -S --src and -g --json
# the selftests use), as a board has a current ethtool
spath=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
case "${PATH%%:*}" in */tools/bin) spath=${PATH%%:*}:$spath ;; esac
VPORTS=$vports unshare -m --propagation private sh -c \
	'mount --bind /tmp/board-ssh/shadow /etc/shadow &&
	 mount --bind /tmp/board-ssh/passwd /etc/passwd &&
	 { [ -z "$VPORTS" ] || mount --bind "$VPORTS" /dev/virtio-ports; } &&
	 exec "$@"' sshd \
	/usr/sbin/sshd -f /dev/null -o ListenAddress="${addr%/*}" \
	-o HostKey=/tmp/board-ssh/host_ed25519 \
	-o AuthorizedKeysFile=/tmp/board-ssh/authorized_keys \
	-o PermitRootLogin=prohibit-password -o UsePAM=no -o StrictModes=no \
	-o PidFile=/tmp/board-ssh/sshd.pid -o MaxStartups=64 -o MaxSessions=64 \
	-o "SetEnv PATH=$spath" -E /tmp/board-ssh/sshd.log ||
	{ log "sshd did not start"; exit 1; }
dut=""
for _ in $(seq 100); do dut=$(find_if lan743x) && break; sleep 0.1; done
echo "BOARD-READY mgmt=$mgmt netif=${dut:-none}"
seen=0
for _ in $(seq 10800); do
	[ -e /tmp/board-stop ] && break
	sleep 1
	# what sshd refused, on the console (a key or account problem)
	n=$(grep -c "refused\|not allowed\|Authentication refused\|Failed\|error" /tmp/board-ssh/sshd.log 2>/dev/null)
	if [ "${n:-0}" -gt "$seen" ]; then
		grep "refused\|not allowed\|Authentication refused\|Failed\|error" /tmp/board-ssh/sshd.log | tail -n +"$((seen + 1))" | sed 's/^/[board sshd] /'
		seen=$n
	fi
done
echo "BOARD-END"
