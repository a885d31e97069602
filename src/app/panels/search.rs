//! Find events by name (substring, or a regex), step through them in time order.
//!
//! The window searches on a worker ([`Search::start`], [`Search::poll`]): a
//! scan of 10M events takes longer than a frame. Tests and lesson steps,
//! which need the matches at once, run it in place ([`Search::run`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use regex::Regex;

use crate::analysis::stats::{RangeRule, TimeRange};
use crate::app::job::Job;
use crate::app::state::events::{EventRef, Table};
use crate::app::widgets::format::display_name;
use crate::model::{StrId, Trace};

/// At most this many matches are kept: stepping through more is not useful,
/// and the list must stay small next to a 10M-event trace.
const MAX_MATCHES: usize = 1_000_000;

#[derive(Default)]
pub struct Search {
    pub query: String,
    pub regex: bool,
    /// Shared with a search of the grown report that starts from them.
    pub matches: Arc<Vec<EventRef>>,
    /// Position in `matches` of the event last shown.
    pub current: Option<usize>,
    pub error: Option<String>,
    /// By `StrId`: names that match, for outlining on the timeline.
    pub mask: Vec<bool>,
    pub truncated: bool,
    /// The query and mode the matches are for.
    ran_for: Option<(String, bool)>,
    /// The query the matches are for, to run again on a trace that grew.
    last: Option<Query>,
    /// The search under way, and what to do with its first match.
    job: Job<Found>,
    pending: Option<(Query, Then)>,
}

/// What a search looks for.
#[derive(Clone, Debug, PartialEq)]
enum Query {
    /// The search box: a substring (any case) or a regex.
    Text { query: String, regex: bool },
    /// A stats row's instances: events whose name, as that report prints
    /// it, is `name`, and that `rule` counts in `range`.
    Exact {
        name: String,
        range: Option<TimeRange>,
        rule: RangeRule,
    },
}

/// What the window does with a search's result once it is in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Then {
    /// Nothing: the matches are outlined.
    Outline,
    /// Steps to the next (true) or previous match and reveals it with its context.
    Reveal(bool),
    /// Steps to the first match and zooms to it (a stats row's instances).
    Show,
}

/// What a search over a grown trace starts from: the matches on an earlier
/// state, and, by [`Table::ALL`], the rows of that state the grown trace
/// holds at the same indexes (0 for a table numbered anew): those rows are
/// not looked at again, and their matches stand.
struct Earlier {
    matches: Arc<Vec<EventRef>>,
    rows: [usize; Table::ALL.len()],
}

impl Earlier {
    /// What the matches `matches` on `old` leave to look at in `new`, a later
    /// state of the same report.
    fn of(matches: &Arc<Vec<EventRef>>, old: &Trace, new: &Trace) -> Earlier {
        let rows = Table::ALL.map(|table| {
            if !new.lineage.keeps_indexes_of(&old.lineage, table.into()) {
                return 0;
            }
            match table {
                // A range open in `old` was counted to its last NVTX time:
                // its end may have moved since, so it is looked at again,
                // and every range after it (matches stand below a row).
                Table::Nvtx => (old.nvtx.unended.iter())
                    .position(|&open| open)
                    .unwrap_or(old.nvtx.spans.len()),
                _ => table.spans(old).len(),
            }
        });
        Earlier {
            matches: matches.clone(),
            rows,
        }
    }

    /// The earlier matches that stand.
    fn standing(&self) -> impl Iterator<Item = EventRef> + '_ {
        self.matches.iter().copied().filter(|ev| {
            let at = Table::ALL.iter().position(|&t| t == ev.table);
            at.is_some_and(|t| (ev.index as usize) < self.rows[t])
        })
    }
}

/// A finished search.
struct Found {
    mask: Vec<bool>,
    matches: Vec<EventRef>,
    truncated: bool,
    error: Option<String>,
}

