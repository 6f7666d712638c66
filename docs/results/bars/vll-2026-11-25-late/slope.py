import re,subprocess,sys
def parse(f):
    out=subprocess.run(["cg_annotate","--show-percs=no","--threshold=0.001",f],capture_output=True,text=True).stdout
    sec=out.split("file:function")[1].split("-- Auto-annotated")[0]
    d={}
    for l in sec.splitlines():
        m=re.match(r"^\s*([\d,]+)\s+(\S.*)$",l)
        if m:
            name=m.group(2).strip()
            fn=name.split(":",1)[1] if ":" in name else name
            d[fn]=d.get(fn,0)+int(m.group(1).replace(',',''))
    return d
a=parse(sys.argv[1]); b=parse(sys.argv[2]); n=float(sys.argv[3])
rows=sorted(((a.get(k,0)-b.get(k,0))/n,k) for k in set(a)|set(b)); rows.reverse()
tot=0
for v,k in rows[:int(sys.argv[4])]: print("%8.1f  %s"%(v,k[:150]))
print("sum all", sum(v for v,k in rows))
