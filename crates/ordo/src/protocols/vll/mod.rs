//! `vll`, `vll-sca`, `vll-arrayed`, `vllr`, `vllr-sca` — very lightweight locking (Ren, Thomson,
//! Abadi, VLDB J. 2015).
//!
//! # The idea
//!
//! A traditional lock manager keeps, per record, a linked list of lock requests in a hash table. VLL
//! compresses that to **two integers beside the record**: C_X and C_S, the number of unfinished
//! transactions that asked for an exclusive or a shared lock on it (`kit::counters`). The price is
//! that nobody knows *who* waits for whom any more, so VLL changes the rules around the counters:
//!
//! 1. A transaction requests **all** its locks at once, in one short critical section that also appends
//!    it to the partition's **TxnQueue** (`kit::txn_queue`, [`partition`]). Its read and write sets
//!    are computed before it enters — by reconnaissance when they depend on data (`kit::plan`).
//! 2. If every request was granted on the spot (exclusive: C_X = 1 and C_S = 0 after the increment;
//!    shared: C_X = 0) the transaction is **free** and runs at once. Otherwise it is **blocked**.
//! 3. A blocked transaction runs when it reaches the **front** of the TxnQueue: everything that locked
//!    before it has finished, and everything after it that conflicts is blocked. Hence no deadlock.
//! 4. New transactions are admitted only while the number of *blocked* ones is below a threshold
//!    ([`VllConfig::blocked_limit`]; each worker halves its own threshold whenever a dependent
//!    transaction's reconnaissance went stale while it waited, and grows it back as transactions
//!    complete — [`crate::protocols::kit::aimd`]).
//! 5. `vll-sca`: when the queue is full, **selective contention analysis** (`kit::sca`) scans it
//!    oldest first with two bit arrays and finds a blocked transaction that conflicts with no older one.
//!    `vllr-sca` does the same over VLLR's prefix locks, with two more arrays for the intentions.
//!
//! Worked example (§2.5): A writes x, B writes y, C writes x and z, D writes z.
//!
//! ```text
//!  after A, B, C, D begin:  x: Cx=2  y: Cx=1  z: Cx=2    TxnQueue A, B, C(blocked), D(blocked)
//!  after A finishes:        x: Cx=1  y: Cx=1  z: Cx=2    TxnQueue B, C(blocked), D(blocked)
//!  basic VLL: C must wait until B finishes (then it is the front); SCA returns C now — and never D,
//!  which conflicts with the older C.
//! ```
//!
//! # Where the paper's pseudocode lives
//!
//! | paper                                        | code                                                  |
//! |----------------------------------------------|-------------------------------------------------------|
//! | C_X, C_S; colocated vs arrayed (§2.1–2.2)    | `kit::counters` (`VllCounters`, `Arrayed`)            |
//! | `BeginTransaction` / `FinishTransaction` (Fig. 1) | [`partition::Partition`]                         |
//! | `<critical section>` (Fig. 1)                | `kit::latch`                                          |
//! | TxnQueue, head rule, "queue full"            | `kit::txn_queue`                                      |
//! | `VLLMainLoop` (Fig. 1)                       | `worker` (`Vll::main_loop`)                           |
//! | `Execute(T)`                                 | [`txn::VllTx`]                                        |
//! | dependent transactions, reconnaissance (§2.4)| `kit::plan`, `kit::recon`                             |
//! | SCA (Fig. 4)                                 | `kit::sca`                                            |
//! | VLLR prefixes, four counters, Fig. 5 (§2.7)  | `kit::prefix`, [`vllr`]                               |
//! | point locks vs prefix locks                  | [`scheme`]                                            |
//!
//! (`kit` is [`crate::protocols::kit`]: the mechanisms `calvin-vll`, the partitioned VLLs and the
//! range lock managers share with this family.)
//!
//! # Choices of this implementation
//!
//! * One partition: the whole database, one TxnQueue shared by every worker thread (the paper's
//!   multi-threaded single-server VLL). Partitioned and deterministic variants build on the same parts.
//! * The shared TxnQueue is stored in **lanes**, one per worker: each worker's entries sit on cache
//!   lines only its own critical sections write, and everything else a section writes (the
//!   published front and blocked count; the queue's counter, counts and lane heads) is in two
//!   aligned pairs of lines, the only part of the partition that moves between cores with the latch
//!   (`kit::txn_queue`, [`partition`]). Queue order is unchanged: one sequence counter, lanes merged
//!   by it.
//! * The critical section's latch spins and never sleeps, alone on its own pair of lines
//!   (`kit::latch`): a mutex that parks its waiters made `vll` slower with more workers on 16
//!   cores (0.66–0.87 M transactions/s at 16 against 2.2–3.9 M at 4); the spinning latch does
//!   1.9–2.0 M at 16 and 3.4–3.5 M at 8 on the same machine.
//! * A transaction that blocks is **parked** with its queue entry (program, ticket, lock list) by the
//!   worker that admitted it, and another worker may run it: whoever's SCA pass finds it, as in
//!   Fig. 4, and at the front (Fig. 1) its own worker or an idle one — a worker with work of its own
//!   leaves another's front to it (see `worker`). Programs are therefore `'static`
//!   ([`crate::txn::RequestSource::Program`]). Only the embedding path's blocked transaction
//!   ([`Protocol::execute`]) stays with its caller, whose stack holds the program.
//! * Ranges: `vll` locks every key of a declared range one by one (up to
//!   [`scheme::POINT_RANGE_LIMIT`] keys; wider, the transaction runs alone); `vllr` locks prefixes.
//! * Interactive transactions ([`Protocol::begin`]) cannot declare their accesses, so they run alone:
//!   queued as a wall, they wait for the queue to drain ahead of them and hold back everything after
//!   them. Correct and serial — VLL is meant for programs ([`Protocol::execute`], the worker loop).
//! * A worker that ran a free transaction postpones its `FinishTransaction` to the critical section of
//!   its next `BeginTransaction` (or to before it waits for anything): one latch acquisition per
//!   transaction instead of two when nothing blocks.
//! * **Admission batching** (`worker::Batching`): while nothing blocks, a worker draws up to
//!   [`VllConfig::max_batch`] requests (default [`DEFAULT_MAX_BATCH`]), plans them, and performs their
//!   `BeginTransaction`s one after another inside **one** critical section, then runs the free ones in
//!   order. That is exactly Fig. 1 with no other worker's section in between (queue order is still
//!   lock-request order; a request that conflicts with an earlier one of its own batch is blocked behind
//!   it like any other), but the partition's latch and queue lines cross between cores once per batch
//!   instead of once per transaction. The batch doubles from 1 while nothing blocks and falls back to 1
//!   on any block, so under contention admission is one at a time as in the paper. It stops growing
//!   once its members hold 8 lock requests for each member allowed (`worker::LOCKS_PER_MEMBER`; 32
//!   at the default: four `vll-micro` transactions, two YCSB ones), which bounds the wait it adds.
//!   A dependent transaction (reconnaissance) ends its batch and counts as a block, since its
//!   reconnaissance goes stale while it waits. The price is latency: a request waits for the ones
//!   drawn before it in its batch (p50 0.8 → 2.2 µs on `vll-micro` with batches of 4), and a
//!   batch's locks are held from its section to the worker's next. `--vll-batch 1` gives the
//!   paper's one-at-a-time loop; see `docs/results/vll.md` (sixth pass).
//! * The critical section holds only the paper's work: counter increments/decrements, the queue
//!   append/removal, two published words. Resolving keys to record slots (one index probe per key; the
//!   slot rides in the lock request into execution, which never probes again) and deduplication
//!   happen before it ([`scheme::PointLocks`]). (Loading the counters' lines before the latch, too,
//!   was measured slower: 0.73× against 0.81× `nocc`, see `docs/results/vll.md`.) The owner of a
//!   transaction keeps its read/write sets and hands them back to `FinishTransaction`; a queue entry
//!   copies them only for `vll-sca`, whose SCA pass reads other workers' transactions ([`partition`]).
//! * "TxnQueue is not full" is read from the blocked count the worker's own last critical section
//!   returned, and from the shared counter only when that said full: a free-running worker touches no
//!   line the others write outside the latch. Like any check before the latch it can overshoot the
//!   threshold by one transaction per worker, as reading the shared counter could.
//! * `ORDO_VLL_STATS=1` makes each worker print its main-loop counts when it ends (transactions begun,
//!   blocked, run by the head rule and how many of those another worker drew, SCA passes and
//!   finds, passes that passed over a runnable transaction they could not take, idle turns) — the data behind the threshold
//!   and SCA discussion in `docs/results/vll.md`.
//! * No undo log for a transaction that VLL can never abort once it runs: declared up front (no
//!   reconnaissance), no commit point, no inserts or deletes. Everything else logs undo as 2PL does.
//! * SCA runs only while the queue is full, and again only after some transaction has finished (nothing
//!   else can unblock one): a pass that found nothing stands for every worker until the next finish
//!   ([`partition::Partition::sca_due`]). Each worker scans with bit arrays of its own
//!   ([`partition::Partition::worker_sca`]), so their lines stay in its cache. On 16 cores, with
//!   every idle worker rescanning after each finish through shared arrays, `vll-sca` ran at a fifth
//!   to a third of `vll` on Fig. 8b's workload; with both changes at 0.67–0.90 (16 workers) and
//!   1.19–1.54× on long transactions at 4 (`docs/results/vll.md`, eighteenth pass).
//! * The blocked-transaction threshold defaults to [`DEFAULT_BLOCKED_LIMIT`]; `--vll-blocked-limit`
//!   sets it (the paper tunes it per workload; smaller is better under
//!   high contention). With 2 workers the count seldom gets near it: on `vll-micro` at CI 0.1 about 10%
//!   of transactions block, and a blocked one waits for at most the other worker's transactions, so
//!   the queue is "full" mostly while a worker is descheduled — then SCA finds nothing either (the
//!   descheduled worker's transaction is what everyone waits for). A threshold of 4 made SCA run
//!   more often but it still found a runnable transaction in about 1% of its passes, so 16 stays: a
//!   higher threshold lets a worker keep running free transactions while the other is off its core.

