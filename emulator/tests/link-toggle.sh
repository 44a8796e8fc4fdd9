#!/bin/bash
# Boot the lab VM and toggle the DUT link from the host over QMP
# (set_link dut off/on); the guest checks carrier/ethtool follow it.
# Exit 0 on success.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RW=$(mktemp -d /tmp/l7link.XXXXXX)
export QMP_SOCK=$RW/qmp.sock VM_RWDIR=$RW
cat > "$RW/guest.sh" <<EOG
for n in /sys/class/net/*; do d=\$(basename "\$(readlink -f \$n/device/driver 2>/dev/null)"); [ "\$d" = lan743x ] && D=\$(basename \$n); done
ip link set \$D up
w() { for i in \$(seq 100); do [ "\$(cat /sys/class/net/\$D/carrier)" = \$1 ] && return 0; sleep 0.1; done; return 1; }
rc=0
w 1 && echo "PASS: initial link up" || { echo "FAIL: initial link"; rc=1; }
touch $RW/off; while [ ! -e $RW/off.done ]; do sleep 0.1; done
w 0 && echo "PASS: link down after set_link off (\$(ethtool \$D | grep 'Link detected'))" || { echo "FAIL: link still up"; rc=1; }
touch $RW/on; while [ ! -e $RW/on.done ]; do sleep 0.1; done
w 1 && echo "PASS: link up after set_link on (\$(ethtool \$D | grep -E 'Speed'))" || { echo "FAIL: link still down"; rc=1; }
dmesg | grep -E "lan743x.*Link is" | sed 's/^/    /'
exit \$rc
EOG
"$ROOT/lab/vm.sh" sh "$RW/guest.sh" > "$RW/vm.log" 2>&1 &
VMPID=$!
qmp() {
    python3 - "$QMP_SOCK" "$1" <<'EOP'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
f.readline()
for c in ({"execute": "qmp_capabilities"},
          {"execute": "set_link", "arguments": {"name": "dut", "up": sys.argv[2] == "on"}}):
    f.write(json.dumps(c) + "\n"); f.flush()
    while "event" in (r := json.loads(f.readline())): pass
    assert "error" not in r, r
EOP
}
for st in off on; do
    for i in $(seq 1 1200); do [ -e "$RW/$st" ] && break; kill -0 $VMPID 2>/dev/null || break; sleep 0.5; done
    [ -e "$RW/$st" ] || break
    qmp $st; touch "$RW/$st.done"
done
set +e; wait $VMPID; rc=$?; set -e
grep -aE "PASS|FAIL|Link is" "$RW/vm.log"
rm -rf "$RW"
exit $rc
