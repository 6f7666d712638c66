//! The worker loop the partition-per-core lock-based protocols share (`vll-partitioned`,
//! `vll-partitioned-sca`, `hstore-lockmgr`): what differs between them is how a partition grants
//! locks (`Engine`); how a worker keeps transactions in flight does not.
//!
//! A worker draws a transaction, plans it (`plan`: its accesses, key locks, partitions) and admits
//! it (`Engine::admit`): it either ran at once, or it is queued in every partition it touches and
//! runs when all of them granted it — at once, or when its owner is notified (`Waiter`). A granted
//! transaction with remote reads to wait for enters the **Waiting** state ([`super::waiting`]). Up to
//! [`WINDOW`] queued transactions per worker are in flight; resuming a Waiting one or running a
//! notified one comes before admitting new ones. With nothing to run, the worker asks its engine for
//! work (`Engine::idle`: SCA) and then sleeps until a notification or the end of a wait.

use super::parts::PartSet;
use super::waiting::Waiting;
use crate::protocols::aimd::Aimd;
use crate::protocols::deterministic::engine::recv_polling;
use crate::protocols::deterministic::exec::{Cover, ExecState, ExecTx};
use crate::protocols::deterministic::plan::{locks_of, LockRequest, Planner};
use crate::protocols::vll::txn_queue::Seq;
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
    w.planner.plan(program, db, &mut s.accesses);
    s.wall = locks_of(db, &s.accesses, rows, &mut s.locks)?;
    s.queued.clear();
    if s.wall {
        s.parts.all(n);
        Ok(())
    } else {
        s.parts.of(db, &s.accesses, n)
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
            let out = run(e.db(), w, &s, program);
            e.finish(&mut s);
            out
        }
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
    window: &mut Aimd,
) -> Result<bool, TxResult<()>> {
    loop {
        match e.admit(w, s, program, slot) {
            Admitted::Queued { free } => return Ok(free),
            Admitted::Done(Err(a)) if a.is_retryable() => retry(requests, a.reason, window),
            Admitted::Done(out) => return Err(out),
        }
    }
}

/// The worker loop ([`crate::protocols::Protocol::run_worker`]): up to [`WINDOW`] queued
/// transactions in flight (an [`Aimd`] window); free local ones run at once; reconnaissance
/// mismatches (retryable aborts) are planned and admitted again.
pub(super) fn run_worker<E: Engine, R: RequestSource>(e: &E, w: &mut PartWorker, requests: &mut R) {
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
        // `None`: admit slot `i` (a new transaction, or one to retry); `Some`: it has an outcome.
        let (i, out) = if let Some(i) = admitted {
            let Some(ticket) = requests.next(&mut programs[i]) else {
                exhausted = true;
                continue;
            };
            free_slots.pop();
            slots[i].ticket = Some(ticket);
            in_flight += 1;
            (i, None)
        } else if let Some(i) = runnable.pop() {
            let (s, program) = (&mut slots[i], &mut programs[i]);
            let out = run(e.db(), w, s, program);
            e.finish(s);
            match out {
                Err(a) if a.is_retryable() => {
                    retry(requests, a.reason, &mut window);
                    (i, None)
                }
                out => (i, Some(out)),
            }
        } else if in_flight == 0 {
            return;
        } else {
            // Everything in flight is blocked or Waiting: look for work (SCA), then wait for a
            // notification or for the end of the earliest remote wait.
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
                free_everywhere(&mut programs[i], i, &mut runnable, &mut waiting);
            }
            continue;
        };
        let out = match out {
            Some(out) => out,
            None => {
                let (s, program) = (&mut slots[i], &mut programs[i]);
                match admit_retrying(e, w, s, program, i, requests, &mut window) {
                    Ok(free) => {
                        if free {
                            free_everywhere(program, i, &mut runnable, &mut waiting);
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
        window.completed();
        free_slots.push(i);
        in_flight -= 1;
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
