//! The 2PL transaction: lock, then read or write in place; undo on abort; release everything at the end.
//!
//! * [`TwoPlWorker`] keeps what outlives a transaction: the lock set, the id generator, the policy's
//!   per-worker state and the shared in-place executor ([`crate::protocols::kit::inplace`]: recorder, undo
//!   log, row-image buffer). All buffers are cleared, not freed, between transactions.
//! * Reads and writes themselves are the executor's; what 2PL adds around each is the lock taken first
//!   (next-key locks for inserts and scans), and after the executor's undo the release of every lock.
//! * Reads of a table that is read-only once loaded ([`crate::storage::TableSpec::read_only`]) take no
//!   lock: no writer of it exists, so nothing can conflict with them. Writes to it are refused
//!   ([`crate::txn::refuse_write`]) before any lock is taken or slot created.
//! * [`TwoPlTx`] runs one transaction. Any failing call rolls the transaction back *before* it returns
//!   the [`Abort`], so the handle holds no locks afterwards; later calls (and `commit`) report the same
//!   abort.

use super::lock::Mode;
use super::lockset::{Held, LockSet};
use super::{Policy, TwoPl};
use crate::check::TxnId;
use crate::protocols::kit::inplace::{InPlace, Install};
use crate::storage::{ColumnSet, RowId, RowMut, RowRef, Table, TableId, ABSENT, SUPREMUM};
use crate::txn::{check_live, refuse_write, Abort, AbortReason, Recorder, Tx, TxResult, TxnIds};
use std::sync::atomic::Ordering;

/// Per-thread state of a [`TwoPl`] protocol.
pub struct TwoPlWorker<V: Policy> {
    ids: TxnIds,
    /// The shared in-place executor: recorder, undo log, row image.
    exec: InPlace,
    locks: LockSet,
    local: V::Local,
}

impl<V: Policy> TwoPlWorker<V> {
    pub(super) fn new(ids: TxnIds, recording: bool, local: V::Local) -> Self {
        TwoPlWorker {
            exec: InPlace::new(ids.worker(), recording, true),
            ids,
            locks: LockSet::default(),
            local,
        }
    }
    pub(super) fn recorder(&mut self) -> &mut Recorder {
        &mut self.exec.rec
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

    /// Locks the transaction holds (tests, diagnostics).
    pub fn locks_held(&self) -> usize {
        self.w.locks.len()
    }

    /// Aborts now (undo, release) and returns the abort to hand to the caller.
    #[cold]
    fn fail(&mut self, reason: AbortReason) -> Abort {
        self.fail_with(Abort::new(reason))
    }

    /// [`Self::fail`] with an abort already built (it keeps its detail).
    #[cold]
    fn fail_with(&mut self, a: Abort) -> Abort {
        self.finish(false, a.reason.is_retryable());
        self.aborted = Some(a.reason);
        a
    }

    /// Fails (aborting the transaction) if `t` is read-only once loaded: no transaction may write it.
    #[inline]
    fn refuse_write(&mut self, t: &Table<V::Lock>) -> TxResult<()> {
        refuse_write(t).map_err(|a| self.fail_with(a))
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
        w.exec.finish(db, committed);
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
        V::end(&self.p.shared, &mut w.local, retry);
        w.exec.rec.finish(self.id, committed);
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
        self.p.delay.after_op();
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
}

impl<V: Policy> Tx for TwoPlTx<'_, V> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        if t.is_read_only() {
            // No writer of it exists: the read needs no lock (nor an absent slot for a missing key).
            return Ok(self.w.exec.get(t, key, None, cols));
        }
        let (rid, v) = self.lock_key(t, key, Mode::Shared)?;
        self.w.exec.rec.read(table, key, v);
        if v & ABSENT != 0 {
            return Ok(None);
        }
        Ok(Some(self.w.exec.read(t, rid, cols)))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        self.refuse_write(t)?;
        let (rid, v) = self.lock_key(t, key, Mode::Exclusive)?;
        self.w.exec.rec.read(table, key, v);
        if v & ABSENT != 0 {
            return Ok(None);
        }
        let out = self
            .w
            .exec
            .update(t, key, rid, cols, Install::Swap(self.id), f);
        Ok(Some(out))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        self.refuse_write(t)?;
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
        self.w.exec.insert(t, key, rid, Install::Swap(self.id), f);
        self.p.delay.after_op();
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        self.refuse_write(t)?;
        let (rid, v) = self.lock_key(t, key, Mode::Exclusive)?;
        if v & ABSENT != 0 {
            self.w.exec.rec.read(table, key, v);
            return Ok(false);
        }
        self.w
            .exec
            .delete(t, key, rid, Install::Swap(self.id | ABSENT));
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
        check_live(self.aborted)?;
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
        if t.is_read_only() {
            // No insert or delete of it can happen: no lock, no next-key lock.
            self.w.exec.scan(t, lo, hi, cols, f);
            return Ok(());
        }
        self.w.exec.image(t);
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
                self.w.exec.rec.scan(table, lo, hi);
                self.p.delay.after_op();
                return Ok(());
            };
            prev = Some(k);
            let v = t.version(rid).load(Ordering::Acquire);
            if v & ABSENT != 0 {
                self.w.exec.rec.read(table, k, v);
                continue;
            }
            if !f(k, self.w.exec.scan_row(t, k, rid, v, cols)) {
                // Stopped early: the range protected ends at this key; no next-key lock needed.
                self.w.exec.rec.scan(table, lo, k);
                self.p.delay.after_op();
                return Ok(());
            }
        }
    }

    fn commit(mut self) -> TxResult<()> {
        check_live(self.aborted)?;
        self.p.delay.before_release();
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
