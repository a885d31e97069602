//! Notes a person pins to a report — to a moment, or to one event — kept in a
//! sidecar file beside the report (`REPORT.sqlite.notes.json`), never inside
//! it: reports stay exactly as nsys wrote them. A report in a folder that is
//! not the user's (the app's bundled lesson reports, a read-only folder) has
//! its sidecar in the user's data folder instead (see [`sidecar_path`]).
//!
//! An event is named in the file by what identifies it in any load of the
//! same report — its kind, start, end and name — not by its row index, which
//! depends on how the loader ordered the rows. A note whose event is not
//! found again (the report was re-exported, or replaced) keeps its text and
//! its time and says that its event is gone.
//!
//! No egui here: the viewer draws notes, this module only knows what they are
//! and how they are stored.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{EventId, EventKind, EventKinds, Ns, SpanColumns, StrId, Trace};

/// Appended to the report's file name to name its sidecar.
pub const SIDECAR_SUFFIX: &str = ".notes.json";
/// The format written; a file of a newer format is refused, not misread.
pub const FORMAT_VERSION: u32 = 1;

/// One note.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub text: String,
    /// sRGB; `"#rrggbb"` in the file.
    #[serde(with = "hex_color")]
    pub color: [u8; 3],
    /// What the note is pinned to.
    #[serde(flatten)]
    pub pin: Pin,
}

/// What a note is pinned to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pin {
    /// A moment on the session clock (the report's ns).
    Time(Ns),
    /// One event.
    Event(EventKey),
}

/// What identifies an event across loads of the same report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventKey {
    /// `kernel`, `api`, `nvtx`, ... ([`EventKind::name`]).
    #[serde(with = "kind_name")]
    pub kind: EventKind,
    pub start: Ns,
    pub end: Ns,
    pub name: String,
}

impl Note {
    /// Where the note sits on the timeline: its moment, or its event's start.
    pub fn time(&self) -> Ns {
        match &self.pin {
            Pin::Time(t) => *t,
            Pin::Event(key) => key.start,
        }
    }
}

/// The sidecar file as written.
#[derive(Serialize, Deserialize)]
struct Sidecar {
    /// The format version (and a name that says what the file is).
    sightline_notes: u32,
    /// The report's file name, for a person reading the file; not checked
    /// (a report copied with its sidecar under a new name keeps its notes).
    #[serde(default)]
    report: String,
    #[serde(default)]
    notes: Vec<Note>,
}

