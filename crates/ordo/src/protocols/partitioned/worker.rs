//! The worker loop the partition-per-core lock-based protocols share (`vll-partitioned`,
//! `vll-partitioned-sca`, `vll-partitioned-arrayed`, `hstore-lockmgr`): what differs between them is
//! how a partition grants locks (`Engine`); how a worker keeps transactions in flight does not.
//!
//! A worker draws a transaction, plans it (`plan`: its accesses, key locks, partitions) and admits
//! it (`Engine::admit`): it either ran at once, or it is queued in every partition it touches and
//! runs when all of them granted it — at once, or when its owner is notified (`Waiter`). A granted
//! transaction with remote reads to wait for enters the **Waiting** state ([`crate::protocols::kit::waiting`]).
//!
//! Admission follows Fig. 3's "TxnQueue is not full": a worker admits new transactions while fewer
//! than its blocked threshold ([`BLOCKED_LIMIT`]) of its own are **blocked** (queued, not yet granted
//! everywhere). Transactions that are Waiting for remote reads, or granted and about to run, do not
//! count — "the queue length is limited by the number of blocked transactions, not the total number
//! of transactions" (§3.3.1) — so a worker whose distributed transactions wait on the network keeps
//! starting new ones; only [`MAX_IN_FLIGHT`], a memory guard, bounds them all. Resuming a Waiting
//! transaction or running a notified one comes before admitting new ones. With nothing to run, the
//! worker asks its engine for work (`Engine::idle`: SCA) and then sleeps until a notification or the
//! end of a wait.

use super::parts::PartSet;
use crate::protocols::kit::aimd::Aimd;
use crate::protocols::kit::exec::{Cover, ExecState, ExecTx};
use crate::protocols::kit::partition_map::PartitionMap;
use crate::protocols::kit::plan::{locks_of, LockRequest, Planner};
use crate::protocols::kit::recv::recv_polling;
use crate::protocols::kit::txn_queue::Seq;
use crate::protocols::kit::waiting::Waiting;
use crate::storage::Database;
use crate::txn::{
    run_pieces, wait, Abort, AbortReason, Access, IdLedger, Program, Recorder, RequestSource,
    Ticket, Tx, TxResult,
};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Instant;

/// The most blocked transactions a worker keeps before it stops admitting new ones (Fig. 3's
/// "TxnQueue is not full"): fewer, down to [`MIN_BLOCKED_LIMIT`], while its dependent transactions'
/// reconnaissance goes stale as they wait ([`Aimd`]; on TPC-C a New-Order queued behind another of its
/// district always finds `d_next_o_id` changed). The same default as the multi-threaded VLL's
/// [`crate::protocols::vll::DEFAULT_BLOCKED_LIMIT`].
pub const BLOCKED_LIMIT: usize = 16;

/// The lowest blocked threshold (see [`BLOCKED_LIMIT`]).
pub const MIN_BLOCKED_LIMIT: usize = 2;

/// The most transactions a worker holds at once, in any state: not a rule of the paper but a bound on
/// memory should remote waits be long. With the simulated waits of `vll-micro --remote-wait` a worker
/// holds about its throughput times the wait (Little's law: 65 k/s × 100 µs ≈ 7), far below it.
pub const MAX_IN_FLIGHT: usize = 1024;

/// A worker's blocked threshold: `most` (the engine's `Engine::blocked_limit`, by default
/// [`BLOCKED_LIMIT`]), halved by each stale reconnaissance down to [`MIN_BLOCKED_LIMIT`] (or `most`,
/// if that is lower).
pub fn new_blocked_limit(most: usize) -> Aimd {
    Aimd::new(MIN_BLOCKED_LIMIT.min(most), most)
}

/// How a queued transaction's owner learns that it may run.
pub(super) struct Waiter {
    /// Partitions where it is still blocked.
    pub(super) pending: AtomicUsize,
    notify: Sender<usize>,
    slot: usize,
}

impl Waiter {
    /// A transaction in slot `slot` of the worker `w`, blocked nowhere yet.
    pub(super) fn new(w: &PartWorker, slot: usize) -> Arc<Self> {
        Arc::new(Waiter {
            pending: AtomicUsize::new(0),
            notify: w.ready_tx.clone(),
            slot,
        })
    }

    /// Unblocked in one more partition; tells the owner once it is unblocked in all.
    pub(super) fn unblock(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _ = self.notify.send(self.slot);
        }
    }
}

/// Per-thread state of a partitioned lock-based protocol.
pub struct PartWorker {
    pub(super) exec: ExecState,
    planner: Planner,
    ready_tx: Sender<usize>,
    pub(super) ready_rx: Receiver<usize>,
}

impl PartWorker {
    pub(super) fn new(ids: &Arc<IdLedger>, id: u32, recording: bool) -> Self {
        let (ready_tx, ready_rx) = mpsc::channel();
        PartWorker {
            exec: ExecState::new(ids.lease(id), recording),
            planner: Planner::default(),
            ready_tx,
            ready_rx,
        }
    }
    pub(super) fn recorder(&mut self) -> &mut Recorder {
        self.exec.recorder()
    }
}

