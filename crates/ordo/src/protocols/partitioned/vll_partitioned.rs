//! `vll-partitioned`, `vll-partitioned-sca` — the VLL paper's **single-threaded VLL** for
//! partition-per-core deployments (§2.3, Fig. 3, and the H-Store comparison of Fig. 9–10): H-Store's
//! partitions, but multi-partition transactions lock *records* with VLL counters instead of holding
//! whole partitions. `vll-partitioned` runs a blocked transaction only when it reaches the head of
//! every queue it is in; `vll-partitioned-sca` also runs SCA ([`crate::protocols::vll::sca`]) when
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
//! Counters live beside the records ([`VllCounters`], the colocated layout); a key belongs to one
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
//! each worker keeps up to [`WINDOW`] queued transactions in flight (fewer while reconnaissance goes
//! stale, see [`crate::protocols::aimd`]). Interactive transactions
//! ([`Protocol::begin`]) wait until every queue is empty and hold every partition latch.

use super::partition_of;
use super::parts::PartSet;
use super::waiting::Waiting;
use crate::protocols::aimd::Aimd;
use crate::protocols::deterministic::engine::recv_polling;
use crate::protocols::deterministic::exec::{Cover, ExecState, ExecTx, HoldingTx};
#[cfg(doc)]
use crate::protocols::deterministic::plan::MAX_RANGE_KEYS;
use crate::protocols::deterministic::plan::{locks_of, LockRequest, Mode, Planner};
use crate::protocols::vll::counters::{Colocated, CounterStore, VllCounters};
use crate::protocols::vll::sca::{lock_id, Sca};
use crate::protocols::vll::txn_queue::{Seq, TxnQueue, TxnState};
use crate::protocols::{Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{
    run_pieces, wait, AbortReason, Access, IdLedger, Program, Recorder, RequestSource, Ticket, Tx,
    TxResult,
};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Instant;

/// The most queued transactions a worker keeps in flight: fewer, down to [`MIN_WINDOW`], while its
/// dependent transactions' reconnaissance goes stale as they wait ([`Aimd`]; on TPC-C a New-Order
/// queued behind another of its district always finds `d_next_o_id` changed).
pub const WINDOW: usize = 16;

/// The fewest queued transactions a worker keeps in flight (see [`WINDOW`]).
pub const MIN_WINDOW: usize = 2;

/// A worker's in-flight window: [`WINDOW`], halved by each stale reconnaissance down to
/// [`MIN_WINDOW`].
pub fn new_window() -> Aimd {
    Aimd::new(MIN_WINDOW, WINDOW)
}

/// How a queued transaction's owner learns that it may run.
struct Waiter {
    /// Partitions where it is still blocked.
    pending: AtomicUsize,
    notify: Sender<usize>,
    slot: usize,
}

impl Waiter {
    /// Unblocked in one more partition; tells the owner once it is unblocked in all.
    fn unblock(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _ = self.notify.send(self.slot);
        }
    }
}

/// A transaction in one partition's TxnQueue.
pub(super) struct Entry {
    waiter: Arc<Waiter>,
    /// Its locks in this partition (none for a wall).
    locks: Vec<LockRequest>,
    /// A wall: runs alone (see the module docs).
    wall: bool,
}

/// One partition: its TxnQueue and SCA arrays.
pub(super) struct Partition {
    pub(super) queue: TxnQueue<Entry>,
    sca: Sca,
    /// Something changed since SCA last ran.
    dirty: bool,
    /// Walls in the queue: while any is, every new entry is blocked and SCA does not run.
    walls: usize,
    spare: Vec<Vec<LockRequest>>,
}

