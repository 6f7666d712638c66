//! `dibs`, `dibs-naive` — Database Isolation By Scheduling (Gaffney, Claus, Patel, PVLDB 14(9),
//! 2021): isolation as a layer of predicate locks in front of an engine that has no concurrency
//! control of its own.
//!
//! # The idea
//!
//! Most protocols of this engine protect *records*: a lock word beside each row, a version to
//! validate, a chain of versions. DIBS protects *requests*. Before a request runs, its predicate —
//! the logical set of tuples it may touch, `k = 7` or `k BETWEEN 10 AND 20`, tuples that do not
//! exist yet included — is locked in a predicate lock manager; it runs only once no running request
//! of another transaction can conflict with it, and the engine below is left to run requests
//! with no locks, latches for isolation or versions at all (here: Ordo's store written in place, as
//! under `nocc`). Because the lock names a set of tuples rather than the rows that exist, a scan's
//! lock also covers the rows an insert would add to its range: phantoms cannot happen.
//!
//! ```text
//!   T1: scan k BETWEEN 10 AND 20          T2: insert k = 15
//!   lock Select(k ∈ [10,20]) ─ runs ─────────── lock Insert(k = 15)?  conflicts: waits ───────
//!   … commits, releases ──────────────────────────────────────────────→ granted ─ runs ─ commits
//!   (an insert of k = 25 is granted at once: no tuple satisfies both predicates)
//! ```
//!
//! Two locks conflict (§2.1) when they are on one relation, one of them writes, and their
//! predicates can hold for one tuple — satisfiability, which the manager decides on the predicates'
//! DNF. Locks are taken as the transaction runs, request by request (the growing phase), and
//! released together only after the engine's commit or rollback returned: **strict 2PL over
//! predicate locks**, hence serializable. Waiting can deadlock; the paper breaks deadlocks by a
//! **timeout plus random jitter**: a wait that outlives it rolls its transaction back, releases
//! every lock and restarts it (the jitter makes one of two deadlocked transactions give up first).
//!
//! # The paper, mapped to the code
//!
//! | paper | here |
//! |-------|------|
//! | §2.1 predicate locks, the conflict rule, Algorithm 1 (snapshot-and-insert, wait for earlier conflicting locks) | the `ordo-predicate` crate ([`ordo_predicate::LockManager`]) |
//! | §2.2 optimizations: conjunct grouping, prepared predicates and the conflict graph, column filtering (N buckets per relation, `--dibs-buckets` ([`BUCKETS_KNOB`]), 1,024 by default), column-level conflicts, the DNF threshold k | the crate's [`ordo_predicate::Optimizations`], picked by `--dibs-opt` ([`OPT_KNOB`]); `dibs-naive` is §2.1 alone. Column-level conflicts never fire on Ordo's store, whose version words are per row ([`requests`]) |
//! | §3.2 request templates (relation, read and write columns, parameterized predicate) | five per table, over whole rows ([`requests`]) |
//! | §3.1 the worker: lock per request, execute, roll back and restart on a timeout, commit, release | [`txn::DibsTx`] on the kit's in-place executor with its undo log ([`crate::protocols::kit::inplace`]); restarts by the harness's retry loop |
//! | §3.1 deadlock: timeout + jitter | `--dibs-deadlock timeout` ([`DEADLOCK_KNOB`], [`TIMEOUT_KNOB`]: 10 ms + up to 10 ms); by default waits-for cycles are detected instead ([`waits`]), which §3.1 allows |
//! | §4.1 "lock-free" in-memory engine, DIBS the only isolation | Ordo's store with no per-record state (`Meta = ()`) |
//!
//! # Choices of this implementation
//!
//! * **Every request is prepared.** A request's predicate is always one of its table's five
//!   templates ([`requests`]): `get`, `update`, `insert`, `delete` pin the key (`c0 = $1`), `scan`
//!   is `c0 BETWEEN $1 AND $2`. With the prepared optimization on, a pair of locks is compared by
//!   evaluating its edge's conflict predicate over the two parameter vectors, with no DNF at run
//!   time; with it off, the manager binds the template and compiles the predicate, as ad hoc.
//! * **Predicates over columns.** [`crate::txn::Tx::scan_where`] and
//!   [`crate::txn::Tx::update_where`] name their rows by a predicate over the table's integer
//!   columns ([`crate::txn::predicate`]: SubscriberScan's disjunctions of `BETWEEN`s on `byte2_x`).
//!   DIBS locks that predicate, ad hoc (its shape is the program's, not one of the five templates),
//!   then walks the table; a writer of rows outside it runs alongside. An update's predicate is
//!   freed of the columns it writes ([`ordo_predicate::Expr::freed`]): a row it changes may move
//!   into another lock's predicate. A point request pins only the key, so it conflicts with every
//!   predicate on other columns of its table (the row it names may satisfy it).
//! * **SQL.** `ordo sql -p dibs` and `ordo spec -p dibs` lock what each statement names
//!   (`ordo_sql::tuples`): a `WHERE` clause the access paths cannot serve by key is scanned with
//!   [`crate::txn::Tx::scan_where`] over its cover (its comparisons of integer columns), and
//!   every write names its row's integer values ([`crate::txn::Tx::insert_described`],
//!   `update_described` with the row before and after, `delete_described`): the lock is
//!   `c0 = key ∧ values`, which meets only the predicates the row can satisfy. So `SELECT count(*)
//!   … WHERE day = 7` holds off an insert of a day-7 row and an update moving a row into day 7, and
//!   lets an insert of a day-8 row through.
//! * **Whole rows.** A request locks every column of the rows it names, whatever columns it reads
//!   or writes: the store's version word, which the checker reads and a rollback restores, is one
//!   per row, so two transactions may not be inside one row at once ([`requests`] tells what the
//!   column rule broke).
//! * **One lock-manager context per worker**, reused by all its transactions (their locks are all
//!   released between two of them): no shared counter touched per transaction.
//! * **Reads of read-only tables take no lock**, as under 2PL: no write lock on them can exist.
//! * **Deadlocks are detected by default.** The paper breaks them by a timeout plus jitter and says
//!   the method is the implementer's choice (§3.1). Under contention the timeout leaves the workers
//!   idle: 20,000 transactions of contended YCSB (200 rows, θ = 0.9, 8 requests, 4 threads) took
//!   72 s at 3% CPU with the 10-ms timeout, half of them rolled back by it. So a waiter looks for a
//!   waits-for cycle every 200 µs and the youngest transaction on one gives up ([`waits`]);
//!   `--dibs-deadlock timeout` is the paper's method, for figures that want it.
//! * **Interactive transactions** ([`Protocol::begin`]: `ordo sql`, `ordo spec`) report their waits
//!   through [`crate::txn::wait`] and run concurrently ([`Interactive::Concurrent`]); they always
//!   detect cycles (see [`waits`] for why never the timeout), and on a cycle with a program's
//!   transaction the program gives up, never the session.
//! * **Isolation levels (§5.2).** Programs run serializable. An interactive transaction takes the
//!   level its `BEGIN ISOLATION LEVEL …` names ([`crate::txn::Tx::request_isolation`]): repeatable
//!   read lets inserts and deletes pass range read locks, read committed also releases read locks
//!   at each statement's end ([`crate::txn::Tx::end_statement`]), read uncommitted takes none.

