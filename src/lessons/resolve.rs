//! A step's targets found in a loaded report: which event, which span, which
//! rows. A target that is not there is an error naming the step's line, never
//! a panic: a teacher's lesson meets reports they did not record.

use std::collections::BTreeSet;

use super::{Lesson, LessonError, Place, RowPattern, Search, Step, Target, What};
use crate::analysis::projection;
use crate::model::{EventId, EventKind, Ns, SpanColumns, Trace};

/// Where the view goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum View {
    /// The whole report.
    All,
    /// This span, with a margin.
    Span(Ns, Ns),
    /// An event with its context around it (a selection without a zoom).
    Around(Ns, Ns),
}

/// What a step shows, found in its report.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    /// `None`: the view stays where it is.
    pub view: Option<View>,
    pub select: Option<EventId>,
    pub range: Option<(Ns, Ns)>,
    pub search: Option<Search>,
    /// Open the kernel panel on the selected kernel.
    pub kernel_panel: bool,
    pub findings_panel: bool,
    pub nvtx_on_gpu: bool,
    /// Indexes (into the rows given to [`resolve`]) of the rows collapsed and hidden.
    pub collapsed: Vec<usize>,
    pub hidden: Vec<usize>,
}

/// A timeline row as [`resolve`] matches names against it: its label
/// without the event count, and its place in the tree.
#[derive(Clone, Debug)]
pub struct RowName {
    pub name: String,
    pub parent: Option<usize>,
    /// A group (process, thread, GPU, stream), which can collapse.
    pub header: bool,
}

