//! The DIBS transaction: a predicate lock per request, taken before the request runs (the growing
//! phase of §3.1's worker loop), then the request itself on the in-place executor with its undo
//! log on; every lock released only after the commit or the rollback (strict 2PL).
//!
//! * Reads of a table that is read-only once loaded take no lock: no write lock on it can exist.
//!   Writes to it are refused ([`crate::txn::refuse_write`]) before any lock is taken.
//! * A lock wait that gives up — on a waits-for cycle ([`super::waits`]) or by the timeout plus
//!   jitter of `--dibs-deadlock timeout` — rolls the transaction back and
//!   releases its locks *before* the call returns `AbortReason::Deadlock`; the harness's retry
//!   loop restarts it (after its randomized backoff). Any failing call does the same, so the handle
//!   holds nothing afterwards and later calls report the same abort.

use super::requests::{self, key, template, DELETE, GET, INSERT, SCAN, UPDATE};
use super::waits;
use super::{Dibs, Variant};
use crate::check::TxnId;
use crate::protocols::kit::inplace::{InPlace, Install};
use crate::storage::{ColumnSet, RowMut, RowRef, Table, TableId, ABSENT};
use crate::txn::predicate::{self, Expr, Predicate};
use crate::txn::{check_live, refuse_write, Abort, AbortReason, Recorder, Tx, TxResult, TxnIds};
use ordo_predicate::{ColumnSet as PredColumns, Error as PlmError, Request, StatementKind};
use std::sync::atomic::Ordering;

/// Per-thread state of [`Dibs`].
pub struct DibsWorker {
    pub(super) ids: TxnIds,
    /// The shared in-place executor: recorder, undo log, row image.
    pub(super) exec: InPlace,
    /// The lock manager's context, kept for all of this worker's transactions (its locks are all
    /// released between two of them).
    pub(super) plm: ordo_predicate::Txn,
    /// The age of this worker's last program transaction if it gave up a wait: its restart keeps
    /// it, so it grows older than newcomers and wins its next cycle (no victim starves).
    pub(super) restart_age: Option<u64>,
}

impl DibsWorker {
    pub(super) fn recorder(&mut self) -> &mut Recorder {
        &mut self.exec.rec
    }

    /// Predicate locks the running transaction holds (tests, diagnostics).
    pub fn locks_held(&self) -> usize {
        self.plm.held()
    }
}

/// How a transaction waits for a predicate lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waits {
    /// An interactive session's: it detects deadlocks, and is older than every program's.
    Session,
    /// A program's under `--dibs-deadlock detect`.
    Detect,
    /// A program's under `--dibs-deadlock timeout`: the timeout plus jitter.
    Timeout,
}

/// A running [`Dibs`] transaction.
pub struct DibsTx<'w, V: Variant> {
    p: &'w Dibs<V>,
    w: &'w mut DibsWorker,
    id: TxnId,
    /// `Some(age)` for a transaction that looks for waits-for cycles as it waits ([`super::waits`]):
    /// interactive ones, and programs' under `--dibs-deadlock detect`; `None` for one that times out
    /// (plus jitter).
    detect: Option<u64>,
    /// `Some` once the transaction was aborted by a failing call.
    aborted: Option<AbortReason>,
    done: bool,
}

impl<'w, V: Variant> DibsTx<'w, V> {
    /// A transaction that waits as `how` says.
    pub(super) fn begin(p: &'w Dibs<V>, w: &'w mut DibsWorker, how: Waits) -> Self {
        let id = w.ids.next_id();
        // Serializable unless the transaction asks for another level (`Tx::request_isolation`).
        w.plm.set_isolation(ordo_predicate::Isolation::Serializable);
        let detect = match how {
            Waits::Session => Some(p.waits.session_age()),
            Waits::Detect => Some(w.restart_age.take().unwrap_or_else(waits::age)),
            Waits::Timeout => None,
        };
        DibsTx {
            p,
            w,
            id,
            detect,
            aborted: None,
            done: false,
        }
    }

