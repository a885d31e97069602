//! Sightline: a native viewer for Nsight Systems reports.
//!
//! Data flows one way: [`loader`] reads a report into the [`model`], [`analysis`]
//! computes summaries from the model, and the views ([`app`]) draw both. [`cli`]
//! holds the command-line front ends; [`synth`] writes reports in the nsys schema;
//! [`files`] writes files aside and renames them, for the CLI and the viewer.

pub mod analysis;
pub mod app;
pub mod capture;
pub mod cli;
pub mod files;
pub mod loader;
pub mod model;
pub mod synth;
