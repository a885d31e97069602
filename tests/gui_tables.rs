//! The viewer's tables, driven through the real window (egui_kittest +
//! AccessKit): the range rule toggle, thousands separators, and Copy / Save
//! CSV, whose text must be what `sightline stats` prints.

mod common;
use common::{fixture, load};

use std::process::Command;

use eframe::egui::{self, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::{
    Cell, RangeRule, Report, Table, TimeRange, compute, compute_for_kernel, compute_in,
};
use sightline::app::SightlineApp;
use sightline::app::panels::range_stats::REPORTS;
use sightline::model::Trace;

fn harness(trace: Trace) -> Harness<'static, SightlineApp> {
    let app = SightlineApp::with_trace(trace);
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 1000.0))
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    h.run_steps(3);
    h
}

/// Parses delimited text as a spreadsheet does: fields split on `delimiter`,
/// `"…"` quoting with `""` for a quote, one record per line.
fn parse(text: &str, delimiter: char) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == delimiter && !quoted => record.push(std::mem::take(&mut field)),
            '\n' if !quoted => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            c => field.push(c),
        }
    }
    assert!(
        field.is_empty() && record.is_empty(),
        "text ends with a line break"
    );
    records
}

/// Checks that `records` are `table`: its headings, then each row's cells
/// as `sightline stats` prints them in CSV (raw numbers, no separators).
fn assert_is_table(records: &[Vec<String>], table: &Table) {
    assert_eq!(records[0], table.columns, "headings");
    assert_eq!(records.len() - 1, table.rows.len(), "rows");
    for (record, row) in records[1..].iter().zip(&table.rows) {
        let cells: Vec<String> = row.iter().map(Cell::to_string).collect();
        assert_eq!(record, &cells);
        for (text, cell) in record.iter().zip(row) {
            if let Some(v) = cell.as_f64() {
                assert!(!text.contains(','), "no separators in {text}");
                let parsed: f64 = text.parse().expect("a number");
                // Printed values are rounded as nsys rounds them.
                assert!(
                    (parsed - v).abs() <= 0.05 + v.abs() * 1e-12,
                    "{text} vs {v}"
                );
            }
        }
    }
}

/// What `sightline stats FILE --report R --range A:B [--overlapping] --format csv` prints.
fn cli_csv(file: &str, report: Report, range: TimeRange, rule: RangeRule) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sightline"));
    command.args([
        "stats",
        &fixture(file).display().to_string(),
        "--report",
        report.name(),
        "--range",
        &format!("{}:{}", range.start, range.end),
        "--format",
        "csv",
    ]);
    if rule == RangeRule::Overlapping {
        command.arg("--overlapping");
    }
    let out = command.output().expect("runs sightline");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// How long a copy or save may take on a loaded test machine.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(20);

