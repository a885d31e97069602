//! A monotone remapping of a report's clock for the synthetic ranks of a job: every time moves
//! by a constant (the rank's clock offset), and by `extra` more at and after each of a list of
//! points (time inserted there: a phase lengthened, what follows shifted).

use crate::model::Ns;

/// `t ↦ t + base + Σ extra of the points ≤ t`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeWarp {
    pub base: Ns,
    /// `(point, extra)`, sorted by point, each extra ≥ 0.
    points: Vec<(Ns, Ns)>,
    /// The running sum of the extras, per point.
    inserted: Vec<Ns>,
}

impl TimeWarp {
    /// The warp that adds `base` everywhere and `extra` at and after each point.
    pub fn new(base: Ns, mut points: Vec<(Ns, Ns)>) -> TimeWarp {
        points.sort_unstable();
        let inserted = points
            .iter()
            .scan(0, |sum: &mut Ns, p| {
                *sum = sum.saturating_add(p.1.max(0));
                Some(*sum)
            })
            .collect();
        TimeWarp {
            base,
            points,
            inserted,
        }
    }

    /// Where `t` lands.
    pub fn at(&self, t: Ns) -> Ns {
        let before = self.points.partition_point(|p| p.0 <= t);
        let extra = before.checked_sub(1).map_or(0, |i| self.inserted[i]);
        t.saturating_add(self.base).saturating_add(extra)
    }

    /// Whether it moves nothing.
    pub fn is_identity(&self) -> bool {
        self.base == 0 && self.points.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_is_inserted_at_and_after_each_point() {
        let warp = TimeWarp::new(5, vec![(100, 10), (50, 1)]);
        assert_eq!(warp.at(0), 5);
        assert_eq!(warp.at(49), 54);
        assert_eq!(warp.at(50), 56, "a point moves what lies on it");
        assert_eq!(warp.at(100), 116);
        assert!(TimeWarp::default().is_identity());
    }
}
