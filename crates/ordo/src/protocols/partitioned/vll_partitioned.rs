//! `vll-partitioned`, `vll-partitioned-sca` — the VLL paper's **single-threaded VLL** for
//! partition-per-core deployments (§2.3, Fig. 3, and the H-Store comparison of Fig. 9–10): H-Store's
//! partitions, but multi-partition transactions lock *records* with VLL counters instead of holding
//! whole partitions. `vll-partitioned` runs a blocked transaction only when it reaches the head of
//! every queue it is in; `vll-partitioned-sca` also runs SCA ([`crate::protocols::kit::sca`]) when
//! its worker would otherwise wait — which matters once the head of a queue can stall on a remote
//! read (Fig. 9–10: "without SCA, the entire TxnQueue must wait").
//!
//! # The idea
//!
//! Each partition is run by one thread at a time, so its lock state needs no latches of its own. A
//! **single-partition** transaction whose records are free (no counter set by a queued transaction)
//! runs at once, to completion, without touching any counter and without being enqueued — exactly
//! H-Store's serial execution. Only **multi-partition** transactions (and local ones that conflict
//! with them) use VLL: they increment `C_X`/`C_S` on their records and enter the TxnQueue of every
//! partition they touch, **in one consistent order across partitions** (the paper's "global order",
//! which rules out distributed deadlock). While a multi-partition transaction waits or runs, its
//! partitions keep executing every local transaction that does not conflict with it — which is why VLL
//! does not collapse as H-Store does when the share of multi-partition transactions grows.
//!
//! ```text
//!   paper (single-threaded VLL)                 here
//!   partition thread owns its TxnQueue and      a partition's TxnQueue + counters behind its
//!     counters; no critical sections             partition latch: holding it is being that thread
//!   free local txn: run now, never enqueued     peek the counters under the latch; run inside it
//!   blocked local txn: enqueue                  request counters, enqueue Blocked (TxnQueue, vll)
//!   multi-partition txn: enqueue in every       take the latches of its partitions in ascending
//!     partition, same order everywhere            order, request + enqueue in each, release latches
//!   Blocked → Free (head of queue, or SCA)      per partition: head rule / SCA claims it there; it
//!                                                 runs when claimed or free in every partition
//!   Waiting (remote reads)                      shared memory: the owner reads remote records
//!                                                 directly; a simulated network wait sets the
//!                                                 transaction aside (`waiting.rs`) while the
//!                                                 worker goes on with others
//! ```
//!
//! Counters live beside the records ([`VllCounters`], the colocated layout) — or, in
//! `vll-partitioned-arrayed`, in two arrays per partition indexed by row slot ([`Arrayed`], §2.2: the
//! paper's Fig. 9 compares the two, finding arrayed VLL's extra memory accesses about 10% of a short
//! local transaction); [`Layout`] picks one. A key belongs to one
//! partition, and its counters are only touched under that partition's latch. Why the head of a
//! partition's queue may run there: every older transaction of that partition finished, and younger
//! conflicting ones are blocked. Since enqueues of a multi-partition transaction are atomic across its
//! partitions, the per-partition orders agree, so the oldest blocked transaction is at the head of
//! every queue it is in: progress is guaranteed. With SCA, a worker that would otherwise wait runs
//! it on every partition with blocked transactions.
//!
//! # Ranges too wide to lock key by key: walls
//!
//! A transaction whose range is wider than [`MAX_RANGE_KEYS`] (TPC-C's Delivery scans NEW-ORDER up to a
//! fence row) cannot take counters on every key. It is ordered the way the deterministic protocols order
//! such a transaction — as a **barrier** over the whole database — in VLL's terms a **wall** in every
//! partition's TxnQueue:
//!
//! ```text
//!   enqueue the wall in every partition         all latches, ascending (one consistent order);
//!                                                 blocked there unless that queue is empty
//!   while a partition holds a wall              every later transaction there is blocked (even if
//!                                                 its counters were free), no local fast path, no SCA
//!   the wall runs                               when it is the head of every queue: everything
//!                                                 older finished, everything younger is blocked
//!   it finishes                                 the next head is unblocked (head rule); SCA resumes
//! ```
//!
//! It takes no counters and runs under [`Cover::All`]. Being at the head of every queue means no
//! transaction ordered before it is still running anywhere (free ones stay queued until they finish;
//! free local ones run inside the latch), and none after it runs before it ends. Progress: enqueues of a
//! wall are atomic across all partitions, so per-partition orders still agree and the oldest blocked
//! transaction is at the head of all of its queues.
//!
//! Programs stay with the worker that drew them (it executes them, outside the latches, once granted);
//! each worker admits new transactions while fewer than `--vll-blocked-limit` (default
//! [`super::worker::BLOCKED_LIMIT`]) of its own are blocked (Fig. 3's "TxnQueue is not full"; Waiting ones do not count; the threshold drops while
//! reconnaissance goes stale, see [`crate::protocols::kit::aimd`]): the loop is [`super::worker`]'s,
//! shared with `hstore-lockmgr`. Interactive transactions ([`Protocol::begin`]) wait until every
//! queue is empty and hold every partition latch.

