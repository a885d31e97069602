//! File ▸ Export image: the timeline as the user sees it (labels, ruler,
//! rows, notes and marks), as a PNG file or on the clipboard.
//!
//! The window is captured with egui's screenshot command, cropped to the
//! timeline's rect, and encoded with the `png` crate on a worker thread (a
//! 4K capture takes a noticeable moment to compress); the file is written
//! aside, then renamed. The capture waits two frames after the request so
//! that the menu it was asked from has closed and is not in the picture.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use eframe::egui::{self, ColorImage, Rect, Stroke, pos2, vec2};

use crate::app::job::Job;
use crate::app::widgets::format;
use crate::model::Ns;

/// Frames drawn between the request and the capture (the menu closes).
const SETTLE_FRAMES: u8 = 2;
/// A window that delivers no capture in this long never will (a renderer
/// without read-back, a headless test).
const CAPTURE_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the image goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// A PNG file; `replace`: the user agreed to replace the file there (a
    /// file that appears there meanwhile is not replaced unasked).
    File {
        path: PathBuf,
        replace: bool,
    },
    Clipboard,
}

/// What an export came to, for the window to show.
#[derive(Debug, PartialEq)]
pub enum ExportOutcome {
    Saved(PathBuf),
    Copied { width: usize, height: usize },
    Failed(String),
}

impl std::fmt::Display for ExportOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportOutcome::Saved(p) => write!(f, "Saved {}", p.display()),
            ExportOutcome::Copied { width, height } => write!(
                f,
                "Copied the timeline ({width}×{height} pixels) to the clipboard"
            ),
            ExportOutcome::Failed(e) => write!(f, "{e}"),
        }
    }
}

enum State {
    Idle,
    /// Frames to draw before capturing.
    Settling {
        target: Target,
        frames_left: u8,
    },
    /// The capture was asked for; the window answers on `image`.
    Capturing {
        target: Target,
        image: Receiver<Arc<ColorImage>>,
        since: Instant,
    },
    /// The PNG is being encoded and written.
    Writing(Job<Result<PathBuf, String>>),
}

/// The export in progress, and the path box of the File menu.
pub struct ImageExport {
    /// The File ▸ Export image path box.
    pub path: String,
    /// The report the box was filled in for: another tab shown fills it
    /// anew, so one report's image never goes into another's file.
    filled_for: Option<PathBuf>,
    /// A file exists where the box points: the menu asks before replacing it.
    confirm: Option<PathBuf>,
    state: State,
    /// Said in the status bar until dismissed (a copy to the clipboard).
    pub notice: Option<String>,
}

impl Default for ImageExport {
    fn default() -> Self {
        ImageExport {
            path: String::new(),
            filled_for: None,
            confirm: None,
            state: State::Idle,
            notice: None,
        }
    }
}

/// The default file for an image of `report`: `NAME-timeline.png` beside it
/// when its folder is the user's to write into, else in the user's pictures
/// (or home) folder — a bundled report lives among the app's files, which may
/// be read-only and are not where a user looks for a slide.
pub fn default_path(report: &Path) -> PathBuf {
    let stem = report
        .file_stem()
        .map_or_else(|| "timeline".into(), |s| s.to_string_lossy().into_owned());
    let name = format!("{stem}-timeline.png");
    match report.parent() {
        Some(dir) if crate::files::is_users_folder(dir) => dir.join(name),
        _ => user_folder().join(name),
    }
}

/// `$XDG_PICTURES_DIR`, else `~/Pictures` where it exists, else home, else
/// the temporary folder.
fn user_folder() -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    std::env::var_os("XDG_PICTURES_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .or_else(|| {
            home.as_ref()
                .map(|h| h.join("Pictures"))
                .filter(|d| d.is_dir())
        })
        .or(home)
        .unwrap_or_else(std::env::temp_dir)
}

impl ImageExport {
    pub fn is_busy(&self) -> bool {
        !matches!(self.state, State::Idle)
    }

    /// Between the request and the capture: the caption is drawn then.
    pub fn is_capturing(&self) -> bool {
        matches!(self.state, State::Settling { .. } | State::Capturing { .. })
    }

    /// Starts an export of the timeline shown.
    pub fn request(&mut self, target: Target) {
        self.state = State::Settling {
            target,
            frames_left: SETTLE_FRAMES,
        };
    }

