//! Executing a transaction that holds its VLL locks: `Execute(T)` of Fig. 1.
//!
//! By the time a [`VllTx`] runs, every lock it needs was requested in `BeginTransaction` and granted
//! (free) or inherited (head rule / SCA). Execution is therefore plain: the shared in-place executor
//! ([`crate::protocols::kit::inplace`]) reads and writes the shared rows in place, keeps an undo log for
//! aborts the program's own logic asks for, and records the version words the checker needs. The one check left is the dependent-transaction rule of §2.4: each operation must be
//! covered by the locks ([`LockScheme::allows`]); anything else aborts with `Validation`, and the main
//! loop resubmits the transaction as a new one.
//!
//! The same type serves interactive callers ([`crate::protocols::Protocol::begin`]): such a transaction
//! cannot declare its accesses in advance, so it runs **alone** — enqueued as a wall that waits to be
//! the queue head and holds every later transaction back until it ends. Correct, but serial: VLL is not
//! an interactive protocol.
//!
//! Reads of read-only tables ([`crate::storage::TableSpec::read_only`]) take no lock; a write to one,
//! declared or not, running alone or not, is refused with `InvalidData` ([`refuse_write`]).

use super::partition::Partition;
use super::scheme::LockScheme;
use crate::check::TxnId;
use crate::protocols::kit::inplace::{InPlace, Install};
use crate::protocols::kit::plan::Planner;
use crate::protocols::kit::txn_queue::Seq;
use crate::storage::{ColumnSet, Database, RowId, RowMut, RowRef, TableId, ABSENT};
use crate::txn::{
    check_live, refuse_write, Abort, AbortReason, Access, Recorder, Tx, TxResult, TxnIds,
};
use std::sync::atomic::Ordering;

/// Per-thread state of a VLL protocol.
pub struct VllWorker<R> {
    pub(super) id: u32,
    ids: TxnIds,
    /// The shared in-place executor: recorder, undo log, row image.
    exec: InPlace,
    /// The accesses of the transaction being admitted.
    pub(super) accesses: Vec<Access>,
    /// Its lock requests (scratch for single-transaction execution).
    pub(super) locks: Vec<R>,
    pub(super) planner: Planner,
}

impl<R> VllWorker<R> {
    pub(super) fn new(ids: TxnIds, recording: bool) -> Self {
        let id = ids.worker();
        VllWorker {
            id,
            ids,
            exec: InPlace::new(id, recording, true),
            accesses: Vec::new(),
            locks: Vec::new(),
            planner: Planner::default(),
        }
    }
    pub(super) fn recorder(&mut self) -> &mut Recorder {
        &mut self.exec.rec
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
    /// The held lock requests from the one the next operation most likely uses on: programs usually
    /// touch their records in the order they declared them, and short lock lists keep that order
    /// ([`LockScheme::covers`]); a range walk stays on its prefix until it leaves the prefix's block
    /// ([`LockScheme::covers_one`]). Empty when the fast path cannot apply (running alone, aborted).
    ahead: &'w [S::Request],
}

/// How many keys ahead a walk under a range's prefix lock prefetches index entries.
const RANGE_PREFETCH_AHEAD: u64 = 8;

impl<'w, S: LockScheme> VllTx<'w, S> {
    /// Turns the undo log off for a transaction that declared everything, has no commit point and
    /// inserts or deletes nothing: once its locks are granted nothing can abort it.
    pub(super) fn set_undo(&mut self, undo: bool) {
        self.w.exec.set_logging(undo);
    }

    pub(super) fn new(
        db: &'w Database<S::Meta>,
        part: &'w Partition<S>,
        w: &'w mut VllWorker<S::Request>,
        held: Held<'w, S::Request>,
    ) -> Self {
        let id = w.ids.next_id();
        // The undo log is on unless `set_undo` turns it off for this transaction.
        w.exec.set_logging(true);
        let ahead = match held {
            Held::Locks(l) => l,
            Held::Alone { .. } => &[],
        };
        VllTx {
            db,
            part,
            w,
            held,
            id,
            aborted: None,
            done: false,
            ahead,
        }
    }

