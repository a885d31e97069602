#!/usr/bin/env python3
"""Checks that an export (`sightline export --format parquet`) reads as is in pyarrow, pandas,
Polars and DuckDB, and that they agree with each other per rank (kernel count and summed
duration). Not part of `cargo test` (it needs pip packages: pyarrow, pandas, polars, duckdb).

    python3 benches/parquet_readers.py JOB.parquet
"""
import sys

import duckdb
import pandas as pd
import polars as pl
import pyarrow.dataset as ds

folder = sys.argv[1]
tables = ["kernels", "memcpys", "memsets", "syncs", "cuda_api", "os_runtime", "nvtx", "gpu_metrics", "cpu_samples"]
for table in tables:
    arrow = ds.dataset(f"{folder}/{table}", format="parquet", partitioning="hive").to_table()
    frame = pd.read_parquet(f"{folder}/{table}")
    duck = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{folder}/{table}/*/*.parquet', hive_partitioning = true)"
    ).fetchall()[0][0]
    polars = pl.scan_parquet(f"{folder}/{table}/**/*.parquet", hive_partitioning=True).select(pl.len()).collect().item()
    assert arrow.num_rows == len(frame) == duck == polars, (table, arrow.num_rows, len(frame), duck, polars)
    assert "rank" in frame.columns, table
    print(f"{table:12} {arrow.num_rows:>10} rows, {len(arrow.schema)} columns (pyarrow = pandas = polars = duckdb)")

frame = pd.read_parquet(f"{folder}/kernels", columns=["rank", "duration_ns"])
by_pandas = frame.groupby("rank")["duration_ns"].agg(["count", "sum"]).sort_index()
by_duck = duckdb.sql(
    f"SELECT rank, count(*), sum(duration_ns) FROM read_parquet('{folder}/kernels/*/*.parquet', "
    "hive_partitioning = true) GROUP BY rank ORDER BY rank"
).fetchall()
# pandas reads the partition as text (rank=10 sorts before rank=2): compared by number.
pandas_ranks = {int(rank): (int(row["count"]), int(row["sum"])) for rank, row in by_pandas.iterrows()}
duck_ranks = {int(rank): (count, total) for rank, count, total in by_duck}
assert pandas_ranks == duck_ranks, (pandas_ranks, duck_ranks)
print("per-rank kernel counts and sums: pandas = duckdb")
