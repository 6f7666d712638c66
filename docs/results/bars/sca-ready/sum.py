import sys,re,statistics as st
# prints vll-sca/vll per point: ratio of medians
for f in sys.argv[1:]:
    pts={}; cur=None
    for line in open(f):
        if line.startswith("=="): cur=line[3:].strip(); pts[cur]={'vll':[],'vll-sca':[]}; continue
        p=line.split()
        if len(p)>3 and p[0] in ('vll','vll-sca'): pts[cur][p[0]].append(float(p[2]))
    print(f)
    for k,v in pts.items():
        a=st.median(v['vll']); b=st.median(v['vll-sca'])
        print(f"  {k:22s} vll {a/1e3:8.0f}k  sca {b/1e3:8.0f}k  sca/vll {b/a:5.2f}")
