//! What the user has selected in one document: an event (with the events it
//! is linked to) and a time range.
//!
//! There is one per document, and the document alone writes it
//! (`Document::apply`): the timeline draws it and returns what a click, a drag or Escape asks,
//! panels read it and return commands. The views that follow the selected range (the range
//! tables, a kernel panel scoped to the selection) are [`FollowsRange`]s, told once of each
//! change through the document's one list of them, whatever changed it — the timeline, a
//! menu, a lesson, a panel's command.

use crate::app::state::events::EventRef;
use std::sync::Arc;

use crate::model::{TimeRange, Trace};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    pub event: Option<EventRef>,
    /// The events linked to `event` (its launch and its GPU work, its
    /// enclosing NVTX ranges), outlined with it.
    pub related: Vec<EventRef>,
    pub range: Option<TimeRange>,
}

impl Selection {
    /// Selects `ev` (or nothing) and finds the events linked to it in `trace`.
    pub fn set_event(&mut self, trace: &Trace, ev: Option<EventRef>) {
        self.event = ev;
        self.related = ev.map(|e| e.related(trace)).unwrap_or_default();
    }
}

/// A view whose results are over the selected range: told when the range changes (to
/// `range`, over `trace`), so that it starts its work for the new range, or drops what it had.
pub trait FollowsRange {
    fn range_changed(&mut self, trace: &Arc<Trace>, range: Option<TimeRange>);
}