impl Partition {
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
                        mark(lock_id(l.table, l.key), l.mode == Mode::Exclusive);
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

/// Single-threaded (per-partition) VLL; with `SCA`, a worker that would otherwise wait runs selective
/// contention analysis on the partitions with blocked transactions.
pub struct SingleThreadedVll<const SCA: bool> {
    db: Database<VllCounters>,
    pub(super) parts: Vec<CachePadded<Mutex<Partition>>>,
    ids: Arc<IdLedger>,
}

/// `vll-partitioned`: single-threaded VLL, blocked transactions run by the head rule only.
pub type VllPartitioned = SingleThreadedVll<false>;

/// `vll-partitioned-sca`: single-threaded VLL with SCA.
pub type VllPartitionedSca = SingleThreadedVll<true>;

/// Per-thread state of [`SingleThreadedVll`].
pub struct VllPartWorker {
    exec: ExecState,
    planner: Planner,
    ready_tx: Sender<usize>,
    pub(super) ready_rx: Receiver<usize>,
}

/// A transaction a worker holds: its plan, and where it is queued (its program is kept beside).
#[derive(Default)]
pub(super) struct Slot {
    ticket: Option<Ticket>,
    accesses: Vec<Access>,
    /// Sorted by (table, key): what it may touch.
    locks: Vec<LockRequest>,
    parts: PartSet,
    /// `(partition, TxnQueue position)` where it is queued.
    queued: Vec<(u32, Seq)>,
    /// Ordered as a wall in every partition (a range too wide for key locks).
    wall: bool,
}

/// What submitting a transaction led to.
pub(super) enum Admitted {
    /// Ran at once (free, single-partition) with this outcome.
    Done(TxResult<()>),
    /// Queued; free everywhere (run it now) or not (wait for the owner's notification).
    Queued { free: bool },
}

impl<const SCA: bool> SingleThreadedVll<SCA> {
    fn n(&self) -> u64 {
        self.parts.len() as u64
    }

    fn latch(&self, p: u32) -> MutexGuard<'_, Partition> {
        let m = &self.parts[p as usize];
        m.try_lock().unwrap_or_else(|| {
            let _waiting = wait::blocked();
            m.lock()
        })
    }

