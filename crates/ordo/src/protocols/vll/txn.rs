//! Executing a transaction that holds its VLL locks: `Execute(T)` of Fig. 1.
//!
//! By the time a [`VllTx`] runs, every lock it needs was requested in `BeginTransaction` and granted
//! (free) or inherited (head rule / SCA). Execution is therefore plain: reads and in-place writes of the
//! shared rows, an undo log for aborts the program's own logic asks for, and the version words the
//! checker needs. The one check left is the dependent-transaction rule of §2.4: each operation must be
//! covered by the locks ([`LockScheme::allows`]); anything else aborts with `Validation`, and the main
//! loop resubmits the transaction as a new one.
//!
//! The same type serves interactive callers ([`crate::protocols::Protocol::begin`]): such a transaction
//! cannot declare its accesses in advance, so it runs **alone** — enqueued as a wall that waits to be
//! the queue head and holds every later transaction back until it ends. Correct, but serial: VLL is not
//! an interactive protocol.

use super::partition::Partition;
use super::recon::ReconScratch;
use super::scheme::LockScheme;
use super::txn_queue::Seq;
use crate::check::TxnId;
use crate::storage::{ColumnSet, Database, RowId, RowMut, RowRef, Table, TableId, ABSENT};
use crate::txn::{Abort, AbortReason, Access, Recorder, Tx, TxResult, TxnIds};
use std::sync::atomic::Ordering;

/// One undo record: restore `cols` of `rid` from `words[start..]`, then its version word to `prev`.
#[derive(Clone, Copy, Debug)]
struct Undo {
    table: TableId,
    rid: RowId,
    cols: ColumnSet,
    start: usize,
    prev: u64,
}

/// Per-thread state of a VLL protocol.
pub struct VllWorker<R> {
    pub(super) id: u32,
    ids: TxnIds,
    rec: Recorder,
    buf: Vec<u64>,
    undo: Vec<Undo>,
    undo_words: Vec<u64>,
    /// The accesses of the transaction being admitted.
    pub(super) accesses: Vec<Access>,
    /// Its lock requests (scratch for single-transaction execution).
    pub(super) locks: Vec<R>,
    pub(super) recon: ReconScratch,
}

impl<R> VllWorker<R> {
    pub(super) fn new(id: u32, recording: bool) -> Self {
        VllWorker {
            id,
            ids: TxnIds::new(id),
            rec: Recorder::new(id, recording),
            buf: Vec::new(),
            undo: Vec::new(),
            undo_words: Vec::new(),
            accesses: Vec::new(),
            locks: Vec::new(),
            recon: ReconScratch::default(),
        }
    }
    pub(super) fn recorder(&mut self) -> &mut Recorder {
        &mut self.rec
    }
}

/// What a [`VllTx`] may touch.
pub enum Held<'w, R> {
    /// Exactly what these (granted) locks cover.
    Locks(&'w [R]),
    /// Anything: the transaction runs alone (its queue entry is a wall); when `leave` is set it removes
    /// that entry itself when it ends (interactive transactions).
    Alone { leave: Option<Seq> },
}

/// A VLL transaction in execution.
pub struct VllTx<'w, S: LockScheme> {
    db: &'w Database<S::Meta>,
    part: &'w Partition<S>,
    w: &'w mut VllWorker<S::Request>,
    held: Held<'w, S::Request>,
    id: TxnId,
    aborted: Option<AbortReason>,
    done: bool,
    /// Keep an undo log (off only for transactions VLL can never abort once they run).
    undo: bool,
    /// Installed a write (without undo, an abort after that would be a broken promise).
    wrote: bool,
    /// The lock request the next operation most likely uses: programs usually touch their records in
    /// the order they declared them, and short lock lists keep that order ([`LockScheme::covers`]).
    next: usize,
}

impl<'w, S: LockScheme> VllTx<'w, S> {
    /// Turns the undo log off for a transaction that declared everything, has no commit point and
    /// inserts or deletes nothing: once its locks are granted nothing can abort it.
    pub(super) fn set_undo(&mut self, undo: bool) {
        self.undo = undo;
    }

