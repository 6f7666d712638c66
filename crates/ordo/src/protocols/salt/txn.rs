//! The Salt transaction: an ACID transaction, or a BASE transaction's current alkaline
//! subtransaction, over the kit's lock table with Table 3.2's modes.
//!
//! * Every operation takes its lock first — ACID-R/W for an ACID transaction, alkaline-R/W for a
//!   BASE one — held as Table 3.1 says for the level ([`super::level`]): a short-term lock goes when
//!   the operation is done, a long-term one at the end of the transaction (ACID) or of the alkaline
//!   subtransaction, when it is **downgraded** to saline ([`SaltTx::end_alkaline`]).
//! * A BASE write enters the record's chain ([`super::chain`]); a BASE read that finds the record
//!   dirty enters it too and keeps a saline-R lock, even where the level would release the read lock
//!   at once (rule 1 needs the reader to hold it).
//! * At the end of a BASE transaction every lock is saline: those outside any chain go at once, the
//!   chain entries in the order the two release rules allow ([`SaltTx::release_all`]).
//! * Lock waits are FIFO in the lock table and give up after the configured lock-wait timeout
//!   (`AbortReason::Deadlock`): that is how deadlocks are broken (the kit has no waits-for graph;
//!   `twopl`'s lives in its own family).
//! * `--op-delay-us` is slept after each operation with its locks held, `--commit-delay-us` before a
//!   commit (of an ACID transaction or of an alkaline subtransaction) releases or downgrades them.
//!
//! A failing call of an ACID transaction, or of a BASE transaction's first alkaline
//! subtransaction, rolls everything back and releases every lock before returning the abort; after
//! acceptance it rolls back the running alkaline subtransaction only ([`SaltTx::rollback_alkaline`]).

use super::chain::SaltMeta;
use super::level::Hold;
use super::modes::SaltMode;
use super::{Kind, Salt};
use crate::check::TxnId;
use crate::protocols::kit::inplace::{InPlace, Install};
use crate::protocols::kit::lock_table::{Outcome, Owner};
use crate::storage::{ColumnSet, RowId, RowMut, RowRef, Table, TableId, ABSENT, SUPREMUM};
use crate::txn::{check_live, refuse_write, Abort, AbortReason, Recorder, Tx, TxResult, TxnIds};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A lock the running transaction holds.
#[derive(Clone, Copy, Debug)]
struct Held {
    table: TableId,
    rid: RowId,
    mode: SaltMode,
    /// Its most recent chain entry (ticket, a write), if it made one.
    last: Option<(u32, bool)>,
}

/// One chain entry the running BASE transaction made.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Index of its lock in the held list.
    lock: u32,
    ticket: u32,
    write: bool,
    /// The operation's number within the transaction (rule 2: reads before a write).
    seq: u32,
    done: bool,
}

/// Per-thread state of a [`Salt`] protocol.
pub struct SaltWorker {
    ids: TxnIds,
    exec: InPlace,
    held: Vec<Held>,
    entries: Vec<Entry>,
    /// Operations of the running transaction so far.
    seq: u32,
    owner: Owner,
}

impl SaltWorker {
    pub(super) fn new(ids: TxnIds, recording: bool) -> Self {
        SaltWorker {
            owner: ids.worker(),
            exec: InPlace::new(ids.worker(), recording, true),
            ids,
            held: Vec::new(),
            entries: Vec::new(),
            seq: 0,
        }
    }
    pub(super) fn recorder(&mut self) -> &mut Recorder {
        &mut self.exec.rec
    }
    /// The worker's id (its owner id in the lock table).
    pub fn owner_id(&self) -> u32 {
        self.owner
    }
}

/// A running [`Salt`] transaction.
pub struct SaltTx<'w, K: Kind> {
    p: &'w Salt<K>,
    w: &'w mut SaltWorker,
    /// The id of what is running: the ACID transaction, or the current alkaline subtransaction
    /// (each is its own transaction in the recorded history).
    id: TxnId,
    base: bool,
    /// A BASE transaction whose first alkaline subtransaction committed.
    accepted: bool,
    /// The running alkaline subtransaction touches one record (§3.5's local transaction): its
    /// alkaline locks become saline right after each operation.
    local: bool,
    aborted: Option<AbortReason>,
    done: bool,
}

