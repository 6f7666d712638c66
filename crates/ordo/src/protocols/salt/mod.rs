//! `salt`, `salt-local`, `acid-2pl` — ACID and BASE transactions side by side under **Salt
//! Isolation** (Chao Xie, PhD thesis, UT Austin 2016, Ch. 3; OSDI 2014).
//!
//! # The idea
//!
//! Most transactions of an application are not where its time goes; a few contended ones are.
//! Salt leaves every transaction ACID except those few, which the programmer **BASE-ifies**: cuts
//! into a sequence of **alkaline subtransactions** (each with an exception handler), with no other
//! rewrite. Then:
//!
//! * an alkaline subtransaction is isolated from ACID transactions and from other alkaline
//!   subtransactions, like a small ACID transaction;
//! * BASE transactions see each other's states at alkaline boundaries — the concurrency Salt buys;
//! * to an ACID transaction a BASE transaction looks like one ACID transaction: it sees all of it
//!   or none of it, whatever the isolation level (RU, RC, RR, SER) ACID transactions run at.
//!
//! One mechanism does it: locks of three kinds (Table 3.2). ACID locks work as in 2PL. Alkaline
//! locks conflict with ACID and alkaline locks unless both read. When an alkaline subtransaction
//! commits, its long-term alkaline locks are **downgraded to saline** locks, held until the BASE
//! transaction ends; saline locks conflict with ACID locks (unless both read) and with nothing
//! else. Queues are FIFO, so a stream of BASE transactions cannot starve an ACID one waiting behind
//! their saline locks: a later alkaline request queues behind the waiting ACID request.
//!
//! ```text
//!  BASE transfer(a→b):  [alk: a -= 10] ─ downgrade ─ [alk: b += 10] ─ commit: release saline a, b
//!  BASE transfer(a→c):        waits ─┘  [alk: a -= 10] ─ … (a is saline: other BASE may go)
//!  ACID total():                 R(a)? conflicts with saline-W(a) ─ waits until transfer(a→b) ends
//! ```
//!
//! **Accept.** A BASE transaction is accepted (its client answered) when its first alkaline
//! subtransaction commits; from then on it always commits. A later alkaline subtransaction that
//! the protocol aborts (a lock wait timed out) is rolled back and run again; one that fails by its
//! own logic is rolled back and handed to the program's handler ([`crate::txn::Program::alkaline_failed`]),
//! which says whether to go on or end there — never a rollback of what committed.
//!
//! **Indirect dirty reads** (Fig. 3.3–3.4). BASE₁ writes x; BASE₂ reads x and writes y; ACID reads
//! y: it saw BASE₁'s uncommitted x through BASE₂. Two rules on the order saline locks go prevent
//! it: (1) a BASE transaction that read x written by another may not release its saline lock on x
//! before the writer releases its own; (2) a write's saline lock may not go before the saline locks
//! of its transaction's earlier reads. Both are checked in O(1) per lock ([`chain`]).
//!
//! **Local transactions** (§3.5, `salt-local`). An alkaline subtransaction that touches one record
//! can commit at its replica as soon as the operation is done: its alkaline locks become saline
//! right after the operation, before the replication and commit delays. `salt-local` does so for
//! every alkaline subtransaction of one piece whose declaration names one record.
//!
//! **The ACID baseline** (`acid-2pl`) is the same code treating every program as ACID: strict 2PL
//! at the chosen level with ACID locks only, so figures compare ACID and Salt from one code base,
//! as the thesis does.
//!
//! # Rules to code
//!
//! | thesis                                               | code |
//! |------------------------------------------------------|------|
//! | Table 3.2: six lock kinds, their conflicts           | [`modes`] (a [`LockModes`](crate::protocols::kit::lock_table::LockModes) for the kit's lock table) |
//! | Table 3.1: long/short-term locks per level (`--salt-level`) | [`level`] |
//! | FIFO per-object queues (no ACID starvation)           | the kit's [`lock_table`](crate::protocols::kit::lock_table) |
//! | alkaline lock → saline at the end of its subtransaction | [`txn::SaltTx::end_alkaline`], the table's `downgrade` |
//! | §3.4 release rules, "pointer to the most recent non-ACID lock" | [`chain`], [`txn`]'s `release_all` |
//! | accept; handlers for later failures                   | [`Salt::run_base`] |
//! | §3.5 local transactions                               | `salt-local`, [`txn::SaltTx`]'s `end_op` |
//! | lock hold time from replication and commit            | `--op-delay-us`, `--commit-delay-us` ([`crate::protocols::kit::hold_delay`]) |
//! | deadlocks                                             | lock waits give up after the lock-wait timeout (`Deadlock`) |
//!
//! # What the checker sees
//!
//! Each alkaline subtransaction is recorded as a transaction of its own (an ACID transaction as
//! one). Every pair of those is isolated (Salt Isolation (a) and (b)), so the recorded history
//! must show no anomaly the level forbids: at `ser` it is serializable; at `rc` (the default, and
//! what [`ProtocolInfo::isolation`] promises) it has no G0, G1a or G1c. That BASE transactions look
//! atomic to ACID ones is tested apart (an ACID sum never sees half a BASE transfer).
//!
//! Interactive transactions ([`Protocol::begin`]: `ordo sql`, `ordo spec`) are ACID: SQL has no
//! statement that opens a BASE transaction or marks an alkaline boundary here.

