#!/bin/bash
# Counter captures, ncu on the same runs, nsys stats/analyze on the saved files.
cd "$(dirname "$0")"
B=$PWD/sightline
R=$OUT/r; mkdir -p $R
M=sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu | tail -1)
now() { date +%s.%N; }
nvidia-smi -L > $R/machine.txt; $NCU --version >> $R/machine.txt 2>&1
echo "== small gemm (fixture)"
timeout 120 $B capture gemm --iterations 2 --warmup 1 --metrics -o $R/gemm_small.sqlite --dump-counters $R/dump_gemm_small --dump-records $R/gemm_small.rec > $R/gemm_small.log 2>&1; echo "rc $?" >> $R/gemm_small.log
tail -30 $R/gemm_small.log
timeout 120 $NCU --metrics $M --csv --page raw $B run gemm --iterations 2 --warmup 1 > $R/gemm_small.ncu.csv 2> $R/gemm_small.ncu.err
echo "ncu rc $?"; head -c 600 $R/gemm_small.ncu.csv
[ -s $R/gemm_small.sqlite ] || { cd $OUT && tar cJf r.tar.xz r; exit 0; }
echo "== misspelt"
timeout 60 $B capture gemm --metrics dram__bytes_raed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsd -o /tmp/x.sqlite > $R/misspelt.log 2>&1; echo "rc $?" >> $R/misspelt.log; cat $R/misspelt.log
for spec in "gemm" "streams --passes 8 --iterations 1 --warmup 1" "bandwidth --sizes 1M,16M --iterations 2 --warmup 1"; do
  n=${spec%% *}
  t0=$(now); timeout 100 $B capture $spec -o $R/$n.plain.sqlite > $R/$n.plain.log 2>&1
  t1=$(now); timeout 150 $B capture $spec --metrics -o $R/$n.metrics.sqlite > $R/$n.metrics.log 2>&1
  t2=$(now); timeout 150 $NCU --metrics $M --csv --page raw $B run $spec > $R/$n.ncu.csv 2> $R/$n.ncu.err
  t3=$(now)
  echo "$n plain $(echo "$t1-$t0"|bc) metrics $(echo "$t2-$t1"|bc) ncu $(echo "$t3-$t2"|bc)" | tee -a $R/times.txt
  tail -3 $R/$n.metrics.log
done
echo "== nsys stats/analyze on a capture with counters"
NSYS=$(ls -d /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys | tail -1)
mkdir -p /tmp/nsys-libs && for f in $PWD/../.nsys/*.deb; do dpkg -x "$f" /tmp/nsys-libs; done
export LD_LIBRARY_PATH=/tmp/nsys-libs/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cp $R/gemm.metrics.sqlite /tmp/g.sqlite
$NSYS stats --report cuda_gpu_kern_sum --format csv /tmp/g.sqlite > $R/nsys_stats.txt 2>&1; echo "stats rc $?" >> $R/nsys_stats.txt
$NSYS analyze /tmp/g.sqlite > $R/nsys_analyze.txt 2>&1; echo "analyze rc $?" >> $R/nsys_analyze.txt
tail -3 $R/nsys_stats.txt $R/nsys_analyze.txt
[ -x ./counters-test ] && ./counters-test --nocapture > $R/tests.log 2>&1; tail -15 $R/tests.log
cd $OUT && tar cJf r.tar.xz r && rm -rf r; ls -la $OUT
