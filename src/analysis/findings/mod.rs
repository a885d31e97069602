//! Findings: synchronization and timing mistakes (and nsys's rule findings),
//! each with the span it concerns, the NVTX range it is in, the events that
//! prove it, a message with the numbers and a short fix.
//!
//! No UI here: [`analyze`] runs on a loaded trace, off any UI thread, and can
//! be cancelled. Thresholds are the named fields of [`Thresholds`].
//!
//! # Time ranges
//! Detectors always look at the whole trace, so a range never cuts a pattern
//! in two; a finding belongs to a range when its start lies in `[start, end)`,
//! the rule `sightline stats --range` uses for events.

mod api_errors;
mod context;
mod entries;
mod finding;
mod iterations;
mod loops;
mod nsys_rules;
mod timing;
mod warm_up;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use crate::analysis::cancel::Cancelled;
pub(crate) use crate::analysis::cancel::check;
/// Durations in messages; the one formatter of the analyses, at its old path.
pub use crate::analysis::format::human_ns;
use crate::analysis::idle::Attribution;
use crate::analysis::rules::sorted_ops::SortedOps;
use crate::analysis::table::{Cell, Table};
use crate::model::TimeRange;
use crate::model::Trace;
use context::{Context, IdleFacts, Summaries};
pub use entries::{Entry, Iterations, entries, entries_in, entries_table};
pub use finding::{Finding, FindingKind, RangeWork, Severity, Thresholds};
pub use timing::RangeTiming;

/// Runs every detector over `trace` and returns the findings that start in
/// `range` (all without one), sorted by start, then kind.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use sightline::analysis::findings::{FindingKind, Thresholds, analyze};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sync_timing.sqlite");
/// let trace = sightline::loader::load(path.as_ref(), &mut |_| {}, &AtomicBool::new(false))?;
/// let found = analyze(&trace, None, &Thresholds::default(), &AtomicBool::new(false)).unwrap();
/// assert!(found.iter().any(|f| f.kind == FindingKind::RangeEndsBeforeGpuWork));
/// # Ok::<(), sightline::loader::LoadError>(())
/// ```
pub fn analyze(
    trace: &Trace,
    range: Option<TimeRange>,
    thresholds: &Thresholds,
    cancel: &AtomicBool,
) -> Result<Vec<Finding>, Cancelled> {
    Ok(analyze_with_range_work(trace, range, thresholds, cancel)?.0)
}

/// [`analyze`], and [`range_gpu_spans`] from the same pass over the ranges:
/// what a view shows (each range's GPU work is collected once, not once
/// more for the bars under the ranges).
pub fn analyze_with_range_work(
    trace: &Trace,
    range: Option<TimeRange>,
    thresholds: &Thresholds,
    cancel: &AtomicBool,
) -> Result<(Vec<Finding>, Vec<RangeWork>), Cancelled> {
    let (found, range_work, _) = analyze_grown(trace, None, range, thresholds, cancel)?;
    Ok((found, range_work))
}

/// What a run of the engine on a growing report (a capture's snapshots)
/// keeps for the next run, which extends it rather than making it again:
/// the idle attribution (a whole report's operations merged and its gaps'
/// threads walked) and the GPU operations sorted for nsys's gap and
/// utilization rules.
#[derive(Clone, Debug)]
pub struct Carried {
    /// Shared with the timeline's "GPU idle — why" row, which shows it
    /// rather than making one of its own; the next run extends a copy
    /// while the row holds it (its full blocks of gaps shared, not copied).
    idle: Arc<Attribution>,
    /// The idle summaries the findings' messages were worded from.
    summaries: Summaries,
    ops: SortedOps,
}

impl Carried {
    pub fn idle(&self) -> &Arc<Attribution> {
        &self.idle
    }
}

/// [`analyze_with_range_work`] of a report that grows: `earlier` is what
/// the last run carried, on an earlier state of the report. The findings
/// are those of a run from nothing; what this run carries is returned for
/// the next.
pub fn analyze_grown(
    trace: &Trace,
    earlier: Option<Carried>,
    range: Option<TimeRange>,
    thresholds: &Thresholds,
    cancel: &AtomicBool,
) -> Result<(Vec<Finding>, Vec<RangeWork>, Carried), Cancelled> {
    analyze_grown_telling(trace, earlier, range, thresholds, cancel, &|_| {})
}

