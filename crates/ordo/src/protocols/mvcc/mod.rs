//! `rc`, `si`, `ssi` — multi-version concurrency control: read committed, snapshot isolation, and
//! Serializable Snapshot Isolation (Michael Cahill, "Serializable Isolation for Snapshot Databases",
//! PhD thesis, Sydney 2009; SIGMOD 2008 with Röhm and Fekete).
//!
//! ## The idea
//!
//! Every record keeps its committed versions, each stamped with its writer's commit timestamp. A
//! transaction reads the versions committed before it began — its **snapshot** — so readers never block
//! writers and writers never block readers. Writers exclude each other: the first to write a record
//! holds its EXCLUSIVE lock until it finishes, and under SI a writer that meets a version committed after
//! its snapshot, or a lock whose holder then commits, aborts (**first-updater-wins**, typed
//! [`AbortReason::UpdateConflict`]). That rules out lost updates but not **write skew**: two transactions
//! each read what the other writes, and both commit.
//!
//! SSI adds what makes SI serializable. Between concurrent SI transactions only **rw-antidependencies**
//! (`T1` read a version older than one `T2` wrote) can point "backwards", and every non-serializable
//! history has two consecutive ones, `T_in →rw T_pivot →rw T_out`, with `T_out` committing first (Fekete
//! et al. 2005). SSI detects every rw edge while transactions run — a reader takes a **SIREAD lock** that
//! blocks nothing but lets later writers find it; a reader that meets a newer version or an EXCLUSIVE
//! lock finds the writer — and aborts a pivot, typed [`AbortReason::Unsafe`] (SQLSTATE 40001), before a
//! cycle can form. Read committed (`rc`) runs on the same store: every statement reads the newest
//! committed versions, writes still exclude.
//!
//! ## Cahill's pseudocode (Figs 3.1–3.5) and where it lives
//!
//! ```text
//!  begin(T)                       MvccTx::snapshot       at the first operation (as PostgreSQL):
//!                                                        clock::Clock::begin publishes the snapshot
//!  read(T, x)           Fig 3.4   MvccTx::read_version   SIREAD lock (ssi::SsiShared::siread),
//!                                                        EXCLUSIVE-lock check, newer-version check
//!  write(T, x, xNew)    Fig 3.5   MvccTx::lock_for_write FUW (SI), then SIREAD owners → markConflict,
//!                                                        range locks → ssi::SsiShared::check_ranges
//!  markConflict         Fig 3.3   ssi::SsiShared::mark_conflict   (with §3.6 and §3.7)
//!  commit(T)            Fig 3.2   MvccTx::commit         ssi::SsiShared::commit (atomic check + cts),
//!                                                        install versions, retain / clean up
//!  scans (§3.5)                   MvccTx::scan           range SIREAD lock before walking the index
//!  queries at SI (§3.8)           MvccTx::run_as_query_at_si
//! ```
//!
//! Tables that are read-only once loaded ([`crate::storage::TableSpec::read_only`]) are read in place
//! with no latch and, under SSI, no SIREAD or range lock: no transaction can write them, so no
//! rw-antidependency can start at such a read. Writes to them are refused (`InvalidData`).
//!
//! ## Files
//! * [`clock`] — timestamps, published snapshots, the GC horizon;
//! * [`record`] — the version chain beside each row, visibility, garbage collection;
//! * [`state`] — the shared transaction record (status, commit timestamp, conflicts);
//! * [`ssi`] — SIREAD locks, markConflict, the commit check, retention and cleanup;
//! * [`spin`] — the spin lock of the short critical sections (released with a plain store);
//! * `txn` — the [`Tx`](crate::txn::Tx) implementation shared by the three levels.
//!
//! ## Recording for the checker
//! A read records the version word of the version it saw (its writer's id), a write records the
//! in-place version it replaced at install, so the checker sees the exact version order.

pub mod clock;
pub mod record;
pub mod spin;
pub mod ssi;
pub mod state;
mod txn;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_schedules;

pub use record::MvMeta;
pub use txn::{MvccTx, MvccWorker};

use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{AbortReason, IdLedger, Recorder};
use std::marker::PhantomData;
use std::sync::Arc;

/// Which isolation level an [`Mvcc`] runs.
pub trait Mode: Send + Sync + 'static {
    const INFO: ProtocolInfo;
    /// Serializable SI: SIREAD locks and markConflict.
    const SSI: bool;
    /// Read committed: a fresh snapshot per statement, no first-updater-wins.
    const RC: bool;
}

