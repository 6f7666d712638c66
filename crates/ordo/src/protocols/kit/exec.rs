//! Executing a transaction whose locks are already held.
//!
//! In Calvin, deterministic VLL, deadlock-free 2PL, ordered 2PL, H-Store and the partitioned
//! engines a transaction runs only once *every* lock it needs is granted (a key lock, a unit, or its
//! partitions), so execution itself takes no locks: [`ExecTx`] runs the shared in-place executor
//! ([`super::inplace`]), which reads and writes the rows in place, keeps an undo log for aborts by
//! the program's own logic, and records the history for the checker. What it may touch is its
//! [`Cover`]; an operation outside it means the reconnaissance pass guessed wrong (the data changed,
//! VLL §2.6), so the transaction aborts with the retryable [`AbortReason::Validation`], releases,
//! and is planned and ordered again.
//!
//! The cover is what the transaction was granted: key locks ([`Cover::Keys`]), key locks and the
//! conflict units a program names ([`Cover::Units`]: ordered locking's unit locks), partitions, or
//! the whole database.
//!
//! Reads of read-only tables ([`crate::storage::TableSpec::read_only`]) need no cover (they take no
//! lock); a write to one, declared or not, is refused with `InvalidData` ([`refuse_write`]).

use super::inplace::{InPlace, Install};
use super::lock_request::{find, LockRequest, Mode};
use super::partition_map::PartitionMap;
use crate::check::TxnId;
use crate::storage::{ColumnSet, Database, RowId, RowMut, RowRef, Table, TableId, ABSENT};
use crate::txn::{
    check_live, refuse_write, Abort, AbortReason, Access, ConflictUnits, Recorder, Target, Tx,
    TxResult, TxnIds,
};
use std::sync::atomic::Ordering;

/// What a running transaction holds, so may touch.
#[derive(Clone, Copy, Debug)]
pub enum Cover<'a> {
    /// Everything (an interactive transaction that holds the whole database).
    All,
    /// These key locks (normalized: see [`super::plan::locks_of`]), granted for these accesses.
    Keys {
        locks: &'a [LockRequest],
        accesses: &'a [Access],
    },
    /// Every key whose partition (by `map`) has its `held` bit set.
    Partitions { held: &'a [u64], map: PartitionMap },
    /// Key locks as in [`Cover::Keys`], and conflict units: a key of a table that `of` groups into
    /// units (at grain `coarse`, see [`ConflictUnits`]) is covered by its unit's lock in `units`,
    /// whether the transaction declared that key or not — the unit holds all of them.
    Units {
        locks: &'a [LockRequest],
        units: &'a [UnitLock],
        accesses: &'a [Access],
        of: ConflictUnits,
        coarse: bool,
    },
}

/// A lock on one conflict unit ([`ConflictUnits`]) of a table, as [`Cover::Units`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnitLock {
    pub table: TableId,
    pub unit: u64,
    pub mode: Mode,
}

/// Whether `units` hold unit `unit` of `table` (`write`: exclusively).
#[inline]
fn unit_held(units: &[UnitLock], table: TableId, unit: u64, write: bool) -> bool {
    units
        .iter()
        .any(|l| l.table == table && l.unit == unit && (l.mode == Mode::Exclusive || !write))
}

impl Cover<'_> {
    fn partition_held(held: &[u64], p: u64) -> bool {
        held[(p / 64) as usize] & (1 << (p % 64)) != 0
    }

    /// Whether `key` of `table` may be read (`write`: written).
    #[inline]
    pub fn allows(&self, table: TableId, key: u64, write: bool) -> bool {
        match *self {
            Cover::All => true,
            Cover::Keys { locks, .. } => {
                find(locks, table, key).is_some_and(|i| locks[i].mode == Mode::Exclusive || !write)
            }
            Cover::Partitions { held, map } => Self::partition_held(held, map.of(table, key)),
            Cover::Units {
                locks,
                units,
                of,
                coarse,
                ..
            } => match of(table, key, coarse) {
                Some(u) => unit_held(units, table, u, write),
                None => Cover::Keys {
                    locks,
                    accesses: &[],
                }
                .allows(table, key, write),
            },
        }
    }

    /// Whether every key in `lo..=hi` of `table` may be read (a scan).
    pub fn allows_range(&self, table: TableId, lo: u64, hi: u64) -> bool {
        match *self {
            Cover::All => true,
            Cover::Keys { accesses, .. } => accesses.iter().any(|a| {
                a.table == table
                    && matches!(a.target, Target::Range { lo: l, hi: h } if l <= lo && hi <= h)
            }),
            Cover::Units {
                units,
                accesses,
                of,
                coarse,
                ..
            } => {
                // Units are contiguous ranges of keys: a range with both ends in a held unit lies in it.
                let one_unit = match (of(table, lo, coarse), of(table, hi, coarse)) {
                    (Some(a), Some(b)) => a == b && unit_held(units, table, a, false),
                    _ => false,
                };
                one_unit
                    || Cover::Keys {
                        locks: &[],
                        accesses,
                    }
                    .allows_range(table, lo, hi)
            }
            Cover::Partitions { held, map } => {
                let mut all = true;
                map.range(table, lo, hi, |p| all &= Self::partition_held(held, p));
                all
            }
        }
    }
}

