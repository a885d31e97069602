//! One mark other views ask the timeline to draw: its span, where it is anchored (the ruler, an
//! event's box), its colour and label. Apart from [`super::marks::Marks`], which indexes a view's
//! marks for painting, so that what groups bars by lane can name a mark without the index.

use eframe::egui::Color32;

use crate::app::state::events::EventRef;
use crate::model::Ns;

/// Where a mark is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// A band at the bottom of the ruler across the span, with a triangle at
    /// its start: visible whichever rows are collapsed or scrolled away.
    Ruler,
    /// A bar along the bottom of this event's box (its lane, its NVTX level)
    /// across the mark's span, which may reach past the event itself.
    Under(EventRef),
    /// An outline around this event's box (the mark's span is the event's).
    Outline(EventRef),
    /// Hatching over this event's box across the mark's span (time spent
    /// waiting), with a dashed line to `link`'s box (what it waited for).
    Hatch {
        on: EventRef,
        link: Option<EventRef>,
    },
    /// A flag on the ruler at the mark's start, a thin line from it down
    /// through the rows, and the label's first line as a tag at the top of
    /// the rows (a note: it must read without hovering).
    Flag,
}

impl Anchor {
    /// The same anchor on the events `find` gives for its own (a report
    /// that grew: events found again); false when one is not found.
    pub fn find_again(&mut self, mut find: impl FnMut(EventRef) -> Option<EventRef>) -> bool {
        let mut again = |ev: &mut EventRef| find(*ev).map(|found| *ev = found).is_some();
        match self {
            Anchor::Ruler | Anchor::Flag => true,
            Anchor::Under(ev) | Anchor::Outline(ev) => again(ev),
            Anchor::Hatch { on, link } => again(on) && link.as_mut().is_none_or(&mut again),
        }
    }
}

/// One mark.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    pub start: Ns,
    pub end: Ns,
    pub anchor: Anchor,
    pub color: Color32,
    /// Shown when the pointer rests on a ruler mark; may be empty.
    pub label: String,
    /// The view that asked for it: each view replaces only its own marks.
    pub source: &'static str,
}
