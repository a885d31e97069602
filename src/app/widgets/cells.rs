//! Table cells of a fixed width: a name that does not fit is cut in the
//! middle ([`format::elide`]: its own name and its end kept, the full name on
//! hover), so long names never push the numbers beside it out of sight and
//! names that share a long start still read apart.

use eframe::egui::{self, Response, RichText, Ui, WidgetText, vec2};

use super::format;

/// A name cell `width` points wide: a link when `clickable`, else a label.
pub fn name(ui: &mut Ui, width: f32, text: &str, clickable: bool) -> Response {
    styled_name(ui, width, text, |t| RichText::new(t), clickable)
}

/// [`name`] drawn in a style (`style` makes the text shown from what fits).
/// Hovering a name that was cut shows it whole.
pub fn styled_name(
    ui: &mut Ui,
    width: f32,
    text: &str,
    style: impl Fn(&str) -> RichText,
    clickable: bool,
) -> Response {
    let shown = fit(ui, text, width);
    let cut = shown.len() != text.len();
    let height = ui.spacing().interact_size.y;
    let response = ui
        .allocate_ui_with_layout(
            vec2(width, height),
            egui::Layout::left_to_right(egui::Align::Center),
            |ui| {
                ui.set_width(width);
                let rich = style(&shown);
                if clickable {
                    ui.link(rich)
                } else {
                    ui.add(egui::Label::new(rich).extend())
                }
            },
        )
        .inner;
    if cut {
        response.on_hover_text(format::clip(text, format::MAX_LABEL_CHARS))
    } else {
        response
    }
}

/// `text` as it fits `width` points of body text: whole, or cut in the
/// middle ([`format::elide`]) to the most chars that fit.
pub fn fit<'a>(ui: &Ui, text: &'a str, width: f32) -> std::borrow::Cow<'a, str> {
    // No glyph is narrower than about 3 points: more chars than that never
    // fit, so a long name is cut to that first and only that much is laid out.
    let most = ((width / 3.0).ceil().max(3.0) as usize).min(format::MAX_LABEL_CHARS);
    let text = format::clip(text, most);
    let style = egui::TextStyle::Body;
    if text_width(ui, &text, style.clone()) <= width {
        return text;
    }
    // The widest cut that fits: a binary search on the count of chars.
    let (mut fits, mut too_wide) = (3usize, text.chars().count());
    while too_wide - fits > 1 {
        let mid = (fits + too_wide) / 2;
        if text_width(ui, &format::elide(&text, mid), style.clone()) <= width {
            fits = mid;
        } else {
            too_wide = mid;
        }
    }
    format::elide(&text, fits).into_owned().into()
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
