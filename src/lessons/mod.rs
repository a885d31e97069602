//! Guided lessons: a lesson is a TOML file (`assets/lessons/*.toml`) that walks
//! a class through a real report step by step. Each step names a report, what
//! the view shows (a span, a selected event, highlighted names, rows, panels)
//! and a short text with a question. This module reads the files and checks
//! them ([`load`], [`parse`]); [`resolve`] finds a step's targets in a loaded
//! report. No egui here: the viewer's lesson panel applies what this module
//! resolves, and the tests check every bundled lesson against its report.
//!
//! Targets are named the way a person reads a timeline, never by event index:
//! an NVTX range by name, a kernel or API call by a part of its name, the n-th
//! one (optionally only those inside a named NVTX range). Every mistake in a
//! file is an error naming the file and the line.

pub mod resolve;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use crate::capture::benchmarks::{self, BenchmarkSpec, Params};
use crate::capture::counters::CounterRequest;
use crate::model::EventKind;

pub use resolve::{RowName, Shown, View, resolve};

/// A lesson file that cannot be used, or a step whose targets are not in its
/// report: which file, which line, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LessonError {
    pub path: PathBuf,
    /// 1-based line of the file the problem is on, when it is known.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for LessonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}, line {line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for LessonError {}

/// A lesson, checked: every step has its text and a report that exists.
#[derive(Clone, Debug)]
pub struct Lesson {
    /// The file it was read from.
    pub path: PathBuf,
    pub title: String,
    /// One or two sentences: what the class will learn.
    pub about: String,
    pub steps: Vec<Step>,
}

/// One step: what to show and what to say.
#[derive(Clone, Debug)]
pub struct Step {
    /// Line of the file where the step begins (its `[[step]]` table).
    pub line: usize,
    pub title: String,
    pub text: String,
    pub question: Option<String>,
    /// The report it shows (found when the lesson was read); with [`Step::capture`], the
    /// report shown where no live capture can be made.
    pub report: PathBuf,
    /// A benchmark captured live for this step when a GPU is there: its targets are then
    /// found in the capture, once it has finished.
    pub capture: Option<LessonCapture>,
    /// Where the view goes; `None` leaves it (or shows the selected event).
    pub zoom: Option<Place>,
    /// The event selected (its details open).
    pub select: Option<Target>,
    /// The span selected as a range (its `nsys stats` tables open).
    pub range: Option<Place>,
    /// Names highlighted on the timeline (the search box).
    pub search: Option<Search>,
    /// The kernel panel for the selected kernel.
    pub kernel_panel: bool,
    pub findings_panel: bool,
    /// The "NVTX ranges on GPU" rows.
    pub nvtx_on_gpu: bool,
    /// Rows: every step starts from all rows expanded and shown, then
    /// collapses, expands, hides and shows these (see [`resolve::rows`]).
    pub collapse: Vec<RowPattern>,
    pub expand: Vec<RowPattern>,
    pub hide: Vec<RowPattern>,
    pub show: Vec<RowPattern>,
}

/// A benchmark a step captures live, with its parameters (checked when the lesson is read).
#[derive(Clone, Debug, PartialEq)]
pub struct LessonCapture {
    pub benchmark: &'static BenchmarkSpec,
    pub params: Params,
    /// Hardware counters to collect (`metrics = "default"` or a list,
    /// `metrics_ranges = "NAME,NAME"`), as `sightline capture --metrics`.
    pub counters: Option<CounterRequest>,
}

/// A place on the timeline: the whole report, or the span from the first
/// start to the last end of one or more targets.
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    All,
    Targets(Vec<Target>),
}