    /// Plans `s` and begins it: runs it at once if it is local and free, else enqueues it in every
    /// partition it touches (latches taken in ascending order, so all queues agree on the order).
    pub(super) fn admit<P: Program>(
        &self,
        w: &mut VllPartWorker,
        s: &mut Slot,
        program: &mut P,
        slot: usize,
    ) -> Admitted {
        w.planner.plan(program, &self.db, &mut s.accesses);
        s.wall = match locks_of(&self.db, &s.accesses, true, &mut s.locks) {
            Ok(wide) => wide,
            Err(a) => return Admitted::Done(Err(a)),
        };
        let n = self.n();
        if s.wall {
            s.parts.all(n);
        } else {
            if let Err(a) = s.parts.of(&self.db, &s.accesses, n) {
                return Admitted::Done(Err(a));
            }
        }
        s.queued.clear();
        if s.parts.list.len() == 1 && !s.wall {
            let guard = self.latch(s.parts.list[0]);
            let free = guard.walls == 0
                && s.locks.iter().all(|l| {
                    let mut c = self.db.table(l.table).meta(l.rid).get();
                    c.request(l.mode)
                });
            if free {
                // Single-threaded VLL: a free local transaction runs to completion right here.
                let out = self.run(w, s, program);
                drop(guard);
                return Admitted::Done(out);
            }
            drop(guard);
        }
        let waiter = Arc::new(Waiter {
            pending: AtomicUsize::new(0),
            notify: w.ready_tx.clone(),
            slot,
        });
        let mut guards: Vec<MutexGuard<'_, Partition>> =
            s.parts.list.iter().map(|&p| self.latch(p)).collect();
        let mut blocked = 0;
        for (g, &p) in guards.iter_mut().zip(&s.parts.list) {
            let mut mine = g.spare.pop().unwrap_or_default();
            let free = if s.wall {
                // A wall takes no counters: it waits for everything ahead of it in the queue.
                g.queue.is_empty()
            } else {
                mine.extend(
                    s.locks
                        .iter()
                        .filter(|l| partition_of(l.key, n) == p as u64),
                );
                let mut free = g.walls == 0;
                for l in &mine {
                    // No short-circuit: every request is counted, granted or not.
                    free &= Colocated.request(&self.db, l);
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

    /// Executes `s` under its locks.
    pub(super) fn run<P: Program>(
        &self,
        w: &mut VllPartWorker,
        s: &Slot,
        program: &mut P,
    ) -> TxResult<()> {
        let cover = if s.wall {
            Cover::All
        } else {
            Cover::Keys {
                locks: &s.locks,
                accesses: &s.accesses,
            }
        };
        let mut tx = ExecTx::new(&self.db, &mut w.exec, cover);
        match run_pieces(program, &mut tx) {
            Ok(()) => tx.commit(),
            Err(a) => Err(a),
        }
    }

    /// Admits until the transaction is queued (`Ok(free everywhere)`) or has an outcome (`Err`):
    /// a free local one that hit a reconnaissance mismatch is planned again at once.
    fn admit_retrying<P: Program, R: RequestSource>(
        &self,
        w: &mut VllPartWorker,
        s: &mut Slot,
        program: &mut P,
        slot: usize,
        requests: &mut R,
        window: &mut Aimd,
    ) -> Result<bool, TxResult<()>> {
        loop {
            match self.admit(w, s, program, slot) {
                Admitted::Queued { free } => return Ok(free),
                Admitted::Done(Err(a)) if a.is_retryable() => retry(requests, a.reason, window),
                Admitted::Done(out) => return Err(out),
            }
        }
    }

    /// `FinishTransaction` in every partition `s` is queued in.
    pub(super) fn finish(&self, s: &mut Slot) {
        for &(p, q) in &s.queued {
            let mut g = self.latch(p);
            let mut e = g.queue.remove(q).expect("queued transaction");
            for l in &e.locks {
                Colocated.release(&self.db, l);
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
    fn idle_sca(&self) {
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
}

impl<const SCA: bool> Protocol for SingleThreadedVll<SCA> {
    type Meta = VllCounters;
    type Worker = VllPartWorker;
    type Tx<'w> = HoldingTx<'w, VllCounters, AllLatches<'w>>;

    const INFO: ProtocolInfo = if SCA {
        ProtocolInfo {
            name: "vll-partitioned-sca",
            summary:
                "single-threaded VLL per partition with SCA when a worker would otherwise wait",
            paper: "Ren, Thomson, Abadi, VLL (VLDB J. 2015) §2.3, Fig. 9-10",
            isolation: Isolation::Serializable,
        }
    } else {
        ProtocolInfo {
            name: "vll-partitioned",
            summary: "single-threaded VLL per partition: free local transactions run at once, multi-partition ones lock records",
            paper: "Ren, Thomson, Abadi, VLL (VLDB J. 2015) §2.3, Fig. 9-10",
            isolation: Isolation::Serializable,
        }
    };

    fn open(db: Database<VllCounters>, config: &ProtocolConfig) -> Self {
        SingleThreadedVll {
            db,
            parts: (0..config.threads.max(1))
                .map(|_| {
                    CachePadded::new(Mutex::new(Partition {
                        queue: TxnQueue::new(),
                        sca: Sca::new(),
                        dirty: false,
                        walls: 0,
                        spare: Vec::new(),
                    }))
                })
                .collect(),
            ids: IdLedger::new(),
        }
    }
    fn db(&self) -> &Database<VllCounters> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> VllPartWorker {
        let (ready_tx, ready_rx) = mpsc::channel();
        VllPartWorker {
            exec: ExecState::new(self.ids.lease(id), recording),
            planner: Planner::default(),
            ready_tx,
            ready_rx,
        }
    }
    fn recorder(w: &mut VllPartWorker) -> &mut Recorder {
        w.exec.recorder()
    }

    /// Waits until no transaction is queued anywhere, then holds every partition.
    fn begin<'w>(&'w self, w: &'w mut VllPartWorker) -> Self::Tx<'w> {
        let guards = loop {
            let guards: Vec<_> = (0..self.parts.len() as u32)
                .map(|p| self.latch(p))
                .collect();
            if guards.iter().all(|g| g.queue.is_empty()) {
                break guards;
            }
            drop(guards);
            let _waiting = wait::blocked();
            std::thread::yield_now();
        };
        HoldingTx::new(
            ExecTx::new(&self.db, &mut w.exec, Cover::All),
            AllLatches { _guards: guards },
        )
    }

    fn execute<P: Program>(&self, w: &mut VllPartWorker, program: &mut P) -> TxResult<()> {
        // One transaction through the worker loop's path.
        let mut s = Slot::default();
        match self.admit(w, &mut s, program, 0) {
            Admitted::Done(out) => out,
            Admitted::Queued { free } => {
                if !free {
                    self.idle_sca();
                    let _waiting = wait::blocked();
                    recv_polling(&w.ready_rx).expect("the worker holds a sender");
                }
                let out = self.run(w, &s, program);
                self.finish(&mut s);
                out
            }
        }
    }

    /// Up to [`WINDOW`] queued transactions in flight (an [`Aimd`] window); free local ones run at
    /// once; reconnaissance mismatches (retryable aborts) are planned and admitted again.
    fn run_worker<R: RequestSource>(&self, w: &mut VllPartWorker, requests: &mut R) {
        let mut programs: Vec<R::Program> = (0..WINDOW).map(|_| requests.program()).collect();
        let mut slots: Vec<Slot> = (0..WINDOW).map(|_| Slot::default()).collect();
        let mut free_slots: Vec<usize> = (0..WINDOW).rev().collect();
        let mut runnable: Vec<usize> = Vec::new();
        let mut waiting = Waiting::default();
        let mut in_flight = 0;
        let mut window = new_window();
        let mut exhausted = false;
        loop {
            // Execute what may run first (a notified transaction must not wait behind a stream of free
            // local ones, and resuming a Waiting one is Fig. 3's first choice), else admit a new
            // transaction while there is room.
            while let Ok(i) = w.ready_rx.try_recv() {
                free_everywhere(&mut programs[i], i, &mut runnable, &mut waiting);
            }
            waiting.due(&mut runnable);
            let admitted = if exhausted || !runnable.is_empty() || in_flight >= window.size() {
                None
            } else {
                free_slots.last().copied()
            };
            let (i, out) = if let Some(i) = admitted {
                let (s, program) = (&mut slots[i], &mut programs[i]);
                let Some(ticket) = requests.next(program) else {
                    exhausted = true;
                    continue;
                };
                free_slots.pop();
                s.ticket = Some(ticket);
                in_flight += 1;
                match self.admit_retrying(w, s, program, i, requests, &mut window) {
                    Ok(free) => {
                        if free {
                            free_everywhere(program, i, &mut runnable, &mut waiting);
                        }
                        continue;
                    }
                    Err(out) => (i, out),
                }
            } else if let Some(i) = runnable.pop() {
                let (s, program) = (&mut slots[i], &mut programs[i]);
                let out = self.run(w, s, program);
                self.finish(s);
                match out {
                    Err(a) if a.is_retryable() => {
                        retry(requests, a.reason, &mut window);
                        match self.admit_retrying(w, s, program, i, requests, &mut window) {
                            Ok(free) => {
                                if free {
                                    free_everywhere(program, i, &mut runnable, &mut waiting);
                                }
                                continue;
                            }
                            Err(out) => (i, out),
                        }
                    }
                    out => (i, out),
                }
            } else if in_flight == 0 {
                return;
            } else {
                // Everything in flight is blocked or Waiting: look for work with SCA, then wait for a
                // notification or for the end of the earliest remote wait.
                self.idle_sca();
                let i = match waiting.next_due() {
                    None => {
                        let _waiting = wait::blocked();
                        Some(recv_polling(&w.ready_rx).expect("the worker holds a sender"))
                    }
                    Some(at) => {
                        match w
                            .ready_rx
                            .recv_timeout(at.saturating_duration_since(Instant::now()))
                        {
                            Ok(i) => Some(i),
                            Err(RecvTimeoutError::Timeout) => None,
                            Err(RecvTimeoutError::Disconnected) => {
                                unreachable!("the worker holds a sender")
                            }
                        }
                    }
                };
                if let Some(i) = i {
                    free_everywhere(&mut programs[i], i, &mut runnable, &mut waiting);
                }
                continue;
            };
            let ticket = slots[i]
                .ticket
                .take()
                .expect("an in-flight slot has a ticket");
            requests.finished(ticket, out);
            window.completed();
            free_slots.push(i);
            in_flight -= 1;
        }
    }
}

/// The transaction in `slot` holds its locks in every partition it is queued in: it runs next, or —
/// a distributed transaction with remote reads to wait for — enters the Waiting state
/// ([`super::waiting`]).
fn free_everywhere<P: Program>(
    program: &mut P,
    slot: usize,
    runnable: &mut Vec<usize>,
    waiting: &mut Waiting,
) {
    match program.take_remote_wait() {
        Some(wait) => waiting.set_aside(slot, wait),
        None => runnable.push(slot),
    }
}

/// Reports a retryable abort; a stale reconnaissance also shrinks the worker's window.
pub(super) fn retry<R: RequestSource>(requests: &mut R, reason: AbortReason, window: &mut Aimd) {
    requests.aborted(reason);
    window.aborted(reason);
}

/// Every partition's latch, taken with every queue empty: what an interactive [`SingleThreadedVll`]
/// transaction holds (released when it drops).
pub struct AllLatches<'w> {
    _guards: Vec<MutexGuard<'w, Partition>>,
}
