//! # Ordo
//!
//! One in-memory storage core on which many concurrency-control protocols run side by side, one way to
//! write a transaction that every protocol can run, and a serializability checker that judges them all.
//!
//! ```text
//!  protocols ── one folder per family (nocc, twopl, silo, …): per-record + per-transaction state
//!  txn ──────── the interactive Tx API, programs of pieces with declared accesses, aborts, retry
//!  storage ──── schemas, row arena (generic per-record state), hash + ordered indexes
//!  check ────── recorded histories → Adya's serialization graph → named anomalies
//!  harness ──── workloads, closed-loop benchmark runs, verification runs
//!  error ────── why a run could not be made (ordo::Error, ordo::Result)
//!  range_locks ─ range lock managers compared in isolation (VLLR vs two traditional ones)
//! ```
pub mod check;
pub mod error;
pub mod harness;
pub mod options;
pub mod protocols;
pub mod range_locks;
pub mod storage;
pub mod txn;

pub use error::{Error, Result};

/// Runs a loom model over every interleaving with up to three preemptions (loom's advice for
/// bounding a model; the failures the models in `*_loom.rs` look for need one or two). Only in
/// `--cfg ordo_loom` test builds.
#[cfg(all(test, ordo_loom))]
pub(crate) fn loom_model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}
