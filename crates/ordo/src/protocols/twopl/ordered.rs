//! `2pl-ordered`, `locking-coarse` — the PWV paper's locking baselines (Faleiro, Abadi, Hellerstein,
//! PVLDB 10(5) 2017, §5): strict 2PL that takes its locks **in lexicographic order**, so that no
//! deadlock can form — each before the piece that needs it, as a prefix of that order.
//!
//! # The idea
//!
//! 2PL that locks as it goes can deadlock: T1 holds A and wants B while T2 holds B and wants A. The
//! other 2PLs of this family break that by aborting someone (no-wait, wait-die, detection). The
//! paper's baseline avoids it instead: "the implementation acquires locks in lexicographic order to
//! eliminate deadlocks" (§5, after Rosenkrantz et al.). If every transaction requests its locks in
//! one global order, a transaction that waits holds only locks *before* the one it waits for, and
//! whoever holds that one waits, if at all, only for locks *after* it — a cycle of waits would have
//! to come back down the order, so none forms. Nobody is aborted for a conflict; a conflicting
//! transaction simply waits. The price is that the whole lock set must be known before the first
//! lock is taken, as in deadlock-free 2PL and the deterministic systems.
//!
//! The locks need not all be *taken* up front, though: before each piece runs, the transaction
//! takes the prefix of its sorted lock set that ends with that piece's last lock. A transaction
//! whose pieces go up the key order (the paper's Fig. 1 micro-benchmark) so takes each lock just
//! before the update that needs it — "the locking algorithm acquires an exclusive lock on a record
//! prior to updating the record, and holds all acquired locks until the end of its execution"
//! (§2.3) — and a hot record updated last is held only for that update; one whose pieces jump
//! around the order takes some locks early. Either way every transaction walks the one order:
//!
//! ```text
//!   T1: update A, update B          T2: update B, update A        (program order; A < B)
//!   T1: lock A ─ update A ─ lock B ─ update B ─ commit, release
//!   T2: its first piece needs B, so the prefix A, B: lock A? waits for T1 ──→ A, B ─ runs ─ commits
//!   (locking in program order, T1 would hold A, T2 B, and each wait for the other)
//! ```
//!
//! | paper (§5, "Locking")                                | here                                    |
//! |------------------------------------------------------|-----------------------------------------|
//! | read/write set known before the transaction runs     | [`Planner::plan`]: the program's declarations, with a reconnaissance pass where a declaration depends on earlier pieces |
//! | locks acquired in lexicographic order                | [`LockSet`]: stripes by index, then records by (table, key) ([`super::lock_order`]) |
//! | "acquires an exclusive lock on a record prior to updating the record" (§2.3) | before piece `i`, [`LockSet::prefix_for`] its accesses, [`Held::upto`](super::lock_order::Held::upto); the piece's cover is what is held by then |
//! | MCS reader-writer latches co-located with records    | a fair reader-writer ticket lock in each record's slot ([`TicketLock`], the protocol's `Meta`) |
//! | held until commit (strict 2PL)                       | the [`Held`](super::lock_order::Held) guard outlives the transaction |
//! | execution                                           | the kit's [`ExecTx`], in place under a [`Cover`] of the locks |
//! | locking-coarse: "all the stock records within a warehouse with a single lock" (§5.3) | units ([`crate::txn::Program::conflict_units`], `coarse = true`) locked through [`Stripes`] |
//!
//! # Choices of this implementation
//!
//! * **A stale reconnaissance.** A declaration that depends on data (TPC-C Payment by last name) is
//!   planned from a reconnaissance pass at no isolation; by the time the locks are held the data may
//!   have changed. The execution then strays outside its cover, aborts with the retryable
//!   `Validation`, releases everything, and the retry loop plans it again — the only abort the
//!   protocol itself causes.
//! * **Ranges** are locked key by key, present or absent, up to [`MAX_RANGE_KEYS`] keys: phantom-safe
//!   with no next-key locking, because every key the scan could ever see is locked. A range with both
//!   ends in one conflict unit is that unit's lock.
//! * **A range too wide for either** (TPC-C's Delivery scans NEW_ORDER up to a fence row) cannot be
//!   locked key by key. Such a transaction takes the database-wide [`Barrier`] *exclusive* instead of
//!   any lock, and runs alone; every other transaction holds the barrier *shared* while it holds its
//!   locks (the barrier is first in the lock order, so the order stays total). The shared side is a
//!   count on the worker's own cache line, so the common path adds one uncontended atomic and no
//!   shared hot spot ([`crate::protocols::kit::barrier`]).
//! * **Units.** `2pl-ordered` locks records, and the units a program names at the fine grain (as
//!   PWV does); `locking-coarse` the coarse ones (TPC-C: Stock by warehouse). A unit has no record to
//!   sit beside, so its lock is a stripe: a fixed array of lock words indexed by a hash of (table,
//!   unit), where a collision only adds conflicts ([`super::stripes`]). The units are the
//!   workload's: every program of a workload must name the same ones (a program that named none on
//!   a table another groups would lock records there, and the two would not see each other).
//! * **Interactive transactions** ([`Protocol::begin`]: `ordo sql`, the conformance suite) have no
//!   lock set to sort: taking locks as they go would bring deadlock back. Each one takes the barrier
//!   exclusive and runs alone over the whole database (`Interactive::OneAtATime`): `ordo sql` drives
//!   the protocol, `ordo spec`, which overlaps sessions, refuses it.
//! * **Fairness.** A waiter never gives up (there is no deadlock to give up for), so the lock words
//!   are first come, first served: a writer waiting for readers is not overtaken by later readers
//!   ([`crate::protocols::kit::ticket`]).
//!
//! [`MAX_RANGE_KEYS`]: crate::protocols::kit::plan::MAX_RANGE_KEYS

