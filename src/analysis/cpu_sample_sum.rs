//! `sightline stats --report cpu_sample_sum` (ours, not an nsys report):
//! functions by CPU samples, self and total, over the whole report, a range
//! or the instances of an NVTX range ([`super::cpu_profile::flat_profile`]).
//! Each thread counts its Python samples where they carry frames, else its
//! native ones; a Python function is shown as Python (`Kind` column).

use super::cpu_profile::{SampleScope, flat_profile};
use super::table::{Cell, Table};
use crate::model::{FrameKind, Ns, Trace};

/// The table over `windows` (sorted, disjoint; the whole report when None).
pub fn cpu_sample_sum(trace: &Trace, windows: Option<Vec<(Ns, Ns)>>) -> Table {
    let scope = SampleScope {
        windows,
        ..SampleScope::default()
    };
    let profile = flat_profile(trace, &scope);
    let columns = [
        "Self (%)",
        "Self Samples",
        "Total (%)",
        "Total Samples",
        "Kind",
        "Function",
        "Location",
    ];
    let rows = profile
        .rows
        .iter()
        .map(|r| {
            let location = trace.name(r.key.location);
            let (kind, location) = match r.key.kind {
                FrameKind::Python if r.line > 0 => ("Python", format!("{location}:{}", r.line)),
                FrameKind::Python => ("Python", location.to_string()),
                FrameKind::Native => ("native", location.to_string()),
            };
            vec![
                Cell::Round1(profile.percent(r.self_samples)),
                Cell::Int(r.self_samples as i64),
                Cell::Round1(profile.percent(r.total_samples)),
                Cell::Int(r.total_samples as i64),
                Cell::Text(kind.into()),
                Cell::Text(trace.name(r.key.function).to_string()),
                Cell::Text(location),
            ]
        })
        .collect();
    Table {
        columns: columns.iter().map(|c| c.to_string()).collect(),
        rows,
    }
}