/// Why notes could not be read or written.
#[derive(Debug)]
pub enum NotesError {
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    Malformed {
        path: PathBuf,
        message: String,
    },
    Newer {
        path: PathBuf,
        version: u32,
    },
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl fmt::Display for NotesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotesError::Read { path, error } => {
                write!(f, "cannot read the notes {}: {error}", path.display())
            }
            NotesError::Malformed { path, message } => write!(
                f,
                "the notes file {} is not valid ({message}); its notes were not loaded \
                 and it is left as it is until a note is added",
                path.display()
            ),
            NotesError::Newer { path, version } => write!(
                f,
                "the notes file {} has format {version}, newer than this Sightline reads \
                 ({FORMAT_VERSION}); it is left as it is",
                path.display()
            ),
            NotesError::Write { path, error } => {
                write!(f, "cannot save the notes to {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for NotesError {}

/// The sidecar of `report`: `REPORT.sqlite` → `REPORT.sqlite.notes.json`
/// beside it when its folder is the user's to write into; else (a bundled
/// lesson report among the app's files, a read-only folder)
/// `DATA/sightline/notes/REPORT.sqlite-HASH.notes.json` in the user's data
/// folder, HASH naming the report's full path (two reports of one name keep
/// their own notes).
pub fn sidecar_path(report: &Path) -> PathBuf {
    let beside = sidecar_beside(report);
    match report.parent() {
        Some(dir) if crate::files::is_users_folder(dir) => beside,
        _ => sidecar_in_data_folder(report).unwrap_or(beside),
    }
}

/// `REPORT.sqlite.notes.json`, beside the report.
fn sidecar_beside(report: &Path) -> PathBuf {
    let mut name = report.as_os_str().to_owned();
    name.push(SIDECAR_SUFFIX);
    PathBuf::from(name)
}

/// The sidecar of `report` in the user's data folder (`None` when that
/// folder cannot be made).
fn sidecar_in_data_folder(report: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(report).unwrap_or_else(|_| report.to_path_buf());
    // FNV-1a: stable across builds and platforms (std's hasher is not promised to be).
    let hash = real
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let name = report.file_name()?.to_string_lossy().into_owned();
    let dir = crate::files::user_data_dir().ok()?.join("notes");
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir.join(format!("{name}-{hash:016x}{SIDECAR_SUFFIX}")))
}

/// Reads the notes of `report`; none (and no error) when it has no sidecar.
/// A sidecar that exists but cannot be read (no permission, a directory,
/// not UTF-8) is an error, never "no notes": a save would then replace it.
pub fn load(report: &Path) -> Result<Vec<Note>, NotesError> {
    load_at(report, &sidecar_path(report))
}

/// [`load`] from `sidecar`, where the notes of `report` are kept (as
/// [`sidecar_path`] decided when the report was opened). Notes that came
/// beside a report in a folder that is not the user's are read until the
/// user's own are saved (in the data folder).
pub fn load_at(report: &Path, sidecar: &Path) -> Result<Vec<Note>, NotesError> {
    let beside = sidecar_beside(report);
    let path = if sidecar != beside && !sidecar.exists() && beside.is_file() {
        beside
    } else {
        sidecar.to_path_buf()
    };
    // The type first: opening a FIFO blocks the (UI) thread until a writer
    // comes; a device may never end.
    if let Ok(meta) = std::fs::metadata(&path)
        && !meta.is_file()
    {
        let kind = crate::files::file_kind(&meta.file_type());
        return Err(NotesError::Read {
            error: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("it is {kind}, not a notes file"),
            ),
            path,
        });
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(NotesError::Read { path, error }),
    };
    let text = String::from_utf8(bytes).map_err(|e| NotesError::Malformed {
        path: path.clone(),
        message: format!("not UTF-8 text: {e}"),
    })?;
    parse(&text).map_err(|e| match e {
        ParseError::Malformed(message) => NotesError::Malformed {
            path: path.clone(),
            message,
        },
        ParseError::Newer(version) => NotesError::Newer {
            path: path.clone(),
            version,
        },
    })
}

enum ParseError {
    Malformed(String),
    Newer(u32),
}

fn parse(text: &str) -> Result<Vec<Note>, ParseError> {
    // The version first, alone: a newer file may not parse as this format,
    // and "newer" says more than the field it trips on.
    #[derive(Deserialize)]
    struct Version {
        sightline_notes: u32,
    }
    let version: Version =
        serde_json::from_str(text).map_err(|e| ParseError::Malformed(e.to_string()))?;
    if version.sightline_notes > FORMAT_VERSION {
        return Err(ParseError::Newer(version.sightline_notes));
    }
    let file: Sidecar =
        serde_json::from_str(text).map_err(|e| ParseError::Malformed(e.to_string()))?;
    Ok(file.notes)
}

/// Writes the notes of `report` beside it (built aside, then renamed). With
/// no notes left the sidecar is removed rather than left empty. Returns the
/// sidecar's path.
pub fn save(report: &Path, notes: &[Note]) -> Result<PathBuf, NotesError> {
    save_at(report, &sidecar_path(report), notes)
}

/// [`save`] to `sidecar` (where the notes of `report` are kept).
pub fn save_at(report: &Path, sidecar: &Path, notes: &[Note]) -> Result<PathBuf, NotesError> {
    let path = sidecar.to_path_buf();
    // A read-only sidecar was made so on purpose: not replaced (a rename
    // would), and said so.
    if std::fs::metadata(&path).is_ok_and(|m| m.permissions().readonly()) {
        return Err(NotesError::Write {
            error: std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "the file is read-only; it is left as it is",
            ),
            path,
        });
    }
    if notes.is_empty() {
        return match std::fs::remove_file(&path) {
            Ok(()) => Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(path),
            Err(error) => Err(NotesError::Write { path, error }),
        };
    }
    let file = Sidecar {
        sightline_notes: FORMAT_VERSION,
        report: report
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        notes: notes.to_vec(),
    };
    let mut text = serde_json::to_string_pretty(&file).map_err(|e| NotesError::Write {
        path: path.clone(),
        error: std::io::Error::other(e),
    })?;
    text.push('\n');
    match crate::files::write_aside(&path, text.as_bytes()) {
        Ok(()) => Ok(path),
        Err(error) => Err(NotesError::Write { path, error }),
    }
}

