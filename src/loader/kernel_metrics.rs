//! Sightline's own per-kernel metric tables (a capture's counters, see
//! [`crate::synth::rows::KERNEL_METRICS_SCHEMA`]) → `Trace::kernel_metrics`.
//! Reports without them (every nsys report) load as before.

use std::collections::HashMap;
use std::sync::Arc;

use super::builder::Builder;
use crate::model::{KernelMetrics, MetricDef, MetricSource};
use crate::synth::rows::kernel_metrics_tables::{METRICS, NOTES, SOURCE_COUNTERS, VALUES};

pub(super) fn read_kernel_metrics(b: &mut Builder) -> rusqlite::Result<()> {
    let report = b.report.clone();
    if !report.has_table(METRICS) || !report.has_table(VALUES) {
        return Ok(());
    }
    let conn = &report.conn;
    let mut set = KernelMetrics::new(MetricSource::Counters, Vec::new());
    let mut ids: HashMap<i64, u16> = HashMap::new();
    let mut stmt = conn.prepare(&format!(
        "SELECT id, name, unit FROM {METRICS} WHERE source = ?1 ORDER BY id"
    ))?;
    let mut rows = stmt.query([SOURCE_COUNTERS])?;
    while let Some(row) = rows.next()? {
        let Ok(index) = u16::try_from(set.metrics.len()) else {
            break;
        };
        ids.insert(row.get(0)?, index);
        set.metrics.push(MetricDef {
            name: row.get(1)?,
            unit: row.get::<_, Option<String>>(2)?.unwrap_or_default(),
        });
    }
    if set.metrics.is_empty() {
        return Ok(());
    }
    let kernels = &b.trace.kernels;
    let by_key: HashMap<(i64, i64), u32> = (0..kernels.spans.len())
        .map(|i| {
            (
                (i64::from(kernels.correlation[i]), kernels.spans.start[i]),
                i as u32,
            )
        })
        .collect();
    let mut unknown = 0u64;
    let mut stmt = conn.prepare(&format!(
        "SELECT correlationId, start, metricId, value FROM {VALUES}"
    ))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let key = (row.get::<_, i64>(0)?, row.get::<_, i64>(1)?);
        let metric = ids.get(&row.get::<_, i64>(2)?).copied();
        let value: Option<f64> = row.get(3)?;
        match (by_key.get(&key), metric, value) {
            (Some(&k), Some(m), Some(v)) => set.push(k, m, v),
            _ => unknown += 1,
        }
    }
    if report.has_table(NOTES) {
        let mut stmt = conn.prepare(&format!("SELECT note FROM {NOTES} WHERE source = ?1"))?;
        let notes = stmt.query_map([SOURCE_COUNTERS], |r| r.get::<_, String>(0))?;
        for note in notes {
            set.notes.push(note?);
        }
    }
    if unknown > 0 {
        b.warn(format!(
            "{VALUES}: {unknown} counter values name no kernel of the report (left out)"
        ));
    }
    b.trace.kernel_metrics = Arc::new(vec![set]);
    Ok(())
}