pub mod partition;
pub mod scheme;
pub mod txn;
pub mod vllr;
mod worker;

pub use worker::LoopStats;

#[cfg(test)]
mod tests;

use crate::protocols::kit::counters::{Arrayed, Colocated};
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{IdLedger, Program, Recorder, RequestSource, TxResult};
use partition::Partition;
use scheme::{LockScheme, PointLocks};
use std::sync::Arc;
use txn::{Held, VllTx, VllWorker};

pub use crate::protocols::kit::queue_knobs::{
    VllConfig, BATCH_KNOB, BLOCKED_LIMIT_KNOB, DEFAULT_BLOCKED_LIMIT, DEFAULT_MAX_BATCH,
    SCA_BITS_KNOB,
};

/// A member of the VLL family: how it locks, whether it runs SCA, its name.
pub trait Flavor: Send + Sync + 'static {
    type Scheme: LockScheme;
    const SCA: bool;
    const INFO: ProtocolInfo;
}

const PAPER: &str = "Ren, Thomson, Abadi: VLL: a lock manager redesign for main memory database systems (VLDB J. 2015)";

/// `vll`: colocated counters, head rule only.
pub struct Basic;
impl Flavor for Basic {
    type Scheme = PointLocks<Colocated>;
    const SCA: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "vll",
        summary: "very lightweight locking: C_X/C_S counters beside each record, all locks at once, TxnQueue",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&BLOCKED_LIMIT_KNOB, &BATCH_KNOB],
    };
}

