//! `callas`, `callas-ser` — modular concurrency control (Chao Xie, PhD thesis, UT Austin 2016,
//! Ch. 4; Xie et al., SOSP 2015): transactions in **groups**, each group with its own mechanism,
//! **nexus locks** between groups, and **Runtime Pipelining** inside a group.
//!
//! # The idea
//!
//! A concurrency control that must be right for every pair of transactions has to be
//! conservative for all of them. Callas keeps the ACID abstraction for every transaction but
//! splits the *mechanism*: transaction types are partitioned into groups; a group's own mechanism
//! only has to isolate the group's members from each other, so it can be aggressive; and one
//! mechanism between groups — nexus locks — makes isolation hold across them.
//!
//! * **Nexus locks** ([`nexus`]): before it reads or writes a row, a transaction takes the row's
//!   nexus lock. Across groups they conflict unless both read; within a group never. Queues are
//!   FIFO. **Release order** (Thm 4.3.2): if T2 depends on T1 and they are in one group, T2
//!   releases its nexus locks only after T1 released its own — "depends on" tied to "releases
//!   before", which is acyclic, so no dependency cycle spans two groups.
//! * **Runtime Pipelining** ([`analysis`], [`txn`]): a static analysis ranks the tables (or
//!   columns) the group writes so that every transaction touches them in increasing rank, and
//!   chops each transaction into **stages**, one per rank. A stage runs as a mini-transaction
//!   under short piece locks and its writes are visible to the group when it ends. At run time,
//!   if a stage of Ti touches a row an uncommitted Tj of its group touched, Ti depends on Tj:
//!   Ti commits after Tj, and each later stage of Ti at rank r waits until Tj has passed rank r
//!   (run a stage of rank ≥ r, or committed). The C-edges that would have forbidden the chopping
//!   are all made to point one way at run time.
//! * **Beyond rollback safety**: a stage may read a group member's uncommitted writes; if that
//!   member rolls back, the reader rolls back too — a cascade that stays inside the group (nexus
//!   locks keep other groups off uncommitted rows). When rollbacks by the programs' own logic
//!   pass a rate (7%, as the thesis's Fig. 4.14), the group falls back to **safe mode** — every
//!   piece that may roll back in the first stage — and tries the optimistic mode again later
//!   (`--callas-mode`).
//!
//! ```text
//!  group {NewOrder, Payment}:  rank 0 district.d_next_o_id, rank 1 customer, rank 2 stock
//!  T1 NewOrder:  [r0: district] [r2: stock…]                         [inserts] commit
//!  T2 NewOrder:        waits ─┘ [r0: district] (T2 now depends on T1)
//!                                [r2: stock] (waits until T1 passed r2) [inserts] commit (after T1)
//!  T3 Delivery (other group): nexus-W on a row T1 holds → waits until T1 released its nexus locks
//! ```
//!
//! # Rules to code
//!
//! | thesis                                                  | code |
//! |---------------------------------------------------------|------|
//! | nexus locks: compatibility in and across groups, FIFO   | [`nexus`] (a [`LockModes`](crate::protocols::kit::lock_table::LockModes) for the kit's lock table) |
//! | Nexus Lock Release Order (Thm 4.3.2)                    | [`txn`]: `release`, waiting on each predecessor's release |
//! | static analysis: Step 1 (ranks), Step 2 (order), Fig. 4.4 | [`analysis::analyze`] |
//! | column level, commutativity, runtime uniqueness, larger pieces early (§4.5.1) | [`analysis::Opts`] (`--callas-analysis`, `--callas-no-opt`) |
//! | run-time rule: depend on who touched the row; rank-gated waits; commit after | [`txn`]: `stage`, `commit` |
//! | read committed: anti-dependencies do not order          | `callas` (the thesis's level); `callas-ser` orders them |
//! | optimistic reads, cascading rollback in the group, safe mode | [`txn`], [`plans::Adapt`] |
//! | Fig. 4.8: grouping + SC-cycle chopping (instead of Runtime Pipelining) | `--callas-chopping sc`: each group's stages are the kit's [`chopping`](crate::protocols::kit::chopping) over its members, unranked (no rank-gated waits); nexus locks and the rest as above |
//! | groups (§4.5.2)                                          | `--callas-groups` ([`plans::Grouping`]) |
//! | automated grouping (§4.5.2): latency that grows out of proportion with load marks the candidates; their groupings are enumerated and measured | [`grouping`] (`ordo analyze --propose-groups`): one bounded pass — profile under `acid-2pl` at one worker and at many, candidates = writers whose latency grew ≥ 2× the lower quartile of all types' growth, every grouping of ≤ 3 of them measured under `callas` — instead of the thesis's iterate-until-no-gain |
//! | lock hold time from replication and commit              | `--op-delay-us` per operation, `--commit-delay-us` per stage that wrote (each is a subtransaction that commits; a transaction that wrote nothing pays one at its commit, as under ACID) |
//!
//! # Choices of this implementation
//!
//! * **What a piece touches is learnt** ([`plans`]): the first transaction of a type, and one
//!   whose piece declares more than its type was seen to touch, runs **alone** under the kit's
//!   database-wide barrier; its declarations widen the type's shape and the group's analysis is
//!   redone while nothing else runs. A few such runs at the start of a benchmark, then none.
//! * **Row-level run-time conflicts**, as the thesis ("if they access the same row at run time").
//!   Serializability (read committed for `callas`) does not rest on the analysis: dependencies
//!   order commits (the kit's [`pipeline`](crate::protocols::kit::pipeline) access lists), and a
//!   cycle of waits — which the ranks make rare — is found on the kit's board and broken
//!   (`Deadlock`), as in `ic3`. Waits that hold piece locks (a later piece of a multi-piece stage,
//!   a nexus lock) give up after the lock-wait timeout.
//! * Groups not named in `--callas-groups` share one group run **unpipelined** (each transaction
//!   one stage), as the thesis leaves its read-only group.
//! * A key range **too wide to lock** key by key (TPC-C Delivery's scan of NEW-ORDER): `callas`
//!   reads the rows its scan passes under short read locks, waiting for a row's uncommitted writer
//!   to end first (read committed: committed rows only, phantoms allowed); `callas-ser` runs such a
//!   transaction alone under the kit's database-wide barrier.
//! * Interactive transactions run alone (`Interactive::OneAtATime`).
//!
//! # What the checker sees
//!
//! Each transaction as one transaction (its stages are not transactions of their own to the
//! application). `callas` promises read committed (no G0, G1a, G1b, G1c), the level of the
//! thesis's MySQL Cluster; `callas-ser` promises serializability.

