//! Python samples (`nsys profile --python-sampling=true`): nsys 2025.3
//! writes each as an NVTX mark (`eventType` 34) in a domain the process
//! creates as `Python Periodic Sampling` (an `eventType` 75 row), on the
//! sampled thread. Its payload (schema in `NVTX_PAYLOAD_SCHEMAS`: thread
//! state, frames count, frames = {Function, File, Line}) is in the file only
//! when it was exported with `nsys export --include-json=true`: then as JSON
//! in `jsonText` (or `jsonTextId` → `StringIds`). Without it a mark still
//! says a sample was taken (kept, with an empty stack), and the load says
//! how to get the frames.
//!
//! The JSON (nsys 2025.3: `{"Python Periodic Sampling": {"Thread state ID":
//! 1, "Thread state": "Running", "Frames count": 3, "Frames": [{"Function":
//! 4850, "File": 122, "Line": 38}, …]}}`, innermost frame first, names as
//! `StringIds` ids of HTML-escaped text) is read by the schema's names, not
//! its layout: the first array of objects is the frames; in a frame, the key
//! naming a function, a file and a line (any case); a string or a
//! `StringIds` id for the names.

use std::borrow::Cow;
use std::collections::HashMap;

use rusqlite::types::ValueRef;

use serde_json::Value;

use super::builder::Builder;
use super::db::Col::{Optional as Opt, Required as Req};
use super::python_payload::{KnownSample, Scalar, read_known};
use super::rows::{int, opt_int, pid_of};
use super::sampling::{Sampling, WordMap, stop_if_cancelled};
use crate::model::{
    Frame, FrameId, FrameKind, Ns, SampleSource, SampleStack, SampleState, StackId, StackTree,
    StrId,
};

use crate::model::samples::PYTHON_SAMPLING_DOMAIN;

/// Whether the payload lists frames innermost (the sampled function) first:
/// nsys 2025.3's does (`Frames[0]` is the function running).
const INNERMOST_FIRST: bool = true;

/// An `eventType` 34 mark as read, before the domains are all known.
struct Mark {
    start: Ns,
    global_tid: i64,
    domain: i64,
    /// Index into the distinct payloads read; None without one.
    payload: Option<u32>,
}

/// The marks of one scan of `NVTX_EVENTS` (the domains' creations and the
/// marks, `eventType` 75 and 34), each distinct payload kept once.
#[derive(Default)]
struct Scan {
    /// (process, domain id) → whether it is the Python sampling domain.
    domains: HashMap<(u32, i64), bool>,
    marks: Vec<Mark>,
    payloads: Vec<String>,
    payload_ids: WordMap<String, u32>,
}

impl Scan {
    /// Keeps a mark that may be a Python sample (its domain is the sampling
    /// one or not created yet): most reports create a domain before its marks.
    fn mark(&mut self, b: &Builder, row: &rusqlite::Row, global_tid: i64, domain: i64) {
        if self.domains.get(&(pid_of(global_tid), domain)) == Some(&false) {
            return;
        }
        let payload = payload_text(b, row).map(|json| match self.payload_ids.get(&*json) {
            Some(&id) => id,
            None => {
                let id = self.payloads.len() as u32;
                self.payload_ids.insert(json.to_string(), id);
                self.payloads.push(json.into_owned());
                id
            }
        });
        self.marks.push(Mark {
            start: int(row, 0),
            global_tid,
            domain,
            payload,
        });
    }

    fn domain(&mut self, b: &Builder, row: &rusqlite::Row, global_tid: i64, domain: i64) {
        let named = match cell_text(row, 4) {
            Some(name) => name == PYTHON_SAMPLING_DOMAIN,
            None => opt_int(row, 5)
                .is_some_and(|id| b.trace.strings.get(b.string(id)) == PYTHON_SAMPLING_DOMAIN),
        };
        let key = (pid_of(global_tid), domain);
        let sampling = self.domains.entry(key).or_insert(false);
        *sampling |= named;
    }
}

/// A mark's JSON payload: `jsonText`, or the `StringIds` text `jsonTextId` names.
fn payload_text<'r>(b: &'r Builder, row: &'r rusqlite::Row) -> Option<Cow<'r, str>> {
    cell_text(row, 6).or_else(|| {
        let id = opt_int(row, 7)?;
        Some(Cow::Borrowed(b.trace.strings.get(b.string(id))))
    })
}