    /// Predicate locks the transaction holds (tests, diagnostics).
    pub fn locks_held(&self) -> usize {
        self.w.plm.held()
    }

    /// Aborts now (undo, release) and returns the abort to hand to the caller.
    #[cold]
    fn fail_with(&mut self, a: Abort) -> Abort {
        self.finish(false);
        self.aborted = Some(a.reason);
        a
    }

    #[cold]
    fn fail_detail(&mut self, reason: AbortReason, detail: String) -> Abort {
        self.fail_with(Abort::with_detail(reason, detail))
    }

    /// Fails (aborting the transaction) if `t` is read-only once loaded.
    #[inline]
    fn refuse_write(&mut self, t: &Table<()>) -> TxResult<()> {
        refuse_write(t).map_err(|a| self.fail_with(a))
    }

    /// Fails (aborting the transaction) unless `t` has an ordered index, which a scan needs.
    fn ordered(&mut self, t: &Table<()>) -> TxResult<()> {
        if t.is_ordered() {
            return Ok(());
        }
        Err(self.fail_detail(
            AbortReason::InvalidData,
            format!("{}: scan needs an ordered index", t.name()),
        ))
    }

    /// Ends the transaction: undo (on abort), release every predicate lock, record the outcome.
    fn finish(&mut self, committed: bool) {
        self.w.exec.finish(&self.p.db, committed);
        // Strict 2PL: the locks go only now, after the last write was installed or undone.
        self.p.plm.release(&mut self.w.plm);
        self.w.exec.rec.finish(self.id, committed);
        self.done = true;
    }

    /// Acquires the predicate lock of request `what` on `table` with `params` (over the whole row:
    /// see [`super::requests`] on columns), waiting for earlier conflicting locks. A wait that gives
    /// up aborts the transaction.
    #[inline]
    fn lock(&mut self, table: TableId, what: u32, params: &[i64]) -> TxResult<()> {
        let t = template(table, what);
        self.acquire(|plm, tx, waiter| plm.acquire_prepared_with(tx, t, params, None, waiter))
    }

    /// Acquires the write lock of request `what` (a [`StatementKind`] `kind`) on key `k` of `table`:
    /// the key's template, or — given the tuples the row holds (`Tx::*_described`) — the ad hoc
    /// predicate `c0 = k ∧ tuples`, which conflicts only with the predicates those tuples satisfy.
    /// A description that is not a checked predicate over integer columns locks the key alone
    /// (coarser, never finer).
    fn lock_write(
        &mut self,
        table: TableId,
        what: u32,
        kind: StatementKind,
        k: u64,
        tuples: Option<&Predicate>,
    ) -> TxResult<()> {
        let t = self.p.db.table(table);
        let Some(tuples) = tuples.filter(|p| predicate::check(p, t.schema()).is_ok()) else {
            return self.lock(table, what, &[key(k)]);
        };
        let predicate = Expr::And(vec![Expr::eq(0, key(k)), requests::shift(tuples)]);
        let all = requests::all_columns(t);
        let req = Request {
            relation: table,
            kind,
            predicate: &predicate,
            read: all,
            write: all,
        };
        self.acquire(|plm, tx, waiter| plm.acquire_with(tx, req, waiter))
    }

    /// Acquires the ad hoc predicate lock of a `kind` request over the rows of `table` that satisfy
    /// `pred` (schema columns; whole rows, as [`Self::lock`]), freed of the columns in `writes`
    /// ([`ordo_predicate::Expr::freed`]: a row an update changes may leave `pred` for another
    /// lock's predicate). A predicate that is malformed or names a column that is not an integer
    /// column of the table aborts with `InvalidData`.
    fn lock_where(
        &mut self,
        table: TableId,
        kind: StatementKind,
        pred: &Predicate,
        writes: ColumnSet,
    ) -> TxResult<()> {
        let t = self.p.db.table(table);
        if let Err(e) = predicate::check(pred, t.schema()) {
            return Err(self.fail_detail(
                AbortReason::InvalidData,
                format!("{}: predicate {pred}: {e}", t.name()),
            ));
        }
        let predicate = requests::shift(&pred.freed(writes.0));
        let all = requests::all_columns(t);
        let write = match kind {
            StatementKind::Select => PredColumns::NONE,
            _ => all,
        };
        let req = Request {
            relation: table,
            kind,
            predicate: &predicate,
            read: all,
            write,
        };
        self.acquire(|plm, tx, waiter| plm.acquire_with(tx, req, waiter))
    }

