//! Live capture: the benchmark programs Sightline runs, and the NVTX ranges that mark their
//! phases.

pub mod benchmarks;
pub mod nvtx;