/// Finds step `index` of `lesson` in `trace` (the step's report, loaded) with
/// the timeline's `rows`.
pub fn resolve(
    lesson: &Lesson,
    index: usize,
    trace: &Trace,
    rows: &[RowName],
) -> Result<Shown, LessonError> {
    let Some(step) = lesson.steps.get(index) else {
        return Err(LessonError {
            path: lesson.path.clone(),
            line: None,
            message: format!(
                "the lesson has {} steps, not {}",
                lesson.steps.len(),
                index + 1
            ),
        });
    };
    let report = step.report.file_name().map_or_else(
        || step.report.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let error = |line: usize, message: String| LessonError {
        path: lesson.path.clone(),
        line: Some(line),
        message: format!("step {}: {message} in {report}", index + 1),
    };
    let place = |p: &Place| -> Result<(Ns, Ns), LessonError> {
        match p {
            Place::All => Ok(whole(trace)),
            Place::Targets(ts) => {
                let mut union: Option<(Ns, Ns)> = None;
                for t in ts {
                    let (s, e) = span(t, trace).map_err(|m| error(t.line, m))?;
                    union = Some(union.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
                }
                union.ok_or_else(|| error(step.line, "an empty list of targets".into()))
            }
        }
    };
    let select = match &step.select {
        Some(t) => Some(find(t, trace).map_err(|m| error(t.line, m))?),
        None => None,
    };
    let view = match (&step.zoom, select) {
        (Some(Place::All), _) => Some(View::All),
        (Some(p), _) => {
            let (s, e) = place(p)?;
            Some(View::Span(s, e))
        }
        (None, Some(ev)) => {
            let (s, e) = event_span(trace, ev).unwrap_or_default();
            Some(View::Around(s, e))
        }
        (None, None) => None,
    };
    let range = step.range.as_ref().map(place).transpose()?;
    if let Some(search) = &step.search
        && !search_matches(trace, search)
    {
        return Err(error(
            step.line,
            format!("search {:?} matches no event", search.query),
        ));
    }
    let (collapsed, hidden) = row_layout(step, rows).map_err(|(line, m)| error(line, m))?;
    Ok(Shown {
        view,
        select,
        range,
        search: step.search.clone(),
        kernel_panel: step.kernel_panel,
        findings_panel: step.findings_panel,
        nvtx_on_gpu: step.nvtx_on_gpu,
        collapsed,
        hidden,
    })
}

/// The report's first and last timestamp.
fn whole(trace: &Trace) -> (Ns, Ns) {
    let (lo, hi) = trace.info.time_range;
    (lo, hi.max(lo + 1))
}

/// The span a target covers: its event's (widened to its GPU work when asked),
/// or the span written.
pub fn span(target: &Target, trace: &Trace) -> Result<(Ns, Ns), String> {
    if let What::Span { start, end } = target.what {
        return Ok((start, end));
    }
    let ev = find(target, trace)?;
    let (mut s, mut e) = event_span(trace, ev).ok_or("the event is not in the report")?;
    if target.with_gpu_work {
        for (gs, ge) in gpu_work(trace, ev) {
            (s, e) = (s.min(gs), e.max(ge));
        }
    }
    Ok((s, e))
}

/// The event a named target names.
pub fn find(target: &Target, trace: &Trace) -> Result<EventId, String> {
    let What::Named { kind, name } = &target.what else {
        return Err("a span names no event".into());
    };
    let within = match &target.within {
        Some(w) => {
            let ranges = nvtx_named(trace, w);
            if ranges.is_empty() {
                return Err(format!("no NVTX range named {w:?} (within)"));
            }
            Some(ranges)
        }
        None => None,
    };
    let mut found: Vec<(Ns, u32)> = Vec::new();
    for ev in events(trace, *kind) {
        if !name_matches(trace, *kind, ev.index, ev.domain, name) {
            continue;
        }
        if let Some(ranges) = &within
            && !ranges.iter().any(|r| inside(trace, *kind, &ev, r))
        {
            continue;
        }
        found.push((spans(trace, *kind).start[ev.index as usize], ev.index));
    }
    found.sort_unstable();
    let what = describe(*kind, name, target.within.as_deref());
    if found.is_empty() {
        return Err(format!("no {what}"));
    }
    let n = found.len() as i64;
    let k = target.occurrence;
    let at = if k > 0 { k - 1 } else { n + k };
    if !(0..n).contains(&at) {
        return Err(format!(
            "occurrence {k} asked, but there {} only {n} {what}",
            if n == 1 { "is" } else { "are" }
        ));
    }
    Ok(EventId::new(*kind, found[at as usize].1))
}

fn describe(kind: EventKind, name: &str, within: Option<&str>) -> String {
    let what = match kind {
        EventKind::Nvtx => format!("NVTX range named {name:?}"),
        EventKind::Kernel => format!("kernel whose name contains {name:?}"),
        EventKind::Api => format!("CUDA API call whose name contains {name:?}"),
        EventKind::Osrt => format!("OS runtime call whose name contains {name:?}"),
        EventKind::Memcpy => format!("memcpy whose name contains {name:?}"),
        EventKind::Memset => format!("memset whose name contains {name:?}"),
        EventKind::Sync => format!("sync whose name contains {name:?}"),
        EventKind::Graph => format!("CUDA graph whose name contains {name:?}"),
    };
    match within {
        Some(w) => format!("{what} inside an NVTX range named {w:?}"),
        None => what,
    }
}

/// One event with where it happened: its thread (CPU events) or its
/// stream's process and its correlation id (GPU work).
struct Located<'a> {
    index: u32,
    thread: Option<usize>,
    domain: &'a str,
    pid: u32,
    correlation: Option<u32>,
}

/// Every event of `kind`, track by track.
fn events(trace: &Trace, kind: EventKind) -> Vec<Located<'_>> {
    let mut out = Vec::new();
    match kind {
        EventKind::Api | EventKind::Osrt | EventKind::Nvtx => {
            for (t, th) in trace.threads.iter().enumerate() {
                let tracks: Vec<(&crate::model::Track, &str)> = match kind {
                    EventKind::Api => vec![(&th.cuda_api, "")],
                    EventKind::Osrt => vec![(&th.osrt, "")],
                    _ => th
                        .nvtx
                        .iter()
                        .map(|n| (&n.track, n.domain.as_str()))
                        .collect(),
                };
                for (track, domain) in tracks {
                    out.extend(track.rows().map(|index| Located {
                        index,
                        thread: Some(t),
                        domain,
                        pid: th.pid,
                        correlation: None,
                    }));
                }
            }
        }
        _ => {
            let correlation: &[u32] = match kind {
                EventKind::Kernel => &trace.kernels.correlation,
                EventKind::Memcpy => &trace.memcpys.correlation,
                EventKind::Memset => &trace.memsets.correlation,
                EventKind::Sync => &trace.syncs.correlation,
                _ => &trace.graph_execs.correlation,
            };
            for st in &trace.streams {
                let track = match kind {
                    EventKind::Kernel => &st.kernels,
                    EventKind::Memcpy => &st.memcpys,
                    EventKind::Memset => &st.memsets,
                    EventKind::Sync => &st.syncs,
                    _ => &st.graphs,
                };
                out.extend(track.rows().map(|index| Located {
                    index,
                    thread: None,
                    domain: "",
                    pid: st.pid,
                    correlation: correlation.get(index as usize).copied(),
                }));
            }
        }
    }
    out
}