use super::worker::{self, latch, plan, run, Admitted, Engine, PartWorker, Slot, Waiter};
use crate::protocols::kit::counters::{Arrayed, Colocated, CounterStore, VllCounters};
use crate::protocols::kit::exec::{Cover, ExecTx, HoldingTx};
use crate::protocols::kit::plan::LockRequest;
#[cfg(doc)]
use crate::protocols::kit::plan::MAX_RANGE_KEYS;
use crate::protocols::kit::queue_knobs::{VllConfig, BLOCKED_LIMIT_KNOB, SCA_BITS_KNOB};
use crate::protocols::kit::sca::{point_key, Sca};
use crate::protocols::kit::txn_queue::{TxnQueue, TxnState};
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{IdLedger, Program, Recorder, RequestSource, TxResult};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A transaction in one partition's TxnQueue.
pub(super) struct Entry {
    waiter: Arc<Waiter>,
    /// Its locks in this partition (none for a wall).
    locks: Vec<LockRequest>,
    /// A wall: runs alone (see the module docs).
    wall: bool,
}

/// Where single-threaded VLL keeps its counters (§2.2).
pub trait Layout: Send + Sync + 'static {
    /// The per-record state (the counters themselves when colocated).
    type Meta: Default + Send + Sync + 'static;
    /// The counters a partition owns (nothing when colocated).
    type Store: CounterStore<Self::Meta> + Default + Send + 'static;
    const ARRAYED: bool;
}

impl Layout for Colocated {
    type Meta = VllCounters;
    type Store = Colocated;
    const ARRAYED: bool = false;
}

/// Each partition's C_X and C_S arrays, indexed by row slot: sized to the highest slot the partition
/// has locked (row slots are not partitioned, so each partition's arrays span the table; 8 bytes per
/// slot per partition).
impl Layout for Arrayed {
    type Meta = ();
    type Store = Arrayed;
    const ARRAYED: bool = true;
}

/// One partition: its TxnQueue, SCA arrays and (arrayed layout) counters.
pub(super) struct Partition<L: Layout> {
    counters: L::Store,
    pub(super) queue: TxnQueue<Entry>,
    pub(super) sca: Sca,
    /// Something changed since SCA last ran.
    dirty: bool,
    /// Walls in the queue: while any is, every new entry is blocked and SCA does not run.
    walls: usize,
    spare: Vec<Vec<LockRequest>>,
}

impl<L: Layout> Partition<L> {
    /// After a removal: the head conflicts with nobody older, so a blocked head may run here.
    fn unblock_head(&mut self) {
        if let Some(h) = self.queue.front() {
            if self.queue.state(h) == Some(TxnState::Blocked) && self.queue.claim(h) {
                self.queue.payload(h).expect("queued").waiter.unblock();
            }
        }
    }

