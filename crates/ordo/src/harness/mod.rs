//! The harness: workloads, closed-loop benchmark runs, and verification runs with the checker.
//!
//! The harness owns measurement (warm-up, the measured interval, counting, latency histograms);
//! protocols own execution through [`crate::protocols::Protocol::execute`], so a protocol with its own
//! execution model (a sequencer, a lock-manager thread, batches) can plug in without a different loop.

pub mod affinity;
pub mod bench;
pub mod join;
pub mod memory;
mod prefetch;
pub mod verify;
pub mod workload;

pub use bench::{BenchConfig, RunResult};
pub use verify::{Verified, VerifyConfig};
pub use workload::{Violation, Workload};
