//! Lessons (`assets/lessons/*.toml`): every bundled lesson reads and every
//! step's targets are found in its report (the rule, checked over the whole
//! directory, so a new lesson is tested as soon as it is added); a broken
//! lesson is an error naming the line, never a panic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::app::panels::lesson_panel::row_names;
use sightline::app::timeline::rows;
use sightline::lessons::{self, Lesson, LessonError, View};
use sightline::model::{EventKind, Trace};

fn lessons_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/lessons")
}

fn load_report(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// A lesson written in a test, looked up as if it sat in assets/lessons (so
/// `report = "sync_timing.sqlite"` finds the bundled report).
fn parse(text: &str) -> Result<Lesson, LessonError> {
    lessons::parse(text, &lessons_dir().join("test_lesson.toml"))
}

fn parse_err(text: &str) -> LessonError {
    match parse(text) {
        Ok(_) => panic!("the lesson should not parse:\n{text}"),
        Err(e) => e,
    }
}

/// The start and end of an event.
fn span_of(trace: &Trace, kind: EventKind, index: u32) -> (i64, i64) {
    let spans = match kind {
        EventKind::Api => &trace.cuda_api.spans,
        EventKind::Osrt => &trace.osrt.spans,
        EventKind::Nvtx => &trace.nvtx.spans,
        EventKind::Kernel => &trace.kernels.spans,
        EventKind::Memcpy => &trace.memcpys.spans,
        EventKind::Memset => &trace.memsets.spans,
        EventKind::Sync => &trace.syncs.spans,
        EventKind::Graph => &trace.graph_execs.spans,
    };
    (spans.start[index as usize], spans.end(index as usize))
}

#[test]
fn every_bundled_lesson_reads_and_every_step_resolves_in_its_report() {
    let all = lessons::load_dir(&lessons_dir());
    assert!(all.len() >= 5, "five lessons at least, found {}", all.len());
    let mut reports: HashMap<PathBuf, Trace> = HashMap::new();
    for lesson in all {
        let lesson = lesson.unwrap_or_else(|e| panic!("{e}"));
        assert!(lesson.steps.len() >= 3, "{}: too short", lesson.title);
        for (i, step) in lesson.steps.iter().enumerate() {
            let trace = reports
                .entry(step.report.clone())
                .or_insert_with(|| load_report(&step.report));
            let names = row_names(&rows::build(trace));
            let shown =
                lessons::resolve(&lesson, i, trace, &names).unwrap_or_else(|e| panic!("{e}"));
            let where_ = format!("{}, step {} (line {})", lesson.title, i + 1, step.line);
            assert!(step.text.len() > 40, "{where_}: a real explanation");
            // A selected event is on screen: inside the span the step shows.
            if let (Some(ev), Some(view)) = (shown.select, shown.view) {
                let (s, e) = span_of(trace, ev.kind, ev.index);
                let (lo, hi) = match view {
                    View::All => trace.info.time_range,
                    View::Span(a, b) | View::Around(a, b) => (a, b),
                };
                assert!(
                    lo <= s && e <= hi,
                    "{where_}: the selection [{s}, {e}] is outside the view [{lo}, {hi}]"
                );
            }
            if step.kernel_panel {
                assert_eq!(shown.select.map(|e| e.kind), Some(EventKind::Kernel));
            }
        }
    }
}

#[test]
fn bad_toml_names_its_line() {
    let e = parse_err(
        "title = \"t\"\nreport = \"sync_timing.sqlite\"\n\n[[step]]\ntext = \"unclosed\n",
    );
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.to_string().contains("line 5"), "{e}");
}

#[test]
fn unknown_panel_names_the_step_and_its_line() {
    let e = parse_err(
        r#"title = "t"
report = "sync_timing.sqlite"

[[step]]
text = "The first step says something."

[[step]]
text = "The second step opens a panel that does not exist."
panels = ["findings",
          "kernal"]
"#,
    );
    assert_eq!(e.line, Some(10), "{e}");
    assert!(e.message.contains("step 2"), "{e}");
    assert!(e.message.contains("\"kernal\""), "{e}");
    assert!(e.message.contains("findings, kernel") || e.message.contains("kernel, findings"));
}

