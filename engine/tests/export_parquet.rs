//! `export --format parquet`: the folder read back with DataFusion holds, rank by rank, the
//! rows of the reports' own tables (counts, summed durations and names as the SQLite files
//! have them), times on the job clock shifted by each rank's session start; an existing
//! folder is never written over, and a bad report leaves no folder behind.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{engine, export, reports};
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt32Type};
use sightline_engine::query::batches::{collect, column};
use sightline_engine::query::context::embedded;
use sightline_engine::query::sources::JobSource;

/// (count, summed duration) of a CUPTI table of a report, by SQL on the SQLite file.
fn sqlite_sums(path: &Path, table: &str) -> (i64, i64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(
        &format!("SELECT count(*), coalesce(sum(end - start), 0) FROM {table}"),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

fn sqlite_start(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(
        "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

fn sqlite_kernel_names(path: &Path) -> BTreeSet<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut q = conn
        .prepare("SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName")
        .unwrap();
    q.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_export_read_back_holds_each_ranks_rows_on_the_job_clock() {
    let dir = tempfile::tempdir().unwrap();
    let folder = export("balanced", dir.path());
    let ctx = embedded(None).unwrap();
    JobSource::Parquet(folder.clone())
        .register(&ctx)
        .await
        .unwrap();
    let paths = reports("balanced");
    let starts: Vec<i64> = paths.iter().map(|p| sqlite_start(p)).collect();
    let earliest = *starts.iter().min().unwrap();
    for (table, cupti) in [
        ("kernels", "CUPTI_ACTIVITY_KIND_KERNEL"),
        ("memcpys", "CUPTI_ACTIVITY_KIND_MEMCPY"),
        ("memsets", "CUPTI_ACTIVITY_KIND_MEMSET"),
        ("cuda_api", "CUPTI_ACTIVITY_KIND_RUNTIME"),
        ("syncs", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
    ] {
        let sql = format!(
            "SELECT rank, count(*) AS n, sum(duration_ns) AS d, \
             min(start_job_ns - start_ns) AS lo, max(start_job_ns - start_ns) AS hi \
             FROM {table} GROUP BY rank ORDER BY rank"
        );
        let batches = collect(&ctx, &sql).await.unwrap();
        let mut seen = 0;
        for batch in &batches {
            let rank = column(batch, "rank", &DataType::UInt32).unwrap();
            let ints: Vec<_> = ["n", "d", "lo", "hi"]
                .iter()
                .map(|c| column(batch, c, &DataType::Int64).unwrap())
                .collect();
            for i in 0..batch.num_rows() {
                let r = rank.as_primitive::<UInt32Type>().value(i) as usize;
                let v = |c: usize| ints[c].as_primitive::<Int64Type>().value(i);
                assert_eq!(
                    (v(0), v(1)),
                    sqlite_sums(&paths[r], cupti),
                    "{table} rank {r}"
                );
                let offset = starts[r] - earliest;
                assert_eq!(
                    (v(2), v(3)),
                    (offset, offset),
                    "{table} rank {r}: the job clock"
                );
                seen += 1;
            }
        }
        let expected = paths.iter().filter(|p| sqlite_sums(p, cupti).0 > 0).count();
        assert_eq!(seen, expected, "{table}: every rank with rows");
    }
    // Names are text, as the reports' string table has them.
    let batches = collect(&ctx, "SELECT DISTINCT name FROM kernels WHERE rank = 1")
        .await
        .unwrap();
    let mut names = BTreeSet::new();
    for batch in &batches {
        let a = column(batch, "name", &DataType::Utf8).unwrap();
        names.extend(a.as_string::<i32>().iter().flatten().map(String::from));
    }
    assert_eq!(names, sqlite_kernel_names(&paths[1]));
}

#[test]
fn an_existing_folder_is_not_written_over_and_a_bad_report_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let taken = dir.path().join("taken");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("mine.txt"), "keep").unwrap();
    let out = engine(&[
        "export".as_ref(),
        "--output".as_ref(),
        taken.as_os_str(),
        reports("balanced")[0].as_os_str(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already exists") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(taken.join("mine.txt")).unwrap(),
        "keep"
    );

    let bad = dir.path().join("rank1.sqlite");
    std::fs::write(&bad, "not a report").unwrap();
    let target = dir.path().join("job.parquet");
    let out = engine(&[
        "export".as_ref(),
        "--output".as_ref(),
        target.as_os_str(),
        reports("balanced")[0].as_os_str(),
        bad.as_os_str(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rank1.sqlite") && err.lines().count() == 1,
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "no folder and no hidden leftover: {left:?}");
}

/// (innermost resolved function, samples) of a report's native samples, by SQL on the file.
fn sqlite_leaf_counts(path: &Path) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut q = conn
        .prepare(
            "SELECT s.value, count(*) FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol \
             WHERE c.stackDepth = 0 AND coalesce(c.unresolved, 0) = 0 GROUP BY s.value ORDER BY s.value",
        )
        .unwrap();
    q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn cpu_samples_are_exported_one_row_each_with_their_function_and_folded_stack() {
    let report = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/native_burn/native_burn.sqlite");
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("burn.parquet");
    let out = engine(&[
        "export".as_ref(),
        "--output".as_ref(),
        folder.as_os_str(),
        report.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ctx = embedded(None).unwrap();
    JobSource::Parquet(folder).register(&ctx).await.unwrap();
    let conn = rusqlite::Connection::open(&report).unwrap();
    let native: i64 = conn
        .query_row("SELECT count(*) FROM COMPOSITE_EVENTS", [], |r| r.get(0))
        .unwrap();
    let count = |sql: String| {
        let ctx = &ctx;
        async move {
            let batches = collect(ctx, &sql).await.unwrap();
            column(&batches[0], "n", &DataType::Int64)
                .unwrap()
                .as_primitive::<Int64Type>()
                .value(0)
        }
    };
    let all = "SELECT count(*) AS n FROM cpu_samples WHERE source = 'native' AND tid IS NOT NULL";
    assert_eq!(count(all.to_string()).await, native);
    let leaves = sqlite_leaf_counts(&report);
    assert!(
        leaves.iter().any(|(f, _)| f.starts_with("checksum_rows")),
        "{leaves:?}"
    );
    for (function, samples) in leaves {
        let escaped = function.replace('\'', "''");
        let sql = format!(
            "SELECT count(*) AS n FROM cpu_samples WHERE function = '{escaped}' \
             AND (stack = '{escaped}' OR stack LIKE '%;{escaped}')"
        );
        assert_eq!(count(sql).await, samples, "{function}");
    }
}
