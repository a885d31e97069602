//! A report's table on the job clock: which of its columns hold timestamps, and one rank's row
//! moved onto the job clock with its rank in front.
//!
//! nsys names its timestamp columns `Start (ns)`, `End (ns)` or `… Start (ns)` (`API Start
//! (ns)`, `Projected Start (ns)`), and its durations `Duration`/`Dur`: the names tell which
//! cells gain a rank's offset, whichever report (or future report) they come from.

use crate::analysis::table::{Cell, Table};
use crate::model::{Ns, Rank, Ranks};

/// The first column of a job's tables.
pub const RANK_COLUMN: &str = "Rank";

/// Whether a column named `name` holds points in time (not durations).
pub fn is_timestamp_column(name: &str) -> bool {
    name.ends_with("Start (ns)") || name.ends_with("End (ns)")
}

/// The indexes of `columns` that hold points in time.
pub fn timestamp_columns(columns: &[String]) -> Vec<usize> {
    (columns.iter().enumerate())
        .filter(|(_, name)| is_timestamp_column(name))
        .map(|(i, _)| i)
        .collect()
}

/// A rank's place on the job clock, for its tables' rows.
#[derive(Clone, Debug)]
pub struct RankRows {
    pub rank: u32,
    /// What the rank's times gain on the job clock ([`crate::model::Rank::offset_ns`]).
    pub offset_ns: Ns,
    /// The columns that gain it ([`timestamp_columns`]).
    pub timestamps: Vec<usize>,
}

impl RankRows {
    /// `row` (cells as the rank's own report gives them) with the rank in front and its
    /// timestamps on the job clock; empty cells stay empty.
    pub fn row(&self, row: Vec<Cell>) -> Vec<Cell> {
        let mut out = Vec::with_capacity(row.len() + 1);
        out.push(Cell::Int(i64::from(self.rank)));
        out.extend(row.into_iter().enumerate().map(|(i, cell)| match cell {
            Cell::Int(t) if self.timestamps.contains(&i) => {
                Cell::Int(t.saturating_add(self.offset_ns))
            }
            other => other,
        }));
        out
    }
}

/// `columns` with the rank column in front.
pub fn with_rank_column(columns: &[String]) -> Vec<String> {
    std::iter::once(RANK_COLUMN.to_string())
        .chain(columns.iter().cloned())
        .collect()
}

/// One table of every rank of `job`: each rank's own table (`table_of`, as its report alone
/// gives it) behind its rank, ranks in order, its timestamps on the job clock.
pub fn rank_by_rank<E>(
    job: &Ranks,
    mut table_of: impl FnMut(&Rank) -> Result<Table, E>,
) -> Result<Table, E> {
    let mut combined = Table::default();
    for rank in &job.ranks {
        let table = table_of(rank)?;
        if combined.columns.is_empty() {
            combined.columns = with_rank_column(&table.columns);
        }
        let rows = RankRows {
            rank: rank.number,
            offset_ns: rank.offset_ns,
            timestamps: timestamp_columns(&table.columns),
        };
        combined
            .rows
            .extend(table.rows.into_iter().map(|row| rows.row(row)));
    }
    Ok(combined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_and_ends_move_durations_do_not() {
        let columns: Vec<String> = [
            "Start (ns)",
            "Duration (ns)",
            "API Start (ns)",
            "End (ns)",
            "Name",
            "Queue Dur (ns)",
        ]
        .map(String::from)
        .to_vec();
        let timestamps = timestamp_columns(&columns);
        assert_eq!(timestamps, vec![0, 2, 3]);
        let rows = RankRows {
            rank: 3,
            offset_ns: 1000,
            timestamps,
        };
        let row = vec![
            Cell::Int(5),
            Cell::Int(6),
            Cell::Empty,
            Cell::Int(7),
            Cell::Text("k".into()),
            Cell::Int(8),
        ];
        assert_eq!(
            rows.row(row),
            vec![
                Cell::Int(3),
                Cell::Int(1005),
                Cell::Int(6),
                Cell::Empty,
                Cell::Int(1007),
                Cell::Text("k".into()),
                Cell::Int(8)
            ]
        );
    }
}
