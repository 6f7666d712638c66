//! Transactions: the interactive API, programs of pieces, typed aborts, retries and recording.

pub mod api;
pub mod declared;
pub mod error;
pub mod predicate;
pub mod program;
pub mod record;
pub mod retry;
pub mod source;
pub mod wait;

pub use api::Tx;
pub use error::{check_live, Abort, AbortReason, TxResult};
pub use program::{
    prefetch_accesses, prefetch_declared, prefetch_index_entries, refuse_write, run_pieces, Access,
    AccessKind, AfterFailure, ConflictUnits, Partitioning, Program, RemoteWait, Target,
};
pub use record::{IdLedger, Recorder, TxnIds};
pub use retry::{Backoff, RetryPolicy};
pub use source::{RequestSource, Ticket};
