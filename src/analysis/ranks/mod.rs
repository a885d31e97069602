//! Cross-rank analysis of a job of reports ([`crate::model::Ranks`]): tables on the job clock,
//! the iterations each rank repeats matched across ranks, how far apart the ranks' phases end,
//! and the rank that holds the others back.

mod clock;

pub use clock::{RANK_COLUMN, RankRows, is_timestamp_column, timestamp_columns, with_rank_column};