/// Saves `notes` without losing what another window or process saved since
/// this one read the sidecar (`base`: the notes as last read or written
/// here). A three-way merge by note identity (text, colour, pin): a note on
/// disk that `base` lacks was added elsewhere and is kept; one in `base` and
/// `notes` but no longer on disk was deleted elsewhere and is dropped; what
/// this side added, changed or deleted wins over `base`. Returns the notes
/// now saved.
pub fn save_merged(report: &Path, base: &[Note], notes: &[Note]) -> Result<Vec<Note>, NotesError> {
    save_merged_at(report, &sidecar_path(report), base, notes)
}

/// [`save_merged`] to `sidecar` (where the notes of `report` are kept).
pub fn save_merged_at(
    report: &Path,
    sidecar: &Path,
    base: &[Note],
    notes: &[Note],
) -> Result<Vec<Note>, NotesError> {
    let disk = load_at(report, sidecar)?;
    let mut merged: Vec<Note> = notes
        .iter()
        .filter(|n| !base.contains(n) || disk.contains(n))
        .cloned()
        .collect();
    for note in disk {
        if !base.contains(&note) && !merged.contains(&note) {
            merged.push(note);
        }
    }
    save_at(report, sidecar, &merged)?;
    Ok(merged)
}

/// The columns of one kind of event.
fn spans_of(trace: &Trace, kind: EventKind) -> &SpanColumns {
    match kind {
        EventKind::Api => &trace.cuda_api.spans,
        EventKind::Osrt => &trace.osrt.spans,
        EventKind::Nvtx => &trace.nvtx.spans,
        EventKind::Kernel => &trace.kernels.spans,
        EventKind::Memcpy => &trace.memcpys.spans,
        EventKind::Memset => &trace.memsets.spans,
        EventKind::Sync => &trace.syncs.spans,
        EventKind::Graph => &trace.graph_execs.spans,
    }
}

/// What identifies `ev`, or `None` for an index the trace does not hold.
pub fn key_of(trace: &Trace, ev: EventId) -> Option<EventKey> {
    let spans = spans_of(trace, ev.kind);
    let i = ev.index as usize;
    Some(EventKey {
        kind: ev.kind,
        start: *spans.start.get(i)?,
        end: spans.get(i)?.1,
        name: trace.name(*spans.name.get(i)?).to_string(),
    })
}

/// Finds one key's event in `trace`: by a binary search of each track of
/// its kind (rows of a track are in start order), where [`resolve`] reads
/// every row of the kind. What a window does each time a capture's trace
/// grows with an event selected: a few microseconds, not a pass over
/// millions of rows. Alike events (never seen in a real report) give the
/// first, as [`resolve`] does.
pub fn find(trace: &Trace, key: &EventKey) -> Option<EventId> {
    let tracks = tracks_of(trace, key.kind);
    find_in(trace, key.kind, (key.start, key.end), &key.name, &tracks)
}

