//! `hstore-lockmgr` — H-Store's partitions with a **traditional lock manager in each partition**: the
//! VLL paper's "per-core lock manager" (lock manager-based H-Store) baseline of Figs. 9–10.
//!
//! # The idea
//!
//! H-Store runs a partition's transactions one at a time, so a multi-partition transaction that waits
//! for remote reads leaves its partitions idle. Giving each partition a lock manager lets its thread
//! run other transactions meanwhile — at the price of lock management on every transaction, local ones
//! included. The paper built it, like its single-threaded VLL, inside Calvin's deterministic framework:
//! transactions request all their locks at once in one global order, so nothing deadlocks, and the only
//! difference from `vll-partitioned` is the lock manager. "VLL can improve performance by 10–30% when
//! there are few distributed transactions, but the difference becomes smaller as more distributed
//! transactions are added" (§3.3.1).
//!
//! ```text
//!   per-core lock manager                       here
//!   partition thread owns a hash-table lock     a partition's HashLockManager (Calvin's, per-key
//!     manager (key → FIFO of requests)            FIFO queues) behind the partition's latch
//!   local txn: lock, run, unlock                request its keys; granted: run inside the latch,
//!                                                 release; else queued, run when granted
//!   multi-partition txn: request in every       latches of its partitions in ascending order, one
//!     partition, in the global order              sequence number and request in each (all queues
//!                                                 agree on the order), run when granted in all
//!   waits for remote reads: works on others     the Waiting state, as single-threaded VLL's
//!                                                 (`waiting.rs`)
//! ```
//!
//! The worker loop, the Waiting state and execution are the partitioned VLL's ([`super::worker`]);
//! only admission and release differ (`Engine`).
//!
//! # Ranges too wide to lock key by key: walls
//!
//! A transaction whose range is too wide for key locks (TPC-C's Delivery) is a **wall** in every
//! partition, as in `vll-partitioned`: it takes no key locks; in each partition it waits until the lock
//! manager holds nothing, and every transaction admitted there after it is **held back** — not given
//! to the lock manager — until it finishes, then requested in order. Walls are admitted to all
//! partitions at once, so the partitions agree on their order and the oldest waiting transaction can
//! always run.

use super::worker::{self, latch, plan, run, Admitted, Engine, PartWorker, Slot, Waiter};
use crate::protocols::kit::exec::{Cover, ExecTx, HoldingTx};
use crate::protocols::kit::lock_manager::HashLockManager;
use crate::protocols::kit::plan::LockRequest;
use crate::protocols::kit::scheduler::{Scheduler, SeqSlab};
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{IdLedger, Program, Recorder, RequestSource, TxResult};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A transaction admitted to a partition after a wall that has not finished: not in the lock manager
/// yet (or the wall itself).
struct HeldBack {
    seq: u64,
    /// Its locks in this partition (none for a wall).
    locks: Vec<LockRequest>,
    wall: bool,
    /// A wall that may run (the lock manager was empty when it reached the front).
    granted: bool,
}

/// One partition: its lock manager, the owners of the transactions in it, and what waits behind a
/// wall.
pub(super) struct Partition {
    lm: HashLockManager,
    /// The next sequence number of this partition's order.
    next: u64,
    /// Who to tell when a transaction's locks here are granted, by sequence number.
    owners: SeqSlab<Arc<Waiter>>,
    /// A wall and everything admitted after it, in order (empty while no wall is pending).
    held: VecDeque<HeldBack>,
    /// Scratch for the lock manager's newly ready transactions.
    ready: Vec<u64>,
}

impl Partition {
    fn new() -> Self {
        Partition {
            lm: HashLockManager::default(),
            next: 0,
            owners: SeqSlab::default(),
            held: VecDeque::new(),
            ready: Vec::new(),
        }
    }

    /// Whether no transaction is queued here.
    pub(super) fn is_empty(&self) -> bool {
        self.held.is_empty() && self.lm.keys_locked() == 0
    }

    /// Admits transaction `seq` with its `locks` here (a wall if `wall`); returns whether it may run
    /// now.
    fn admit(&mut self, seq: u64, locks: Vec<LockRequest>, wall: bool) -> bool {
        if wall || !self.held.is_empty() {
            let granted = wall && self.is_empty();
            self.held.push_back(HeldBack {
                seq,
                locks,
                wall,
                granted,
            });
            return granted;
        }
        self.lm.request(seq, locks, &mut self.ready)
    }

    /// Transaction `seq` finished here: releases it, and tells the owners of those that may run now.
    fn finish(&mut self, seq: u64) {
        self.owners.remove(seq);
        match self.held.front() {
            Some(h) if h.seq == seq => {
                debug_assert!(
                    h.wall && h.granted,
                    "only a running wall finishes at the front"
                );
                self.held.pop_front();
            }
            _ => self.lm.release(seq, &mut self.ready),
        }
        for s in self.ready.drain(..) {
            self.owners
                .get(s)
                .expect("a ready transaction has an owner")
                .unblock();
        }
        self.drain_held();
    }

    /// Moves what waited behind a finished wall into the lock manager, up to the next wall, which
    /// may run once the lock manager is empty.
    fn drain_held(&mut self) {
        while let Some(h) = self.held.front_mut() {
            if h.wall {
                if !h.granted && self.lm.keys_locked() == 0 {
                    h.granted = true;
                    let seq = h.seq;
                    self.owners
                        .get(seq)
                        .expect("a queued wall has an owner")
                        .unblock();
                }
                return;
            }
            let h = self.held.pop_front().expect("front");
            if self.lm.request(h.seq, h.locks, &mut self.ready) {
                self.owners
                    .get(h.seq)
                    .expect("a queued transaction has an owner")
                    .unblock();
            }
        }
    }
}