    /// Fails unless the locks cover `key` (for writing if `write`); returns the record's slot if the
    /// lock knows it. The common case — live, and the next lock in declaration order covers it — is
    /// inlined into every operation; the rest is [`Self::check_slow`].
    #[inline(always)]
    fn check(&mut self, table: TableId, key: u64, write: bool) -> TxResult<Option<RowId>> {
        if let Some((r, rest)) = self.ahead.split_first() {
            if let Some(found) = S::covers(r, table, key, write) {
                if S::covers_one(r) {
                    self.ahead = rest;
                } else {
                    // A range walk: its keys' index entries are scattered (hashed), and no one
                    // probed them ahead (a point lock's planning did): start loading the entry a
                    // few keys on while this one is worked on.
                    self.db
                        .table(table)
                        .prefetch_index(key.wrapping_add(RANGE_PREFETCH_AHEAD));
                }
                return Ok(found);
            }
        }
        self.check_slow(table, key, write)
    }

    /// [`Self::check`] when the fast path does not apply: aborted, running alone, or an access out of
    /// declaration order (searched in the whole lock list).
    #[cold]
    #[inline(never)]
    fn check_slow(&mut self, table: TableId, key: u64, write: bool) -> TxResult<Option<RowId>> {
        check_live(self.aborted)?;
        // No lock covers a write of a read-only table (planning refuses declared ones): refuse it here,
        // whether the transaction runs alone or wrote it without declaring it.
        if write {
            if let Err(a) = refuse_write(self.db.table(table)) {
                return Err(self.fail_with(a));
            }
        }
        let found = match self.held {
            Held::Alone { .. } => return Ok(None),
            // A read-only table is read without a lock (`Access::unlocked_in`).
            Held::Locks(_) if !write && self.db.table(table).is_read_only() => Some(None),
            Held::Locks(l) => S::allows(l, table, key, write).map(|(i, rid)| {
                // Go on from there: the next access most likely uses the request after it (or,
                // for a range's prefix, this one again).
                self.ahead = &l[i + S::covers_one(&l[i]) as usize..];
                rid
            }),
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
        self.fail_with(Abort::new(reason))
    }

    /// [`Self::fail`] with an abort already built (it keeps its detail).
    #[cold]
    fn fail_with(&mut self, a: Abort) -> Abort {
        self.finish(false);
        self.aborted = Some(a.reason);
        self.ahead = &[];
        a
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
        // Without undo, an abort after a write would be a broken promise — unless the program
        // panicked (only the benchmark loop runs without undo; its run fails with that panic, which
        // a second one here would turn into an abort of the process).
        assert!(
            committed || w.exec.logging() || !w.exec.wrote() || std::thread::panicking(),
            "a VLL transaction without an undo log aborted after writing: its program broke its \
             promise (undeclared access, or an abort with no commit point)"
        );
        w.exec.finish(db, committed);
        if let Held::Alone { leave: Some(seq) } = self.held {
            self.part.finish_transaction(db, seq, &[]);
        }
        w.exec.rec.finish(self.id, committed);
        self.done = true;
    }
}

impl<S: LockScheme> Tx for VllTx<'_, S> {
    fn id(&self) -> TxnId {
        self.id
    }

    #[inline]
    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        let hint = self.check(table, key, false)?;
        let t = self.db.table(table);
        Ok(self.w.exec.get(t, key, hint, cols))
    }

    #[inline]
    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        let hint = self.check(table, key, true)?;
        let t = self.db.table(table);
        let id = self.id;
        Ok(self
            .w
            .exec
            .update_key(t, key, hint, cols, |_| Install::Swap(id), f))
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
        self.w.exec.insert(t, key, rid, Install::Swap(self.id), f);
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let hint = self.check(table, key, true)?;
        let t = self.db.table(table);
        let Some((rid, _)) = self.w.exec.read_version(t, key, hint) else {
            return Ok(false);
        };
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
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        check_live(self.aborted)?;
        let t = self.db.table(table);
        if !t.is_ordered() {
            return Err(self.fail_detail(
                AbortReason::InvalidData,
                format!("{}: scan needs an ordered index", t.name()),
            ));
        }
        if let Held::Locks(l) = self.held {
            if !t.is_read_only() && !S::allows_range(l, table, lo, hi) {
                return Err(self.fail_detail(
                    AbortReason::Validation,
                    format!("scan of [{lo}, {hi}] in table {table} is not covered by the locks"),
                ));
            }
        }
        self.w.exec.scan(t, lo, hi, cols, f);
        Ok(())
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

impl<S: LockScheme> Drop for VllTx<'_, S> {
    fn drop(&mut self) {
        if !self.done {
            self.finish(false);
        }
    }
}
