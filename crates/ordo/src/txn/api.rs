//! The interactive transaction API every interactive protocol implements.
//!
//! ```ignore
//! let mut tx = protocol.begin(&mut worker);
//! let balance = tx.get(ACCOUNTS, 7, ColumnSet::one(BAL))?.map(|r| r.int(BAL));
//! tx.update(ACCOUNTS, 7, ColumnSet::one(BAL), |row| row.set_int(BAL, row.int(BAL) - 10))?;
//! tx.commit()?;
//! ```
//!
//! Every operation names the table, the key (or key range) and the columns it touches — the same things
//! a [`super::Program`] declares — so protocols can lock, validate and record at column and key
//! granularity. An `Err(Abort)` from any call means the protocol has already aborted the transaction:
//! drop the handle (or call [`Tx::abort`]) and, if [`Abort::is_retryable`], run it again.
//!
//! [`Abort::is_retryable`]: super::Abort::is_retryable

use super::error::TxResult;
use super::predicate::{self, Predicate};
use crate::check::TxnId;
use crate::storage::{ColumnSet, RowMut, RowRef, TableId};

/// A running transaction.
pub trait Tx {
    /// This transaction's id (unique, nonzero; the name of the versions it writes).
    fn id(&self) -> TxnId;

    /// Reads columns `cols` of the record with key `key`; `None` if it does not exist.
    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>>;

    /// Read-modify-write: reads columns `cols` of the record, lets `f` change them, writes back what `f`
    /// set. `None` (and `f` is not called) if the record does not exist.
    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>>;

    /// Inserts a record; `f` fills its columns (unset columns are zero / empty). Aborts with
    /// `DuplicateKey` if the key is present.
    fn insert(&mut self, table: TableId, key: u64, f: impl FnOnce(&mut RowMut<'_>))
        -> TxResult<()>;

    /// Deletes a record; `false` if it did not exist.
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool>;

    /// Visits the present records with keys in `lo..=hi` in ascending key order, reading columns `cols`,
    /// until `f` returns `false`. Protected against phantoms up to the last key visited (requires an
    /// ordered table).
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()>;

    /// Visits the present records of `table` that satisfy `pred` (a [`predicate::check`]ed
    /// predicate over the table's integer columns), in ascending key order, reading columns `cols`
    /// (and those `pred` reads), until `f` returns `false`. Protected against phantoms: no record
    /// satisfying `pred` appears, disappears or changes before the transaction ends. By default a
    /// scan of every key that keeps the rows satisfying `pred` (requires an ordered table); DIBS
    /// locks the predicate instead.
    fn scan_where(
        &mut self,
        table: TableId,
        pred: &Predicate,
        cols: ColumnSet,
        mut f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        let cols = cols.union(predicate::columns(pred));
        self.scan(table, 0, u64::MAX, cols, |k, row| {
            !predicate::satisfies(pred, &row) || f(k, row)
        })
    }

    /// Read-modify-writes every present record of `table` that satisfies `pred` (as in
    /// [`Tx::scan_where`]) with `f` over columns `cols`; returns how many. By default
    /// [`Tx::scan_where`] for the keys, then [`Tx::update`] of each.
    fn update_where(
        &mut self,
        table: TableId,
        pred: &Predicate,
        cols: ColumnSet,
        mut f: impl FnMut(&mut RowMut<'_>),
    ) -> TxResult<u64> {
        let mut keys = Vec::new();
        self.scan_where(table, pred, ColumnSet::NONE, |k, _| {
            keys.push(k);
            true
        })?;
        for &k in &keys {
            self.update(table, k, cols, &mut f)?;
        }
        Ok(keys.len() as u64)
    }

    /// [`Tx::insert`] of a record whose integer columns are known before it is written: `tuple` is
    /// a predicate over the table's integer columns ([`predicate::check`]ed) that the new row
    /// satisfies — for a row `(7, 'x', 3)`, `c0 = 7 ∧ c2 = 3`. A predicate lock manager locks it
    /// instead of the key alone, so the insert conflicts only with the predicates the new row can
    /// satisfy (DIBS, §2.1: an `INSERT`'s predicate is its values). By default a plain insert.
    fn insert_described(
        &mut self,
        table: TableId,
        key: u64,
        tuple: &Predicate,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        let _ = tuple;
        self.insert(table, key, f)
    }

    /// [`Tx::update`] of a record read earlier in this transaction, with `images` a predicate over
    /// the table's integer columns that the row satisfies both before and after the update (for
    /// an update of `c2` from 3 to 15: `c0 = 7 ∧ (c2 = 3 ∨ c2 = 15)`). The caller read the row
    /// through this transaction, so it is the one the update changes. By default a plain update.
    fn update_described<R>(
        &mut self,
        table: TableId,
        key: u64,
        images: &Predicate,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        let _ = images;
        self.update(table, key, cols, f)
    }

    /// [`Tx::delete`] of a record read earlier in this transaction, with `tuple` a predicate over the
    /// table's integer columns that it satisfies. By default a plain delete.
    fn delete_described(&mut self, table: TableId, key: u64, tuple: &Predicate) -> TxResult<bool> {
        let _ = tuple;
        self.delete(table, key)
    }

    /// Asks for isolation level `level` from the next request on: a protocol whose isolation is a
    /// choice per transaction (DIBS, §5.2) takes it; every other runs at its own level and ignores
    /// it (the default). `BEGIN ISOLATION LEVEL …` in `ordo sql` and `ordo spec`.
    fn request_isolation(&mut self, level: predicate::Isolation) {
        let _ = level;
    }

    /// The end of one statement of an interactive transaction: read committed releases its read
    /// locks here (DIBS, §5.2). By default nothing.
    fn end_statement(&mut self) {}

    /// Tries to commit. On `Err` the transaction was aborted.
    fn commit(self) -> TxResult<()>;

    /// Aborts, undoing every write.
    fn abort(self);
}
