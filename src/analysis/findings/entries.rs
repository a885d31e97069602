//! Grouping: findings of one kind and severity in one NVTX range (or one
//! loop: a loop finding carries its loop's range) are one entry, with a
//! count, the total time and the worst instance. 2,456 tiny synchronous
//! copies are one line, not 2,456.

use std::collections::HashMap;

use super::finding::{Finding, FindingKind, Severity};
use crate::analysis::format::human_ns;
use crate::model::Ns;

/// One entry: the instances (indexes into the findings it was built from,
/// in time order), their total time and the longest one.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub kind: FindingKind,
    pub severity: Severity,
    pub range: Option<String>,
    pub instances: Vec<usize>,
    /// The sum of the instances' spans.
    pub total: Ns,
    /// The longest instance (index into the findings).
    pub worst: usize,
}

impl Entry {
    pub fn count(&self) -> usize {
        self.instances.len()
    }

    /// One line: the worst instance's message, prefixed for several by the
    /// count, the total and the longest ("20 instances, 1.23 ms in all,
    /// longest 80.1 µs; ...").
    pub fn message(&self, findings: &[Finding]) -> String {
        let worst = &findings[self.worst];
        if self.count() == 1 {
            return worst.message.clone();
        }
        format!(
            "{} instances, {} in all, longest {}; longest: {}",
            crate::analysis::with_separators(&self.count().to_string()),
            human_ns(self.total),
            human_ns(worst.end.saturating_sub(worst.start)),
            worst.message
        )
    }
}

/// Groups `findings` (as `analyze` returns them, by start) into entries,
/// ordered by their first instance.
pub fn entries(findings: &[Finding]) -> Vec<Entry> {
    let mut at: HashMap<(FindingKind, Severity, Option<&str>), usize> = HashMap::new();
    let mut out: Vec<Entry> = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        let length = f.end.saturating_sub(f.start).max(0);
        let key = (f.kind, f.severity, f.range.as_deref());
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
                });
            }
        }
    }
    out
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
