//! The window on odd but loadable reports: no panic, no hang, no absurd frame
//! time. Each report is built in a temporary directory from a copy of a fixture
//! with SQL edits (as tests/bad_input.rs does), loaded, and driven like a user
//! would: fit-all, deep zoom in and out, far pans, hover and click, a ruler
//! drag, every stats tab, a search stepped through.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use eframe::egui::{
    self, Event, Modifiers, MouseWheelUnit, PointerButton, Pos2, TouchPhase, pos2, vec2,
};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rusqlite::Connection;
use sightline::app::SightlineApp;
use sightline::model::Trace;
use tempfile::TempDir;

/// All frames of one report together must finish within this.
const TIME_LIMIT: Duration = Duration::from_secs(30);
/// One frame taking longer than this is absurd (a 5 MB name once took 7 s).
const FRAME_LIMIT: Duration = Duration::from_secs(2);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.sqlite"))
}

/// Loads a copy of fixture `name` edited with `sql`.
fn odd_report(name: &str, sql: &str) -> Trace {
    let dir = TempDir::new().expect("a temporary folder");
    let path = dir.path().join(format!("{name}-odd.sqlite"));
    std::fs::copy(fixture(name), &path).expect("the fixture copied");
    Connection::open(&path)
        .expect("the copy opens")
        .execute_batch(sql)
        .expect("the edit applies");
    sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("odd report should load: {e}"))
}

/// Counts frames and the time they take; panics on a hang.
struct Driver {
    h: Harness<'static, SightlineApp>,
    frames: usize,
    t0: Instant,
    slowest: Duration,
    what: &'static str,
}

impl Driver {
    fn new(trace: Trace, what: &'static str, tofu: bool) -> Self {
        let app = SightlineApp::with_trace(trace);
        let mut b = Harness::builder().with_size(vec2(1400.0, 900.0));
        if tofu {
            // kittest panics on a glyph no font has; the app (egui's default
            // policy) draws a box. U+FFFD from invalid UTF-8 is such a glyph.
            b = b.allow_missing_glyphs();
        }
        let h = b.build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
        let mut d = Driver {
            h,
            frames: 0,
            t0: Instant::now(),
            slowest: Duration::ZERO,
            what,
        };
        d.steps(3);
        d
    }

    fn steps(&mut self, n: usize) {
        for _ in 0..n {
            let t = Instant::now();
            self.h.step();
            self.frames += 1;
            self.slowest = self.slowest.max(t.elapsed());
            assert!(
                t.elapsed() < FRAME_LIMIT,
                "{}: frame {} took {:?}",
                self.what,
                self.frames,
                t.elapsed()
            );
            assert!(
                self.t0.elapsed() < TIME_LIMIT,
                "{}: {} frames took over {TIME_LIMIT:?} (slowest {:?})",
                self.what,
                self.frames,
                self.slowest
            );
        }
    }

    fn canvas(&self) -> egui::Rect {
        self.h.get_by_label_contains("Timeline,").rect()
    }

    fn key(&mut self, key: egui::Key, times: usize) {
        for _ in 0..times {
            self.h.key_press(key);
            self.steps(1);
        }
    }

    fn move_to(&mut self, pos: Pos2) {
        self.h.event(Event::PointerMoved(pos));
        self.steps(1);
    }

    fn click(&mut self, pos: Pos2) {
        self.move_to(pos);
        for pressed in [true, false] {
            self.h.event(Event::PointerButton {
                pos,
                button: PointerButton::Primary,
                pressed,
                modifiers: Modifiers::NONE,
            });
        }
        self.steps(2);
    }

    fn ctrl_wheel(&mut self, dy: f32, times: usize) {
        for _ in 0..times {
            self.h.event(Event::MouseWheel {
                unit: MouseWheelUnit::Line,
                delta: vec2(0.0, dy),
                modifiers: Modifiers::COMMAND,
                phase: TouchPhase::Move,
                source: egui::MouseWheelSource::Unknown,
            });
            self.steps(1);
        }
    }

    fn drag_ruler(&mut self, x0: f32, x1: f32) {
        let y = self.canvas().top() - 12.0;
        self.move_to(pos2(x0, y));
        self.h.drag_at(pos2(x0, y));
        self.steps(1);
        for k in 1..=5 {
            self.move_to(pos2(x0 + (x1 - x0) * k as f32 / 5.0, y));
        }
        self.h.drop_at(pos2(x1, y));
        self.steps(2);
    }

    fn view_is_finite(&self) {
        let doc = self.h.state().doc().expect("doc");
        let v = &doc.timeline.view;
        assert!(
            v.start.is_finite() && v.end.is_finite() && v.end > v.start,
            "{}: view {}..{}",
            self.what,
            v.start,
            v.end
        );
    }
}

/// The whole user session on one report.
fn drive(trace: Trace, what: &'static str, needle: &str) {
    drive_with(trace, what, needle, false)
}