pub mod analysis;
pub mod grouping;
pub mod nexus;
pub mod plans;
pub mod txn;

#[cfg(test)]
mod tests;

use crate::options::{OptionSpec, ValueKind};
use crate::protocols::kit::barrier::Barrier;
use crate::protocols::kit::hold_delay::{HoldDelay, COMMIT_DELAY_KNOB, OP_DELAY_KNOB};
use crate::protocols::kit::lock_table::LockTable;
use crate::protocols::kit::pipeline::access_list::PipeRecord;
use crate::protocols::kit::pipeline::alone::Alone;
use crate::protocols::kit::pipeline::board::Board;
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{IdLedger, Program, Recorder, TxResult};
use crossbeam_utils::CachePadded;
use nexus::NexusMode;
use plans::{Grouping, Mode, Plans};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

pub use txn::CallasWorker;

/// Where Callas comes from.
pub const PAPER: &str =
    "Xie, PhD thesis, UT Austin 2016, Ch. 4; Xie et al., SOSP 2015 (Callas: modular concurrency control)";

/// `--callas-groups`: see [`Grouping`].
pub const GROUPS_KNOB: OptionSpec = OptionSpec::new(
    "callas-groups",
    "GROUPS",
    ValueKind::Text,
    "callas, callas-ser: the groups of transaction types (Program names), groups separated by `/`, \
     types by `,` (`NewOrder,Payment/Delivery`); types not named share one more group, run \
     unpipelined. `all`: every type in one pipelined group; `each`: each type its own.",
)
.default("all");

/// `--callas-mode`.
pub const MODE_KNOB: OptionSpec = OptionSpec::new(
    "callas-mode",
    "MODE",
    ValueKind::Choice(&["adaptive", "optimistic", "safe"]),
    "callas, callas-ser: Runtime Pipelining's rollback handling: optimistic (read the group's \
     uncommitted writes, cascading rollback), safe (rollback safety: pieces that may roll back \
     in the first stage), or adaptive (optimistic until the group's rollback rate passes 7%).",
)
.default("adaptive");

/// `--callas-analysis`.
pub const ANALYSIS_KNOB: OptionSpec = OptionSpec::new(
    "callas-analysis",
    "LEVEL",
    ValueKind::Choice(&["column", "table"]),
    "callas, callas-ser: the static analysis's grain: columns (§4.5.1) or whole tables.",
)
.default("column");

/// `--callas-no-opt`.
pub const NO_OPT_KNOB: OptionSpec = OptionSpec::new(
    "callas-no-opt",
    "OPT",
    ValueKind::Choice(&["none", "commutativity", "uniqueness", "large-first", "all"]),
    "callas, callas-ser: switch off one optimization of §4.5.1 (commutativity, uniqueness, \
     large-first) or all three (with --callas-analysis table: naive Runtime Pipelining).",
)
.default("none");

/// `--callas-chopping`.
pub const CHOPPING_KNOB: OptionSpec = OptionSpec::new(
    "callas-chopping",
    "HOW",
    ValueKind::Choice(&["rp", "sc"]),
    "callas, callas-ser: how a group's transactions are chopped: Runtime Pipelining (rp) or \
     classic SC-cycle chopping over the group's members (sc: the thesis's Fig. 4.8 middle bars; \
     rollback-safe, no rank-gated waits).",
)
.default("rp");

/// The knobs every Callas protocol reads.
pub const KNOBS: &[&OptionSpec] = &[
    &GROUPS_KNOB,
    &CHOPPING_KNOB,
    &MODE_KNOB,
    &ANALYSIS_KNOB,
    &NO_OPT_KNOB,
    &OP_DELAY_KNOB,
    &COMMIT_DELAY_KNOB,
];