/// Per-thread state of executing transactions: ids and the shared in-place executor (recorder, undo
/// log, row buffer, all reused).
#[derive(Debug)]
pub struct ExecState {
    ids: TxnIds,
    exec: InPlace,
}

impl ExecState {
    pub fn new(ids: TxnIds, recording: bool) -> Self {
        ExecState {
            exec: InPlace::new(ids.worker(), recording, true),
            ids,
        }
    }
    /// A new transaction id of this worker (for a protocol that runs transactions through other
    /// executors too: PWV's batches).
    pub fn next_id(&mut self) -> TxnId {
        self.ids.next_id()
    }
    /// The history recorded for the checker.
    pub fn recorder(&mut self) -> &mut Recorder {
        &mut self.exec.rec
    }
}

/// A transaction executing under locks it already holds. Dropping it uncommitted rolls it back.
pub struct ExecTx<'a, M: Default + Send + Sync> {
    db: &'a Database<M>,
    st: &'a mut ExecState,
    cover: Cover<'a>,
    id: TxnId,
    aborted: Option<AbortReason>,
    done: bool,
}

impl<'a, M: Default + Send + Sync> ExecTx<'a, M> {
    pub fn new(db: &'a Database<M>, st: &'a mut ExecState, cover: Cover<'a>) -> Self {
        let id = st.ids.next_id();
        ExecTx {
            db,
            st,
            cover,
            id,
            aborted: None,
            done: false,
        }
    }

    /// Narrows or widens what the transaction may touch from now on (a protocol that takes its
    /// locks piece by piece grants each piece what it holds by then).
    pub fn set_cover(&mut self, cover: Cover<'a>) {
        self.cover = cover;
    }

    #[inline]
    fn check(&mut self, table: TableId, key: u64, write: bool) -> TxResult<()> {
        check_live(self.aborted)?;
        let db = self.db;
        let t = db.table(table);
        if t.is_read_only() {
            // Read without a lock; never written, even under `Cover::All`.
            return if write { self.refuse_write(t) } else { Ok(()) };
        }
        if self.cover.allows(table, key, write) {
            Ok(())
        } else {
            Err(self.stray(format!("table {table} key {key}")))
        }
    }

    /// A write of read-only table `t`: roll back and refuse it.
    #[cold]
    fn refuse_write(&mut self, t: &Table<M>) -> TxResult<()> {
        let r = refuse_write(t);
        if let Err(a) = &r {
            self.fail(a.reason);
        }
        r
    }

    /// The transaction touched something it did not lock: roll back, and ask for a new plan.
    #[cold]
    fn stray(&mut self, what: String) -> Abort {
        self.fail(AbortReason::Validation);
        Abort::with_detail(
            AbortReason::Validation,
            format!("{what} lies outside the locks planned by reconnaissance"),
        )
    }

    #[cold]
    fn fail(&mut self, reason: AbortReason) {
        self.finish(false);
        self.aborted = Some(reason);
    }

    /// Undo (on abort) and record the outcome.
    fn finish(&mut self, committed: bool) {
        if self.done {
            return;
        }
        let st = &mut *self.st;
        st.exec.finish(self.db, committed);
        st.exec.rec.finish(self.id, committed);
        self.done = true;
    }

    fn slot(&self, t: &Table<M>, key: u64) -> (RowId, u64) {
        let rid = t.lookup(key).unwrap_or_else(|| t.get_or_create(key).0);
        (rid, t.version(rid).load(Ordering::Acquire))
    }
}

