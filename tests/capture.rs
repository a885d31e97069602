//! Live capture without a GPU: real CUPTI records recorded on an H100
//! (tests/fixtures/capture/*.rec, made by `sightline capture B --dump-records`)
//! converted into a report and compared with what nsys reported for the same
//! benchmark on the same machine; replay of saved reports through the live
//! path; and the clear refusal of `capture` on a machine without a driver.

mod common;
use common::fixture;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sightline::capture::dump::read_dump;
use sightline::capture::replay;
use sightline::capture::session::{CaptureJob, CaptureMessage};

/// `column key` → the row's other named columns, from a CSV `nsys stats` or
/// `sightline stats` wrote.
fn csv_rows(path: &Path, key: &str, values: &[&str]) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return BTreeMap::new();
    };
    let header = split_csv(header);
    let col = |name: &str| header.iter().position(|h| h == name);
    let key_at = col(key).unwrap_or_else(|| panic!("{}: no {key} column", path.display()));
    let value_at: Vec<usize> = values
        .iter()
        .map(|v| col(v).unwrap_or_else(|| panic!("{}: no {v} column", path.display())))
        .collect();
    lines
        .map(split_csv)
        .map(|cells| {
            (
                cells[key_at].clone(),
                value_at.iter().map(|&i| cells[i].clone()).collect(),
            )
        })
        .collect()
}

fn split_csv(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(String::new()),
            _ => cells.last_mut().expect("a cell").push(c),
        }
    }
    cells
}

/// Our `sightline stats` CSVs of a report, written into `dir`.
fn our_stats(report: &Path, dir: &Path) -> PathBuf {
    let prefix = dir.join("ours");
    let status = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["stats", "--format", "csv", "--output"])
        .arg(&prefix)
        .arg(report)
        .arg("--report")
        .arg("cuda_gpu_kern_sum,nvtx_sum,cuda_api_sum,cuda_gpu_mem_time_sum")
        .output()
        .expect("run sightline stats");
    assert!(status.status.success(), "{status:?}");
    prefix
}

/// The report a capture saves of the CUPTI records in fixture `dump`
/// (converted as a capture converts them), in `dir`.
fn saved_capture_of(dump: &str, dir: &tempfile::TempDir) -> PathBuf {
    let dump = read_dump(&fixture(dump)).expect("read dump");
    assert!(!dump.records.is_empty());
    let live = dump.to_report(4242).expect("convert");
    save_in(&live, dir)
}

/// `live` saved as `capture.sqlite` in `dir`.
fn save_in(live: &sightline::capture::live::LiveReport, dir: &tempfile::TempDir) -> PathBuf {
    let saved = dir.path().join("capture.sqlite");
    live.save(&saved).expect("save");
    saved
}

/// `live` saved, and the saved report loaded whole.
fn saved_and_loaded(live: &sightline::capture::live::LiveReport) -> sightline::model::Trace {
    let dir = tempfile::tempdir().expect("tempdir");
    sightline::loader::load(&save_in(live, &dir), &mut |_| {}, &AtomicBool::new(false))
        .expect("saved capture loads")
}

/// The H100 records of benchmark `bench`, converted as a capture converts
/// them, give the kernels, copies, NVTX ranges and API calls nsys found when
/// it profiled `sightline run bench` on the same machine.
fn records_match_nsys(bench: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = saved_capture_of(&format!("capture/{bench}.rec"), &dir);
    let ours = our_stats(&saved, dir.path());
    let theirs = |report: &str| fixture(&format!("capture/nsys_{bench}_{report}.csv"));
    let mine = |report: &str| PathBuf::from(format!("{}_{report}.csv", ours.display()));

    // Kernels: the same names (as nsys spells them) and instance counts;
    // averages within 1% (two runs of the same program, not the same run).
    let a = csv_rows(
        &mine("cuda_gpu_kern_sum"),
        "Name",
        &["Instances", "Avg (ns)"],
    );
    let b = csv_rows(
        &theirs("cuda_gpu_kern_sum"),
        "Name",
        &["Instances", "Avg (ns)"],
    );
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, ours) in &a {
        let nsys = &b[name];
        assert_eq!(ours[0], nsys[0], "{name} instances");
        let (x, y): (f64, f64) = (ours[1].parse().expect("avg"), nsys[1].parse().expect("avg"));
        assert!((x / y - 1.0).abs() < 0.01, "{name}: avg {x} vs nsys {y}");
    }
    // NVTX ranges: names, push/pop or start/end, instances.
    let a = csv_rows(&mine("nvtx_sum"), "Range", &["Style", "Instances"]);
    let b = csv_rows(&theirs("nvtx_sum"), "Range", &["Style", "Instances"]);
    assert_eq!(a, b, "nvtx_sum");
    // Copies by kind.
    let a = csv_rows(&mine("cuda_gpu_mem_time_sum"), "Operation", &["Count"]);
    let b = csv_rows(&theirs("cuda_gpu_mem_time_sum"), "Operation", &["Count"]);
    assert_eq!(a, b, "cuda_gpu_mem_time_sum");
    // API calls: the same calls, except cuInit, which the process also calls
    // before nsys's injection starts tracing it (one call more here).
    let mut a = csv_rows(&mine("cuda_api_sum"), "Name", &["Num Calls"]);
    let mut b = csv_rows(&theirs("cuda_api_sum"), "Name", &["Num Calls"]);
    a.remove("cuInit");
    b.remove("cuInit");
    assert_eq!(a, b, "cuda_api_sum");
}

