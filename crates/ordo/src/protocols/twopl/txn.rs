//! The 2PL transaction: lock, then read or write in place; undo on abort; release everything at the end.
//!
//! * [`TwoPlWorker`] keeps what outlives a transaction: the lock set, the undo log (entries and saved
//!   words), the row-image buffer, the id generator, the recorder and the policy's per-worker state. All
//!   buffers are cleared, not freed, between transactions.
//! * [`TwoPlTx`] runs one transaction. Any failing call rolls the transaction back *before* it returns
//!   the [`Abort`], so the handle holds no locks afterwards; later calls (and `commit`) report the same
//!   abort.

use super::lock::Mode;
use super::lockset::{Held, LockSet};
use super::{Policy, TwoPl};
use crate::check::TxnId;
use crate::storage::{ColumnSet, RowId, RowMut, RowRef, Table, TableId, ABSENT, SUPREMUM};
use crate::txn::{Abort, AbortReason, Recorder, Tx, TxResult, TxnIds};
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

/// Per-thread state of a [`TwoPl`] protocol.
pub struct TwoPlWorker<V: Policy> {
    ids: TxnIds,
    rec: Recorder,
    locks: LockSet,
    undo: Vec<Undo>,
    undo_words: Vec<u64>,
    buf: Vec<u64>,
    local: V::Local,
}

impl<V: Policy> TwoPlWorker<V> {
    pub(super) fn new(id: u32, recording: bool, local: V::Local) -> Self {
        TwoPlWorker {
            ids: TxnIds::new(id),
            rec: Recorder::new(id, recording),
            locks: LockSet::default(),
            undo: Vec::new(),
            undo_words: Vec::new(),
            buf: Vec::new(),
            local,
        }
    }
    pub(super) fn recorder(&mut self) -> &mut Recorder {
        &mut self.rec
    }
    /// Locks held by the running transaction (tests, diagnostics).
    pub fn locks_held(&self) -> usize {
        self.locks.len()
    }
}

/// A running [`TwoPl`] transaction.
pub struct TwoPlTx<'w, V: Policy> {
    p: &'w TwoPl<V>,
    w: &'w mut TwoPlWorker<V>,
    id: TxnId,
    /// `Some` once the transaction was aborted by a failing call.
    aborted: Option<AbortReason>,
    done: bool,
}

impl<'w, V: Policy> TwoPlTx<'w, V> {
    pub(super) fn begin(p: &'w TwoPl<V>, w: &'w mut TwoPlWorker<V>) -> Self {
        let id = w.ids.next_id();
        V::begin(&p.shared, &mut w.local);
        TwoPlTx {
            p,
            w,
            id,
            aborted: None,
            done: false,
        }
    }

    /// Fails if an earlier call aborted the transaction.
    #[inline]
    fn check_live(&self) -> TxResult<()> {
        match self.aborted {
            None => Ok(()),
            Some(r) => Err(Abort::with_detail(r, "the transaction was already aborted")),
        }
    }

    /// Aborts now (undo, release) and returns the abort to hand to the caller.
    #[cold]
    fn fail(&mut self, reason: AbortReason) -> Abort {
        self.finish(false, reason.is_retryable());
        self.aborted = Some(reason);
        Abort::new(reason)
    }

    #[cold]
    fn fail_detail(&mut self, reason: AbortReason, detail: String) -> Abort {
        let mut a = self.fail(reason);
        a.detail = Some(detail);
        a
    }

