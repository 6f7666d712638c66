//! The shared transaction record: what other transactions may see of a transaction `T` — its status,
//! commit timestamp, the lock it waits for, and (under SSI) its rw-conflicts and SIREAD locks.
//!
//! Records hang off data records (as the owner of an EXCLUSIVE lock, the creator of a version, the
//! owner of a SIREAD lock) through `Arc`s, so a committed transaction's record outlives it exactly as long
//! as something can still find it — Cahill's "suspended" transactions (§3.3). The SSI parts
//! ([`Conflicts`]) are cleared when the transaction stops overlapping any running one, which also breaks
//! the `Arc` cycles between conflicting transactions.

use crate::check::TxnId;
use crate::storage::TableId;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

/// Running (may still commit or abort).
pub const ACTIVE: u8 = 0;
/// Committed: `cts` is its commit timestamp (its writes may still be being installed).
pub const COMMITTED: u8 = 1;
/// Aborted: its locks are being (or have been) released and it wrote nothing.
pub const ABORTED: u8 = 2;
/// SSI chose it as the victim of a dangerous structure; it aborts at its next operation (§3.7).
pub const DOOMED: u8 = 3;
/// Taking its commit timestamp: readers and writers that meet its lock wait until it is COMMITTED,
/// so no snapshot taken after the timestamp can miss its writes.
pub const COMMITTING: u8 = 4;

/// A commit timestamp later than any real one: the "commit time" of a running transaction.
pub const INFINITY: u64 = u64::MAX;

/// The SSI bookkeeping of one transaction, guarded by [`crate::protocols::mvcc::ssi::Ssi`]'s latch for
/// the conflict lists (markConflict and the commit check are atomic with respect to each other).
#[derive(Debug, Default)]
pub struct Conflicts {
    /// Transactions with an rw-antidependency *into* this one (they read what this one overwrote):
    /// Cahill's `T.inConflict`, kept as the full list so the commit-ordering refinement is exact.
    pub ins: Vec<Arc<TxnShared>>,
    /// Transactions this one has an rw-antidependency to (it read what they overwrote): `T.outConflict`.
    pub outs: Vec<Arc<TxnShared>>,
    /// How many point SIREAD locks this transaction took (for the GC statistics).
    pub sireads: usize,
    /// Whether it holds range SIREAD locks (in tables' predicate lists).
    pub ranges: Vec<TableId>,
}

/// What other transactions can see of one transaction.
#[derive(Debug)]
pub struct TxnShared {
    pub id: TxnId,
    status: AtomicU8,
    cts: AtomicU64,
    /// The transaction whose EXCLUSIVE lock this one is waiting for (deadlock detection).
    pub waiting_for: Mutex<Option<Arc<TxnShared>>>,
    pub conflicts: Mutex<Conflicts>,
}

impl TxnShared {
    pub fn new(id: TxnId) -> Self {
        TxnShared {
            id,
            status: AtomicU8::new(ACTIVE),
            cts: AtomicU64::new(INFINITY),
            waiting_for: Mutex::new(None),
            conflicts: Mutex::new(Conflicts::default()),
        }
    }
    /// Makes a record nobody else references any more (the caller holds the only `Arc`) the record of
    /// a new transaction, keeping the conflict lists' capacity: no allocation per transaction.
    pub fn reset(&mut self, id: TxnId) {
        self.id = id;
        *self.status.get_mut() = ACTIVE;
        *self.cts.get_mut() = INFINITY;
        *self.waiting_for.get_mut() = None;
        let c = self.conflicts.get_mut();
        c.ins.clear();
        c.outs.clear();
        c.sireads = 0;
        c.ranges.clear();
    }
    #[inline]
    pub fn status(&self) -> u8 {
        self.status.load(Ordering::Acquire)
    }
    pub fn set_status(&self, s: u8) {
        self.status.store(s, Ordering::Release);
    }
    /// Marks it committed at `cts` (the timestamp first, so a reader that sees COMMITTED sees it).
    pub fn set_committed(&self, cts: u64) {
        self.cts.store(cts, Ordering::Release);
        self.status.store(COMMITTED, Ordering::Release);
    }
    #[inline]
    pub fn is_committed(&self) -> bool {
        self.status() == COMMITTED
    }
    /// Aborted or doomed: SSI records no conflicts against it (§3.7).
    #[inline]
    pub fn is_dead(&self) -> bool {
        matches!(self.status(), ABORTED | DOOMED)
    }
    /// Commit timestamp, or [`INFINITY`] while not committed.
    #[inline]
    pub fn cts(&self) -> u64 {
        if self.is_committed() {
            self.cts.load(Ordering::Acquire)
        } else {
            INFINITY
        }
    }
}
