//! Window settings that belong to no one report: theme, UI zoom, presentation
//! mode and the details panel. Kept across restarts with the rest of `Saved`.

use eframe::egui::{self, Key, Ui};
use serde::{Deserialize, Serialize};

/// Which colours the window uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Theme {
    /// Whatever the desktop says (dark when it says nothing).
    #[default]
    System,
    Dark,
    /// For projectors: a dark-on-light timeline stays legible in a lit room.
    Light,
}

impl Theme {
    pub const ALL: [Theme; 3] = [Theme::System, Theme::Dark, Theme::Light];

    pub fn label(self) -> &'static str {
        match self {
            Theme::System => "Follow the system",
            Theme::Dark => "Dark",
            Theme::Light => "Light",
        }
    }

    fn preference(self) -> egui::ThemePreference {
        match self {
            Theme::System => egui::ThemePreference::System,
            Theme::Dark => egui::ThemePreference::Dark,
            Theme::Light => egui::ThemePreference::Light,
        }
    }
}

/// The UI zoom presentation mode starts at: 12.5-point text becomes 16 px,
/// rows 23 px, readable from the back of a room, while a 1280×720 projector
/// still has room for a lesson, the timeline and the details side by side.
pub const PRESENTATION_ZOOM: f32 = 1.3;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Prefs {
    pub theme: Theme,
    /// UI zoom outside presentation mode (Ctrl +/−/0 change the one in force).
    pub zoom: f32,
    /// UI zoom in presentation mode.
    pub presentation_zoom: f32,
    /// Menus, tabs and notices hidden, everything larger.
    pub presentation: bool,
    /// The details panel keeps its place on the right whether or not an
    /// event is selected, so selecting never moves the timeline.
    pub details_panel: bool,
}

impl Default for Prefs {
    fn default() -> Self {
        Prefs {
            theme: Theme::System,
            zoom: 1.0,
            presentation_zoom: PRESENTATION_ZOOM,
            presentation: false,
            details_panel: true,
        }
    }
}

impl Prefs {
    /// Applies the theme and the zoom in force (at start, and after a change).
    pub fn apply(&self, ctx: &egui::Context) {
        ctx.set_theme(self.theme.preference());
        ctx.set_zoom_factor(self.current_zoom());
    }

    fn current_zoom(&self) -> f32 {
        self.zoom_for(self.presentation)
    }

    /// The zoom of presentation mode or of the ordinary window (in force
    /// from the pass after a change: egui applies a new zoom factor at the
    /// start of a pass).
    pub fn zoom_for(&self, presentation: bool) -> f32 {
        let zoom = if presentation {
            self.presentation_zoom
        } else {
            self.zoom
        };
        // A hand-edited or corrupt setting must not make the window unusable.
        if zoom.is_finite() {
            zoom.clamp(0.5, 4.0)
        } else {
            1.0
        }
    }

    /// Remembers the zoom in force (egui changes it on Ctrl +/−/0).
    pub fn remember_zoom(&mut self, ctx: &egui::Context) {
        let zoom = ctx.zoom_factor();
        if self.presentation {
            self.presentation_zoom = zoom;
        } else {
            self.zoom = zoom;
        }
    }

    /// Enters or leaves presentation mode, each with its own zoom.
    pub fn set_presentation(&mut self, ctx: &egui::Context, on: bool) {
        if on == self.presentation {
            return;
        }
        self.remember_zoom(ctx);
        self.presentation = on;
        ctx.set_zoom_factor(self.current_zoom());
    }

    /// F5 toggles presentation mode (as slides do), unless a text field has the keys.
    pub fn keys(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, Key::F5)) {
            self.set_presentation(ctx, !self.presentation);
        }
    }

    /// The View menu's entries for these settings.
    pub fn menu(&mut self, ui: &mut Ui) {
        let mut presentation = self.presentation;
        if ui
            .checkbox(&mut presentation, "Presentation (F5)")
            .on_hover_text("larger everything, menus hidden; F5 or the Exit button leaves")
            .changed()
        {
            self.set_presentation(ui.ctx(), presentation);
        }
        ui.checkbox(&mut self.details_panel, "Details panel");
        ui.menu_button("Theme", |ui| {
            for theme in Theme::ALL {
                if ui.radio(self.theme == theme, theme.label()).clicked() {
                    self.theme = theme;
                    ui.ctx().set_theme(theme.preference());
                }
            }
        });
        ui.horizontal(|ui| {
            ui.label(format!("UI zoom {:.0}%", ui.ctx().zoom_factor() * 100.0));
            if ui.small_button("−").on_hover_text("Ctrl −").clicked() {
                egui::gui_zoom::zoom_out(ui.ctx());
            }
            if ui.small_button("+").on_hover_text("Ctrl +").clicked() {
                egui::gui_zoom::zoom_in(ui.ctx());
            }
            if ui.small_button("100%").on_hover_text("Ctrl 0").clicked() {
                ui.ctx().set_zoom_factor(1.0);
            }
        });
    }
}