/// An event named robustly: by kind and name, the n-th of them in time order,
/// or an explicit span of the session clock.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub what: What,
    /// 1 = the first; -1 = the last.
    pub occurrence: i64,
    /// Only events inside an NVTX range of this name (for GPU work: launched
    /// by an API call inside it).
    pub within: Option<String>,
    /// For an NVTX range or an API call: its span widened to the GPU work it
    /// launched (a range that ends before its kernel does shows both).
    pub with_gpu_work: bool,
    /// Line of the file it is written on.
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum What {
    /// Events of a kind whose name matches: NVTX ranges by their whole name
    /// (`name` or `domain:name`), other kinds by a part of their name.
    Named { kind: EventKind, name: String },
    /// `[start_ns, end_ns)` on the session clock.
    Span { start: i64, end: i64 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    pub query: String,
    pub regex: bool,
}

/// A row named by its label, as the timeline shows it without event counts:
/// `"OS runtime"`, `"Stream 7"`; segments joined by ` > ` name a row under
/// another (`"Stream 7 > Memcpy"`); `"*"` is every row.
#[derive(Clone, Debug, PartialEq)]
pub struct RowPattern {
    pub pattern: String,
    pub line: usize,
}

/// The panel names `panels = [...]` accepts.
pub const PANELS: [&str; 2] = ["kernel", "findings"];

/// The event kinds a target can name, as its keys.
const KINDS: [(&str, EventKind); 8] = [
    ("nvtx", EventKind::Nvtx),
    ("kernel", EventKind::Kernel),
    ("api", EventKind::Api),
    ("memcpy", EventKind::Memcpy),
    ("memset", EventKind::Memset),
    ("sync", EventKind::Sync),
    ("graph", EventKind::Graph),
    ("osrt", EventKind::Osrt),
];

// ---- the file as written ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLesson {
    title: Spanned<String>,
    #[serde(default)]
    about: String,
    report: Option<Spanned<String>>,
    #[serde(default)]
    step: Vec<Spanned<RawStep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    title: Option<String>,
    text: Option<Spanned<String>>,
    question: Option<String>,
    report: Option<Spanned<String>>,
    capture: Option<Spanned<RawCapture>>,
    zoom: Option<Spanned<RawPlace>>,
    select: Option<Spanned<RawTarget>>,
    range: Option<Spanned<RawPlace>>,
    search: Option<Spanned<String>>,
    #[serde(default)]
    search_regex: bool,
    #[serde(default)]
    panels: Vec<Spanned<String>>,
    #[serde(default)]
    nvtx_on_gpu: bool,
    #[serde(default)]
    collapse: Vec<Spanned<String>>,
    #[serde(default)]
    expand: Vec<Spanned<String>>,
    #[serde(default)]
    hide: Vec<Spanned<String>>,
    #[serde(default)]
    show: Vec<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    nvtx: Option<String>,
    kernel: Option<String>,
    api: Option<String>,
    memcpy: Option<String>,
    memset: Option<String>,
    sync: Option<String>,
    graph: Option<String>,
    osrt: Option<String>,
    start_ns: Option<i64>,
    end_ns: Option<i64>,
    occurrence: Option<i64>,
    within: Option<String>,
    #[serde(default)]
    with_gpu_work: bool,
}

/// `"BENCHMARK"`, or `{ benchmark = "BENCHMARK", PARAM = VALUE, ... }`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawCapture {
    Name(String),
    Table(toml::Table),
}

/// `"all"`, a target table, or an array of them.
enum RawPlace {
    All,
    Targets(Vec<RawTarget>),
}

impl<'de> Deserialize<'de> for RawPlace {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PlaceVisitor;
        impl<'de> Visitor<'de> for PlaceVisitor {
            type Value = RawPlace;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"all\", a target such as { nvtx = \"name\" }, or an array of targets")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawPlace, E> {
                if s == "all" {
                    Ok(RawPlace::All)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(s), &self))
                }
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<RawPlace, M::Error> {
                RawTarget::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|t| RawPlace::Targets(vec![t]))
            }
            fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<RawPlace, S::Error> {
                let mut targets = Vec::new();
                while let Some(t) = seq.next_element::<RawTarget>()? {
                    targets.push(t);
                }
                Ok(RawPlace::Targets(targets))
            }
        }
        d.deserialize_any(PlaceVisitor)
    }
}