#[test]
fn h100_records_of_sync_timing_match_nsys() {
    records_match_nsys("sync-timing");
}

#[test]
fn h100_records_of_streams_match_nsys() {
    records_match_nsys("streams");
}

/// A capture writes an NVTX range when it starts: a snapshot taken after
/// the start of the benchmark's outermost range and before its end shows it
/// (unended, ending at the last NVTX timestamp, as nsys counts a range that
/// never ended), its later snapshots end it where it ended, and the report
/// numbers its ranges by start, as nsys's reports do (its range id).
#[test]
fn a_capture_shows_a_range_from_its_start_and_numbers_ranges_by_start() {
    use sightline::capture::live::LiveReport;
    use sightline::capture::records::{Record, marker_flag};
    let dump = read_dump(&fixture("capture/sync-timing.rec")).expect("read dump");
    let is_start = |r: &Record| matches!(r, Record::Marker(m) if m.flags & marker_flag::START != 0);
    let first_start = dump.records.iter().position(is_start).expect("a range");
    let Record::Marker(outer) = &dump.records[first_start] else {
        unreachable!()
    };
    let (outer_id, outer_name) = (outer.id, outer.name.clone());
    let ends_at = (dump.records.iter())
        .position(|r| matches!(r, Record::Marker(m) if m.id == outer_id && m.flags & marker_flag::END != 0))
        .expect("the range ends");
    // Up to a record past its start and some of what it holds.
    let cut = (first_start + 1..ends_at)
        .find(|&i| is_start(&dump.records[i]))
        .map_or(ends_at, |i| i + 1);
    assert!(cut < ends_at, "a range starts inside the first");

    let mut live = LiveReport::create(4242, "sightline", "test").expect("working file");
    live.mark_started_ranges(&dump.started_ranges);
    let outer_start = outer.timestamp;
    live.set_origin(outer_start.saturating_sub(1));
    live.append(&dump.records[..cut]).expect("append");
    let inside = live.snapshot().expect("snapshot");
    let named = |t: &sightline::model::Trace| {
        (0..t.nvtx.spans.len())
            .find(|&i| t.strings.get(t.nvtx.spans.name[i]) == outer_name)
            .unwrap_or_else(|| panic!("no range {outer_name:?}"))
    };
    let i = named(&inside);
    assert!(inside.nvtx.unended[i], "open while it lasts");
    let details = sightline::app::state::events::EventRef::new(
        sightline::app::state::events::Table::Nvtx,
        i as u32,
    )
    .fields(&inside);
    assert!(
        details
            .iter()
            .any(|(k, v)| *k == "Ended" && v.starts_with("not yet")),
        "{details:?}"
    );
    assert!(inside.nvtx.spans.end(i) > inside.nvtx.spans.start[i]);

    live.append(&dump.records[cut..]).expect("append the rest");
    let after = live.snapshot().expect("snapshot");
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = save_in(&live, &dir);
    let whole = sightline::loader::load(&saved, &mut |_| {}, &AtomicBool::new(false))
        .expect("saved capture loads");
    let (a, w) = (named(&after), named(&whole));
    assert!(!after.nvtx.unended[a] && !whole.nvtx.unended[w], "ended");
    // Its colour and payload, handed over after its start, shown while open.
    assert_ne!(whole.nvtx.color[w], 0, "the benchmark colours its ranges");
    assert_eq!(
        inside.nvtx.color[i], whole.nvtx.color[w],
        "colour while open"
    );
    assert_eq!(
        inside.nvtx.payload.get(&(i as u32)),
        whole.nvtx.payload.get(&(w as u32)),
        "payload while open"
    );
    assert_eq!(
        (after.nvtx.spans.start[a], after.nvtx.spans.end(a)),
        (whole.nvtx.spans.start[w], whole.nvtx.spans.end(w))
    );
    assert_eq!(
        after.nvtx.unended.iter().filter(|&&u| u).count(),
        whole.nvtx.unended.iter().filter(|&&u| u).count()
    );
    // Ranges numbered by start, on each thread.
    let conn = rusqlite::Connection::open(&saved).expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT globalTid, start FROM NVTX_EVENTS WHERE eventType IN (59, 60) ORDER BY rowid",
        )
        .expect("query");
    let rows: Vec<(i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert!(rows.len() > 2);
    let mut last: BTreeMap<i64, i64> = BTreeMap::new();
    for (tid, start) in rows {
        let before = last.insert(tid, start).unwrap_or(i64::MIN);
        assert!(start >= before, "range ids out of start order");
    }
}