/// Partitioned execution with a hash-table lock manager per partition.
pub struct HStoreLockMgr {
    db: Database<()>,
    pub(super) parts: Vec<CachePadded<Mutex<Partition>>>,
    ids: Arc<IdLedger>,
}

impl HStoreLockMgr {
    fn n(&self) -> u64 {
        self.parts.len() as u64
    }
    fn latch(&self, p: u32) -> MutexGuard<'_, Partition> {
        latch(&self.parts[p as usize])
    }
}

impl Engine for HStoreLockMgr {
    /// Plans `s` and begins it: a local transaction whose locks are granted at once runs right here;
    /// anything else is queued in every partition it touches (latches in ascending order).
    fn admit<P: Program>(
        &self,
        w: &mut PartWorker,
        s: &mut Slot,
        program: &mut P,
        slot: usize,
    ) -> Admitted {
        let n = self.n();
        if let Err(a) = plan(&self.db, w, s, program, false, n) {
            return Admitted::Done(Err(a));
        }
        if let [p] = s.parts.list[..] {
            let mut g = self.latch(p);
            if !s.wall && g.held.is_empty() {
                // A local transaction: lock, and if granted run to completion and unlock, all as the
                // partition's thread.
                let g = &mut *g;
                let seq = g.next;
                g.next += 1;
                let mut locks = g.lm.spare_list();
                locks.extend_from_slice(&s.locks);
                if g.lm.request(seq, locks, &mut g.ready) {
                    let release = ReleaseOnDrop { part: &mut *g, seq };
                    let out = run(&self.db, w, s, program);
                    drop(release);
                    debug_assert!(g.ready.is_empty(), "nothing waits for a local transaction");
                    return Admitted::Done(out);
                }
                let waiter = Waiter::new(w, slot);
                waiter.pending.store(1, Ordering::Release);
                g.owners.insert(seq, waiter);
                s.queued.push((p, seq));
                return Admitted::Queued { free: false };
            }
        }
        let mut guards: Vec<MutexGuard<'_, Partition>> =
            s.parts.list.iter().map(|&p| self.latch(p)).collect();
        let waiter = Waiter::new(w, slot);
        let mut blocked = 0;
        for (g, &p) in guards.iter_mut().zip(&s.parts.list) {
            let mut mine = g.lm.spare_list();
            if !s.wall {
                mine.extend(s.locks_in(p));
            }
            let seq = g.next;
            g.next += 1;
            g.owners.insert(seq, waiter.clone());
            if !g.admit(seq, mine, s.wall) {
                blocked += 1;
            }
            s.queued.push((p, seq));
        }
        waiter.pending.store(blocked, Ordering::Release);
        drop(guards);
        Admitted::Queued { free: blocked == 0 }
    }

    fn finish(&self, s: &mut Slot) {
        for &(p, seq) in &s.queued {
            self.latch(p).finish(seq);
        }
        s.queued.clear();
    }
}

/// Releases a local transaction's locks in its partition when dropped: after it ran, or while a
/// panic in its program unwinds (the latch's guard unlocks the partition then, and this keeps the
/// lock manager from holding the keys forever).
struct ReleaseOnDrop<'a> {
    part: &'a mut Partition,
    seq: u64,
}

impl Drop for ReleaseOnDrop<'_> {
    fn drop(&mut self) {
        let p = &mut *self.part;
        p.lm.release(self.seq, &mut p.ready);
    }
}

impl Protocol for HStoreLockMgr {
    type Meta = ();
    type Worker = PartWorker;
    type Tx<'w> = HoldingTx<'w, (), AllLatches<'w>>;

    const INFO: ProtocolInfo = ProtocolInfo {
        name: "hstore-lockmgr",
        summary: "partition per core with a hash-table lock manager in each partition (the VLL paper's per-core lock manager)",
        paper: "baseline of Ren, Thomson, Abadi, VLL (VLDB J. 2015) §3.3.1, Fig. 9-10",
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[],
    };

    fn open(db: Database<()>, config: &ProtocolConfig) -> Self {
        HStoreLockMgr {
            db,
            parts: (0..config.threads.max(1))
                .map(|_| CachePadded::new(Mutex::new(Partition::new())))
                .collect(),
            ids: IdLedger::new(),
        }
    }
    fn db(&self) -> &Database<()> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> PartWorker {
        PartWorker::new(&self.ids, id, recording)
    }
    fn recorder(w: &mut PartWorker) -> &mut Recorder {
        w.recorder()
    }

    /// Waits until no transaction is queued anywhere, then holds every partition.
    fn begin<'w>(&'w self, w: &'w mut PartWorker) -> Self::Tx<'w> {
        let guards = worker::all_latches_when_empty(&self.parts, Partition::is_empty);
        HoldingTx::new(
            ExecTx::new(&self.db, &mut w.exec, Cover::All),
            AllLatches { _guards: guards },
        )
    }

    fn execute<P: Program>(&self, w: &mut PartWorker, program: &mut P) -> TxResult<()> {
        worker::execute(self, w, program)
    }

    /// The partitioned protocols' worker loop (`worker::run_worker`).
    fn run_worker<R: RequestSource>(&self, w: &mut PartWorker, requests: &mut R) {
        worker::run_worker(self, w, requests)
    }
}

/// Every partition's latch, taken with every partition empty: what an interactive
/// [`HStoreLockMgr`] transaction holds (released when it drops).
pub struct AllLatches<'w> {
    _guards: Vec<MutexGuard<'w, Partition>>,
}
