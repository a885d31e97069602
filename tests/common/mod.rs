//! Helpers every test file needs: where the fixtures are, and loading one.
// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::model::Trace;

/// `tests/fixtures/NAME` (NAME with its extension, or a subfolder path).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The report `tests/fixtures/NAME`, loaded (a test fails if it does not load).
pub fn load(name: &str) -> Trace {
    let path = fixture(name);
    sightline::loader::load(&path, &mut |_| {}, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

/// eframe's storage, in memory (what survives a restart, for tests).
#[derive(Default)]
pub struct MemStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.into(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}