/// A transaction a worker holds: its plan, and where it is queued (its program is kept beside).
#[derive(Default)]
pub(super) struct Slot {
    ticket: Option<Ticket>,
    pub(super) accesses: Vec<Access>,
    /// Sorted by (table, key): what it may touch.
    pub(super) locks: Vec<LockRequest>,
    pub(super) parts: PartSet,
    /// `(partition, position)` where it is queued (the engine's handle).
    pub(super) queued: Vec<(u32, Seq)>,
    /// Ordered as a wall in every partition (a range too wide for key locks).
    pub(super) wall: bool,
    /// Where its keys live (the program's partitioning, among the engine's partitions).
    pub(super) map: PartitionMap,
}

impl Slot {
    /// Its lock requests on keys of partition `p` (what it requests there).
    pub(super) fn locks_in(&self, p: u32) -> impl Iterator<Item = LockRequest> + '_ {
        self.locks
            .iter()
            .filter(move |l| self.map.of(l.table, l.key) == p as u64)
            .copied()
    }
}

/// What submitting a transaction led to.
pub(super) enum Admitted {
    /// Ran at once (free, single-partition) with this outcome.
    Done(TxResult<()>),
    /// Queued; free everywhere (run it now) or not (wait for the owner's notification).
    Queued { free: bool },
}

/// How a partitioned protocol grants locks.
pub(super) trait Engine: crate::protocols::Protocol {
    /// Plans `s` ([`plan`]) and begins it: runs it at once, or queues it in every partition it
    /// touches (in one order agreed by all of them) with `slot` as its owner's handle.
    fn admit<P: Program>(
        &self,
        w: &mut PartWorker,
        s: &mut Slot,
        program: &mut P,
        slot: usize,
    ) -> Admitted;

    /// `FinishTransaction` in every partition `s` is queued in: releases its locks, notifies the
    /// owners of transactions that may run now.
    fn finish(&self, s: &mut Slot);

    /// Looks for runnable transactions while the worker would otherwise wait (SCA). Default: none.
    fn idle(&self) {}

    /// The most blocked transactions a worker keeps before it stops admitting (the VLL engines:
    /// `--vll-blocked-limit`). Default: [`BLOCKED_LIMIT`].
    fn blocked_limit(&self) -> usize {
        BLOCKED_LIMIT
    }
}

/// A partition's latch (a wait for it is reported as blocked, see [`crate::txn::wait`]).
pub(super) fn latch<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.try_lock().unwrap_or_else(|| {
        let _waiting = wait::blocked();
        m.lock()
    })
}

/// Every partition's latch, taken in partition order at a moment when no transaction is queued in
/// any (`empty`): what an interactive transaction holds, alone.
pub(super) fn all_latches_when_empty<T>(
    parts: &[CachePadded<Mutex<T>>],
    empty: impl Fn(&T) -> bool,
) -> Vec<MutexGuard<'_, T>> {
    loop {
        let guards: Vec<_> = parts.iter().map(|m| latch(m)).collect();
        if guards.iter().all(|g| empty(g)) {
            return guards;
        }
        drop(guards);
        let _waiting = wait::blocked();
        std::thread::yield_now();
    }
}

/// Collects `s`'s accesses (reconnaissance first if needed), key locks (`rows`: with their row
/// slots) and partitions among `n`; `s.wall` says a range was too wide to lock key by key.
pub(super) fn plan<P: Program, M: Default + Send + Sync>(
    db: &Database<M>,
    w: &mut PartWorker,
    s: &mut Slot,
    program: &mut P,
    rows: bool,
    n: u64,
) -> Result<(), Abort> {
    w.planner.plan(program, db, &mut s.accesses, false);
    s.wall = locks_of(db, &s.accesses, rows, &mut s.locks)?;
    s.queued.clear();
    s.map = PartitionMap::new(n, program.partitioning());
    if s.wall {
        s.parts.all(n);
        Ok(())
    } else {
        s.parts.of(db, &s.accesses, s.map)
    }
}

/// Executes `s` under its locks.
pub(super) fn run<M: Default + Send + Sync, P: Program>(
    db: &Database<M>,
    w: &mut PartWorker,
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
    let mut tx = ExecTx::new(db, &mut w.exec, cover);
    match run_pieces(program, &mut tx) {
        Ok(()) => tx.commit(),
        Err(a) => Err(a),
    }
}

/// One transaction through the worker loop's path ([`crate::protocols::Protocol::execute`]): it
/// sleeps through any remote wait itself.
pub(super) fn execute<E: Engine, P: Program>(
    e: &E,
    w: &mut PartWorker,
    program: &mut P,
) -> TxResult<()> {
    let mut s = Slot::default();
    match e.admit(w, &mut s, program, 0) {
        Admitted::Done(out) => out,
        Admitted::Queued { free } => {
            if !free {
                e.idle();
                let _waiting = wait::blocked();
                recv_polling(&w.ready_rx).expect("the worker holds a sender");
            }
            let queued = FinishOnDrop { e, s };
            run(e.db(), w, &queued.s, program)
        }
    }
}