use super::lock_order::LockSet;
use super::stripes::Stripes;
use crate::protocols::kit::barrier::{Barrier, Exclusive};
use crate::protocols::kit::exec::{Cover, ExecState, ExecTx, HoldingTx};
use crate::protocols::kit::plan::Planner;
use crate::protocols::kit::ticket::TicketLock;
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{run_pieces, Access, ConflictUnits, IdLedger, Program, Recorder, Tx, TxResult};
use std::sync::Arc;

/// Where ordered locking comes from.
pub const PAPER: &str = "Faleiro, Abadi, Hellerstein, PWV (PVLDB 2017) §5 (Locking, locking-coarse); \
Rosenkrantz, Stearns, Lewis 1978 (ordered locking); Mellor-Crummey & Scott 1991 (fair reader-writer locks)";

/// What tells `2pl-ordered` and `locking-coarse` apart: the grain of the program's units.
pub trait Grain: Send + Sync + 'static {
    /// Whether the program's coarse units are used ([`crate::txn::Program::conflict_units`]).
    const COARSE: bool;
    const INFO: ProtocolInfo;
}

/// `2pl-ordered`: records, and the units a program names at the fine grain.
pub struct Fine;
impl Grain for Fine {
    const COARSE: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "2pl-ordered",
        summary: "strict 2PL taking its locks in lexicographic order, each piece's prefix of it \
                  before the piece runs (no deadlock, no aborts for conflicts); fair reader-writer \
                  locks beside the records (the PWV paper's Locking)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[],
    };
}

/// `locking-coarse`: conflicts over the coarse units the program names.
pub struct Coarse;
impl Grain for Coarse {
    const COARSE: bool = true;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "locking-coarse",
        summary: "2pl-ordered with conflicts over the coarse units the program names (TPC-C: a \
                  warehouse's Stock under one lock), locked through lock stripes (the PWV paper's \
                  locking-coarse)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[],
    };
}

/// Ordered strict 2PL at grain `G` (see the module docs).
pub struct Ordered<G: Grain> {
    db: Database<TicketLock>,
    stripes: Stripes,
    barrier: Barrier,
    ids: Arc<IdLedger>,
    _g: std::marker::PhantomData<fn() -> G>,
}

/// The PWV paper's Locking.
pub type Ordered2pl = Ordered<Fine>;
/// The PWV paper's locking-coarse.
pub type LockingCoarse = Ordered<Coarse>;

/// Per-thread state: the executor, planning buffers and the lock set, all reused.
pub struct OrderedWorker {
    id: u32,
    exec: ExecState,
    planner: Planner,
    accesses: Vec<Access>,
    /// Where each piece's accesses start in `accesses`.
    bounds: Vec<usize>,
    locks: LockSet,
}

