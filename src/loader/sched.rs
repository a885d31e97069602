//! Thread scheduling: `SCHED_EVENTS` (one row per switch of a thread in or
//! out of a CPU) → per thread, the times its state changes
//! ([`ThreadSched`]). A switch out says why where the report does
//! (`threadState`: runnable = preempted, interruptible = sleeping,
//! uninterruptible); most reports leave it unknown: off CPU.

use std::collections::HashMap;

use super::builder::Builder;
use super::db::Col::{Optional as Opt, Required as Req};
use super::rows::{int, opt_int};
use super::sampling::stop_if_cancelled;
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
    let report = b.report.clone();
    let mut stmt = report.conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut per_thread: HashMap<ThreadIdx, (Vec<Ns>, Vec<SchedState>)> = HashMap::new();
    let mut without_thread = 0u64;
    let mut read = 0u64;
    while let Some(row) = rows.next()? {
        read += 1;
        stop_if_cancelled(b, read)?;
        let Some(global_tid) = opt_int(row, 1) else {
            without_thread += 1;
            continue;
        };
        let state = if opt_int(row, 2).unwrap_or(0) != 0 {
            SchedState::Running
        } else {
            switched_out_state(opt_int(row, 3))
        };
        let thread = b.thread(global_tid);
        let (at, states) = per_thread.entry(thread).or_default();
        at.push(int(row, 0));
        states.push(state);
    }
    if without_thread > 0 {
        b.warn(format!(
            "SCHED_EVENTS: {without_thread} switches without a thread (globalTid NULL) are not loaded"
        ));
    }
    let mut sched: Vec<ThreadSched> = per_thread
        .into_iter()
        .map(|(thread, (at, state))| sorted(thread, at, state))
        .collect();
    sched.sort_by_key(|s| s.thread);
    Ok(sched)
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