    /// Runs one acquisition with this transaction's way of waiting ([`waits::Detect`]).
    #[inline]
    fn acquire(
        &mut self,
        f: impl FnOnce(
            &ordo_predicate::LockManager,
            &mut ordo_predicate::Txn,
            &mut waits::Detect<'_>,
        ) -> Result<(), PlmError>,
    ) -> TxResult<()> {
        let me = self.w.plm.id();
        let mut waiter = waits::Detect::new(&self.p.waits, me, self.detect, self.p.detect_timeout);
        let r = f(&self.p.plm, &mut self.w.plm, &mut waiter);
        let victim = waiter.victim;
        drop(waiter);
        match r {
            Ok(()) => Ok(()),
            Err(e) => Err(self.lock_failed(e, victim)),
        }
    }

    fn update_locking<R>(
        &mut self,
        table: TableId,
        k: u64,
        images: Option<&Predicate>,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        self.refuse_write(t)?;
        self.lock_write(table, UPDATE, StatementKind::Update, k, images)?;
        let id = self.id;
        Ok(self
            .w
            .exec
            .update_key(t, k, None, cols, |_| Install::Swap(id), f))
    }

    fn insert_locking(
        &mut self,
        table: TableId,
        k: u64,
        tuple: Option<&Predicate>,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        self.refuse_write(t)?;
        self.lock_write(table, INSERT, StatementKind::Insert, k, tuple)?;
        let (rid, _) = t.get_or_create(k);
        if t.version(rid).load(Ordering::Acquire) & ABSENT == 0 {
            return Err(
                self.fail_detail(AbortReason::DuplicateKey, format!("{}: key {k}", t.name()))
            );
        }
        self.w.exec.insert(t, k, rid, Install::Swap(self.id), f);
        Ok(())
    }

    fn delete_locking(
        &mut self,
        table: TableId,
        k: u64,
        tuple: Option<&Predicate>,
    ) -> TxResult<bool> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        self.refuse_write(t)?;
        self.lock_write(table, DELETE, StatementKind::Delete, k, tuple)?;
        let Some(rid) = t.lookup(k) else {
            self.w.exec.rec.read(table, k, ABSENT);
            return Ok(false);
        };
        let v = t.version(rid).load(Ordering::Acquire);
        if v & ABSENT != 0 {
            self.w.exec.rec.read(table, k, v);
            return Ok(false);
        }
        self.w
            .exec
            .delete(t, k, rid, Install::Swap(self.id | ABSENT));
        Ok(true)
    }

    #[cold]
    fn lock_failed(&mut self, e: PlmError, victim: bool) -> Abort {
        if matches!(e, PlmError::Timeout) && self.detect.is_some_and(|a| a >= waits::PROGRAM) {
            self.w.restart_age = self.detect;
        }
        match e {
            PlmError::Timeout if victim => self.fail_detail(
                AbortReason::Deadlock,
                "the youngest transaction of a waits-for cycle".into(),
            ),
            PlmError::Timeout => self.fail_detail(
                AbortReason::Deadlock,
                "timed out waiting for a predicate lock".into(),
            ),
            // Never for the requests built here; refused all the same, never a missed lock.
            e => self.fail_detail(AbortReason::InvalidData, format!("predicate lock: {e}")),
        }
    }
}

