"""SIGTERM iperf3 (server sending, --reverse) at random times: does it exit?"""
import random, signal, subprocess, sys, time
n = int(sys.argv[1]); base = int(sys.argv[2])
hung = seg = ok = 0
for i in range(n):
    port = base + i % 1000
    srv = subprocess.Popen(["iperf3", "-s", "-1", "-p", str(port)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.2)
    cli = subprocess.Popen(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-P", "1",
                            "-t", "86400", "-J", "--reverse", "-i", "0.1", "-b", "50M"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(random.uniform(0.3, 1.0))
    for who, p in (("server", srv), ("client", cli)):
        p.terminate()
        try:
            p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            hung += 1
            st = open(f"/proc/{p.pid}/stat").read().split()[2]
            wchan = open(f"/proc/{p.pid}/wchan").read()
            print(f"HUNG {who} pid {p.pid} iteration {i}: state {st} wchan {wchan}", flush=True)
            subprocess.run(["gdb", "-batch", "-p", str(p.pid), "-ex", "bt"], check=False)
            p.kill(); p.communicate()
            continue
        if p.returncode == -signal.SIGSEGV:
            seg += 1
            print(f"SEGV {who} iteration {i}", flush=True)
        else:
            ok += 1
print(f"done: {n} iterations, exited {ok}, segfault {seg}, hung {hung}")