// ---- reading and checking ----

/// Where bundled lessons live: `assets/lessons` next to the executable, in the
/// current directory, or in the source tree the binary was built from.
pub fn bundled_dir() -> Option<PathBuf> {
    asset_dirs()
        .into_iter()
        .map(|d| d.join("lessons"))
        .find(|d| d.is_dir())
}

/// Directories a lesson's `report` is looked up in after the lesson's own
/// (the app's bundled files, which are not the user's to write into).
pub fn asset_dirs() -> Vec<PathBuf> {
    crate::files::asset_dirs()
}

/// Every `*.toml` in `dir`, in file-name order (number them to order them),
/// each read and checked.
pub fn load_dir(dir: &Path) -> Vec<Result<Lesson, LessonError>> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
            .collect(),
        Err(e) => {
            return vec![Err(LessonError {
                path: dir.to_path_buf(),
                line: None,
                message: format!("cannot list lessons: {e}"),
            })];
        }
    };
    files.sort();
    files.iter().map(|p| load(p)).collect()
}

/// Reads and checks the lesson in `path`.
pub fn load(path: &Path) -> Result<Lesson, LessonError> {
    // The type first: reading a FIFO blocks until a writer comes (the window
    // would freeze), and /dev/zero never ends.
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(LessonError {
            path: path.to_path_buf(),
            line: None,
            message: format!(
                "is {}, not a lesson file",
                crate::files::file_kind(&meta.file_type())
            ),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|e| LessonError {
        path: path.to_path_buf(),
        line: None,
        message: format!("cannot read the lesson: {e}"),
    })?;
    parse(&text, path)
}

/// Parses and checks a lesson written in `text`; `path` names it in errors,
/// and reports are looked up next to it first.
pub fn parse(text: &str, path: &Path) -> Result<Lesson, LessonError> {
    let lines = LineIndex::new(text);
    let error = |line: Option<usize>, message: String| LessonError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let raw: RawLesson = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| lines.line(s.start));
        error(line, e.message().trim().to_string())
    })?;
    let title = raw.title.get_ref().trim().to_string();
    if title.is_empty() {
        return Err(error(
            Some(lines.line(raw.title.span().start)),
            "the lesson's title is empty".into(),
        ));
    }
    if raw.step.is_empty() {
        return Err(error(
            None,
            "the lesson has no steps: add [[step]] tables, each with a text".into(),
        ));
    }
    let lesson_report = match &raw.report {
        Some(r) => Some(find_report(r, path, &lines)?),
        None => None,
    };
    let mut steps = Vec::with_capacity(raw.step.len());
    for (i, raw_step) in raw.step.iter().enumerate() {
        let line = lines.line(raw_step.span().start);
        steps.push(check_step(
            raw_step.get_ref(),
            i + 1,
            line,
            lesson_report.as_ref(),
            path,
            &lines,
        )?);
    }
    Ok(Lesson {
        path: path.to_path_buf(),
        title,
        about: raw.about.trim().to_string(),
        steps,
    })
}

fn check_step(
    raw: &RawStep,
    number: usize,
    line: usize,
    lesson_report: Option<&PathBuf>,
    path: &Path,
    lines: &LineIndex,
) -> Result<Step, LessonError> {
    let check = StepCheck {
        number,
        line,
        path,
        lines,
    };
    let text = check.text(raw)?;
    let report = check.report(raw, lesson_report)?;
    let capture = match &raw.capture {
        Some(c) => Some(check_capture(c.get_ref()).map_err(|m| check.at(c.span(), m))?),
        None => None,
    };
    let zoom = raw.zoom.as_ref().map(|p| check.place(p)).transpose()?;
    let range = raw.range.as_ref().map(|p| check.place(p)).transpose()?;
    let select = check.select(raw)?;
    let search = check.search(raw)?;
    let (kernel_panel, findings_panel) = check.panels(raw, select.as_ref())?;
    Ok(Step {
        line,
        title: raw
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map_or_else(|| format!("Step {number}"), str::to_string),
        text,
        question: raw
            .question
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(str::to_string),
        report,
        capture,
        zoom,
        select,
        range,
        search,
        kernel_panel,
        findings_panel,
        nvtx_on_gpu: raw.nvtx_on_gpu,
        collapse: check.patterns(&raw.collapse)?,
        expand: check.patterns(&raw.expand)?,
        hide: check.patterns(&raw.hide)?,
        show: check.patterns(&raw.show)?,
    })
}

