//! Find events by name (substring, or a regex), step through them in time order.

use regex::Regex;

use super::events::{EventRef, Table};
use super::format::display_name;
use crate::analysis::stats::{RangeRule, TimeRange};
use crate::model::Trace;

/// At most this many matches are kept: stepping through more is not useful,
/// and the list must stay small next to a 10M-event trace.
const MAX_MATCHES: usize = 1_000_000;

#[derive(Default)]
pub struct Search {
    pub query: String,
    pub regex: bool,
    pub matches: Vec<EventRef>,
    /// Position in `matches` of the event last shown.
    pub current: Option<usize>,
    pub error: Option<String>,
    /// By `StrId`: names that match, for outlining on the timeline.
    pub mask: Vec<bool>,
    pub truncated: bool,
    /// Matches are limited to the events of this span (a stats row)...
    pub range: Option<TimeRange>,
    /// ...that the span's rule counts (start in it, or overlap it).
    pub rule: RangeRule,
    /// The query and mode the matches are for.
    ran_for: Option<(String, bool)>,
}

impl Search {
    /// Runs the query: names first (few), then events whose name matches.
    pub fn run(&mut self, trace: &Trace) {
        self.error = None;
        let q = self.query.trim().to_string();
        if q.is_empty() {
            self.clear();
            return;
        }
        let pred: Box<dyn Fn(&str) -> bool> = if self.regex {
            match Regex::new(&q) {
                Ok(re) => Box::new(move |s: &str| re.is_match(s)),
                Err(e) => {
                    self.error = Some(format!("bad regex: {e}"));
                    self.clear_matches();
                    return;
                }
            }
        } else {
            let ql = q.to_lowercase();
            Box::new(move |s: &str| s.to_lowercase().contains(&ql))
        };
        // Both forms match: `cudaMemcpy_v3020` and `cudaMemcpy`.
        let mask: Vec<bool> = trace
            .strings
            .iter()
            .map(|(id, s)| {
                id.0 != 0
                    && (pred(s) || (display_name(s).len() != s.len() && pred(display_name(s))))
            })
            .collect();
        self.range = None;
        self.rule = RangeRule::default();
        self.set_mask(trace, mask);
        self.ran_for = Some((self.query.clone(), self.regex));
    }

    /// True when the matches are not for the query as it reads now (edited
    /// since, or never run).
    pub fn is_stale(&self) -> bool {
        self.ran_for.as_ref() != Some(&(self.query.clone(), self.regex))
    }

    /// The instances of a stats row: events whose name, as that report prints
    /// it, is `name` (API names without `_vNNNN`, NVTX ranges as
    /// `domain:name`), and that `rule` counts in `range` when one is given
    /// (the rule the row's numbers were computed by).
    pub fn exact(&mut self, trace: &Trace, name: &str, range: Option<TimeRange>, rule: RangeRule) {
        self.query = name.to_string();
        self.regex = false;
        self.error = None;
        let mask: Vec<bool> = trace
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
        self.range = range;
        self.rule = rule;
        self.set_mask(trace, mask);
        self.ran_for = Some((self.query.clone(), self.regex));
        if self.matches.is_empty() {
            let verb = match rule {
                RangeRule::StartsInside => "starts in",
                RangeRule::Overlapping => "overlaps",
            };
            self.error = Some(format!("no event named {name:?} {verb} the range"));
        }
    }

    fn set_mask(&mut self, trace: &Trace, mask: Vec<bool>) {
        let mut found: Vec<(i64, EventRef)> = Vec::new();
        self.truncated = false;
        'tables: for table in Table::ALL {
            let spans = table.spans(trace);
            let kernel_short = (table == Table::Kernel).then_some(&trace.kernels.short_name);
            for (i, id) in spans.name.iter().enumerate() {
                let short_hit = kernel_short
                    .and_then(|s| s.get(i))
                    .is_some_and(|s| mask.get(s.0 as usize).copied().unwrap_or(false));
                let in_range = self
                    .range
                    .is_none_or(|r| self.rule.admits(r, spans.start[i], spans.end[i]));
                if in_range && (mask.get(id.0 as usize).copied().unwrap_or(false) || short_hit) {
                    if found.len() >= MAX_MATCHES {
                        self.truncated = true;
                        break 'tables;
                    }
                    found.push((spans.start[i], EventRef::new(table, i as u32)));
                }
            }
        }
        found.sort_by_key(|&(s, _)| s);
        self.matches = found.into_iter().map(|(_, e)| e).collect();
        self.current = None;
        self.mask = mask;
    }

    fn clear_matches(&mut self) {
        self.ran_for = None;
        self.matches.clear();
        self.mask.clear();
        self.current = None;
    }

    pub fn clear(&mut self) {
        self.query.clear();
        self.range = None;
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
