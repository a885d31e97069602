//! Grouping: findings of one kind, severity and cause in one NVTX range (or
//! one loop: a loop finding carries its loop's range) are one entry, with a
//! count, the total time and the worst instance. 2,456 tiny synchronous
//! copies are one line, not 2,456. Ranges whose names differ only by their
//! numbers (`step 3/forward`, `step 4/forward`) are iterations of one loop:
//! their findings are one entry too ("27 of 40 iterations").

use std::collections::HashMap;

use super::finding::{Finding, FindingKind, Severity};
use super::iterations::{IterationIndex, iteration_depth, masked, prefix};
use crate::analysis::format::human_ns;
use crate::model::{Ns, Trace};

/// The iterations of one loop an entry's instances are in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iterations {
    /// The iteration range, its numbers masked (`step #`).
    pub range: String,
    /// How many iterations have an instance.
    pub with: usize,
    /// How many iterations the loop ran (ranges of that masked path), where
    /// the report was at hand ([`entries_in`]).
    pub of: Option<usize>,
}

/// One entry: the instances (indexes into the findings it was built from,
/// in time order), their total time and the longest one.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub kind: FindingKind,
    pub severity: Severity,
    /// The instances' range; iterations of one loop have it with their
    /// numbers masked (`step #/forward`).
    pub range: Option<String>,
    pub instances: Vec<usize>,
    /// The sum of the instances' spans.
    pub total: Ns,
    /// The longest instance (index into the findings).
    pub worst: usize,
    /// Where the instances are in several iterations of one loop.
    pub iterations: Option<Iterations>,
}

impl Entry {
    pub fn count(&self) -> usize {
        self.instances.len()
    }

    /// One line: the worst instance's message, prefixed for several by the
    /// count (of iterations, for a loop's), the total and the longest ("20
    /// instances, 1.23 ms in all, longest 80.1 µs; ..."; "27 of 40
    /// iterations of 'step #', ...").
    pub fn message(&self, findings: &[Finding]) -> String {
        let worst = &findings[self.worst];
        if self.count() == 1 {
            return worst.message.clone();
        }
        let count = crate::analysis::with_separators(&self.count().to_string());
        let how_many = match &self.iterations {
            None => format!("{count} instances"),
            Some(it) => {
                let of = it.of.map_or(String::new(), |n| {
                    format!(" of {}", crate::analysis::with_separators(&n.to_string()))
                });
                let instances = if it.with == self.count() {
                    String::new()
                } else {
                    format!("{count} instances in ")
                };
                format!("{instances}{}{of} iterations of '{}'", it.with, it.range)
            }
        };
        format!(
            "{how_many}, {} in all, longest {}; longest: {}",
            human_ns(self.total),
            human_ns(worst.end.saturating_sub(worst.start)),
            worst.message
        )
    }
}

/// Groups `findings` (as `analyze` returns them, by start) into entries,
/// ordered by their first instance. A loop's entries do not say how many
/// iterations it ran: [`entries_in`] does.
pub fn entries(findings: &[Finding]) -> Vec<Entry> {
    grouped(findings, None)
}

/// [`entries`], each loop's entry with how many iterations the loop ran in
/// `trace` (the report the findings are of).
pub fn entries_in(trace: &Trace, findings: &[Finding]) -> Vec<Entry> {
    let never = std::sync::atomic::AtomicBool::new(false);
    match super::context::Context::new(trace, &never) {
        Ok(ctx) => {
            let ranges = ctx.ranges.iter().map(|r| (r.parent, r.name));
            grouped(findings, Some(&IterationIndex::of(trace, ranges)))
        }
        Err(_) => grouped(findings, None),
    }
}

fn grouped(findings: &[Finding], index: Option<&IterationIndex>) -> Vec<Entry> {
    // By kind, severity, cause (the fix) and range, its digits masked.
    type Key<'a> = (FindingKind, Severity, &'a str, Option<String>);
    let mut at: HashMap<Key, usize> = HashMap::new();
    let mut out: Vec<Entry> = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        let length = f.end.saturating_sub(f.start).max(0);
        let key = (f.kind, f.severity, f.fix, f.range.as_deref().map(masked));
        match at.get(&key) {
            Some(&e) => {
                let entry = &mut out[e];
                entry.instances.push(i);
                entry.total = entry.total.saturating_add(length);
                let w = &findings[entry.worst];
                if length > w.end.saturating_sub(w.start) {
                    entry.worst = i;
                }
            }
            None => {
                at.insert(key, out.len());
                out.push(Entry {
                    kind: f.kind,
                    severity: f.severity,
                    range: f.range.clone(),
                    instances: vec![i],
                    total: length,
                    worst: i,
                    iterations: None,
                });
            }
        }
    }
    for entry in &mut out {
        set_iterations(entry, findings, index);
    }
    out
}

