#!/usr/bin/env bash
# The engine on a synthetic job, side by side in one run (BENCHMARKS.md, "A job past one
# machine"): export throughput, `stats --engine` time and peak RSS against DuckDB over the same
# Parquet folder and a pandas script doing what Holistic Trace Analysis does, and the same
# stats on a local Ballista cluster (a scheduler and two executors).
#
#   benches/engine_job.sh RANKS BIN_DIR WORK_DIR [PYTHON]
#   (FROM: the report the job is made of; KEEP_EXPORT=1: the export of an earlier run kept; READERS: a smaller export for the readers' check;
#   PANDAS_CAP: GiB the pandas script may map)
#
# BIN_DIR holds `sightline` and `sightline-engine`; PYTHON has pyarrow, pandas and duckdb.
set -euo pipefail
ranks=$1 bin=$2 work=$3 python=${4:-python3}
here=$(cd "$(dirname "$0")" && pwd)
from=${FROM:-../shared/fixtures/nsys-2025.3/many_kernels.sqlite}
mkdir -p "$work"
job="$work/job$ranks" parquet="$work/job$ranks.parquet"
measure() { # LABEL COMMAND...: wall seconds and peak RSS
  local label=$1; shift
  /usr/bin/time -f "$label: %e s, peak RSS %M KiB, %P CPU" "$@" >"$work/out.txt" 2>"$work/err.txt" || { cat "$work/err.txt"; exit 1; }
  grep -E "^$label:" "$work/err.txt"
}
measure_may_fail() { # LABEL COMMAND...: as measure, a failure (out of memory) said, not fatal
  local label=$1; shift
  /usr/bin/time -f "$label: %e s, peak RSS %M KiB, %P CPU" "$@" >"$work/out.txt" 2>"$work/err.txt" \
    || echo "$label: FAILED (exit $?): $(grep -v "^$label:" "$work/err.txt" | tail -2 | tr '\n' ' ')"
  grep -E "^$label:" "$work/err.txt"
}
[ -d "$job" ] || measure synth "$bin/sightline" synth --from "$from" --ranks "$ranks" --output "$job"
events=$(( $(ls "$job"/*.sqlite | wc -l) ))
du -sh "$job" | sed 's/^/sqlite: /'
if [ -z "${KEEP_EXPORT:-}" ] || [ ! -d "$parquet" ]; then
  rm -rf "$parquet"
  measure export "$bin/sightline-engine" export --format parquet --output "$parquet" "$job"
  grep -o "exported.*" "$work/err.txt"
fi
du -sh "$parquet" | sed 's/^/parquet: /'
# Read back by pyarrow, pandas, Polars and DuckDB (every table whole: on READERS, a smaller
# export, when set).
"$python" "$here/parquet_readers.py" "${READERS:-$parquet}"
measure engine-stats "$bin/sightline-engine" stats --format csv --report cuda_gpu_kern_sum,rank_spread "$parquet"
measure engine-stats-1G "$bin/sightline-engine" stats --format csv --report cuda_gpu_kern_sum,rank_spread --memory-limit 1G "$parquet"
measure engine-stats-all "$bin/sightline-engine" stats --format csv "$parquet"
measure engine-analyze "$bin/sightline-engine" analyze "$parquet"
measure engine-analyze-1G "$bin/sightline-engine" analyze --memory-limit 1G "$parquet"
head -c 400 "$work/out.txt"; echo
measure duckdb "$python" "$here/duckdb_stats.py" "$parquet"
# pandas holds every rank in memory (as Holistic Trace Analysis does): capped at PANDAS_CAP GiB
# of address space so that it fails rather than take the machine.
measure_may_fail pandas-hta prlimit --as=$(( ${PANDAS_CAP:-14} * 1024 * 1024 * 1024 )) "$python" "$here/hta_like.py" "$parquet"
# A local cluster: a scheduler and two executors, stopped at the end.
port=$(( 20000 + RANDOM % 20000 ))
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
"$bin/sightline-engine" cluster scheduler --bind 127.0.0.1:$port 2>/dev/null & pids+=($!)
sleep 2
for e in 1 2; do
  "$bin/sightline-engine" cluster executor --scheduler 127.0.0.1:$port --bind 127.0.0.1:$((port + 2 * e)) 2>/dev/null & pids+=($!)
done
sleep 3
"$bin/sightline-engine" stats --format csv --report cuda_gpu_kern_sum,rank_spread "$parquet" >"$work/embedded.csv"
measure cluster "$bin/sightline-engine" stats --format csv --report cuda_gpu_kern_sum,rank_spread --cluster df://127.0.0.1:$port "$parquet"
cmp "$work/out.txt" "$work/embedded.csv" && echo "cluster: identical answers to embedded"
"$bin/sightline-engine" analyze "$parquet" >"$work/embedded-analyze.txt"
measure cluster-analyze "$bin/sightline-engine" analyze --cluster df://127.0.0.1:$port "$parquet"
cmp "$work/out.txt" "$work/embedded-analyze.txt" && echo "cluster analyze: identical to embedded"