impl<'w, K: Kind> SaltTx<'w, K> {
    pub(super) fn begin(p: &'w Salt<K>, w: &'w mut SaltWorker, base: bool) -> Self {
        let id = w.ids.next_id();
        w.seq = 0;
        SaltTx {
            p,
            w,
            id,
            base,
            accepted: false,
            local: false,
            aborted: None,
            done: false,
        }
    }

    /// Whether this is a BASE transaction.
    pub fn is_base(&self) -> bool {
        self.base
    }

    /// Whether this BASE transaction was accepted (its first alkaline subtransaction committed).
    pub fn is_accepted(&self) -> bool {
        self.accepted
    }

    /// The locks held, as (table, row, mode) (tests, diagnostics).
    pub fn locks(&self) -> Vec<(TableId, RowId, SaltMode)> {
        self.w
            .held
            .iter()
            .map(|h| (h.table, h.rid, h.mode))
            .collect()
    }

    /// Chain entries not yet released (tests).
    pub fn chain_entries(&self) -> usize {
        self.w.entries.iter().filter(|e| !e.done).count()
    }

    /// Marks the running alkaline subtransaction local (§3.5).
    pub(super) fn set_local(&mut self, local: bool) {
        self.local = local;
    }

    /// A failing call: rolls back (everything, or the running alkaline subtransaction of an
    /// accepted BASE transaction) and returns the abort.
    #[cold]
    fn fail_with(&mut self, a: Abort) -> Abort {
        if self.base && self.accepted {
            self.rollback_alkaline();
        } else {
            self.finish(false);
        }
        self.aborted = Some(a.reason);
        a
    }

    #[cold]
    fn fail(&mut self, reason: AbortReason) -> Abort {
        self.fail_with(Abort::new(reason))
    }

    #[cold]
    fn fail_detail(&mut self, reason: AbortReason, detail: String) -> Abort {
        self.fail_with(Abort::with_detail(reason, detail))
    }

    fn refuse_write(&mut self, t: &Table<SaltMeta>) -> TxResult<()> {
        refuse_write(t).map_err(|a| self.fail_with(a))
    }

    /// The read and write modes of this transaction.
    #[inline]
    fn mode(&self, write: bool) -> SaltMode {
        match (self.base, write) {
            (false, false) => SaltMode::AcidR,
            (false, true) => SaltMode::AcidW,
            (true, false) => SaltMode::AlkR,
            (true, true) => SaltMode::AlkW,
        }
    }

    #[inline]
    fn find(&self, table: TableId, rid: RowId) -> Option<usize> {
        self.w
            .held
            .iter()
            .position(|h| h.rid == rid && h.table == table)
    }

    /// Takes (or converts to) `mode` on `rid`: the lock's index in the held list and the mode it
    /// was held in before (`None`: newly taken), for a short-term lock to go back to.
    fn lock(
        &mut self,
        t: &Table<SaltMeta>,
        rid: RowId,
        mode: SaltMode,
    ) -> Result<(usize, Option<SaltMode>), AbortReason> {
        let table = t.id();
        let owner = self.w.owner;
        let locks = &self.p.locks;
        if let Some(i) = self.find(table, rid) {
            let cur = self.w.held[i].mode;
            if lt_covers(cur, mode) {
                return Ok((i, Some(cur)));
            }
            match locks.lock(owner, table, rid, mode, true) {
                Outcome::Granted => {}
                Outcome::Waiting => self.wait(table, rid, mode)?,
                // A second conversion on one record: the two would wait for each other.
                Outcome::Conflict => return Err(AbortReason::Deadlock),
            }
            self.w.held[i].mode = lt_join(cur, mode);
            return Ok((i, Some(cur)));
        }
        match locks.lock(owner, table, rid, mode, true) {
            Outcome::Granted => {}
            Outcome::Waiting => self.wait(table, rid, mode)?,
            Outcome::Conflict => return Err(AbortReason::Deadlock),
        }
        self.w.held.push(Held {
            table,
            rid,
            mode,
            last: None,
        });
        Ok((self.w.held.len() - 1, None))
    }