    /// The menu entries: the path box (Enter exports) and Copy image.
    /// `report` is the report shown, for the default path; `None` disables both.
    /// A file that exists is replaced only once the user says so, in the menu.
    pub fn menu(&mut self, ui: &mut egui::Ui, report: Option<&Path>) {
        if let Some(r) = report
            && (self.filled_for.as_deref() != Some(r) || self.path.trim().is_empty())
        {
            self.path = default_path(r).display().to_string();
            self.filled_for = Some(r.to_path_buf());
            self.confirm = None;
        }
        let enabled = report.is_some() && !self.is_busy();
        ui.add_enabled_ui(enabled, |ui| {
            ui.horizontal(|ui| {
                let label = ui.label("Export image:");
                let r = ui
                    .text_edit_singleline(&mut self.path)
                    .labelled_by(label.id)
                    .on_hover_text("the timeline as shown, as a PNG (Enter saves)");
                if r.changed() {
                    self.confirm = None;
                }
                let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                let button = ui.button("Export");
                if (enter || button.clicked()) && !self.path.trim().is_empty() {
                    let path = PathBuf::from(self.path.trim());
                    // (A folder there is refused by the write, with its reason.)
                    if path.exists() && !path.is_dir() {
                        self.confirm = Some(path);
                    } else {
                        self.request(Target::File {
                            path,
                            replace: false,
                        });
                        ui.close();
                    }
                }
            });
            self.confirm_ui(ui);
            if ui
                .button("Copy image")
                .on_hover_text("the timeline as shown, to the clipboard")
                .clicked()
            {
                self.request(Target::Clipboard);
                ui.close();
            }
        });
    }

    /// The question asked before an export replaces a file: Replace, or
    /// Cancel (the menu stays open to type another name).
    fn confirm_ui(&mut self, ui: &mut egui::Ui) {
        let Some(path) = self.confirm.clone() else {
            return;
        };
        let warning = egui::Color32::from_rgb(230, 180, 80);
        ui.colored_label(
            warning,
            format!("{} already exists: replace it?", format::file_name(&path)),
        )
        .on_hover_text(path.display().to_string());
        ui.horizontal(|ui| {
            if ui.button("Replace").clicked() {
                self.confirm = None;
                self.request(Target::File {
                    path,
                    replace: true,
                });
                ui.close();
            }
            if ui.button("Cancel").clicked() {
                self.confirm = None;
            }
        });
    }

    /// Whether the menu asks before replacing a file (tests, screenshots).
    pub fn is_asking_to_replace(&self) -> bool {
        self.confirm.is_some()
    }

    /// The notice line of the status bar, with OK to dismiss it.
    pub fn status(&mut self, ui: &mut egui::Ui) {
        let mut dismiss = false;
        if let Some(n) = &self.notice {
            ui.horizontal(|ui| {
                ui.label(n);
                dismiss = ui.button("OK").clicked();
            });
        }
        if dismiss {
            self.notice = None;
        }
    }

    /// Moves the export along; call once per frame with the timeline's rect
    /// (`None` when no report is shown). Returns how it ended, once.
    pub fn poll(&mut self, ctx: &egui::Context, area: Option<Rect>) -> Option<ExportOutcome> {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => None,
            State::Settling {
                target,
                frames_left,
            } => {
                if frames_left > 0 {
                    self.state = State::Settling {
                        target,
                        frames_left: frames_left - 1,
                    };
                    ctx.request_repaint();
                    return None;
                }
                let (tx, rx) = crossbeam_channel::bounded(1);
                let waker = ctx.clone();
                ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(
                    egui::ScreenshotCallback::new(move |image| {
                        let _ = tx.send(image);
                        waker.request_repaint();
                    }),
                ));
                self.state = State::Capturing {
                    target,
                    image: rx,
                    since: Instant::now(),
                };
                ctx.request_repaint_after(Duration::from_millis(100));
                None
            }
            State::Capturing {
                target,
                image,
                since,
            } => match image.try_recv() {
                Ok(image) => {
                    let Some(area) = area else {
                        return Some(ExportOutcome::Failed(
                            "no timeline is shown to export".into(),
                        ));
                    };
                    let cropped = crop(&image, area, ctx.pixels_per_point());
                    if cropped.size[0] == 0 || cropped.size[1] == 0 {
                        return Some(ExportOutcome::Failed(
                            "the timeline is not on screen (nothing to export)".into(),
                        ));
                    }
                    match target {
                        Target::Clipboard => {
                            let [width, height] = cropped.size;
                            ctx.copy_image(cropped);
                            Some(ExportOutcome::Copied { width, height })
                        }
                        Target::File { path, replace } => self.write(cropped, path, replace),
                    }
                }
                Err(crossbeam_channel::TryRecvError::Empty)
                    if since.elapsed() < CAPTURE_TIMEOUT =>
                {
                    self.state = State::Capturing {
                        target,
                        image,
                        since,
                    };
                    ctx.request_repaint_after(Duration::from_millis(100));
                    None
                }
                Err(_) => Some(ExportOutcome::Failed(
                    "the window did not deliver a screenshot (this renderer may not support it)"
                        .into(),
                )),
            },
            State::Writing(mut job) => match job.take() {
                Some(Ok(path)) => Some(ExportOutcome::Saved(path)),
                Some(Err(e)) => Some(ExportOutcome::Failed(e)),
                None if job.is_running() => {
                    self.state = State::Writing(job);
                    ctx.request_repaint_after(Duration::from_millis(50));
                    None
                }
                // The worker ended without a result: it panicked.
                None => Some(ExportOutcome::Failed("writing the image failed".into())),
            },
        }
    }

    /// Encodes and writes on a worker thread; a file that is there and was
    /// not agreed to be replaced is left as it is.
    fn write(&mut self, image: ColorImage, path: PathBuf, replace: bool) -> Option<ExportOutcome> {
        let mut job = Job::default();
        let started = job.start("sightline-export-image", None, move |_| {
            if !replace && path.exists() {
                return Some(Err(format!(
                    "{} already exists: not replaced (export again to be asked)",
                    path.display()
                )));
            }
            Some(write_png(&path, &image).map(|()| path))
        });
        if started {
            self.state = State::Writing(job);
            None
        } else {
            Some(ExportOutcome::Failed(
                "cannot start writing the image: no thread".into(),
            ))
        }
    }
}

