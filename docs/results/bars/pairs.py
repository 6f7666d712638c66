#!/usr/bin/env python3
"""Ratios of interleaved runs: for `ordo bench -p A,B,A,B,...` output files, each B row's txn/s over
the A row just before it. Prints each invocation's median and the distribution of all pairs.
Usage: pairs.py A B FILE... (e.g. pairs.py si ssi smallbank.txt)"""
import statistics,sys
allr=[]; per=[]
for path in sys.argv[3:]:
    blocks=open(path).read().split('workload ')[1:]
    for b in blocks:
        rows=[l.split() for l in b.splitlines()[2:] if l.strip() and not l.startswith('protocol')]
        last=None; rs=[]
        for r in rows:
            if r[0]==sys.argv[1]: last=float(r[2])
            elif r[0]==sys.argv[2] and last: rs.append(float(r[2])/last)
        if rs: per.append(statistics.median(rs)); allr+=rs
allr.sort()
print("invocations %d: medians %s" % (len(per), " ".join("%.2f"%x for x in per)))
print("all pairs n=%d median %.3f  q1 %.3f q3 %.3f  invocations >= 0.90: %d/%d"%(len(allr), statistics.median(allr), allr[len(allr)//4], allr[3*len(allr)//4], sum(1 for x in per if x>=0.9), len(per)))