/// The checks of one step's fields, each naming the step and the line of
/// the field it rejects.
struct StepCheck<'a> {
    /// The step's number, from 1, as messages say it.
    number: usize,
    /// The line of the step's `[[step]]`.
    line: usize,
    path: &'a Path,
    lines: &'a LineIndex,
}

impl StepCheck<'_> {
    /// An error at the field that spans `span`.
    fn at(&self, span: std::ops::Range<usize>, message: String) -> LessonError {
        LessonError {
            path: self.path.to_path_buf(),
            line: Some(self.lines.line(span.start)),
            message: format!("step {}: {message}", self.number),
        }
    }

    /// An error at `line` (a step without a field, or a target's line).
    fn at_line(&self, line: usize, message: String) -> LessonError {
        LessonError {
            path: self.path.to_path_buf(),
            line: Some(line),
            message,
        }
    }

    /// The step's text: required, and not blank.
    fn text(&self, raw: &RawStep) -> Result<String, LessonError> {
        let number = self.number;
        match &raw.text {
            Some(t) if !t.get_ref().trim().is_empty() => Ok(t.get_ref().trim().to_string()),
            Some(t) => Err(self.at(t.span(), "its text is empty".into())),
            None => Err(self.at_line(
                self.line,
                format!("step {number} has no text (add text = \"...\")"),
            )),
        }
    }

    /// The report the step shows: its own, else the lesson's.
    fn report(
        &self,
        raw: &RawStep,
        lesson_report: Option<&PathBuf>,
    ) -> Result<PathBuf, LessonError> {
        let number = self.number;
        match (&raw.report, lesson_report) {
            (Some(r), _) => find_report(r, self.path, self.lines).map_err(|mut e| {
                e.message = format!("step {number}: {}", e.message);
                e
            }),
            (None, Some(r)) => Ok(r.clone()),
            (None, None) => Err(self.at_line(
                self.line,
                format!(
                    "step {number} names no report (set report = \"FILE.sqlite\" for the lesson or the step)"
                ),
            )),
        }
    }

    /// A `zoom` or `range`: everything, or a non-empty list of targets.
    fn place(&self, p: &Spanned<RawPlace>) -> Result<Place, LessonError> {
        match p.get_ref() {
            RawPlace::All => Ok(Place::All),
            RawPlace::Targets(ts) if ts.is_empty() => {
                Err(self.at(p.span(), "an empty list of targets".into()))
            }
            RawPlace::Targets(ts) => ts
                .iter()
                .map(|t| check_target(t, self.lines.line(p.span().start)))
                .collect::<Result<Vec<_>, _>>()
                .map(Place::Targets)
                .map_err(|m| self.at(p.span(), m)),
        }
    }

    /// The event the step selects: a target that names an event, not a span.
    fn select(&self, raw: &RawStep) -> Result<Option<Target>, LessonError> {
        let select = match &raw.select {
            Some(s) => Some(
                check_target(s.get_ref(), self.lines.line(s.span().start))
                    .map_err(|m| self.at(s.span(), m))?,
            ),
            None => None,
        };
        if let Some(Target {
            what: What::Span { .. },
            line,
            ..
        }) = &select
        {
            return Err(self.at_line(
                *line,
                format!("step {}: select names an event, not a span", self.number),
            ));
        }
        Ok(select)
    }

    /// The search the step types: not blank, and a valid regex if it says so.
    fn search(&self, raw: &RawStep) -> Result<Option<Search>, LessonError> {
        match &raw.search {
            Some(s) if s.get_ref().trim().is_empty() => {
                Err(self.at(s.span(), "search is empty".into()))
            }
            Some(s) => {
                if raw.search_regex
                    && let Err(e) = regex::Regex::new(s.get_ref().trim())
                {
                    return Err(self.at(s.span(), format!("search is not a valid regex: {e}")));
                }
                Ok(Some(Search {
                    query: s.get_ref().trim().to_string(),
                    regex: raw.search_regex,
                }))
            }
            None => Ok(None),
        }
    }

    /// Which panels the step opens: (kernel, findings). The kernel panel
    /// shows the selected kernel, so it needs a step that selects one.
    fn panels(&self, raw: &RawStep, select: Option<&Target>) -> Result<(bool, bool), LessonError> {
        let (mut kernel_panel, mut findings_panel) = (false, false);
        for p in &raw.panels {
            match p.get_ref().as_str() {
                "kernel" => {
                    let selects_kernel = matches!(
                        select,
                        Some(Target {
                            what: What::Named {
                                kind: EventKind::Kernel,
                                ..
                            },
                            ..
                        })
                    );
                    if !selects_kernel {
                        return Err(self.at(
                            p.span(),
                            "the kernel panel shows the selected kernel: add select = { kernel = \"NAME\" }"
                                .into(),
                        ));
                    }
                    kernel_panel = true;
                }
                "findings" => findings_panel = true,
                other => {
                    return Err(self.at(
                        p.span(),
                        format!(
                            "unknown panel {other:?} (panels are: {})",
                            PANELS.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok((kernel_panel, findings_panel))
    }

    /// Row names to collapse, expand, hide or show: none blank, nor any
    /// part of a `parent > child` path.
    fn patterns(&self, list: &[Spanned<String>]) -> Result<Vec<RowPattern>, LessonError> {
        list.iter()
            .map(|p| {
                let pattern = p.get_ref().trim().to_string();
                if pattern.is_empty() || pattern.split(" > ").any(|s| s.trim().is_empty()) {
                    Err(self.at(p.span(), format!("row name {pattern:?} is empty")))
                } else {
                    Ok(RowPattern {
                        pattern,
                        line: self.lines.line(p.span().start),
                    })
                }
            })
            .collect()
    }
}

/// A capture as written → the benchmark and its parameters, checked by the benchmark's own
/// rules (the same as `sightline capture`'s), or what is wrong.
fn check_capture(raw: &RawCapture) -> Result<LessonCapture, String> {
    let empty = toml::Table::new();
    let (name, table) = match raw {
        RawCapture::Name(name) => (name.as_str(), &empty),
        RawCapture::Table(table) => match table.get("benchmark") {
            Some(toml::Value::String(name)) => (name.as_str(), table),
            _ => return Err("capture needs benchmark = \"NAME\"".into()),
        },
    };
    let benchmark = benchmarks::find(name.trim()).map_err(|e| format!("capture: {e}"))?;
    let text = |key: &str| -> Result<Option<&str>, String> {
        match table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(format!("capture: {key} must be a string")),
        }
    };
    let counters = CounterRequest::from_args(text("metrics")?, text("metrics_ranges")?)
        .map_err(|e| format!("capture: {e}"))?;
    let mut values = Vec::new();
    for (key, value) in table
        .iter()
        .filter(|(k, _)| !["benchmark", "metrics", "metrics_ranges"].contains(&k.as_str()))
    {
        let value = match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            _ => return Err(format!("capture: {key} must be a string or a number")),
        };
        values.push((key.as_str(), value));
    }
    let values = values.iter().map(|(k, v)| (*k, v.as_str()));
    let params = benchmarks::params_with(benchmark, values).map_err(|e| format!("capture: {e}"))?;
    Ok(LessonCapture {
        benchmark,
        params,
        counters,
    })
}

/// A target as written → a checked one, or what is wrong with it.
fn check_target(raw: &RawTarget, line: usize) -> Result<Target, String> {
    let named: Vec<(EventKind, &str)> = KINDS
        .iter()
        .zip([
            &raw.nvtx,
            &raw.kernel,
            &raw.api,
            &raw.memcpy,
            &raw.memset,
            &raw.sync,
            &raw.graph,
            &raw.osrt,
        ])
        .filter_map(|(&(_, kind), name)| name.as_deref().map(|n| (kind, n)))
        .collect();
    let keys = KINDS.map(|(k, _)| k).join(", ");
    let what = match (named.as_slice(), raw.start_ns, raw.end_ns) {
        ([(kind, name)], None, None) => {
            if name.trim().is_empty() {
                return Err(format!("the {} name is empty", kind.name()));
            }
            What::Named {
                kind: *kind,
                name: name.trim().to_string(),
            }
        }
        ([], Some(start), Some(end)) => {
            if end <= start {
                return Err(format!("end_ns ({end}) must be after start_ns ({start})"));
            }
            What::Span { start, end }
        }
        ([], None, None) => {
            return Err(format!(
                "a target needs one of {keys} (or start_ns and end_ns)"
            ));
        }
        ([], _, _) => return Err("a span needs both start_ns and end_ns".into()),
        _ => {
            return Err(format!(
                "a target names one event kind ({keys}) or a span, not several"
            ));
        }
    };
    let occurrence = raw.occurrence.unwrap_or(1);
    if occurrence == 0 {
        return Err("occurrence counts from 1 (the first) or from -1 (the last)".into());
    }
    let span = matches!(what, What::Span { .. });
    if span && (raw.occurrence.is_some() || raw.within.is_some()) {
        return Err("occurrence and within apply to named events, not to a span".into());
    }
    if raw.with_gpu_work
        && !matches!(
            what,
            What::Named {
                kind: EventKind::Nvtx | EventKind::Api,
                ..
            }
        )
    {
        return Err("with_gpu_work applies to an nvtx range or an api call".into());
    }
    if raw.within.as_deref().is_some_and(|w| w.trim().is_empty()) {
        return Err("within is empty".into());
    }
    Ok(Target {
        what,
        occurrence,
        within: raw.within.as_deref().map(|w| w.trim().to_string()),
        with_gpu_work: raw.with_gpu_work,
        line,
    })
}

/// The report a lesson names: next to the lesson file, else in `assets/`
/// (an absolute path is taken as it is).
fn find_report(
    name: &Spanned<String>,
    lesson: &Path,
    lines: &LineIndex,
) -> Result<PathBuf, LessonError> {
    let written = Path::new(name.get_ref().trim());
    let mut candidates = Vec::new();
    if written.is_absolute() {
        candidates.push(written.to_path_buf());
    } else {
        if let Some(dir) = lesson.parent() {
            candidates.push(dir.join(written));
            // Bundled lessons sit in assets/lessons, their reports in assets.
            if let Some(up) = dir.parent() {
                candidates.push(up.join(written));
            }
        }
        candidates.extend(asset_dirs().into_iter().map(|d| d.join(written)));
    }
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    // Something is there but it is no file: say what, not "not found".
    let message = match candidates
        .iter()
        .find_map(|p| Some((p, std::fs::metadata(p).ok()?)))
    {
        Some((p, meta)) => format!(
            "report {:?}: {} is {}, not a report file",
            name.get_ref(),
            p.display(),
            crate::files::file_kind(&meta.file_type())
        ),
        None => format!(
            "report {:?} not found next to the lesson or in assets/",
            name.get_ref()
        ),
    };
    Err(LessonError {
        path: lesson.to_path_buf(),
        line: Some(lines.line(name.span().start)),
        message,
    })
}

/// Byte offset → 1-based line.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_counts_from_one() {
        let l = LineIndex::new("a\nbc\n\nd");
        assert_eq!(l.line(0), 1);
        assert_eq!(l.line(1), 1);
        assert_eq!(l.line(2), 2);
        assert_eq!(l.line(5), 3);
        assert_eq!(l.line(6), 4);
    }
}