/// Snapshot isolation with first-updater-wins.
pub struct Si;
/// Cahill's Serializable Snapshot Isolation.
pub struct Ssi;
/// Read committed on the multi-version store.
pub struct Rc;

impl Mode for Si {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "si",
        summary:
            "snapshot isolation: versioned reads, first-updater-wins writes (allows write skew)",
        paper: "Berenson et al., SIGMOD 1995; Cahill 2009 ch. 2",
        isolation: Isolation::SnapshotIsolation,
        interactive: Interactive::Concurrent,
        knobs: &[],
    };
    const SSI: bool = false;
    const RC: bool = false;
}

impl Mode for Ssi {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "ssi",
        summary: "serializable SI: SIREAD locks, rw-conflict flags, abort the pivot of a dangerous structure",
        paper: "Cahill, PhD thesis 2009 (Cahill, Röhm, Fekete, SIGMOD 2008)",
        isolation: Isolation::Serializable,
        interactive: Interactive::Concurrent,
        knobs: &[],
    };
    const SSI: bool = true;
    const RC: bool = false;
}

impl Mode for Rc {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "rc",
        summary:
            "read committed: each statement reads the newest committed versions; writes exclude",
        paper: "ANSI SQL-92 / Adya PL-2, on the MVCC store",
        isolation: Isolation::ReadCommitted,
        interactive: Interactive::Concurrent,
        knobs: &[],
    };
    const SSI: bool = false;
    const RC: bool = true;
}

/// A multi-version protocol at isolation level `M`.
pub struct Mvcc<M: Mode> {
    db: Database<MvMeta>,
    clock: clock::Clock,
    ssi: ssi::SsiShared,
    /// Every transaction record, kept for the protocol's lifetime (see `state`); shared with the
    /// workers, which park their records in it when they end.
    pool: Arc<state::Pool>,
    /// Where each ended worker's transaction ids stopped.
    ids: Arc<IdLedger>,
    _mode: PhantomData<M>,
}

/// How much multi-version state is live (garbage collection made observable).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Old versions in record chains.
    pub versions: i64,
    /// Point SIREAD locks held.
    pub sireads: i64,
    /// Range SIREAD locks held.
    pub range_locks: usize,
    /// Committed transactions retained for conflict detection.
    pub retained: usize,
    /// Transaction records allocated (each worker recycles its released ones).
    pub records: usize,
    /// Workers' snapshot slots registered: the most workers alive at once (an ended worker's slot,
    /// retention queues and records go to the next one).
    pub slots: usize,
}

impl<M: Mode> Mvcc<M> {
    /// The live multi-version state now.
    pub fn gc_stats(&self) -> GcStats {
        GcStats {
            versions: self.clock.versions(),
            sireads: self.ssi.sireads(),
            range_locks: self.ssi.range_locks(),
            retained: self.ssi.retained(),
            records: self.pool.allocated(),
            slots: self.clock.slots(),
        }
    }
}

impl<M: Mode> Protocol for Mvcc<M> {
    type Meta = MvMeta;
    type Worker = MvccWorker;
    type Tx<'w> = MvccTx<'w, M>;

    const INFO: ProtocolInfo = M::INFO;

    fn open(db: Database<MvMeta>, _config: &ProtocolConfig) -> Self {
        let tables = db.tables().len();
        Mvcc {
            db,
            clock: clock::Clock::default(),
            ssi: ssi::SsiShared::new(tables),
            pool: Arc::default(),
            ids: IdLedger::new(),
            _mode: PhantomData,
        }
    }
    fn db(&self) -> &Database<MvMeta> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> MvccWorker {
        MvccWorker::new(
            self.ids.lease(id),
            recording,
            self.clock.register(),
            self.ssi.register(),
            self.pool.clone(),
        )
    }
    fn recorder(w: &mut MvccWorker) -> &mut Recorder {
        &mut w.rec
    }
    fn begin<'w>(&'w self, w: &'w mut MvccWorker) -> MvccTx<'w, M> {
        MvccTx::new(self, w)
    }
}

/// The abort reasons these protocols produce (for documentation and tests).
pub const ABORTS: [AbortReason; 3] = [
    AbortReason::Deadlock,
    AbortReason::UpdateConflict,
    AbortReason::Unsafe,
];
