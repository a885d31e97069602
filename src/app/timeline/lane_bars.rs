//! The bars marks put under events ([`Anchor::Under`]), grouped by the lane
//! level they sit on, each group a [`Band`]. A report with tens of thousands
//! of NVTX ranges has a bar under each (their GPU work); a frame looked up
//! the lane of each bar and decided bar by bar which pixel columns were
//! taken: half a frame at a whole-report zoom. Grouped once, a frame looks
//! up each group's lane and draws what its band says.

use crate::app::state::events::{EventRef, Table};
use crate::app::timeline::band::Band;
use crate::app::timeline::mark::{Anchor, Overlay};
use crate::app::timeline::rows::{Row, RowKind};
use crate::model::{RowOwners, Trace};

/// The bars on one lane level.
#[derive(Clone, Debug)]
pub struct LaneBars {
    /// The lane's key: rows are built anew as a report grows, a lane's key
    /// stays.
    pub lane: String,
    /// The lane's row (in the timeline's rows) as last found.
    pub row: usize,
    /// The NVTX nesting level (0 for other lanes).
    pub level: u32,
    /// The bars, ranked in draw order.
    pub band: Band,
    /// Where the bar of each rank is among the marks grouped.
    pub at: Vec<u32>,
}

/// Groups the bars among `marks` by the lane level of their event in
/// `rows`; bars whose event no lane holds are left out (never drawn).
pub fn group(marks: &[Overlay], rows: &[Row], trace: &Trace) -> Vec<LaneBars> {
    // Each table's lanes by the rows they hold.
    let lanes = Table::ALL.map(|table| {
        RowOwners::of(
            rows.iter()
                .enumerate()
                .filter_map(|(r, row)| match &row.kind {
                    RowKind::Lane { table: t, track } if *t == table => Some((r, track)),
                    _ => None,
                }),
        )
    });
    let lane_of = |table: Table, i: u32| {
        let at = Table::ALL.iter().position(|&t| t == table)?;
        lanes[at].owner_of(i)
    };
    let mut keyed: Vec<(usize, u32, u32)> = Vec::new();
    for (pos, m) in (0u32..).zip(marks) {
        let Anchor::Under(ev) = m.anchor else {
            continue;
        };
        let Some(row) = lane_of(ev.table, ev.index) else {
            continue;
        };
        keyed.push((row, level_of(trace, ev), pos));
    }
    // Stable: each group's bars stay in draw order.
    keyed.sort_by_key(|&(row, level, _)| (row, level));
    keyed
        .chunk_by(|a, b| (a.0, a.1) == (b.0, b.1))
        .map(|bars| {
            let at: Vec<u32> = bars.iter().map(|b| b.2).collect();
            let spans = at.iter().map(|&p| &marks[p as usize]);
            LaneBars {
                lane: rows[bars[0].0].key.clone(),
                row: bars[0].0,
                level: bars[0].1,
                band: Band::new(spans.map(|m| (m.start, m.end))),
                at,
            }
        })
        .collect()
}

/// The level of the lane `ev` is drawn on.
fn level_of(trace: &Trace, ev: EventRef) -> u32 {
    match ev.table {
        Table::Nvtx => u32::from(
            trace
                .nvtx
                .depth
                .get(ev.index as usize)
                .copied()
                .unwrap_or(0),
        ),
        _ => 0,
    }
}

/// Whether `groups` still hold for `marks` (the same marks, their events
/// found again in a grown report) on `rows`: each lane found again by its
/// key (its row updated) and holding its bars' events, each bar on the
/// level it was. A range's level changes when a range around it arrives
/// later.
pub fn still_hold(groups: &mut [LaneBars], marks: &[Overlay], rows: &[Row], trace: &Trace) -> bool {
    let bar = |p: &u32| match marks.get(*p as usize).map(|m| m.anchor) {
        Some(Anchor::Under(ev)) => Some(ev),
        _ => None,
    };
    groups.iter_mut().all(|g| {
        if rows.get(g.row).is_none_or(|r| r.key != g.lane) {
            match rows.iter().position(|r| r.key == g.lane) {
                Some(row) => g.row = row,
                None => return false,
            }
        }
        // A key names a lane by its place among its thread's (a domain's
        // NVTX lane): the lane must still hold the bars' events. They are
        // all on one track; the first tells.
        let holds = |ev: EventRef| match &rows[g.row].kind {
            RowKind::Lane { table, track } => *table == ev.table && track.contains(ev.index),
            _ => false,
        };
        g.at.first().and_then(bar).is_some_and(holds)
            && g.at
                .iter()
                .all(|p| bar(p).is_some_and(|ev| level_of(trace, ev) == g.level))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::timeline::rows;
    use eframe::egui::Color32;

    fn bar(ev: EventRef) -> Overlay {
        Overlay {
            start: 0,
            end: 1,
            anchor: Anchor::Under(ev),
            color: Color32::RED,
            label: String::new(),
            source: "test",
        }
    }

    /// Bars go to the lane and level of their event; the groups hold until
    /// a bar's event is on another level, and find their lanes again when
    /// the rows are built in another order.
    #[test]
    fn bars_are_grouped_by_the_lane_level_of_their_event() {
        let trace = crate::loader::load_fixture("sync_timing.sqlite");
        let rows = rows::build(&trace);
        let ranges = trace.nvtx.spans.len() as u32;
        let marks: Vec<Overlay> = (0..ranges)
            .map(|i| bar(EventRef::new(Table::Nvtx, i)))
            .collect();
        let mut groups = group(&marks, &rows, &trace);
        assert!(groups.len() >= 2, "{} groups", groups.len());
        let mut grouped = 0;
        for g in &groups {
            let RowKind::Lane { table, track } = &rows[g.row].kind else {
                panic!("a group on a row that is no lane");
            };
            assert_eq!((*table, &rows[g.row].key), (Table::Nvtx, &g.lane));
            for &p in &g.at {
                let Anchor::Under(ev) = marks[p as usize].anchor else {
                    unreachable!()
                };
                assert!(track.contains(ev.index));
                assert_eq!(level_of(&trace, ev), g.level);
                grouped += 1;
            }
        }
        assert_eq!(grouped, marks.len(), "every range is in a lane");
        assert!(still_hold(&mut groups, &marks, &rows, &trace));
        // A bar moved to a range on another level.
        let deeper = (0..ranges)
            .find(|&i| trace.nvtx.depth[i as usize] != trace.nvtx.depth[0])
            .expect("nested ranges");
        let mut moved = marks.clone();
        moved[0].anchor = Anchor::Under(EventRef::new(Table::Nvtx, deeper));
        assert!(!still_hold(&mut groups, &moved, &rows, &trace));
        // The same lanes at other rows.
        let mut reordered = rows.clone();
        reordered.reverse();
        assert!(still_hold(&mut groups, &marks, &reordered, &trace));
        for g in &groups {
            assert_eq!(reordered[g.row].key, g.lane);
        }
        // A lane's key now naming another lane (a domain's NVTX lane after
        // a domain that came before it).
        let g = &groups[0];
        let other = (reordered.iter())
            .position(|r| matches!(r.kind, RowKind::Lane { .. }) && r.key != g.lane)
            .expect("another lane");
        let (row, lane) = (g.row, g.lane.clone());
        reordered[other].key = lane;
        reordered[row].key = "gone".into();
        assert!(!still_hold(&mut groups, &marks, &reordered, &trace));
    }
}
