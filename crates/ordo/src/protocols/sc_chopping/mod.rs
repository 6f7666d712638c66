//! `sc-chopping`, `sc-chopping-ser` — classic **transaction chopping by SC-cycle analysis**
//! (Shasha, Llirbat, Simon, Valduriez, "Transaction chopping: algorithms and performance
//! studies", TODS 20(3), 1995), the baseline of the thesis's Fig. 4.8 (Xie 2016, §4.6.1: "applying
//! the SC-cycle static analysis of traditional transaction chopping to the entire application").
//!
//! # The idea
//!
//! A long transaction holds its locks from its first access to its commit. If it could commit in
//! pieces, each piece would hold its locks only for itself — but other transactions could then
//! see it halfway. Transaction chopping finds, from what every transaction of the application may
//! touch, the pieces a transaction can be cut into so that *every* execution of the pieces, each
//! piece isolated as a small transaction, is equivalent to a serial execution of the whole
//! transactions. The rule is a graph: S-edges tie the pieces of one transaction, C-edges the
//! conflicting pieces of different transactions; the chopping is correct iff no cycle uses both
//! kinds (an **SC-cycle**), and rollback-safe iff every piece that may roll back by its own logic
//! is in the first piece — so that once the first piece commits, the transaction will commit.
//!
//! ```text
//!  T1: [w(x)] [w(y)]      T2: [w(x)]     T3: [w(y)]      no SC-cycle: T1 commits in two pieces,
//!                                                        T2 waits for T1's x lock only, not y's
//!  + T4: [r(x) r(y)]      T1.x ─C─ T4 ─C─ T1.y ─S─ T1.x  an SC-cycle: T4 could see x after T1
//!                                                        and y before it; T1 stays one piece
//! ```
//!
//! The catch the thesis points at: a workload runs many instances of each transaction type, and
//! two instances of one type conflict wherever the type writes, so any two of its pieces that
//! touch contended tables are tied through the other instance. Only pieces that conflict with
//! nothing (reads of columns nobody writes, inserts of fresh keys) come apart. Within a
//! **group** of Callas the analysis runs over fewer types (`callas --callas-chopping sc`).
//!
//! # The paper's algorithm, and the code
//!
//! | Shasha et al. 1995                                        | code |
//! |-----------------------------------------------------------|------|
//! | what each transaction accesses (here: tables or columns, per piece) | learnt from declarations: [`plans`], [`crate::protocols::kit::shape`] |
//! | C-edge: a common item, one access a write                  | [`crate::protocols::kit::chopping::Footprint::conflicts`] (`--sc-analysis table`, the default, or `column`; inserts-only nodes exempt) |
//! | finest chopping of T relative to the others unchopped: pieces joined through C-edges | [`crate::protocols::kit::chopping::chop`] (components per type; a second instance of T among the others) |
//! | the union of the per-transaction finest choppings is the finest chopping | `chop`, over every type learnt |
//! | rollback safety: rollback statements in the first piece    | `chop`: pieces up to [`crate::txn::Program::commit_point`] in the first chop |
//! | pieces run in order, each as a transaction                 | [`txn`]: each chop a strict-2PL transaction over the kit's lock table; locks released at its commit |
//! | a piece aborted by the system is resubmitted until it commits | [`txn`]: a later chop that times out is undone and run again, never anything before it |
//!
//! # Choices of this implementation
//!
//! * **Each chop is what `acid-2pl` runs**: locks taken as it goes in the kit's FIFO lock table,
//!   shared for reads and exclusive for writes; at read committed (`sc-chopping`, the thesis's
//!   level) a read lock goes once the read is done; at serializable (`sc-chopping-ser`) read locks
//!   stay to the end of the chop and scans and inserts take next-key locks. A deadlock is found in a
//!   waits-for graph of the lock owners ([`crate::protocols::kit::waits_for`]: the highest-numbered
//!   owner on a cycle gives up), the lock-wait timeout a safety net. `--op-delay-us` is slept after each operation, `--commit-delay-us` before
//!   each chop that wrote commits (each chop is a transaction that commits; a transaction that
//!   wrote nothing pays one at its end, as under ACID).
//! * **What a piece touches is learnt** ([`plans`]), as `callas` does: the first transaction of a
//!   type, or one whose piece declares more than its type was seen to touch, runs alone (one
//!   chop, under the kit's database-wide barrier) and the chopping of every type is redone before
//!   anything else runs. To keep a surprise out of chops that cannot be undone, the first chop
//!   also declares every later piece whose declaration needs no later chop, before it commits.
//!   A piece whose declaration needs a later chop and declares more than its shape cannot be
//!   undone any more: the transaction ends, then its shape is learnt (the only window where a
//!   chop runs against a shape that missed something; none of the workloads here has such a
//!   piece after its first runs).
//! * **The grain.** `--sc-analysis table` (the default) ties two pieces that touch one table; `column`
//!   only those that touch one column, as Callas's analysis does. Column-level choppings are
//!   correct over (row, column) items, but Ordo's history checker versions whole rows: a chop that
//!   reads a row's `w_tax` after another transaction wrote its `w_ytd` is a row-level edge the
//!   analysis rightly ignored, and the checker reports the cycles such edges close. So the
//!   protocols promise their level at table grain; column grain is for measuring (the consistency
//!   conditions still hold).
//! * `--sc-commute on` drops C-edges at nodes only commuting pieces touch (Callas's §4.5.1
//!   optimization; off by default: the classic theory does not have it, and the history checker
//!   sees the write cycles it allows).
//! * Interactive transactions run alone (`Interactive::OneAtATime`): the analysis does not know
//!   what they touch.
//!
//! # What the checker sees
//!
//! Each transaction as one transaction: one id for all its chops, one record, the events of a
//! chop's attempts that were undone left out. `sc-chopping` promises read committed (no G0, G1a,
//! G1b, G1c — an intermediate read needs two chops that touch what a third transaction reads,
//! which the analysis merges); `sc-chopping-ser` promises serializability (the theorem: a correct
//! chopping of serializable pieces).