pub mod requests;
pub mod txn;
pub mod waits;

#[cfg(test)]
mod tests;

use crate::options::{OptionSpec, Settings, ValueKind};
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{run_pieces, IdLedger, Program, Recorder, TxResult};
use ordo_predicate::{Config, LockManager, Optimizations, Step};
use std::sync::Arc;
use std::time::Duration;
pub use txn::{DibsTx, DibsWorker};

/// The names `--dibs-opt` takes: the cumulative steps of the paper's Fig. 3.
const STEPS: &[&str] = &["naive", "grouping", "prepared", "filter", "full"];

/// `--dibs-opt`: which of §2.2's optimizations `dibs` uses.
pub const OPT_KNOB: OptionSpec = OptionSpec::new(
    "dibs-opt",
    "STEP",
    ValueKind::Choice(STEPS),
    "dibs: the predicate lock manager's optimizations, cumulative as in the paper's Fig. 3: naive \
     (§2.1 alone: one active set, full DNF), grouping (+ conjunct grouping), prepared (+ prepared \
     predicates and the conflict graph), filter (+ column filtering, --dibs-buckets per table), full \
     (+ column-level conflicts and the DNF threshold k = 1024). dibs-naive is always naive.",
)
.default("full");

/// `--dibs-buckets`: N, the buckets of active locks per table under column filtering (§2.2.3).
pub const BUCKETS_KNOB: OptionSpec = OptionSpec::new(
    "dibs-buckets",
    "N",
    ValueKind::Int {
        min: 1,
        max: 65_536,
    },
    "dibs, from --dibs-opt filter on: N, the buckets of active predicate locks per table \
     (§2.2.3). A lock whose predicate pins keys goes into their buckets; one that pins none (a \
     scan) goes into all N. The paper picks N per workload for throughput (§4.3): 1,024 for TATP \
     and YCSB (the public artifact's default), 8 for SEATS, 1 for SubscriberScan.",
)
.default("1024");