/// A replay says what it does before its first events (checking and
/// indexing the report: seconds for a big one, with nothing else on screen),
/// and a Stop asked for then ends it there, not after the indexing.
#[test]
fn a_replay_says_what_it_prepares_and_stops_while_it_prepares() {
    let (tx, rx) = crossbeam_channel::unbounded();
    let outbox = sightline::capture::session::Outbox::new(tx);
    let source = fixture("timing_cases.sqlite");
    let go_on = Arc::new(AtomicBool::new(false));
    let done = replay::replay(&source, 1e6, &go_on, &outbox).expect("a replay");
    assert!(!done.stopped_early);
    let said: Vec<CaptureMessage> = rx.try_iter().collect();
    // (A replay this fast may end before its loading thread sends one.)
    let first_snapshot = said
        .iter()
        .position(|m| matches!(m, CaptureMessage::Snapshot(..)))
        .unwrap_or(said.len());
    let preparing: Vec<&str> = said[..first_snapshot]
        .iter()
        .filter_map(|m| match m {
            CaptureMessage::Preparing(what) => Some(what.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(preparing.first(), Some(&"checking the report"));
    assert!(
        preparing.contains(&"indexing CUPTI_ACTIVITY_KIND_KERNEL by time"),
        "{preparing:?}"
    );
    assert!(
        !said[first_snapshot..]
            .iter()
            .any(|m| matches!(m, CaptureMessage::Preparing(_))),
        "nothing prepared after the first events"
    );
    // Stop asked for before the replay starts: it ends before indexing.
    let (tx, rx) = crossbeam_channel::unbounded();
    let outbox = sightline::capture::session::Outbox::new(tx);
    let stop = Arc::new(AtomicBool::new(true));
    let stopped = replay::replay(&source, 1e6, &stop, &outbox);
    assert!(
        matches!(
            stopped,
            Err(sightline::capture::environment::CaptureError::Cancelled)
        ),
        "stopped while preparing"
    );
    assert!(
        !rx.try_iter().any(|m| matches!(
            m,
            CaptureMessage::Snapshot(..) | CaptureMessage::Preparing(_)
        )),
        "nothing after the stop"
    );
}

/// A replay writes ranges as a capture does: a snapshot between a range's
/// start and end shows it, open, and the last shows every range as the
/// report has it.
#[test]
fn a_replay_shows_ranges_from_their_start() {
    // Its ranges last up to 0.74 s of its 0.38 s of API calls.
    let source = fixture("streams.sqlite");
    let whole = sightline::loader::load(&source, &mut |_| {}, &AtomicBool::new(false))
        .expect("fixture loads");
    assert!(whole.nvtx.unended.iter().all(|&u| !u));
    let mut open_seen = 0;
    let mut last = None;
    replay::replay_in_steps(&source, 60, |t| {
        open_seen += t.nvtx.unended.iter().filter(|&&u| u).count();
        last = Some(t);
    })
    .expect("replay");
    assert!(open_seen > 0, "no snapshot showed a range before its end");
    let last = last.expect("a last snapshot");
    let ends = |t: &sightline::model::Trace| {
        let mut ends: Vec<(i64, i64, bool)> = (0..t.nvtx.spans.len())
            .map(|i| {
                (
                    t.nvtx.spans.start[i],
                    t.nvtx.spans.end(i),
                    t.nvtx.unended[i],
                )
            })
            .collect();
        ends.sort_unstable();
        ends
    };
    assert_eq!(ends(&last), ends(&whole));
}

/// Every NVTX range's facts as a view or a report reads them, in table order.
fn nvtx_facts(t: &sightline::model::Trace) -> Vec<String> {
    let n = &t.nvtx;
    (0..n.spans.len())
        .map(|i| {
            format!(
                "{} {:?} {}..{} unended {} colour {:#x} category {} payload {:?} depth {}",
                t.strings.get(n.spans.name[i]),
                n.kind[i],
                n.spans.start[i],
                n.spans.end(i),
                n.unended[i],
                n.color[i],
                n.category[i],
                n.payload.get(&(i as u32)),
                n.depth[i]
            )
        })
        .collect()
}

/// A start/end range that never ends, its data (colour, category, payload)
/// coming after its start: the capture's last snapshot (a growing load)
/// shows what its saved report shows, the range's type as it started.
#[test]
fn a_range_that_never_ends_is_the_same_in_the_last_snapshot_and_the_saved_capture() {
    use sightline::capture::live::LiveReport;
    use sightline::capture::records::{
        MarkerDataRecord, MarkerPayload, MarkerRecord, Record, marker_flag,
    };
    let marker = |flags, ts, id, name: &str| {
        Record::Marker(MarkerRecord {
            flags,
            timestamp: ts,
            id,
            process_id: 4242,
            thread_id: 7,
            name: name.into(),
            domain: String::new(),
        })
    };
    let mut live = LiveReport::create(4242, "sightline", "test").expect("working file");
    live.mark_started_ranges(&[1]);
    live.set_origin(0);
    live.append(&[
        marker(marker_flag::START, 1000, 1, "never-ended"),
        marker(marker_flag::START, 1100, 2, "inner"),
        marker(marker_flag::END, 1200, 2, ""),
    ])
    .expect("append");
    live.snapshot().expect("snapshot");
    live.append(&[
        Record::MarkerData(MarkerDataRecord {
            id: 1,
            payload: Some(MarkerPayload::Int(42)),
            color: 0xFF00FF00,
            category: 3,
        }),
        marker(marker_flag::START, 1300, 3, "later"),
        marker(marker_flag::END, 1400, 3, ""),
    ])
    .expect("append");
    live.close_open_ranges().expect("close");
    let last = live.snapshot().expect("snapshot");
    let whole = saved_and_loaded(&live);
    assert_eq!(nvtx_facts(&last), nvtx_facts(&whole));
    let facts = nvtx_facts(&whole);
    assert!(
        facts[0].starts_with("never-ended StartEnd") && facts[0].contains("payload Some(Int(42))"),
        "{facts:?}"
    );
}

/// The last state of a replay of the report at `path` in `steps` holds its
/// NVTX ranges as a load of the report does (in any order: a replay numbers
/// its rows as they come).
fn replay_ends_ranges_as_the_report(path: &Path, steps: u32) {
    let whole = sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false)).expect("loads");
    let mut last = None;
    replay::replay_in_steps(path, steps, |t| last = Some(t)).expect("replay");
    let last = last.expect("a last state");
    let sorted = |t: &sightline::model::Trace| {
        let mut f = nvtx_facts(t);
        f.sort();
        f
    };
    assert_eq!(sorted(&last), sorted(&whole));
}

/// A range whose end comes before its start (driver data the loader reads
/// with a warning), its end in an earlier slice of the replay than its
/// start: the replay ends it as the report does.
#[test]
fn a_replayed_range_ending_before_it_starts_ends_as_in_the_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("backwards.sqlite");
    std::fs::copy(fixture("sync_timing.sqlite"), &path).expect("copy");
    rusqlite::Connection::open(&path)
        .and_then(|c| {
            c.execute_batch(
                "INSERT INTO NVTX_EVENTS (start, \"end\", eventType, globalTid, text)
                 SELECT (SELECT max(\"end\") FROM CUPTI_ACTIVITY_KIND_RUNTIME) - 10,
                        (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + 10,
                        59, globalTid, 'backwards' FROM NVTX_EVENTS LIMIT 1;",
            )
        })
        .expect("a range ending before it starts");
    replay_ends_ranges_as_the_report(&path, 10);
}

/// An NVTX table whose rowid is a column of its own (not nsys's schema, but
/// one the loader reads) replays as any other.
#[test]
fn a_replayed_nvtx_table_with_a_rowid_column_replays() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("aliased.sqlite");
    std::fs::copy(fixture("sync_timing.sqlite"), &path).expect("copy");
    let c = rusqlite::Connection::open(&path).expect("open");
    let sql: String = c
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'NVTX_EVENTS'",
            [],
            |r| r.get(0),
        )
        .expect("schema");
    let sql = sql.replacen('(', "(id INTEGER PRIMARY KEY, ", 1);
    c.execute_batch(&format!(
        "ALTER TABLE NVTX_EVENTS RENAME TO old_nvtx; {sql};
         INSERT INTO NVTX_EVENTS SELECT rowid + 1000, * FROM old_nvtx; DROP TABLE old_nvtx;"
    ))
    .expect("a rowid column");
    drop(c);
    replay_ends_ranges_as_the_report(&path, 20);
}

/// A range the benchmark marks without a payload has none in nsys's report;
/// CUPTI hands its data over as an unsigned payload of 0, which a capture
/// must not keep as one. Ranges with a payload keep theirs.
#[test]
fn h100_records_of_sync_timing_carry_the_payloads_nsys_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = saved_capture_of("capture/sync-timing.rec", &dir);
    assert_payloads_as_nsys_found(&saved);
}

