//! Every file the window asks the user for (a report, a job's reports, an Nsight Compute CSV)
//! goes through here: the desktop's file dialog on a thread of its own (with no portal it may
//! block or fail, and the window must stay alive either way), and where the desktop has none,
//! Sightline's own browser (`file_browser`) for the same purpose. No call site asks `rfd` itself.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::app::job::Job;

/// A native dialog that answers with nothing sooner than this was never shown (no desktop
/// portal); later, the user cancelled it.
pub const NO_DIALOG_WITHIN: Duration = Duration::from_millis(800);

/// What a file is asked for: it decides the dialog's title and filter, and what the window
/// does with the answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Purpose {
    /// File ▸ Open…: one report.
    #[default]
    OpenReport,
    /// File ▸ Open job…: the reports of one distributed run, or their folder.
    OpenJob,
    /// File ▸ Attach Nsight Compute results…: an ncu CSV for the report at `report`.
    AttachNcu { report: PathBuf },
}

impl Purpose {
    /// The dialog's (and the browser's) title.
    pub fn title(&self) -> &'static str {
        match self {
            Purpose::OpenReport => "Open a report",
            Purpose::OpenJob => "Open a job (its reports, one per rank, or their folder)",
            Purpose::AttachNcu { .. } => "Attach Nsight Compute results (an ncu --csv file)",
        }
    }

    /// The files it lists: their kind, and their extensions.
    pub fn filter(&self) -> (&'static str, &'static [&'static str]) {
        match self {
            Purpose::OpenReport | Purpose::OpenJob => {
                ("Nsight Systems SQLite export", &["sqlite", "db"])
            }
            Purpose::AttachNcu { .. } => ("Nsight Compute CSV", &["csv"]),
        }
    }

    /// Whether several files may be chosen at once.
    pub fn many(&self) -> bool {
        matches!(self, Purpose::OpenJob)
    }
}

/// How a request for a file ended.
#[derive(Debug, PartialEq)]
pub enum Answer {
    /// The files chosen (one, unless the purpose takes several).
    Chosen(Purpose, Vec<PathBuf>),
    /// No dialog could be shown: the browser takes over.
    NoDialog(Purpose),
    /// The user closed the dialog without a choice.
    Cancelled,
}

/// The desktop's dialog, asked on a worker thread.
#[derive(Default)]
pub struct FileDialog {
    job: Job<Option<Vec<PathBuf>>>,
    asked: Option<(Purpose, Instant)>,
}

impl FileDialog {
    /// Shows the desktop's dialog for `purpose` (answered through [`FileDialog::poll`]).
    pub fn ask(&mut self, purpose: Purpose) -> Result<(), String> {
        let (kind, extensions) = purpose.filter();
        let many = purpose.many();
        let title = purpose.title();
        let started = self.job.start("sightline-dialog", None, move |_| {
            let picked = std::panic::catch_unwind(|| {
                let dialog = rfd::FileDialog::new()
                    .set_title(title)
                    .add_filter(kind, extensions)
                    .add_filter("All files", &["*"]);
                if many {
                    dialog.pick_files()
                } else {
                    dialog.pick_file().map(|f| vec![f])
                }
            });
            Some(picked.unwrap_or(None))
        });
        if !started {
            return Err("cannot open a file dialog: no thread".into());
        }
        self.asked = Some((purpose, Instant::now()));
        Ok(())
    }

    /// Whether a dialog is up (the window keeps polling meanwhile).
    pub fn is_running(&self) -> bool {
        self.asked.is_some()
    }

    /// The answer, once the dialog has given one.
    pub fn poll(&mut self) -> Option<Answer> {
        let (purpose, asked) = self.asked.take()?;
        let picked = match self.job.take() {
            Some(picked) => picked,
            None if self.job.is_running() => {
                self.asked = Some((purpose, asked));
                return None;
            }
            // The dialog's thread died: as if nothing was chosen.
            None => None,
        };
        Some(answer(purpose, picked, asked.elapsed()))
    }
}

/// What a dialog that gave `picked` after `waited` means.
pub fn answer(purpose: Purpose, picked: Option<Vec<PathBuf>>, waited: Duration) -> Answer {
    match picked {
        Some(files) if !files.is_empty() => Answer::Chosen(purpose, files),
        _ if waited < NO_DIALOG_WITHIN => Answer::NoDialog(purpose),
        _ => Answer::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_at_once_is_no_dialog_and_later_a_cancel() {
        let quick = answer(Purpose::OpenJob, None, Duration::from_millis(5));
        assert_eq!(quick, Answer::NoDialog(Purpose::OpenJob));
        let late = answer(
            Purpose::OpenReport,
            Some(Vec::new()),
            Duration::from_secs(3),
        );
        assert_eq!(late, Answer::Cancelled);
        let chosen = answer(
            Purpose::OpenReport,
            Some(vec![PathBuf::from("a.sqlite")]),
            Duration::from_millis(1),
        );
        assert_eq!(
            chosen,
            Answer::Chosen(Purpose::OpenReport, vec![PathBuf::from("a.sqlite")])
        );
    }
}
