//! CPU samples: `COMPOSITE_EVENTS` (one row a sample: time, thread) joined
//! with `SAMPLING_CALLCHAINS` (its frames by `stackDepth`, 0 the sampled
//! function) into the threads, frames and stack tree of
//! [`crate::model::CpuSampling`]. A report without these tables has no samples, never
//! an error; a table without a column the rows need is skipped with a
//! warning; a call chain of no sample, or a sample without one, is counted
//! and said.

use super::builder::Builder;
use super::cells::RawRows;
use super::db::Col::{Optional as Opt, Required as Req};
use super::rows::{int, opt_int};
use super::sampling::{Sampling, WordMap, stop_if_cancelled};
use crate::model::{Frame, FrameId, FrameKind, SampleSource, SampleStack, SampleState, StrId};

/// What reading the callchains met that the user should hear of.
#[derive(Default)]
struct Oddities {
    without_thread: u64,
    without_chain: u64,
    dangling_chains: u64,
}

/// One callchain row: (sample id, depth, symbol, module, unresolved).
type ChainRow = (i64, i64, i64, i64, bool);

/// The native samples and their stacks, into `s`.
pub(super) fn read_native(b: &mut Builder, s: &mut Sampling) -> rusqlite::Result<()> {
    let Some(events) = b.select(
        "COMPOSITE_EVENTS",
        &[Req("id"), Req("start"), Req("globalTid")],
        "ORDER BY id",
    ) else {
        return Ok(());
    };
    let chains = read_chains(b)?;
    let mut pending = chains.iter().copied().peekable();
    let mut odd = Oddities::default();
    let mut frames: Vec<FrameId> = Vec::new();
    let mut frame_of: WordMap<(i64, i64, bool), FrameId> = WordMap::default();
    let report = b.report.clone();
    let mut stmt = report.conn.prepare(&events)?;
    let mut rows = stmt.query([])?;
    let mut read = 0u64;
    // Samples come in runs of one thread's.
    let mut last_thread: Option<(i64, u32)> = None;
    while let Some(row) = rows.next()? {
        read += 1;
        stop_if_cancelled(b, read)?;
        let id = int(row, 0);
        // Callchains of ids before this sample belong to no sample.
        while pending.next_if(|p| p.0 < id).is_some() {
            odd.dangling_chains += 1;
        }
        frames.clear();
        while let Some(p) = pending.next_if(|p| p.0 == id) {
            // A module's unresolved frames are one name made once, and a
            // loop's frames repeat: each (symbol, module) interned once.
            let key = (p.2, p.3, p.4);
            let frame = match frame_of.get(&key) {
                Some(&frame) => frame,
                None => {
                    let frame = s.frame(native_frame(b, p.2, p.3, p.4));
                    frame_of.insert(key, frame);
                    frame
                }
            };
            frames.push(frame);
        }
        let Some(global_tid) = opt_int(row, 2) else {
            odd.without_thread += 1;
            continue;
        };
        if frames.is_empty() {
            odd.without_chain += 1;
        }
        let thread = match last_thread {
            Some((tid, t)) if tid == global_tid => t,
            _ => {
                let t = b.thread(global_tid);
                last_thread = Some((global_tid, t));
                t
            }
        };
        // Depth 0 is the sampled function: the tree is built from the outermost.
        let stack = s.stack(frames.iter().rev().copied());
        s.push(
            thread,
            SampleSource::Native,
            int(row, 1),
            SampleStack::new(stack, SampleState::Running),
        );
    }
    odd.dangling_chains += pending.count() as u64;
    warn_oddities(b, s, &odd);
    Ok(())
}

/// Every callchain row, by sample id and depth. Read in the table's order
/// (nsys writes them so): through the (id, stackDepth) index SQLite would
/// look each row up again; sorted here only if they came otherwise.
fn read_chains(b: &mut Builder) -> rusqlite::Result<Vec<ChainRow>> {
    let Some(sql) = b.select(
        "SAMPLING_CALLCHAINS",
        &[
            Req("id"),
            Req("stackDepth"),
            Req("symbol"),
            Req("module"),
            Opt("unresolved", "0"),
        ],
        "",
    ) else {
        return Ok(Vec::new());
    };
    let report = b.report.clone();
    // Integer cells only, tens of thousands of rows: stepped through the C API.
    let mut rows = RawRows::new(&report.conn, &sql, &[])?;
    let mut chains: Vec<ChainRow> = Vec::new();
    while rows.step()? {
        stop_if_cancelled(b, chains.len() as u64 + 1)?;
        chains.push((
            int(&rows, 0),
            int(&rows, 1),
            int(&rows, 2),
            int(&rows, 3),
            opt_int(&rows, 4).unwrap_or(0) != 0,
        ));
    }
    if !chains.is_sorted_by_key(|c| (c.0, c.1)) {
        // Stable: rows of one (id, depth) keep the table's order, as the
        // index would give them.
        chains.sort_by_key(|c| (c.0, c.1));
    }
    Ok(chains)
}

fn warn_oddities(b: &mut Builder, s: &Sampling, odd: &Oddities) {
    if odd.without_thread > 0 {
        b.warn(format!(
            "COMPOSITE_EVENTS: {} CPU samples without a thread (globalTid NULL) are not loaded",
            odd.without_thread
        ));
    }
    if odd.without_chain > 0 && b.report.has_table("SAMPLING_CALLCHAINS") {
        b.warn(format!(
            "COMPOSITE_EVENTS: {} CPU samples have no call stack in SAMPLING_CALLCHAINS \
             (counted, with an empty stack)",
            odd.without_chain
        ));
    }
    if odd.dangling_chains > 0 {
        b.warn(format!(
            "SAMPLING_CALLCHAINS: {} frames name a sample id COMPOSITE_EVENTS does not have \
             (not loaded)",
            odd.dangling_chains
        ));
    }
    if s.stacks_full {
        b.warn("CPU samples: more than 2^30 distinct call stacks; deeper frames are cut".into());
    }
}

/// A native frame from a callchain row's string ids. An unresolved one
/// (an address) is named after its module, so that a module's addresses
/// count as one function.
fn native_frame(b: &mut Builder, symbol: i64, module: i64, unresolved: bool) -> Frame {
    let location = b.string(module);
    let function = if unresolved {
        unresolved_name(b, location)
    } else {
        b.string(symbol)
    };
    Frame {
        kind: FrameKind::Native,
        function,
        location,
        line: 0,
    }
}

/// `[libfoo.so]`: the name of unresolved code in a module.
fn unresolved_name(b: &mut Builder, module: StrId) -> StrId {
    let path = b.trace.strings.get(module);
    let base = path.rsplit('/').next().unwrap_or(path);
    let name = if base.is_empty() {
        "[unknown]".to_string()
    } else {
        format!("[{base}]")
    };
    b.trace.strings.intern(&name)
}