/// The capture bundled for the lessons and Compare (made on an H100 by an
/// older build, it held an unsigned 0 where nsys has no payload) says what
/// nsys says of the same benchmark's ranges.
#[test]
fn the_bundled_capture_carries_the_payloads_nsys_found() {
    assert_payloads_as_nsys_found(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sync_timing_capture.sqlite"),
    );
}

/// Per NVTX range name of the saved capture `report` of sync-timing: the
/// instances, how many carry a payload and which, as nsys profiled the same
/// benchmark (`capture/nsys_sync-timing_nvtx_payloads.csv`).
fn assert_payloads_as_nsys_found(report: &Path) {
    let trace =
        sightline::loader::load(report, &mut |_| {}, &AtomicBool::new(false)).expect("loads");
    let mut ours: BTreeMap<String, (usize, usize, std::collections::BTreeSet<String>)> =
        BTreeMap::new();
    for i in 0..trace.nvtx.spans.len() {
        if trace.nvtx.kind[i] == sightline::model::NvtxKind::Mark {
            continue;
        }
        let name = trace.strings.get(trace.nvtx.spans.name[i]).to_string();
        let entry = ours.entry(name).or_default();
        entry.0 += 1;
        if let Some(p) = trace.nvtx.payload.get(&(i as u32)) {
            entry.1 += 1;
            entry.2.insert(match p {
                sightline::model::Payload::Int(v) => v.to_string(),
                sightline::model::Payload::Uint(v) => v.to_string(),
                sightline::model::Payload::Float(v) => v.to_string(),
                sightline::model::Payload::Json(v) => v.clone(),
            });
        }
    }
    let expected = std::fs::read_to_string(fixture("capture/nsys_sync-timing_nvtx_payloads.csv"))
        .expect("nsys's payloads");
    let mut rows = 0;
    for line in expected.lines().skip(1) {
        let cells = split_csv(line);
        let (name, count, with) = (&cells[0], &cells[1], &cells[2]);
        let got = ours
            .get(name.as_str())
            .unwrap_or_else(|| panic!("no range {name}"));
        assert_eq!(got.0.to_string(), *count, "{name}: instances");
        assert_eq!(got.1.to_string(), *with, "{name}: ranges with a payload");
        let values: Vec<&str> = cells[3].split(',').filter(|v| !v.is_empty()).collect();
        assert_eq!(
            got.2.iter().map(String::as_str).collect::<Vec<_>>(),
            values,
            "{name}: payloads"
        );
        rows += 1;
    }
    assert_eq!(rows, ours.len(), "the same ranges");
}

/// Collects a job's messages until it finishes.
fn run_to_end(job: &CaptureJob, timeout: Duration) -> (Vec<u64>, Option<CaptureMessage>) {
    let deadline = Instant::now() + timeout;
    let mut sizes = Vec::new();
    while Instant::now() < deadline {
        match job.messages().recv_timeout(Duration::from_millis(100)) {
            Ok(CaptureMessage::Snapshot(trace, _)) => sizes.push(trace.event_count() as u64),
            Ok(m @ CaptureMessage::Finished(_)) => return (sizes, Some(m)),
            Ok(CaptureMessage::Output(_) | CaptureMessage::Preparing(_)) => {}
            Err(_) => {}
        }
    }
    (sizes, None)
}

