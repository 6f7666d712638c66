//! `deterministic` — Calvin-style deterministic locking: `calvin` (a hash-table lock manager) and
//! `calvin-vll` (the same pipeline with arrayed VLL + SCA in the lock-manager thread, the VLL paper's
//! "deterministic VLL").
//!
//! # The idea (Thomson et al., SIGMOD 2012; VLL paper §2.4, §3.2)
//!
//! Agree on the order of transactions *before* running them, then run them so that the result equals
//! running them serially in that order. Every transaction declares its whole read/write set up front;
//! a **sequencer** numbers requests into one global order; a single **lock-manager** thread requests
//! each transaction's locks *all at once, in that order*; a transaction whose locks are all granted is
//! handed to a **worker** that executes it and then releases. Since locks are requested in the global
//! order, nobody waits for a younger transaction: no deadlock, no concurrency aborts, and any two
//! conflicting transactions execute in sequence order, so the final state is a function of the input
//! order alone (the determinism test in [`calvin`]'s tests checks that across thread counts).
//!
//! ```text
//!   Calvin (paper)                           here
//!   clients send txn requests                worker threads draw programs from the RequestSource
//!   sequencer: 10 ms epochs, replicated      sequencer thread: batch = what arrived meanwhile  [sequencer]
//!   scheduler: lock manager, one thread      lock-manager thread running a Scheduler           [engine]
//!     · Calvin: hash table of lock queues      · HashLockManager                                [lock_manager]
//!     · VLL paper: arrayed VLL + SCA           · ArrayedVll                                     [calvin_vll]
//!   worker threads execute ready txns        the owner thread executes it when told it is ready [exec]
//!   OLLP / reconnaissance for dependent txns Planner: recon pass, abort + resubmit on mismatch  [plan]
//! ```
//!
//! Deviation: a program stays with the worker thread that drew it (the pipeline only sees its lock
//! set), so a worker is both Calvin's client and its executor; each keeps up to [`WINDOW`]
//! transactions in flight so that it always has something ready to execute, fewer while its
//! reconnaissance keeps going stale ([`new_window`]). No replication, no multi-node partitioning: one
//! sequencer and one lock manager cover the whole database.
//!
//! Interactive transactions ([`Protocol::begin`]) have no declared lock set: they are sequenced as a
//! **barrier** that waits for every earlier transaction and holds the whole database (see [`engine`]).
//!
//! The sequencer and lock-manager threads are one [`Pipeline`] ([`Engine`]); the protocol is generic
//! over it, and `2pl-deadlock-free` ([`crate::protocols::deterministic::deadlock_free`]) is the same protocol with
//! the workers performing the lock manager's admission themselves, inside a critical section.

pub mod calvin;
pub mod calvin_vll;
pub mod deadlock_free;
pub mod engine;
pub mod sequencer;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_deadlock_free;

pub use calvin::Calvin;
pub use calvin_vll::CalvinVll;
pub use deadlock_free::DeadlockFree2pl;

use crate::protocols::kit::aimd::Aimd;
use crate::protocols::kit::exec::{Cover, ExecState, ExecTx, HoldingTx};
use crate::protocols::kit::plan::{locks_of, LockRequest, Planner};
use crate::protocols::kit::recv::recv_polling;
use crate::protocols::kit::scheduler::Scheduler;
use crate::protocols::{Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{
    run_pieces, wait, Access, IdLedger, Program, Recorder, RequestSource, Ticket, Tx, TxResult,
};
use engine::{Engine, Ready, Request};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

/// The most transactions a worker keeps in flight (submitted, not yet executed). Every hand-off
/// through the pipeline wakes a thread, so it is latency-bound: 16 left the cores idle most of the
/// time on the micro-benchmark; 64 keeps them busy.
pub const WINDOW: usize = 64;

/// The fewest (see [`new_window`]).
pub const MIN_WINDOW: usize = 2;

/// A worker's in-flight window: [`WINDOW`] transactions while reconnaissance holds, shrinking
/// while it goes stale ([`Aimd`] between [`MIN_WINDOW`] and [`WINDOW`]).
///
/// A dependent transaction plans from a reconnaissance read made when it is submitted, and is
/// checked when it runs, after everything sequenced ahead of it: the deeper the pipeline, the more
/// likely something ahead changed what it read. On TPC-C, where every New-Order's inserted keys come
/// from its district's `d_next_o_id`, a window of 64 per worker made `calvin` fail validation about
/// once per commit at 4 warehouses and five times at 1, against 0.04 and 0.17 with a window of 4
/// (which, on the micro-benchmark with no dependent transactions, cost two thirds of the
/// throughput). So a stale reconnaissance halves the worker's window and every window's worth of
/// completed transactions grows it by one: workloads without dependent transactions never leave the
/// maximum, the others settle where staleness is rare.
pub fn new_window() -> Aimd {
    Aimd::new(MIN_WINDOW, WINDOW)
}

/// A lock-manager flavour of the deterministic pipeline, with its protocol's name.
pub trait Flavor: Scheduler {
    const INFO: ProtocolInfo;
}

/// What orders the workers' lock requests and grants them through a [`Scheduler`] `S`: Calvin's
/// sequencer and lock-manager threads ([`Engine`]), or the workers themselves, each inside a
/// critical section (`2pl-deadlock-free`, [`crate::protocols::deterministic::deadlock_free::Latched`]).
pub trait Pipeline<S: Scheduler>: Send + Sync + Sized + 'static {
    /// The protocol this pipeline makes of `S`.
    const INFO: ProtocolInfo;
    /// The most transactions a worker keeps in flight; 1: one at a time, the worker waits for its
    /// transaction's grant ([`Protocol::run_worker`]'s default loop).
    const WINDOW: usize;
    /// Starts it; the scheduler reads its knobs from `config`.
    fn start(name: &str, config: &ProtocolConfig) -> Self;
    /// Orders a request; its [`Request::notify`] hears when every lock is granted.
    fn submit(&self, request: Request);
    /// Transaction `seq` finished (committed or rolled back): release its locks.
    fn release(&self, seq: u64);
}

