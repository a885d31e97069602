//! The in-app help: every key and mouse gesture, from the one list the
//! README's key table is checked against (tests/gui_layout.rs).

use eframe::egui::{self, Key, RichText};

/// Every key and gesture the window answers to, as (keys, what they do).
pub const KEYS: &[(&str, &str)] = &[
    ("Ctrl+wheel, pinch", "zoom the timeline at the pointer"),
    ("W / S", "zoom in / out at the pointer"),
    ("A / D", "pan left / right"),
    ("Wheel", "scroll the rows"),
    ("Shift+wheel, drag", "pan"),
    (
        "Drag on the ruler, Shift+drag",
        "select a range and aggregate it",
    ),
    ("Click", "select an event (its details on the right)"),
    ("Double-click, F", "zoom to the event (F: or to the range)"),
    ("Home, 0", "fit the whole report"),
    ("G", "zoom to the GPU and NVTX activity"),
    ("Backspace", "undo the last zoom"),
    (
        "Esc",
        "close the help window if open, else clear the selection and the range",
    ),
    (
        "N",
        "a note on the selected event, else at the pointer; with the notes open: close them",
    ),
    ("Right-click (rows)", "add a note here, or on the event"),
    ("Ctrl+F, /", "search"),
    (
        "Enter (in search)",
        "find, show the next match, give the keys back",
    ),
    (
        "Enter, Shift+Enter (after a search)",
        "next / previous match",
    ),
    (
        "Ctrl + / Ctrl − / Ctrl 0",
        "UI zoom larger / smaller / 100%",
    ),
    ("F5", "presentation mode on / off"),
    (
        "← / →, PageUp / PageDown",
        "previous / next step of the open lesson",
    ),
    ("F1, ?", "this help"),
    ("Ctrl+Q", "quit"),
];

/// The help window's state.
#[derive(Default)]
pub struct Help {
    pub open: bool,
}

impl Help {
    /// F1 toggles the window; draws it when open.
    pub fn ui(&mut self, ctx: &egui::Context) {
        let typing = ctx.egui_wants_keyboard_input();
        if ctx.input_mut(|i| {
            i.consume_key(egui::Modifiers::NONE, Key::F1)
                || (!typing && i.key_pressed(Key::Questionmark))
        }) {
            self.open = !self.open;
        }
        // The topmost transient window goes first: Esc closes the help
        // before it reaches the timeline (where it clears the selection).
        if self.open
            && !typing
            && ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, Key::Escape))
        {
            self.open = false;
        }
        egui::Window::new("Keys and mouse")
            .open(&mut self.open)
            .resizable(false)
            .collapsible(false)
            .show(ctx, |ui| {
                egui::Grid::new("keys")
                    .num_columns(2)
                    .striped(true)
                    .spacing([16.0, 4.0])
                    .show(ui, |ui| {
                        for (keys, action) in KEYS {
                            ui.label(RichText::new(*keys).strong().monospace());
                            ui.label(*action);
                            ui.end_row();
                        }
                    });
            });
    }
}
