//! `VLLMainLoop` (Fig. 1): each worker thread admits, runs and unblocks transactions.
//!
//! ```text
//!  VLLMainLoop()                                       Vll::main_loop
//!    if TxnQueue.front().Type == Blocked:               1. my oldest blocked txn is the front:
//!      T = front; T.Type = Free; Execute(T); Finish(T)     claim it (once), run it, finish it
//!    else if TxnQueue is not full:                      2. blocked < limit: draw a batch of
//!      T = GetNewTxnRequest(); BeginTransaction(T)         requests (1 to `--vll-batch`, see
//!      if T.Type == Free: Execute(T); Finish(T)            `Batching`), gather each one's accesses
//!                                                          (reconnaissance if needed), all their
//!                                                          BeginTransactions in one section; free →
//!                                                          run now, in order; blocked → keep its
//!                                                          program here, filed by sequence number
//!    [vll-sca] else: T = SCA(); if T: Execute; Finish   3. queue full: SCA for one of mine, if
//!                                                          the latch is free (`try_sca`)
//! ```
//!
//! A blocked transaction's program stays owned by the worker that admitted it (the harness hands each
//! thread its own request source), so "the front is blocked" becomes "the front is one of *my* blocked
//! transactions"; the owner is always in this loop, so the head still always runs, and SCA passes over
//! other workers' transactions while keeping their keys marked. A worker that runs out of requests keeps
//! looping until its own blocked transactions have run. A transaction that touches something its locks
//! do not cover (stale reconnaissance) is resubmitted at once as a new transaction.

use super::partition::{Busy, Partition, ScaPass};
use super::recon::gather;
use super::scheme::LockScheme;
use super::txn::{Held, VllTx};
use super::txn_queue::Seq;
use super::{Flavor, Vll};
use crate::protocols::aimd::Aimd;
use crate::txn::{run_pieces, AccessKind, Program, RequestSource, Ticket, Tx, TxResult};
use std::collections::VecDeque;

/// What the main loop keeps between iterations.
struct LoopState<P, R> {
    /// This worker's blocked transactions, oldest first.
    pending: VecDeque<Pending<P, R>>,
    spare_programs: Vec<P>,
    spare_locks: Vec<Vec<R>>,
    /// Free transactions that ran and committed (or aborted) and whose `FinishTransaction` is
    /// postponed to the next `BeginTransaction`, or to before this worker waits for anything.
    /// Their lock requests ride along: `FinishTransaction` releases them.
    deferred: Vec<(Seq, Vec<R>)>,
    /// Requests drawn and planned for the next admission batch (scratch, kept for its capacity).
    drawn: Vec<Drawn<P, R>>,
    /// The outcome of each begin of a batch (scratch).
    outcomes: Vec<(Seq, bool)>,
    /// How many requests the next admission batch draws (adaptive, see [`Batching`]).
    batch: usize,
    /// Blocked transactions in the queue as this worker's last `BeginTransaction` left it: "TxnQueue
    /// is not full" is read from here while it says so, and from the shared counter only once it
    /// says full (so a free-running worker reads no line the other workers write).
    seen_blocked: usize,
    /// The blocked-transaction threshold this worker admits under: `--vll-blocked-limit` while its
    /// reconnaissance holds, halved by each stale one (see [`Aimd`]). A dependent transaction that
    /// waits blocked behind others is validated only when it reaches the head, and on TPC-C one
    /// blocked behind a New-Order of its own district always finds `d_next_o_id` changed.
    limit: Aimd,
    stats: LoopStats,
}