/// [`find`] of the event of `kind` spanning `span` and named `name`, among
/// `tracks` (the kind's, [`tracks_of`]).
fn find_in(
    trace: &Trace,
    kind: EventKind,
    (start, end): (Ns, Ns),
    name: &str,
    tracks: &[crate::model::Span],
) -> Option<EventId> {
    let name = trace.strings.find(name)?;
    let spans = spans_of(trace, kind);
    let mut found: Option<u32> = None;
    for rows in tracks {
        let (from, to) = (rows.start as usize, (rows.end as usize).min(spans.len()));
        let Some(starts) = spans.start.get(from..to) else {
            continue;
        };
        let mut i = from + starts.partition_point(|&s| s < start);
        while i < to && spans.start[i] == start {
            if spans.name[i] == name && spans.end(i) == end {
                found = Some(found.map_or(i as u32, |f| f.min(i as u32)));
                break;
            }
            i += 1;
        }
    }
    found.map(|i| EventId::new(kind, i))
}

/// `ev` of `old` in `new`, a later state of the same report (a capture that
/// grew): see [`Carrier::carry`]. For many events, one [`Carrier`].
pub fn carry(old: &Trace, new: &Trace, ev: EventId) -> Option<EventId> {
    Carrier::new(old, new).carry(ev)
}

/// Carries events of one state of a report into a later one (a capture that
/// grew), listing the tracks of each kind of the later one once however many
/// events are carried: a findings-heavy capture carries thousands at each
/// snapshot, and listing them per event was most of a snapshot's time on
/// the window's thread.
pub struct Carrier<'a> {
    old: &'a Trace,
    new: &'a Trace,
    tracks: HashMap<EventKind, Vec<crate::model::Span>>,
    /// The later state's NVTX ranges by the report's row id, made on first use.
    nvtx_rows: Option<RowIndex>,
    /// How many NVTX ranges lead both states at the same index (the same
    /// rows of the report), worked out on first use. Ranges are numbered
    /// anew at each state, but a new one mostly comes after the others:
    /// these are carried as they are, and the table of row ids above, built
    /// from every range of the later state at each snapshot, is rarely made.
    nvtx_same_below: Option<usize>,
    /// Both states are of one report (row ids name the same ranges): asked
    /// once, not at each of a hundred thousand ranges a snapshot carries.
    same_report: bool,
    /// By [`EventKind`] as an index: for a kind whose events kept their
    /// indexes, how many the older and the newer state hold (worked out once:
    /// a findings-heavy capture carries a hundred thousand events a snapshot).
    kept: [Option<(usize, usize)>; EventKind::ALL.len()],
    /// The kinds whose events may be at another index in the newer state.
    moving: EventKinds,
}

/// What a carry needs to know of a list of events (a finding's) to tell
/// whether any of them may be elsewhere in a later state without looking at
/// each: their kinds, and how far their NVTX ranges reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    kinds: EventKinds,
    /// One past the highest index of the NVTX ranges among them.
    nvtx_end: u32,
}

impl Footprint {
    pub fn of(events: &[EventId]) -> Footprint {
        let nvtx = events.iter().filter(|ev| ev.kind == EventKind::Nvtx);
        Footprint {
            kinds: EventKinds::of(events),
            nvtx_end: nvtx.map(|ev| ev.index + 1).max().unwrap_or(0),
        }
    }
}

