//! Timestamps and the snapshot horizon: the "SI begin" and "SI commit" of Cahill's Figs 3.1–3.2.
//!
//! One global counter orders everything. `begin(T)` reads it as T's **snapshot** `T.begin`; a commit
//! takes `clock.fetch_add(1) + 1` as its **commit timestamp**, so a transaction sees exactly the versions
//! whose commit timestamp is `≤ T.begin` (its own writes aside).
//!
//! Every worker publishes the snapshot of its running transaction in a slot ([`SnapshotSlot`]). The
//! **horizon** is the oldest snapshot any running transaction may still read at:
//! `min(clock at the start of the computation, every published snapshot)`. Versions older than the newest
//! version committed at or before the horizon can be discarded, and a committed transaction whose commit
//! timestamp is `≤` the horizon overlaps no running transaction any more (Cahill §3.3: its record and SIREAD
//! locks may go).
//!
//! Publishing is race-free without a lock: `begin` stores a lower bound (the clock it just read) in its slot
//! and only then reads the clock again for the snapshot it uses, while the horizon reads the clock *before*
//! the slots. Either the horizon sees the slot, or the slot store came after the horizon's clock load and
//! the snapshot is at least that clock (all accesses `SeqCst`).

use crossbeam_utils::CachePadded;
use parking_lot::RwLock;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

/// No transaction running in a slot.
const IDLE: u64 = u64::MAX;

/// The published snapshot of one worker's running transaction, and the worker's count of the old
/// versions it added minus those it dropped (summed over workers for the GC statistics).
#[derive(Debug)]
pub struct SnapshotSlot(CachePadded<AtomicU64>, pub AtomicI64);

/// The global clock and the registry of snapshot slots.
/// The three fields live on separate cache lines: `now` is written by every commit, `horizon` by every
/// commit's refresh, and transactions read both.
#[derive(Debug, Default)]
pub struct Clock {
    now: CachePadded<AtomicU64>,
    slots: CachePadded<RwLock<Vec<Arc<SnapshotSlot>>>>,
    /// Cached `horizon()`, refreshed by commits (monotone).
    horizon: CachePadded<AtomicU64>,
}

impl Clock {
    /// A slot for a new worker.
    pub fn register(&self) -> Arc<SnapshotSlot> {
        let slot = Arc::new(SnapshotSlot(
            CachePadded::new(AtomicU64::new(IDLE)),
            AtomicI64::new(0),
        ));
        self.slots.write().push(slot.clone());
        slot
    }

    /// SI begin: publishes and returns a snapshot timestamp.
    pub fn begin(&self, slot: &SnapshotSlot) -> u64 {
        slot.0.store(self.now.load(SeqCst), SeqCst);
        let s = self.now.load(SeqCst);
        slot.0.store(s, SeqCst);
        s
    }

    /// A fresh snapshot for one statement of a read-committed transaction (the slot keeps the first one,
    /// which is older, so the horizon stays safe).
    pub fn statement(&self) -> u64 {
        self.now.load(SeqCst)
    }

    /// The worker's transaction ended.
    pub fn end(&self, slot: &SnapshotSlot) {
        slot.0.store(IDLE, SeqCst);
    }

    /// A new commit timestamp, larger than every snapshot taken so far.
    pub fn commit_ts(&self) -> u64 {
        self.now.fetch_add(1, SeqCst) + 1
    }

    /// Live old versions, summed over the workers' counts.
    pub fn versions(&self) -> i64 {
        self.slots
            .read()
            .iter()
            .map(|s| s.1.load(std::sync::atomic::Ordering::Relaxed))
            .sum()
    }

    /// The current clock value (the latest commit timestamp handed out).
    pub fn now(&self) -> u64 {
        self.now.load(SeqCst)
    }

    /// Recomputes the horizon: no running transaction reads at a snapshot older than it.
    pub fn refresh_horizon(&self) -> u64 {
        let mut h = self.now.load(SeqCst);
        for s in self.slots.read().iter() {
            h = h.min(s.0.load(SeqCst));
        }
        if self.horizon.load(SeqCst) < h {
            self.horizon.fetch_max(h, SeqCst);
        }
        self.horizon.load(SeqCst)
    }

    /// The horizon as last computed (cheap; possibly older than the true one, which is safe).
    #[inline]
    pub fn horizon(&self) -> u64 {
        self.horizon.load(SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn horizon_is_the_oldest_running_snapshot() {
        let c = Clock::default();
        let (a, b) = (c.register(), c.register());
        let sa = c.begin(&a);
        c.commit_ts();
        c.commit_ts();
        let sb = c.begin(&b);
        assert_eq!((sa, sb), (0, 2));
        assert_eq!(c.refresh_horizon(), 0);
        c.end(&a);
        assert_eq!(c.refresh_horizon(), 2);
        c.end(&b);
        c.commit_ts();
        assert_eq!(c.refresh_horizon(), 3);
    }
}