impl<G: Grain> Ordered<G> {
    /// The lock stripes (tests).
    pub fn stripes(&self) -> &Stripes {
        &self.stripes
    }
    /// The barrier (tests).
    pub fn barrier(&self) -> &Barrier {
        &self.barrier
    }
}

impl<G: Grain> Protocol for Ordered<G> {
    type Meta = TicketLock;
    type Worker = OrderedWorker;
    type Tx<'w> = HoldingTx<'w, TicketLock, Exclusive<'w>>;

    const INFO: ProtocolInfo = G::INFO;

    fn open(db: Database<TicketLock>, config: &ProtocolConfig) -> Self {
        Ordered {
            db,
            stripes: Stripes::default(),
            barrier: Barrier::new(config.threads),
            ids: IdLedger::new(),
            _g: std::marker::PhantomData,
        }
    }

    fn db(&self) -> &Database<TicketLock> {
        &self.db
    }

    fn worker(&self, id: u32, recording: bool) -> OrderedWorker {
        OrderedWorker {
            id,
            exec: ExecState::new(self.ids.lease(id), recording),
            planner: Planner::default(),
            accesses: Vec::new(),
            bounds: Vec::new(),
            locks: LockSet::default(),
        }
    }

    fn recorder(w: &mut OrderedWorker) -> &mut Recorder {
        w.exec.recorder()
    }

    /// An interactive transaction: alone, holding the barrier exclusive (see the module docs).
    fn begin<'w>(&'w self, w: &'w mut OrderedWorker) -> Self::Tx<'w> {
        let all = self.barrier.exclusive();
        HoldingTx::new(ExecTx::new(&self.db, &mut w.exec, Cover::All), all)
    }

    /// Plan; lock in order (waiting), each piece's prefix of the order before it runs; run in place
    /// under the locks; release.
    fn execute<P: Program>(&self, w: &mut OrderedWorker, program: &mut P) -> TxResult<()> {
        let OrderedWorker {
            id,
            exec,
            planner,
            accesses,
            bounds,
            locks,
        } = w;
        let planned = planner.plan_pieces(program, &self.db, accesses, bounds, false);
        let units = program.conflict_units();
        if locks.build(&self.db, accesses, units, G::COARSE, &self.stripes)? {
            // A range too wide to lock: hold the whole database instead.
            let _all = self.barrier.exclusive();
            let mut tx = ExecTx::new(&self.db, exec, Cover::All);
            run_pieces(program, &mut tx)?;
            return tx.commit();
        }
        // Dropped in reverse: the transaction (rolled back unless committed), then the locks, then
        // the barrier.
        let _shared = self.barrier.shared(*id);
        let mut held = locks.hold(&self.db, &self.stripes);
        let mut tx = ExecTx::new(&self.db, exec, piece_cover(locks, 0, &[], units, G::COARSE));
        let mut taken = 0;
        for i in 0..program.pieces() {
            // Each piece's locks, a prefix of the order, before it runs; a piece past what
            // planning declared (reconnaissance stopped at an abort) takes them all.
            let declared = if i < planned.declared {
                taken = taken.max(locks.prefix_for(&accesses[bounds[i]..bounds[i + 1]]));
                &accesses[..bounds[i + 1]]
            } else {
                taken = locks.records.len();
                &accesses[..]
            };
            held.upto(taken);
            tx.set_cover(piece_cover(locks, taken, declared, units, G::COARSE));
            program.run_piece(i, &mut tx)?;
        }
        tx.commit()
    }
}

/// What a piece may touch: the record locks held by then (`locks.records[..taken]`, a prefix of the
/// order), every unit (their stripes are taken first), and the accesses declared up to it.
fn piece_cover<'c>(
    locks: &'c LockSet,
    taken: usize,
    declared: &'c [Access],
    units: Option<ConflictUnits>,
    coarse: bool,
) -> Cover<'c> {
    match units {
        Some(of) => Cover::Units {
            locks: &locks.records[..taken],
            units: &locks.units,
            accesses: declared,
            of,
            coarse,
        },
        None => Cover::Keys {
            locks: &locks.records[..taken],
            accesses: declared,
        },
    }
}
