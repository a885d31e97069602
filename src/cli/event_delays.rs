//! How long each event of a live capture took to reach the screen: from its
//! end (when the GPU or the driver finished it, and CUPTI could know of it)
//! to the first snapshot that held it. The newest event's age over time (the
//! other measure the capture prints) also counts the stretches when the
//! program made no events at all; this one counts only the events' own waits.
//!
//! Kernels and CUDA API calls, the bulk of a capture, are the events timed:
//! a growing trace appends them, so a snapshot's new ones are those past the
//! last snapshot's count.

use crate::model::{Ns, SpanColumns, Trace};

/// Delays are counted in buckets of this many nanoseconds (0.1 ms).
const BUCKET_NS: Ns = 100_000;
/// Delays from this on share the last bucket (10 s).
const BUCKETS: usize = 100_000;

/// The delays seen so far, as a histogram.
pub struct EventDelays {
    buckets: Vec<u64>,
    /// Per table timed, how many of its rows were already counted, and the
    /// last of them: if a snapshot's table does not hold that row where it
    /// was, the table was numbered anew and its rows cannot be told apart.
    seen: [(usize, Option<(Ns, Ns)>); 2],
    /// Events in snapshots whose table was numbered anew (not timed).
    pub untimed: u64,
    /// The longest delay.
    pub max_ns: Ns,
}

impl Default for EventDelays {
    fn default() -> Self {
        EventDelays {
            buckets: vec![0; BUCKETS],
            seen: [(0, None); 2],
            untimed: 0,
            max_ns: 0,
        }
    }
}

impl EventDelays {
    /// Counts the events `trace` (a snapshot) adds to the last one's: each
    /// one's delay from its end to `shown_at`, when the snapshot came (the
    /// report's clock).
    pub fn add(&mut self, trace: &Trace, shown_at: Ns) {
        let tables = [&trace.kernels.spans, &trace.cuda_api.spans];
        for (spans, seen) in tables.into_iter().zip(self.seen.iter_mut()) {
            let (counted, last) = *seen;
            let renumbered =
                counted > spans.len() || (counted > 0 && spans.get(counted - 1) != last);
            let from = if renumbered {
                self.untimed += (spans.len() - counted.min(spans.len())) as u64;
                spans.len()
            } else {
                counted
            };
            for i in from..spans.len() {
                let delay = shown_at.saturating_sub(spans.end(i)).max(0);
                self.max_ns = self.max_ns.max(delay);
                let bucket = ((delay / BUCKET_NS) as usize).min(BUCKETS - 1);
                self.buckets[bucket] += 1;
            }
            *seen = (spans.len(), last_row(spans));
        }
    }

    /// Events timed.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The delay in ms that a fraction `q` of the events timed waited at
    /// most (to the bucket's upper edge: never an underestimate).
    pub fn quantile_ms(&self, q: f64) -> f64 {
        let wanted = (q * self.count() as f64).ceil().max(1.0) as u64;
        let mut sum = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            sum += n;
            if sum >= wanted {
                return ((i + 1) as Ns * BUCKET_NS) as f64 / 1e6;
            }
        }
        self.max_ns as f64 / 1e6
    }
}

fn last_row(spans: &SpanColumns) -> Option<(Ns, Ns)> {
    spans.len().checked_sub(1).and_then(|i| spans.get(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kernels, StrId};
    use std::sync::Arc;

    fn with_kernels(ends: &[Ns]) -> Trace {
        let starts: Vec<Ns> = ends.iter().map(|e| e - 10).collect();
        let names = vec![StrId(0); ends.len()];
        Trace {
            kernels: Arc::new(Kernels {
                spans: SpanColumns::from_columns(starts, ends, names),
                ..Kernels::default()
            }),
            ..Trace::default()
        }
    }

    #[test]
    fn each_event_is_timed_once_from_its_end_to_its_first_snapshot() {
        let mut d = EventDelays::default();
        // Snapshot 1 at 50 ms holds two kernels ending at 10 and 40 ms.
        d.add(&with_kernels(&[10_000_000, 40_000_000]), 50_000_000);
        // Snapshot 2 at 120 ms adds one ending at 100 ms; the first two
        // are not timed again.
        d.add(
            &with_kernels(&[10_000_000, 40_000_000, 100_000_000]),
            120_000_000,
        );
        assert_eq!(d.count(), 3);
        assert_eq!(d.max_ns, 40_000_000);
        // Delays 40, 10 and 20 ms: the median is 20 ms (to 0.1 ms).
        assert!(
            (d.quantile_ms(0.5) - 20.1).abs() < 1e-9,
            "{}",
            d.quantile_ms(0.5)
        );
        assert!((d.quantile_ms(1.0) - 40.1).abs() < 1e-9);
        // A table numbered anew: its rows are not timed (not twice).
        d.add(
            &with_kernels(&[5_000_000, 6_000_000, 7_000_000, 130_000_000]),
            140_000_000,
        );
        assert_eq!((d.count(), d.untimed), (3, 1));
    }
}