/// `--dibs-timeout-ms`: how long a program's transaction waits for a predicate lock.
pub const TIMEOUT_KNOB: OptionSpec = OptionSpec::new(
    "dibs-timeout-ms",
    "MS",
    ValueKind::Int {
        min: 1,
        max: 60_000,
    },
    "dibs, dibs-naive, with --dibs-deadlock timeout: how long a transaction waits for a predicate \
     lock before it rolls back, releases its locks and restarts (the paper's deadlock handling), \
     plus a random jitter of up to as long again.",
)
.default("10");

/// The names `--dibs-deadlock` takes.
const DEADLOCK: &[&str] = &["detect", "timeout"];

/// `--dibs-deadlock`: how a transaction run as a program breaks deadlocks.
pub const DEADLOCK_KNOB: OptionSpec = OptionSpec::new(
    "dibs-deadlock",
    "HOW",
    ValueKind::Choice(DEADLOCK),
    "dibs, dibs-naive: how a waiting transaction breaks deadlocks — detect (a waiter looks for a \
     waits-for cycle every 200 µs and the youngest transaction on one rolls back and restarts; \
     waits end at the engine's lock wait timeout) or timeout (the paper's §3.1: a wait longer than \
     --dibs-timeout-ms plus jitter rolls back and restarts). Interactive sessions always detect.",
)
.default("detect");

const PAPER: &str = "Gaffney, Claus, Patel: Database Isolation By Scheduling, PVLDB 14(9) 2021";

/// What distinguishes `dibs` from `dibs-naive`.
pub trait Variant: Send + Sync + 'static {
    const INFO: ProtocolInfo;
    /// The lock manager's optimizations, given the knobs.
    fn optimizations(knobs: &Settings) -> Optimizations;
    /// N, the buckets per table when the optimizations filter (one when they do not).
    fn buckets(knobs: &Settings) -> u32;
}

/// `dibs`: every optimization by default, or a step of Fig. 3's ablation (`--dibs-opt`).
pub struct Full;
impl Variant for Full {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "dibs",
        summary: "isolation by scheduling: strict 2PL over optimized predicate locks in front of a store with no concurrency control",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::Concurrent,
        knobs: &[&OPT_KNOB, &BUCKETS_KNOB, &DEADLOCK_KNOB, &TIMEOUT_KNOB],
    };
    fn optimizations(knobs: &Settings) -> Optimizations {
        let step = knobs
            .text(&OPT_KNOB)
            .unwrap_or_else(|e| unreachable!("a checked DIBS knob: {e}"))
            .unwrap_or_default();
        let step = Step::ALL
            .into_iter()
            .find(|s| s.name() == step)
            .unwrap_or(Step::Full);
        Optimizations::cumulative(step)
    }
    fn buckets(knobs: &Settings) -> u32 {
        let n = knobs
            .int_or_default(&BUCKETS_KNOB)
            .unwrap_or_else(|e| unreachable!("a checked DIBS knob: {e}"));
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

/// `dibs-naive`: §2.1's naive predicate locking (one active set, full DNF per request).
pub struct Naive;
impl Variant for Naive {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "dibs-naive",
        summary:
            "DIBS with naive predicate locking (§2.1): one active set, every predicate in full DNF",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::Concurrent,
        knobs: &[&DEADLOCK_KNOB, &TIMEOUT_KNOB],
    };
    fn optimizations(_: &Settings) -> Optimizations {
        Optimizations::naive()
    }
    fn buckets(_: &Settings) -> u32 {
        1
    }
}

