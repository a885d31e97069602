#!/bin/bash
# metrics helper: ncu raw pages (default metric set) and Sightline captures of the same runs.
set -u
D=.dev-metrics
B=$D/sightline
chmod +x $B
M=sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__sass_thread_inst_executed_op_fadd_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum
GEMM="--sizes 2048 --iterations 5"
STREAMS="--elements 4M --iterations 1 --warmup 1"
BW="--sizes 1M,16M --iterations 2"
t() { local s=$(date +%s%N); "$@"; local rc=$?; echo "== rc=$rc $(( ($(date +%s%N) - s) / 1000000 )) ms: $*" >&2; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >&2
ncu --version | tail -1 >&2
t timeout 100 ncu --metrics $M --csv --page raw $B run gemm $GEMM > $OUT/gemm.ncu.csv
t timeout 40 $B capture gemm $GEMM --output $OUT/gemm_capture.sqlite >&2
t timeout 100 ncu --metrics $M --csv --page raw --launch-count 200 python3 $D/torch_work.py > $OUT/torch_work.ncu.csv
t timeout 60 ncu --metrics $M --csv --page raw $B run streams $STREAMS > $OUT/streams.ncu.csv
t timeout 30 $B capture streams $STREAMS --output $OUT/streams_capture.sqlite >&2
t timeout 80 ncu --metrics $M --csv --page raw --nvtx --nvtx-include "MYPerf/" python3 $D/torch_work.py > $OUT/torch_work_myperf.ncu.csv
t timeout 40 ncu --metrics $M --csv --page raw $B run bandwidth $BW > $OUT/bandwidth.ncu.csv
t timeout 30 $B capture bandwidth $BW --output $OUT/bandwidth_capture.sqlite >&2
ls -la $OUT >&2
for f in $OUT/*.csv; do echo "$f: $(grep -c '^"[0-9]' $f) rows" >&2; done
