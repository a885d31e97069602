#!/usr/bin/env python3
"""The engine's per-rank kernel summary and spread, in DuckDB over the same Parquet export
(for BENCHMARKS.md, beside `sightline stats --engine`).

    python3 benches/duckdb_stats.py JOB.parquet
"""
import sys
import time

import duckdb

folder = sys.argv[1]
started = time.perf_counter()
src = f"read_parquet('{folder}/kernels/*/*.parquet', hive_partitioning = true)"
summary = duckdb.sql(
    f"SELECT rank, name, sum(duration_ns) AS total, count(*) AS n, avg(duration_ns), "
    f"median(duration_ns::DOUBLE), min(duration_ns), max(duration_ns), stddev_samp(duration_ns) "
    f"FROM {src} GROUP BY rank, name ORDER BY rank, total DESC, n, name"
).fetchall()
spread = duckdb.sql(
    f"SELECT rank, count(*), sum(duration_ns) FROM {src} GROUP BY rank ORDER BY rank"
).fetchall()
print(len(summary), "groups;", len(spread), "ranks;", f"{time.perf_counter() - started:.2f} s")