    /// SCA until it finds nothing more.
    fn sca(&mut self) {
        // A wall is a barrier: nothing behind it may run before it, and it has no locks to analyse.
        if !self.dirty || self.walls > 0 {
            return;
        }
        self.dirty = false;
        while self.queue.blocked() > 0 {
            let found = self.queue.sca(
                &mut self.sca,
                |_| true,
                |e, mark| {
                    for l in &e.locks {
                        let (id, kind) = point_key(l);
                        mark(id, kind);
                    }
                },
            );
            let Some(q) = found else { break };
            if self.queue.claim(q) {
                self.queue.payload(q).expect("queued").waiter.unblock();
            }
        }
    }
}

/// Single-threaded (per-partition) VLL with counters laid out as `L`; with `SCA`, a worker that would
/// otherwise wait runs selective contention analysis on the partitions with blocked transactions.
pub struct SingleThreadedVll<const SCA: bool, L: Layout = Colocated> {
    db: Database<L::Meta>,
    pub(super) parts: Vec<CachePadded<Mutex<Partition<L>>>>,
    ids: Arc<IdLedger>,
    /// `--vll-blocked-limit`: each worker's most blocked transactions.
    blocked_limit: usize,
}

/// `vll-partitioned`: single-threaded VLL, blocked transactions run by the head rule only.
pub type VllPartitioned = SingleThreadedVll<false>;

/// `vll-partitioned-sca`: single-threaded VLL with SCA.
pub type VllPartitionedSca = SingleThreadedVll<true>;

/// `vll-partitioned-arrayed`: `vll-partitioned` with its counters in per-partition arrays.
pub type VllPartitionedArrayed = SingleThreadedVll<false, Arrayed>;

impl<const SCA: bool, L: Layout> SingleThreadedVll<SCA, L> {
    fn n(&self) -> u64 {
        self.parts.len() as u64
    }

    fn latch(&self, p: u32) -> MutexGuard<'_, Partition<L>> {
        latch(&self.parts[p as usize])
    }
}

impl<const SCA: bool, L: Layout> Engine for SingleThreadedVll<SCA, L> {
    /// Plans `s` and begins it: runs it at once if it is local and free, else enqueues it in every
    /// partition it touches (latches taken in ascending order, so all queues agree on the order).
    fn admit<P: Program>(
        &self,
        w: &mut PartWorker,
        s: &mut Slot,
        program: &mut P,
        slot: usize,
    ) -> Admitted {
        let n = self.n();
        if let Err(a) = plan(&self.db, w, s, program, true, n) {
            return Admitted::Done(Err(a));
        }
        if s.parts.list.len() == 1 && !s.wall {
            let guard = self.latch(s.parts.list[0]);
            let free = guard.walls == 0
                && s.locks.iter().all(|l| {
                    let mut c = guard.counters.counters(&self.db, l.table, l.rid);
                    c.request(l.mode)
                });
            if free {
                // Single-threaded VLL: a free local transaction runs to completion right here.
                let out = run(&self.db, w, s, program);
                drop(guard);
                return Admitted::Done(out);
            }
            drop(guard);
        }
        let waiter = Waiter::new(w, slot);
        let mut guards: Vec<MutexGuard<'_, Partition<L>>> =
            s.parts.list.iter().map(|&p| self.latch(p)).collect();
        let mut blocked = 0;
        for (g, &p) in guards.iter_mut().zip(&s.parts.list) {
            let mut mine = g.spare.pop().unwrap_or_default();
            let free = if s.wall {
                // A wall takes no counters: it waits for everything ahead of it in the queue.
                g.queue.is_empty()
            } else {
                mine.extend(s.locks_in(p));
                let mut free = g.walls == 0;
                for l in &mine {
                    // No short-circuit: every request is counted, granted or not.
                    free &= g.counters.request(&self.db, l);
                }
                free
            };
            g.walls += s.wall as usize;
            let q = g.queue.enqueue(
                Entry {
                    waiter: waiter.clone(),
                    locks: mine,
                    wall: s.wall,
                },
                !free,
            );
            if !free {
                blocked += 1;
                g.dirty = true;
            }
            s.queued.push((p, q));
        }
        waiter.pending.store(blocked, Ordering::Release);
        drop(guards);
        Admitted::Queued { free: blocked == 0 }
    }

