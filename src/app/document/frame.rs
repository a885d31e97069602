//! The document's frame in the window: its findings, notes and range-statistics panels, the
//! timeline in the middle; and the kernel panel, which the window (`shell`) docks under the
//! timeline beside the details panel it places.

use std::time::Duration;

use eframe::egui::{self, Color32, RichText, Ui};

use super::Document;
use crate::app::state::events::Table;

impl Document {
    /// Draws the document's panels and timeline into `ui`; `exporting` while an image of the
    /// timeline is being taken (it gets a caption), `presenting` in presentation mode.
    pub fn frame(&mut self, ui: &mut Ui, exporting: bool, presenting: bool) {
        // On a projector the findings, the notes and the range's statistics go under the
        // timeline (beside the lesson, a column more left the events a strip), each a share of
        // the height.
        let under = usize::from(self.findings.open)
            + usize::from(self.selection.range.is_some())
            + usize::from(self.notes.open && self.notes.is_enabled());
        let share = if under > 1 { 0.28 } else { 0.4 };
        let under_max = presenting.then(|| ui.available_height() * share);
        self.findings_frame(ui, under_max);
        self.notes_frame(ui, under_max);
        self.range_stats_area = None;
        if let Some(range) = self.selection.range {
            let panel = egui::Panel::bottom(("range_stats", presenting))
                .default_size(under_max.map_or(280.0, |h| h.min(280.0)))
                .max_size(under_max.unwrap_or(f32::INFINITY))
                .resizable(true)
                .show(ui, |ui| {
                    if let Some(command) = self.stats.ui(ui, range) {
                        self.apply(command, ui.ctx());
                    }
                });
            self.range_stats_area = Some(panel.response.rect);
        }
        if self.cpu_profile.is_shown() {
            egui::Panel::bottom("cpu_profile")
                .default_size(300.0)
                .resizable(true)
                .show(ui, |ui| self.cpu_profile.ui(ui));
        }
        if self.timeline.prepare_projection(&self.trace) {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        // The rows need it, and so do a selected NVTX range's details.
        let show_idle = self.timeline.view.show_idle_why
            || (self.selection.event).is_some_and(|e| e.table == Table::Nvtx);
        // The findings engine's attribution is the row's (made once).
        let engine_coming = self.findings.is_pending();
        if (self.timeline.idle_rows).prepare(show_idle, &self.trace, engine_coming) {
            ui.ctx().request_repaint_after(Duration::from_millis(50));
        }
        let selected_before = self.selection.event;
        let central = egui::CentralPanel::default().show(ui, |ui| {
            // An exported image says what it shows: the report, the span
            // and a scale (drawn only while the image is taken).
            let caption = exporting.then(|| {
                crate::app::widgets::export_image::caption(
                    ui,
                    &crate::app::widgets::format::file_name(&self.path),
                    (self.timeline.view.start, self.timeline.view.end),
                    self.timeline.canvas.width(),
                )
            });
            // Hidden rows are remembered across sessions: say so, or a user
            // meets a timeline with rows missing and no idea why.
            let hidden = self.timeline.view.hidden.len();
            if hidden > 0 && !presenting {
                ui.horizontal(|ui| {
                    ui.label(
                        RichText::new(format!(
                            "{hidden} row{} hidden",
                            if hidden == 1 { "" } else { "s" }
                        ))
                        .color(Color32::from_rgb(230, 180, 80)),
                    );
                    if ui.small_button("Show").clicked() {
                        self.timeline.view.hidden.clear();
                    }
                });
            }
            self.timeline.highlight = std::mem::take(&mut self.search.mask);
            let before = (self.timeline.view.start, self.timeline.view.end);
            let out = self.timeline.ui(ui, &self.trace, &self.selection);
            let mut rows = self.timeline.area;
            rows.max.y = self.timeline.rows_bottom.max(rows.min.y);
            self.export_area = Some(caption.map_or(rows, |c| c.union(rows)));
            self.notes_menu(&out);
            // Follow mode ends as soon as the user zooms or pans.
            if let Some(live) = self.live.as_mut()
                && live.is_running()
                && before != (self.timeline.view.start, self.timeline.view.end)
            {
                live.follow = false;
            }
            self.search.mask = std::mem::take(&mut self.timeline.highlight);
            (out.clicked, out.commands)
        });
        // What the timeline asked of the selection: a click, a range dragged out, Escape.
        let (clicked, commands) = central.inner;
        for command in commands {
            self.apply(command, ui.ctx());
        }
        // A kernel clicked on the timeline opens its panel once a double-click
        // can no longer follow (the panel's dock changes the timeline's height).
        let now = ui.input(|i| i.time);
        let delay = ui.ctx().options(|o| o.input_options.max_double_click_delay);
        // A click on the kernel still selected counts too: its panel may
        // have been closed since.
        if let Some(ev) = self.selection.event
            && (self.selection.event != selected_before || clicked == Some(ev))
            && ev.table == Table::Kernel
            && let Some(&name) = self.trace.kernels.spans.name.get(ev.index as usize)
        {
            self.kernel_pending = Some((name, now + delay));
        }
        // (Opened at the start of a later frame, before the dock that shows it is laid out.)
        if let Some((_, at)) = self.kernel_pending {
            ui.ctx()
                .request_repaint_after(Duration::from_secs_f64((at - now).max(0.0)));
        }
        if self.metric_sets.poll() {
            if let Some(strip) = self.metric_sets.restore_strip(&self.trace) {
                self.timeline.metrics_strip = Some(strip);
            }
            ui.ctx().request_repaint();
        }
        if self.metric_sets.is_busy() {
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
    }

    /// Opens the kernel panel a click on the timeline asked for, once a double-click can no
    /// longer follow; called at the start of a frame, before the window lays out its dock.
    pub fn open_pending_kernel(&mut self, ctx: &egui::Context) {
        let now = ctx.input(|i| i.time);
        if let Some((name, at)) = self.kernel_pending
            && now >= at
        {
            self.kernel_pending = None;
            self.open_kernel(name);
        }
    }

    /// The kernel panel, drawn into `ui` (the window's dock under the timeline); what it asks
    /// is applied.
    pub fn kernel_panel_ui(&mut self, ui: &mut Ui) {
        self.kernel
            .metrics
            .set_sources(&self.metric_sets.sets, self.metric_sets.generation);
        let range = self.selection.range;
        if let Some(command) = self.kernel.ui(ui, &self.trace, range) {
            self.apply(command, ui.ctx());
        }
    }
}
