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
    let mut per_thread: Vec<(ThreadIdx, Vec<Ns>, Vec<SchedState>)> = Vec::new();
    let mut slot_of: HashMap<i64, usize> = HashMap::new();
    // Switches come in runs of one thread's (in and out): the last one's slot.
    let mut last: Option<(i64, usize)> = None;
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
        let (_, at, states) = &mut per_thread[slot];
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
        .map(|(thread, at, state)| sorted(thread, at, state))
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
