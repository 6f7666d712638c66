import sys,re,glob
for t in (2,4,8):
  for ci in ('0.01','0.1'):
    for l in ('','--long'):
      for b in ('po','handoff'):
        f=f'ho/{b}-t{t}-ci{ci}{l}.txt'
        tot={}; v=[]; s=[]
        for line in open(f):
            if 'worker' in line:
                if line.startswith('vll-sca'):
                    for k,x in re.findall(r'(\w+): (\d+)', line): tot[k]=tot.get(k,0)+int(x)
                continue
            m=re.match(r'^(vll|vll-sca)\s+\d+\s+(\d+)',line)
            if m: (v if m.group(1)=='vll' else s).append(int(m.group(2)))
        print(f't={t} ci={ci:5}{l:7} {b:8} vll {v} sca {s} sca/vll {sum(s)/sum(v):.2f}', {k:tot.get(k) for k in ['sca_runs','sca_found','sca_passed_over','by_head']})
