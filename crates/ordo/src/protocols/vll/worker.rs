//! `VLLMainLoop` (Fig. 1): each worker thread admits, runs and unblocks transactions.
//!
//! ```text
//!  VLLMainLoop()                                       Vll::main_loop
//!    if TxnQueue.front().Type == Blocked:               1. the front is a blocked transaction
//!      T = front; T.Type = Free; Execute(T); Finish(T)     (parked; another worker's only when
//!                                                          this one is idle): claim it and take
//!                                                          it (once, `try_take_front`), run it,
//!                                                          finish it
//!    else if TxnQueue is not full:                      2. blocked < limit: draw a batch of
//!      T = GetNewTxnRequest(); BeginTransaction(T)         requests (1 to `--vll-batch`, see
//!      if T.Type == Free: Execute(T); Finish(T)            `Batching`), gather each one's accesses
//!                                                          (reconnaissance if needed), all their
//!                                                          BeginTransactions in one section;
//!                                                          blocked → park it with its queue entry;
//!                                                          free → run now, in order
//!    [vll-sca] else: T = SCA(); if T: Execute; Finish   3. queue full: SCA over every parked
//!                                                          transaction, if the latch is free
//!                                                          and a pass is due (`sca_due`), with
//!                                                          the worker's own bit arrays
//!                                                          (`try_sca_parked`); run what it finds
//! ```
//!
//! Each thread draws from its own request source, but a transaction that blocks does not stay with
//! the worker that drew it: that worker **parks** it — program, ticket, lock list — with its queue
//! entry ([`Partition::park`], type-erased), before it runs the batch's free members. From then on
//! any worker may run it: whoever's SCA pass finds it (step 3), as Fig. 4 lets the idle worker run
//! SCA's find, and at the front (step 1) the worker that drew it or any idle one — a worker with
//! work of its own leaves another's front to it (see [`Vll::run_front`] for why). (Until
//! 2026-11-26 only its owner could, and SCA passed over the others' transactions: 43–90% of the
//! passes at CI 0.1 found nothing of the caller's while passing over a runnable one,
//! `docs/results/vll.md`, twelfth pass.) The worker that runs it reports its outcome to its own
//! source, and resubmits it as its own if its reconnaissance was stale. A free-running worker looks
//! at the front only while its last section saw blocked transactions, so without contention it
//! reads no line the others write; a worker that runs out of requests keeps helping until no parked
//! transaction is left. A transaction that touches something its locks do not cover (stale
//! reconnaissance) is resubmitted at once as a new transaction.

use super::partition::{Busy, CopyPool, FrontTake, Parked, Partition, ScaPass, NO_FRONT};
use super::scheme::LockScheme;
use super::txn::{Held, VllTx};
use super::{Flavor, Vll};
use crate::protocols::kit::aimd::Aimd;
use crate::protocols::kit::txn_queue::Seq;
use crate::txn::{run_pieces, AccessKind, Program, RequestSource, Ticket, Tx, TxResult};

