//! What the document does with its findings: shows one (selects its events, marks it) and keeps
//! the findings panel and the timeline's marks in step.

use super::Document;
use eframe::egui::{self, Ui};
use std::time::Duration;

impl Document {
    /// Takes the engine's findings when they are in and shows the panel (if
    /// open); applies what a click in it asked. Called once per frame, before
    /// the central panel. `under` (presentation mode) puts the panel under the timeline, at
    /// most that high.
    pub fn findings_frame(&mut self, ui: &mut Ui, under: Option<f32>) {
        if self.findings.poll(&self.trace, &mut self.timeline) {
            ui.ctx().request_repaint();
        }
        if self.findings.is_pending() {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        if !self.findings.open {
            return;
        }
        // Only while the panel shows it: the facts take a pass over the
        // report's ranges.
        self.findings
            .explain_selection(&self.trace, self.selection.event);
        let mut cmd = None;
        match under {
            Some(height) => egui::Panel::bottom(("findings", true))
                .default_size(height)
                .max_size(height)
                .resizable(true)
                .show(ui, |ui| cmd = self.findings.ui(ui)),
            None => egui::Panel::left("findings")
                .default_size(440.0)
                .min_size(280.0)
                .resizable(true)
                .show(ui, |ui| cmd = self.findings.ui(ui)),
        };
        if let Some(c) = cmd {
            self.apply(c, ui.ctx());
        }
    }

    /// Blocks until this report's findings are in, and marks them (tests).
    pub fn wait_for_findings(&mut self) {
        self.findings.wait(&self.trace, &mut self.timeline);
    }

    /// Blocks until the work an opened report starts by itself is done: the
    /// findings and the idle rows' attribution (benchmarks, screenshots).
    pub fn wait_for_background_work(&mut self) {
        self.wait_for_findings();
        self.timeline.idle_rows.wait(&self.trace);
    }
}