/// sync_timing loaded whole, and its replay at a pace that takes about
/// `seconds` of wall time, whatever the report's own span.
fn replay_of_sync_timing(seconds: f64) -> (sightline::model::Trace, CaptureJob) {
    let path = fixture("sync_timing.sqlite");
    let full = sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false)).expect("load");
    let span = (full.info.time_range.1 - full.info.time_range.0) as f64;
    let job = CaptureJob::replay(path, span / (seconds * 1e9));
    (full, job)
}

#[test]
fn replay_grows_and_ends_with_the_whole_report() {
    let (full, job) = replay_of_sync_timing(1.5);
    let (sizes, end) = run_to_end(&job, Duration::from_secs(60));
    assert!(sizes.len() >= 2, "snapshots while it ran: {sizes:?}");
    assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "grows: {sizes:?}");
    assert!(
        sizes[0] < full.event_count() as u64,
        "first snapshot is partial"
    );
    let Some(CaptureMessage::Finished(Ok(result))) = end else {
        panic!("no clean end");
    };
    let t = &result.trace;
    assert!(!result.stopped_early);
    assert_eq!(t.kernels.spans.len(), full.kernels.spans.len());
    assert_eq!(t.memcpys.spans.len(), full.memcpys.spans.len());
    assert_eq!(t.cuda_api.spans.len(), full.cuda_api.spans.len());
    assert_eq!(t.nvtx.spans.len(), full.nvtx.spans.len());
    assert_eq!(t.info.time_range, full.info.time_range);
}

#[test]
fn each_message_of_a_capture_wakes_its_reader_once_it_is_sent() {
    use std::sync::atomic::AtomicUsize;
    let (_, job) = replay_of_sync_timing(1.5);
    let wakes = Arc::new(AtomicUsize::new(0));
    let counter = wakes.clone();
    job.wake_with(Arc::new(move || {
        counter.fetch_add(1, Ordering::SeqCst);
    }));
    // A wake comes after its message is in the channel: never more wakes
    // than messages taken, once each message is taken.
    let mut taken = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut snapshots, mut preparing) = (0, 0);
    while Instant::now() < deadline {
        let Ok(message) = job.messages().recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        taken += 1;
        // Each wake counted is of a message sent before it: taken, or still
        // waiting in the channel (counted after the wakes).
        let woken = wakes.load(Ordering::SeqCst);
        assert!(
            woken <= taken + job.messages().len(),
            "woken before a message was sent"
        );
        match message {
            CaptureMessage::Snapshot(..) => snapshots += 1,
            CaptureMessage::Finished(_) => break,
            CaptureMessage::Preparing(_) => preparing += 1,
            CaptureMessage::Output(_) => {}
        }
    }
    assert!(snapshots >= 2, "{snapshots} snapshots");
    // The replay says what it prepares as it starts, maybe before the waker
    // is given; every message after that wakes.
    let settled = Instant::now() + Duration::from_secs(5);
    while wakes.load(Ordering::SeqCst) < taken - preparing && Instant::now() < settled {
        std::thread::sleep(Duration::from_millis(1));
    }
    let woken = wakes.load(Ordering::SeqCst);
    assert!(
        (taken - preparing..=taken).contains(&woken),
        "one wake a message: {woken} for {taken}, {preparing} of them while preparing"
    );
}

#[test]
fn a_replays_snapshots_say_how_far_behind_its_clock_they_are() {
    let (_, job) = replay_of_sync_timing(1.5);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut ages = Vec::new();
    while Instant::now() < deadline {
        match job.messages().recv_timeout(Duration::from_millis(100)) {
            Ok(CaptureMessage::Snapshot(_, status)) => {
                // Each snapshot says where its load's time went: every
                // phase of a load, together within the load's time.
                let phases = &status.snapshot_phases.0;
                let names: Vec<&str> = phases.iter().map(|(p, _)| *p).collect();
                assert!(
                    names.contains(&"GPU events") && names.contains(&"indexes"),
                    "{names:?}"
                );
                let sum: Duration = phases.iter().map(|(_, d)| *d).sum();
                assert!(sum <= status.snapshot_cost, "{phases:?} in {status:?}");
                // Its newest event was written before the load, so younger then.
                assert!(
                    status.newest_event_age_written <= status.newest_event_age,
                    "{status:?}"
                );
                ages.push((status.newest_event_age, status.snapshot_cost))
            }
            Ok(CaptureMessage::Finished(_)) => break,
            _ => {}
        }
    }
    assert!(!ages.is_empty());
    // The newest event of a snapshot is as old as the replay's clock is ahead
    // of it: at most the time between two copies and the snapshot's load, a
    // fraction of a second here — not the time since 1970 (a capture's
    // wall-clock reading applied to a replayed report's session clock).
    for (age, cost) in &ages {
        assert!(
            *age < *cost + Duration::from_secs(2),
            "newest event {age:?} old (snapshot load {cost:?}): {ages:?}"
        );
    }
}

