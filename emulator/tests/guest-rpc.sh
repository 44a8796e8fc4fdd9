#!/bin/bash
# Guest side of emulator/tests/vmrpc.py: run the shell commands the host
# drops into $1 (a --rwdir shared with the host) one by one.
#   host writes  cmd.N        guest runs it with bash, writes out.N and rc.N
#   cmd.N = "exit"            ends the loop (and the VM)
RW=$1
n=0
touch "$RW/guest.up"
while :; do
    while [ ! -e "$RW/cmd.$n" ]; do sleep 0.05; done
    c=$(cat "$RW/cmd.$n")
    [ "$c" = exit ] && break
    bash -c "$c" > "$RW/out.$n" 2>&1
    echo $? > "$RW/rc.$n.tmp"
    mv "$RW/rc.$n.tmp" "$RW/rc.$n"
    n=$((n + 1))
done