#[test]
fn a_step_without_text_is_named_with_its_line() {
    let e = parse_err(
        r#"title = "t"
report = "sync_timing.sqlite"

[[step]]
text = "One."

[[step]]
title = "No text here"
zoom = "all"
"#,
    );
    assert!(e.message.contains("step 2 has no text"), "{e}");
    assert!(
        matches!(e.line, Some(7) | Some(8)),
        "the line of step 2's table: {e}"
    );
}

#[test]
fn unknown_keys_and_reports_name_their_lines() {
    let e = parse_err(
        "title = \"t\"\nreport = \"sync_timing.sqlite\"\n[[step]]\ntext = \"x\"\nzom = \"all\"\n",
    );
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.message.contains("zom"), "{e}");

    let e =
        parse_err("title = \"t\"\nreport = \"no_such_report.sqlite\"\n[[step]]\ntext = \"x\"\n");
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("no_such_report.sqlite"), "{e}");

    let e = parse_err(
        "title = \"t\"\nreport = \"sync_timing.sqlite\"\n[[step]]\ntext = \"x\"\nzoom = \"everything\"\n",
    );
    assert_eq!(e.line, Some(5), "{e}");

    let e = parse_err(
        "title = \"t\"\nreport = \"sync_timing.sqlite\"\n[[step]]\ntext = \"x\"\n\nselect = { kernel = \"add2\", nvtx = \"no-sync\" }\n",
    );
    assert_eq!(e.line, Some(6), "{e}");
    assert!(e.message.contains("not several"), "{e}");

    let e = parse_err("title = \"t\"\nreport = \"sync_timing.sqlite\"\n");
    assert!(e.message.contains("no steps"), "{e}");
}

#[test]
fn a_kernel_panel_needs_a_selected_kernel() {
    let e = parse_err(
        "title = \"t\"\nreport = \"sync_timing.sqlite\"\n[[step]]\ntext = \"x\"\nselect = { nvtx = \"no-sync\" }\npanels = [\"kernel\"]\n",
    );
    assert_eq!(e.line, Some(6), "{e}");
}