    pub(super) fn new(
        db: &'w Database<S::Meta>,
        part: &'w Partition<S>,
        w: &'w mut VllWorker<S::Request>,
        held: Held<'w, S::Request>,
    ) -> Self {
        let id = w.ids.next_id();
        VllTx {
            db,
            part,
            w,
            held,
            id,
            aborted: None,
            done: false,
            undo: true,
            wrote: false,
            next: 0,
        }
    }

    #[inline]
    fn check_live(&self) -> TxResult<()> {
        match self.aborted {
            None => Ok(()),
            Some(r) => Err(Abort::with_detail(r, "the transaction was already aborted")),
        }
    }

    /// Fails unless the locks cover `key` (for writing if `write`); returns the record's slot if the
    /// lock knows it.
    #[inline]
    fn check(&mut self, table: TableId, key: u64, write: bool) -> TxResult<Option<RowId>> {
        self.check_live()?;
        let found = match self.held {
            Held::Alone { .. } => return Ok(None),
            Held::Locks(l) => match l
                .get(self.next)
                .and_then(|r| S::covers(r, table, key, write))
            {
                Some(found) => {
                    self.next += 1;
                    Some(found)
                }
                None => S::allows(l, table, key, write),
            },
        };
        match found {
            Some(rid) => Ok(rid),
            None => Err(self.fail_detail(
                AbortReason::Validation,
                format!(
                    "{} key {key} of table {table} is not covered by the transaction's locks \
                     (its reconnaissance is stale): resubmit",
                    if write { "write of" } else { "read of" }
                ),
            )),
        }
    }

    #[cold]
    fn fail(&mut self, reason: AbortReason) -> Abort {
        self.finish(false);
        self.aborted = Some(reason);
        Abort::new(reason)
    }

    #[cold]
    fn fail_detail(&mut self, reason: AbortReason, detail: String) -> Abort {
        let mut a = self.fail(reason);
        a.detail = Some(detail);
        a
    }

    /// Ends the transaction: undo (on abort), leave the queue if running alone, record the outcome.
    /// (A transaction that runs under declared locks is finished by the main loop, which owns them.)
    fn finish(&mut self, committed: bool) {
        let db = self.db;
        let w = &mut *self.w;
        assert!(
            committed || self.undo || !self.wrote,
            "a VLL transaction without an undo log aborted after writing: its program broke its \
             promise (undeclared access, or an abort with no commit point)"
        );
        if !committed {
            for u in w.undo.iter().rev() {
                let t = db.table(u.table);
                let data = t.data(u.rid);
                let mut i = u.start;
                t.schema().for_each_word_run(u.cols, |r| {
                    for word in &data[r] {
                        word.store(w.undo_words[i], Ordering::Relaxed);
                        i += 1;
                    }
                });
                t.version(u.rid).store(u.prev, Ordering::Release);
            }
        }
        w.undo.clear();
        w.undo_words.clear();
        if let Held::Alone { leave: Some(seq) } = self.held {
            self.part.finish_transaction(db, seq, &[]);
        }
        w.rec.finish(self.id, committed);
        self.done = true;
    }

    #[inline]
    fn log_undo(&mut self, t: &Table<S::Meta>, rid: RowId, cols: ColumnSet) {
        self.wrote = true;
        if !self.undo {
            return;
        }
        let start = self.w.undo_words.len();
        let data = t.data(rid);
        let words = &mut self.w.undo_words;
        t.schema().for_each_word_run(cols, |r| {
            words.extend(data[r].iter().map(|w| w.load(Ordering::Relaxed)))
        });
        self.w.undo.push(Undo {
            table: t.id(),
            rid,
            cols,
            start,
            prev: 0,
        });
    }

    #[inline]
    fn install(&mut self, t: &Table<S::Meta>, key: u64, rid: RowId, word: u64) {
        let prev = t.version(rid).swap(word, Ordering::AcqRel);
        if self.undo {
            if let Some(u) = self.w.undo.last_mut() {
                u.prev = prev;
            }
        }
        self.w.rec.write(t.id(), key, prev, word & ABSENT != 0);
    }