    /// Waits (FIFO, in the lock table) until the request is granted, or withdraws it after the
    /// lock-wait timeout or when the spec runner cancels the wait.
    #[cold]
    fn wait(&self, table: TableId, rid: RowId, mode: SaltMode) -> Result<(), AbortReason> {
        let owner = self.w.owner;
        let locks = &self.p.locks;
        let waiting = crate::txn::wait::blocked();
        let backoff = crossbeam_utils::Backoff::new();
        let start = Instant::now();
        loop {
            if locks.is_granted(owner, table, rid, mode) {
                return Ok(());
            }
            // The lock-wait timeout, or the spec runner cancelling the wait (isolationtester's
            // cancel): withdraw the request.
            if start.elapsed() > self.p.timeout || waiting.canceled() {
                // Granted meanwhile: held after all.
                return if locks.withdraw(owner, table, rid) {
                    Err(AbortReason::Deadlock)
                } else {
                    Ok(())
                };
            }
            pause(&backoff);
            waiting.round();
        }
    }

    /// After a read under lock `i` of a BASE transaction: if the record is dirty (some chain entry
    /// on it is held), enter the chain as a read unless this lock's own entry is still the last.
    /// Returns whether the lock is in the chain (and so must stay, as saline at least).
    fn note_read(&mut self, t: &Table<SaltMeta>, i: usize) -> bool {
        if !self.base {
            return false;
        }
        let h = self.w.held[i];
        let meta = t.meta(h.rid);
        if meta.dirty() && meta.last() != h.last.map(|l| l.0) {
            let ticket = meta.enter();
            self.push_entry(i, ticket, false);
        }
        self.w.held[i].last.is_some()
    }

    /// After a write under lock `i` of a BASE transaction: enter the chain as a write unless this
    /// lock's own write entry is still the last.
    fn note_write(&mut self, t: &Table<SaltMeta>, i: usize) {
        if !self.base {
            return;
        }
        let h = self.w.held[i];
        let meta = t.meta(h.rid);
        let mine = matches!(h.last, Some((tk, true)) if meta.last() == Some(tk));
        if !mine {
            let ticket = meta.enter();
            self.push_entry(i, ticket, true);
        }
    }

    fn push_entry(&mut self, i: usize, ticket: u32, write: bool) {
        let seq = self.w.seq;
        self.w.entries.push(Entry {
            lock: i as u32,
            ticket,
            write,
            seq,
            done: false,
        });
        self.w.held[i].last = Some((ticket, write));
    }

    /// The end of an operation under lock `i` (taken in `prev` before it, or newly): the operation
    /// delay, with the locks held (after a local alkaline lock became saline), then a short-term
    /// lock goes back to `prev` — or to saline-R, when a BASE read entered the chain.
    fn end_op(&mut self, i: Option<(usize, Option<SaltMode>)>, hold: Hold, in_chain: bool) {
        self.w.seq += 1;
        if self.local {
            if let Some((i, _)) = i {
                self.downgrade(i, self.w.held[i].mode.saline());
            }
        }
        self.p.delay.after_op();
        let Some((i, prev)) = i else { return };
        if hold != Hold::Short {
            return;
        }
        let target = match (prev, in_chain) {
            (Some(p), false) => p,
            (Some(p), true) => lt_join(p, SaltMode::SalR),
            (None, true) => SaltMode::SalR,
            (None, false) => {
                // Newly taken for this operation, nothing kept: it is the last one held.
                debug_assert_eq!(i, self.w.held.len() - 1);
                let h = self.w.held.pop().expect("the lock just taken");
                self.p.locks.unlock(self.w.owner, h.table, h.rid);
                return;
            }
        };
        self.downgrade(i, target);
    }

    /// Downgrades lock `i` to `mode` (if it is weaker).
    fn downgrade(&mut self, i: usize, mode: SaltMode) {
        let h = &mut self.w.held[i];
        if h.mode != mode && lt_covers(h.mode, mode) {
            let ok = self.p.locks.downgrade(self.w.owner, h.table, h.rid, mode);
            debug_assert!(ok, "downgrade of a held lock");
            h.mode = mode;
        }
    }