/// A text cell borrowed from the row ([`super::rows::text`] without the copy).
fn cell_text<'r>(row: &'r rusqlite::Row, i: usize) -> Option<Cow<'r, str>> {
    match row.get_ref(i) {
        // The checked conversion first: its ASCII fast path is several
        // times the lossy one's on half-kilobyte payloads.
        Ok(ValueRef::Text(t)) => Some(match std::str::from_utf8(t) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(t),
        }),
        Ok(ValueRef::Integer(v)) => Some(Cow::Owned(v.to_string())),
        Ok(ValueRef::Real(v)) => Some(Cow::Owned(v.to_string())),
        _ => None,
    }
}

/// The sampling domains' creations and the marks that may be Python
/// samples, in one scan of `NVTX_EVENTS` (the table of every NVTX range,
/// with every payload: read once).
fn scan_marks(b: &mut Builder) -> rusqlite::Result<Scan> {
    let mut scan = Scan::default();
    if !b.report.has_column("NVTX_EVENTS", "domainId") {
        return Ok(scan);
    }
    let Some(sql) = b.select(
        "NVTX_EVENTS",
        &[
            Req("start"),
            Req("globalTid"),
            Req("domainId"),
            Req("eventType"),
            Opt("text", "NULL"),
            Opt("textId", "NULL"),
            Opt("jsonText", "NULL"),
            Opt("jsonTextId", "NULL"),
        ],
        "WHERE eventType IN (34, 75)",
    ) else {
        return Ok(scan);
    };
    let report = b.report.clone();
    let mut stmt = report.conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut read = 0u64;
    while let Some(row) = rows.next()? {
        read += 1;
        stop_if_cancelled(b, read)?;
        let (Some(global_tid), Some(domain)) = (opt_int(row, 1), opt_int(row, 2)) else {
            continue;
        };
        if int(row, 3) == 75 {
            scan.domain(b, row, global_tid, domain);
        } else {
            scan.mark(b, row, global_tid, domain);
        }
    }
    Ok(scan)
}

pub(super) fn read_python(b: &mut Builder, s: &mut Sampling) -> rusqlite::Result<()> {
    let scan = scan_marks(b)?;
    if !scan.domains.values().any(|&sampling| sampling) {
        return Ok(());
    }
    let (mut read, mut without_frames, mut unreadable) = (0u64, 0u64, 0u64);
    let mut frames: Vec<FrameId> = Vec::new();
    let mut names = Names::default();
    // A sampler taking a loop's stack again writes the same payload: each
    // distinct one is read once, when a sample first has it.
    let mut read_before: Vec<Option<(SampleState, StackId, Payload)>> =
        vec![None; scan.payloads.len()];
    for mark in &scan.marks {
        if scan.domains.get(&(pid_of(mark.global_tid), mark.domain)) != Some(&true) {
            continue;
        }
        read += 1;
        stop_if_cancelled(b, read)?;
        let (state, stack, outcome) = match mark.payload {
            Some(at) => match read_before[at as usize] {
                Some(known) => known,
                None => {
                    let json = &scan.payloads[at as usize];
                    let outcome = read_payload(b, s, &mut names, json, &mut frames);
                    read_before[at as usize] = Some(outcome);
                    outcome
                }
            },
            None => (SampleState::Unknown, StackTree::ROOT, Payload::Missing),
        };
        match outcome {
            Payload::Frames => {}
            Payload::Missing | Payload::NoFrames => without_frames += 1,
            Payload::NotJson => unreadable += 1,
        }
        let thread = b.thread(mark.global_tid);
        s.push(
            thread,
            SampleSource::Python,
            mark.start,
            SampleStack::new(stack, state),
        );
    }
    if without_frames == read && read > 0 {
        b.warn(format!(
            "{read} Python samples have no frames (the report was exported without \
             `nsys export --include-json=true`): only when they were taken is known"
        ));
    } else if without_frames > 0 {
        b.warn(format!("{without_frames} Python samples have no frames"));
    }
    if unreadable > 0 {
        b.warn(format!(
            "{unreadable} Python samples have a payload that is not JSON (not read)"
        ));
    }
    Ok(())
}

