#!/usr/bin/env python3
"""Medians of calvin and calvin-vll per CI and build from ab.sh's output (throughput, p99 latency
in microseconds), and the ratio of the throughput medians."""
import collections, re, statistics, sys
for path in sys.argv[1:]:
    d = collections.defaultdict(list)
    for line in open(path):
        m = re.match(r'# round (\d+) ci (\S+) build (\w+)', line)
        if m:
            cur = (m.group(2), m.group(3))
        elif line.strip():
            f = line.split()
            d[cur + (f[0],)].append(int(f[2]))
            d[cur + (f[0], 'p99')].append(float(f[5]))
    print(path)
    for ci in sorted({k[0] for k in d}, key=float):
        for b in ['before', 'after']:
            c, v = d[(ci, b, 'calvin')], d[(ci, b, 'calvin-vll')]
            print(f'  CI {ci:6} {b:6}  calvin median {statistics.median(c)/1e3:5.0f}k  '
                  f'calvin-vll median {statistics.median(v)/1e3:5.0f}k  '
                  f'ratio {statistics.median(v)/statistics.median(c):.2f}  (n={len(v)})  '
                  f'p99 us calvin {statistics.median(d[(ci, b, "calvin", "p99")]):.0f} '
                  f'calvin-vll {statistics.median(d[(ci, b, "calvin-vll", "p99")]):.0f}')
