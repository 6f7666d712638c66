//! Why a transaction did not commit.

use crate::storage::SchemaError;
use std::fmt;

/// The reason for an abort. Every protocol reports one of these; benchmarks count them separately.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum AbortReason {
    /// A lock was held in a conflicting mode and the protocol does not wait (2PL no-wait).
    LockConflict,
    /// Wait-die: a younger transaction asked for a lock an older one holds, and died.
    Died,
    /// Deadlock detection chose this transaction as the victim of a waits-for cycle.
    Deadlock,
    /// A cascading abort: the transaction saw or overwrote a write of another that then aborted
    /// (`ic3`, whose pieces make their writes visible before their transaction commits).
    Cascade,
    /// Optimistic validation failed: a read changed, a key appeared in a scanned range, or a write-set
    /// record was locked by another committer.
    Validation,
    /// First-updater-wins under snapshot isolation: a concurrent transaction wrote the record first.
    UpdateConflict,
    /// SSI: committing would allow a dangerous structure (a pivot with rw in- and out-conflicts).
    Unsafe,
    /// The transaction's own logic asked to abort (TPC-C's invalid item, an insufficient balance).
    User,
    /// An insert found the key present.
    DuplicateKey,
    /// A value did not fit its column (too long a string, wrong type).
    InvalidData,
}

impl AbortReason {
    /// Every reason, in display order.
    pub const ALL: [AbortReason; 10] = [
        AbortReason::LockConflict,
        AbortReason::Died,
        AbortReason::Deadlock,
        AbortReason::Cascade,
        AbortReason::Validation,
        AbortReason::UpdateConflict,
        AbortReason::Unsafe,
        AbortReason::User,
        AbortReason::DuplicateKey,
        AbortReason::InvalidData,
    ];

    /// Whether running the same transaction again may succeed (a concurrency abort), as opposed to an
    /// outcome of its own logic or data.
    pub fn is_retryable(self) -> bool {
        !matches!(
            self,
            AbortReason::User | AbortReason::DuplicateKey | AbortReason::InvalidData
        )
    }

    /// A short name for tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            AbortReason::LockConflict => "lock-conflict",
            AbortReason::Died => "died",
            AbortReason::Deadlock => "deadlock",
            AbortReason::Cascade => "cascade",
            AbortReason::Validation => "validation",
            AbortReason::UpdateConflict => "update-conflict",
            AbortReason::Unsafe => "unsafe",
            AbortReason::User => "user",
            AbortReason::DuplicateKey => "duplicate-key",
            AbortReason::InvalidData => "invalid-data",
        }
    }

    /// Position in [`Self::ALL`] (for counters).
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for AbortReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A transaction was aborted; it holds no locks and left no writes behind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("transaction aborted: {reason}{}", detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
pub struct Abort {
    pub reason: AbortReason,
    /// Optional human detail (which table and key, which holder) — never on the hot path.
    pub detail: Option<String>,
}

impl Abort {
    #[inline]
    pub fn new(reason: AbortReason) -> Self {
        Abort {
            reason,
            detail: None,
        }
    }
    pub fn with_detail(reason: AbortReason, detail: impl Into<String>) -> Self {
        Abort {
            reason,
            detail: Some(detail.into()),
        }
    }
    /// A user-requested abort.
    pub fn user(detail: impl Into<String>) -> Self {
        Abort::with_detail(AbortReason::User, detail)
    }
    pub fn is_retryable(&self) -> bool {
        self.reason.is_retryable()
    }
}

/// Fails with `aborted`'s reason if an earlier call aborted the transaction: what every call of a
/// transaction handle checks first (the handle keeps `Some(reason)` once a call failed).
#[inline]
pub fn check_live(aborted: Option<AbortReason>) -> TxResult<()> {
    match aborted {
        None => Ok(()),
        Some(r) => Err(Abort::with_detail(r, "the transaction was already aborted")),
    }
}

impl From<AbortReason> for Abort {
    fn from(r: AbortReason) -> Self {
        Abort::new(r)
    }
}

impl From<SchemaError> for Abort {
    fn from(e: SchemaError) -> Self {
        Abort::with_detail(AbortReason::InvalidData, e.to_string())
    }
}

/// Shorthand for results inside transactions.
pub type TxResult<T> = Result<T, Abort>;