/// What the main loop keeps between iterations.
struct LoopState<P, R> {
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
    /// With SCA, the queue entries' copies of the lock lists: `copies` for the next batch, made
    /// from `copy_pool` before its critical section (scratch), which takes them back as their
    /// transactions finish.
    copies: Vec<Vec<R>>,
    copy_pool: CopyPool<R>,
    /// How many requests the next admission batch draws (adaptive, see [`Batching`]).
    batch: usize,
    /// Blocked transactions in the queue as this worker's last `BeginTransaction` left it: "TxnQueue
    /// is not full" is read from here while it says so, and from the shared counter only once it
    /// says full (so a free-running worker reads no line the other workers write).
    seen_blocked: usize,
    /// The front whose take found nothing to take ([`NO_FRONT`]: none): not tried again until the
    /// front moves, or this worker parks a transaction (which may be that front).
    front_tried: Seq,
    /// The front last found parked by another worker ([`NO_FRONT`]: none): left to that worker
    /// while this one has work of its own (see [`Vll::run_front`]).
    front_foreign: Seq,
    /// The blocked-transaction threshold this worker admits under: `--vll-blocked-limit` while its
    /// reconnaissance holds, halved by each stale one (see [`Aimd`]). A dependent transaction that
    /// waits blocked behind others is validated only when it reaches the head, and on TPC-C one
    /// blocked behind a New-Order of its own district always finds `d_next_o_id` changed.
    limit: Aimd,
    /// `vll-sca`: this worker's SCA bit arrays ([`Partition::worker_sca`]).
    sca: Option<crate::protocols::kit::sca::Sca>,
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
    /// Blocked transactions run by the head rule, and how many of them another worker had drawn.
    pub by_head: u64,
    pub by_head_foreign: u64,
    /// SCA passes, and how many found a transaction.
    pub sca_runs: u64,
    pub sca_found: u64,
    /// SCA passes not run because another thread held the critical section ([`Partition::try_sca`]).
    pub sca_busy: u64,
    /// SCA passes that found nothing it could take but passed over a runnable blocked transaction
    /// ([`super::partition::ScaPass::passed_over`]): one not parked yet (its worker is between
    /// its section and parking it). Before blocked transactions were parked for any worker, this
    /// counted the other workers' transactions SCA had to pass over (`docs/results/vll.md`).
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
        self.by_head_foreign += o.by_head_foreign;
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
    /// The worker that drew it.
    owner: u32,
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
/// A batch also stops growing once its members hold [`Batching::lock_budget`] lock requests,
/// [`LOCKS_PER_MEMBER`] for each member `max` allows (32 at the default of four): the gain is a
/// fixed cost saved per transaction, the price a wait behind the members drawn earlier, which grows
/// with their size. At the default, ten-record `vll-micro` transactions batch by four,
/// sixteen-request YCSB ones by two.
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
    /// Lock requests at which an admission batch stops drawing (see [`Batching`]).
    pub(super) fn lock_budget(self) -> usize {
        LOCKS_PER_MEMBER * self.max.max(1)
    }

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

/// Lock requests an admission batch may hold for each member its `max` allows (see [`Batching`]).
pub(super) const LOCKS_PER_MEMBER: usize = 8;

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
enum ScaTurn<X> {
    /// Not due: the queue is not full, or nothing finished since a pass found nothing.
    NotDue,
    /// Another thread held the critical section ([`Partition::try_sca`]).
    Busy,
    /// A pass ran: what it found, and what the caller took with it.
    Ran(ScaPass, X),
}

/// An SCA pass (`pass`: [`Partition::try_sca_parked`] in the worker loop, [`Partition::try_sca`]
/// for a caller's own transaction) when the queue is full (`limit` blocked), a pass is `due` (see
/// [`Partition::sca_due`]) and the latch is free.
fn sca_turn<S: LockScheme, X>(
    part: &Partition<S>,
    limit: usize,
    due: impl FnOnce() -> bool,
    pass: impl FnOnce() -> Result<(ScaPass, X), Busy>,
) -> ScaTurn<X> {
    if part.blocked() < limit || !due() {
        return ScaTurn::NotDue;
    }
    match pass() {
        Err(Busy) => ScaTurn::Busy,
        Ok((pass, taken)) => ScaTurn::Ran(pass, taken),
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
        let recon = w.planner.plan(program, &self.db, &mut w.accesses, prefetch);
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
            spare_programs: Vec::new(),
            spare_locks: Vec::new(),
            deferred: Vec::new(),
            drawn: Vec::new(),
            outcomes: Vec::new(),
            copies: Vec::new(),
            copy_pool: CopyPool::default(),
            batch: 1,
            seen_blocked: 0,
            front_tried: NO_FRONT,
            front_foreign: NO_FRONT,
            limit: Aimd::new(1, self.blocked_limit),
            sca: if F::SCA { part.worker_sca() } else { None },
            stats: LoopStats::default(),
        };
        let mut exhausted = false;
        let mut idle = 0;
        loop {
            // 1. The head rule, for any worker: the front is a blocked transaction (parked by
            //    whoever admitted it) → take it, run it. Looked at only while blocked transactions
            //    exist as this worker's last section saw them, or when it has nothing else to do: a
            //    free-running worker reads no line the others write.
            if (st.seen_blocked > 0 || idle > 0 || exhausted)
                && self.run_front(w, requests, &mut st, idle > 0 || exhausted)
            {
                idle = 0;
                continue;
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
            // Done when no request is left and nobody's blocked transaction waits parked: every
            // worker helps run those before it leaves (its own were parked as they blocked).
            if exhausted && part.parked() == 0 {
                st.stats.limit = st.limit.size();
                if std::env::var_os("ORDO_VLL_STATS").is_some() {
                    eprintln!("{} worker {}: {:?}", F::INFO.name, w.id, st.stats);
                }
                self.loop_stats.lock().add(&st.stats);
                return;
            }
            // 3. The queue is full: selective contention analysis, for any parked transaction.
            if let Some(sca) = st.sca.as_mut() {
                let turn = sca_turn(
                    part,
                    st.limit.size(),
                    || part.sca_due(),
                    || part.try_sca_parked::<Pending<R::Program, Req<F>>>(sca),
                );
                match turn {
                    ScaTurn::NotDue => {}
                    // Someone else is in the critical section: try again on a later turn.
                    ScaTurn::Busy => st.stats.sca_busy += 1,
                    ScaTurn::Ran(pass, taken) => {
                        st.stats.sca_runs += 1;
                        st.stats.sca_passed_over += pass.passed_over as u64;
                        if let Some(p) = taken {
                            st.stats.sca_found += 1;
                            self.resume(w, requests, *p, &mut st);
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

    /// Step 1 of the loop: if the front is a parked blocked transaction, takes it and runs it.
    /// Returns whether it ran one. Out of line: a free-running worker does not come here.
    ///
    /// Any worker may run the front (Fig. 1), but a worker with work of its own (`idle` false)
    /// leaves another worker's transaction to that worker, which is in this loop too and takes it
    /// on a later turn; an idle or exhausted worker takes any front. Taking other workers' fronts
    /// at once measured 0.5–3.4 points of `nocc` below the old loop at 2 workers on `vll-micro` (six
    /// sets), leaving them to their workers nothing measurable (`docs/results/vll.md`, thirteenth
    /// pass).
    #[cold]
    #[inline(never)]
    fn run_front<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        st: &mut LoopState<R::Program, Req<F>>,
        idle: bool,
    ) -> bool {
        // This worker's postponed finishes first: one of them may be the front, and while
        // transactions wait blocked, locks held by finished ones are released at once (without
        // this, at 4 workers and CI 0.1, 56% of `vll`'s transactions blocked and it ran 3× slower).
        self.flush(st);
        let part = self.partition();
        let front = part.front();
        if front == NO_FRONT || front == st.front_tried || (!idle && front == st.front_foreign) {
            return false;
        }
        let only = (!idle).then_some(w.id);
        match part.try_take_front::<Pending<R::Program, Req<F>>>(only) {
            Ok(FrontTake::Taken(p)) => {
                st.stats.by_head += 1;
                st.stats.by_head_foreign += (p.owner != w.id) as u64;
                self.resume(w, requests, *p, st);
                true
            }
            // Another worker's: not again until this worker is idle or the front moves.
            Ok(FrontTake::Foreign) => {
                st.front_foreign = front;
                false
            }
            // Not blocked, already taken, or not parked yet (its owner parks it and looks again):
            // not until the front moves.
            Ok(FrontTake::Nothing) => {
                st.front_tried = front;
                false
            }
            Err(Busy) => false,
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
            &mut st.copy_pool,
        );
        st.spare_locks.extend(st.deferred.drain(..).map(|(_, l)| l));
        st.seen_blocked = self.partition().blocked();
    }

    /// Draws up to `st.batch` new requests and plans their locks into `st.drawn` (a request whose
    /// planning fails is settled at once), stopping early once they hold [`Batching::lock_budget`] lock
    /// requests. Returns whether the source is exhausted.
    fn draw<R: RequestSource>(
        &self,
        w: &mut Worker<F>,
        requests: &mut R,
        st: &mut LoopState<R::Program, Req<F>>,
    ) -> bool {
        let mut held = 0;
        let budget = self.batching.lock_budget();
        for _ in 0..st.batch {
            if held >= budget {
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
        // SCA's copies of the lock lists are made here, outside the section, which only moves them.
        st.copies.clear();
        for d in &drawn {
            let c = st.copy_pool.copy(F::SCA, &d.locks);
            st.copies.push(c);
        }
        let queue_blocked = self.partition().finish_and_begin(
            &self.db,
            st.deferred.iter().map(|(s, l)| (*s, l.as_slice())),
            w.id,
            drawn
                .iter()
                .zip(st.copies.drain(..))
                .map(|(d, c)| (d.locks.as_slice(), d.plan.alone, c)),
            &mut outcomes,
            &mut st.copy_pool,
        );
        st.spare_locks.extend(st.deferred.drain(..).map(|(_, l)| l));
        st.seen_blocked = queue_blocked;
        st.stats.admissions += 1;
        let dependent = drawn.iter().any(|d| d.plan.recon);
        let mut any_blocked = false;
        if outcomes.iter().any(|&(_, blocked)| blocked) {
            any_blocked = true;
            self.park_blocked(w.id, &mut drawn, &mut outcomes, st);
        }
        for (d, &(seq, _)) in drawn.drain(..).zip(outcomes.iter()) {
            st.stats.begun += 1;
            let Drawn {
                mut program,
                ticket,
                locks,
                plan,
            } = d;
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

    /// Parks the blocked members of an admitted batch (`outcomes[i]` is `drawn[i]`'s) with their
    /// queue entries, in one section, so that any worker can run them (the front's, or SCA's find)
    /// while this one runs the free ones; leaves only the free ones, and their outcomes, in
    /// `drawn` and `outcomes`. Out of line: the uncontended admission path never comes here.
    #[cold]
    #[inline(never)]
    fn park_blocked<P: Program + Send + 'static>(
        &self,
        owner: u32,
        drawn: &mut Vec<Drawn<P, Req<F>>>,
        outcomes: &mut Vec<(Seq, bool)>,
        st: &mut LoopState<P, Req<F>>,
    ) {
        let mut parked: Vec<(Seq, Parked)> = Vec::new();
        let mut kept = Vec::with_capacity(drawn.len());
        for (d, &(seq, blocked)) in drawn.drain(..).zip(outcomes.iter()) {
            if blocked {
                let Drawn {
                    program,
                    ticket,
                    locks,
                    plan,
                } = d;
                let p = Pending {
                    seq,
                    owner,
                    program,
                    ticket,
                    locks,
                    plan,
                };
                parked.push((seq, Box::new(p)));
            } else {
                kept.push(d);
            }
        }
        st.stats.begun += parked.len() as u64;
        st.stats.blocked += parked.len() as u64;
        self.partition().park(parked);
        st.front_tried = NO_FRONT;
        outcomes.retain(|&(_, blocked)| !blocked);
        drawn.extend(kept);
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
            // `finishes()` as of this caller's last pass that found nothing: its passes look at
            // its own transaction only, so the worker loop's shared dry epoch does not apply.
            let mut dry = u64::MAX;
            loop {
                if part.front() == seq && part.claim(seq) {
                    break;
                }
                if F::SCA {
                    let epoch = part.finishes();
                    match sca_turn(
                        part,
                        self.blocked_limit,
                        || epoch != dry,
                        || part.try_sca(w.id).map(|p| (p, ())),
                    ) {
                        ScaTurn::Ran(
                            ScaPass {
                                found: Some(found), ..
                            },
                            (),
                        ) => {
                            // This worker has no other blocked transaction (one per worker, and
                            // the worker is this thread's alone), so SCA can only have picked
                            // this one.
                            debug_assert_eq!(found, seq);
                            break;
                        }
                        ScaTurn::Ran(ScaPass { found: None, .. }, ()) => dry = epoch,
                        ScaTurn::NotDue | ScaTurn::Busy => {}
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