/// `FinishTransaction` for a queued transaction ([`Engine::finish`]) when dropped: after it ran, or
/// while a panic in its program unwinds, so that no other thread waits for its locks forever.
struct FinishOnDrop<'a, E: Engine> {
    e: &'a E,
    s: Slot,
}

impl<E: Engine> Drop for FinishOnDrop<'_, E> {
    fn drop(&mut self) {
        self.e.finish(&mut self.s);
    }
}

/// Admits until the transaction is queued (`Ok(free everywhere)`) or has an outcome (`Err`): a
/// free local one that hit a reconnaissance mismatch is planned again at once.
fn admit_retrying<E: Engine, P: Program, R: RequestSource>(
    e: &E,
    w: &mut PartWorker,
    s: &mut Slot,
    program: &mut P,
    slot: usize,
    requests: &mut R,
    limit: &mut Aimd,
) -> Result<bool, TxResult<()>> {
    loop {
        match e.admit(w, s, program, slot) {
            Admitted::Queued { free } => return Ok(free),
            Admitted::Done(Err(a)) if a.is_retryable() => retry(requests, a.reason, limit),
            Admitted::Done(out) => return Err(out),
        }
    }
}

/// The worker loop ([`crate::protocols::Protocol::run_worker`]): admits while fewer than its
/// blocked threshold (an [`Aimd`]) of its transactions are blocked; free local ones run at once;
/// reconnaissance mismatches (retryable aborts) are planned and admitted again.
pub(super) fn run_worker<E: Engine, R: RequestSource>(e: &E, w: &mut PartWorker, requests: &mut R) {
    // Slots (and the programs beside them) are added as more transactions are in flight, and reused.
    let mut programs: Vec<R::Program> = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
    let mut free_slots: Vec<usize> = Vec::new();
    let mut runnable: Vec<usize> = Vec::new();
    let mut waiting = Waiting::default();
    let mut in_flight = 0;
    // Queued and not yet granted everywhere (notified when they are).
    let mut blocked = 0;
    let mut limit = new_blocked_limit(e.blocked_limit());
    let mut exhausted = false;
    loop {
        // Execute what may run first (a notified transaction must not wait behind a stream of free
        // local ones, and resuming a Waiting one is Fig. 3's first choice), else admit a new
        // transaction while the queue is not full.
        while let Ok(i) = w.ready_rx.try_recv() {
            blocked -= 1;
            free_everywhere(&mut programs[i], i, &mut runnable, &mut waiting);
        }
        waiting.due(&mut runnable);
        let admit = !exhausted
            && runnable.is_empty()
            && blocked < limit.size()
            && in_flight < MAX_IN_FLIGHT;
        // `None`: admit slot `i` (a new transaction, or one to retry); `Some`: it has an outcome.
        let (i, out) = if admit {
            let i = free_slots.pop().unwrap_or_else(|| {
                programs.push(requests.program());
                slots.push(Slot::default());
                slots.len() - 1
            });
            let Some(ticket) = requests.next(&mut programs[i]) else {
                free_slots.push(i);
                exhausted = true;
                continue;
            };
            slots[i].ticket = Some(ticket);
            in_flight += 1;
            (i, None)
        } else if let Some(i) = runnable.pop() {
            let (s, program) = (&mut slots[i], &mut programs[i]);
            let out = run(e.db(), w, s, program);
            e.finish(s);
            match out {
                Err(a) if a.is_retryable() => {
                    retry(requests, a.reason, &mut limit);
                    (i, None)
                }
                out => (i, Some(out)),
            }
        } else if in_flight == 0 {
            return;
        } else {
            // Everything in flight is blocked or Waiting (or the queue is full): look for work
            // (SCA), then wait for a notification or for the end of the earliest remote wait.
            e.idle();
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
                blocked -= 1;
                free_everywhere(&mut programs[i], i, &mut runnable, &mut waiting);
            }
            continue;
        };
        let out = match out {
            Some(out) => out,
            None => {
                let (s, program) = (&mut slots[i], &mut programs[i]);
                match admit_retrying(e, w, s, program, i, requests, &mut limit) {
                    Ok(free) => {
                        if free {
                            free_everywhere(program, i, &mut runnable, &mut waiting);
                        } else {
                            blocked += 1;
                        }
                        continue;
                    }
                    Err(out) => out,
                }
            }
        };
        let ticket = slots[i]
            .ticket
            .take()
            .expect("an in-flight slot has a ticket");
        requests.finished(ticket, out);
        limit.completed();
        free_slots.push(i);
        in_flight -= 1;
    }
}

/// The transaction in `slot` holds its locks in every partition it is queued in: it runs next, or —
/// a distributed transaction with remote reads to wait for — enters the Waiting state
/// ([`crate::protocols::kit::waiting`]).
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

/// Reports a retryable abort; a stale reconnaissance also lowers the worker's blocked threshold.
pub(super) fn retry<R: RequestSource>(requests: &mut R, reason: AbortReason, limit: &mut Aimd) {
    requests.aborted(reason);
    limit.aborted(reason);
}
