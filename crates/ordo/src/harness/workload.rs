//! What a benchmark workload provides to the harness, and how it reports a broken invariant.

use crate::storage::{Database, LoadError};
use crate::txn::Program;

/// A benchmark: a schema and its initial data, and a stream of transaction programs.
///
/// The harness calls [`Workload::load`] once per protocol run (each protocol gets a fresh database of
/// its own per-record state), then each worker thread draws programs from its own generator.
pub trait Workload: Sync {
    /// The transaction programs this workload issues (usually an enum of its transaction types);
    /// `'static`, as [`crate::txn::RequestSource::Program`].
    type Program: Program + Send + 'static;
    /// Per-thread generator state (random number generator, reusable buffers).
    type Gen: Send;

    /// The workload's name (`ycsb`).
    fn name(&self) -> &'static str;

    /// Every parameter needed to reproduce a run, as JSON.
    fn params(&self) -> serde_json::Value;

    /// Creates the tables and loads the initial data.
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError>;

    /// The generator of worker `thread`, seeded deterministically from `seed`.
    fn generator(&self, thread: u32, seed: u64) -> Self::Gen;

    /// An empty program to be filled by [`Workload::next`] (reused across transactions).
    fn program(&self) -> Self::Program;

    /// Fills `program` with the next transaction of this worker.
    fn next(&self, gen: &mut Self::Gen, program: &mut Self::Program);

    /// Checks the workload's invariants on the final state of a run (after all workers stopped).
    fn check<M: Default + Send + Sync>(&self, _db: &Database<M>) -> Result<(), Violation> {
        Ok(())
    }
}

/// An invariant a run broke, found by [`Workload::check`] on its final state: what is wrong, in
/// one line (`sum of values is 7, not 0: a range update was lost or torn`). Not an error of the
/// harness: a protocol that promises less than serializability may break invariants by design, so a
/// violation is a result of the run ([`super::RunResult::invariants`]), judged by whoever reads it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Violation(pub String);

impl From<String> for Violation {
    fn from(what: String) -> Self {
        Violation(what)
    }
}

impl From<&str> for Violation {
    fn from(what: &str) -> Self {
        Violation(what.to_string())
    }
}
