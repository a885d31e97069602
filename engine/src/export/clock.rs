//! Where one rank sits in its job: its number and its offset on the job clock.

/// Where one rank sits in its job.
#[derive(Clone, Copy, Debug)]
pub struct RankClock {
    pub rank: u32,
    /// Added to the report's times to put them on the job clock.
    pub offset_ns: i64,
}