impl<V: Variant> Tx for DibsTx<'_, V> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, k: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        if !t.is_read_only() {
            self.lock(table, GET, &[key(k)])?;
        }
        Ok(self.w.exec.get(t, k, None, cols))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        k: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        self.update_locking(table, k, None, cols, f)
    }

    fn update_described<R>(
        &mut self,
        table: TableId,
        k: u64,
        images: &Predicate,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        self.update_locking(table, k, Some(images), cols, f)
    }

    fn insert(&mut self, table: TableId, k: u64, f: impl FnOnce(&mut RowMut<'_>)) -> TxResult<()> {
        self.insert_locking(table, k, None, f)
    }

    fn insert_described(
        &mut self,
        table: TableId,
        k: u64,
        tuple: &Predicate,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        self.insert_locking(table, k, Some(tuple), f)
    }

    fn delete(&mut self, table: TableId, k: u64) -> TxResult<bool> {
        self.delete_locking(table, k, None)
    }

    fn delete_described(&mut self, table: TableId, k: u64, tuple: &Predicate) -> TxResult<bool> {
        self.delete_locking(table, k, Some(tuple))
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
        let t = self.p.db.table(table);
        self.ordered(t)?;
        if lo > hi {
            return Ok(());
        }
        if !t.is_read_only() {
            // The whole range, present keys or not: an insert into it waits (no phantoms).
            let params = [key(lo), key(hi)];
            self.lock(table, SCAN, &params)?;
        }
        self.w.exec.scan(t, lo, hi, cols, f);
        Ok(())
    }

    /// Locks the predicate itself (a `Select` over the rows satisfying it), then walks the table;
    /// a writer of rows outside the predicate does not wait, an insert anywhere does (its values
    /// are not known when it locks). The checker is told of the rows read, not of those the
    /// predicate refused ([`InPlace::scan_filtered`]).
    fn scan_where(
        &mut self,
        table: TableId,
        pred: &Predicate,
        cols: ColumnSet,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        self.ordered(t)?;
        if !t.is_read_only() {
            self.lock_where(table, StatementKind::Select, pred, ColumnSet::NONE)?;
        } else if let Err(e) = predicate::check(pred, t.schema()) {
            return Err(self.fail_detail(AbortReason::InvalidData, format!("{}: {e}", t.name())));
        }
        let filter = predicate::columns(pred);
        self.w.exec.scan_filtered(
            t,
            filter,
            cols.union(filter),
            |row| predicate::satisfies(pred, row),
            f,
        );
        Ok(())
    }

    /// Locks the predicate for an `Update` (one lock, however many rows it names), then updates
    /// every row satisfying it in place.
    fn update_where(
        &mut self,
        table: TableId,
        pred: &Predicate,
        cols: ColumnSet,
        mut f: impl FnMut(&mut RowMut<'_>),
    ) -> TxResult<u64> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        self.refuse_write(t)?;
        self.ordered(t)?;
        self.lock_where(table, StatementKind::Update, pred, cols)?;
        let mut keys = Vec::new();
        let filter = predicate::columns(pred);
        self.w.exec.scan_filtered(
            t,
            filter,
            filter,
            |row| predicate::satisfies(pred, row),
            |k, _| {
                keys.push(k);
                true
            },
        );
        let id = self.id;
        for &k in &keys {
            self.w
                .exec
                .update_key(t, k, None, cols, |_| Install::Swap(id), &mut f);
        }
        Ok(keys.len() as u64)
    }

    /// §5.2: the lock manager's rules for `level` from the next request on.
    fn request_isolation(&mut self, level: ordo_predicate::Isolation) {
        self.w.plm.set_isolation(level);
    }

    /// Read committed releases the statement's read locks here (§5.2).
    fn end_statement(&mut self) {
        if !self.done {
            self.p.plm.end_statement(&mut self.w.plm);
        }
    }

    fn commit(mut self) -> TxResult<()> {
        check_live(self.aborted)?;
        self.finish(true);
        Ok(())
    }

    fn abort(mut self) {
        if !self.done {
            self.finish(false);
        }
    }
}

impl<V: Variant> Drop for DibsTx<'_, V> {
    fn drop(&mut self) {
        if !self.done {
            self.finish(false);
        }
    }
}