impl<S: Flavor> Pipeline<S> for Engine<S> {
    const INFO: ProtocolInfo = S::INFO;
    const WINDOW: usize = WINDOW;
    fn start(name: &str, config: &ProtocolConfig) -> Self {
        Engine::start(name, config)
    }
    fn submit(&self, request: Request) {
        Engine::submit(self, request)
    }
    fn release(&self, seq: u64) {
        Engine::release(self, seq)
    }
}

/// The deterministic protocol with lock manager `S`, ordered by pipeline `E` (Calvin's threads by
/// default).
pub struct Deterministic<S: Flavor, E: Pipeline<S> = Engine<S>> {
    db: Database<()>,
    engine: E,
    ids: Arc<IdLedger>,
    _s: std::marker::PhantomData<fn() -> S>,
}

/// Per-thread state: execution buffers, the ready queue the lock manager notifies, planning buffers.
pub struct DetWorker {
    exec: ExecState,
    ready_tx: Sender<Ready>,
    ready_rx: Receiver<Ready>,
    planner: Planner,
    accesses: Vec<Access>,
    locks: Vec<LockRequest>,
}

impl<S: Flavor, E: Pipeline<S>> Deterministic<S, E> {
    /// The pipeline (tests drive it directly).
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// Plans `program` and submits its lock request tagged `tag`; `accesses`/`locks` receive the plan.
    /// Returns whether it was ordered as a barrier holding the whole database (a range too wide to
    /// lock key by key).
    fn submit<P: Program>(
        &self,
        w: &mut DetWorker,
        program: &mut P,
        tag: u64,
        accesses: &mut Vec<Access>,
        locks: &mut Vec<LockRequest>,
    ) -> TxResult<bool> {
        w.planner.plan(program, &self.db, accesses, false);
        let whole = locks_of(&self.db, accesses, S::NEEDS_ROWS, locks)?;
        self.engine.submit(Request {
            locks: if whole { Vec::new() } else { locks.clone() },
            barrier: whole,
            notify: w.ready_tx.clone(),
            tag,
        });
        Ok(whole)
    }

    /// Waits for the next transaction of this worker whose locks are all granted.
    fn next_ready(w: &DetWorker) -> Ready {
        if let Ok(r) = w.ready_rx.try_recv() {
            return r;
        }
        let _waiting = wait::blocked();
        recv_polling(&w.ready_rx).expect("the worker holds a sender of its own ready queue")
    }

    /// Runs `program` (its locks granted) under `locks`, then releases `seq`.
    fn run_granted<P: Program>(
        &self,
        w: &mut DetWorker,
        program: &mut P,
        seq: u64,
        locks: &[LockRequest],
        accesses: &[Access],
        whole: bool,
    ) -> TxResult<()> {
        let cover = if whole {
            Cover::All
        } else {
            Cover::Keys { locks, accesses }
        };
        let _release = Release::<S, E> {
            engine: &self.engine,
            seq,
            _s: std::marker::PhantomData,
        };
        // The transaction (rolled back by its drop on an abort or a panic) ends before the release.
        let mut tx = ExecTx::new(&self.db, &mut w.exec, cover);
        match run_pieces(program, &mut tx) {
            Ok(()) => tx.commit(),
            Err(a) => Err(a),
        }
    }
}

impl<S: Flavor, E: Pipeline<S>> Protocol for Deterministic<S, E> {
    type Meta = ();
    type Worker = DetWorker;
    type Tx<'w> = HoldingTx<'w, (), Release<'w, S, E>>;

    const INFO: ProtocolInfo = E::INFO;

    fn open(db: Database<()>, config: &ProtocolConfig) -> Self {
        Deterministic {
            db,
            engine: E::start(E::INFO.name, config),
            ids: IdLedger::new(),
            _s: std::marker::PhantomData,
        }
    }
    fn db(&self) -> &Database<()> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> DetWorker {
        let (ready_tx, ready_rx) = mpsc::channel();
        DetWorker {
            exec: ExecState::new(self.ids.lease(id), recording),
            ready_tx,
            ready_rx,
            planner: Planner::default(),
            accesses: Vec::new(),
            locks: Vec::new(),
        }
    }
    fn recorder(w: &mut DetWorker) -> &mut Recorder {
        w.exec.recorder()
    }