/// [`analyze_grown`], telling `attributed` the idle attribution as soon as
/// it is made, before the detectors that judge it run (a view that shows
/// the gaps need not wait for the findings).
pub fn analyze_grown_telling(
    trace: &Trace,
    earlier: Option<Carried>,
    range: Option<TimeRange>,
    thresholds: &Thresholds,
    cancel: &AtomicBool,
    attributed: &(dyn Fn(&Arc<Attribution>) + Sync),
) -> Result<(Vec<Finding>, Vec<RangeWork>, Carried), Cancelled> {
    check(cancel)?;
    let (earlier_idle, earlier_ops) = match earlier {
        Some(c) => (
            Some((Arc::unwrap_or_clone(c.idle), c.summaries)),
            Some(c.ops),
        ),
        None => (None, None),
    };
    // The idle-gap attribution is the longest single pass; the detectors that
    // do not judge idle time run beside it, on a second thread.
    let (ctx, idle, ops, mut found) = std::thread::scope(|s| {
        let idle = s.spawn(|| {
            let facts = IdleFacts::new(trace, earlier_idle, cancel)?;
            attributed(&facts.attribution);
            Ok(facts)
        });
        let ctx = Context::new(trace, cancel)?;
        let mut found = Vec::new();
        timing::waits_on_earlier_work(&ctx, thresholds, &mut found, cancel)?;
        warm_up::warm_up_included(&ctx, thresholds, &mut found, cancel)?;
        api_errors::api_errors(&ctx, &mut found, cancel)?;
        let ops = nsys_rules::rule_findings(&ctx, earlier_ops, thresholds, &mut found, cancel)?;
        let idle = crate::threads::joined(idle)?;
        Ok::<_, Cancelled>((ctx, idle, ops, found))
    })?;
    let range_work = timing::range_work_pass(&ctx, &idle, thresholds, &mut found, cancel)?;
    loops::sync_in_loop(&ctx, &idle, thresholds, &mut found, cancel)?;
    loops::alloc_in_loop(&ctx, &idle, thresholds, &mut found, cancel)?;
    if let Some(r) = range {
        found.retain(|f| f.start >= r.start && f.start < r.end);
    }
    found.sort_by_key(|a| (a.start, a.kind, a.end));
    let (idle, summaries) = idle.into_carried();
    let carried = Carried {
        idle,
        summaries,
        ops,
    };
    Ok((found, range_work, carried))
}

/// The timing facts of the NVTX range in row `nvtx_row` of `Trace::nvtx`, to
/// explain a verdict, or the lack of one (see [`RangeTiming`]).
pub fn range_timing(trace: &Trace, nvtx_row: u32) -> Option<RangeTiming> {
    let ctx = Context::new(trace, &AtomicBool::new(false)).ok()?;
    timing::range_timing(&ctx, nvtx_row)
}

/// The span of the GPU work each NVTX range launched, for every ended range
/// that launched any: `(row in Trace::nvtx, first start, last end)`, in range
/// order. A view draws it under each range, so a range that stops before its
/// work shows it, finding or not.
pub fn range_gpu_spans(trace: &Trace, cancel: &AtomicBool) -> Result<Vec<RangeWork>, Cancelled> {
    let ctx = Context::new(trace, cancel)?;
    timing::range_gpu_spans(&ctx, cancel)
}

/// The findings as a table: kind, severity, start, end, range, message.
pub fn to_table(findings: &[Finding]) -> Table {
    Table {
        columns: [
            "Kind",
            "Severity",
            "Start (ns)",
            "End (ns)",
            "Range",
            "Message",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows: findings
            .iter()
            .map(|f| {
                vec![
                    Cell::Text(f.kind.name().to_string()),
                    Cell::Text(f.severity.name().to_string()),
                    Cell::Int(f.start),
                    Cell::Int(f.end),
                    f.range.clone().map_or(Cell::Empty, Cell::Text),
                    Cell::Text(f.message.clone()),
                ]
            })
            .collect(),
    }
}

/// A JSON string literal (RFC 8259 escaping).
fn json_string(out: &mut String, text: &str) {
    out.push('"');
    // Stretches that need no escape are copied whole (a report's 100k
    // findings are mostly such text: char by char was a tenth of
    // `analyze --format json`).
    // What is escaped is ASCII: no byte of a longer UTF-8 character is
    // below 0x80, so the stretches cut at char boundaries.
    let mut plain = 0;
    for (at, b) in text.bytes().enumerate() {
        let escaped = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            b if b < 0x20 => "",
            _ => continue,
        };
        out.push_str(&text[plain..at]);
        match escaped {
            "" => out.push_str(&format!("\\u{b:04x}")),
            e => out.push_str(e),
        }
        plain = at + 1;
    }
    out.push_str(&text[plain..]);
    out.push('"');
}

/// One finding as one line of JSON: kind, severity, start, end, range (or
/// null), message, fix, events (`[{"kind":"kernel","index":3}, ...]`).
pub fn to_json(f: &Finding) -> String {
    json_with(f, None)
}

/// [`to_json`] of a finding of one rank of a job: `"rank"` (a string) first.
pub fn to_json_of_rank(f: &Finding, rank: &str) -> String {
    json_with(f, Some(rank))
}

