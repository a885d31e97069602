//! What a panel asks of its document.
//!
//! Panels draw themselves and return what a click asked for; only the
//! document acts on it ([`crate::app::Document::apply`]). A panel so changes
//! nothing outside itself — not the selection, not the view — which keeps
//! each one testable alone and the selection in one place.

use crate::analysis::stats::Report;
use crate::app::state::events::EventRef;
use crate::model::{Ns, TimeRange};

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Select this event (or nothing) where it is: a click on the timeline.
    Select(Option<EventRef>),
    /// Select this event and bring it into view.
    ShowEvent(EventRef),
    /// Bring this time into view (a note pinned to a time).
    ShowTime(Ns),
    /// Select this range: every panel that reads the selection follows.
    SelectRange(TimeRange),
    /// No range selected any more (its tables go with it); the event stays.
    ClearRange,
    /// Nothing selected: neither an event nor a range (Escape).
    ClearSelection,
    /// A stats row was clicked: step through its instances, and open the
    /// kernel panel when the row names a kernel.
    StepInstances(RowClick),
    /// Show finding `i` of the findings panel, with the events that prove it.
    ShowFinding(usize),
}

/// A stats row the user clicked: its text, which tab it was on.
#[derive(Clone, Debug, PartialEq)]
pub struct RowClick {
    pub report: Report,
    pub name: String,
    /// The cell clicked is the report's kernel-name column: `name` is a
    /// kernel, and the kernel panel can open for it.
    pub kernel: bool,
}