    /// Every alkaline lock becomes saline (the end of an alkaline subtransaction).
    fn downgrade_alkaline(&mut self) {
        for i in 0..self.w.held.len() {
            let m = self.w.held[i].mode;
            if m.is_alkaline() {
                self.downgrade(i, m.saline());
            }
        }
    }

    /// The slot of `key` (creating an absent one, so a lock on it guards the key's absence),
    /// locked in `mode` as `hold` says; the slot, the lock, and the version word read under it.
    #[inline]
    fn lock_key(
        &mut self,
        t: &Table<SaltMeta>,
        key: u64,
        write: bool,
    ) -> TxResult<(RowId, (usize, Option<SaltMode>), u64)> {
        let rid = match t.lookup(key) {
            Some(r) => r,
            None => t.get_or_create(key).0,
        };
        let mode = self.mode(write);
        match self.lock(t, rid, mode) {
            Ok(l) => Ok((rid, l, t.version(rid).load(Ordering::Acquire))),
            Err(r) => Err(self.fail(r)),
        }
    }

    /// Next-key locking for an insert of `key` at serializable (see `twopl`'s module docs): write
    /// locks on the entries after `key` up to the first present one (or the supremum).
    fn lock_next_keys(&mut self, t: &Table<SaltMeta>, key: u64) -> Result<(), AbortReason> {
        let mode = self.mode(true);
        let mut cur = key;
        loop {
            let (next_key, rid) = match t.next_after(cur) {
                Some((k, r)) => (Some(k), r),
                None => (None, SUPREMUM),
            };
            self.lock(t, rid, mode)?;
            if t.next_after(cur).map(|e| e.0) != next_key {
                continue;
            }
            match next_key {
                Some(k) if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 => cur = k,
                _ => return Ok(()),
            }
        }
    }

    /// Commits the running alkaline subtransaction: the commit delay, then its writes stay (the
    /// undo log is emptied), it is recorded as committed, and its alkaline locks become saline. The
    /// first one accepts the BASE transaction. The next operations belong to the next one.
    pub fn end_alkaline(&mut self) -> TxResult<()> {
        check_live(self.aborted)?;
        debug_assert!(self.base);
        if !self.local {
            self.p.delay.before_release();
        }
        self.w.exec.finish(&self.p.db, true);
        self.downgrade_alkaline();
        if self.local {
            self.p.delay.before_release();
        }
        self.w.exec.rec.finish(self.id, true);
        self.id = self.w.ids.next_id();
        self.accepted = true;
        self.local = false;
        Ok(())
    }

    /// Rolls back the running alkaline subtransaction of an accepted BASE transaction: its writes
    /// are undone, it is recorded as aborted, its alkaline locks become saline (kept, with their
    /// chain entries, to the end), and the transaction is live again for what comes next.
    pub fn rollback_alkaline(&mut self) {
        debug_assert!(self.base && self.accepted);
        if self.aborted.take().is_some() {
            // The failing call rolled back already.
            return;
        }
        self.w.exec.finish(&self.p.db, false);
        self.downgrade_alkaline();
        self.w.exec.rec.finish(self.id, false);
        self.id = self.w.ids.next_id();
        self.local = false;
    }

    /// Ends the transaction: undo (on abort) of what is still undoable, then every lock released
    /// (a BASE transaction's by the release rules), then the outcome recorded.
    fn finish(&mut self, committed: bool) {
        let db = &self.p.db;
        self.w.exec.finish(db, committed);
        if self.base {
            self.downgrade_alkaline();
            self.release_all();
        } else {
            let owner = self.w.owner;
            for h in self.w.held.drain(..) {
                self.p.locks.unlock(owner, h.table, h.rid);
            }
        }
        self.w.held.clear();
        self.w.entries.clear();
        self.w.exec.rec.finish(self.id, committed);
        self.done = true;
    }