    /// An interactive transaction: a barrier holding the whole database.
    fn begin<'w>(&'w self, w: &'w mut DetWorker) -> Self::Tx<'w> {
        self.engine.submit(Request {
            locks: Vec::new(),
            barrier: true,
            notify: w.ready_tx.clone(),
            tag: u64::MAX,
        });
        let ready = Self::next_ready(w);
        debug_assert_eq!(ready.tag, u64::MAX);
        let barrier = Release {
            engine: &self.engine,
            seq: ready.seq,
            _s: std::marker::PhantomData,
        };
        HoldingTx::new(ExecTx::new(&self.db, &mut w.exec, Cover::All), barrier)
    }

    /// One program through the pipeline: plan, order, wait for the grant, execute, release; a
    /// reconnaissance mismatch comes back as a retryable abort.
    fn execute<P: Program>(&self, w: &mut DetWorker, program: &mut P) -> TxResult<()> {
        let (mut accesses, mut locks) = (
            std::mem::take(&mut w.accesses),
            std::mem::take(&mut w.locks),
        );
        let out = self
            .submit(w, program, 0, &mut accesses, &mut locks)
            .and_then(|whole| {
                let ready = Self::next_ready(w);
                self.run_granted(w, program, ready.seq, &locks, &accesses, whole)
            });
        (w.accesses, w.locks) = (accesses, locks);
        out
    }

    /// Keeps up to a [`new_window`]'s size of transactions in flight: submits new ones while there is room,
    /// executes whichever is granted, resubmits the ones whose reconnaissance was wrong. A pipeline
    /// with a window of one ([`Pipeline::WINDOW`]) runs one transaction at a time instead, retrying
    /// a stale reconnaissance after a backoff, as any one-at-a-time protocol does.
    fn run_worker<R: RequestSource>(&self, w: &mut DetWorker, requests: &mut R) {
        if E::WINDOW == 1 {
            return crate::protocols::run_one_at_a_time(self, w, requests);
        }
        struct Slot<P> {
            program: P,
            ticket: Option<Ticket>,
            accesses: Vec<Access>,
            locks: Vec<LockRequest>,
            whole: bool,
        }
        let mut slots: Vec<Slot<R::Program>> = (0..WINDOW)
            .map(|_| Slot {
                program: requests.program(),
                ticket: None,
                accesses: Vec::new(),
                locks: Vec::new(),
                whole: false,
            })
            .collect();
        let mut free: Vec<usize> = (0..WINDOW).rev().collect();
        let mut in_flight = 0;
        let mut window = new_window();
        let mut exhausted = false;
        loop {
            while !exhausted && in_flight < window.size() {
                let Some(&i) = free.last() else { break };
                let s = &mut slots[i];
                let Some(ticket) = requests.next(&mut s.program) else {
                    exhausted = true;
                    break;
                };
                match self.submit(w, &mut s.program, i as u64, &mut s.accesses, &mut s.locks) {
                    Ok(whole) => {
                        s.whole = whole;
                        free.pop();
                        s.ticket = Some(ticket);
                        in_flight += 1;
                    }
                    Err(a) => requests.finished(ticket, Err(a)),
                }
            }
            if in_flight == 0 {
                return;
            }
            let ready = Self::next_ready(w);
            let i = ready.tag as usize;
            let s = &mut slots[i];
            let out =
                self.run_granted(w, &mut s.program, ready.seq, &s.locks, &s.accesses, s.whole);
            let out = match out {
                Err(a) if a.is_retryable() => {
                    // Reconnaissance guessed wrong: plan again and take a new place in the order.
                    requests.aborted(a.reason);
                    window.aborted(a.reason);
                    match self.submit(w, &mut s.program, i as u64, &mut s.accesses, &mut s.locks) {
                        Ok(whole) => {
                            s.whole = whole;
                            continue;
                        }
                        Err(a) => Err(a),
                    }
                }
                out => out,
            };
            let ticket = s.ticket.take().expect("an in-flight slot has a ticket");
            requests.finished(ticket, out);
            window.completed();
            free.push(i);
            in_flight -= 1;
        }
    }
}

/// A granted place in the global order — an interactive transaction's barrier, or a program's
/// lock set: dropping it tells the lock manager that `seq` finished, so later transactions run
/// (also when a program's panic unwinds through it).
pub struct Release<'w, S: Flavor, E: Pipeline<S> = Engine<S>> {
    engine: &'w E,
    seq: u64,
    _s: std::marker::PhantomData<fn() -> S>,
}

impl<S: Flavor, E: Pipeline<S>> Drop for Release<'_, S, E> {
    fn drop(&mut self) {
        self.engine.release(self.seq);
    }
}
