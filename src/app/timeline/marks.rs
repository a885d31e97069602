//! What other views ask the timeline to mark: each mark's span, anchor, colour and label
//! ([`Overlay`]), and one view's marks indexed for painting ([`Marks`]). The data only; the
//! painter is `overlay.rs`, so the bars grouped by lane (`lane_bars.rs`) can name a mark without
//! reaching the painter that draws them.

use crate::app::timeline::band::Band;
use crate::app::timeline::lane_bars::{self, LaneBars};
use crate::app::timeline::mark::{Anchor, Overlay};
use crate::app::timeline::rows::Row;
use crate::model::Trace;

/// One view's marks in draw order (a later one covers an earlier one): the
/// ruler's, indexed for painting ([`Band`]), and the others. Built where the
/// marks are made: a findings job makes a hundred thousand off the window's
/// thread. The two kinds are kept apart so that a frame walks neither for
/// the other (a walk over every mark to find the lanes' missed the cache
/// at each of a hundred thousand ruler marks).
#[derive(Clone, Debug, Default)]
pub struct Marks {
    pub(super) source: &'static str,
    pub(super) ruler: Vec<Overlay>,
    /// The ruler's marks by rank (their place in `ruler`).
    pub(super) band: Band,
    /// The bars under events.
    pub(super) under: Vec<Overlay>,
    /// `under` grouped by lane level, by the first frame that draws them
    /// (a group needs the timeline's rows).
    pub(super) bars: Option<Vec<LaneBars>>,
    /// Whether `bars` were checked on the report and rows they are drawn
    /// on (not after the marks were carried into a grown report).
    pub(super) bars_checked: bool,
    /// Flags, outlines and hatches: a few, each drawn.
    pub(super) others: Vec<Overlay>,
}

impl Marks {
    pub fn new(source: &'static str, list: Vec<Overlay>) -> Marks {
        let mut marks = Marks {
            source,
            ..Default::default()
        };
        marks.extend(list);
        marks
    }

    fn index_ruler(&mut self) {
        self.band = Band::new(self.ruler.iter().map(|m| (m.start, m.end)));
    }

    /// The ruler's marks, the bars, then the others.
    pub fn iter(&self) -> impl Iterator<Item = &Overlay> {
        self.ruler.iter().chain(&self.under).chain(&self.others)
    }

    /// Keeps the marks on events that `keep` keeps; it may move a mark to
    /// other events, never in time or to another anchor. The ruler's marks,
    /// on no event, all stay as they are (a findings-heavy capture has a
    /// hundred thousand, and walking them at each snapshot missed the cache
    /// at each).
    pub fn retain_mut(&mut self, mut keep: impl FnMut(&mut Overlay) -> bool) {
        let under = self.under.len();
        self.under.retain_mut(&mut keep);
        self.others.retain_mut(keep);
        if self.under.len() != under {
            self.bars = None;
        }
        // Their events may have moved: the groups are checked before they
        // are drawn again (grouping anew at each of a capture's snapshots
        // took a tenth of the window's thread).
        self.bars_checked = false;
    }

    /// Adds marks drawn after these.
    pub fn extend(&mut self, more: Vec<Overlay>) {
        let (ruler, under) = (self.ruler.len(), self.under.len());
        for m in more {
            match m.anchor {
                Anchor::Ruler => self.ruler.push(m),
                Anchor::Under(_) => self.under.push(m),
                _ => self.others.push(m),
            }
        }
        if self.ruler.len() != ruler {
            self.index_ruler();
        }
        if self.under.len() != under {
            self.bars = None;
        }
    }

    /// Groups the bars by the lane level they sit on in `rows`, unless
    /// grouped and still right.
    pub(super) fn group_bars(&mut self, rows: &[Row], trace: &Trace) {
        if let Some(bars) = &mut self.bars
            && !self.bars_checked
            && !lane_bars::still_hold(bars, &self.under, rows, trace)
        {
            self.bars = None;
        }
        if self.bars.is_none() {
            self.bars = Some(lane_bars::group(&self.under, rows, trace));
        }
        self.bars_checked = true;
    }
}