    /// Releases every (saline) lock of a BASE transaction: those outside the chain at once, then
    /// the chain entries as rules 1 and 2 allow (waiting for earlier entries to go), each lock once
    /// its last entry went.
    fn release_all(&mut self) {
        let owner = self.w.owner;
        let db = &self.p.db;
        for h in &self.w.held {
            if h.last.is_none() {
                self.p.locks.unlock(owner, h.table, h.rid);
            }
        }
        let mut left = self.w.entries.len();
        if left == 0 {
            return;
        }
        let mut waiting = None;
        let backoff = crossbeam_utils::Backoff::new();
        loop {
            let mut progress = false;
            for j in 0..self.w.entries.len() {
                let e = self.w.entries[j];
                if e.done {
                    continue;
                }
                let h = self.w.held[e.lock as usize];
                let meta = db.table(h.table).meta(h.rid);
                // Rule 1: the previous entry on the record (the most recent non-ACID lock before
                // this one) is gone.
                if !meta.may_release(e.ticket) {
                    continue;
                }
                // Rule 2: a write waits for the transaction's earlier reads.
                if e.write
                    && self
                        .w
                        .entries
                        .iter()
                        .any(|r| !r.done && !r.write && r.seq < e.seq)
                {
                    continue;
                }
                meta.release(e.ticket);
                self.w.entries[j].done = true;
                progress = true;
                left -= 1;
                if !self.w.entries.iter().any(|x| !x.done && x.lock == e.lock) {
                    self.p.locks.unlock(owner, h.table, h.rid);
                }
            }
            if left == 0 {
                return;
            }
            if !progress {
                waiting
                    .get_or_insert_with(crate::txn::wait::blocked)
                    .round();
                pause(&backoff);
            }
        }
    }
}

/// One round of a wait: spin and yield first, then sleep briefly (clients that mostly wait, as in
/// the thesis's set-up, must not burn the cores the lock holders need).
#[inline]
fn pause(backoff: &crossbeam_utils::Backoff) {
    if backoff.is_completed() {
        std::thread::sleep(Duration::from_micros(20));
    } else {
        backoff.snooze();
    }
}

#[inline]
fn lt_covers(a: SaltMode, b: SaltMode) -> bool {
    crate::protocols::kit::lock_table::LockModes::covers(a, b)
}

#[inline]
fn lt_join(a: SaltMode, b: SaltMode) -> SaltMode {
    crate::protocols::kit::lock_table::LockModes::join(a, b)
}

