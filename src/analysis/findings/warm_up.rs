//! `warm-up-included`: the first instance of a repeated range (iterations
//! `step 1`, `step 2` too) that lasts far longer than the others because it
//! pays one-time CUDA costs: module or library loading (lazy loading inside
//! its first launches too), context creation, first allocations, JIT. Not a
//! range without GPU work (a compiler's CPU-only ranges run long the first
//! time for reasons of their own), and not a first instance whose excess is
//! waiting for earlier queued work (`range-waits-on-earlier-work` says so).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;

use super::context::{ApiClass, Context};
use super::finding::{Finding, FindingKind, Severity, Thresholds};
use super::timing::range_work;
use crate::analysis::cancel::{Cancelled, check};
use crate::analysis::format::human_ns;
use crate::analysis::like::like;
use crate::model::{EventId, EventKind, Ns};

const WARM_UP_FIX: &str = "The first iteration pays one-time costs (lazy module loading, \
context creation, first allocations). Run a warm-up iteration before timing and exclude it \
from the statistics.";

/// CUDA calls whose cost is paid once: module and library loading, JIT
/// linking, context creation, allocation (as the report spells them, less
/// their `_v2`/`_vNNNN` suffix).
const ONE_TIME_CALLS: [&str; 24] = [
    "cuModuleLoad%",
    "cuLibraryLoad%",
    "cudaLibraryLoad%",
    "cuModuleGetFunction",
    "cuModuleGetGlobal%",
    "cuLibraryGetKernel",
    "cuLibraryGetModule",
    "cuLink%",
    "nvrtc%",
    "cuInit",
    "cuCtxCreate%",
    "cuDevicePrimaryCtxRetain",
    "cudaSetDevice",
    "cudaMalloc%",
    "cuMemAlloc%",
    "cudaHostAlloc",
    "cuMemHostAlloc%",
    "cudaHostRegister",
    "cuMemHostRegister%",
    "cuMemCreate",
    "cuMemMap",
    "cuMemAddressReserve",
    "cudaFuncGetAttributes",
    "cudaGetDeviceProperties%",
];

fn median(values: &mut [Ns]) -> f64 {
    values.sort_unstable();
    let n = values.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => values[n / 2] as f64,
        _ => (values[n / 2 - 1] as f64 + values[n / 2] as f64) / 2.0,
    }
}

/// A range's duration less the syncs before its first launch: draining work
/// queued before the range is not warm-up.
fn adjusted_duration(ctx: &Context, r: usize) -> Ns {
    let range = &ctx.ranges[r];
    let mut leading = 0;
    for api in ctx.api_calls(range.thread, range.start, range.end) {
        if ctx.work_of(range.thread, api).next().is_some() {
            break;
        }
        if ctx.class(api).is_sync() {
            let (s, e) = ctx.api_span(api);
            leading = Ns::saturating_add(leading, e.min(range.end).saturating_sub(s));
        }
    }
    range
        .end
        .saturating_sub(range.start)
        .saturating_sub(leading)
}

/// Time in range `r`'s CUDA calls by the names that count as one-time work:
/// [`ONE_TIME_CALLS`], and launches (whose first call of a kernel loads its
/// module lazily).
fn one_time_calls<'a>(ctx: &'a Context, r: usize) -> HashMap<&'a str, (Ns, usize)> {
    let range = &ctx.ranges[r];
    let mut by_name: HashMap<&str, (Ns, usize)> = HashMap::new();
    for api in ctx.api_calls(range.thread, range.start, range.end) {
        let name = ctx.api_name(api);
        let one_time =
            ctx.class(api) == ApiClass::Launch || ONE_TIME_CALLS.iter().any(|p| like(name, p));
        if !one_time {
            continue;
        }
        let (s, e) = ctx.api_span(api);
        let slot = by_name.entry(name).or_insert((0, api));
        slot.0 = slot.0.saturating_add(e.saturating_sub(s).max(0));
        // The longest call of the name names it in the message.
        let (ls, le) = ctx.api_span(slot.1);
        if e.saturating_sub(s) > le.saturating_sub(ls) {
            slot.1 = api;
        }
    }
    by_name
}