fn drive_with(trace: Trace, what: &'static str, needle: &str, tofu: bool) {
    let mut d = Driver::new(trace, what, tofu);
    d.steps(3);
    let c = d.canvas();
    let mid = c.center();
    // Fit all, then hover and click in the middle of the rows.
    d.key(egui::Key::F, 1);
    d.move_to(mid);
    d.click(mid);
    d.click(pos2(c.left() + c.width() * 0.25, c.top() + 20.0));
    d.view_is_finite();
    // Deep zoom in with keys and the wheel, then back out.
    d.move_to(mid);
    d.key(egui::Key::W, 40);
    d.ctrl_wheel(10.0, 10);
    d.view_is_finite();
    d.click(mid);
    d.ctrl_wheel(-10.0, 15);
    d.key(egui::Key::S, 40);
    d.view_is_finite();
    // Far pans both ways, beyond the trace.
    d.key(egui::Key::A, 20);
    d.key(egui::Key::D, 40);
    d.view_is_finite();
    d.key(egui::Key::F, 1);
    // A range on the ruler, then every stats tab.
    d.drag_ruler(c.left() + c.width() * 0.3, c.left() + c.width() * 0.7);
    if let Some(doc) = d.h.state_mut().doc_mut() {
        doc.stats.wait();
    }
    d.steps(1);
    for i in 0..sightline::analysis::stats::Report::ALL.len() {
        if let Some(doc) = d.h.state_mut().doc_mut() {
            doc.stats.tab = i;
        }
        d.steps(2);
    }
    // Search and step through the matches.
    let field = d.h.get_by_label("Search");
    field.focus();
    field.type_text(needle);
    d.steps(2);
    d.key(egui::Key::Enter, 5);
    d.view_is_finite();
    d.steps(2);
    eprintln!(
        "{what}: {} frames in {:?}, slowest {:?}",
        d.frames,
        d.t0.elapsed(),
        d.slowest
    );
}

const EVENT_TABLES: &[&str] = &[
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
    "OSRT_API",
];

#[test]
fn one_event_in_the_whole_trace() {
    let mut sql: String = EVENT_TABLES
        .iter()
        .map(|t| format!("DELETE FROM {t};"))
        .collect();
    sql += "DELETE FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT;
            DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL
            WHERE rowid > (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);";
    let trace = odd_report("sync_timing", &sql);
    assert_eq!(trace.event_count(), 1);
    drive(trace, "one event", "a");
}

#[test]
fn all_events_at_the_same_timestamp() {
    let sql: String = EVENT_TABLES
        .iter()
        .chain(&["CUPTI_ACTIVITY_KIND_KERNEL"])
        .map(|t| format!("UPDATE {t} SET start = 1000, end = 1000;"))
        .collect();
    drive(odd_report("sync_timing", &sql), "zero-length trace", "cuda");
}

#[test]
fn extreme_timestamps() {
    let trace = odd_report(
        "sync_timing",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9000000000000000000 WHERE rowid = 1;
         UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 9000000000000000000 WHERE rowid = 2;",
    );
    drive(trace, "extreme timestamps", "a");
}

#[test]
fn events_ending_before_they_start() {
    let sql: String = EVENT_TABLES
        .iter()
        .chain(&["CUPTI_ACTIVITY_KIND_KERNEL"])
        .map(|t| {
            format!("UPDATE {t} SET end = start - 1000 * (rowid % 7 + 1) WHERE end IS NOT NULL;")
        })
        .collect();
    drive(odd_report("sync_timing", &sql), "negative durations", "a");
}

#[test]
fn no_gpu_tables() {
    let trace = odd_report(
        "sync_timing",
        "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY;
         DROP TABLE IF EXISTS CUPTI_ACTIVITY_KIND_MEMSET;
         DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;",
    );
    drive(trace, "no GPU tables", "cuda");
}

#[test]
fn no_cpu_tables() {
    let trace = odd_report(
        "sync_timing",
        "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME; DROP TABLE OSRT_API; DROP TABLE NVTX_EVENTS;",
    );
    drive(trace, "no CPU tables", "a");
}

#[test]
fn three_thousand_overlapping_nvtx_ranges() {
    let trace = odd_report(
        "sync_timing",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
         INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
         SELECT 1000 + i, 10000000 + i, 60, 'overlap', 281474976710656 + (553 << 24) + 553, 0 FROM n;",
    );
    drive(trace, "3000 overlapping ranges", "overlap");
}

#[test]
fn a_five_megabyte_kernel_name() {
    let trace = odd_report(
        "sync_timing",
        "UPDATE StringIds SET value = 'k' || hex(zeroblob(2621440))
            WHERE id = (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1);",
    );
    drive(trace, "5 MB name", "k000");
}

#[test]
fn every_api_call_in_its_own_process() {
    let trace = odd_report(
        "sync_timing",
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = (rowid << 24) + rowid;",
    );
    assert!(trace.processes.len() > 200);
    drive(trace, "hundreds of processes", "cuda");
}

#[test]
fn invalid_utf8_and_empty_names() {
    let trace = odd_report(
        "sync_timing",
        "UPDATE StringIds SET value = CAST(x'66ff6fc328' AS TEXT)
            WHERE id = (SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1);
         UPDATE StringIds SET value = ''
            WHERE id IN (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL);
         UPDATE NVTX_EVENTS SET text = CAST(x'c328ff' AS TEXT) WHERE text IS NOT NULL;
         UPDATE StringIds SET value = CAST(x'c328ff' AS TEXT)
            WHERE id IN (SELECT textId FROM NVTX_EVENTS WHERE textId IS NOT NULL);",
    );
    drive_with(trace, "invalid UTF-8 / empty names", "\u{FFFD}", true);
}
