#!/bin/bash
# Capture parity on the GPU machine (a `device` run): each benchmark under real nsys
# (`sightline run`, through ../shared/tools/nsys-profile.sh carried in .nsys), then Sightline's own
# capture of the same benchmark: row counts, per-kernel averages, wall times, into $OUT/parity.txt.
# Carry a release binary as .rec/sightline.xz (xz: the tree travels with a 64 MiB limit).
set -u
xz -dkf .rec/sightline.xz && chmod +x .rec/sightline; B=$PWD/.rec/sightline
R=$OUT/parity.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R
for bench in ${BENCHES:-sync-timing launch-overhead streams}; do
  echo "=== $bench" >> $R
  t0=$(date +%s.%N)
  bash .nsys/nsys-profile.sh ${bench}_nsys --trace=cuda,nvtx,osrt --cuda-graph-trace=node --sample=none --cpuctxsw=none -- $B run $bench > /tmp/${bench}_nsys.log 2>&1
  t1=$(date +%s.%N)
  $B capture $bench --output /tmp/${bench}_ours.sqlite > /tmp/${bench}_ours.log 2>&1
  echo "capture exit $?" >> $R
  t2=$(date +%s.%N)
  python3 -c "print(f'wall: nsys profile+export+stats {$t1-$t0:.2f} s; sightline capture+save {$t2-$t1:.2f} s')" >> $R
  python3 - "$OUT/${bench}_nsys.sqlite" "/tmp/${bench}_ours.sqlite" >> $R <<'PY'
import sqlite3,sys
for label,p in zip(["nsys","ours"],sys.argv[1:]):
    c=sqlite3.connect(p)
    def n(t,w=""):
        try: return c.execute(f"select count(*) from {t} {w}").fetchone()[0]
        except Exception as e: return "-"
    print(f"{label}: kernels {n('CUPTI_ACTIVITY_KIND_KERNEL')} copies {n('CUPTI_ACTIVITY_KIND_MEMCPY')} memsets {n('CUPTI_ACTIVITY_KIND_MEMSET')} runtime {n('CUPTI_ACTIVITY_KIND_RUNTIME')} nvtx {n('NVTX_EVENTS','where eventType in (59,60,34)')} syncs {n('CUPTI_ACTIVITY_KIND_SYNCHRONIZATION')}")
PY
  for which in nsys ours; do
    f=$OUT/${bench}_nsys.sqlite; [ $which = ours ] && f=/tmp/${bench}_ours.sqlite
    echo "-- $which cuda_gpu_kern_sum (Avg ns, Instances, Name)" >> $R
    $B stats $f --report cuda_gpu_kern_sum --format csv 2>/dev/null | python3 -c "
import csv,sys
r=list(csv.reader(sys.stdin))
h=r[0]; ia=h.index('Avg (ns)'); ii=h.index('Instances'); n=h.index('Name')
for row in r[1:]: print(f'{float(row[ia]):12.1f} {row[ii]:>8} {row[n][:70]}')
" >> $R
  done
  tail -3 /tmp/${bench}_ours.log >> $R
  rm -f $OUT/${bench}_nsys.sqlite $OUT/${bench}_nsys-stats.tar.xz
done
cat $R