impl<K: Kind> Tx for SaltTx<'_, K> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        let hold = self.p.level.read();
        if t.is_read_only() || hold == Hold::None {
            // Nothing can conflict (read-only table), or the level takes no read lock.
            if !t.is_read_only() {
                self.end_op(None, hold, false);
            }
            return Ok(self.w.exec.get(t, key, None, cols));
        }
        let (rid, l, v) = self.lock_key(t, key, false)?;
        self.w.exec.rec.read(table, key, v);
        let in_chain = self.note_read(t, l.0);
        let present = v & ABSENT == 0;
        if present {
            let _ = self.w.exec.read(t, rid, cols);
        }
        self.end_op(Some(l), hold, in_chain);
        Ok(present.then(|| self.w.exec.last_image(t)))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        self.refuse_write(t)?;
        let (rid, l, v) = self.lock_key(t, key, true)?;
        self.w.exec.rec.read(table, key, v);
        if v & ABSENT != 0 {
            self.note_read(t, l.0);
            self.end_op(Some(l), Hold::Long, false);
            return Ok(None);
        }
        // The read half of a read-modify-write: a dirty value enters the chain as a read first.
        self.note_read(t, l.0);
        let out = self
            .w
            .exec
            .update(t, key, rid, cols, Install::Swap(self.id), f);
        self.note_write(t, l.0);
        self.end_op(Some(l), Hold::Long, true);
        Ok(Some(out))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        self.refuse_write(t)?;
        let (rid, _) = t.get_or_create(key);
        let l = match self.lock(t, rid, self.mode(true)) {
            Ok(l) => l,
            Err(r) => return Err(self.fail(r)),
        };
        if t.version(rid).load(Ordering::Acquire) & ABSENT == 0 {
            return Err(self.fail_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            ));
        }
        if t.is_ordered() && self.p.level.range_read() != Hold::None {
            if let Err(r) = self.lock_next_keys(t, key) {
                return Err(self.fail(r));
            }
        }
        self.w.exec.insert(t, key, rid, Install::Swap(self.id), f);
        self.note_write(t, l.0);
        self.end_op(Some(l), Hold::Long, true);
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        check_live(self.aborted)?;
        let t = self.p.db.table(table);
        self.refuse_write(t)?;
        let (rid, l, v) = self.lock_key(t, key, true)?;
        if v & ABSENT != 0 {
            self.w.exec.rec.read(table, key, v);
            self.note_read(t, l.0);
            self.end_op(Some(l), Hold::Long, false);
            return Ok(false);
        }
        self.w
            .exec
            .delete(t, key, rid, Install::Swap(self.id | ABSENT));
        self.note_write(t, l.0);
        self.end_op(Some(l), Hold::Long, true);
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
        let t = self.p.db.table(table);
        if !t.is_ordered() {
            return Err(self.fail_detail(
                AbortReason::InvalidData,
                format!("{}: scan needs an ordered index", t.name()),
            ));
        }
        if lo > hi {
            return Ok(());
        }
        let read = self.p.level.read();
        let gaps = self.p.level.range_read();
        if t.is_read_only() || read == Hold::None {
            self.w.exec.scan(t, lo, hi, cols, f);
            if !t.is_read_only() {
                self.end_op(None, read, false);
            }
            return Ok(());
        }
        self.w.exec.image(t);
        let mode = self.mode(false);
        let succ = |prev: Option<u64>| match prev {
            None => t.range(lo, u64::MAX).next(),
            Some(p) => t.next_after(p),
        };
        let mut prev: Option<u64> = None;
        loop {
            let (key, rid) = match succ(prev) {
                Some((k, r)) => (Some(k), r),
                None => (None, SUPREMUM),
            };
            let in_range = key.is_some_and(|k| k <= hi);
            if !in_range && gaps == Hold::None {
                // No gap lock at this level: the range ends here.
                self.w.exec.rec.scan(table, lo, hi);
                self.end_op(None, read, false);
                return Ok(());
            }
            let hold = if in_range { read } else { gaps };
            let l = match self.lock(t, rid, mode) {
                Ok(l) => l,
                Err(r) => return Err(self.fail(r)),
            };
            if gaps != Hold::None && succ(prev).map(|e| e.0) != key {
                // An entry appeared in the gap: lock it first (keeping this lock).
                continue;
            }
            let Some(k) = key.filter(|&k| k <= hi) else {
                self.w.exec.rec.scan(table, lo, hi);
                self.end_op(Some(l), hold, false);
                return Ok(());
            };
            prev = Some(k);
            let v = t.version(rid).load(Ordering::Acquire);
            let in_chain = self.note_read(t, l.0);
            if v & ABSENT != 0 {
                self.w.exec.rec.read(table, k, v);
                self.end_short(l, hold, in_chain);
                continue;
            }
            let go_on = f(k, self.w.exec.scan_row(t, k, rid, v, cols));
            self.end_short(l, hold, in_chain);
            if !go_on {
                self.w.exec.rec.scan(table, lo, k);
                self.end_op(None, read, false);
                return Ok(());
            }
        }
    }

    fn commit(mut self) -> TxResult<()> {
        check_live(self.aborted)?;
        if !(self.base && self.local) {
            self.p.delay.before_release();
        }
        self.finish(true);
        Ok(())
    }

    fn abort(mut self) {
        if !self.done {
            self.finish(false);
        }
    }
}

impl<K: Kind> SaltTx<'_, K> {
    /// A scanned entry's lock at the end of its row (one scan is one operation: no delay, no
    /// numbering here): a short-term one goes back to what it was (or saline-R, in the chain), a
    /// local alkaline one becomes saline.
    fn end_short(&mut self, (i, prev): (usize, Option<SaltMode>), hold: Hold, in_chain: bool) {
        if hold != Hold::Short {
            if self.local {
                self.downgrade(i, self.w.held[i].mode.saline());
            }
            return;
        }
        let target = match (prev, in_chain) {
            (Some(p), false) => p,
            (Some(p), true) => lt_join(p, SaltMode::SalR),
            (None, true) => SaltMode::SalR,
            (None, false) => {
                let h = self.w.held.pop().expect("the lock just taken");
                self.p.locks.unlock(self.w.owner, h.table, h.rid);
                return;
            }
        };
        self.downgrade(i, target);
    }
}

impl<K: Kind> Drop for SaltTx<'_, K> {
    fn drop(&mut self) {
        if !self.done {
            self.finish(false);
        }
    }
}
