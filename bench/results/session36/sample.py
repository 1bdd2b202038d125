import sys, time, urllib.request, json, os
pid=int(sys.argv[1]); secs=float(sys.argv[2]); out=[]
t0=time.monotonic()
def threads():
    r={}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            st=open(f"/proc/{pid}/task/{t}/stat").read(); name=st[st.index("(")+1:st.rindex(")")]; f=st[st.rindex(")")+2:].split()
            r[name]=r.get(name,0)+int(f[11])+int(f[12])
        except Exception: pass
    return r
prev=threads()
while time.monotonic()-t0<secs:
    time.sleep(0.1)
    try: txt=urllib.request.urlopen("http://127.0.0.1:14318/metrics",timeout=1).read().decode()
    except Exception as e: continue
    m={}
    for line in txt.splitlines():
        if line.startswith("tripline_") and "{" not in line:
            k,v=line.split(); m[k[9:]]=float(v)
    cur=threads(); d={k:cur[k]-prev.get(k,0) for k in cur if cur[k]-prev.get(k,0)>0}; prev=cur
    out.append((round(time.monotonic()-t0,2),int(m.get("queue_batches",0)),int(m.get("inflight_bytes",0)/1e6),int(m.get("spans_refused_total",0)),int(m.get("wal_bytes",0)/1e6),d))
for o in out: print(o)