pub mod plans;
pub mod txn;

#[cfg(test)]
mod tests;

use crate::options::{OptionSpec, ValueKind};
use crate::protocols::kit::barrier::Barrier;
use crate::protocols::kit::chopping::ScOpts;
use crate::protocols::kit::hold_delay::{HoldDelay, COMMIT_DELAY_KNOB, OP_DELAY_KNOB};
use crate::protocols::kit::lock_table::LockTable;
use crate::protocols::kit::waits_for::WaitsFor;
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{IdLedger, Program, Recorder, TxResult};
use plans::Plans;
use std::sync::Arc;
use std::time::Duration;

pub use txn::{ChopTx, ScWorker};

/// Where transaction chopping comes from.
pub const PAPER: &str = "Shasha, Llirbat, Simon, Valduriez, TODS 20(3) 1995 (transaction \
                         chopping); the SC-chopping baseline of Xie, PhD thesis 2016, Fig. 4.8";

/// `--sc-analysis`.
pub const ANALYSIS_KNOB: OptionSpec = OptionSpec::new(
    "sc-analysis",
    "LEVEL",
    ValueKind::Choice(&["column", "table"]),
    "sc-chopping, sc-chopping-ser: the SC-cycle analysis's grain: a C-edge for a common table, or \
     only for a common column (Callas's grain; correct over columns, but the history checker \
     sees rows, so it reports the cycles through a row two chops touch in different columns).",
)
.default("table");

/// `--sc-commute`.
pub const COMMUTE_KNOB: OptionSpec = OptionSpec::new(
    "sc-commute",
    "ON",
    ValueKind::Choice(&["off", "on"]),
    "sc-chopping, sc-chopping-ser: drop C-edges at tables (columns) only commuting writes touch \
     (Callas's optimization; the classic analysis has none).",
)
.default("off");

