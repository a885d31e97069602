import csv, collections, statistics
# Reads csv/ and times.txt of benches/capture_vs_nsys.sh (unpacked cmp.tar.xz) and prints the
# BENCHMARKS.md rows: kernels, NVTX, copies, API calls, and whole-process medians.
benches="sync-timing streams gemm bandwidth launch-overhead".split()
def rows(side,b,rep):
    try:
        return list(csv.DictReader(open(f"csv/{side}_{b}_{rep}.csv")))
    except FileNotFoundError:
        return []
for b in benches:
    ok,nk=rows('ours',b,'cuda_gpu_kern_sum'),rows('nsys',b,'cuda_gpu_kern_sum')
    o={r['Name']:(int(r['Instances']),float(r['Avg (ns)'])) for r in ok}
    n={r['Name']:(int(r['Instances']),float(r['Avg (ns)'])) for r in nk}
    same_k = set(o)==set(n) and all(o[k][0]==n[k][0] for k in o)
    worst = max([abs(o[k][1]-n[k][1])/n[k][1]*100 for k in o if k in n] or [0])
    inst=sum(v[0] for v in o.values())
    on={(r['Style'],r['Range'].split(':',1)[-1]):int(r['Instances']) for r in rows('ours',b,'nvtx_sum')}
    nn={(r['Style'],r['Range'].split(':',1)[-1]):int(r['Instances']) for r in rows('nsys',b,'nvtx_sum')}
    om={r['Operation']:int(r['Count']) for r in rows('ours',b,'cuda_gpu_mem_time_sum')}
    nm={r['Operation']:int(r['Count']) for r in rows('nsys',b,'cuda_gpu_mem_time_sum')}
    oa={r['Name']:int(r['Num Calls']) for r in rows('ours',b,'cuda_api_sum')}
    na={r['Name']:int(r['Num Calls']) for r in rows('nsys',b,'cuda_api_sum')}
    apidiff={k:(oa.get(k,0),na.get(k,0)) for k in set(oa)|set(na) if oa.get(k,0)!=na.get(k,0)}
    print(f"{b}: kernels same={same_k} names={len(o)} instances={inst} worst_avg_diff={worst:.2f}% | nvtx same={on==nn} rows={len(on)} | copies same={om==nm} {sum(om.values())} | api diffs {apidiff}")
t=collections.defaultdict(lambda: collections.defaultdict(list))
for line in open('times.txt'):
    p=line.split(); b=p[1]
    for k,v in zip(p[2::2],p[3::2]): t[b][k].append(int(v))
print()
for b in benches:
    m={k:statistics.median(v) for k,v in t[b].items()}
    ca=m['capture_ms']-m['bare_ms']; na=m['nsys_ms']-m['bare_ms']
    print(f"{b}: bare {m['bare_ms']/1000:.2f} s capture {m['capture_ms']/1000:.2f} s nsys {m['nsys_ms']/1000:.2f} s | capture adds {ca/1000:.2f} s nsys adds {na/1000:.2f} s ratio {ca/na:.2f}")
