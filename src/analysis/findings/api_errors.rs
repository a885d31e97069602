//! CUDA API calls that returned an error.

use std::sync::atomic::AtomicBool;

use super::context::Context;
use super::finding::{Finding, FindingKind, Severity};
use crate::analysis::cancel::{Cancelled, check};
use crate::model::{EventId, EventKind};

const FIX: &str = "A CUDA call failed; unchecked, later results are wrong or stale. Check every \
return value. cudaErrorNotReady from cudaEventElapsedTime/cudaEventQuery means the stop event \
had not completed: call cudaEventSynchronize on it first.";

/// `cudaError_t` / `CUresult` names for the codes people meet most.
fn error_name(code: i32) -> &'static str {
    match code {
        1 => "invalid value",
        2 => "out of memory",
        3 => "not initialized",
        4 => "deinitialized",
        98 | 200 => "invalid device function / image",
        100 => "no device",
        101 => "invalid device",
        209 => "no kernel image for device",
        400 => "invalid resource handle",
        500 => "not found",
        600 => "not ready",
        700 => "illegal address",
        701 => "launch out of resources",
        702 => "launch timeout",
        719 => "launch failure",
        _ => "error",
    }
}

pub(super) fn api_errors(
    ctx: &Context,
    out: &mut Vec<Finding>,
    cancel: &AtomicBool,
) -> Result<(), Cancelled> {
    let api = &ctx.trace.cuda_api;
    for (th, thread) in ctx.trace.threads.iter().enumerate() {
        check(cancel)?;
        let th = th as u32;
        // Consecutive failing calls of one name, code and range are one finding.
        let mut group: Vec<usize> = Vec::new();
        let key = |a: usize| {
            let (s, e) = ctx.api_span(a);
            (
                api.spans.name[a],
                api.return_value.at(a),
                ctx.enclosing(th, s, e),
            )
        };
        let mut flush = |group: &mut Vec<usize>| {
            let Some(&first) = group.first() else {
                return;
            };
            let last = group[group.len() - 1];
            let code = api.return_value.at(first);
            let (start, end) = (ctx.api_span(first).0, ctx.api_span(last).1);
            out.push(Finding {
                kind: FindingKind::ApiError,
                // "Not ready" is how a poll answers; the caller may have meant it.
                severity: if code == 600 {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                start,
                end,
                range: ctx.enclosing_path(th, start, ctx.api_span(first).1),
                events: group
                    .iter()
                    .take(1000)
                    .map(|&a| EventId::new(EventKind::Api, a as u32))
                    .collect(),
                message: format!(
                    "{} call{} to {} returned {} ({}) on thread {}",
                    group.len(),
                    if group.len() == 1 { "" } else { "s" },
                    ctx.api_name(first),
                    code,
                    error_name(code),
                    thread.tid
                ),
                fix: FIX,
            });
            group.clear();
        };
        for a in thread.cuda_api.rows().map(|i| i as usize) {
            if api.return_value.get(a).unwrap_or(0) == 0 {
                continue;
            }
            if group.last().is_some_and(|&prev| key(prev) != key(a)) {
                flush(&mut group);
            }
            group.push(a);
        }
        flush(&mut group);
    }
    Ok(())
}
