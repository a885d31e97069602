//! Helpers every test file needs: where the fixtures are, and loading one.
// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::model::Trace;

/// `tests/fixtures/NAME` (NAME with its extension, or a subfolder path).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The report `tests/fixtures/NAME`, loaded (a test fails if it does not load).
pub fn load(name: &str) -> Trace {
    load_path(&fixture(name))
}

/// The report at `path`, loaded (a test fails if it does not load).
pub fn load_path(path: &Path) -> Trace {
    sightline::loader::load(path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// Garbles the root page of `table` in the report at `path` (every byte 0xA5): its b-tree
/// broken, the rest of the file intact, as a disk or a copy damages one table.
pub fn garble_table(path: &Path, table: &str) {
    use std::io::{Seek, SeekFrom, Write};
    let (page, size) = {
        let conn = rusqlite::Connection::open(path).expect("open");
        let page: i64 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("{table} in {}: {e}", path.display()));
        let size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .expect("page size");
        (page as u64, size as u64)
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open for writing");
    file.seek(SeekFrom::Start((page - 1) * size)).expect("seek");
    file.write_all(&vec![0xA5; size as usize]).expect("garble");
}

/// One CSV line's fields, as nsys quotes them (only when needed, `""` inside quotes).
pub fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    out.push(field);
    out
}

/// eframe's storage, in memory (what survives a restart, for tests).
#[derive(Default)]
pub struct MemStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.into(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

/// A primary button pressed and released at `pos`, where the pointer already is.
pub fn press(
    h: &mut egui_kittest::Harness<'_, sightline::app::SightlineApp>,
    pos: eframe::egui::Pos2,
) {
    use eframe::egui::{Event, Modifiers, PointerButton};
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
}

/// A primary click at `pos` (the pointer moved there first, as a hand does), then `steps`
/// frames for what the click opens.
pub fn click(
    h: &mut egui_kittest::Harness<'_, sightline::app::SightlineApp>,
    pos: eframe::egui::Pos2,
    steps: usize,
) {
    h.event(eframe::egui::Event::PointerMoved(pos));
    h.step();
    press(h, pos);
    h.run_steps(steps);
}

/// The pointer moved to `pos` and left there for 40 frames: long enough for a tooltip to show.
pub fn hover(
    h: &mut egui_kittest::Harness<'_, sightline::app::SightlineApp>,
    pos: eframe::egui::Pos2,
) {
    h.event(eframe::egui::Event::PointerMoved(pos));
    for _ in 0..40 {
        h.step();
    }
}

/// A window with no report, 1400×900, driven headless.
pub fn empty_window() -> egui_kittest::Harness<'static, sightline::app::SightlineApp> {
    egui_kittest::Harness::builder()
        .with_size(eframe::egui::vec2(1400.0, 900.0))
        .build_ui_state(
            |ui, app: &mut sightline::app::SightlineApp| app.ui(ui),
            sightline::app::SightlineApp::default(),
        )
}

/// Steps the window (with real time passing: workers run meanwhile) until
/// `done` holds or `timeout` has passed; whether `done` held.
pub fn step_until(
    h: &mut egui_kittest::Harness<'_, sightline::app::SightlineApp>,
    timeout: std::time::Duration,
    mut done: impl FnMut(&egui_kittest::Harness<'_, sightline::app::SightlineApp>) -> bool,
) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        h.step();
        if done(h) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// What the window asked of its own window, frame by frame (a harness keeps
/// only the last frame's output, and one step runs a frame per queued
/// event): whether it closed itself, or refused a close.
#[derive(Clone, Default)]
pub struct Closes(std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>);

impl Closes {
    /// Notes this frame's close commands; call after the app's `ui`.
    pub fn record(&self, ctx: &eframe::egui::Context) {
        use eframe::egui::ViewportCommand;
        let seen: Vec<&'static str> = ctx.viewport(|v| {
            v.commands
                .iter()
                .filter_map(|c| match c {
                    ViewportCommand::Close => Some("close"),
                    ViewportCommand::CancelClose => Some("cancel close"),
                    _ => None,
                })
                .collect()
        });
        self.0.lock().expect("not poisoned").extend(seen);
    }

    /// Whether the window closed itself (File ▸ Quit, Ctrl+Q).
    pub fn closed(&self) -> bool {
        self.0.lock().expect("not poisoned").contains(&"close")
    }

    /// Whether the window refused a close asked of it (its close button).
    pub fn cancelled(&self) -> bool {
        self.0
            .lock()
            .expect("not poisoned")
            .contains(&"cancel close")
    }

    /// Forgets what was seen.
    pub fn clear(&self) {
        self.0.lock().expect("not poisoned").clear();
    }
}

/// The window's close button (or the system's close) pressed: what eframe
/// gives the next frame, which may refuse it with `CancelClose`.
pub fn press_close_button(h: &mut egui_kittest::Harness<'_, sightline::app::SightlineApp>) {
    h.input_mut()
        .viewports
        .entry(eframe::egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(eframe::egui::ViewportEvent::Close);
}

/// Each rank's session start, read from its report, as the job clock counts from the earliest.
pub fn job_offsets(dir: &Path) -> Vec<(u32, i64)> {
    let starts: Vec<(u32, i64)> = (0..4)
        .map(|r| {
            let conn =
                rusqlite::Connection::open(dir.join(format!("rank{r}.sqlite"))).expect("opens");
            let start: i64 = conn
                .query_row(
                    "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
                    [],
                    |row| row.get(0),
                )
                .expect("a session start");
            (r, start)
        })
        .collect();
    let earliest = starts.iter().map(|s| s.1).min().expect("ranks");
    starts.into_iter().map(|(r, s)| (r, s - earliest)).collect()
}

/// nsys's CSV of one rank, as the job prints it: `Rank` in front, timestamps moved by `offset`.
pub fn nsys_rows_on_job_clock(csv: &str, rank: u32, offset: i64) -> Vec<Vec<String>> {
    let mut lines = csv.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let moved: Vec<bool> = csv_fields(header)
        .iter()
        .map(|h| sightline::analysis::ranks::is_timestamp_column(h))
        .collect();
    lines
        .map(|line| {
            let mut row = vec![rank.to_string()];
            row.extend(
                csv_fields(line)
                    .into_iter()
                    .zip(&moved)
                    .map(|(cell, &moved)| match (moved, cell.parse::<i64>()) {
                        (true, Ok(t)) => (t + offset).to_string(),
                        _ => cell,
                    }),
            );
            row
        })
        .collect()
}