/// The knobs both protocols read.
pub const KNOBS: &[&OptionSpec] = &[
    &ANALYSIS_KNOB,
    &COMMUTE_KNOB,
    &OP_DELAY_KNOB,
    &COMMIT_DELAY_KNOB,
];

/// What tells `sc-chopping` and `sc-chopping-ser` apart.
pub trait Level: Send + Sync + 'static {
    /// Each chop serializable (long read locks, next-key locks); else read committed.
    const SER: bool;
    const INFO: ProtocolInfo;
}

/// `sc-chopping`: chops at read committed, as the thesis runs its baselines.
pub struct Rc;
impl Level for Rc {
    const SER: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "sc-chopping",
        summary: "transaction chopping by SC-cycle analysis over the whole workload (finest \
                  correct, rollback-safe chopping); each chop a short 2PL transaction at read \
                  committed, as acid-2pl",
        paper: PAPER,
        isolation: Isolation::ReadCommitted,
        interactive: Interactive::OneAtATime,
        knobs: KNOBS,
    };
}

/// `sc-chopping-ser`: each chop serializable.
pub struct Ser;
impl Level for Ser {
    const SER: bool = true;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "sc-chopping-ser",
        summary: "sc-chopping with each chop serializable (long read locks, next-key locking): \
                  the chopping theorem's setting",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: KNOBS,
    };
}

/// Transaction chopping at level `L` (see the module docs).
pub struct ScChopping<L: Level> {
    db: Database<()>,
    locks: LockTable,
    barrier: Barrier,
    plans: Plans,
    delay: HoldDelay,
    timeout: Duration,
    /// Who waits for whom: a deadlock ends as soon as it is seen, not at the timeout.
    waits_for: WaitsFor,
    ids: Arc<IdLedger>,
    _l: std::marker::PhantomData<fn() -> L>,
}

/// `sc-chopping`.
pub type ScChoppingRc = ScChopping<Rc>;
/// `sc-chopping-ser`.
pub type ScChoppingSer = ScChopping<Ser>;

impl<L: Level> ScChopping<L> {
    /// The learnt plans (tests, `ordo analyze`).
    pub fn plans(&self) -> &Plans {
        &self.plans
    }
}

/// The analysis options of `config`.
pub fn opts_of(config: &ProtocolConfig) -> ScOpts {
    let text = |spec: &OptionSpec| config.knobs.text(spec).ok().flatten().unwrap_or_default();
    ScOpts {
        column: text(&ANALYSIS_KNOB) != "table",
        commutativity: text(&COMMUTE_KNOB) == "on",
        ..ScOpts::default()
    }
}

impl<L: Level> Protocol for ScChopping<L> {
    type Meta = ();
    type Worker = ScWorker;
    type Tx<'w> = ChopTx<'w, L>;

    const INFO: ProtocolInfo = L::INFO;

    fn open(db: Database<()>, config: &ProtocolConfig) -> Self {
        ScChopping {
            db,
            locks: LockTable::default(),
            barrier: Barrier::new(config.threads),
            plans: Plans::new(opts_of(config)),
            delay: HoldDelay::of(config),
            timeout: config.lock_wait_timeout,
            waits_for: WaitsFor::default(),
            ids: IdLedger::new(),
            _l: std::marker::PhantomData,
        }
    }

    fn db(&self) -> &Database<()> {
        &self.db
    }

    fn worker(&self, id: u32, recording: bool) -> ScWorker {
        ScWorker::new(self.ids.lease(id), recording)
    }

    fn recorder(w: &mut ScWorker) -> &mut Recorder {
        &mut w.exec.rec
    }

    /// An interactive transaction: one chop, alone, holding the whole database.
    fn begin<'w>(&'w self, w: &'w mut ScWorker) -> ChopTx<'w, L> {
        let all = self.barrier.exclusive();
        ChopTx::new(self, w, Some(all))
    }

    /// Runs the program chop by chop (see [`txn`]).
    fn execute<P: Program>(&self, w: &mut ScWorker, program: &mut P) -> TxResult<()> {
        self.run(w, program)
    }
}