    fn finish(&self, s: &mut Slot) {
        for &(p, q) in &s.queued {
            let mut g = self.latch(p);
            let mut e = g.queue.remove(q).expect("queued transaction");
            for l in &e.locks {
                g.counters.release(&self.db, l);
            }
            g.walls -= e.wall as usize;
            e.locks.clear();
            g.spare.push(e.locks);
            g.dirty = true;
            g.unblock_head();
        }
        s.queued.clear();
    }

    /// SCA on every partition with blocked transactions (the worker would otherwise idle); nothing
    /// without `SCA`.
    fn idle(&self) {
        if !SCA {
            return;
        }
        for m in &self.parts {
            if let Some(mut g) = m.try_lock() {
                if g.queue.blocked() > 0 {
                    g.sca();
                }
            }
        }
    }

    fn blocked_limit(&self) -> usize {
        self.blocked_limit
    }
}

const FIG_9: &str = "Ren, Thomson, Abadi, VLL (VLDB J. 2015) §2.3, Fig. 9-10";

impl<const SCA: bool, L: Layout> Protocol for SingleThreadedVll<SCA, L> {
    type Meta = L::Meta;
    type Worker = PartWorker;
    type Tx<'w> = HoldingTx<'w, L::Meta, AllLatches<'w, L>>;

    const INFO: ProtocolInfo = match (SCA, L::ARRAYED) {
        (false, false) => ProtocolInfo {
            name: "vll-partitioned",
            summary: "single-threaded VLL per partition: free local transactions run at once, multi-partition ones lock records",
            paper: FIG_9,
            isolation: Isolation::Serializable,
            interactive: Interactive::OneAtATime,
            knobs: &[&BLOCKED_LIMIT_KNOB],
        },
        (true, false) => ProtocolInfo {
            name: "vll-partitioned-sca",
            summary:
                "single-threaded VLL per partition with SCA when a worker would otherwise wait",
            paper: FIG_9,
            isolation: Isolation::Serializable,
            interactive: Interactive::OneAtATime,
            knobs: &[&BLOCKED_LIMIT_KNOB, &SCA_BITS_KNOB],
        },
        (false, true) => ProtocolInfo {
            name: "vll-partitioned-arrayed",
            summary: "single-threaded VLL per partition with its counters in per-partition arrays (§2.2)",
            paper: FIG_9,
            isolation: Isolation::Serializable,
            interactive: Interactive::OneAtATime,
            knobs: &[&BLOCKED_LIMIT_KNOB],
        },
        (true, true) => ProtocolInfo {
            name: "vll-partitioned-arrayed-sca",
            summary: "single-threaded VLL per partition, arrayed counters, SCA when a worker would otherwise wait",
            paper: FIG_9,
            isolation: Isolation::Serializable,
            interactive: Interactive::OneAtATime,
            knobs: &[&BLOCKED_LIMIT_KNOB, &SCA_BITS_KNOB],
        },
    };

    fn open(db: Database<L::Meta>, config: &ProtocolConfig) -> Self {
        let knobs = VllConfig::of(config);
        SingleThreadedVll {
            db,
            parts: (0..config.threads.max(1))
                .map(|_| {
                    CachePadded::new(Mutex::new(Partition {
                        counters: L::Store::default(),
                        queue: TxnQueue::new(),
                        sca: Sca::with_bits(knobs.sca_bits),
                        dirty: false,
                        walls: 0,
                        spare: Vec::new(),
                    }))
                })
                .collect(),
            ids: IdLedger::new(),
            blocked_limit: knobs.blocked_limit.max(1),
        }
    }
    fn db(&self) -> &Database<L::Meta> {
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
        let guards = worker::all_latches_when_empty(&self.parts, |p| p.queue.is_empty());
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

/// Every partition's latch, taken with every queue empty: what an interactive [`SingleThreadedVll`]
/// transaction holds (released when it drops).
pub struct AllLatches<'w, L: Layout> {
    _guards: Vec<MutexGuard<'w, Partition<L>>>,
}