/// Where an entry's instances lie in ranges that differ by their numbers:
/// the iteration range they differ in, how many of its instances hold one,
/// and (with `index`) how many there are; the entry's range then masked.
fn set_iterations(entry: &mut Entry, findings: &[Finding], index: Option<&IterationIndex>) {
    let paths = entry
        .instances
        .iter()
        .filter_map(|&i| findings[i].range.as_deref());
    let Some(depth) = iteration_depth(paths.clone()) else {
        return;
    };
    let mut seen: Vec<&str> = paths.map(|p| prefix(p, depth)).collect();
    seen.sort_unstable();
    seen.dedup();
    let Some(first) = seen.first() else {
        return;
    };
    let range = masked(first);
    entry.iterations = Some(Iterations {
        of: index.and_then(|x| x.count(&range)),
        with: seen.len(),
        range,
    });
    entry.range = entry.range.as_deref().map(masked);
}

/// The entries as a table: kind, severity, count, total, start and end of
/// the worst instance, range, message.
pub fn entries_table(findings: &[Finding], entries: &[Entry]) -> crate::analysis::Table {
    use crate::analysis::Cell;
    crate::analysis::Table {
        columns: [
            "Kind",
            "Severity",
            "Count",
            "Total (ns)",
            "Start (ns)",
            "End (ns)",
            "Range",
            "Message",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows: entries
            .iter()
            .map(|e| {
                let w = &findings[e.worst];
                vec![
                    Cell::Text(e.kind.name().to_string()),
                    Cell::Text(e.severity.name().to_string()),
                    Cell::Int(e.count() as i64),
                    Cell::Int(e.total),
                    Cell::Int(w.start),
                    Cell::Int(w.end),
                    e.range.clone().map_or(Cell::Empty, Cell::Text),
                    Cell::Text(e.message(findings)),
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(range: &str, start: Ns, end: Ns) -> Finding {
        Finding {
            kind: FindingKind::RangeEndsBeforeGpuWork,
            severity: Severity::Warning,
            start,
            end,
            range: Some(range.to_string()),
            events: Vec::new(),
            message: format!("'{range}' ends early"),
            fix: "fix",
        }
    }

    /// Findings in `step 1/forward`, `step 2/forward`, ... are one entry of
    /// the loop `step #`; another phase, and a range whose name repeats
    /// without numbers, are entries of their own.
    #[test]
    fn iterations_are_one_entry() {
        let found = vec![
            finding("step 1/forward", 0, 10),
            finding("step 1/backward", 10, 20),
            finding("step 2/forward", 100, 130),
            finding("step 3/forward", 200, 210),
            finding("other", 300, 310),
            finding("other", 400, 410),
        ];
        let grouped = entries(&found);
        assert_eq!(grouped.len(), 3, "{grouped:?}");
        let forward = &grouped[0];
        assert_eq!(forward.instances, vec![0, 2, 3]);
        assert_eq!(forward.range.as_deref(), Some("step #/forward"));
        assert_eq!(forward.worst, 2);
        let it = forward.iterations.as_ref().expect("a loop's entry");
        assert_eq!((it.range.as_str(), it.with, it.of), ("step #", 3, None));
        assert!(
            forward.message(&found).starts_with(
                "3 iterations of 'step #', 50 ns in all, longest 30 ns; longest: 'step 2/forward'"
            ),
            "{}",
            forward.message(&found)
        );
        assert_eq!(grouped[1].range.as_deref(), Some("step 1/backward"));
        assert_eq!(grouped[1].iterations, None);
        assert_eq!(grouped[2].instances, vec![4, 5]);
        assert_eq!(grouped[2].iterations, None);
        assert!(grouped[2].message(&found).starts_with("2 instances"));
    }
}
