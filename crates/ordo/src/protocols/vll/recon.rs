//! Dependent transactions (§2.4): learning the read/write set by reconnaissance.
//!
//! VLL must request every lock before a transaction runs, so it needs the whole access set up front.
//! When a program's declarations do not depend on earlier pieces ([`Program::depends_on`] is empty for
//! every piece) they are simply collected. Otherwise — TPC-C Payment by customer last name, any
//! secondary-index lookup — [`gather`] runs a **reconnaissance** pass: the pieces run in order against
//! [`ReconTx`], at no isolation (reads see the latest installed values, writes go to a private overlay
//! and are thrown away), and each piece's declaration is taken after the pieces before it ran, exactly
//! as an interactive execution would produce it.
//!
//! The locks are then requested for what reconnaissance found. If, during the real execution, the
//! transaction touches anything those locks do not cover (the index changed in between), it aborts
//! with [`AbortReason::Validation`](crate::txn::AbortReason::Validation), releases everything, and is
//! resubmitted as a new transaction (new id, new reconnaissance) — see `VllTx` and the main loop.

use crate::check::TxnId;
use crate::storage::{ColumnSet, Database, RowMut, RowRef, TableId, ABSENT};
use crate::txn::{Access, Program, Tx, TxResult};
use std::sync::atomic::Ordering;

/// Private writes of a reconnaissance run: (table, key) → row image, or `None` once deleted.
type Overlay = Vec<((TableId, u64), Option<Vec<u64>>)>;

/// Reusable buffers for [`gather`].
#[derive(Default)]
pub struct ReconScratch {
    deps: Vec<usize>,
    overlay: Overlay,
    buf: Vec<u64>,
}

/// Collects the accesses of `program` into `out`; runs a reconnaissance pass when a declaration
/// depends on earlier pieces. Returns whether it did. With `prefetch`, a reconnaissance pass is
/// preceded by [`crate::txn::prefetch_declared`] (what the harness would have done), so that its reads
/// do not miss one after another; without one, prefetching is the caller's (its planning's).
pub fn gather<P: Program, M: Default + Send + Sync>(
    program: &mut P,
    db: &Database<M>,
    out: &mut Vec<Access>,
    scratch: &mut ReconScratch,
    prefetch: bool,
) -> bool {
    out.clear();
    let n = program.pieces();
    let independent = (0..n).all(|i| {
        scratch.deps.clear();
        program.depends_on(i, &mut scratch.deps);
        scratch.deps.is_empty()
    });
    if independent {
        for i in 0..n {
            program.declare(i, out);
        }
        return false;
    }
    if prefetch {
        crate::txn::prefetch_declared(program, db);
    }
    scratch.overlay.clear();
    let mut tx = ReconTx {
        db,
        overlay: &mut scratch.overlay,
        buf: &mut scratch.buf,
    };
    for i in 0..n {
        program.declare(i, out);
        // A piece that aborts here (its own logic, on unisolated data) ends reconnaissance: the real run
        // aborts at the same point under locks, or touches something undeclared and is resubmitted.
        if program.run_piece(i, &mut tx).is_err() {
            break;
        }
    }
    true
}

/// The reconnaissance transaction: reads without isolation, writes to a private overlay.
pub struct ReconTx<'a, M> {
    db: &'a Database<M>,
    overlay: &'a mut Overlay,
    buf: &'a mut Vec<u64>,
}

impl<M: Default + Send + Sync> ReconTx<'_, M> {
    /// Loads the current image of (table, key) into `buf`: the overlay first, then the table.
    fn load(&mut self, table: TableId, key: u64) -> bool {
        let t = self.db.table(table);
        self.buf.clear();
        self.buf.resize(t.schema().row_words(), 0);
        if let Some((_, img)) = self.overlay.iter().find(|(k, _)| *k == (table, key)) {
            return match img {
                Some(img) => {
                    self.buf.copy_from_slice(img);
                    true
                }
                None => false,
            };
        }
        let Some(rid) = t.lookup(key) else {
            return false;
        };
        if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 {
            return false;
        }
        t.read_into(rid, t.schema().all(), self.buf);
        true
    }
    fn put(&mut self, table: TableId, key: u64, img: Option<Vec<u64>>) {
        match self.overlay.iter_mut().find(|(k, _)| *k == (table, key)) {
            Some(e) => e.1 = img,
            None => self.overlay.push(((table, key), img)),
        }
    }
}

impl<M: Default + Send + Sync> Tx for ReconTx<'_, M> {
    fn id(&self) -> TxnId {
        0
    }
    fn get(&mut self, table: TableId, key: u64, _: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        if !self.load(table, key) {
            return Ok(None);
        }
        Ok(Some(RowRef::new(self.db.table(table).schema(), self.buf)))
    }
    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        _: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        if !self.load(table, key) {
            return Ok(None);
        }
        let r = f(&mut RowMut::new(self.db.table(table).schema(), self.buf));
        let img = self.buf.clone();
        self.put(table, key, Some(img));
        Ok(Some(r))
    }
    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        let t = self.db.table(table);
        let mut img = vec![0; t.schema().row_words()];
        f(&mut RowMut::new(t.schema(), &mut img));
        self.put(table, key, Some(img));
        Ok(())
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let present = self.load(table, key);
        self.put(table, key, None);
        Ok(present)
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        mut f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        // The table's present keys (the overlay's inserts and deletes are not merged into scans: a
        // difference shows up as an undeclared access in the real run).
        let t = self.db.table(table);
        self.buf.clear();
        self.buf.resize(t.schema().row_words(), 0);
        for (k, rid) in t.range(lo, hi) {
            if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 {
                continue;
            }
            t.read_into(rid, cols, self.buf);
            if !f(k, RowRef::new(t.schema(), self.buf)) {
                break;
            }
        }
        Ok(())
    }
    fn commit(self) -> TxResult<()> {
        Ok(())
    }
    fn abort(self) {}
}
