//! Table cells of a fixed width: a name that does not fit is cut with "…"
//! (the full name on hover), so long names never push the numbers beside it
//! out of sight.

use eframe::egui::{self, Response, TextWrapMode, Ui, WidgetText, vec2};

/// A name cell `width` points wide: a link when `clickable`, else a label.
/// Hovering a name that was cut shows it whole (egui's labels and links do
/// that themselves for elided text: a tooltip of our own showed it twice).
pub fn name(ui: &mut Ui, width: f32, text: impl Into<WidgetText>, clickable: bool) -> Response {
    let text: WidgetText = text.into();
    let height = ui.spacing().interact_size.y;
    ui.allocate_ui_with_layout(
        vec2(width, height),
        egui::Layout::left_to_right(egui::Align::Center),
        |ui| {
            ui.set_width(width);
            ui.style_mut().wrap_mode = Some(TextWrapMode::Truncate);
            if clickable {
                ui.link(text)
            } else {
                ui.label(text)
            }
        },
    )
    .inner
}

/// A right-aligned number cell `width` points wide (digits line up).
pub fn number(ui: &mut Ui, width: f32, text: impl Into<WidgetText>) -> Response {
    let height = ui.spacing().interact_size.y;
    ui.allocate_ui_with_layout(
        vec2(width, height),
        egui::Layout::right_to_left(egui::Align::Center),
        |ui| {
            ui.set_width(width);
            ui.add(egui::Label::new(text).extend())
        },
    )
    .inner
}

/// The width `text` takes in `style` on one line.
pub fn text_width(ui: &Ui, text: &str, style: egui::TextStyle) -> f32 {
    let font = style.resolve(ui.style());
    ui.fonts_mut(|f| {
        f.layout_no_wrap(text.to_owned(), font, egui::Color32::WHITE)
            .size()
            .x
    })
}
