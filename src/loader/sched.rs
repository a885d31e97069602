//! Thread scheduling: `SCHED_EVENTS` (one row per switch of a thread in or
//! out of a CPU) → per thread, the times its state changes
//! ([`ThreadSched`]). A switch out says why where the report does
//! (`threadState`: runnable = preempted, interruptible = sleeping,
//! uninterruptible); most reports leave it unknown: off CPU.

use std::collections::HashMap;

use super::builder::{Builder, IdMap};
use super::cells::RawRows;
use super::db::Col::{Optional as Opt, Required as Req};
use super::parallel::{RowSink, Rows, read_rows};
use super::rows::{int, opt_int};
use crate::model::{Ns, SchedState, ThreadIdx, ThreadSched};

/// `ENUM_SAMPLING_THREAD_STATE` ids (the same in every nsys that writes it).
fn switched_out_state(thread_state: Option<i64>) -> SchedState {
    match thread_state {
        Some(1) => SchedState::Preempted,
        Some(2) => SchedState::Sleeping,
        Some(3) => SchedState::Uninterruptible,
        _ => SchedState::OffCpu,
    }
}

pub(super) fn read_sched(b: &mut Builder) -> rusqlite::Result<Vec<ThreadSched>> {
    let Some(sql) = b.select(
        "SCHED_EVENTS",
        &[
            Req("start"),
            Req("globalTid"),
            Req("isSchedIn"),
            Opt("threadState", "NULL"),
        ],
        "",
    ) else {
        return Ok(Vec::new());
    };
    // The table of the most rows of a sampled report: read on every core.
    let mut sched = Vec::new();
    read_rows(b, "SCHED_EVENTS", &sql, |b, rows: Rows<SchedRows>| {
        sched = by_thread(b, rows.0);
    })?;
    Ok(sched)
}

/// Switches as read, before grouping by thread.
#[derive(Default)]
struct SchedRows {
    at: Vec<Ns>,
    global_tid: Vec<i64>,
    state: Vec<SchedState>,
    without_thread: u64,
}

impl RowSink for SchedRows {
    fn reserve(&mut self, rows: usize) {
        self.at.reserve(rows);
        self.global_tid.reserve(rows);
        self.state.reserve(rows);
    }

    fn push(&mut self, row: &RawRows, _: &IdMap) {
        let Some(global_tid) = opt_int(row, 1) else {
            self.without_thread += 1;
            return;
        };
        let state = if opt_int(row, 2).unwrap_or(0) != 0 {
            SchedState::Running
        } else {
            switched_out_state(opt_int(row, 3))
        };
        self.at.push(int(row, 0));
        self.global_tid.push(global_tid);
        self.state.push(state);
    }

    fn append(&mut self, later: Self) {
        self.at.extend(later.at);
        self.global_tid.extend(later.global_tid);
        self.state.extend(later.state);
        self.without_thread += later.without_thread;
    }
}

/// The switches of `rows` per thread, each thread's in time order.
fn by_thread(b: &mut Builder, rows: SchedRows) -> Vec<ThreadSched> {
    if rows.without_thread > 0 {
        b.warn(format!(
            "SCHED_EVENTS: {} switches without a thread (globalTid NULL) are not loaded",
            rows.without_thread
        ));
    }
    let mut per_thread: Vec<(ThreadIdx, Vec<Ns>, Vec<SchedState>)> = Vec::new();
    let mut slot_of: HashMap<i64, usize> = HashMap::new();
    // Switches come in runs of one thread's (in and out): the last one's slot.
    let mut last: Option<(i64, usize)> = None;
    for ((&at, &global_tid), &state) in rows.at.iter().zip(&rows.global_tid).zip(&rows.state) {
        let slot = match last {
            Some((tid, slot)) if tid == global_tid => slot,
            _ => {
                let slot = match slot_of.get(&global_tid) {
                    Some(&slot) => slot,
                    None => {
                        per_thread.push((b.thread(global_tid), Vec::new(), Vec::new()));
                        slot_of.insert(global_tid, per_thread.len() - 1);
                        per_thread.len() - 1
                    }
                };
                last = Some((global_tid, slot));
                slot
            }
        };
        let (_, times, states) = &mut per_thread[slot];
        times.push(at);
        states.push(state);
    }
    let mut sched: Vec<ThreadSched> = per_thread
        .into_iter()
        .map(|(thread, at, state)| sorted(thread, at, state))
        .collect();
    sched.sort_by_key(|s| s.thread);
    sched
}

/// One thread's switches in time order (a switch in and out at the same
/// nanosecond keep the report's order).
fn sorted(thread: ThreadIdx, mut at: Vec<Ns>, mut state: Vec<SchedState>) -> ThreadSched {
    if !at.is_sorted() {
        let mut order: Vec<u32> = (0..at.len() as u32).collect();
        order.sort_by_key(|&i| at[i as usize]);
        at = order.iter().map(|&i| at[i as usize]).collect();
        state = order.iter().map(|&i| state[i as usize]).collect();
    }
    at.shrink_to_fit();
    state.shrink_to_fit();
    ThreadSched { thread, at, state }
}