pub mod chain;
pub mod level;
pub mod modes;
pub mod txn;

#[cfg(test)]
mod tests;

pub use chain::SaltMeta;
pub use level::{Level, LEVEL_KNOB};
pub use modes::SaltMode;
pub use txn::{SaltTx, SaltWorker};

use crate::protocols::kit::hold_delay::{HoldDelay, COMMIT_DELAY_KNOB, OP_DELAY_KNOB};
use crate::protocols::kit::lock_table::LockTable;
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{
    run_pieces, Access, AfterFailure, Backoff, IdLedger, Program, Recorder, RetryPolicy, Target,
    Tx, TxResult,
};
use std::sync::Arc;
use std::time::Duration;

/// Where Salt comes from.
pub const PAPER: &str = "Xie, PhD thesis, UT Austin 2016, Ch. 3; Xie et al., OSDI 2014 (Salt)";

/// The knobs every Salt protocol reads.
pub const KNOBS: &[&crate::options::OptionSpec] =
    &[&LEVEL_KNOB, &OP_DELAY_KNOB, &COMMIT_DELAY_KNOB];

/// Attempts of one alkaline subtransaction after acceptance before its failure goes to the handler
/// as it is (a safety net: lock-wait timeouts make each attempt end).
pub const MAX_ALKALINE_ATTEMPTS: u32 = 10_000;

/// Which of the three protocols: whether programs may be BASE, and whether single-record
/// alkaline subtransactions are local.
pub trait Kind: Send + Sync + 'static {
    /// BASE programs run as BASE transactions (otherwise as ACID ones).
    const BASE: bool;
    /// §3.5's local-transaction optimization.
    const LOCAL: bool;
    const INFO: ProtocolInfo;
}

/// `salt`: BASE programs as BASE transactions.
pub struct Base;
/// `salt-local`: `salt` with §3.5's local transactions.
pub struct Local;
/// `acid-2pl`: every program ACID (the baseline).
pub struct AcidOnly;

impl Kind for Base {
    const BASE: bool = true;
    const LOCAL: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "salt",
        summary: "ACID and BASE transactions side by side: alkaline, saline and ACID locks (Table \
                  3.2), BASE-ified programs run as alkaline subtransactions, ACID ones as strict \
                  2PL at --salt-level (rc)",
        paper: PAPER,
        isolation: Isolation::ReadCommitted,
        interactive: Interactive::Concurrent,
        knobs: KNOBS,
    };
}

impl Kind for Local {
    const BASE: bool = true;
    const LOCAL: bool = true;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "salt-local",
        summary:
            "salt with local transactions (§3.5): a one-record alkaline subtransaction's locks \
                  turn saline right after its operation",
        paper: PAPER,
        isolation: Isolation::ReadCommitted,
        interactive: Interactive::Concurrent,
        knobs: KNOBS,
    };
}

impl Kind for AcidOnly {
    const BASE: bool = false;
    const LOCAL: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "acid-2pl",
        summary: "Salt's ACID baseline: the same lock manager with every program ACID (strict 2PL \
                  at --salt-level, rc by default; FIFO waits, timeout on deadlock)",
        paper: PAPER,
        isolation: Isolation::ReadCommitted,
        interactive: Interactive::Concurrent,
        knobs: KNOBS,
    };
}

/// A Salt protocol of kind `K`.
pub struct Salt<K: Kind> {
    pub(crate) db: Database<SaltMeta>,
    pub(crate) locks: LockTable<SaltMode>,
    pub(crate) level: Level,
    pub(crate) delay: HoldDelay,
    pub(crate) timeout: Duration,
    ids: Arc<IdLedger>,
    _kind: std::marker::PhantomData<K>,
}

impl<K: Kind> Salt<K> {
    /// The isolation level ACID transactions run at.
    pub fn level(&self) -> Level {
        self.level
    }

    /// Starts a BASE transaction on `worker` (its first alkaline subtransaction is running).
    pub fn begin_base<'w>(&'w self, worker: &'w mut SaltWorker) -> SaltTx<'w, K> {
        SaltTx::begin(self, worker, true)
    }