fn spans(trace: &Trace, kind: EventKind) -> &SpanColumns {
    match kind {
        EventKind::Api => &trace.cuda_api.spans,
        EventKind::Osrt => &trace.osrt.spans,
        EventKind::Nvtx => &trace.nvtx.spans,
        EventKind::Kernel => &trace.kernels.spans,
        EventKind::Memcpy => &trace.memcpys.spans,
        EventKind::Memset => &trace.memsets.spans,
        EventKind::Sync => &trace.syncs.spans,
        EventKind::Graph => &trace.graph_execs.spans,
    }
}

fn event_span(trace: &Trace, ev: EventId) -> Option<(Ns, Ns)> {
    let s = spans(trace, ev.kind);
    let i = ev.index as usize;
    s.get(i)
}

/// NVTX ranges by their whole name (`name` or `domain:name`); other kinds by
/// a part of their name (kernels: the demangled or the short name).
fn name_matches(trace: &Trace, kind: EventKind, index: u32, domain: &str, wanted: &str) -> bool {
    let i = index as usize;
    let Some(&id) = spans(trace, kind).name.get(i) else {
        return false;
    };
    let name = trace.name(id);
    match kind {
        EventKind::Nvtx => {
            name == wanted
                || wanted
                    .strip_prefix(domain)
                    .and_then(|rest| rest.strip_prefix(':'))
                    .is_some_and(|rest| !domain.is_empty() && rest == name)
        }
        EventKind::Kernel => {
            name.contains(wanted)
                || trace
                    .kernels
                    .short_name(i)
                    .is_some_and(|s| s.0 != 0 && trace.name(s).contains(wanted))
        }
        _ => name.contains(wanted),
    }
}

/// An NVTX range instance: row, thread, span.
struct RangeInstance {
    index: u32,
    thread: usize,
    start: Ns,
    end: Ns,
}

fn nvtx_named(trace: &Trace, name: &str) -> Vec<RangeInstance> {
    events(trace, EventKind::Nvtx)
        .into_iter()
        .filter(|ev| name_matches(trace, EventKind::Nvtx, ev.index, ev.domain, name))
        .filter_map(|ev| {
            let (start, end) = event_span(trace, EventId::new(EventKind::Nvtx, ev.index))?;
            Some(RangeInstance {
                index: ev.index,
                thread: ev.thread?,
                start,
                end,
            })
        })
        .collect()
}

/// Whether `ev` happened inside range `r`: a CPU event on its thread starting
/// in it (a nested range also ending in it); GPU work launched by an API call
/// on its thread that started in it.
fn inside(trace: &Trace, kind: EventKind, ev: &Located<'_>, r: &RangeInstance) -> bool {
    match ev.thread {
        Some(t) => {
            let Some((s, e)) = event_span(trace, EventId::new(kind, ev.index)) else {
                return false;
            };
            let nested = kind != EventKind::Nvtx || (e <= r.end && ev.index != r.index);
            t == r.thread && (r.start..r.end).contains(&s) && nested
        }
        None => {
            let Some(call) = ev
                .correlation
                .and_then(|c| trace.correlation.api_call(ev.pid, c))
            else {
                return false;
            };
            let Some(th) = trace.threads.get(r.thread) else {
                return false;
            };
            th.cuda_api.contains(call)
                && trace
                    .cuda_api
                    .spans
                    .start
                    .get(call as usize)
                    .is_some_and(|&s| (r.start..r.end).contains(&s))
        }
    }
}

