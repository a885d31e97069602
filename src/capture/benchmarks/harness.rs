//! What every benchmark does while it runs: NVTX phases with their work as payload, the cancel
//! check, and the result table and summary it prints.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use super::spec::BenchError;
use crate::capture::nvtx::{self, Payload, RangeGuard};

/// Opens an NVTX push/pop range in the `sightline` domain for one phase of a benchmark; it
/// closes when the guard drops, including on an early `?` return.
pub(super) fn phase(name: &str, color: u32, payload: Option<Payload>) -> RangeGuard {
    nvtx::push_range(name, color, payload)
}

/// The payload for a phase: its work size (FLOPs or bytes), from which the kernel panel
/// computes TFLOP/s or GB/s.
pub(super) fn work(amount: u64) -> Option<Payload> {
    Some(Payload::U64(amount))
}

/// Returns `Cancelled` once the flag is up; called between iterations.
pub(super) fn check_cancel(cancel: &AtomicBool) -> Result<(), BenchError> {
    if cancel.load(Ordering::Relaxed) {
        Err(BenchError::Cancelled)
    } else {
        Ok(())
    }
}

/// A plain-text table: a header row and right-aligned columns, the first left-aligned.
pub(super) struct Table {
    pub(super) header: Vec<String>,
    pub(super) rows: Vec<Vec<String>>,
}

impl Table {
    pub(super) fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub(super) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub(super) fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let line = |out: &mut dyn Write, cells: &[String]| -> std::io::Result<()> {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = cells.get(i).map(String::as_str).unwrap_or("");
                if i == 0 {
                    text.push_str(&format!("{cell:<width$}"));
                } else {
                    text.push_str(&format!("  {cell:>width$}"));
                }
            }
            writeln!(out, "{}", text.trim_end())
        };
        line(out, &self.header)?;
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(out, &rule)?;
        for row in &self.rows {
            line(out, row)?;
        }
        Ok(())
    }
}

/// Mean, min and max of a series of timings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SampleSpread {
    pub(super) mean: f64,
    pub(super) min: f64,
    pub(super) max: f64,
}

impl SampleSpread {
    pub(super) fn of(samples: &[f64]) -> SampleSpread {
        if samples.is_empty() {
            return SampleSpread {
                mean: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        let sum: f64 = samples.iter().sum();
        SampleSpread {
            mean: sum / samples.len() as f64,
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}