    /// Whether the alkaline subtransaction of pieces `range` is local (§3.5): `salt-local`, one
    /// piece, and a declaration naming one record.
    fn is_local<P: Program>(
        &self,
        program: &P,
        range: std::ops::Range<usize>,
        scratch: &mut Vec<Access>,
    ) -> bool {
        if !K::LOCAL || range.len() != 1 {
            return false;
        }
        scratch.clear();
        program.declare(range.start, scratch);
        let Some(first) = scratch.first() else {
            return false;
        };
        matches!(first.target, Target::Key(_))
            && scratch
                .iter()
                .all(|a| a.table == first.table && a.target == first.target)
    }

    /// Runs a BASE program: its first alkaline subtransaction (a failure aborts everything, to be
    /// retried like an ACID transaction), acceptance, then every later one to its end — retried
    /// after a concurrency abort, handed to the program's handler after any other failure — and
    /// the commit, which releases the saline locks as the release rules allow.
    pub fn run_base<P: Program>(
        &self,
        worker: &mut SaltWorker,
        program: &mut P,
        starts: &[usize],
    ) -> TxResult<()> {
        let n = program.pieces();
        let mut bounds = Vec::with_capacity(starts.len() + 2);
        bounds.push(0);
        bounds.extend(starts.iter().copied().filter(|&s| s > 0 && s < n));
        bounds.push(n);
        bounds.dedup();
        let mut scratch = Vec::new();
        let seed = worker_seed(worker);
        let mut tx = self.begin_base(worker);
        tx.set_local(self.is_local(program, bounds[0]..bounds[1], &mut scratch));
        for i in bounds[0]..bounds[1] {
            program.run_piece(i, &mut tx)?;
        }
        if bounds.len() == 2 {
            return tx.commit();
        }
        tx.end_alkaline()?;
        let mut backoff = Backoff::new(RetryPolicy::default(), seed);
        let subs = bounds.len() - 1;
        'subs: for s in 1..subs {
            let range = bounds[s]..bounds[s + 1];
            let mut attempt = 0;
            loop {
                attempt += 1;
                tx.set_local(self.is_local(program, range.clone(), &mut scratch));
                let r = range
                    .clone()
                    .try_for_each(|i| program.run_piece(i, &mut tx));
                match r {
                    Ok(()) if s + 1 == subs => break 'subs,
                    Ok(()) => {
                        tx.end_alkaline()?;
                        break;
                    }
                    Err(a) => {
                        tx.rollback_alkaline();
                        if a.is_retryable() && attempt < MAX_ALKALINE_ATTEMPTS {
                            backoff.wait(attempt);
                            continue;
                        }
                        match program.alkaline_failed(s, &a) {
                            AfterFailure::Continue => break,
                            AfterFailure::End => break 'subs,
                        }
                    }
                }
            }
        }
        tx.commit()
    }
}

/// A seed for a worker's backoff (its id).
fn worker_seed(w: &SaltWorker) -> u64 {
    0x5A17_u64 ^ (w.owner_id() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl<K: Kind> Protocol for Salt<K> {
    type Meta = SaltMeta;
    type Worker = SaltWorker;
    type Tx<'w> = SaltTx<'w, K>;

    const INFO: ProtocolInfo = K::INFO;

    fn open(db: Database<SaltMeta>, config: &ProtocolConfig) -> Self {
        Salt {
            db,
            locks: LockTable::default(),
            level: Level::of(config),
            delay: HoldDelay::of(config),
            timeout: config.lock_wait_timeout,
            ids: IdLedger::new(),
            _kind: std::marker::PhantomData,
        }
    }
    fn db(&self) -> &Database<SaltMeta> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> SaltWorker {
        SaltWorker::new(self.ids.lease(id), recording)
    }
    fn recorder(w: &mut SaltWorker) -> &mut Recorder {
        w.recorder()
    }
    fn begin<'w>(&'w self, worker: &'w mut SaltWorker) -> SaltTx<'w, K> {
        SaltTx::begin(self, worker, false)
    }

    fn execute<P: Program>(&self, worker: &mut SaltWorker, program: &mut P) -> TxResult<()> {
        if K::BASE {
            let mut starts = Vec::new();
            program.alkaline_starts(&mut starts);
            if !starts.is_empty() {
                return self.run_base(worker, program, &starts);
            }
        }
        let mut tx = self.begin(worker);
        run_pieces(program, &mut tx)?;
        tx.commit()
    }
}

/// `salt`.
pub type SaltProtocol = Salt<Base>;
/// `salt-local`.
pub type SaltLocal = Salt<Local>;
/// `acid-2pl`.
pub type Acid2pl = Salt<AcidOnly>;
