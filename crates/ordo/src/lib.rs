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
//! ```
pub mod check;
pub mod harness;
pub mod protocols;
pub mod storage;
pub mod txn;
