#!/bin/bash
# iperf3 --bidir -P 2 through relay.py, data streams connected to the
# server in the order made ("inorder") and reversed ("swap"); prints each
# stream's bytes from the client's JSON. Host only (127.0.0.1).
set -u
D=$(dirname "$0")
iperf3 -s -D -p 5391; sleep 0.5
for mode in inorder swap; do
	python3 "$D/relay.py" 5390 5391 4 $mode & rp=$!
	sleep 0.5
	timeout 40 iperf3 -c 127.0.0.1 -p 5390 --bidir -P 2 -t 3 -J >/tmp/bsw-$mode.json 2>&1
	echo "$mode: iperf3 exit $?"
	kill $rp; wait $rp 2>/dev/null
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
got = {}
for i in j.get("intervals", []):
    for s in i["streams"]:
        k = "socket %d, client %s" % (s["socket"], "sends" if s["sender"] else "receives")
        got[k] = got.get(k, 0) + s["bytes"]
print("  error:", j.get("error"))
for k, v in got.items():
    print("  %s: %d bytes" % (k, v))' /tmp/bsw-$mode.json
	pkill -f "iperf3 -s -D -p 5391"; sleep 0.5; iperf3 -s -D -p 5391; sleep 0.5
done
pkill -f "iperf3 -s -D -p 5391"