/// Targets that are not in the report: an error naming the step, its line
/// and what was looked for, not a panic.
#[test]
fn targets_missing_from_the_report_are_errors_with_lines() {
    let lesson = parse(
        r#"title = "t"
report = "sync_timing.sqlite"

[[step]]
text = "A range that this report does not have."
zoom = { nvtx = "no-such-range" }

[[step]]
text = "The 11th timed iteration of no-sync (there are 10)."
select = { nvtx = "timed-iteration", within = "no-sync", occurrence = 11 }

[[step]]
text = "A row that is not there."
hide = ["OS runtime", "Stream 99"]

[[step]]
text = "The last timed iteration of no-sync, found by counting from the end."
select = { nvtx = "timed-iteration", within = "no-sync", occurrence = -1 }
"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let trace = load_report(&lesson.steps[0].report);
    let names = row_names(&rows::build(&trace));

    let e = lessons::resolve(&lesson, 0, &trace, &names).expect_err("no such range");
    assert_eq!(e.line, Some(6), "{e}");
    assert!(e.message.contains("step 1"), "{e}");
    assert!(e.message.contains("no-such-range"), "{e}");

    let e = lessons::resolve(&lesson, 1, &trace, &names).expect_err("only 10");
    assert_eq!(e.line, Some(10), "{e}");
    assert!(e.message.contains("only 10"), "{e}");

    let e = lessons::resolve(&lesson, 2, &trace, &names).expect_err("no such row");
    assert_eq!(e.line, Some(14), "{e}");
    assert!(e.message.contains("Stream 99"), "{e}");

    // -1 is the tenth of ten, the last one in time.
    let last = lessons::resolve(&lesson, 3, &trace, &names)
        .unwrap_or_else(|e| panic!("{e}"))
        .select
        .expect("selected");
    let no_sync = trace
        .nvtx
        .spans
        .name
        .iter()
        .position(|&n| trace.name(n) == "no-sync")
        .expect("no-sync in the report");
    let iterations: Vec<usize> = (0..trace.nvtx.spans.len())
        .filter(|&i| {
            trace.name(trace.nvtx.spans.name[i]) == "timed-iteration"
                && trace.nvtx.spans.start[i] >= trace.nvtx.spans.start[no_sync]
                && trace.nvtx.spans.end(i) <= trace.nvtx.spans.end(no_sync)
        })
        .collect();
    assert_eq!(iterations.len(), 10);
    let latest = iterations
        .iter()
        .copied()
        .max_by_key(|&i| trace.nvtx.spans.start[i])
        .expect("ten");
    assert_eq!(last.index as usize, latest);
}

/// What `within` means for GPU work: launched from inside the range. After
/// the 10 warm-up launches of `no-sync`, its 13th add2_kernel is the one of
/// its third timed iteration.
#[test]
fn gpu_work_within_a_range_is_the_work_launched_from_it() {
    let lesson = parse(
        r#"title = "t"
report = "sync_timing.sqlite"
[[step]]
text = "The 13th kernel launched inside no-sync: its third timed iteration's."
select = { kernel = "add2", within = "no-sync", occurrence = 13 }
zoom = { nvtx = "timed-iteration", within = "no-sync", occurrence = 3, with_gpu_work = true }
"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let trace = load_report(&lesson.steps[0].report);
    let names = row_names(&rows::build(&trace));
    let shown = lessons::resolve(&lesson, 0, &trace, &names).unwrap_or_else(|e| panic!("{e}"));
    let kernel = shown.select.expect("a kernel");
    assert_eq!(kernel.kind, EventKind::Kernel);
    let (ks, ke) = span_of(&trace, EventKind::Kernel, kernel.index);
    let Some(View::Span(lo, hi)) = shown.view else {
        panic!("a span: {:?}", shown.view)
    };
    // The range widened to its GPU work holds the kernel, and the kernel
    // ends after the range itself (the lesson's point about no-sync).
    assert!(lo <= ks && ke <= hi, "[{ks}, {ke}] in [{lo}, {hi}]");
    let third = trace
        .nvtx
        .spans
        .start
        .iter()
        .zip(trace.nvtx.spans.ends())
        .filter(|&(&s, e)| s == lo && e < ke)
        .count();
    assert_eq!(
        third, 1,
        "the range starts the view and ends before its kernel"
    );
}

#[test]
fn a_capture_is_a_benchmark_with_parameters_checked_like_the_command_line() {
    let head = "title = \"t\"\nreport = \"sync_timing_capture.sqlite\"\n[[step]]\ntext = \"x\"\n";
    let lesson = parse(&format!("{head}capture = \"sync-timing\"\n")).expect("a name alone");
    let capture = lesson.steps[0].capture.as_ref().expect("a capture");
    assert_eq!(capture.benchmark.name, "sync-timing");
    assert_eq!(capture.params.get("iterations"), Some("10"), "defaults");

    let lesson = parse(&format!(
        "{head}capture = {{ benchmark = \"sync-timing\", iterations = 4, elements = \"64K\" }}\n"
    ))
    .expect("a table");
    let params = &lesson.steps[0].capture.as_ref().expect("a capture").params;
    assert_eq!(params.get("iterations"), Some("4"));
    assert_eq!(params.get("elements"), Some("64K"));

    // Each mistake names the step's line and what is wrong.
    for (bad, says) in [
        ("capture = \"no-such-benchmark\"", "no-such-benchmark"),
        ("capture = { iterations = 4 }", "benchmark"),
        (
            "capture = { benchmark = \"sync-timing\", iteratoins = 4 }",
            "iteratoins",
        ),
        (
            "capture = { benchmark = \"sync-timing\", iterations = 0 }",
            "iterations",
        ),
        (
            "capture = { benchmark = \"sync-timing\", iterations = [1] }",
            "string or a number",
        ),
    ] {
        let e = parse_err(&format!("{head}{bad}\n"));
        assert_eq!(e.line, Some(5), "{bad}: {e}");
        assert!(e.message.contains(says), "{bad}: {e}");
    }
}