/// Every snapshot of a replay shows one committed state of the working
/// file, though it is loaded on another thread while the replay writes: for
/// the newest event it holds (by the time it became known: its end), it
/// holds every kernel and CUDA API call of the report known by then, and no
/// later one — never kernels of one commit beside calls of another, or a
/// row twice.
#[test]
fn snapshots_loaded_while_a_replay_writes_are_each_one_commit() {
    let path = fixture("streams.sqlite");
    let full = sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false)).expect("load");
    let ends = |spans: &sightline::model::SpanColumns| -> Vec<i64> {
        let mut ends: Vec<i64> = (0..spans.len()).map(|i| spans.end(i)).collect();
        ends.sort_unstable();
        ends
    };
    let (kernel_ends, api_ends) = (ends(&full.kernels.spans), ends(&full.cuda_api.spans));
    let known_by = |ends: &[i64], t: i64| ends.partition_point(|&e| e <= t);
    let span = (full.info.time_range.1 - full.info.time_range.0) as f64;
    let job = CaptureJob::replay(path, span / 3e9);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut checked = 0;
    let mut last_snapshot = None;
    while Instant::now() < deadline {
        match job.messages().recv_timeout(Duration::from_millis(100)) {
            Ok(CaptureMessage::Snapshot(trace, _)) => {
                last_snapshot = Some(trace.clone());
                let (kernels, api) = (&trace.kernels.spans, &trace.cuda_api.spans);
                let newest = (0..kernels.len())
                    .map(|i| kernels.end(i))
                    .chain((0..api.len()).map(|i| api.end(i)))
                    .max();
                let Some(newest) = newest else { continue };
                assert_eq!(
                    (kernels.len(), api.len()),
                    (known_by(&kernel_ends, newest), known_by(&api_ends, newest)),
                    "snapshot {checked}: kernels and API calls known by {newest}"
                );
                checked += 1;
            }
            Ok(CaptureMessage::Finished(end)) => {
                let result = end.expect("the replay ended cleanly");
                // The last load goes on from the loading thread's: the
                // kernels shown keep their index in the final trace.
                let (last, end) = (
                    &last_snapshot.expect("snapshots").kernels.spans,
                    &result.trace.kernels.spans,
                );
                let kept = (0..last.len()).all(|i| last.get(i) == end.get(i));
                assert!(kept, "kernels moved in the final trace");
                break;
            }
            _ => {}
        }
    }
    assert!(checked >= 5, "{checked} snapshots");
}

/// A saved capture is an ordinary report, not in the working file's WAL
/// mode: a reader of a WAL database must write beside it (`-shm`), which a
/// read-only folder or another tool may not allow.
#[test]
fn a_saved_capture_is_in_rollback_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let saved = saved_capture_of("capture/streams.rec", &dir);
    let mut header = [0u8; 20];
    std::io::Read::read_exact(&mut std::fs::File::open(&saved).expect("open"), &mut header)
        .expect("header");
    // Bytes 18 and 19: file format write and read versions, 1 legacy
    // (rollback journal), 2 WAL.
    assert_eq!(&header[18..20], &[1, 1]);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["capture.sqlite"]);
}

#[test]
fn stop_ends_a_replay_early_with_what_it_had() {
    // A pace that would take about 30 s: Stop comes long before the end.
    let (full, job) = replay_of_sync_timing(30.0);
    std::thread::sleep(Duration::from_millis(600));
    job.stop();
    let (_, end) = run_to_end(&job, Duration::from_secs(20));
    let Some(CaptureMessage::Finished(Ok(result))) = end else {
        panic!("no clean end after Stop");
    };
    assert!(result.stopped_early);
    assert!(result.trace.event_count() < full.event_count());
}

#[test]
fn replay_of_a_file_that_is_no_report_is_a_clear_error() {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, _rx) = crossbeam_channel::unbounded();
    let tx = sightline::capture::session::Outbox::new(tx);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let err = replay::replay(&path, 1.0, &stop, &tx)
        .err()
        .expect("an error");
    assert!(err.to_string().contains("not an SQLite file"), "{err}");
    stop.store(true, Ordering::Relaxed);
}

#[test]
fn capture_without_a_driver_says_so_and_writes_nothing() {
    if sightline::capture::environment::driver_present() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("c.sqlite");
    let run = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["capture", "sync-timing", "--output"])
        .arg(&out)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        stderr.trim(),
        format!("sightline: {}", sightline::capture::environment::NO_DRIVER)
    );
    assert!(!out.exists());
    assert!(!stderr.contains("panicked"));
}

#[test]
fn saved_captures_name_sightline_and_the_schema() {
    let conn = sightline::loader::open_read_only(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sync_timing_capture.sqlite"),
    )
    .expect("open");
    let value = |name: &str| -> String {
        conn.query_row(
            "SELECT value FROM META_DATA_EXPORT WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .expect(name)
    };
    assert_eq!(value("EXPORT_PRODUCT_NAME"), "Sightline");
    assert_eq!(value("EXPORT_SCHEMA_VERSION"), "3.20.3");
    let trace = sightline::loader::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sync_timing_capture.sqlite"),
        &mut |_| {},
        &AtomicBool::new(false),
    )
    .expect("the bundled capture loads");
    assert_eq!(trace.gpus[0].name, "NVIDIA H100 80GB HBM3");
    assert!(trace.kernels.spans.len() >= 90);
}

