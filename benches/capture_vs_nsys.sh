#!/bin/bash
# Runs on the GPU machine from the project root, with .nsys/ from
# ../shared/tools/prepare-nsys-carry.sh carried and SIGHTLINE naming the binary (default
# target/release/sightline): each benchmark captured by Sightline and profiled by real nsys
# (BENCHMARKS.md's options), their stats as CSV, then whole-process wall times, interleaved,
# 3 runs. Writes $OUT/cmp.tar.xz; benches/capture_vs_nsys.py reads it, unpacked.
set -u
B=${SIGHTLINE:-$PWD/target/release/sightline}
W=/tmp/cmp; mkdir -p $W/csv
benches="sync-timing streams gemm bandwidth launch-overhead"
OPTS="--trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node"
REPORTS=cuda_gpu_kern_sum,nvtx_sum,cuda_api_sum,cuda_gpu_mem_time_sum
for b in $benches; do
  $B capture $b --output $W/ours_$b.sqlite > $W/ours_$b.log 2>&1; echo "capture $b exit $?"
  OUT=$W bash .nsys/nsys-profile.sh nsys_$b $OPTS -- $B run $b > $W/nsys_$b.log 2>&1; echo "nsys $b exit $?"
  for s in ours nsys; do
    $B stats --format csv --output $W/csv/${s}_$b --report $REPORTS $W/${s}_$b.sqlite > /dev/null 2>&1 || echo "stats $s $b failed"
  done
done
NSYS=$(ls -d /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys | tail -1)
export LD_LIBRARY_PATH=/tmp/nsys-libs/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ms() { echo $(( ($2 - $1) / 1000000 )); }
for r in 1 2 3; do for b in $benches; do
  t0=$(date +%s%N); $B run $b > /dev/null 2>&1; t1=$(date +%s%N)
  $B capture $b --output $W/t.sqlite > /dev/null 2>&1; t2=$(date +%s%N)
  $NSYS profile $OPTS --force-overwrite=true -o $W/t $B run $b > /dev/null 2>&1 && \
    $NSYS export --type sqlite --force-overwrite=true -o $W/tn.sqlite $W/t.nsys-rep > /dev/null 2>&1; t3=$(date +%s%N)
  echo "$r $b bare_ms $(ms $t0 $t1) capture_ms $(ms $t1 $t2) nsys_ms $(ms $t2 $t3)"
done; done | tee $W/times.txt
cp $W/*.log $W/csv/ 2>/dev/null
(cd $W && tar cf - csv times.txt | xz -6 > $OUT/cmp.tar.xz)