impl<'a> Carrier<'a> {
    pub fn new(old: &'a Trace, new: &'a Trace) -> Carrier<'a> {
        let kept = EventKind::ALL.map(|kind| {
            new.lineage
                .keeps_indexes_of(&old.lineage, kind)
                .then(|| (spans_of(old, kind).len(), spans_of(new, kind).len()))
        });
        let mut moving = EventKinds::default();
        for kind in EventKind::ALL {
            if kept[kind as usize].is_none_or(|(old, new)| new < old) {
                moving.insert(kind);
            }
        }
        Carrier {
            old,
            new,
            tracks: HashMap::new(),
            nvtx_rows: None,
            nvtx_same_below: None,
            same_report: old.info.path == new.info.path,
            kept,
            moving,
        }
    }

    /// The kinds whose events may be at another index in the newer state
    /// (all but those the lineage says kept theirs): an event of any other
    /// kind is carried as it is, so a list without these needs no look.
    pub fn moving(&self) -> EventKinds {
        self.moving
    }

    /// Whether any of the events of `footprint` may be at another index in
    /// the newer state: false when none is of a moving kind, or when only
    /// NVTX ranges move and all of these lead both states at the same
    /// index (a findings-heavy capture has a hundred thousand findings, and
    /// looking at each one's events at every snapshot was a tenth of the
    /// window's thread).
    pub fn may_move(&mut self, footprint: Footprint) -> bool {
        if !footprint.kinds.meets(self.moving) {
            return false;
        }
        let mut others = self.moving;
        others.remove(EventKind::Nvtx);
        footprint.kinds.meets(others) || footprint.nvtx_end as usize > self.nvtx_same_below()
    }

    /// How many NVTX ranges lead both states at the same index (the same
    /// ranges, carried as they are).
    pub fn nvtx_same_below(&mut self) -> usize {
        let (old, new, same_report) = (self.old, self.new, self.same_report);
        *(self.nvtx_same_below).get_or_insert_with(|| {
            if !same_report {
                return 0;
            }
            let (was, is) = (&old.nvtx.row_id, &new.nvtx.row_id);
            was.iter()
                .zip(is.iter())
                .take_while(|(a, b)| a == b && **a != 0)
                .count()
        })
    }

    /// Entries on NVTX ranges (a range's row first) carried into the newer
    /// state, left in range order: those the newer state does not hold go.
    /// The ones leading both states stay as they are, unlooked at (a
    /// capture of a range per step has a hundred thousand). Entries in
    /// another order (the findings engine lists ranges by thread and domain
    /// name) are put in range order first.
    pub fn carry_ranges<T>(&mut self, entries: &mut Vec<(u32, T, T)>) {
        if !entries.is_sorted_by_key(|e| e.0) {
            entries.sort_by_key(|e| e.0);
        }
        if !self.moving.contains(EventKind::Nvtx) {
            return;
        }
        let same = self.nvtx_same_below();
        let stay = entries.partition_point(|e| (e.0 as usize) < same);
        let mut moved = entries.split_off(stay);
        moved.retain_mut(|e| match self.carry(EventId::new(EventKind::Nvtx, e.0)) {
            Some(found) => {
                e.0 = found.index;
                true
            }
            None => false,
        });
        // Above those that stayed, and in range order again.
        moved.sort_unstable_by_key(|e| e.0);
        entries.append(&mut moved);
    }

    /// `ev` of the older state in the newer, `None` where the newer does
    /// not hold it. A growing report's later state keeps the indexes of
    /// most kinds ([`crate::model::Lineage`]): then no look at all. An NVTX
    /// range of a table numbered anew (a range came before others shown) is
    /// the range of the same row of the report's NVTX table. Any other event
    /// is found by its kind, times and name ([`find`]).
    pub fn carry(&mut self, ev: EventId) -> Option<EventId> {
        let (old, new) = (self.old, self.new);
        let i = ev.index as usize;
        if let Some((in_old, in_new)) = self.kept[ev.kind as usize] {
            return (i < in_old && i < in_new).then_some(ev);
        }
        if ev.kind == EventKind::Nvtx
            && self.same_report
            && let Some(&row) = old.nvtx.row_id.get(i).filter(|&&row| row != 0)
        {
            if i < self.nvtx_same_below() {
                return Some(ev);
            }
            let rows = (self.nvtx_rows).get_or_insert_with(|| RowIndex::of(&new.nvtx.row_id));
            return rows.get(row).map(|i| EventId::new(EventKind::Nvtx, i));
        }
        let (was, is) = (spans_of(old, ev.kind), spans_of(new, ev.kind));
        let (start, end) = was.get(i)?;
        let name = old.name(*was.name.get(i)?);
        let same_here =
            is.get(i) == Some((start, end)) && is.name.get(i).is_some_and(|&n| new.name(n) == name);
        if same_here {
            return Some(ev);
        }
        let tracks = (self.tracks)
            .entry(ev.kind)
            .or_insert_with(|| tracks_of(new, ev.kind));
        find_in(new, ev.kind, (start, end), name, tracks)
    }
}