/// `vll-sca`: `vll` plus selective contention analysis when the queue is full.
pub struct WithSca;
impl Flavor for WithSca {
    type Scheme = PointLocks<Colocated>;
    const SCA: bool = true;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "vll-sca",
        summary: "VLL with selective contention analysis (SCA) when the TxnQueue is full",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&BLOCKED_LIMIT_KNOB, &BATCH_KNOB, &SCA_BITS_KNOB],
    };
}

/// `vll-arrayed`: counters in two vectors instead of beside the records.
pub struct ArrayedCounters;
impl Flavor for ArrayedCounters {
    type Scheme = PointLocks<Arrayed>;
    const SCA: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "vll-arrayed",
        summary: "VLL with its C_X/C_S counters in separate arrays (arrayed VLL, §2.2)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&BLOCKED_LIMIT_KNOB, &BATCH_KNOB],
    };
}

/// `vllr`: VLL over prefix range locks with four counters per prefix.
pub struct Ranges;
impl Flavor for Ranges {
    type Scheme = vllr::PrefixLocks;
    const SCA: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "vllr",
        summary: "VLL for ranges: prefix locks with C_x, C_s, I_x, I_s counters (VLLR, §2.7)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&BLOCKED_LIMIT_KNOB, &BATCH_KNOB],
    };
}