/// Steps frames until the range panel's copy or save is done.
fn wait_for_export(h: &mut Harness<'_, SightlineApp>) {
    let since = std::time::Instant::now();
    // The click starts the export in the frame that sees it.
    h.step();
    while since.elapsed() < PATIENCE {
        h.step();
        if !h.state().doc().expect("doc").stats.export.is_pending() {
            h.run_steps(2);
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    panic!("the export did not finish");
}

/// Scrolls the `nth` Copy button into view and clicks it.
fn click_copy(h: &mut Harness<'_, SightlineApp>, nth: usize) {
    h.query_all_by_label("Copy")
        .nth(nth)
        .expect("a Copy button")
        .scroll_to_me();
    h.run_steps(3);
    h.query_all_by_label("Copy")
        .nth(nth)
        .expect("a Copy button")
        .click();
}

/// Steps frames until a Copy lands on the clipboard; returns its text.
fn copied_text(h: &mut Harness<'_, SightlineApp>) -> String {
    let since = std::time::Instant::now();
    while since.elapsed() < PATIENCE {
        h.step();
        let copied = h
            .output()
            .platform_output
            .commands
            .iter()
            .find_map(|c| match c {
                egui::OutputCommand::CopyText(t) => Some(t.clone()),
                _ => None,
            });
        if let Some(text) = copied {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    panic!("nothing was copied");
}

/// A 1 ms range inside streams' longest `poll` (349 ms, one thread), where
/// no other `poll` runs: no call starts in it, one call covers it.
fn range_inside_the_long_poll(trace: &Trace) -> TimeRange {
    let os = &trace.osrt.spans;
    let poll = trace.strings.find("poll").expect("streams has poll calls");
    let longest = (0..os.len())
        .filter(|&i| os.name[i] == poll)
        .max_by_key(|&i| os.end(i) - os.start[i])
        .expect("a poll");
    let (start, end) = (os.start[longest], os.end(longest));
    (1..10)
        .map(|k| start + (end - start) * k / 10)
        .map(|from| TimeRange {
            start: from,
            end: from + 1_000_000,
        })
        .find(|r| {
            (0..os.len()).all(|i| {
                i == longest || os.name[i] != poll || os.end(i) <= r.start || os.start[i] >= r.end
            })
        })
        .expect("a stretch of the long poll alone")
}

fn has_link(h: &Harness<'_, SightlineApp>, name: &str) -> bool {
    let name = name.to_string();
    h.query_all_by(move |n| {
        n.role() == egui::accesskit::Role::Link && n.label().as_deref() == Some(&name)
    })
    .next()
    .is_some()
}

fn osrt_tab() -> usize {
    REPORTS
        .iter()
        .position(|&r| r == Report::OsrtSum)
        .expect("the panel shows osrt_sum")
}

#[test]
fn the_rule_toggle_counts_a_long_call_only_when_overlapping() {
    let trace = load("streams.sqlite");
    let range = range_inside_the_long_poll(&trace);
    let mut h = harness(trace);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.select_range(range.start, range.end);
        doc.stats.wait();
        doc.stats.tab = osrt_tab();
    }
    h.run_steps(3);
    // Starting in range (the default): the poll started 100+ ms earlier.
    assert!(
        h.query_all_by_label_contains("events that start in the range")
            .next()
            .is_some()
    );
    assert!(!has_link(&h, "poll"), "no poll starts in the range");
    {
        let doc = h.state().doc().expect("doc");
        assert_eq!(doc.stats.rule, RangeRule::StartsInside);
        assert_eq!(
            doc.stats.table(Report::OsrtSum),
            Some(&compute(&doc.trace, Report::OsrtSum, Some(range)))
        );
    }

    h.get_by_label("overlapping (clipped)").click();
    h.run_steps(2);
    h.state_mut().doc_mut().expect("doc").stats.wait();
    h.run_steps(3);
    assert!(has_link(&h, "poll"), "the poll overlaps the range");
    assert!(
        h.query_all_by_label_contains("its duration clipped to the range")
            .next()
            .is_some()
    );
    // The poll's total is the range's length, shown with separators.
    assert!(h.query_all_by_label("1,000,000").next().is_some());
    let doc = h.state().doc().expect("doc");
    assert_eq!(doc.stats.rule, RangeRule::Overlapping);
    let table = doc.stats.table(Report::OsrtSum).expect("osrt table");
    assert_eq!(
        Ok(table.clone()),
        compute_in(
            &doc.trace,
            Report::OsrtSum,
            Some(range),
            RangeRule::Overlapping
        )
    );
    let name = table
        .columns
        .iter()
        .position(|c| c == "Name")
        .expect("Name");
    let poll = table
        .rows
        .iter()
        .find(|r| r[name].to_string() == "poll")
        .expect("a poll row");
    assert_eq!(poll[1], Cell::Int(1_000_000));
    assert_eq!(poll[2], Cell::Int(1));
    assert_eq!(
        doc.stats.cli_range(doc.selection().range),
        Some(format!(
            "--range {}:{} --overlapping",
            range.start, range.end
        ))
    );

    // Back to the default rule: the numbers are the CLI's again.
    h.get_by_label("starting in range").click();
    h.run_steps(2);
    h.state_mut().doc_mut().expect("doc").stats.wait();
    h.run_steps(3);
    assert!(!has_link(&h, "poll"));
}

#[test]
fn copy_and_save_give_the_stats_csv_of_the_table_shown() {
    let file = "streams.sqlite";
    let trace = load(file);
    // The middle half of the session: many calls, some cut by its ends.
    let (first, last) = trace.info.time_range;
    let range = TimeRange {
        start: first + (last - first) / 4,
        end: last - (last - first) / 4,
    };
    let mut h = harness(trace);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.stats.set_rule(RangeRule::Overlapping, None);
        doc.select_range(range.start, range.end);
        doc.stats.wait();
        doc.stats.tab = osrt_tab();
    }
    h.run_steps(3);
    let expected = compute_in(
        &h.state().doc().expect("doc").trace,
        Report::OsrtSum,
        Some(range),
        RangeRule::Overlapping,
    )
    .expect("osrt_sum takes the rule");
    assert!(expected.rows.len() > 1, "several calls overlap the range");

    // Copy: tab-separated, the table's headings and raw numbers.
    h.get_by_label("Copy").click();
    let copied = copied_text(&mut h);
    assert_is_table(&parse(&copied, '\t'), &expected);

    // Save CSV: the file is what `sightline stats --format csv` prints.
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("osrt in range.csv");
    h.get_by_label("Save CSV…").click();
    h.run_steps(2);
    h.get_by_label("Save as").click();
    h.run_steps(2);
    h.get_by_label("Save as")
        .type_text(&path.display().to_string());
    h.run_steps(2);
    h.get_by_label("Save").click();
    wait_for_export(&mut h);
    let status = h.state().doc().expect("doc").stats.export.status.clone();
    assert!(
        matches!(&status, Some(Ok(s)) if s.starts_with("saved")),
        "{status:?}"
    );
    let saved = std::fs::read_to_string(&path).expect("the CSV was written");
    assert_is_table(&parse(&saved, ','), &expected);
    assert_eq!(
        saved,
        cli_csv(file, Report::OsrtSum, range, RangeRule::Overlapping)
    );
    // Nothing else was left in the folder (the file was written aside, then renamed).
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
    assert!(
        h.query_all_by_label_contains("saved ").next().is_some(),
        "the panel says where it saved"
    );
}

#[test]
fn a_save_to_a_bad_path_says_why() {
    let trace = load("sync_timing.sqlite");
    let (first, last) = trace.info.time_range;
    let mut h = harness(trace);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.select_range(first, last + 1);
        doc.stats.wait();
    }
    h.run_steps(3);
    h.get_by_label("Save CSV…").click();
    h.run_steps(2);
    h.get_by_label("Save as").click();
    h.run_steps(2);
    h.get_by_label("Save as")
        .type_text("/nonexistent-folder/for/sure/t.csv");
    h.run_steps(2);
    h.get_by_label("Save").click();
    wait_for_export(&mut h);
    let status = h.state().doc().expect("doc").stats.export.status.clone();
    assert!(
        matches!(&status, Some(Err(s)) if s.contains("cannot write /nonexistent-folder")),
        "{status:?}"
    );
    assert!(
        h.query_all_by_label_contains("cannot write")
            .next()
            .is_some(),
        "the error is shown"
    );
}

#[test]
fn range_tables_show_numbers_with_separators() {
    let trace = load("sync_timing.sqlite");
    let (first, last) = trace.info.time_range;
    let whole = TimeRange {
        start: first,
        end: last + 1,
    };
    let kernels = compute(&trace, Report::CudaGpuKernSum, Some(whole));
    let mut h = harness(trace);
    {
        let doc = h.state_mut().doc_mut().expect("doc");
        doc.select_range(whole.start, whole.end);
        doc.stats.wait();
        doc.stats.tab = REPORTS
            .iter()
            .position(|&r| r == Report::CudaGpuKernSum)
            .expect("kernel tab");
    }
    h.run_steps(3);
    let total = kernels.rows[0][1].clone();
    let Cell::Int(v) = total else {
        panic!("an integer total")
    };
    assert!(v >= 1000, "a total with thousands: {v}");
    let shown = total.grouped();
    assert!(shown.contains(','), "{shown}");
    assert!(
        h.query_all_by_label(&shown).next().is_some(),
        "{shown} is shown"
    );
    assert!(h.query_all_by_label(&v.to_string()).next().is_none());
}

#[test]
fn the_kernel_panel_copies_its_instances_as_cuda_gpu_trace_rows() {
    let trace = load("sync_timing.sqlite");
    let k = &trace.kernels.spans;
    let name = k.name[0];
    let kernel_name = trace.name(name).to_string();
    let mut h = harness(trace);
    h.state_mut().doc_mut().expect("doc").open_kernel(name);
    h.run_steps(4);
    let expected = {
        let trace = &h.state().doc().expect("doc").trace;
        compute_for_kernel(trace, Report::CudaGpuTrace, name, None).expect("a per-kernel report")
    };
    // The same rows as the whole report's, for this kernel.
    let whole = compute(
        &h.state().doc().expect("doc").trace,
        Report::CudaGpuTrace,
        None,
    );
    let of_kernel: Vec<_> = whole
        .rows
        .iter()
        .filter(|r| r.last().map(Cell::to_string).as_deref() == Some(kernel_name.as_str()))
        .cloned()
        .collect();
    assert_eq!(expected.rows, of_kernel);
    assert!(expected.rows.len() > 1);

    // Configurations first, then instances.
    let copy_buttons = h.query_all_by_label("Copy").count();
    assert_eq!(copy_buttons, 2, "one Copy per kernel table");
    // The panel is docked under the timeline: its buttons may need a scroll to be seen.
    click_copy(&mut h, 1);
    let copied = copied_text(&mut h);
    assert_is_table(&parse(&copied, '\t'), &expected);

    click_copy(&mut h, 0);
    let copied = copied_text(&mut h);
    let configs = {
        let trace = &h.state().doc().expect("doc").trace;
        compute_for_kernel(trace, Report::KernelLaunchSum, name, None).expect("per-kernel")
    };
    assert_is_table(&parse(&copied, '\t'), &configs);
    assert!(configs.rows.iter().all(|r| r[0].to_string() == kernel_name));
}