/// Indexes of a table by the report's row ids. A capture's row ids are
/// nearly consecutive: then an array from the smallest, filled in one pass
/// (a findings-heavy capture looks tens of thousands of ranges up at each
/// snapshot, and hashing every row of the table first was most of it).
enum RowIndex {
    Dense { first: i64, index: Vec<u32> },
    Sparse(HashMap<i64, u32>),
}

impl RowIndex {
    /// Row ids 0 (a report whose table has none) are left out.
    fn of(row_ids: &[i64]) -> RowIndex {
        let ids = || row_ids.iter().copied().filter(|&row| row != 0);
        let (first, last) = (ids().min().unwrap_or(0), ids().max().unwrap_or(0));
        let span = last.saturating_sub(first).saturating_add(1);
        if span > 0 && span <= (4 * row_ids.len() as i64).max(64) {
            let mut index = vec![u32::MAX; span as usize];
            for (i, &row) in row_ids.iter().enumerate() {
                if row != 0 {
                    index[(row - first) as usize] = i as u32;
                }
            }
            return RowIndex::Dense { first, index };
        }
        let rows = row_ids.iter().enumerate().filter(|(_, row)| **row != 0);
        RowIndex::Sparse(rows.map(|(i, &row)| (row, i as u32)).collect())
    }

    fn get(&self, row: i64) -> Option<u32> {
        match self {
            RowIndex::Dense { first, index } => {
                let at = usize::try_from(row.checked_sub(*first)?).ok()?;
                index.get(at).copied().filter(|&i| i != u32::MAX)
            }
            RowIndex::Sparse(rows) => rows.get(&row).copied(),
        }
    }
}

/// The row ranges (the runs) of the tracks that hold events of `kind`.
fn tracks_of(trace: &Trace, kind: EventKind) -> Vec<crate::model::Span> {
    let threads = trace.threads.iter();
    let streams = trace.streams.iter();
    let tracks: Vec<&crate::model::Track> = match kind {
        EventKind::Api => threads.map(|t| &t.cuda_api).collect(),
        EventKind::Osrt => threads.map(|t| &t.osrt).collect(),
        EventKind::Nvtx => threads
            .flat_map(|t| t.nvtx.iter().map(|n| &n.track))
            .collect(),
        EventKind::Kernel => streams.map(|s| &s.kernels).collect(),
        EventKind::Memcpy => streams.map(|s| &s.memcpys).collect(),
        EventKind::Memset => streams.map(|s| &s.memsets).collect(),
        EventKind::Sync => streams.map(|s| &s.syncs).collect(),
        EventKind::Graph => streams.map(|s| &s.graphs).collect(),
    };
    tracks
        .into_iter()
        .flat_map(|t| t.runs().iter().map(|r| r.events.clone()))
        .collect()
}

/// Finds each key's event in `trace` (`None` where it is not there). One
/// pass over each kind of event that a key names, however many keys: a
/// report of ten million events with a hundred notes still opens at once.
/// Two events alike in kind, start, end and name (never seen in a real
/// report) resolve to the first.
pub fn resolve(trace: &Trace, keys: &[&EventKey]) -> Vec<Option<EventId>> {
    let mut found = vec![None; keys.len()];
    // Per kind: (start, end, name) → the keys (by position) naming it.
    type Wanted = HashMap<(Ns, Ns, StrId), Vec<usize>>;
    let mut by_kind: HashMap<EventKind, Wanted> = HashMap::new();
    for (k, key) in keys.iter().enumerate() {
        // A name the report does not hold at all cannot match.
        if let Some(name) = trace.strings.find(&key.name) {
            by_kind
                .entry(key.kind)
                .or_default()
                .entry((key.start, key.end, name))
                .or_default()
                .push(k);
        }
    }
    for (kind, mut wanted) in by_kind {
        let spans = spans_of(trace, kind);
        let rows = spans.start.iter().zip(spans.ends()).zip(&spans.name);
        for (i, ((&start, end), &name)) in rows.enumerate() {
            if let Some(ks) = wanted.remove(&(start, end, name)) {
                for k in ks {
                    found[k] = Some(EventId::new(kind, i as u32));
                }
                if wanted.is_empty() {
                    break;
                }
            }
        }
    }
    found
}