impl Search {
    /// Runs the query in place: names first (few), then events whose name
    /// matches. The window uses [`Search::start`] instead.
    pub fn run(&mut self, trace: &Trace) {
        let query = self.text_query();
        self.pending = None;
        self.job.cancel();
        if self.query.trim().is_empty() {
            self.clear();
            return;
        }
        if let Some(found) = find(trace, &query, None, &AtomicBool::new(false)) {
            self.apply(&query, found);
        }
    }

    /// Starts the query on a worker; [`Search::poll`] takes the result and
    /// does `then`. An empty query clears at once. The same query already
    /// under way is not started again (only `then` changes).
    pub fn start(
        &mut self,
        trace: &Arc<Trace>,
        repaint: Option<eframe::egui::Context>,
        then: Then,
    ) {
        let query = self.text_query();
        self.launch(trace, repaint, query, then, None);
    }

    /// A stats row was clicked: looks for its instances on a worker, then
    /// shows the first ([`Then::Show`]).
    pub fn start_exact(
        &mut self,
        trace: &Arc<Trace>,
        repaint: Option<eframe::egui::Context>,
        name: &str,
        range: Option<TimeRange>,
        rule: RangeRule,
    ) {
        self.query = name.to_string();
        self.regex = false;
        let query = Query::Exact {
            name: name.to_string(),
            range,
            rule,
        };
        self.launch(trace, repaint, query, Then::Show, None);
    }

    fn launch(
        &mut self,
        trace: &Arc<Trace>,
        repaint: Option<eframe::egui::Context>,
        query: Query,
        then: Then,
        earlier: Option<Earlier>,
    ) {
        if let Query::Text { query: raw, .. } = &query
            && raw.trim().is_empty()
        {
            self.job.cancel();
            self.pending = None;
            self.clear();
            return;
        }
        if let Some((running, _)) = &self.pending
            && *running == query
            && self.job.is_running()
        {
            self.pending = Some((query, then));
            return;
        }
        let (shared, for_worker) = (trace.clone(), query.clone());
        let started = self.job.start(
            "sightline-search",
            repaint.map(crate::app::job::repaint),
            move |cancel| find(&shared, &for_worker, earlier.as_ref(), cancel),
        );
        self.pending = started.then_some((query, then));
    }

    /// Takes a finished search's matches; returns the match to show and how,
    /// when the search asked for one.
    pub fn poll(&mut self) -> Option<(EventRef, Then)> {
        let found = self.job.take()?;
        let (query, then) = self.pending.take()?;
        self.apply(&query, found);
        let forward = match then {
            Then::Outline => return None,
            Then::Reveal(forward) => forward,
            Then::Show => true,
        };
        self.step(forward).map(|ev| (ev, then))
    }

    /// The report grew from `old` to `trace`: the last query runs again, and
    /// its matches replace the old ones when they are in (the old ones stay
    /// outlined meanwhile). Only the events `trace` added are looked at, for
    /// each table whose events kept their indexes ([`crate::model::Lineage`]):
    /// the matches on `old` stand for the rest.
    pub fn refresh(
        &mut self,
        old: &Trace,
        trace: &Arc<Trace>,
        repaint: Option<eframe::egui::Context>,
    ) {
        // A search under way reads the old trace: it starts again, whole,
        // and still does what it was asked to when it is in.
        let (query, then, earlier) = match (self.pending.take(), self.last.clone()) {
            (Some((query, then)), _) => (query, then, None),
            (None, Some(last)) => {
                let earlier = (!self.truncated).then(|| Earlier::of(&self.matches, old, trace));
                (last, Then::Outline, earlier)
            }
            (None, None) => return,
        };
        self.job.cancel();
        self.launch(trace, repaint, query, then, earlier);
    }

    /// Whether a search is under way.
    pub fn is_searching(&self) -> bool {
        self.job.is_running()
    }

    /// Blocks until the search under way is in and takes it (tests).
    pub fn wait(&mut self) -> Option<(EventRef, Then)> {
        let found = self.job.wait()?;
        self.job = Job::default();
        let (query, then) = self.pending.take()?;
        self.apply(&query, found);
        match then {
            Then::Outline => None,
            Then::Reveal(forward) => self.step(forward).map(|ev| (ev, then)),
            Then::Show => self.step(true).map(|ev| (ev, then)),
        }
    }