/// What tells `callas` and `callas-ser` apart.
pub trait Level: Send + Sync + 'static {
    /// Whether anti-dependencies (a write after another's read) order transactions.
    const ANTI: bool;
    const INFO: ProtocolInfo;
}

/// `callas`: read committed, as the thesis runs it.
pub struct Rc;
impl Level for Rc {
    const ANTI: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "callas",
        summary: "modular concurrency control (Callas): groups of transaction types, nexus locks \
                  between groups, Runtime Pipelining (rank-ordered stages, early visibility) \
                  within; read committed, as the thesis evaluates it",
        paper: PAPER,
        isolation: Isolation::ReadCommitted,
        interactive: Interactive::OneAtATime,
        knobs: KNOBS,
    };
}

/// `callas-ser`: anti-dependencies order too.
pub struct Ser;
impl Level for Ser {
    const ANTI: bool = true;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "callas-ser",
        summary: "Callas at serializable: Runtime Pipelining also orders anti-dependencies \
                  (§4.4.1's serializable rule)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: KNOBS,
    };
}

/// Callas at level `L` (see the module docs).
pub struct Callas<L: Level> {
    db: Database<PipeRecord>,
    board: Board,
    /// Per worker: the id of the last transaction that released its nexus locks.
    released: Box<[CachePadded<AtomicU64>]>,
    nexus: LockTable<NexusMode>,
    barrier: Barrier,
    ids: Arc<IdLedger>,
    plans: Plans,
    delay: HoldDelay,
    timeout: Duration,
    _l: std::marker::PhantomData<fn() -> L>,
}

/// `callas`.
pub type CallasRc = Callas<Rc>;
/// `callas-ser`.
pub type CallasSer = Callas<Ser>;

impl<L: Level> Callas<L> {
    /// The learnt plans (tests, `ordo analyze`).
    pub fn plans(&self) -> &Plans {
        &self.plans
    }
}

/// The knob's text (its declared default when not given).
fn text(config: &ProtocolConfig, spec: &OptionSpec) -> String {
    config.knobs.text(spec).ok().flatten().unwrap_or_default()
}

impl<L: Level> Protocol for Callas<L> {
    type Meta = PipeRecord;
    type Worker = CallasWorker;
    type Tx<'w> = Alone<'w>;

    const INFO: ProtocolInfo = L::INFO;

    /// The board has a slot per worker.
    const MAX_WORKERS: usize = 256;

    fn open(db: Database<PipeRecord>, config: &ProtocolConfig) -> Self {
        let mut opts = analysis::Opts {
            column: text(config, &ANALYSIS_KNOB) != "table",
            ..analysis::Opts::default()
        };
        match text(config, &NO_OPT_KNOB).as_str() {
            "commutativity" => opts.commutativity = false,
            "uniqueness" => opts.uniqueness = false,
            "large-first" => opts.large_first = false,
            "all" => {
                opts.commutativity = false;
                opts.uniqueness = false;
                opts.large_first = false;
            }
            _ => {}
        }
        let mode = match text(config, &MODE_KNOB).as_str() {
            "optimistic" => Mode::Optimistic,
            "safe" => Mode::Safe,
            _ => Mode::Adaptive,
        };
        Callas {
            db,
            board: Board::new(Self::MAX_WORKERS),
            released: (0..Self::MAX_WORKERS)
                .map(|_| CachePadded::default())
                .collect(),
            nexus: LockTable::default(),
            barrier: Barrier::new(config.threads),
            ids: IdLedger::new(),
            plans: {
                let plans = Plans::new(Grouping::parse(&text(config, &GROUPS_KNOB)), opts, mode);
                if text(config, &CHOPPING_KNOB) == "sc" {
                    plans.with_sc_chopping()
                } else {
                    plans
                }
            },
            delay: HoldDelay::of(config),
            timeout: config.lock_wait_timeout,
            _l: std::marker::PhantomData,
        }
    }

    fn db(&self) -> &Database<PipeRecord> {
        &self.db
    }

    fn worker(&self, id: u32, recording: bool) -> CallasWorker {
        assert!(
            (id as usize) < Self::MAX_WORKERS,
            "callas runs at most {} workers",
            Self::MAX_WORKERS
        );
        CallasWorker::new(id, self.ids.lease(id), recording)
    }

    fn recorder(w: &mut CallasWorker) -> &mut Recorder {
        &mut w.run.exec.rec
    }

    /// An interactive transaction: alone, holding the whole database.
    fn begin<'w>(&'w self, w: &'w mut CallasWorker) -> Alone<'w> {
        let all = self.barrier.exclusive();
        let id = w.ids.next_id();
        Alone::new(&self.db, &mut w.run, id, all)
    }

    /// Runs the program stage by stage (see [`txn`]).
    fn execute<P: Program>(&self, w: &mut CallasWorker, program: &mut P) -> TxResult<()> {
        self.run(w, program)
    }
}
