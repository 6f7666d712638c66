//! One piece's run: a [`Tx`] over the transaction's own executor, allowed what the piece declared.
//!
//! A PWV transaction's pieces run on whichever cores own their units, one at a time (the
//! transaction's slot is locked while a piece runs), so the executor state a transaction carries —
//! its undo log and its recorded history — belongs to the transaction, not to a thread
//! (`TxnState`). Each piece writes in place with the shared executor
//! ([`crate::protocols::kit::inplace`]); only abortable pieces keep undo records (nothing after the
//! commit point is ever undone). Because the graph lets no conflicting piece of another transaction
//! run until this one is done with the unit, every write installs its version word over the one it
//! read ([`Install::Over`]).
//!
//! An access outside the piece's declarations (a reconnaissance that went stale) fails the piece
//! with [`AbortReason::Validation`]; the run treats it as the abort of an abortable piece (the
//! transaction is undone and planned again in the next batch).

use super::plan::{stray, Decl, PartPlan};
use crate::check::TxnId;
use crate::protocols::kit::inplace::{InPlace, Install};
use crate::storage::{ColumnSet, Database, RowMut, RowRef, TableId, ABSENT};
use crate::txn::{refuse_write, Abort, AbortReason, ConflictUnits, Tx, TxResult};
use std::sync::atomic::Ordering;

/// What a transaction carries from piece to piece: its id and its executor (undo log, history).
#[derive(Debug)]
pub(super) struct TxnState {
    pub id: TxnId,
    pub exec: InPlace,
}

impl TxnState {
    /// State for a transaction of worker `worker`.
    pub fn new(worker: u32, recording: bool) -> Self {
        TxnState {
            id: 0,
            exec: InPlace::new(worker, recording, true),
        }
    }
}

/// The [`Tx`] a piece runs against.
pub(super) struct PieceTx<'a> {
    pub db: &'a Database<()>,
    pub st: &'a mut TxnState,
    /// What the piece declared; `None`: anything (a barrier transaction, which runs alone).
    pub decls: Option<&'a [Decl]>,
    pub units: Option<ConflictUnits>,
    pub coarse: bool,
}

impl PieceTx<'_> {
    #[inline]
    fn check(&mut self, table: TableId, key: u64, write: bool) -> TxResult<()> {
        let t = self.db.table(table);
        if t.is_read_only() {
            return if write { refuse_write(t) } else { Ok(()) };
        }
        match self.decls {
            None => Ok(()),
            Some(d) if PartPlan::allows(d, self.units, self.coarse, table, key, write) => Ok(()),
            Some(_) => Err(stray(format!("table {table} key {key}"))),
        }
    }
}

impl Tx for PieceTx<'_> {
    fn id(&self) -> TxnId {
        self.st.id
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
        let word = self.st.id;
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
        let t = self.db.table(table);
        let rid = t.lookup(key).unwrap_or_else(|| t.get_or_create(key).0);
        let v = t.version(rid).load(Ordering::Acquire);
        if v & ABSENT == 0 {
            return Err(Abort::with_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            ));
        }
        let word = self.st.id;
        self.st
            .exec
            .insert(t, key, rid, Install::Over { word, prev: v }, f);
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
        let word = self.st.id | ABSENT;
        self.st
            .exec
            .delete(t, key, rid, Install::Over { word, prev: v });
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
        let t = self.db.table(table);
        if !t.is_ordered() {
            return Err(Abort::with_detail(
                AbortReason::InvalidData,
                format!("{}: scan needs an ordered index", t.name()),
            ));
        }
        if lo > hi {
            return Ok(());
        }
        if !t.is_read_only()
            && self
                .decls
                .is_some_and(|d| !PartPlan::allows_range(d, self.units, self.coarse, table, lo, hi))
        {
            return Err(stray(format!("table {table} range {lo}..={hi}")));
        }
        self.st.exec.scan(t, lo, hi, cols, f);
        Ok(())
    }

    /// A piece does not commit on its own: its transaction's decision does (see `super::run`).
    fn commit(self) -> TxResult<()> {
        Ok(())
    }

    fn abort(self) {}
}
