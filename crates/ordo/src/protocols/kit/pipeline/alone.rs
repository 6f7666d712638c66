//! A transaction that runs **alone**, holding the whole database: an interactive transaction
//! ([`crate::protocols::Protocol::begin`]: arbitrary code, no pieces to analyse), or a program with
//! a key range too wide to lock key by key (TPC-C's Delivery scans NEW_ORDER up to a fence row).
//!
//! It holds the kit's database-wide [`Barrier`](crate::protocols::kit::barrier::Barrier)
//! exclusive; every piece-wise transaction holds it shared from its first piece until it has left
//! every access list, so an exclusive holder finds every list empty and every record committed,
//! and runs on the rows directly ([`PieceTx`] with [`Cover::All`]), undoing its own writes on
//! abort.

use crate::check::TxnId;
use crate::protocols::kit::barrier::Exclusive;
use crate::protocols::kit::exec::Cover;
use crate::protocols::kit::pipeline::access_list::PipeRecord;
use crate::protocols::kit::pipeline::piece::{PieceTx, Run};
use crate::storage::{ColumnSet, Database, RowMut, RowRef, TableId};
use crate::txn::{Tx, TxResult};

/// The transaction (see the module docs). Dropping it uncommitted rolls it back.
pub struct Alone<'w> {
    tx: PieceTx<'w>,
    ended: bool,
    // Dropped after the rollback (see `Drop`).
    _all: Exclusive<'w>,
}

impl<'w> Alone<'w> {
    /// Transaction `id`, run by `run`'s executor under `all`.
    pub fn new(
        db: &'w Database<PipeRecord>,
        run: &'w mut Run,
        id: TxnId,
        all: Exclusive<'w>,
    ) -> Self {
        run.id = id;
        run.undo.clear();
        Alone {
            tx: PieceTx {
                db,
                run,
                cover: Cover::All,
                op_delay: std::time::Duration::ZERO,
                guard: None,
            },
            ended: false,
            _all: all,
        }
    }

    /// The same, sleeping `delay` after each operation (`--op-delay-us`).
    pub fn with_op_delay(mut self, delay: std::time::Duration) -> Self {
        self.tx.op_delay = delay;
        self
    }

    /// Ends it once: commits, or rolls back.
    fn end(&mut self, committed: bool) {
        if !self.ended {
            self.ended = true;
            self.tx.run.finish(self.tx.db, committed);
        }
    }
}

impl Tx for Alone<'_> {
    fn id(&self) -> TxnId {
        self.tx.id()
    }
    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        self.tx.get(table, key, cols)
    }
    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        self.tx.update(table, key, cols, f)
    }
    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        self.tx.insert(table, key, f)
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.tx.delete(table, key)
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        self.tx.scan(table, lo, hi, cols, f)
    }
    fn commit(mut self) -> TxResult<()> {
        self.end(true);
        Ok(())
    }
    fn abort(mut self) {
        self.end(false);
    }
}

impl Drop for Alone<'_> {
    fn drop(&mut self) {
        self.end(false);
    }
}