/// What one worker's main loop did (printed at its end when `ORDO_VLL_STATS` is set, and added to
/// [`Vll::loop_stats`]: diagnostics for tuning the blocked threshold and the batch, and judging SCA).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// `BeginTransaction`s (resubmissions included).
    pub begun: u64,
    /// Of which blocked.
    pub blocked: u64,
    /// Critical sections that admitted transactions (`begun / admissions` is the mean batch).
    pub admissions: u64,
    /// Blocked transactions run by the head rule.
    pub by_head: u64,
    /// SCA passes, and how many found a transaction.
    pub sca_runs: u64,
    pub sca_found: u64,
    /// SCA passes not run because another thread held the critical section ([`Partition::try_sca`]).
    pub sca_busy: u64,
    /// SCA passes that found nothing of this worker's but passed over a blocked transaction of
    /// another worker's that could have run ([`super::partition::ScaPass::passed_over`]): in the
    /// paper any idle worker runs what SCA finds; here a program stays with its worker.
    pub sca_passed_over: u64,
    /// Loop turns that found nothing to do (queue full, nothing of mine runnable).
    pub idle_turns: u64,
    /// Dependent transactions resubmitted because their reconnaissance went stale.
    pub stale: u64,
    /// The blocked-transaction threshold the worker admitted under when its loop ended (summed
    /// stats: the lowest of the workers'; 0: none reported).
    pub limit: usize,
}

impl LoopStats {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &LoopStats) {
        self.begun += o.begun;
        self.blocked += o.blocked;
        self.admissions += o.admissions;
        self.by_head += o.by_head;
        self.sca_runs += o.sca_runs;
        self.sca_found += o.sca_found;
        self.sca_busy += o.sca_busy;
        self.sca_passed_over += o.sca_passed_over;
        self.idle_turns += o.idle_turns;
        self.stale += o.stale;
        self.limit = match (self.limit, o.limit) {
            (0, l) | (l, 0) => l,
            (a, b) => a.min(b),
        };
    }
}

/// A blocked transaction waiting in this worker.
struct Pending<P, R> {
    seq: Seq,
    program: P,
    ticket: Ticket,
    locks: Vec<R>,
    plan: Planned,
}

/// A request drawn from the source and planned, waiting for its batch's critical section.
struct Drawn<P, R> {
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
    /// Its lock set came from reconnaissance (a dependent transaction).
    recon: bool,
}

/// Admission batching: how many requests one `BeginTransaction` critical section admits.
///
/// Each critical section moves the latch's cache line (and the queue's) between cores, which on a
/// short transaction costs as much as the lock requests themselves. A worker whose last batch met
/// no blocked transaction (its own or anyone's) doubles its next batch, up to `max`; any block sets
/// it back to one, so under contention VLL admits one transaction at a time exactly as Fig. 1 does.
/// A batch holds its locks from its critical section until the worker's next one, so batching only
/// pays while conflicts are rare.
///
/// A batch also stops growing once its members hold [`BATCH_LOCK_BUDGET`] lock requests: the gain
/// is a fixed cost saved per transaction, the price a wait behind the members drawn earlier, which
/// grows with their size. Ten-record `vll-micro` transactions batch by four, sixteen-request YCSB
/// ones by two.
///
/// A dependent transaction ends its batch and sets the next one back to one as a block does: its
/// reconnaissance goes stale while it waits for the members drawn before it, and a stale one is
/// resubmitted (on TPC-C, batching dependent transactions like the others doubled `vllr`'s
/// resubmissions). Batching is for transactions that declare everything up front.
#[derive(Clone, Copy, Debug)]
pub(super) struct Batching {
    pub max: usize,
}

impl Batching {
    /// The size of the next batch after one of size `cur` (`contended`: something was blocked, or
    /// a member was a dependent transaction).
    pub(super) fn next(self, cur: usize, contended: bool) -> usize {
        if contended {
            1
        } else {
            (cur * 2).clamp(1, self.max.max(1))
        }
    }
}

/// Lock requests at which an admission batch stops drawing (see [`Batching`]).
pub(super) const BATCH_LOCK_BUDGET: usize = 32;

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

/// What one turn's attempt at SCA did (see [`sca_turn`]).
enum ScaTurn {
    /// Not due: the queue is not full, or nothing finished since a pass found nothing.
    NotDue,
    /// Another thread held the critical section ([`Partition::try_sca`]).
    Busy,
    /// A pass ran, and found this transaction of the caller's (or none).
    Ran(ScaPass),
}

