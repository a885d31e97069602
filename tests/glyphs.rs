//! Every character the window can show is one its fonts have. egui's default
//! proportional font (Ubuntu Light) lacks arrows and many symbols: a debug
//! build panics on such text ("No glyph for …") and a release build draws a
//! box. The texts are the string literals of the sources and the lessons.

use std::path::{Path, PathBuf};

use eframe::egui::{self, FontFamily, FontId};

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// The non-ASCII characters inside double-quoted literals of `text`, with
/// line numbers; `//` comments are left out of Rust sources.
fn quoted_chars(text: &str, rust: bool) -> Vec<(usize, char)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = if rust {
            line.split("//").next().unwrap_or("")
        } else {
            line
        };
        let mut inside = false;
        let mut escaped = false;
        for c in code.chars() {
            match c {
                '\\' if inside && !escaped => escaped = true,
                '"' if !escaped => inside = !inside,
                _ => {
                    if inside && !c.is_ascii() {
                        found.push((n + 1, c));
                    }
                    escaped = false;
                }
            }
        }
    }
    found
}

#[test]
fn every_shown_character_is_in_the_proportional_font() {
    let ctx = egui::Context::default();
    // The fonts exist once a frame has run; its texture upload is not needed.
    ctx.run_ui(egui::RawInput::default(), |_| {})
        .textures_delta
        .clear();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = Vec::new();
    files(&root.join("src"), "rs", &mut sources);
    files(&root.join("assets/lessons"), "toml", &mut sources);
    assert!(sources.len() > 20, "the sources were found");
    let proportional = FontId::new(14.0, FontFamily::Proportional);
    // The help's key column is monospace (Hack, which has the arrows).
    let monospace = FontId::new(14.0, FontFamily::Monospace);
    let mut missing = Vec::new();
    for path in &sources {
        let text = std::fs::read_to_string(path).expect("source text");
        let rust = path.extension().is_some_and(|e| e == "rs");
        let font = if path.ends_with("src/app/widgets/help.rs") {
            &monospace
        } else {
            &proportional
        };
        for (line, c) in quoted_chars(&text, rust) {
            if !ctx.fonts_mut(|f| f.has_glyph(font, c)) {
                missing.push(format!(
                    "{}:{line}: {c:?} (U+{:04X})",
                    path.strip_prefix(root).unwrap_or(path).display(),
                    c as u32
                ));
            }
        }
    }
    assert!(missing.is_empty(), "no glyph for:\n{}", missing.join("\n"));
}

#[test]
fn the_scan_sees_what_it_should() {
    let found = quoted_chars("let a = \"x ← y\"; // \"→\"\nlet b = \"\\\"µ\";", true);
    assert_eq!(found, vec![(1, '←'), (2, 'µ')]);
}
