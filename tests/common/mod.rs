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