    /// Ends the transaction: undo (on abort), release every lock, record the outcome.
    fn finish(&mut self, committed: bool, retry: bool) {
        let db = &self.p.db;
        let w = &mut *self.w;
        if !committed {
            // Newest first, so a record written twice ends with its oldest image.
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
        // Strict 2PL: every lock is released only now, after the last write was installed or undone.
        for h in w.locks.iter() {
            V::release(
                &self.p.shared,
                &w.local,
                db.table(h.table).meta(h.rid),
                (h.table, h.rid),
                h.mode,
            );
        }
        w.locks.clear();
        w.undo.clear();
        w.undo_words.clear();
        V::end(&self.p.shared, &mut w.local, retry);
        w.rec.finish(self.id, committed);
        self.done = true;
    }

    /// Takes (or upgrades to) a `mode` lock on `rid` of `table`.
    #[inline]
    fn lock(&mut self, t: &Table<V::Lock>, rid: RowId, mode: Mode) -> Result<(), AbortReason> {
        let table = t.id();
        let lock = t.meta(rid);
        match self.w.locks.find(table, rid) {
            Some(pos) => {
                if self.w.locks.get(pos).mode < mode {
                    V::upgrade(&self.p.shared, &mut self.w.local, lock, (table, rid))?;
                    self.w.locks.set_mode(pos, Mode::Exclusive);
                }
                Ok(())
            }
            None => {
                V::acquire(&self.p.shared, &mut self.w.local, lock, (table, rid), mode)?;
                self.w.locks.push(Held { table, rid, mode });
                Ok(())
            }
        }
    }

    /// The slot of `key`, creating an absent one if the key was never indexed (so a lock on it guards
    /// the key's absence too), locked in `mode`. Returns the slot and its version word read under the lock.
    #[inline]
    fn lock_key(&mut self, t: &Table<V::Lock>, key: u64, mode: Mode) -> TxResult<(RowId, u64)> {
        let rid = match t.lookup(key) {
            Some(r) => r,
            None => t.get_or_create(key).0,
        };
        if let Err(r) = self.lock(t, rid, mode) {
            return Err(self.fail(r));
        }
        Ok((rid, t.version(rid).load(Ordering::Acquire)))
    }

    /// Next-key locking for an insert of `key` into an ordered table: X-lock the index entries after
    /// `key` up to and including the first present record (or the supremum). See the module docs of
    /// [`super`] for why a run of absent entries is locked through.
    fn lock_next_keys(&mut self, t: &Table<V::Lock>, key: u64) -> Result<(), AbortReason> {
        let mut cur = key;
        loop {
            let (next_key, rid) = match t.next_after(cur) {
                Some((k, r)) => (Some(k), r),
                None => (None, SUPREMUM),
            };
            self.lock(t, rid, Mode::Exclusive)?;
            // Re-check under the lock: an entry created in between would split our gap.
            if t.next_after(cur).map(|e| e.0) != next_key {
                continue;
            }
            match next_key {
                Some(k) if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 => cur = k,
                _ => return Ok(()),
            }
        }
    }

    /// Undo-logs `cols` of `rid` (and, once installed, its old version word).
    #[inline]
    fn log_undo(&mut self, t: &Table<V::Lock>, rid: RowId, cols: ColumnSet) {
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

    /// Swaps the version word to `word` and completes the newest undo record with the old one.
    #[inline]
    fn install(&mut self, t: &Table<V::Lock>, key: u64, rid: RowId, word: u64) {
        let prev = t.version(rid).swap(word, Ordering::AcqRel);
        if let Some(u) = self.w.undo.last_mut() {
            u.prev = prev;
        }
        self.w.rec.write(t.id(), key, prev, word & ABSENT != 0);
    }

    #[inline]
    fn image(&mut self, t: &Table<V::Lock>) {
        self.w.buf.clear();
        self.w.buf.resize(t.schema().row_words(), 0);
    }
}

impl<V: Policy> Tx for TwoPlTx<'_, V> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        self.check_live()?;
        let db = &self.p.db;
        let t = db.table(table);
        let (rid, v) = self.lock_key(t, key, Mode::Shared)?;
        self.w.rec.read(table, key, v);
        if v & ABSENT != 0 {
            return Ok(None);
        }
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
        self.check_live()?;
        let db = &self.p.db;
        let t = db.table(table);
        let (rid, v) = self.lock_key(t, key, Mode::Exclusive)?;
        self.w.rec.read(table, key, v);
        if v & ABSENT != 0 {
            return Ok(None);
        }
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
        self.check_live()?;
        let db = &self.p.db;
        let t = db.table(table);
        let (rid, _) = t.get_or_create(key);
        if let Err(r) = self.lock(t, rid, Mode::Exclusive) {
            return Err(self.fail(r));
        }
        if t.version(rid).load(Ordering::Acquire) & ABSENT == 0 {
            return Err(self.fail_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            ));
        }
        if t.is_ordered() {
            if let Err(r) = self.lock_next_keys(t, key) {
                return Err(self.fail(r));
            }
        }
        self.image(t);
        f(&mut RowMut::new(t.schema(), &mut self.w.buf));
        // The slot was absent: its old data is meaningless, only the version word needs undoing.
        self.log_undo(t, rid, ColumnSet::NONE);
        t.write_from(rid, t.schema().all(), &self.w.buf);
        self.install(t, key, rid, self.id);
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.check_live()?;
        let db = &self.p.db;
        let t = db.table(table);
        let (rid, v) = self.lock_key(t, key, Mode::Exclusive)?;
        if v & ABSENT != 0 {
            self.w.rec.read(table, key, v);
            return Ok(false);
        }
        // A tombstone keeps the data; only the version word changes.
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
        let db = &self.p.db;
        let t = db.table(table);
        if !t.is_ordered() {
            return Err(self.fail_detail(
                AbortReason::InvalidData,
                format!("{}: scan needs an ordered index", t.name()),
            ));
        }
        if lo > hi {
            return Ok(());
        }
        self.image(t);
        // The entry after `prev` (or the first at or after `lo`).
        let succ = |prev: Option<u64>| match prev {
            None => t.range(lo, u64::MAX).next(),
            Some(p) => t.next_after(p),
        };
        let mut prev: Option<u64> = None;
        loop {
            // An entry in the range, or past it: the next key (or the supremum) that closes the gap after
            // the last entry in the range.
            let (key, rid) = match succ(prev) {
                Some((k, r)) => (Some(k), r),
                None => (None, SUPREMUM),
            };
            if let Err(r) = self.lock(t, rid, Mode::Shared) {
                return Err(self.fail(r));
            }
            // Re-check under the lock that no entry appeared between `prev` and this one; if one did,
            // lock that one first (we keep the extra lock; it is harmless).
            if succ(prev).map(|e| e.0) != key {
                continue;
            }
            let Some(k) = key.filter(|&k| k <= hi) else {
                return Ok(());
            };
            prev = Some(k);
            let v = t.version(rid).load(Ordering::Acquire);
            if v & ABSENT != 0 {
                continue;
            }
            self.w.rec.read(table, k, v);
            t.read_into(rid, cols, &mut self.w.buf);
            if !f(k, RowRef::new(t.schema(), &self.w.buf)) {
                // Stopped early: the range protected ends at this key; no next-key lock needed.
                return Ok(());
            }
        }
    }

    fn commit(mut self) -> TxResult<()> {
        self.check_live()?;
        self.finish(true, false);
        Ok(())
    }

    fn abort(mut self) {
        if !self.done {
            self.finish(false, false);
        }
    }
}

impl<V: Policy> Drop for TwoPlTx<'_, V> {
    fn drop(&mut self) {
        if !self.done {
            self.finish(false, false);
        }
    }
}
