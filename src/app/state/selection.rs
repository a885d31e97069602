//! What the user has selected in one document: an event (with the events it
//! is linked to) and a time range.
//!
//! There is one per document, kept by its timeline, which draws it and edits
//! it (a click, a drag on the ruler, Escape). Every panel reads it and keeps
//! only the range its own results were computed for: the range tables, a
//! stats row's instances and the kernel panel follow it each frame
//! (`Document::follow_selection`), so whatever changes the selection — the
//! timeline, a menu, a lesson, a panel's command — is followed the same way.

use crate::app::state::events::EventRef;
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
