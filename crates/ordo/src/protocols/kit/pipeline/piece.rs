//! A piece's run: a [`Tx`] over the transaction's own executor, allowed what the piece locked, and
//! the transaction's undo log, kept **per record**.
//!
//! A piece reads and writes rows in place with the shared executor
//! ([`crate::protocols::kit::inplace`], its own undo log off); since the piece holds its records'
//! locks, every install stores its version word over the one it read ([`Install::Over`]). What an
//! operation may touch is its piece's [`Cover`] (the keys it declared and locked); an operation
//! outside it fails with the retryable `Validation`.
//!
//! **Why per record.** The kit's undo log rolls a whole transaction back at once, newest write
//! first — right when nobody else wrote the records meanwhile. Under early write visibility (IC3, Callas) others may have: a
//! piece's writes are visible once the piece ends, and a later transaction may overwrite them
//! (it then depends on this one and will abort with it). Restoring this transaction's old image
//! of a record must wait until everyone after it on that record has undone theirs; different
//! records get there at different times, so [`Undo`] keeps, per record, the row and version word
//! as they were before the transaction's first write of it, and restores each record on its own
//! ([`Undo::restore`]).

use super::access_list::PipeRecord;
use crate::check::TxnId;
use crate::protocols::kit::exec::Cover;
use crate::protocols::kit::inplace::{InPlace, Install, RowGuard};
use crate::storage::{ColumnSet, Database, RowId, RowMut, RowRef, Table, TableId, ABSENT};
use crate::txn::{refuse_write, Abort, AbortReason, Tx, TxResult};
use std::sync::atomic::Ordering;

/// One record's image before the transaction's first write of it.
#[derive(Clone, Copy, Debug)]
struct Saved {
    table: TableId,
    rid: RowId,
    /// Its row's words, at `words[start..]`.
    start: usize,
    /// Its version word.
    prev: u64,
}

/// The undo log, per record (see the module docs).
#[derive(Debug, Default)]
pub struct Undo {
    saved: Vec<Saved>,
    words: Vec<u64>,
}

impl Undo {
    /// Saves `rid`'s image unless the transaction saved it already.
    #[inline]
    fn save<M: Default + Send + Sync>(&mut self, t: &Table<M>, rid: RowId) {
        let table = t.id();
        if self.saved.iter().any(|s| s.rid == rid && s.table == table) {
            return;
        }
        let start = self.words.len();
        self.words
            .extend(t.data(rid).iter().map(|w| w.load(Ordering::Relaxed)));
        self.saved.push(Saved {
            table,
            rid,
            start,
            prev: t.version(rid).load(Ordering::Acquire),
        });
    }

    /// Puts record `rid` of `table` back as transaction `me` found it (if it wrote it). Its write
    /// must be the record's latest: everyone who wrote after it has undone theirs. (A record saved
    /// but not written — an update of an absent key — is still as it was.)
    pub fn restore<M: Default + Send + Sync>(
        &self,
        db: &Database<M>,
        table: TableId,
        rid: RowId,
        me: TxnId,
    ) {
        let Some(s) = self.saved.iter().find(|s| s.rid == rid && s.table == table) else {
            return;
        };
        let t = db.table(table);
        let now = t.version(rid).load(Ordering::Acquire);
        debug_assert!(
            now & !ABSENT == me & !ABSENT || now == s.prev,
            "undoing {me}'s write of {table}/{rid}: a later one ({now}) overwrote it"
        );
        let data = t.data(rid);
        for (w, &v) in data.iter().zip(&self.words[s.start..s.start + data.len()]) {
            w.store(v, Ordering::Relaxed);
        }
        t.version(rid).store(s.prev, Ordering::Release);
    }

    /// Puts every record back (a transaction that ran alone: nobody wrote after it).
    pub fn restore_all<M: Default + Send + Sync>(&self, db: &Database<M>, me: TxnId) {
        for s in self.saved.iter().rev() {
            self.restore(db, s.table, s.rid, me);
        }
    }

    pub fn clear(&mut self) {
        self.saved.clear();
        self.words.clear();
    }
}

/// What a worker carries through its transaction: the id, the executor (history recorder, row
/// buffer) and the undo log.
#[derive(Debug)]
pub struct Run {
    pub id: TxnId,
    pub exec: InPlace,
    pub undo: Undo,
}

impl Run {
    pub fn new(worker: u32, recording: bool) -> Self {
        Run {
            id: 0,
            exec: InPlace::new(worker, recording, false),
            undo: Undo::default(),
        }
    }