    fn text_query(&self) -> Query {
        Query::Text {
            query: self.query.clone(),
            regex: self.regex,
        }
    }

    fn apply(&mut self, query: &Query, found: Found) {
        self.last = Some(query.clone());
        self.error = found.error;
        self.matches = Arc::new(found.matches);
        self.truncated = found.truncated;
        self.mask = found.mask;
        self.current = None;
        match query {
            Query::Text { query, regex } => {
                if self.error.is_some() {
                    self.clear_matches();
                } else {
                    self.ran_for = Some((query.clone(), *regex));
                }
            }
            Query::Exact { name, .. } => self.ran_for = Some((name.clone(), false)),
        }
    }

    /// Whether the matches are a stats row's instances: the events named
    /// `name` that `rule` counts in `range`.
    pub fn has_instances_of(&self, name: &str, range: Option<TimeRange>, rule: RangeRule) -> bool {
        matches!(&self.last, Some(Query::Exact { name: n, range: r, rule: u })
            if n == name && *r == range && *u == rule)
    }

    /// True when the matches are not for the query as it reads now (edited
    /// since, or never run).
    pub fn is_stale(&self) -> bool {
        self.ran_for.as_ref() != Some(&(self.query.clone(), self.regex))
    }

    fn clear_matches(&mut self) {
        self.ran_for = None;
        self.last = None;
        self.matches = Arc::default();
        self.mask.clear();
        self.current = None;
    }

    pub fn clear(&mut self) {
        self.query.clear();
        self.error = None;
        self.clear_matches();
    }

    /// Moves to the next (or previous) match and returns it.
    pub fn step(&mut self, forward: bool) -> Option<EventRef> {
        let n = self.matches.len();
        if n == 0 {
            return None;
        }
        let next = match (self.current, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(c), true) => (c + 1) % n,
            (Some(c), false) => (c + n - 1) % n,
        };
        self.current = Some(next);
        Some(self.matches[next])
    }
}