/// SCA for `owner`'s blocked transactions when the queue is full (`limit` blocked) and the latch is
/// free. A pass that found nothing is not rerun until another transaction finishes: enqueues add only
/// younger transactions, so until then it would find nothing again. `seen` keeps `finishes()` as of
/// the last such pass (start it at `u64::MAX`).
fn sca_turn<S: LockScheme>(
    part: &Partition<S>,
    owner: u32,
    limit: usize,
    seen: &mut u64,
) -> ScaTurn {
    if part.blocked() < limit || part.finishes() == *seen {
        return ScaTurn::NotDue;
    }
    let epoch = part.finishes();
    match part.try_sca(owner) {
        Err(Busy) => ScaTurn::Busy,
        Ok(pass) => {
            if pass.found.is_none() {
                *seen = epoch;
            }
            ScaTurn::Ran(pass)
        }
    }
}

impl<F: Flavor> Vll<F> {
    fn partition(&self) -> &Partition<F::Scheme> {
        &self.part
    }

    /// Gathers and plans the locks of `program` into `locks` (prefetching its records if
    /// `prefetch`, see [`LockScheme::PREFETCHES`]).
    fn plan<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
        locks: &mut Vec<Req<F>>,
        prefetch: bool,
    ) -> TxResult<Planned> {
        let recon = gather(program, &self.db, &mut w.accesses, &mut w.recon, prefetch);
        // A dependent transaction's records were prefetched before its reconnaissance, and what that
        // found it has just read.
        let ok = F::Scheme::plan(&self.db, &w.accesses, locks, prefetch && !recon)?;
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
        Ok(Planned {
            alone: !ok,
            undo,
            recon,
        })
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
            deferred: Vec::new(),
            drawn: Vec::new(),
            outcomes: Vec::new(),
            batch: 1,
            seen_blocked: 0,
            limit: Aimd::new(1, self.blocked_limit),
            stats: LoopStats::default(),
        };
        let mut exhausted = false;
        let mut idle = 0;
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
            if !exhausted && (st.seen_blocked < st.limit.size() || part.blocked() < st.limit.size())
            {
                exhausted = self.draw(w, requests, &mut st);
                self.admit_drawn(w, requests, &mut st);
                idle = 0;
                continue;
            }
            self.flush(&mut st);
            if exhausted && st.pending.is_empty() {
                st.stats.limit = st.limit.size();
                if std::env::var_os("ORDO_VLL_STATS").is_some() {
                    eprintln!("{} worker {}: {:?}", F::INFO.name, w.id, st.stats);
                }
                self.loop_stats.lock().add(&st.stats);
                return;
            }
            // 3. The queue is full: selective contention analysis, for one of my transactions.
            if F::SCA && !st.pending.is_empty() {
                match sca_turn(part, w.id, st.limit.size(), &mut sca_seen) {
                    ScaTurn::NotDue => {}
                    // Someone else is in the critical section: try again on a later turn.
                    ScaTurn::Busy => st.stats.sca_busy += 1,
                    ScaTurn::Ran(pass) => {
                        st.stats.sca_runs += 1;
                        st.stats.sca_passed_over += pass.passed_over as u64;
                        if let Some(seq) = pass.found {
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
                    }
                }
            }
            st.stats.idle_turns += 1;
            pause(&mut idle);
        }
    }

    /// Performs the postponed `FinishTransaction`s (in one critical section).
    fn flush<P>(&self, st: &mut LoopState<P, Req<F>>) {
        if st.deferred.is_empty() {
            return;
        }
        self.partition().finish_and_begin(
            &self.db,
            st.deferred.iter().map(|(s, l)| (*s, l.as_slice())),
            0,
            std::iter::empty(),
            &mut st.outcomes,
        );
        st.spare_locks.extend(st.deferred.drain(..).map(|(_, l)| l));
    }

    /// Draws up to `st.batch` new requests and plans their locks into `st.drawn` (a request whose
    /// planning fails is settled at once), stopping early once they hold [`BATCH_LOCK_BUDGET`] lock
    /// requests. Returns whether the source is exhausted.
    fn draw<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        st: &mut LoopState<R::Program, Req<F>>,
    ) -> bool {
        let mut held = 0;
        for _ in 0..st.batch {
            if held >= BATCH_LOCK_BUDGET {
                break;
            }
            let mut program = st
                .spare_programs
                .pop()
                .unwrap_or_else(|| requests.program());
            // A scheme that prefetches while planning spares the harness's pass (which declares the
            // accesses once more).
            let next = if F::Scheme::PREFETCHES {
                requests.next_resolving(&mut program)
            } else {
                requests.next(&mut program).map(|t| (t, false))
            };
            let Some((ticket, prefetch)) = next else {
                st.spare_programs.push(program);
                return true;
            };
            let Some(plan) = self.plan_drawn(w, requests, program, ticket, st, prefetch) else {
                continue;
            };
            if plan.recon {
                // Its reconnaissance should not wait for more members (see `Batching`).
                break;
            }
            // `plan_drawn` filed it last.
            held += st.drawn.last().map_or(0, |d| d.locks.len());
        }
        false
    }

    /// `BeginTransaction` for every drawn request, in one critical section that also performs this
    /// worker's postponed `FinishTransaction`s; then runs the free ones in order (their own finishes
    /// postponed in turn) and keeps the blocked ones. Adapts the next batch's size.
    fn admit_drawn<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        st: &mut LoopState<R::Program, Req<F>>,
    ) {
        if st.drawn.is_empty() {
            return;
        }
        let mut drawn = std::mem::take(&mut st.drawn);
        let mut outcomes = std::mem::take(&mut st.outcomes);
        outcomes.clear();
        let queue_blocked = self.partition().finish_and_begin(
            &self.db,
            st.deferred.iter().map(|(s, l)| (*s, l.as_slice())),
            w.id,
            drawn.iter().map(|d| (d.locks.as_slice(), d.plan.alone)),
            &mut outcomes,
        );
        st.spare_locks.extend(st.deferred.drain(..).map(|(_, l)| l));
        st.seen_blocked = queue_blocked;
        st.stats.admissions += 1;
        let dependent = drawn.iter().any(|d| d.plan.recon);
        let mut any_blocked = false;
        for (d, &(seq, blocked)) in drawn.drain(..).zip(outcomes.iter()) {
            st.stats.begun += 1;
            st.stats.blocked += blocked as u64;
            any_blocked |= blocked;
            let Drawn {
                mut program,
                ticket,
                locks,
                plan,
            } = d;
            if blocked {
                // In sequence order, not arrival order: a member of this batch that ran and was
                // resubmitted (stale reconnaissance) was admitted, and maybe blocked, in a later
                // section while the batch's own blocked members wait to be filed here. The head rule
                // looks only at the oldest pending transaction, so filing a younger one first would
                // leave the queue's front unrun by anybody.
                let at = st.pending.partition_point(|p| p.seq < seq);
                st.pending.insert(
                    at,
                    Pending {
                        seq,
                        program,
                        ticket,
                        locks,
                        plan,
                    },
                );
                continue;
            }
            let r = self.run_admitted(w, &mut program, &locks, plan);
            st.deferred.push((seq, locks));
            self.settle(w, requests, program, ticket, r, st);
        }
        st.batch = self
            .batching
            .next(st.batch, any_blocked || queue_blocked > 0 || dependent);
        st.drawn = drawn;
        st.outcomes = outcomes;
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
                if st.limit.aborted(a.reason) {
                    st.stats.stale += 1;
                }
                self.admit(w, requests, program, ticket, st);
            }
            r => {
                requests.finished(ticket, r);
                st.limit.completed();
                st.spare_programs.push(program);
            }
        }
    }

    /// Plans `program` (prefetching its records if `prefetch`) into a lock list from the spare ones
    /// and files it in `st.drawn` for the next admission section; a request whose planning fails is
    /// settled at once. Returns its plan if it was filed.
    fn plan_drawn<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        mut program: R::Program,
        ticket: Ticket,
        st: &mut LoopState<R::Program, Req<F>>,
        prefetch: bool,
    ) -> Option<Planned> {
        let mut locks = st.spare_locks.pop().unwrap_or_default();
        match self.plan(w, &mut program, &mut locks, prefetch) {
            Ok(plan) => {
                st.drawn.push(Drawn {
                    program,
                    ticket,
                    locks,
                    plan,
                });
                Some(plan)
            }
            Err(a) => {
                st.spare_locks.push(locks);
                self.settle(w, requests, program, ticket, Err(a), st);
                None
            }
        }
    }

    /// `BeginTransaction` for a resubmitted request, in a critical section that also performs this
    /// worker's postponed finishes, and admits with it whatever `st.drawn` holds (the members drawn
    /// so far when the resubmission comes from planning a batch; nothing when it comes from running
    /// one, whose members were taken out of `st.drawn` before); runs it now if it is free.
    fn admit<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        program: R::Program,
        ticket: Ticket,
        st: &mut LoopState<R::Program, Req<F>>,
    ) {
        if self
            .plan_drawn(w, requests, program, ticket, st, false)
            .is_some()
        {
            self.admit_drawn(w, requests, st);
        }
    }

    /// Runs one program to commit or abort on the calling thread (waiting, if blocked, until it is the
    /// queue head or SCA picks it).
    ///
    /// This is the embedding path, where the program is the caller's code: it always keeps an undo
    /// log, and a program that panics is rolled back and finished on the way out (its locks released,
    /// its queue entry removed), so that no other thread waits for it forever.
    pub(super) fn execute_one<P: Program>(
        &self,
        w: &mut Worker<F>,
        program: &mut P,
    ) -> TxResult<()> {
        let mut locks = std::mem::take(&mut w.locks);
        let plan = match self.plan(w, program, &mut locks, false) {
            Ok(p) => Planned { undo: true, ..p },
            Err(e) => {
                w.locks = locks;
                return Err(e);
            }
        };
        let alone = plan.alone;
        let part = self.partition();
        let (seq, blocked) = part.begin_transaction(&self.db, w.id, &locks, alone);
        let finish = FinishOnDrop {
            part,
            db: &self.db,
            seq,
            locks: &locks,
        };
        if blocked {
            let _waiting = crate::txn::wait::blocked();
            let mut idle = 0;
            let mut sca_seen = u64::MAX;
            loop {
                if part.front() == seq && part.claim(seq) {
                    break;
                }
                if F::SCA {
                    if let ScaTurn::Ran(ScaPass {
                        found: Some(found), ..
                    }) = sca_turn(part, w.id, self.blocked_limit, &mut sca_seen)
                    {
                        // This worker has no other blocked transaction (one per worker, and the
                        // worker is this thread's alone), so SCA can only have picked this one.
                        debug_assert_eq!(found, seq);
                        break;
                    }
                }
                pause(&mut idle);
            }
        }
        let r = self.run_admitted(w, program, &locks, plan);
        drop(finish);
        w.locks = locks;
        r
    }
}

/// `FinishTransaction` for a transaction [`Vll::execute_one`] began, when this is dropped: after it
/// ran, or while a panic in its program unwinds.
struct FinishOnDrop<'a, S: LockScheme> {
    part: &'a Partition<S>,
    db: &'a crate::storage::Database<S::Meta>,
    seq: Seq,
    locks: &'a [S::Request],
}

impl<S: LockScheme> Drop for FinishOnDrop<'_, S> {
    fn drop(&mut self) {
        self.part.finish_transaction(self.db, self.seq, self.locks);
    }
}