/// The DIBS protocols.
pub struct Dibs<V: Variant> {
    db: Database<()>,
    plm: LockManager,
    ids: Arc<IdLedger>,
    /// The waits-for graph of interactive transactions.
    waits: waits::WaitsFor,
    /// How long a wait that looks for waits-for cycles may last.
    detect_timeout: Duration,
    /// Whether transactions run as programs look for waits-for cycles (`--dibs-deadlock detect`)
    /// rather than time out after `--dibs-timeout-ms` plus jitter.
    programs_detect: bool,
    _v: std::marker::PhantomData<V>,
}

impl<V: Variant> Dibs<V> {
    /// The predicate lock manager (tests, diagnostics).
    pub fn lock_manager(&self) -> &LockManager {
        &self.plm
    }
}

impl<V: Variant> Protocol for Dibs<V> {
    type Meta = ();
    type Worker = DibsWorker;
    type Tx<'w> = DibsTx<'w, V>;

    const INFO: ProtocolInfo = V::INFO;

    fn open(db: Database<()>, config: &ProtocolConfig) -> Self {
        let ms = config
            .knobs
            .int_or_default(&TIMEOUT_KNOB)
            .unwrap_or_else(|e| unreachable!("a checked DIBS knob: {e}"));
        let timeout = Duration::from_millis(ms);
        let plm = LockManager::new(
            requests::relations(&db, V::buckets(&config.knobs)),
            requests::templates(&db),
            V::optimizations(&config.knobs),
            Config {
                timeout,
                jitter: timeout,
            },
        )
        .unwrap_or_else(|e| panic!("DIBS: the relations and templates of a database: {e}"));
        Dibs {
            db,
            plm,
            ids: IdLedger::new(),
            waits: waits::WaitsFor::default(),
            detect_timeout: config.lock_wait_timeout,
            programs_detect: config
                .knobs
                .text(&DEADLOCK_KNOB)
                .unwrap_or_else(|e| unreachable!("a checked DIBS knob: {e}"))
                .is_none_or(|how| how == "detect"),
            _v: std::marker::PhantomData,
        }
    }

    fn db(&self) -> &Database<()> {
        &self.db
    }

    fn worker(&self, id: u32, recording: bool) -> DibsWorker {
        DibsWorker {
            ids: self.ids.lease(id),
            exec: crate::protocols::kit::inplace::InPlace::new(id, recording, true),
            plm: self.plm.begin(ordo_predicate::Isolation::Serializable),
            restart_age: None,
        }
    }

    fn recorder(w: &mut DibsWorker) -> &mut Recorder {
        w.recorder()
    }

    /// An interactive transaction (see [`waits`] for how it waits).
    fn begin<'w>(&'w self, w: &'w mut DibsWorker) -> DibsTx<'w, V> {
        DibsTx::begin(self, w, txn::Waits::Session)
    }

    /// A program's transaction: its waits look for waits-for cycles, or time out after
    /// `--dibs-timeout-ms` plus jitter (`--dibs-deadlock`).
    fn execute<P: Program>(&self, w: &mut DibsWorker, program: &mut P) -> TxResult<()> {
        let how = match self.programs_detect {
            true => txn::Waits::Detect,
            false => txn::Waits::Timeout,
        };
        let mut tx = DibsTx::begin(self, w, how);
        run_pieces(program, &mut tx)?;
        crate::txn::Tx::commit(tx)
    }
}
