#!/usr/bin/env python3
"""Per run: throughput and the summed ORDO_VLL_STATS counters. Usage: stats.py FILE..."""
import sys,re,collections
for f in sys.argv[1:]:
    cur=collections.Counter(); out=[]
    for l in open(f):
        if 'LoopStats' in l:
            name=l.split()[0]
            for k,v in re.findall(r'(\w+): (\d+)',l.split('LoopStats')[1]): cur[k]+=int(v)
        elif re.match(r'^vll',l):
            p=l.split(); keys=['begun','blocked','by_head','by_head_foreign','sca_runs','sca_found','sca_passed_over','idle_turns']
            print(f, p[0], p[2], {k:cur[k] for k in keys}); cur=collections.Counter()
