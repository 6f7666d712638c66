//! `VLLMainLoop` (Fig. 1): each worker thread admits, runs and unblocks transactions.
//!
//! ```text
//!  VLLMainLoop()                                       Vll::main_loop
//!    if TxnQueue.front().Type == Blocked:               1. my oldest blocked txn is the front:
//!      T = front; T.Type = Free; Execute(T); Finish(T)     claim it (once), run it, finish it
//!    else if TxnQueue is not full:                      2. blocked < limit: draw a request,
//!      T = GetNewTxnRequest(); BeginTransaction(T)         gather its accesses (reconnaissance if
//!      if T.Type == Free: Execute(T); Finish(T)            needed), BeginTransaction; free → run now,
//!                                                          blocked → keep its program here
//!    [vll-sca] else: T = SCA(); if T: Execute; Finish   3. queue full: SCA for one of mine
//! ```
//!
//! A blocked transaction's program stays owned by the worker that admitted it (the harness hands each
//! thread its own request source), so "the front is blocked" becomes "the front is one of *my* blocked
//! transactions"; the owner is always in this loop, so the head still always runs, and SCA passes over
//! other workers' transactions while keeping their keys marked. A worker that runs out of requests keeps
//! looping until its own blocked transactions have run. A transaction that touches something its locks
//! do not cover (stale reconnaissance) is resubmitted at once as a new transaction.

use super::partition::Partition;
use super::recon::gather;
use super::scheme::LockScheme;
use super::txn::{Held, VllTx};
use super::txn_queue::Seq;
use super::{Flavor, Vll};
use crate::txn::{run_pieces, Abort, AccessKind, Program, RequestSource, Ticket, Tx, TxResult};
use std::collections::VecDeque;

/// What the main loop keeps between iterations.
struct LoopState<P, R> {
    /// This worker's blocked transactions, oldest first.
    pending: VecDeque<Pending<P, R>>,
    spare_programs: Vec<P>,
    spare_locks: Vec<Vec<R>>,
    /// A free transaction that ran and committed (or aborted) and whose `FinishTransaction` is
    /// postponed to the next `BeginTransaction`, or to before this worker waits for anything.
    /// Its lock requests ride along: `FinishTransaction` releases them.
    deferred: Option<(Seq, Vec<R>)>,
    /// Blocked transactions in the queue as this worker's last `BeginTransaction` left it: "TxnQueue
    /// is not full" is read from here while it says so, and from the shared counter only once it
    /// says full (so a free-running worker reads no line the other workers write).
    seen_blocked: usize,
    stats: LoopStats,
}

/// What one worker's main loop did (printed at its end when `ORDO_VLL_STATS` is set: diagnostics for
/// tuning the blocked threshold and judging SCA).
#[derive(Debug, Default)]
struct LoopStats {
    /// `BeginTransaction`s (resubmissions included).
    begun: u64,
    /// Of which blocked.
    blocked: u64,
    /// Blocked transactions run by the head rule.
    by_head: u64,
    /// SCA passes, and how many found a transaction.
    sca_runs: u64,
    sca_found: u64,
    /// Loop turns that found nothing to do (queue full, nothing of mine runnable).
    idle_turns: u64,
}

/// A blocked transaction waiting in this worker.
struct Pending<P, R> {
    seq: Seq,
    program: P,
    ticket: Ticket,
    locks: Vec<R>,
    plan: Planned,
}

/// How an admitted transaction runs.
#[derive(Clone, Copy, Debug)]
struct Planned {
    /// Alone, behind a wall (its ranges were too wide to lock key by key).
    alone: bool,
    /// With an undo log (it may abort after writing).
    undo: bool,
}

type Req<F> = <<F as Flavor>::Scheme as LockScheme>::Request;
type Worker<F> = super::txn::VllWorker<Req<F>>;