/// Every event `query` matches, in time order (at most [`MAX_MATCHES`]), and
/// the names that match; None when cancelled.
fn find(
    trace: &Trace,
    query: &Query,
    earlier: Option<&Earlier>,
    cancel: &AtomicBool,
) -> Option<Found> {
    let (mask, range, rule): (Vec<bool>, Option<TimeRange>, RangeRule) = match query {
        Query::Text { query: raw, regex } => {
            let q = raw.trim();
            let pred: Box<dyn Fn(&str) -> bool> = if *regex {
                match Regex::new(q) {
                    Ok(re) => Box::new(move |s: &str| re.is_match(s)),
                    Err(e) => {
                        return Some(Found {
                            mask: Vec::new(),
                            matches: Vec::new(),
                            truncated: false,
                            error: Some(format!("bad regex: {e}")),
                        });
                    }
                }
            } else {
                let ql = q.to_lowercase();
                Box::new(move |s: &str| s.to_lowercase().contains(&ql))
            };
            // Both forms match: `cudaMemcpy_v3020` and `cudaMemcpy`.
            let mask = trace
                .strings
                .iter()
                .map(|(id, s)| {
                    id.0 != 0
                        && (pred(s) || (display_name(s).len() != s.len() && pred(display_name(s))))
                })
                .collect();
            (mask, None, RangeRule::default())
        }
        Query::Exact { name, range, rule } => {
            let mask = trace
                .strings
                .iter()
                .map(|(id, s)| {
                    id.0 != 0
                        && !s.is_empty()
                        && (s == name
                            || display_name(s) == name
                            || name.strip_suffix(s).is_some_and(|p| p.ends_with(':')))
                })
                .collect();
            (mask, *range, *rule)
        }
    };
    let mut found: Vec<(i64, EventRef)> = Vec::new();
    let mut truncated = false;
    let hit = |id: StrId| mask.get(id.0 as usize).copied().unwrap_or(false);
    // A kernel also matches by its short name: decided once per demangled
    // name, and per instance only where an instance's names are unusual.
    let kernels = &trace.kernels;
    let mut short_hit_by_name = vec![false; mask.len()];
    for (name, (short, _)) in kernels.names.usual() {
        if let Some(slot) = short_hit_by_name.get_mut(name.0 as usize) {
            *slot = short.0 != 0 && hit(short);
        }
    }
    let unusual = kernels.names.has_unusual();
    let short_hit = |i: usize, name: StrId| {
        if unusual {
            kernels.short_name(i).is_some_and(|s| s.0 != 0 && hit(s))
        } else {
            short_hit_by_name
                .get(name.0 as usize)
                .copied()
                .unwrap_or(false)
        }
    };
    let before: Vec<EventRef> = earlier.map_or_else(Vec::new, |e| e.standing().collect());
    'tables: for (t, table) in Table::ALL.into_iter().enumerate() {
        let spans = table.spans(trace);
        let from = earlier.map_or(0, |e| e.rows[t]);
        for (i, &id) in spans.name.iter().enumerate().skip(from) {
            if i % (1 << 16) == 0 && cancel.load(Ordering::Relaxed) {
                return None;
            }
            let named = hit(id) || (table == Table::Kernel && short_hit(i, id));
            if named && range.is_none_or(|r| rule.admits(r, spans.start[i], spans.end(i))) {
                if before.len() + found.len() >= MAX_MATCHES {
                    truncated = true;
                    break 'tables;
                }
                found.push((spans.start[i], EventRef::new(table, i as u32)));
            }
        }
    }
    found.sort_by_key(|&(s, _)| s);
    // The earlier matches are in order already: merged, not sorted again
    // (the new events may start before some of them). Ties go as one
    // search's do: by table, then row.
    let order = |start: i64, ev: &EventRef| {
        let table = Table::ALL.iter().position(|&t| t == ev.table);
        (start, table, ev.index)
    };
    let mut matches = Vec::with_capacity(before.len() + found.len());
    let mut new = found.into_iter().peekable();
    for ev in before {
        let key = order(ev.table.spans(trace).start[ev.index as usize], &ev);
        while let Some((_, later)) = new.next_if(|(s, e)| order(*s, e) < key) {
            matches.push(later);
        }
        matches.push(ev);
    }
    matches.extend(new.map(|(_, e)| e));
    let error = match query {
        Query::Exact { name, rule, .. } if matches.is_empty() => {
            let verb = match rule {
                RangeRule::StartsInside => "starts in",
                RangeRule::Overlapping => "overlaps",
            };
            Some(format!("no event named {name:?} {verb} the range"))
        }
        _ => None,
    };
    Some(Found {
        mask,
        matches,
        truncated,
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_on_a_worker_gives_what_one_in_place_gives() {
        let trace = Arc::new(crate::loader::load_fixture("sync_timing.sqlite"));
        let mut here = Search {
            query: "cuda".into(),
            ..Search::default()
        };
        here.run(&trace);
        assert!(!here.matches.is_empty());
        let mut there = Search {
            query: "cuda".into(),
            ..Search::default()
        };
        there.start(&trace, None, Then::Reveal(true));
        assert!(there.matches.is_empty(), "nothing until the worker is done");
        assert!(there.is_stale());
        let (first, then) = there.wait().expect("a match to show");
        assert_eq!(then, Then::Reveal(true));
        assert_eq!(there.matches, here.matches);
        assert_eq!(Some(first), here.matches.first().copied());
        assert!(!there.is_stale());
        // A stats row's instances, and an empty query that clears at once.
        let kernel = EventRef::new(Table::Kernel, 0).name(&trace).to_string();
        there.start_exact(&trace, None, &kernel, None, RangeRule::default());
        let (shown, then) = there.wait().expect("an instance");
        assert_eq!(then, Then::Show);
        assert_eq!(shown.name(&trace), kernel);
        there.query = "  ".into();
        there.start(&trace, None, Then::Outline);
        assert!(there.matches.is_empty() && !there.is_searching());
    }
}
