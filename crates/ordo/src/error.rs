//! Why a benchmark or verification run could not be made: one enum for the harness's failures, and
//! [`Result`] over it.
//!
//! These are the failures *around* transactions — more workers than a protocol can run, tables
//! that do not fit the machine, workers that cannot be pinned. A transaction's own failures are
//! [`crate::txn::Abort`]s, which the protocols retry or report and which never end a run; a workload
//! whose invariants a run broke is a [`crate::harness::workload::Violation`], a result of the run.
//! Every message is one line, for the command line to print as it is.

use crate::harness::affinity::AffinityError;
use crate::storage::LoadError;

/// A run that could not be made (see the module docs).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// More worker threads than the protocol can name ([`crate::protocols::Protocol::MAX_WORKERS`]).
    #[error("{protocol} runs at most {max} worker threads, not {asked}")]
    TooManyThreads {
        protocol: &'static str,
        max: usize,
        asked: usize,
    },
    /// The workload's tables would not fit this machine's memory (refused before loading, from
    /// their declared sizes: [`crate::harness::memory`]).
    #[error("loading {workload}: {source} (this machine's memory)")]
    OverMemory {
        workload: &'static str,
        source: LoadError,
    },
    /// A verification's recorded history would not fit this machine's memory (refused before
    /// anything runs: [`crate::harness::verify::recording_floor`]).
    #[error(
        "recording {txns} transactions needs at least {needs} bytes, more than this machine's \
         {memory} bytes of memory: ask for fewer (--txns)"
    )]
    RecordingOverMemory { txns: u64, needs: u64, memory: u64 },
    /// The workload could not be loaded.
    #[error("loading {workload}: {source}")]
    Load {
        workload: &'static str,
        source: LoadError,
    },
    /// Workers could not be pinned to CPUs (`--pin`).
    #[error(transparent)]
    Affinity(#[from] AffinityError),
}

/// A harness result.
pub type Result<T> = std::result::Result<T, Error>;
