//! What nsys logged while recording: `DIAGNOSTIC_EVENT` (nsys 2021 and later), each message
//! with its severity labelled as the report's `ENUM_DIAGNOSTIC_SEVERITY_LEVEL` labels it. A
//! report with no CUDA events says why here ("No CUDA events collected. Does the process use
//! CUDA?"); the viewer lists these with the loader's warnings. A report without the table has
//! none; one that cannot be read is a warning, never a failed load.

use std::collections::HashMap;

use super::builder::Builder;
use crate::model::Diagnostic;

const TABLE: &str = "DIAGNOSTIC_EVENT";
const SEVERITIES: &str = "ENUM_DIAGNOSTIC_SEVERITY_LEVEL";

pub(super) fn read_diagnostics(b: &mut Builder) {
    let report = b.report.clone();
    if !["severity", "text"]
        .iter()
        .all(|c| report.has_column(TABLE, c))
    {
        return;
    }
    let labels = severity_labels(&report.conn);
    let order = if report.has_column(TABLE, "timestamp") {
        " ORDER BY timestamp"
    } else {
        ""
    };
    let sql = format!("SELECT severity, text FROM {TABLE}{order}");
    let rows = report.conn.prepare(&sql).and_then(|mut q| {
        q.query_map([], |r| {
            Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<String>>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()
    });
    match rows {
        Ok(rows) => b.trace.info.diagnostics = deduplicated(rows, &labels),
        Err(e) => b.trace.warnings.push(format!(
            "nsys's diagnostics ({TABLE}) could not be read: {e}"
        )),
    }
}

/// The report's names of the severity levels, else nsys's.
fn severity_labels(conn: &rusqlite::Connection) -> HashMap<i64, String> {
    let mut labels: HashMap<i64, String> = [
        (0, "Unknown"),
        (1, "Info"),
        (2, "Warning"),
        (3, "Error"),
        (4, "Verbose"),
    ]
    .into_iter()
    .map(|(id, l)| (id, l.to_string()))
    .collect();
    let sql = format!("SELECT id, label FROM {SEVERITIES}");
    if let Ok(mut q) = conn.prepare(&sql)
        && let Ok(rows) = q.query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
        })
    {
        for (id, label) in rows.flatten() {
            if let Some(label) = label.filter(|l| !l.trim().is_empty()) {
                labels.insert(id, label);
            }
        }
    }
    labels
}

/// Each (severity, text) once with its count, in the order first logged, warnings and errors
/// (worst first) before the rest.
pub(super) fn deduplicated(
    rows: Vec<(Option<i64>, Option<String>)>,
    labels: &HashMap<i64, String>,
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut seen: HashMap<(i64, String), usize> = HashMap::new();
    for (severity, text) in rows {
        let Some(text) = text else { continue };
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            continue;
        }
        let severity = severity.unwrap_or(0);
        match seen.get(&(severity, text.clone())) {
            Some(&i) => out[i].count += 1,
            None => {
                seen.insert((severity, text.clone()), out.len());
                out.push(Diagnostic {
                    severity,
                    severity_label: labels
                        .get(&severity)
                        .cloned()
                        .unwrap_or_else(|| format!("Level {severity}")),
                    text,
                    count: 1,
                });
            }
        }
    }
    // Stable: within a rank, the order logged.
    let rank = |d: &Diagnostic| match d.severity {
        3 => 0,
        2 => 1,
        _ => 2,
    };
    out.sort_by_key(rank);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_counted_and_warnings_come_first() {
        let labels: HashMap<i64, String> = [(1, "Info".to_string()), (2, "Warning".into())]
            .into_iter()
            .collect();
        let rows = vec![
            (Some(1), Some("Profiling has started.".to_string())),
            (Some(2), Some("No CUDA events\tcollected.".to_string())),
            (Some(2), Some("No CUDA events collected.".to_string())),
            (None, None),
            (Some(7), Some("odd".to_string())),
        ];
        let d = deduplicated(rows, &labels);
        let shown: Vec<(&str, &str, usize)> = d
            .iter()
            .map(|d| (d.severity_label.as_str(), d.text.as_str(), d.count))
            .collect();
        assert_eq!(
            shown,
            [
                ("Warning", "No CUDA events collected.", 2),
                ("Info", "Profiling has started.", 1),
                ("Level 7", "odd", 1)
            ]
        );
    }
}
