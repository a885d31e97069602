//! Sightline: a native viewer for Nsight Systems reports.
//!
//! Data flows one way: [`loader`] reads a report into the [`model`], [`analysis`]
//! computes summaries from the model, and the views ([`app`]) draw both. [`cli`]
//! holds the command-line front ends; [`synth`] writes reports in the nsys schema;
//! [`lessons`] reads the guided lessons the viewer walks a class through.

// The code a user runs unwraps nothing they or a driver supply, and no function of it is longer
// than a reader can hold (150 lines, clippy.toml); the unit tests may unwrap.
#![deny(clippy::unwrap_used, clippy::too_many_lines)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod analysis;
pub mod annotations;
pub mod app;
pub mod capture;
pub mod cli;
pub mod engine_process;
pub mod files;
pub mod job;
pub mod lessons;
pub mod loader;
pub mod memory;
pub mod model;
pub mod synth;
pub mod threads;

/// Big buffers on huge pages (see [`memory::BigBuffersOnHugePages`]): the
/// library's, so the app, its tests and its benchmarks all run with it.
#[global_allocator]
static ALLOCATOR: memory::BigBuffersOnHugePages = memory::BigBuffersOnHugePages;
