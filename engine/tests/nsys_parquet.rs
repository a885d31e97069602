//! A job given as nsys's own Parquet exports (`nsys export --type parquetdir`, one folder per
//! rank): the engine's reports are, rank by rank, what `nsys stats`/`nsys analyze` printed for
//! the same recordings exported to SQLite, and its straggler is the rank the program slowed.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{engine_analyze, engine_stats};

fn folder() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/jobs_parquetdir")
}

fn ranks() -> Vec<PathBuf> {
    (0..2)
        .map(|r| folder().join(format!("rank{r}.parquetdir")))
        .collect()
}

fn nsys_rows(rank: u32, report: &str) -> BTreeSet<String> {
    let path = folder().join(format!("stats/rank{rank}_{report}.csv"));
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines().skip(1).map(String::from).collect()
}

#[test]
fn the_reports_of_nsys_parquet_exports_are_nsys_stats_of_each_rank() {
    for report in ["cuda_gpu_kern_sum", "cuda_api_sum", "nvtx_sum", "osrt_sum"] {
        // The folders named one by one, and their parent folder: the same job.
        for inputs in [ranks(), vec![folder()]] {
            let csv = engine_stats(&inputs, report, &[]);
            for rank in 0..2u32 {
                let prefix = format!("{rank},");
                let ours: BTreeSet<String> = (csv.lines().skip(1))
                    .filter_map(|l| l.strip_prefix(&prefix).map(String::from))
                    .collect();
                assert!(!ours.is_empty(), "{report} rank {rank}");
                assert_eq!(ours, nsys_rows(rank, report), "{report} rank {rank}");
            }
        }
    }
}

#[test]
fn the_straggler_of_nsys_parquet_exports_is_the_slowed_rank() {
    let text = engine_analyze(&ranks(), &[]);
    // The program slowed rank 1's `forward` on steps 4..8 (README); rank 0 waits in `backward`.
    assert!(
        text.contains("rank 1 reaches 'backward' last on iterations 4–8"),
        "{text}"
    );
    assert!(text.contains("its 'forward' is"), "{text}");
}