    /// Looks `key` up and records the read of the version it finds (a tombstone's version names the
    /// transaction that deleted it; a key never indexed reads as the initial absent version). `None`
    /// when the record does not exist.
    #[inline]
    fn read_slot(
        &mut self,
        t: &Table<S::Meta>,
        key: u64,
        hint: Option<RowId>,
    ) -> Option<(RowId, u64)> {
        match Self::slot(t, key, hint) {
            Some((rid, v)) => {
                self.w.rec.read(t.id(), key, v);
                (v & ABSENT == 0).then_some((rid, v))
            }
            None => {
                self.w.rec.read(t.id(), key, ABSENT);
                None
            }
        }
    }

    #[inline]
    fn image(&mut self, t: &Table<S::Meta>) {
        self.w.buf.clear();
        self.w.buf.resize(t.schema().row_words(), 0);
    }

    /// The slot and version word of a key (absent if the key was never indexed); `hint` is the slot
    /// the lock request resolved.
    #[inline]
    fn slot(t: &Table<S::Meta>, key: u64, hint: Option<RowId>) -> Option<(RowId, u64)> {
        let rid = match hint {
            Some(r) => r,
            None => t.lookup(key)?,
        };
        Some((rid, t.version(rid).load(Ordering::Acquire)))
    }
}

impl<S: LockScheme> Tx for VllTx<'_, S> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        let hint = self.check(table, key, false)?;
        let t = self.db.table(table);
        let Some((rid, _)) = self.read_slot(t, key, hint) else {
            return Ok(None);
        };
        self.image(t);
        t.read_into(rid, cols, &mut self.w.buf);
        Ok(Some(RowRef::new(t.schema(), &self.w.buf)))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        let hint = self.check(table, key, true)?;
        let t = self.db.table(table);
        let Some((rid, _)) = self.read_slot(t, key, hint) else {
            return Ok(None);
        };
        self.image(t);
        t.read_into(rid, cols, &mut self.w.buf);
        let mut row = RowMut::new(t.schema(), &mut self.w.buf);
        let out = f(&mut row);
        let written = t.schema().clamp(row.written());
        if !written.is_empty() {
            self.log_undo(t, rid, written);
            t.write_from(rid, written, &self.w.buf);
            self.install(t, key, rid, self.id);
        }
        Ok(Some(out))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        let hint = self.check(table, key, true)?;
        let t = self.db.table(table);
        let rid = match hint {
            Some(r) => r,
            None => t.get_or_create(key).0,
        };
        if t.version(rid).load(Ordering::Acquire) & ABSENT == 0 {
            return Err(self.fail_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            ));
        }
        self.image(t);
        f(&mut RowMut::new(t.schema(), &mut self.w.buf));
        self.log_undo(t, rid, ColumnSet::NONE);
        t.write_from(rid, t.schema().all(), &self.w.buf);
        self.install(t, key, rid, self.id);
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let hint = self.check(table, key, true)?;
        let t = self.db.table(table);
        let Some((rid, _)) = self.read_slot(t, key, hint) else {
            return Ok(false);
        };
        self.log_undo(t, rid, ColumnSet::NONE);
        self.install(t, key, rid, self.id | ABSENT);
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        mut f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        self.check_live()?;
        let t = self.db.table(table);
        if !t.is_ordered() {
            return Err(self.fail_detail(
                AbortReason::InvalidData,
                format!("{}: scan needs an ordered index", t.name()),
            ));
        }
        if let Held::Locks(l) = self.held {
            if !S::allows_range(l, table, lo, hi) {
                return Err(self.fail_detail(
                    AbortReason::Validation,
                    format!("scan of [{lo}, {hi}] in table {table} is not covered by the locks"),
                ));
            }
        }
        self.image(t);
        for (k, rid) in t.range(lo, hi) {
            let v = t.version(rid).load(Ordering::Acquire);
            if v & ABSENT != 0 {
                continue;
            }
            self.w.rec.read(table, k, v);
            t.read_into(rid, cols, &mut self.w.buf);
            if !f(k, RowRef::new(t.schema(), &self.w.buf)) {
                break;
            }
        }
        Ok(())
    }

    fn commit(mut self) -> TxResult<()> {
        self.check_live()?;
        self.finish(true);
        Ok(())
    }

    fn abort(mut self) {
        if !self.done {
            self.finish(false);
        }
    }
}

impl<S: LockScheme> Drop for VllTx<'_, S> {
    fn drop(&mut self) {
        if !self.done {
            self.finish(false);
        }
    }
}
