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

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::builder::Builder;
use super::db::Col::{Optional as Opt, Required as Req};
use super::rows::{int, opt_int, pid_of, text};
use super::sampling::{Sampling, stop_if_cancelled};
use crate::model::{
    Frame, FrameId, FrameKind, SampleSource, SampleStack, SampleState, StackId, StackTree, StrId,
};

/// The name of the domain nsys's Python sampler writes its marks in.
pub const PYTHON_SAMPLING_DOMAIN: &str = "Python Periodic Sampling";

/// Whether the payload lists frames innermost (the sampled function) first:
/// nsys 2025.3's does (`Frames[0]` is the function running).
const INNERMOST_FIRST: bool = true;

pub(super) fn read_python(b: &mut Builder, s: &mut Sampling) -> rusqlite::Result<()> {
    let domains = sampling_domains(b)?;
    if domains.is_empty() {
        return Ok(());
    }
    let ids: Vec<String> = domains
        .iter()
        .map(|d| d.1)
        .collect::<HashSet<_>>()
        .into_iter()
        .map(|d| d.to_string())
        .collect();
    let Some(sql) = b.select(
        "NVTX_EVENTS",
        &[
            Req("start"),
            Req("globalTid"),
            Req("domainId"),
            Opt("jsonText", "NULL"),
            Opt("jsonTextId", "NULL"),
        ],
        &format!("WHERE eventType = 34 AND domainId IN ({})", ids.join(", ")),
    ) else {
        return Ok(());
    };
    let report = b.report.clone();
    let mut stmt = report.conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let (mut read, mut without_frames, mut unreadable) = (0u64, 0u64, 0u64);
    let mut frames: Vec<FrameId> = Vec::new();
    let mut names = Names::default();
    let mut read_before: HashMap<String, (SampleState, StackId, Payload)> = HashMap::new();
    while let Some(row) = rows.next()? {
        read += 1;
        stop_if_cancelled(b, read)?;
        let Some(global_tid) = opt_int(row, 1) else {
            continue;
        };
        if !domains.contains(&(pid_of(global_tid), int(row, 2))) {
            continue;
        }
        let json = text(row, 3).or_else(|| {
            let id = opt_int(row, 4)?;
            Some(b.trace.strings.get(b.string(id)).to_string())
        });
        // A sampler taking a loop's stack again writes the same payload:
        // each distinct one is read once.
        let seen = json.as_ref().and_then(|j| read_before.get(j).copied());
        let (state, stack, outcome) = match (seen, json) {
            (Some(known), _) => known,
            (None, Some(json)) => {
                let read = read_payload(b, s, &mut names, &json, &mut frames);
                read_before.insert(json, read);
                read
            }
            (None, None) => (SampleState::Unknown, StackTree::ROOT, Payload::Missing),
        };
        match outcome {
            Payload::Frames => {}
            Payload::Missing | Payload::NoFrames => without_frames += 1,
            Payload::NotJson => unreadable += 1,
        }
        let thread = b.thread(global_tid);
        s.push(
            thread,
            SampleSource::Python,
            int(row, 0),
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
    let Ok(value) = serde_json::from_str::<Value>(json) else {
        return (SampleState::Unknown, StackTree::ROOT, Payload::NotJson);
    };
    frames.clear();
    let state = python_frames(b, s, names, &value, frames);
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

/// The (process, domain id) pairs of the Python sampling domain.
fn sampling_domains(b: &mut Builder) -> rusqlite::Result<HashSet<(u32, i64)>> {
    let mut domains = HashSet::new();
    if !b.report.has_column("NVTX_EVENTS", "domainId") {
        return Ok(domains);
    }
    let Some(sql) = b.select(
        "NVTX_EVENTS",
        &[
            Req("globalTid"),
            Req("domainId"),
            Opt("text", "NULL"),
            Opt("textId", "NULL"),
        ],
        "WHERE eventType = 75",
    ) else {
        return Ok(domains);
    };
    let report = b.report.clone();
    let mut stmt = report.conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let name = text(row, 2)
            .or_else(|| Some(b.trace.strings.get(b.string(opt_int(row, 3)?)).to_string()));
        if let (Some(tid), Some(domain), Some(PYTHON_SAMPLING_DOMAIN)) =
            (opt_int(row, 0), opt_int(row, 1), name.as_deref())
        {
            domains.insert((pid_of(tid), domain));
        }
    }
    Ok(domains)
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
    let by_label = |label: &str| {
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
    };
    match v {
        Value::String(label) => Some(by_label(label)),
        Value::Number(n) => Some(match n.as_i64() {
            Some(1) => SampleState::Running,
            Some(2) => SampleState::Waiting,
            Some(3) => SampleState::Uninterruptible,
            _ => SampleState::Unknown,
        }),
        _ => None,
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
struct Names(HashMap<i64, StrId>);

impl Names {
    fn of(&mut self, b: &mut Builder, value: &Value) -> Option<StrId> {
        match value {
            Value::String(text) => Some(b.trace.strings.intern(&unescape_html(text))),
            Value::Number(n) => {
                let id = n.as_i64()?;
                if let Some(&ours) = self.0.get(&id) {
                    return Some(ours);
                }
                let raw = b.trace.strings.get(b.string(id)).to_string();
                let ours = b.trace.strings.intern(&unescape_html(&raw));
                self.0.insert(id, ours);
                Some(ours)
            }
            _ => None,
        }
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
