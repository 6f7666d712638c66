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
use crate::txn::{run_pieces, Abort, Program, RequestSource, Ticket, Tx, TxResult};
use std::collections::VecDeque;

/// A blocked transaction waiting in this worker.
struct Pending<P, R> {
    seq: Seq,
    program: P,
    ticket: Ticket,
    locks: Vec<R>,
    alone: bool,
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
    ) -> TxResult<bool> {
        gather(program, &self.db, &mut w.accesses, &mut w.recon);
        let ok = F::Scheme::plan(&self.db, &w.accesses, locks)?;
        if !ok {
            locks.clear();
        }
        Ok(!ok)
    }

    /// `Execute(T)` under the locks `held`, to commit or abort (writes undone).
    pub(super) fn run_locked<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
        held: Held<'_, Req<F>>,
    ) -> TxResult<()> {
        let mut tx = VllTx::new(&self.db, &self.part, w, held);
        run_pieces(program, &mut tx)?;
        tx.commit()
    }

    /// Runs an admitted transaction whose locks are all granted (or that runs alone), then
    /// `FinishTransaction`.
    fn run_admitted<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
        seq: Seq,
        locks: &[Req<F>],
        alone: bool,
    ) -> TxResult<()> {
        let held = if alone {
            Held::Alone { leave: None }
        } else {
            Held::Locks(locks)
        };
        let r = self.run_locked(w, program, held);
        self.partition().finish_transaction(&self.db, seq);
        r
    }

    /// The worker loop (see the module docs).
    pub(super) fn main_loop<R: RequestSource>(&self, w: &mut Worker<F>, requests: &mut R) {
        let part = self.partition();
        let mut pending: VecDeque<Pending<R::Program, Req<F>>> = VecDeque::new();
        let mut spare_programs: Vec<R::Program> = Vec::new();
        let mut spare_locks: Vec<Vec<Req<F>>> = Vec::new();
        let mut exhausted = false;
        let mut idle = 0;
        loop {
            // 1. The head rule: my oldest blocked transaction is the front of the queue.
            if let Some(p) = pending.front() {
                if part.front() == p.seq && part.claim(p.seq) {
                    let p = pending.pop_front().expect("front exists");
                    self.resume(
                        w,
                        requests,
                        p,
                        &mut pending,
                        &mut spare_programs,
                        &mut spare_locks,
                    );
                    idle = 0;
                    continue;
                }
            }
            // 2. Admission, while the queue is not full.
            if !exhausted && part.blocked() < self.blocked_limit {
                let mut program = spare_programs.pop().unwrap_or_else(|| requests.program());
                match requests.next(&mut program) {
                    None => {
                        exhausted = true;
                        spare_programs.push(program);
                    }
                    Some(ticket) => {
                        let locks = spare_locks.pop().unwrap_or_default();
                        self.admit(
                            w,
                            requests,
                            program,
                            ticket,
                            locks,
                            &mut pending,
                            &mut spare_programs,
                            &mut spare_locks,
                        );
                    }
                }
                idle = 0;
                continue;
            }
            if exhausted && pending.is_empty() {
                return;
            }
            // 3. The queue is full (or we are draining): selective contention analysis.
            if F::SCA && !pending.is_empty() && part.blocked() >= self.blocked_limit {
                if let Some(seq) = part.sca(w.id) {
                    let i = pending
                        .iter()
                        .position(|p| p.seq == seq)
                        .expect("SCA returned a transaction of this worker");
                    let p = pending.remove(i).expect("index in range");
                    self.resume(
                        w,
                        requests,
                        p,
                        &mut pending,
                        &mut spare_programs,
                        &mut spare_locks,
                    );
                    idle = 0;
                    continue;
                }
            }
            pause(&mut idle);
        }
    }

    /// Runs a claimed blocked transaction.
    fn resume<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        mut p: Pending<R::Program, Req<F>>,
        pending: &mut VecDeque<Pending<R::Program, Req<F>>>,
        spare_programs: &mut Vec<R::Program>,
        spare_locks: &mut Vec<Vec<Req<F>>>,
    ) {
        let r = self.run_admitted(w, &mut p.program, p.seq, &p.locks, p.alone);
        self.settle(
            w,
            requests,
            p.program,
            p.ticket,
            p.locks,
            r,
            pending,
            spare_programs,
            spare_locks,
        );
    }

    /// Reports how a run ended; resubmits a transaction whose reconnaissance was stale.
    #[allow(clippy::too_many_arguments)]
    fn settle<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        program: R::Program,
        ticket: Ticket,
        locks: Vec<Req<F>>,
        r: TxResult<()>,
        pending: &mut VecDeque<Pending<R::Program, Req<F>>>,
        spare_programs: &mut Vec<R::Program>,
        spare_locks: &mut Vec<Vec<Req<F>>>,
    ) {
        match r {
            Err(a) if a.is_retryable() => {
                requests.aborted(a.reason);
                self.admit(
                    w,
                    requests,
                    program,
                    ticket,
                    locks,
                    pending,
                    spare_programs,
                    spare_locks,
                );
            }
            r => {
                requests.finished(ticket, r);
                spare_programs.push(program);
                spare_locks.push(locks);
            }
        }
    }

    /// `BeginTransaction` for a new (or resubmitted) request; runs it now if it is free.
    #[allow(clippy::too_many_arguments)]
    fn admit<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        mut program: R::Program,
        ticket: Ticket,
        mut locks: Vec<Req<F>>,
        pending: &mut VecDeque<Pending<R::Program, Req<F>>>,
        spare_programs: &mut Vec<R::Program>,
        spare_locks: &mut Vec<Vec<Req<F>>>,
    ) {
        let alone = match self.plan(w, &mut program, &mut locks) {
            Ok(a) => a,
            Err(a) => {
                let r: Result<(), Abort> = Err(a);
                self.settle(
                    w,
                    requests,
                    program,
                    ticket,
                    locks,
                    r,
                    pending,
                    spare_programs,
                    spare_locks,
                );
                return;
            }
        };
        let (seq, blocked) = self
            .partition()
            .begin_transaction(&self.db, w.id, &locks, alone);
        if blocked {
            pending.push_back(Pending {
                seq,
                program,
                ticket,
                locks,
                alone,
            });
            return;
        }
        let r = self.run_admitted(w, &mut program, seq, &locks, alone);
        self.settle(
            w,
            requests,
            program,
            ticket,
            locks,
            r,
            pending,
            spare_programs,
            spare_locks,
        );
    }

    /// Runs one program to commit or abort on the calling thread (waiting, if blocked, until it is the
    /// queue head or SCA picks it).
    pub(super) fn execute_one<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
    ) -> TxResult<()> {
        let mut locks = std::mem::take(&mut w.locks);
        let alone = match self.plan(w, program, &mut locks) {
            Ok(a) => a,
            Err(e) => {
                w.locks = locks;
                return Err(e);
            }
        };
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
        let r = self.run_admitted(w, program, seq, &locks, alone);
        w.locks = locks;
        r
    }
}
