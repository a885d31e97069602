#!/usr/bin/env python3
"""What Holistic Trace Analysis does for a job, in pandas over the same Parquet export: every
rank's kernels loaded into one DataFrame (HTA keeps all ranks in memory), then the per-rank
kernel summary (cuda_gpu_kern_sum's columns) and each rank's GPU time (the spread). For the
benchmark beside `sightline stats --engine` and DuckDB (BENCHMARKS.md).

    python3 benches/hta_like.py JOB.parquet
"""
import sys
import time

import pandas as pd

folder = sys.argv[1]
started = time.perf_counter()
kernels = pd.read_parquet(f"{folder}/kernels", columns=["rank", "name", "duration_ns"])
grouped = kernels.groupby(["rank", "name"])["duration_ns"]
summary = grouped.agg(["sum", "count", "mean", "median", "min", "max", "std"]).reset_index()
summary["pct"] = summary["sum"] * 100.0 / summary.groupby("rank")["sum"].transform("sum")
summary = summary.sort_values(["rank", "sum"], ascending=[True, False])
spread = kernels.groupby("rank")["duration_ns"].agg(["count", "sum"])
print(len(summary), "groups;", len(spread), "ranks;", f"{time.perf_counter() - started:.2f} s")