/// Waits politely: spin a little, then let other threads (maybe the one that owns the head) run.
fn pause(idle: &mut u32) {
    *idle += 1;
    if *idle < 16 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

impl<F: Flavor> Vll<F> {
    fn partition(&self) -> &Partition<F::Scheme> {
        &self.part
    }

    /// Gathers and plans the locks of `program` into `locks`; `Ok(alone)`.
    fn plan<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
        locks: &mut Vec<Req<F>>,
    ) -> TxResult<Planned> {
        let recon = gather(program, &self.db, &mut w.accesses, &mut w.recon);
        let ok = F::Scheme::plan(&self.db, &w.accesses, locks)?;
        if !ok {
            locks.clear();
        }
        // Once its locks are granted, VLL never aborts a transaction that declared everything up front
        // (no reconnaissance), cannot abort by its own logic (no commit point) and inserts or deletes
        // nothing (no duplicate-key aborts): such a transaction needs no undo log.
        let undo = recon
            || program.commit_point().is_some()
            || w.accesses
                .iter()
                .any(|a| matches!(a.kind, AccessKind::Insert | AccessKind::Delete));
        Ok(Planned { alone: !ok, undo })
    }

    /// `Execute(T)` under the locks `held`, to commit or abort (writes undone).
    pub(super) fn run_locked<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
        held: Held<'_, Req<F>>,
        undo: bool,
    ) -> TxResult<()> {
        let mut tx = VllTx::new(&self.db, &self.part, w, held);
        tx.set_undo(undo);
        run_pieces(program, &mut tx)?;
        tx.commit()
    }

    /// Runs an admitted transaction whose locks are all granted (or that runs alone). The caller
    /// then calls `FinishTransaction`.
    fn run_admitted<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
        locks: &[Req<F>],
        plan: Planned,
    ) -> TxResult<()> {
        let held = if plan.alone {
            Held::Alone { leave: None }
        } else {
            Held::Locks(locks)
        };
        self.run_locked(w, program, held, plan.undo)
    }

    /// The worker loop (see the module docs).
    pub(super) fn main_loop<R: RequestSource>(&self, w: &mut Worker<F>, requests: &mut R) {
        let part = self.partition();
        let mut st = LoopState::<R::Program, Req<F>> {
            pending: VecDeque::new(),
            spare_programs: Vec::new(),
            spare_locks: Vec::new(),
            deferred: None,
            seen_blocked: 0,
            stats: LoopStats::default(),
        };
        let mut exhausted = false;
        let mut idle = 0;
        // `finishes()` when SCA last found nothing: until another transaction finishes, it would find
        // nothing again (enqueues add only younger transactions), so it is not rerun.
        let mut sca_seen = u64::MAX;
        loop {
            // 1. The head rule: my oldest blocked transaction is the front of the queue.
            if let Some(p) = st.pending.front() {
                let seq = p.seq;
                self.flush(&mut st);
                if part.front() == seq && part.claim(seq) {
                    let p = st.pending.pop_front().expect("front exists");
                    st.stats.by_head += 1;
                    self.resume(w, requests, p, &mut st);
                    idle = 0;
                    continue;
                }
            }
            // 2. Admission, while the queue is not full.
            if !exhausted
                && (st.seen_blocked < self.blocked_limit || part.blocked() < self.blocked_limit)
            {
                let mut program = st
                    .spare_programs
                    .pop()
                    .unwrap_or_else(|| requests.program());
                match requests.next(&mut program) {
                    None => {
                        exhausted = true;
                        st.spare_programs.push(program);
                    }
                    Some(ticket) => {
                        let locks = st.spare_locks.pop().unwrap_or_default();
                        self.admit(w, requests, program, ticket, locks, &mut st);
                    }
                }
                idle = 0;
                continue;
            }
            self.flush(&mut st);
            if exhausted && st.pending.is_empty() {
                if std::env::var_os("ORDO_VLL_STATS").is_some() {
                    eprintln!("{} worker {}: {:?}", F::INFO.name, w.id, st.stats);
                }
                return;
            }
            // 3. The queue is full: selective contention analysis, for one of my transactions.
            if F::SCA
                && !st.pending.is_empty()
                && part.blocked() >= self.blocked_limit
                && part.finishes() != sca_seen
            {
                let epoch = part.finishes();
                st.stats.sca_runs += 1;
                if let Some(seq) = part.sca(w.id) {
                    st.stats.sca_found += 1;
                    let i = st
                        .pending
                        .iter()
                        .position(|p| p.seq == seq)
                        .expect("SCA returned a transaction of this worker");
                    let p = st.pending.remove(i).expect("index in range");
                    self.resume(w, requests, p, &mut st);
                    idle = 0;
                    continue;
                }
                sca_seen = epoch;
            }
            st.stats.idle_turns += 1;
            pause(&mut idle);
        }
    }

    /// Performs a postponed `FinishTransaction`.
    fn flush<P>(&self, st: &mut LoopState<P, Req<F>>) {
        if let Some((seq, locks)) = st.deferred.take() {
            self.partition().finish_transaction(&self.db, seq, &locks);
            st.spare_locks.push(locks);
        }
    }

    /// Runs a claimed blocked transaction, then `FinishTransaction`.
    fn resume<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        mut p: Pending<R::Program, Req<F>>,
        st: &mut LoopState<R::Program, Req<F>>,
    ) {
        let r = self.run_admitted(w, &mut p.program, &p.locks, p.plan);
        self.partition()
            .finish_transaction(&self.db, p.seq, &p.locks);
        st.spare_locks.push(p.locks);
        self.settle(w, requests, p.program, p.ticket, r, st);
    }

    /// Reports how a run ended; resubmits a transaction whose reconnaissance was stale.
    fn settle<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        program: R::Program,
        ticket: Ticket,
        r: TxResult<()>,
        st: &mut LoopState<R::Program, Req<F>>,
    ) {
        match r {
            Err(a) if a.is_retryable() => {
                requests.aborted(a.reason);
                let locks = st.spare_locks.pop().unwrap_or_default();
                self.admit(w, requests, program, ticket, locks, st);
            }
            r => {
                requests.finished(ticket, r);
                st.spare_programs.push(program);
            }
        }
    }

    /// `BeginTransaction` for a new (or resubmitted) request; runs it now if it is free. The
    /// `FinishTransaction` of this worker's previous free transaction, if postponed, happens in the
    /// same critical section, and this one's is postponed in turn: one critical section per
    /// transaction instead of two when nothing blocks.
    fn admit<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        mut program: R::Program,
        ticket: Ticket,
        mut locks: Vec<Req<F>>,
        st: &mut LoopState<R::Program, Req<F>>,
    ) {
        let plan = match self.plan(w, &mut program, &mut locks) {
            Ok(p) => p,
            Err(a) => {
                st.spare_locks.push(locks);
                let r: Result<(), Abort> = Err(a);
                self.settle(w, requests, program, ticket, r, st);
                return;
            }
        };
        let alone = plan.alone;
        let deferred = st.deferred.take();
        let (seq, blocked, queue_blocked) = self.partition().finish_and_begin(
            &self.db,
            deferred.as_ref().map(|(s, l)| (*s, l.as_slice())),
            w.id,
            &locks,
            alone,
        );
        if let Some((_, l)) = deferred {
            st.spare_locks.push(l);
        }
        st.seen_blocked = queue_blocked;
        st.stats.begun += 1;
        st.stats.blocked += blocked as u64;
        if blocked {
            st.pending.push_back(Pending {
                seq,
                program,
                ticket,
                locks,
                plan,
            });
            return;
        }
        let r = self.run_admitted(w, &mut program, &locks, plan);
        st.deferred = Some((seq, locks));
        self.settle(w, requests, program, ticket, r, st);
    }

    /// Runs one program to commit or abort on the calling thread (waiting, if blocked, until it is the
    /// queue head or SCA picks it).
    pub(super) fn execute_one<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
    ) -> TxResult<()> {
        let mut locks = std::mem::take(&mut w.locks);
        let plan = match self.plan(w, program, &mut locks) {
            Ok(p) => p,
            Err(e) => {
                w.locks = locks;
                return Err(e);
            }
        };
        let alone = plan.alone;
        let part = self.partition();
        let (seq, blocked) = part.begin_transaction(&self.db, w.id, &locks, alone);
        if blocked {
            let _waiting = crate::txn::wait::blocked();
            let mut idle = 0;
            loop {
                if part.front() == seq && part.claim(seq) {
                    break;
                }
                if F::SCA && part.blocked() >= self.blocked_limit && part.sca(w.id) == Some(seq) {
                    break;
                }
                pause(&mut idle);
            }
        }
        let r = self.run_admitted(w, program, &locks, plan);
        part.finish_transaction(&self.db, seq, &locks);
        w.locks = locks;
        r
    }
}