/// What a sample's payload held.
#[derive(Copy, Clone)]
enum Payload {
    Frames,
    NoFrames,
    NotJson,
    Missing,
}

/// A payload's thread state and stack (its frames interned in `s`).
fn read_payload(
    b: &mut Builder,
    s: &mut Sampling,
    names: &mut Names,
    json: &str,
    frames: &mut Vec<FrameId>,
) -> (SampleState, StackId, Payload) {
    frames.clear();
    let state = match read_known(json) {
        Some(known) => known_frames(b, s, names, &known.sample, frames),
        None => {
            let Ok(value) = serde_json::from_str::<Value>(json) else {
                return (SampleState::Unknown, StackTree::ROOT, Payload::NotJson);
            };
            python_frames(b, s, names, &value, frames)
        }
    };
    let stack = if INNERMOST_FIRST {
        s.stack(frames.iter().rev().copied())
    } else {
        s.stack(frames.iter().copied())
    };
    let outcome = if frames.is_empty() {
        Payload::NoFrames
    } else {
        Payload::Frames
    };
    (state, stack, outcome)
}

/// Reads a payload's frames into `out` (in the payload's order) and
/// returns the thread state it names.
fn python_frames(
    b: &mut Builder,
    s: &mut Sampling,
    names: &mut Names,
    payload: &Value,
    out: &mut Vec<FrameId>,
) -> SampleState {
    let state = find_state(payload).unwrap_or(SampleState::Unknown);
    if let Some(list) = find_frames(payload, 0) {
        for item in list {
            if let Some(frame) = python_frame(b, names, item) {
                out.push(s.frame(frame));
            }
        }
    }
    state
}

/// [`python_frames`] of a payload in the known layout: the same frames
/// and state, read without a tree of values.
fn known_frames(
    b: &mut Builder,
    s: &mut Sampling,
    names: &mut Names,
    sample: &KnownSample,
    out: &mut Vec<FrameId>,
) -> SampleState {
    let state = match &sample.state {
        Some(Scalar::Text(label)) => state_by_label(label),
        Some(number @ (Scalar::Int(_) | Scalar::UInt(_))) => state_by_number(number.as_i64()),
        Some(Scalar::Other) | None => SampleState::Unknown,
    };
    for item in &sample.frames {
        let Some(function) = names.of_scalar(b, &item.function) else {
            continue;
        };
        let location = (item.file.as_ref())
            .and_then(|v| names.of_scalar(b, v))
            .unwrap_or_default();
        let line = match &item.line {
            Some(Scalar::Text(text)) => text.trim().parse().unwrap_or(0),
            Some(number) => number.as_u64().unwrap_or(0) as u32,
            None => 0,
        };
        out.push(s.frame(Frame {
            kind: FrameKind::Python,
            function,
            location,
            line,
        }));
    }
    state
}

/// The first array of objects in `value` (depth-first, a few levels).
fn find_frames(value: &Value, depth: u32) -> Option<&Vec<Value>> {
    if depth > 4 {
        return None;
    }
    match value {
        Value::Array(items) if items.first().is_some_and(Value::is_object) => Some(items),
        Value::Array(items) => items.iter().find_map(|v| find_frames(v, depth + 1)),
        Value::Object(map) => map.values().find_map(|v| find_frames(v, depth + 1)),
        _ => None,
    }
}

/// The thread state named in a payload: a key naming a state (not its id)
/// holding a label (`Running`, `Blocking Wait`, `Uninterruptible`) or the
/// enum's value (1, 2, 3).
/// The payload nests its fields in an object named after the schema
/// (`{"Python Periodic Sampling": {...}}`): looked for a few levels down.
fn find_state(value: &Value) -> Option<SampleState> {
    find_state_in(value, 0)
}

fn find_state_in(value: &Value, depth: u32) -> Option<SampleState> {
    let map = value.as_object()?;
    let here = map
        .iter()
        .find(|(k, _)| key_has(k, "state") && !k.to_ascii_lowercase().ends_with("id"));
    let Some((_, v)) = here else {
        return (depth < 4)
            .then(|| map.values().find_map(|v| find_state_in(v, depth + 1)))
            .flatten();
    };
    match v {
        Value::String(label) => Some(state_by_label(label)),
        Value::Number(n) => Some(state_by_number(n.as_i64())),
        _ => None,
    }
}

