import subprocess,re,sys
def g(repo,*a): return subprocess.run(["git","-C",repo,*a],capture_output=True,text=True).stdout.strip()
def blob(repo,c,f):
    return g(repo,"rev-parse",f"{c}:{f}") or None
tot_old=set(); tot_new=set()
for repo,stacks in (("build/net-next-3/linux",[("net",2),("net-next-1",12),("net-next-2",15),("net-next-3",6)]),("build/6.12-3/linux",[("6.12",12),("6.12-2",15),("6.12-3",2)])):
    commits=g(repo,"rev-list","--reverse","HEAD").split()
    i=1  # commits[0] is the base
    for s,n in stacks:
        cs=commits[i:i+n]; start=commits[i-1]; i+=n
        allf=set()
        for c in cs:
            fs=[f for f in g(repo,"diff","--name-only",c+"~1",c).split() if re.match(r"drivers/net/ethernet/microchip/lan743x_\w+\.c$",f)]
            allf|=set(fs)
            for f in fs:
                for b in (blob(repo,c+"~1",f),blob(repo,c,f)):
                    if b: tot_old.add(b)
        for f in allf:
            for b in (blob(repo,start,f),blob(repo,cs[-1],f)):
                if b: tot_new.add(b)
        print(s, "files", sorted(allf))
print("distinct file versions spatch runs on, cold: per patch", len(tot_old), "per stack", len(tot_new))
