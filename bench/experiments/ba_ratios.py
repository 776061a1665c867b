#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""after/before ratios of one bench/run.sh run (its raw.tsv), per repetition
and their geometric mean, for the pairs aes-xts / aes-xts@base, aes-gcm /
aes-gcm@base and default / aes-gcm-names@base (docs/benchmarks.md, BA3).

    python3 bench/experiments/ba_ratios.py bench/results/RUN/raw.tsv
"""
import collections
import math
import sys
raw = sys.argv[1]
v = {}
loads = {}
for line in open(raw):
    f = line.rstrip('\n').split('\t')
    if len(f) < 6: continue
    fs, sysn, rep, row, unit, val = f[:6]
    if row == 'setup' and unit == 'load1': loads[(fs, sysn, rep)] = float(val)
    try: v[(fs, sysn, rep, row, unit)] = float(val)
    except ValueError: pass
rows = [('dd.w.4k','mbps','dd 4K write MB/s'),('dd.wf.4k','mbps','dd 4K write+fdatasync MB/s'),
        ('dd.r.4k','mbps','dd 4K read MB/s'),('dd.w.1m','mbps','dd 1M write MB/s'),('dd.r.1m','mbps','dd 1M read MB/s'),
        ('mongo.create','fps','small files create+sync files/s'),('mongo.copy','fps','small files copy files/s'),
        ('mongo.read','fps','small files read files/s'),
        ('mongo.stat','fps','small files stat (cold) files/s'),('mongo.rename','fps','small files rename files/s'),
        ('mongo.delete','fps','small files delete files/s'),
        ('fio.randread.j1','iops','fio randread 1 job IOPS'),('fio.randwrite.j1','iops','fio randwrite 1 job IOPS'),
        ('fio.randrw.j1','iops','fio randrw 1 job IOPS'),('fio.randread.j4','iops','fio randread 4 jobs IOPS'),
        ('fio.randwrite.j4','iops','fio randwrite 4 jobs IOPS'),('fio.randrw.j4','iops','fio randrw 4 jobs IOPS')]
pairs = [('aes-xts','aes-xts@base'),('aes-gcm','aes-gcm@base'),('default','aes-gcm-names@base')]
print('| row | fs | ' + ' | '.join(f'{a} / {b}, rep 1 / rep 2 (geo. mean)' for a,b in pairs) + ' |')
print('|---|---|' + '---|'*len(pairs))
allr = collections.defaultdict(list)
for fs in ('ext4','xfs'):
    for row, unit, name in rows:
        cells = []
        for a, b in pairs:
            rs = []
            for rep in ('1','2'):
                x = v.get((fs,a,rep,row,unit)); y = v.get((fs,b,rep,row,unit))
                rs.append(x/y if x and y else None)
            ok = [r for r in rs if r]
            gm = (ok[0]*ok[1])**0.5 if len(ok)==2 else None
            if gm: allr[(a,fs)].append(gm); allr[a].append(gm)
            cells.append(' / '.join('%.2f'%r if r else '-' for r in rs) + (' (%.2f)'%gm if gm else ''))
        print(f'| {name} | {"XFS" if fs=="xfs" else fs} | ' + ' | '.join(cells) + ' |')
for k, l in allr.items():
    print(k, 'rows', len(l), 'geomean %.3f'%math.exp(sum(map(math.log,l))/len(l)), 'min %.2f max %.2f'%(min(l),max(l)))
print('load1 at each run start:', ' '.join('%s/%s/%s=%.1f'%(k[0],k[1],k[2],x) for k,x in sorted(loads.items())))
# Noise: each system against itself, repetition 1 against 2, row by row.
same = []
for fs in ('ext4', 'xfs'):
    for sysn in ('aes-xts@base', 'aes-xts', 'aes-gcm@base', 'aes-gcm', 'aes-gcm-names@base', 'default'):
        for row, unit, _ in rows:
            a = v.get((fs, sysn, '1', row, unit)); b = v.get((fs, sysn, '2', row, unit))
            if a and b: same.append(abs(math.log(a / b)))
same.sort()
if same:
    q = lambda p: math.exp(same[int(p * (len(same) - 1))])
    print('same build, rep 1 against rep 2: %d row pairs, median factor %.2f, 90th percentile %.2f, max %.2f'
          % (len(same), q(.5), q(.9), q(1)))
