//! Where reports from other people showed us printing what nsys does not:
//! NVTX reports on a report without NVTX data, and the columns of
//! unified-memory copies in `cuda_gpu_trace`.

mod common;

use std::sync::atomic::AtomicBool;

use common::fixture;
use rusqlite::Connection;
use sightline::analysis::{Cell, Report, compute};
use sightline::model::Trace;

/// A copy of `name` edited with `sql`, loaded.
fn edited(name: &str, sql: &str) -> Trace {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::copy(fixture(name), &path).expect("copy");
    Connection::open(&path)
        .expect("open copy")
        .execute_batch(sql)
        .expect("edit");
    sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false)).expect("loads")
}

/// nsys prints "does not contain NVTX data" and no rows for `nvtx_kern_sum`
/// and `cuda_gpu_kern_sum:nvtx-name` on such a report.
#[test]
fn nvtx_reports_print_nothing_without_nvtx_data() {
    let trace = edited("sync_timing.sqlite", "DELETE FROM NVTX_EVENTS;");
    assert!(trace.nvtx.spans.is_empty());
    assert!(
        !compute(&trace, Report::CudaGpuKernSum, None)
            .rows
            .is_empty()
    );
    for report in [Report::NvtxKernSum, Report::CudaGpuKernSumNvtxName] {
        let table = compute(&trace, report, None);
        assert!(
            table.rows.is_empty(),
            "{}: {:?}",
            report.name(),
            table.rows.first()
        );
    }
    // With NVTX data both have rows.
    let trace = common::load("sync_timing.sqlite");
    for report in [Report::NvtxKernSum, Report::CudaGpuKernSumNvtxName] {
        assert!(!compute(&trace, report, None).rows.is_empty());
    }
}

/// Unified-memory copies belong to no call, context or stream: nsys leaves
/// CorrId, Ctx and Strm empty; other copies keep theirs.
#[test]
fn unified_memory_copies_leave_context_stream_and_correlation_empty() {
    let trace = edited(
        "streams.sqlite",
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 11
           WHERE rowid = (SELECT MIN(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY);",
    );
    let table = compute(&trace, Report::CudaGpuTrace, None);
    let col = |name: &str| {
        table
            .columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (name, corr, ctx, strm) = (col("Name"), col("CorrId"), col("Ctx"), col("Strm"));
    let unified: Vec<&Vec<Cell>> = table
        .rows
        .iter()
        .filter(|r| r[name].to_string().contains("Unified"))
        .collect();
    assert_eq!(unified.len(), 1, "the edited copy");
    for c in [corr, ctx, strm] {
        assert_eq!(unified[0][c], Cell::Empty, "{}", table.columns[c]);
    }
    let other = table
        .rows
        .iter()
        .find(|r| {
            r[name].to_string().contains("memcpy") && !r[name].to_string().contains("Unified")
        })
        .expect("another copy");
    for c in [corr, ctx, strm] {
        assert!(matches!(other[c], Cell::Int(_)), "{}", table.columns[c]);
    }
}