    /// Ends the transaction: on abort puts every record back (only for a transaction that ran
    /// alone), records the outcome.
    pub fn finish<M: Default + Send + Sync>(&mut self, db: &Database<M>, committed: bool) {
        if !committed {
            self.undo.restore_all(db, self.id);
        }
        self.end(db, committed);
    }

    /// Records the outcome and forgets the undo log (the records are already as they must stay).
    pub fn end<M: Default + Send + Sync>(&mut self, db: &Database<M>, committed: bool) {
        self.undo.clear();
        // The executor's own undo log is off: this only resets it.
        self.exec.finish(db, committed);
        self.exec.rec.finish(self.id, committed);
    }
}

/// The [`Tx`] a piece runs against (and, with [`Cover::All`], a transaction that runs alone).
pub struct PieceTx<'a> {
    pub db: &'a Database<PipeRecord>,
    pub run: &'a mut Run,
    pub cover: Cover<'a>,
    /// Slept after each operation, the piece's locks held (`--op-delay-us`; zero: no sleep).
    pub op_delay: std::time::Duration,
    /// Around each row a scan passes (a key range declared but too wide to lock key by key:
    /// Callas at read committed); `None`: the piece's locks cover every scan.
    pub guard: Option<&'a mut dyn RowGuard>,
}

impl PieceTx<'_> {
    /// The operation delay, after an operation.
    #[inline]
    fn after_op(&self) {
        if !self.op_delay.is_zero() {
            std::thread::sleep(self.op_delay);
        }
    }

    #[inline]
    fn check(&mut self, table: TableId, key: u64, write: bool) -> TxResult<()> {
        let t = self.db.table(table);
        if t.is_read_only() {
            return if write { refuse_write(t) } else { Ok(()) };
        }
        if self.cover.allows(table, key, write) {
            Ok(())
        } else {
            Err(stray(format!("table {table} key {key}")))
        }
    }
}

#[cold]
fn stray(what: String) -> Abort {
    Abort::with_detail(
        AbortReason::Validation,
        format!("{what} lies outside what the piece declared"),
    )
}

impl Tx for PieceTx<'_> {
    fn id(&self) -> TxnId {
        self.run.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        self.check(table, key, false)?;
        self.after_op();
        let t = self.db.table(table);
        Ok(self.run.exec.get(t, key, None, cols))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        self.check(table, key, true)?;
        self.after_op();
        let t = self.db.table(table);
        let Some(rid) = t.lookup(key) else {
            self.run.exec.rec.read(table, key, ABSENT);
            return Ok(None);
        };
        self.run.undo.save(t, rid);
        let word = self.run.id;
        Ok(self.run.exec.update_key(
            t,
            key,
            Some(rid),
            cols,
            |prev| Install::Over { word, prev },
            f,
        ))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        self.check(table, key, true)?;
        self.after_op();
        let t = self.db.table(table);
        let rid = t.lookup(key).unwrap_or_else(|| t.get_or_create(key).0);
        let v = t.version(rid).load(Ordering::Acquire);
        if v & ABSENT == 0 {
            return Err(Abort::with_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            ));
        }
        self.run.undo.save(t, rid);
        let word = self.run.id;
        self.run
            .exec
            .insert(t, key, rid, Install::Over { word, prev: v }, f);
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.check(table, key, true)?;
        self.after_op();
        let t = self.db.table(table);
        let Some(rid) = t.lookup(key) else {
            self.run.exec.rec.read(table, key, ABSENT);
            return Ok(false);
        };
        let v = t.version(rid).load(Ordering::Acquire);
        if v & ABSENT != 0 {
            self.run.exec.rec.read(table, key, v);
            return Ok(false);
        }
        self.run.undo.save(t, rid);
        let word = self.run.id | ABSENT;
        self.run
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
        if !t.is_read_only() && !self.cover.allows_range(table, lo, hi) {
            return Err(stray(format!("table {table} range {lo}..={hi}")));
        }
        self.after_op();
        match &mut self.guard {
            Some(g) => self.run.exec.scan_guarded(t, lo, hi, cols, &mut **g, f),
            None => {
                self.run.exec.scan(t, lo, hi, cols, f);
                Ok(())
            }
        }
    }

    /// A piece does not commit on its own: its transaction does.
    fn commit(self) -> TxResult<()> {
        Ok(())
    }

    fn abort(self) {}
}