/// The part of `image` (a capture of the whole window, in pixels) under
/// `rect` (in points), clamped to the image: a rect partly off screen gives
/// the part on screen, one wholly off screen an empty image.
pub fn crop(image: &ColorImage, rect: Rect, pixels_per_point: f32) -> ColorImage {
    let [w, h] = image.size;
    let px = |v: f32, max: usize| ((v * pixels_per_point).round().max(0.0) as usize).min(max);
    let (x0, x1) = (px(rect.min.x, w), px(rect.max.x, w));
    let (y0, y1) = (px(rect.min.y, h), px(rect.max.y, h));
    if x1 <= x0 || y1 <= y0 {
        return ColorImage::new([0, 0], Vec::new());
    }
    image.region_by_pixels([x0, y0], [x1 - x0, y1 - y0])
}

/// `image` as PNG bytes (8-bit RGBA, not premultiplied).
pub fn encode_png(image: &ColorImage) -> Result<Vec<u8>, String> {
    let [w, h] = image.size;
    let (Ok(width), Ok(height)) = (u32::try_from(w), u32::try_from(h)) else {
        return Err(format!("the image is too large to save ({w}×{h})"));
    };
    let mut rgba = Vec::with_capacity(w * h * 4);
    for c in &image.pixels {
        rgba.extend_from_slice(&c.to_srgba_unmultiplied());
    }
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(&rgba).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Writes `image` to `path` as PNG, aside then renamed.
pub fn write_png(path: &Path, image: &ColorImage) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!(
            "{}: is a directory, not a file name",
            path.display()
        ));
    }
    let bytes = encode_png(image)?;
    crate::files::write_aside(path, &bytes)
        .map_err(|e| format!("cannot write the image {}: {e}", path.display()))
}

/// The caption of an exported image, drawn above the timeline while the
/// image is taken: the report's name, the span shown on the session clock
/// (as the ruler labels it) and a scale bar. `view` is the span shown (ns),
/// `canvas_width` the rows' width in points. Returns the caption's rect.
pub fn caption(ui: &mut egui::Ui, report: &str, view: (f64, f64), canvas_width: f32) -> Rect {
    let (start, end) = view;
    let span = (end - start).max(1.0);
    let scale = scale_bar(span);
    ui.horizontal(|ui| {
        ui.strong(report);
        ui.separator();
        ui.label(format!(
            "{} – {} ({} shown)",
            format::tick(start, span / 10.0),
            format::tick(end, span / 10.0),
            format::duration(span.round() as Ns)
        ));
        ui.separator();
        let px = (scale / span * canvas_width as f64) as f32;
        let (rect, _) = ui.allocate_exact_size(vec2(px.max(4.0), 12.0), egui::Sense::hover());
        let stroke = Stroke::new(2.0, ui.visuals().strong_text_color());
        let y = rect.center().y;
        ui.painter()
            .line_segment([pos2(rect.left(), y), pos2(rect.right(), y)], stroke);
        for x in [rect.left(), rect.right()] {
            ui.painter()
                .line_segment([pos2(x, rect.top()), pos2(x, rect.bottom())], stroke);
        }
        ui.label(format!("= {}", format::short_duration(scale)));
    })
    .response
    .rect
}

/// A 1-2-5 duration (ns) of at most a fifth of `span`, for the scale bar.
pub fn scale_bar(span: f64) -> f64 {
    let target = (span / 5.0).max(1.0);
    let decade = 10f64.powf(target.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|&v| v <= target)
        .unwrap_or(decade)
}