fn json_with(f: &Finding, rank: Option<&str>) -> String {
    let mut out = json_fields(f, rank, &f.message);
    out.push('}');
    out
}

/// A finding's fields, `{` and all but the closing `}`, with `message`.
fn json_fields(f: &Finding, rank: Option<&str>, message: &str) -> String {
    let mut out = String::from("{");
    if let Some(rank) = rank {
        out.push_str("\"rank\":");
        json_string(&mut out, rank);
        out.push(',');
    }
    out.push_str("\"kind\":");
    json_string(&mut out, f.kind.name());
    out.push_str(",\"severity\":");
    json_string(&mut out, f.severity.name());
    out.push_str(&format!(
        ",\"start\":{},\"end\":{},\"range\":",
        f.start, f.end
    ));
    match &f.range {
        Some(r) => json_string(&mut out, r),
        None => out.push_str("null"),
    }
    out.push_str(",\"message\":");
    json_string(&mut out, message);
    out.push_str(",\"fix\":");
    json_string(&mut out, f.fix);
    out.push_str(",\"events\":[");
    for (i, e) in f.events.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"kind\":\"{}\",\"index\":{}}}",
            e.kind.name(),
            e.index
        ));
    }
    out.push(']');
    out
}

/// One entry as one line of JSON: its worst instance's fields as
/// [`to_json`] writes them (kind, severity, start, end, range, fix, events),
/// the entry's message (the table's), then `count`, `total` (ns),
/// `group` (the entry's range: a loop's with its numbers masked, or null),
/// `iterations` (`{"range":"step #","with":27,"of":40}`, or null) and
/// `instances` (`[{"start":..,"end":..,"range":..}, ...]`, in time order).
pub fn entry_to_json(findings: &[Finding], entry: &Entry, rank: Option<&str>) -> String {
    let worst = &findings[entry.worst];
    let mut out = json_fields(worst, rank, &entry.message(findings));
    out.push_str(&format!(
        ",\"count\":{},\"total\":{},\"group\":",
        entry.count(),
        entry.total
    ));
    match &entry.range {
        Some(r) => json_string(&mut out, r),
        None => out.push_str("null"),
    }
    out.push_str(",\"iterations\":");
    match &entry.iterations {
        Some(it) => {
            out.push_str("{\"range\":");
            json_string(&mut out, &it.range);
            out.push_str(&format!(",\"with\":{},\"of\":", it.with));
            match it.of {
                Some(n) => out.push_str(&n.to_string()),
                None => out.push_str("null"),
            }
            out.push('}');
        }
        None => out.push_str("null"),
    }
    out.push_str(",\"instances\":[");
    for (n, &i) in entry.instances.iter().enumerate() {
        let f = &findings[i];
        if n > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"start\":{},\"end\":{},\"range\":",
            f.start, f.end
        ));
        match &f.range {
            Some(r) => json_string(&mut out, r),
            None => out.push_str("null"),
        }
        out.push('}');
    }
    out.push_str("]}");
    out
}

/// [`entry_to_json`] for each entry, one per line: the lines the table's
/// rows are.
pub fn entries_to_json_lines(findings: &[Finding], entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|e| entry_to_json(findings, e, None) + "\n")
        .collect()
}

/// [`to_json`] for each finding, one per line.
pub fn to_json_lines(findings: &[Finding]) -> String {
    findings.iter().map(|f| to_json(f) + "\n").collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventId;

    #[test]
    fn json_escapes_and_names() {
        let f = Finding {
            kind: FindingKind::ApiError,
            severity: Severity::Error,
            start: 1,
            end: 2,
            range: Some("a\"b\\c\n".into()),
            events: vec![EventId::new(crate::model::EventKind::Api, 7)],
            message: "x\u{1}".into(),
            fix: "f",
        };
        assert_eq!(
            to_json(&f),
            r#"{"kind":"api-error","severity":"error","start":1,"end":2,"range":"a\"b\\c\n","message":"x\u0001","fix":"f","events":[{"kind":"api","index":7}]}"#
        );
        for k in FindingKind::ALL {
            assert_eq!(FindingKind::from_name(k.name()), Some(k));
        }
        // Stretches cut around escapes next to characters of several bytes,
        // read back by a JSON parser.
        for text in [
            "",
            "µs",
            "\"é\u{1f}ü\\",
            "a\tb\r\nc\u{7f}",
            "Σ\"",
            "\u{0}\u{65e5}\u{672c}",
        ] {
            let mut out = String::new();
            json_string(&mut out, text);
            let back: String = serde_json::from_str(&out).expect("valid JSON");
            assert_eq!(back, text, "{out}");
        }
        assert_eq!(human_ns(812), "812 ns");
        assert_eq!(human_ns(5_100), "5.1 µs");
        assert_eq!(human_ns(1_234_000), "1.23 ms");
    }
}
