//! Comparing two reports from the window: the Compare menu and `sightline A B --compare`.

use super::{SightlineApp, Tab};
use crate::app::panels::compare_view::*;
use eframe::egui::{RichText, Ui};
use std::path::PathBuf;

impl SightlineApp {
    /// Opens a compare tab for two reports: a tab already open is used as it
    /// is, any other file is read for the view.
    pub fn open_compare(&mut self, a: PathBuf, b: PathBuf) {
        let source = |app: &SightlineApp, path: PathBuf| {
            app.docs()
                .find(|d| super::same_file(&d.path, &path))
                .map(|d| Source::Open(d.path.clone(), d.trace.clone()))
                .unwrap_or(Source::File(path))
        };
        let (a, b) = (source(self, a), source(self, b));
        self.push_compare(CompareView::new(a, b));
    }

    /// Compares the report shown with the open tab `other`.
    pub fn compare_with(&mut self, other: usize) {
        let Some(a) = self.doc() else { return };
        let a = Source::Open(a.path.clone(), a.trace.clone());
        let Some(Tab::Ready(b)) = self.tabs.get(other) else {
            return;
        };
        let b = Source::Open(b.path.clone(), b.trace.clone());
        self.push_compare(CompareView::new(a, b));
    }

    fn push_compare(&mut self, view: CompareView) {
        self.error = None;
        self.tabs.push(Tab::Compare(Box::new(view)));
        self.active = self.tabs.len() - 1;
    }

    /// The compare view shown, if the tab shown is one.
    pub fn compare_view(&self) -> Option<&CompareView> {
        match self.tabs.get(self.active)? {
            Tab::Compare(v) => Some(v),
            _ => None,
        }
    }

    pub fn compare_view_mut(&mut self) -> Option<&mut CompareView> {
        match self.tabs.get_mut(self.active)? {
            Tab::Compare(v) => Some(v),
            _ => None,
        }
    }

    /// File menu entries: compare the report shown with each other open one.
    pub(super) fn compare_menu(&mut self, ui: &mut Ui) {
        if self.doc().is_none() {
            return;
        }
        let others: Vec<(usize, String)> = self
            .tabs
            .iter()
            .enumerate()
            .filter(|&(i, t)| i != self.active && matches!(t, Tab::Ready(_)))
            .map(|(i, t)| (i, t.title()))
            .collect();
        ui.separator();
        ui.label(RichText::new("Compare with…").weak());
        if others.is_empty() {
            ui.weak("(open a second report to compare)");
        }
        for (i, title) in others {
            if ui
                .button(format!("Compare with {title}"))
                .on_hover_text("both reports one above the other on one time axis, and their diff")
                .clicked()
            {
                self.compare_with(i);
                ui.close();
            }
        }
    }
}

/// Opens the window on a compare view of `a` and `b` (for the command line).
pub fn run_compare(a: PathBuf, b: PathBuf) -> Result<(), String> {
    super::launch(move |app| app.open_compare(a, b))
}