/// The spans of the GPU work an NVTX range or an API call launched.
fn gpu_work(trace: &Trace, ev: EventId) -> Vec<(Ns, Ns)> {
    let ops: Vec<crate::model::GpuOp> = match ev.kind {
        EventKind::Nvtx => projection::gpu_work(trace, ev.index),
        EventKind::Api => {
            let pid = trace
                .thread_of_api_call(ev.index)
                .and_then(|t| trace.threads.get(t as usize))
                .map(|t| t.pid);
            match (pid, trace.cuda_api.correlation.get(ev.index as usize)) {
                (Some(pid), Some(&c)) => trace.correlation.gpu_ops(pid, c).collect(),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    ops.into_iter()
        .filter_map(|op| event_span(trace, EventId::from(op)))
        .collect()
}

/// Whether any event's name matches the search as the search box matches it
/// (a part of the name, any case; or the regex).
fn search_matches(trace: &Trace, search: &Search) -> bool {
    let regex = if search.regex {
        match regex::Regex::new(&search.query) {
            Ok(r) => Some(r),
            Err(_) => return false,
        }
    } else {
        None
    };
    let lower = search.query.to_lowercase();
    let mut seen = BTreeSet::new();
    for kind in EventKind::ALL {
        for &id in &spans(trace, kind).name {
            if id.0 == 0 || !seen.insert(id.0) {
                continue;
            }
            let name = trace.name(id);
            let hit = match &regex {
                Some(r) => r.is_match(name),
                None => name.to_lowercase().contains(&lower),
            };
            if hit {
                return true;
            }
        }
    }
    false
}

/// The rows collapsed and hidden: from all expanded and shown, collapse,
/// expand (a row and its groups), hide, show (a row, its groups and what is
/// under it). A name matching no row is an error with its line.
pub fn row_layout(
    step: &Step,
    rows: &[RowName],
) -> Result<(Vec<usize>, Vec<usize>), (usize, String)> {
    let matched = |p: &RowPattern| -> Result<Vec<usize>, (usize, String)> {
        let hits: Vec<usize> = (0..rows.len())
            .filter(|&r| pattern_matches(rows, r, &p.pattern))
            .collect();
        if hits.is_empty() {
            return Err((
                p.line,
                format!(
                    "no row named {:?} (name rows as the timeline labels them, without counts: \"OS runtime\", \"Stream 7\", \"Stream 7 > Memcpy\")",
                    p.pattern
                ),
            ));
        }
        Ok(hits)
    };
    let ancestors = |mut r: usize| {
        let mut out = Vec::new();
        while let Some(p) = rows[r].parent {
            out.push(p);
            r = p;
        }
        out
    };
    let mut collapsed = BTreeSet::new();
    for p in &step.collapse {
        let headers: Vec<usize> = matched(p)?
            .into_iter()
            .filter(|&r| rows[r].header)
            .collect();
        if headers.is_empty() {
            return Err((
                p.line,
                format!("row {:?} is not a group that can collapse", p.pattern),
            ));
        }
        collapsed.extend(headers);
    }
    for p in &step.expand {
        for r in matched(p)? {
            collapsed.remove(&r);
            for a in ancestors(r) {
                collapsed.remove(&a);
            }
        }
    }
    let mut hidden = BTreeSet::new();
    for p in &step.hide {
        hidden.extend(matched(p)?);
    }
    for p in &step.show {
        for r in matched(p)? {
            hidden.remove(&r);
            for a in ancestors(r) {
                hidden.remove(&a);
            }
            for d in 0..rows.len() {
                if ancestors(d).contains(&r) {
                    hidden.remove(&d);
                }
            }
        }
    }
    // A group whose rows are all hidden would stay as an empty header
    // (threads with only OS runtime calls, once "OS runtime" is hidden).
    for r in (0..rows.len()).rev() {
        if !rows[r].header {
            continue;
        }
        let children: Vec<usize> = (r + 1..rows.len())
            .filter(|&c| rows[c].parent == Some(r))
            .collect();
        if !children.is_empty() && children.iter().all(|c| hidden.contains(c)) {
            hidden.insert(r);
        }
    }
    Ok((
        collapsed.into_iter().collect(),
        hidden.into_iter().collect(),
    ))
}

/// Row `r` matches `pattern`: its last segment names the row, the ones before
/// name groups above it, in order.
fn pattern_matches(rows: &[RowName], r: usize, pattern: &str) -> bool {
    let all: Vec<&str> = pattern.split(" > ").map(str::trim).collect();
    let mut segments = all.into_iter().rev();
    let Some(last) = segments.next() else {
        return false;
    };
    if !segment_matches(&rows[r].name, last) {
        return false;
    }
    let mut at = rows[r].parent;
    for seg in segments {
        loop {
            let Some(p) = at else { return false };
            at = rows[p].parent;
            if segment_matches(&rows[p].name, seg) {
                break;
            }
        }
    }
    true
}

/// `*` matches any row; otherwise the name equals the segment or holds it as
/// whole words (any case): `Stream 7` is in `GPU 0 · Stream 7`, not in
/// `GPU 0 · Stream 70`.
fn segment_matches(name: &str, segment: &str) -> bool {
    if segment == "*" {
        return true;
    }
    let (name, segment) = (name.to_lowercase(), segment.to_lowercase());
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    name.match_indices(&segment).any(|(i, m)| {
        !word(name[..i].chars().next_back()) && !word(name[i + m.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_match_whole_words() {
        assert!(segment_matches("GPU 0 · Stream 7", "Stream 7"));
        assert!(!segment_matches("GPU 0 · Stream 70", "Stream 7"));
        assert!(segment_matches("OS runtime", "os runtime"));
        assert!(segment_matches("anything", "*"));
        assert!(!segment_matches("Kernels", "Kernel"));
    }
}