/// The one-time work of `first` against a later instance `later`: per name,
/// how much longer its calls take in the first (all of it for a name the
/// later one does not call), largest first, with the call that shows it.
fn one_time_work<'a>(ctx: &'a Context, first: usize, later: usize) -> Vec<(Ns, &'a str, usize)> {
    let after = one_time_calls(ctx, later);
    let mut extra: Vec<(Ns, &str, usize)> = one_time_calls(ctx, first)
        .into_iter()
        .map(|(name, (time, api))| {
            let usual = after.get(name).map_or(0, |&(t, _)| t);
            (time.saturating_sub(usual), name, api)
        })
        .filter(|&(extra, _, _)| extra > 0)
        .collect();
    extra.sort_by_key(|&(t, name, _)| (std::cmp::Reverse(t), name));
    extra
}

pub(super) fn warm_up_included(
    ctx: &Context,
    t: &Thresholds,
    out: &mut Vec<Finding>,
    cancel: &AtomicBool,
) -> Result<(), Cancelled> {
    // A first instance whose sync waited for earlier work is that finding's,
    // not warm-up.
    let waiting: HashSet<(Ns, Ns)> = (out.iter())
        .filter(|f| f.kind == FindingKind::RangeWaitsOnEarlierWork)
        .map(|f| (f.start, f.end))
        .collect();
    // Instances of the same range: same track (thread and domain), same path
    // (by number: spelling each range's path out is quadratic in depth).
    let mut groups: HashMap<u32, Vec<usize>> = HashMap::new();
    for (r, range) in ctx.ranges.iter().enumerate() {
        if r % 4096 == 0 {
            check(cancel)?;
        }
        if range.unended {
            continue;
        }
        groups.entry(ctx.path_id[r]).or_default().push(r);
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
    for members in &mut groups {
        members.sort_by_key(|&r| ctx.ranges[r].start);
    }
    // Deepest first: a range around a reported one (`iteration 0` around its
    // `runKernel`) whose one-time work is the same calls says nothing new.
    groups.sort_by_key(|members| {
        let first = &ctx.ranges[members[0]];
        (std::cmp::Reverse(first.depth), first.start)
    });
    let mut reported: HashSet<usize> = HashSet::new();
    for members in groups {
        if members.len() < t.warmup_min_instances.max(2) {
            continue;
        }
        if let Some((finding, longest)) = judge(ctx, t, &members, &waiting)
            && reported.insert(longest)
        {
            out.push(finding);
        }
    }
    Ok(())
}

/// The warm-up finding of a repeated range's instances (by start), if its
/// first is a warm-up, with the call that shows most of its one-time work.
fn judge(
    ctx: &Context,
    t: &Thresholds,
    members: &[usize],
    waiting: &HashSet<(Ns, Ns)>,
) -> Option<(Finding, usize)> {
    let first = members[0];
    let range = &ctx.ranges[first];
    let first_time = adjusted_duration(ctx, first);
    let mut others: Vec<Ns> = members[1..]
        .iter()
        .map(|&r| adjusted_duration(ctx, r))
        .collect();
    let typical = median(&mut others);
    let excess = first_time as f64 - typical;
    if (first_time as f64) <= t.warmup_ratio * typical || excess < t.warmup_min_excess_ns as f64 {
        return None;
    }
    if waiting.contains(&(range.start, range.end)) || range_work(ctx, first).is_empty() {
        return None;
    }
    let one_time = one_time_work(ctx, first, members[1]);
    let one_time_total: Ns = one_time.iter().map(|&(t, _, _)| t).sum();
    if (one_time_total as f64) < t.warmup_min_one_time_share * excess {
        return None;
    }
    let &(_, _, longest) = one_time.first()?;
    let shown = &one_time[..one_time.len().min(3)];
    let causes: Vec<String> = shown
        .iter()
        .map(|&(d, name, _)| format!("{name} {}", human_ns(d)))
        .collect();
    let path = ctx.path(first);
    let mut events = vec![ctx.range_event(first)];
    events.extend(
        shown
            .iter()
            .map(|&(_, _, a)| EventId::new(EventKind::Api, a as u32)),
    );
    let finding = Finding {
        kind: FindingKind::WarmUpIncluded,
        severity: Severity::Warning,
        start: range.start,
        end: range.end,
        message: format!(
            "the first of {} '{path}' ranges takes {} against a median of {} for the others \
             ({:.1}×); one-time CUDA work in it: {} ({} in all)",
            members.len(),
            human_ns(first_time),
            human_ns(typical as Ns),
            first_time as f64 / typical.max(1.0),
            causes.join(", "),
            human_ns(one_time_total),
        ),
        range: Some(path),
        events,
        fix: WARM_UP_FIX,
    };
    Some((finding, longest))
}