impl<M: Default + Send + Sync> Tx for ExecTx<'_, M> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        self.check(table, key, false)?;
        let t = self.db.table(table);
        Ok(self.st.exec.get(t, key, None, cols))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        self.check(table, key, true)?;
        let t = self.db.table(table);
        let word = self.id;
        // The cover excludes every other writer: the word read is the one replaced.
        Ok(self
            .st
            .exec
            .update_key(t, key, None, cols, |prev| Install::Over { word, prev }, f))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        self.check(table, key, true)?;
        let db = self.db;
        let t = db.table(table);
        let (rid, v) = self.slot(t, key);
        if v & ABSENT == 0 {
            self.fail(AbortReason::DuplicateKey);
            return Err(Abort::with_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            ));
        }
        self.st.exec.insert(
            t,
            key,
            rid,
            Install::Over {
                word: self.id,
                prev: v,
            },
            f,
        );
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.check(table, key, true)?;
        let t = self.db.table(table);
        let Some(rid) = t.lookup(key) else {
            self.st.exec.rec.read(table, key, ABSENT);
            return Ok(false);
        };
        let v = t.version(rid).load(Ordering::Acquire);
        if v & ABSENT != 0 {
            self.st.exec.rec.read(table, key, v);
            return Ok(false);
        }
        self.st.exec.delete(
            t,
            key,
            rid,
            Install::Over {
                word: self.id | ABSENT,
                prev: v,
            },
        );
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        check_live(self.aborted)?;
        let t = self.db.table(table);
        if !t.is_ordered() {
            self.fail(AbortReason::InvalidData);
            return Err(Abort::with_detail(
                AbortReason::InvalidData,
                format!("{}: scan needs an ordered index", t.name()),
            ));
        }
        if lo > hi {
            return Ok(());
        }
        if !t.is_read_only() && !self.cover.allows_range(table, lo, hi) {
            return Err(self.stray(format!("table {table} range {lo}..={hi}")));
        }
        self.st.exec.scan(t, lo, hi, cols, f);
        Ok(())
    }

    fn commit(mut self) -> TxResult<()> {
        check_live(self.aborted)?;
        self.finish(true);
        Ok(())
    }

    fn abort(mut self) {
        self.finish(false);
    }
}

impl<M: Default + Send + Sync> Drop for ExecTx<'_, M> {
    fn drop(&mut self) {
        self.finish(false);
    }
}

/// An interactive transaction that holds an exclusive right `H` over the database (a barrier in the
/// global order, every partition's lock or latch) while its [`ExecTx`] runs with [`Cover::All`].
/// The right is released when the handle drops, after the transaction has committed or rolled back.
pub struct HoldingTx<'w, M: Default + Send + Sync, H> {
    tx: Option<ExecTx<'w, M>>,
    // Dropped after `tx` (see `Drop`), so nothing else runs before the rollback is done.
    _held: H,
}

impl<'w, M: Default + Send + Sync, H> HoldingTx<'w, M, H> {
    /// `held` must already be acquired; `tx` runs under it.
    pub fn new(tx: ExecTx<'w, M>, held: H) -> Self {
        HoldingTx {
            tx: Some(tx),
            _held: held,
        }
    }
    fn tx(&mut self) -> &mut ExecTx<'w, M> {
        // `tx` is only taken by commit, which consumes the handle.
        self.tx.as_mut().expect("a live transaction")
    }
}

impl<M: Default + Send + Sync, H> Tx for HoldingTx<'_, M, H> {
    fn id(&self) -> TxnId {
        self.tx.as_ref().map_or(0, |t| t.id())
    }
    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        self.tx().get(table, key, cols)
    }
    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        self.tx().update(table, key, cols, f)
    }
    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        self.tx().insert(table, key, f)
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.tx().delete(table, key)
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        self.tx().scan(table, lo, hi, cols, f)
    }
    fn commit(mut self) -> TxResult<()> {
        self.tx.take().expect("a live transaction").commit()
    }
    fn abort(self) {}
}

impl<M: Default + Send + Sync, H> Drop for HoldingTx<'_, M, H> {
    fn drop(&mut self) {
        // Roll back (if still live) while the right is held; `_held` is released afterwards.
        drop(self.tx.take());
    }
}