/// `vllr-sca`: `vllr` plus SCA when the queue is full, its bit arrays marking all four counters
/// (Fig. 5's matrix decides: two writers' intentions on a common prefix do not conflict).
pub struct RangesSca;
impl Flavor for RangesSca {
    type Scheme = vllr::PrefixLocks;
    const SCA: bool = true;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "vllr-sca",
        summary: "VLLR with selective contention analysis over its four counters when the TxnQueue is full",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&BLOCKED_LIMIT_KNOB, &BATCH_KNOB, &SCA_BITS_KNOB],
    };
}

/// A VLL protocol.
pub struct Vll<F: Flavor> {
    db: Database<<F::Scheme as LockScheme>::Meta>,
    part: Partition<F::Scheme>,
    blocked_limit: usize,
    batching: worker::Batching,
    /// What the workers' main loops did, added up as each loop ends.
    loop_stats: parking_lot::Mutex<LoopStats>,
    ids: Arc<IdLedger>,
}

impl<F: Flavor> Vll<F> {
    /// Opens with explicit knobs.
    pub fn with_config(db: Database<<F::Scheme as LockScheme>::Meta>, cfg: &VllConfig) -> Self {
        Vll {
            db,
            part: Partition::with_sca(F::SCA.then_some(cfg.sca_bits)),
            blocked_limit: cfg.blocked_limit.max(1),
            batching: worker::Batching {
                max: cfg.max_batch.max(1),
            },
            loop_stats: parking_lot::Mutex::new(LoopStats::default()),
            ids: IdLedger::new(),
        }
    }

    /// The main-loop counts of every worker loop that has ended (tests and diagnostics).
    pub fn loop_stats(&self) -> LoopStats {
        *self.loop_stats.lock()
    }
    /// The partition (tests and diagnostics: queue and counter states).
    pub fn partition_state(&self) -> &Partition<F::Scheme> {
        &self.part
    }
}

impl<F: Flavor> Protocol for Vll<F> {
    type Meta = <F::Scheme as LockScheme>::Meta;
    type Worker = VllWorker<<F::Scheme as LockScheme>::Request>;
    type Tx<'w> = VllTx<'w, F::Scheme>;

    const INFO: ProtocolInfo = F::INFO;

    fn open(db: Database<Self::Meta>, config: &ProtocolConfig) -> Self {
        Self::with_config(db, &VllConfig::of(config))
    }
    fn db(&self) -> &Database<Self::Meta> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> Self::Worker {
        VllWorker::new(self.ids.lease(id), recording)
    }
    fn recorder(w: &mut Self::Worker) -> &mut Recorder {
        w.recorder()
    }

    /// An interactive transaction: it runs alone (see the module docs).
    fn begin<'w>(&'w self, w: &'w mut Self::Worker) -> Self::Tx<'w> {
        let (seq, blocked) = self.part.begin_transaction(&self.db, w.id, &[], true);
        if blocked {
            let _waiting = crate::txn::wait::blocked();
            while !(self.part.front() == seq && self.part.claim(seq)) {
                std::thread::yield_now();
            }
        }
        VllTx::new(&self.db, &self.part, w, Held::Alone { leave: Some(seq) })
    }

    fn execute<P: Program>(&self, w: &mut Self::Worker, program: &mut P) -> TxResult<()> {
        self.execute_one(w, program)
    }

    fn run_worker<R: RequestSource>(&self, w: &mut Self::Worker, requests: &mut R) {
        self.main_loop(w, requests)
    }
}