/// `"#rrggbb"` ⇄ `[r, g, b]`.
mod hex_color {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(c: &[u8; 3], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 3], D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).ok_or_else(|| D::Error::custom(format!("color {text:?} is not #rrggbb")))
    }

    fn parse(text: &str) -> Option<[u8; 3]> {
        let hex = text.strip_prefix('#')?;
        if hex.len() != 6 || !hex.is_ascii() {
            return None;
        }
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        Some([byte(0)?, byte(2)?, byte(4)?])
    }
}

/// [`EventKind`] by its [`EventKind::name`].
mod kind_name {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use crate::model::EventKind;

    pub fn serialize<S: Serializer>(kind: &EventKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<EventKind, D::Error> {
        let text = String::deserialize(d)?;
        EventKind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| D::Error::custom(format!("unknown event kind {text:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(pin: Pin) -> Note {
        Note {
            text: "why is this slow?".into(),
            color: [255, 136, 0],
            pin,
        }
    }

    /// Near-consecutive row ids take the array, scattered ones the map;
    /// both find every row and nothing else.
    #[test]
    fn rows_are_found_by_id_dense_or_sparse() {
        let dense: Vec<i64> = vec![7, 5, 0, 6, 9, 12];
        let sparse: Vec<i64> = vec![3, 1 << 40, 0, -5, 70_000];
        assert!(matches!(RowIndex::of(&dense), RowIndex::Dense { .. }));
        assert!(matches!(RowIndex::of(&sparse), RowIndex::Sparse(_)));
        for ids in [dense, sparse] {
            let index = RowIndex::of(&ids);
            for (i, &row) in ids.iter().enumerate() {
                let want = (row != 0).then_some(i as u32);
                assert_eq!(index.get(row), want, "row {row} of {ids:?}");
            }
            for absent in [8, 4, 13, -6, 1 << 41, i64::MIN, i64::MAX] {
                assert_eq!(index.get(absent), None, "row {absent} of {ids:?}");
            }
        }
        assert!(matches!(
            RowIndex::of(&[]),
            RowIndex::Dense { .. } | RowIndex::Sparse(_)
        ));
        assert_eq!(RowIndex::of(&[0, 0]).get(0), None);
    }

    #[test]
    fn the_file_format_reads_back_what_it_wrote() {
        let notes = vec![
            note(Pin::Time(123_456_789)),
            note(Pin::Event(EventKey {
                kind: EventKind::Kernel,
                start: 5,
                end: 9,
                name: "gemm \"quoted\"".into(),
            })),
        ];
        let text = serde_json::to_string_pretty(&Sidecar {
            sightline_notes: FORMAT_VERSION,
            report: "r.sqlite".into(),
            notes: notes.clone(),
        })
        .expect("serializes");
        assert!(text.contains("\"color\": \"#ff8800\""), "{text}");
        assert!(text.contains("\"time\": 123456789"), "{text}");
        assert!(text.contains("\"kind\": \"kernel\""), "{text}");
        assert_eq!(parse(&text).ok(), Some(notes));
    }

    #[test]
    fn bad_files_are_errors_not_guesses() {
        let bad = [
            "",
            "{",
            "[]",
            r#"{"notes": []}"#,
            r##"{"sightline_notes": 1, "notes": [{"text": "a", "color": "#12345", "time": 1}]}"##,
            r##"{"sightline_notes": 1, "notes": [{"text": "a", "color": "#123456"}]}"##,
            r##"{"sightline_notes": 1, "notes": [{"text": "a", "color": "#123456",
                 "event": {"kind": "warp", "start": 1, "end": 2, "name": "x"}}]}"##,
        ];
        for text in bad {
            assert!(
                matches!(parse(text), Err(ParseError::Malformed(_))),
                "{text:?} must be refused"
            );
        }
        assert!(matches!(
            parse(r#"{"sightline_notes": 2, "notes": "whatever"}"#),
            Err(ParseError::Newer(2))
        ));
    }
}
