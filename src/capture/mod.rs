//! Live capture: Sightline runs its own CUDA benchmarks and records them.
//!
//! Sources of the trace model beside the SQLite loader: [`session`] records a
//! benchmark with CUPTI ([`cupti`] → [`records`]) into a growing nsys-schema
//! report ([`live`]), whose snapshots [`publisher`] loads on a thread of its own while it runs; [`replay`] feeds a
//! saved report through the same path at its recorded pace. [`environment`]
//! checks the machine first (driver, CUPTI, another profiler), because cudarc
//! panics on a missing library. The benchmarks themselves ([`benchmarks`],
//! device code in `kernels/`) mark their phases with NVTX ([`nvtx`]).
//! [`counters`] collects hardware counters per kernel in a separate counter
//! pass (CUPTI Range Profiler + Profiler Host API).

pub mod benchmarks;
pub mod counters;
pub mod cupti;
pub mod dump;
pub mod environment;
pub mod live;
mod messages;
pub mod nvtx;
pub mod publisher;
pub mod records;
pub mod replay;
pub mod session;
