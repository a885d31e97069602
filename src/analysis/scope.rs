//! What a summary walks ([`Scope`]): a time range, or the whole trace, and
//! the [`RangeRule`] that says which events of it count and for how long.
//! The rules themselves are explained in `stats.rs`'s module documentation.

use crate::model::{Ns, TimeRange};

/// Which events of a [`TimeRange`] a summary counts, and with what duration
/// (see the module documentation).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum RangeRule {
    /// Events whose start lies in the range, each with its whole duration.
    #[default]
    StartsInside,
    /// Events that overlap the range, each with the part of its duration
    /// inside the range.
    Overlapping,
}

impl RangeRule {
    /// The duration an event `[start, end)` counts with in `range` under this
    /// rule; `None` when the rule leaves the event out.
    ///
    /// Under `Overlapping` an event overlaps when it starts before the range
    /// ends and either ends after the range starts or starts inside it (so an
    /// instant, `start == end`, at the range's start is not lost). Its
    /// duration is clipped to the range: `min(end, range.end) - max(start,
    /// range.start)`. Over disjoint ranges covering an event, the clipped
    /// parts add up to its duration exactly (integer nanoseconds, no
    /// rounding), which is what makes the totals of a split trace add up.
    #[inline]
    pub fn counted(self, range: TimeRange, start: Ns, end: Ns) -> Option<Ns> {
        match self {
            RangeRule::StartsInside => (range.start..range.end)
                .contains(&start)
                .then(|| end.saturating_sub(start)),
            RangeRule::Overlapping => {
                let overlaps = start < range.end && (end > range.start || start >= range.start);
                // A damaged event (end before start) starting inside keeps its
                // own negative duration, as `StartsInside` counts it.
                overlaps.then(|| end.min(range.end).saturating_sub(start.max(range.start)))
            }
        }
    }

    /// Whether an event `[start, end)` belongs to `range` under this rule.
    pub fn admits(self, range: TimeRange, start: Ns, end: Ns) -> bool {
        self.counted(range, start, end).is_some()
    }

    /// A short name for a toggle.
    pub fn label(self) -> &'static str {
        match self {
            RangeRule::StartsInside => "starting in range",
            RangeRule::Overlapping => "overlapping (clipped)",
        }
    }

    /// The rule in one line, for the person reading the numbers.
    pub fn explanation(self) -> &'static str {
        match self {
            RangeRule::StartsInside => {
                "events that start in the range, each with its whole duration \
                 (split ranges add up; as `sightline stats --range`)"
            }
            RangeRule::Overlapping => {
                "every event that overlaps the range, its duration clipped to the range \
                 (bytes and launch latencies are not clipped)"
            }
        }
    }
}

/// What a report walks: a range (or the whole trace) and the rule for it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scope {
    pub range: Option<TimeRange>,
    pub rule: RangeRule,
}

/// A range alone means the default rule, so callers that only know ranges
/// (the CLI, diffs) keep `StartsInside` without naming it.
impl From<Option<TimeRange>> for Scope {
    fn from(range: Option<TimeRange>) -> Scope {
        Scope {
            range,
            rule: RangeRule::StartsInside,
        }
    }
}