/// A state's label (`Running`, `Blocking Wait`, `Uninterruptible`).
fn state_by_label(label: &str) -> SampleState {
    let l = label.to_ascii_lowercase();
    if l.starts_with("running") {
        SampleState::Running
    } else if l.contains("uninterruptible") {
        SampleState::Uninterruptible
    } else if l.contains("wait") || l.contains("block") {
        SampleState::Waiting
    } else {
        SampleState::Unknown
    }
}

/// A state's enum value (1, 2, 3).
fn state_by_number(value: Option<i64>) -> SampleState {
    match value {
        Some(1) => SampleState::Running,
        Some(2) => SampleState::Waiting,
        Some(3) => SampleState::Uninterruptible,
        _ => SampleState::Unknown,
    }
}

/// nsys writes the Python sampler's names HTML-escaped in StringIds
/// (`&lt;module&gt;` for `<module>`): the names as Python gives them.
fn unescape_html(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('&') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let entity = [
            ("&lt;", '<'),
            ("&gt;", '>'),
            ("&quot;", '"'),
            ("&#39;", '\''),
            ("&apos;", '\''),
            ("&amp;", '&'),
        ]
        .into_iter()
        .find(|(e, _)| rest.starts_with(e));
        match entity {
            Some((e, c)) => {
                out.push(c);
                rest = &rest[e.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Our ids of the names payloads give by `StringIds` id, unescaped once
/// (thousands of samples name the same few functions).
#[derive(Default)]
struct Names(WordMap<i64, StrId>);

impl Names {
    fn of(&mut self, b: &mut Builder, value: &Value) -> Option<StrId> {
        match value {
            Value::String(text) => Some(b.trace.strings.intern(&unescape_html(text))),
            Value::Number(n) => self.of_id(b, n.as_i64()?),
            _ => None,
        }
    }

    /// [`Names::of`] of a name read in the known layout.
    fn of_scalar(&mut self, b: &mut Builder, value: &Scalar) -> Option<StrId> {
        match value {
            Scalar::Text(text) => Some(b.trace.strings.intern(&unescape_html(text))),
            Scalar::Int(_) | Scalar::UInt(_) => self.of_id(b, value.as_i64()?),
            Scalar::Other => None,
        }
    }

    fn of_id(&mut self, b: &mut Builder, id: i64) -> Option<StrId> {
        if let Some(&ours) = self.0.get(&id) {
            return Some(ours);
        }
        let raw = b.trace.strings.get(b.string(id)).to_string();
        let ours = b.trace.strings.intern(&unescape_html(&raw));
        self.0.insert(id, ours);
        Some(ours)
    }
}

/// Whether `key` contains `want` (ASCII, any case), without allocating.
fn key_has(key: &str, want: &str) -> bool {
    key.as_bytes()
        .windows(want.len())
        .any(|w| w.eq_ignore_ascii_case(want.as_bytes()))
}

/// One frame object: its function, file and line by their keys' names.
fn python_frame(b: &mut Builder, names: &mut Names, item: &Value) -> Option<Frame> {
    let map = item.as_object()?;
    let field = |want: &str| map.iter().find(|(k, _)| key_has(k, want)).map(|(_, v)| v);
    let function = names.of(b, field("func")?)?;
    let location = field("file")
        .and_then(|v| names.of(b, v))
        .unwrap_or_default();
    let line = match field("line") {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0) as u32,
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    };
    Some(Frame {
        kind: FrameKind::Python,
        function,
        location,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_entities_are_undone_once() {
        assert_eq!(unescape_html("&lt;module&gt;"), "<module>");
        assert_eq!(unescape_html("a &amp;lt; b & c"), "a &lt; b & c");
        assert_eq!(unescape_html("plain"), "plain");
    }

    #[test]
    fn the_state_is_found_inside_the_schemas_object() {
        let v: Value = serde_json::from_str(
            r#"{"Python Periodic Sampling":{"Thread state ID":2,"Thread state":"Blocking Wait","Frames":[]}}"#,
        )
        .expect("json");
        assert_eq!(find_state(&v), Some(SampleState::Waiting));
    }
}
