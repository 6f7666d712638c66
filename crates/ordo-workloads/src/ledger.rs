//! A tally of what committed transactions did, kept beside the database for invariant checks.
//!
//! SmallBank's invariant is "money is conserved except for the deposits and checks made", SIBENCH's is
//! "the values sum to the number of updates made": `check` must know what the *committed* transactions
//! added. A workload cannot see commits (the protocol runs the program and retries it), but it can see
//! every execution of a program, and a program always re-runs from piece 0 after an abort
//! ([`ordo::txn::Program`]). So each program carries an [`Entry`]:
//!
//! * its last piece, once nothing in the program's own logic can abort any more, [`Entry::record`]s its
//!   effect (added to the shared [`Ledger`] at once, and remembered as *pending*);
//! * piece 0 of every execution first [`Entry::retract`]s what a previous, aborted execution of the same
//!   transaction recorded;
//! * [`Entry::settle`] (called when the generator fills the program with the next transaction) forgets
//!   the pending amount: the execution that recorded it was the last, i.e. it committed.
//!
//! After a run the ledger holds exactly the sum over committed transactions, under any protocol that
//! runs each transaction to its end (commit, or an abort by its own logic) — every protocol's default
//! worker loop does. A protocol that abandons transactions after their last piece ran but before they
//! commit (a timed run stopping with work in flight) would leave their amounts in; verification runs
//! (`ordo verify`, the tests) hand out a fixed number of transactions and finish them all.
//!
//! The ledger is sharded per generator thread (one cache line each) so recording is an uncontended
//! atomic add; [`Ledger::reset`] is called by the workload's `load`, so each run starts from zero.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// Shards of the ledger (threads beyond this share).
const SHARDS: usize = 64;

#[repr(align(128))]
#[derive(Default)]
struct Shard(AtomicI64);

/// The shared tally (one per workload object).
pub struct Ledger {
    shards: Box<[Shard]>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
        }
    }
}

impl Ledger {
    /// Zero (at load time, before workers start).
    pub fn reset(&self) {
        for s in self.shards.iter() {
            s.0.store(0, Ordering::Relaxed);
        }
    }
    /// The sum over every shard (after the workers stopped: joining them orders their adds before this).
    pub fn total(&self) -> i64 {
        self.shards
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .sum()
    }
    fn add(&self, shard: usize, v: i64) {
        self.shards[shard % SHARDS]
            .0
            .fetch_add(v, Ordering::Relaxed);
    }
}

/// One program's handle on the ledger.
#[derive(Clone)]
pub struct Entry {
    ledger: Arc<Ledger>,
    shard: usize,
    pending: i64,
}

impl Entry {
    pub fn new(ledger: Arc<Ledger>) -> Self {
        Entry {
            ledger,
            shard: 0,
            pending: 0,
        }
    }
    /// A new transaction (from generator thread `thread`): the previous one's amount stays recorded.
    pub fn settle(&mut self, thread: u32) {
        self.pending = 0;
        self.shard = thread as usize;
    }
    /// Start of an execution: undo what an aborted earlier execution of this transaction recorded.
    pub fn retract(&mut self) {
        if self.pending != 0 {
            self.ledger.add(self.shard, -self.pending);
            self.pending = 0;
        }
    }
    /// This execution's effect (call once nothing in the program's logic can abort any more).
    pub fn record(&mut self, v: i64) {
        self.ledger.add(self.shard, v);
        self.pending += v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aborted_executions_are_retracted_and_committed_ones_kept() {
        let l = Arc::new(Ledger::default());
        let mut e = Entry::new(l.clone());
        e.settle(3);
        e.retract();
        e.record(10); // aborted by the protocol after its last piece
        e.retract();
        e.record(10); // committed
        e.settle(3);
        e.retract();
        e.record(-4);
        e.settle(3);
        assert_eq!(l.total(), 6);
        l.reset();
        assert_eq!(l.total(), 0);
    }
}