/// The whole capture path on a real GPU (runs only where a driver is; says
/// so elsewhere): every kernel the benchmark says it launched is in the
/// report, with the API calls that launched them, and the save loads back.
#[test]
fn capture_on_the_gpu_records_every_launch() {
    use sightline::capture::benchmarks;
    use sightline::capture::session::{self, CaptureOptions};
    if !sightline::capture::environment::driver_present() {
        eprintln!("skipped: no GPU (no NVIDIA driver on this machine)");
        return;
    }
    let spec = benchmarks::find("sync-timing").expect("benchmark");
    let args: Vec<String> = ["--iterations", "4", "--warmup", "2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let params = benchmarks::parse_args(spec, &args).expect("params");
    let (tx, rx) = crossbeam_channel::unbounded();
    let tx = session::Outbox::new(tx);
    let stop = Arc::new(AtomicBool::new(false));
    let options = CaptureOptions {
        live_snapshots: true,
        ..CaptureOptions::default()
    };
    let result = session::capture(spec, &params, &options, &stop, &tx).expect("capture");
    drop(tx);
    let output: Vec<String> = rx
        .try_iter()
        .filter_map(|m| match m {
            CaptureMessage::Output(line) => Some(line),
            _ => None,
        })
        .collect();
    // The benchmark's own count: "check: y = N after M launches: ok".
    let launches: usize = output
        .iter()
        .find_map(|l| l.split(" after ").nth(1)?.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no launch count in {output:?}"));
    let t = &result.trace;
    assert_eq!(t.kernels.spans.len(), launches);
    assert!(result.benchmark_error.is_none());
    assert_eq!(result.dropped_records, 0);
    // Every kernel pairs with the API call that launched it.
    for i in 0..t.kernels.spans.len() {
        let op = sightline::model::GpuOp {
            kind: sightline::model::GpuOpKind::Kernel,
            index: i as u32,
        };
        let pid = t
            .stream_of(op)
            .map(|s| t.streams[s as usize].pid)
            .expect("stream");
        let launch = t.correlation.api_call(pid, t.kernels.correlation[i]);
        assert!(launch.is_some(), "kernel {i} has no launch call");
    }
    assert_eq!(t.gpus.len(), 1);
    assert!(t.gpus[0].sm_count > 0);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("gpu.sqlite");
    result.live.save(&out).expect("save");
    let back = sightline::loader::load(&out, &mut |_| {}, &AtomicBool::new(false)).expect("load");
    assert_eq!(back.event_count(), t.event_count());
}

/// How fast a capture writes what CUPTI hands over (`--ignored`, a benchmark):
/// the streams benchmark's real records, many times over, in batches as
/// CUPTI's buffers bring them. `SIGHTLINE_COPIES` copies (200). With
/// `SIGHTLINE_LOADS_EVERY_MS` set, also with snapshots loaded meanwhile on
/// another thread, that many ms from one load's start to the next as a live
/// capture's publisher does: with the writer checkpointing (SQLite's default)
/// and with the loading thread checkpointing after each load (the capture's
/// way), each of the three in turn, twice. `SIGHTLINE_KERNELS_ONLY` set: a
/// batch is as many kernels (the dump's, over and over), as a CUDA graph's
/// replay brings. `SIGHTLINE_DUMP=sync-timing`: that benchmark's records
/// (a range per iteration) instead of the streams benchmark's.
#[test]
#[ignore]
fn writer_throughput() {
    let name = std::env::var("SIGHTLINE_DUMP").unwrap_or_else(|_| "streams".into());
    let mut dump = read_dump(&fixture(&format!("capture/{name}.rec"))).expect("read dump");
    if std::env::var_os("SIGHTLINE_KERNELS_ONLY").is_some() {
        let kernels: Vec<_> = (dump.records.iter())
            .filter(|r| matches!(r, sightline::capture::records::Record::Kernel(_)))
            .cloned()
            .collect();
        dump.records = kernels
            .iter()
            .cycle()
            .take(dump.records.len())
            .cloned()
            .collect();
    }
    let copies: usize = std::env::var("SIGHTLINE_COPIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let loads_every = std::env::var("SIGHTLINE_LOADS_EVERY_MS")
        .ok()
        .and_then(|n| n.parse().ok())
        .map(Duration::from_millis);
    let ways: &[(&str, Option<bool>)] = match loads_every {
        None => &[("alone", None)],
        Some(_) => &[
            ("alone", None),
            ("loads beside, the writer checkpoints", Some(false)),
            ("loads beside, the loads checkpoint", Some(true)),
        ],
    };
    for _round in 0..if loads_every.is_some() { 2 } else { 1 } {
        for &(way, loads_checkpoint) in ways {
            let mut live = sightline::capture::dump::Dump {
                records: Vec::new(),
                started_ranges: dump.started_ranges.clone(),
            }
            .to_report(4242)
            .expect("report");
            let writing = Arc::new(AtomicBool::new(true));
            let loader = loads_checkpoint
                .zip(loads_every)
                .map(|(checkpoint, every)| {
                    live.leave_checkpoints_to_loads(checkpoint)
                        .expect("checkpoint mode");
                    let path = live.path().to_path_buf();
                    let writing = writing.clone();
                    std::thread::spawn(move || {
                        let mut carry = sightline::loader::Carry::default();
                        let checkpointer = checkpoint
                            .then(|| sightline::capture::live::Checkpointer::open(&path))
                            .flatten();
                        let mut loads = 0;
                        while writing.load(Ordering::Relaxed) {
                            let t = Instant::now();
                            sightline::loader::load_growing(&path, &mut carry).expect("a snapshot");
                            if let Some(checkpointer) = &checkpointer {
                                checkpointer.run();
                            }
                            loads += 1;
                            std::thread::sleep(every.saturating_sub(t.elapsed()));
                        }
                        loads
                    })
                });
            let t = Instant::now();
            for _ in 0..copies {
                live.append(&dump.records).expect("append");
            }
            let secs = t.elapsed().as_secs_f64();
            writing.store(false, Ordering::Relaxed);
            let loads = loader.map_or(0, |l| l.join().expect("loader"));
            let wal =
                std::fs::metadata(format!("{}-wal", live.path().display())).map_or(0, |m| m.len());
            let n = dump.records.len() * copies;
            println!(
                "{way}: {n} records in {:.0} ms: {:.0}k records/s ({} a batch); {loads} loads; \
                 WAL {:.0} MB",
                secs * 1e3,
                n as f64 / secs / 1e3,
                dump.records.len(),
                wal as f64 / 1e6,
            );
        }
    }
}

/// A working file leaves nothing behind when dropped, even while a reader
/// (a loading thread not yet ended) still has it open: not its WAL, not
/// its shared-memory index.
#[test]
fn a_dropped_working_file_leaves_nothing_behind() {
    let dump = read_dump(&fixture("capture/streams.rec")).expect("read dump");
    let live = dump.to_report(4242).expect("convert");
    let path = live.path().to_path_buf();
    sightline::loader::load_growing(&path, &mut Default::default()).expect("a snapshot");
    let still_open =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("a reader");
    still_open
        .query_row("SELECT count(*) FROM StringIds", [], |_| Ok(()))
        .expect("read");
    drop(live);
    drop(still_open);
    let name = path
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let left: Vec<String> = std::fs::read_dir(path.parent().expect("folder"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&name))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// The capture's writer keeps a batch's NVTX rows and writes them at the
/// batch's end (a range that ends in its batch, once). The rows are those it
/// wrote one record at a time: a mark with the data it had when it came, a
/// range with the data it had when it ended, an id used again in a batch a
/// range of its own, each start written once. (Found by a review: each of
/// these came out otherwise in the first version of the batching.)
mod nvtx_rows_of_a_batch {
    use sightline::capture::live::LiveReport;
    use sightline::capture::records::marker_flag::{END, INSTANTANEOUS, START};
    use sightline::capture::records::{MarkerDataRecord, MarkerPayload, MarkerRecord, Record};

    fn marker(flags: u32, timestamp: u64, id: u32) -> Record {
        Record::Marker(MarkerRecord {
            flags,
            timestamp,
            id,
            process_id: 4242,
            thread_id: 7,
            name: "n".into(),
            domain: String::new(),
        })
    }

    fn data(id: u32, color: u32) -> Record {
        Record::MarkerData(MarkerDataRecord {
            id,
            payload: Some(MarkerPayload::Int(color as i64)),
            color,
            category: 1,
        })
    }

    type Row = (i64, i64, Option<i64>, i64, Option<i64>);

    /// The NVTX rows (rowid, start, end, type, colour) written from `batches`.
    fn rows(batches: &[&[Record]], close: bool) -> Vec<Row> {
        let mut live = LiveReport::create(4242, "sightline", "test").expect("report");
        live.set_origin(0);
        for batch in batches {
            live.append(batch).expect("append");
        }
        if close {
            live.close_open_ranges().expect("close");
        }
        let conn = rusqlite::Connection::open(live.path()).expect("open");
        let mut stmt = conn
            .prepare(
                "SELECT rowid, start, \"end\", eventType, color FROM NVTX_EVENTS ORDER BY rowid",
            )
            .expect("select");
        stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows")
    }

    #[test]
    fn a_marks_data_that_came_before_it_is_written() {
        let batch = [data(1, 0xFF0000AA), marker(INSTANTANEOUS, 100, 1)];
        assert_eq!(
            rows(&[&batch], false),
            vec![(1, 100, None, 34, Some(0xFF0000AA))]
        );
    }

    #[test]
    fn a_marks_row_does_not_depend_on_where_batches_are_cut() {
        let (mark, later) = (marker(INSTANTANEOUS, 100, 1), data(1, 0xFF0000BB));
        assert_eq!(
            rows(&[&[mark.clone(), later.clone()]], false),
            rows(&[&[mark], &[later]], false)
        );
    }

    #[test]
    fn data_after_a_ranges_end_is_not_its() {
        let batch = [
            marker(START, 100, 1),
            marker(END, 200, 1),
            data(1, 0xFF0000CC),
        ];
        assert_eq!(rows(&[&batch], false), vec![(1, 100, Some(200), 59, None)]);
    }

    #[test]
    fn an_id_used_again_in_a_batch_keeps_both_ranges_and_their_data() {
        let batch = [
            marker(START, 100, 1),
            marker(END, 200, 1),
            marker(START, 300, 1),
            marker(END, 400, 1),
        ];
        assert_eq!(
            rows(&[&batch], false),
            vec![(1, 100, Some(200), 59, None), (2, 300, Some(400), 59, None)]
        );
        let batch = [
            marker(START, 100, 1),
            data(1, 0xFF0000A1),
            marker(END, 200, 1),
            marker(START, 300, 1),
            data(1, 0xFF0000B2),
        ];
        assert_eq!(
            rows(&[&batch], false),
            vec![
                (1, 100, Some(200), 59, Some(0xFF0000A1)),
                (2, 300, None, 59, Some(0xFF0000B2))
            ]
        );
    }

    #[test]
    fn a_second_start_of_an_open_id_writes_each_start_once() {
        let batch = [marker(START, 100, 1), marker(START, 300, 1)];
        assert_eq!(
            rows(&[&batch], true),
            vec![(1, 100, None, 59, None), (2, 300, None, 59, None)]
        );
    }
}
