//! One transaction on the multi-version store, at level `M` (`rc`, `si` or `ssi`).
//!
//! * **Reads** ([`MvccTx::read_version`], Cahill Fig 3.4) take the record latch, pick the version the
//!   snapshot sees and copy it. Under SSI they also take a SIREAD lock, and mark a conflict with the
//!   holder of an EXCLUSIVE lock and with the creator of every version newer than the one read.
//! * **Writes** ([`MvccTx::lock_for_write`], Fig 3.5) take the record's EXCLUSIVE lock (waiting for a
//!   running holder, aborting with `UpdateConflict` if the holder commits or a newer version is already
//!   committed — first-updater-wins), copy the row into the write set and change it there. Under SSI the
//!   writer then marks a conflict with every relevant SIREAD owner (point and range).
//! * **Commit** (Fig 3.2) takes a commit timestamp (atomically with the SSI check), then installs each
//!   write: the old in-place image moves into the chain (only if a running snapshot may need it), the
//!   new image goes in place, the lock is released.

use super::record::{MvMeta, Record, Visible};
use super::state::{Handle, Pool, TxnShared, ABORTED, ACTIVE, COMMITTED, COMMITTING, DOOMED};
use super::{clock::SlotLease, spin::SpinGuard, ssi, Mode, Mvcc};
use crate::check::TxnId;
use crate::protocols::kit::inplace::{get_unlocked, scan_unlocked};
use crate::storage::{ColumnSet, RowId, RowMut, RowRef, Schema, Table, TableId, ABSENT};
use crate::txn::{refuse_write, wait, Abort, AbortReason, Recorder, Tx, TxResult, TxnIds};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A blocked writer gives up with a `Deadlock` abort after this long even if no cycle was found.
const WAIT_LIMIT: Duration = Duration::from_secs(2);

/// Per-thread state: ids, recorder, published snapshot slot and reusable write-set buffers.
///
/// A worker that ends leaves what the next one can reuse: its snapshot slot ([`SlotLease`]), its
/// retention queues ([`ssi::Retainer`]), its transaction records ([`Pool::park`]) and where its
/// transaction ids stopped ([`crate::txn::IdLedger`]), so an embedder that opens and closes
/// sessions all day does not grow the registries every commit walks, nor the record pool.
pub struct MvccWorker {
    ids: TxnIds,
    pub(super) rec: Recorder,
    slot: SlotLease,
    pool: Arc<Pool>,
    writes: Vec<WriteEntry>,
    images: Vec<u64>,
    buf: Vec<u64>,
    /// Point SIREAD locks the running transaction took.
    sireads: usize,
    /// This worker's retained committed transactions (SSI).
    retained: ssi::Retainer,
    /// This worker's transaction records, oldest first (the last is the running transaction's);
    /// the oldest is recycled once released (see `state`).
    spent: VecDeque<Handle>,
    /// Buffers of dropped versions, reused for the versions this worker's commits push.
    spare: Vec<Box<[u64]>>,
    /// The horizon this worker computed last (a stale horizon is a safe one, see `clock`).
    horizon: u64,
}

impl MvccWorker {
    pub(super) fn new(
        ids: TxnIds,
        recording: bool,
        slot: SlotLease,
        retained: ssi::Retainer,
        pool: Arc<Pool>,
    ) -> Self {
        MvccWorker {
            rec: Recorder::new(ids.worker(), recording),
            ids,
            spent: pool.unpark(),
            slot,
            pool,
            writes: Vec::new(),
            images: Vec::new(),
            buf: Vec::new(),
            sireads: 0,
            retained,
            spare: Vec::new(),
            horizon: 0,
        }
    }
}

impl Drop for MvccWorker {
    /// Parks the worker's records for the next worker (its slot, retention queues and transaction
    /// ids go back as their fields drop).
    fn drop(&mut self) {
        self.pool.park(std::mem::take(&mut self.spent));
    }
}

/// What a write-set entry installs at commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A present row image (update or insert).
    Row,
    /// A tombstone.
    Delete,
    /// Nothing: the lock was taken for a record that turned out absent (kept until the end).
    Nothing,
}

/// A record this transaction holds the EXCLUSIVE lock on, with its buffered image.
#[derive(Clone, Copy, Debug)]
struct WriteEntry {
    table: TableId,
    key: u64,
    rid: RowId,
    /// Offset of the full-row image in `MvccWorker::images`.
    off: usize,
    kind: Kind,
    written: ColumnSet,
}

/// A running `rc` / `si` / `ssi` transaction. Dropping it before commit aborts it.
pub struct MvccTx<'w, M: Mode> {
    p: &'w Mvcc<M>,
    w: &'w mut MvccWorker,
    me: &'w TxnShared,
    /// `me`'s handle (its id and record).
    h: Handle,
    /// Snapshot timestamp (`T.begin`), or [`NO_SNAPSHOT`] until the first operation takes it.
    begin: u64,
    /// The GC horizon when the snapshot was taken (a stale horizon is a safe one: it only keeps more).
    horizon: u64,
    done: bool,
    /// §3.8: a read-only query run at plain SI under `ssi` (no SIREAD locks, no conflicts).
    query: bool,
    /// SSI: whether it made a tracked read (a SIREAD lock, point or range, or a read that may have
    /// met a newer version). Without one it can have no out-conflict (see `SsiShared::commit`).
    tracked: bool,
}

/// Copies columns `cols` of a full-row image `src` into `out`.
#[inline]
fn copy_cols(schema: &Schema, cols: ColumnSet, src: &[u64], out: &mut [u64]) {
    schema.for_each_word_run(cols, |r| out[r.clone()].copy_from_slice(&src[r]));
}

/// `MvccTx::begin` before the first operation.
const NO_SNAPSHOT: u64 = u64::MAX;

fn update_conflict() -> Abort {
    Abort::new(AbortReason::UpdateConflict)
}

/// A short pause while another transaction installs its commit (never a wait for a running one).
#[inline]
fn pause(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

impl<'w, M: Mode> MvccTx<'w, M> {
    pub(super) fn new(p: &'w Mvcc<M>, w: &'w mut MvccWorker) -> Self {
        w.writes.clear();
        w.images.clear();
        w.sireads = 0;
        let id = w.ids.next_id();
        // The worker's oldest record if it was released (no allocation), else a new one.
        let me = p.pool.record(&mut w.spent, id);
        let h = me.handle();
        MvccTx {
            p,
            w,
            me,
            h,
            begin: NO_SNAPSHOT,
            horizon: 0,
            done: false,
            query: false,
            tracked: false,
        }
    }

    /// §3.8: runs this transaction as a read-only query at plain SI under `ssi` — it takes no SIREAD
    /// locks and records no conflicts, so update transactions stay serializable among themselves but the
    /// read-only anomaly becomes possible. Writing afterwards aborts it (`User`). No effect under `si`/`rc`.
    pub fn run_as_query_at_si(&mut self) {
        self.query = M::SSI;
    }

    /// This transaction's snapshot timestamp, taken now if no operation took it yet.
    ///
    /// As in PostgreSQL, the snapshot is taken at the transaction's **first operation**, not when it
    /// is created: an interactive (SQL) transaction whose `BEGIN` comes long before its first statement
    /// sees the commits made in between. A program runs its first operation at once, so for it the
    /// two are the same. Calling this forces the snapshot (the schedule tests' `b_i` step).
    #[inline]
    pub fn snapshot(&mut self) -> u64 {
        if self.begin == NO_SNAPSHOT {
            self.begin = self.p.clock.begin(&self.w.slot);
            self.horizon = self.w.horizon;
        }
        self.begin
    }

    /// The snapshot the next statement reads at (under `rc` a fresh one per statement; the first one
    /// is still published, which keeps the horizon safe).
    #[inline]
    fn statement_snapshot(&mut self) -> u64 {
        let first = self.snapshot();
        if M::RC {
            self.p.clock.statement()
        } else {
            first
        }
    }

    #[inline]
    fn tracks_reads(&self) -> bool {
        M::SSI && !self.query
    }

    #[inline]
    fn check_doomed(&self) -> TxResult<()> {
        if M::SSI {
            self.p.ssi.doomed(self.me)
        } else {
            Ok(())
        }
    }

    #[inline]
    fn find_write(&self, table: TableId, key: u64) -> Option<usize> {
        self.w
            .writes
            .iter()
            .rposition(|e| e.key == key && e.table == table)
    }

    /// Latches record `rid`, waiting while a committer whose timestamp is inside snapshot `s` installs
    /// (so no snapshot misses a commit it should see).
    fn latch_settled<'t>(&self, meta: &'t MvMeta, s: u64) -> SpinGuard<'t, Record> {
        let mut spins = 0;
        loop {
            let rec = meta.0.lock();
            let settling = rec.lock.is_some_and(|l| match l.state() {
                Some((COMMITTING, _)) => true,
                Some((COMMITTED, cts)) => cts <= s,
                _ => false,
            });
            if !settling {
                return rec;
            }
            drop(rec);
            pause(&mut spins);
        }
    }

    /// Cahill Fig 3.4: reads the version of `rid` that snapshot `s` sees into `out` (columns `cols`) and
    /// returns its version word. Under SSI takes a point SIREAD lock (unless `point` is false: a scan,
    /// covered by its range lock) and marks conflicts with newer writers.
    fn read_version(
        &mut self,
        t: &Table<MvMeta>,
        rid: RowId,
        s: u64,
        cols: ColumnSet,
        point: bool,
    ) -> TxResult<u64> {
        let p = self.p;
        let horizon = self.horizon;
        let mut rec = self.latch_settled(t.meta(rid), s);
        if self.tracks_reads() {
            self.tracked = true;
            // Overlaps the load of the SIREAD owners' records (if the lock reads them) with copying
            // the row.
            rec.sireads.prefetch_for_lock();
        }
        rec.prune(horizon, &self.w.slot.1, &mut self.w.spare);
        let words = t.schema().row_words();
        if self.w.buf.len() < words {
            self.w.buf.resize(words, 0);
        }
        let vis = rec.visible(s);
        let word = match vis {
            Visible::InPlace => {
                t.read_into(rid, cols, &mut self.w.buf[..words]);
                t.version(rid).load(Ordering::Acquire)
            }
            Visible::Chain(i) => {
                let v = &rec.chain[i];
                copy_cols(t.schema(), t.schema().clamp(cols), &v.data, &mut self.w.buf);
                v.word
            }
            Visible::None => ABSENT,
        };
        if self.tracks_reads() {
            let (me, h) = (self.me, self.h);
            if point && rec.sireads.lock(h, horizon) {
                self.w.sireads += 1;
            }
            // A writer holding the EXCLUSIVE lock will create a version newer than the one read.
            if let Some(l) = rec.lock {
                if l.id != h.id {
                    p.ssi.mark_conflict(h, l, me)?;
                }
            }
            // Every committed version newer than the one read: markConflict(T, creator).
            let newer = match vis {
                Visible::InPlace => &rec.chain[rec.chain.len()..],
                Visible::Chain(i) => &rec.chain[i + 1..],
                Visible::None => &rec.chain[..],
            };
            for v in newer {
                if let Some(c) = v.creator {
                    p.ssi.mark_conflict(h, c, me)?;
                }
            }
            if vis != Visible::InPlace {
                if let Some(c) = rec.creator {
                    p.ssi.mark_conflict(h, c, me)?;
                }
            }
        }
        Ok(word)
    }

    /// Waits for `holder` to finish (it holds an EXCLUSIVE lock this transaction wants), bracketed by
    /// [`wait::blocked`]. Follows the waits-for chain: a cycle back to this transaction, or a wait past
    /// [`WAIT_LIMIT`], ends in a `Deadlock` abort.
    fn wait_for(&self, holder: Handle) -> TxResult<()> {
        let blocked = wait::blocked();
        *self.me.waiting_for.lock() = Some(holder);
        let start = Instant::now();
        let mut spins = 0u32;
        let out = loop {
            if !matches!(holder.status(), Some(ACTIVE | DOOMED)) {
                break Ok(());
            }
            if M::SSI && self.me.status() == DOOMED {
                break Err(Abort::new(AbortReason::Unsafe));
            }
            // A cancel (the spec runner's, as isolationtester's) gives up as the wait limit does.
            if blocked.canceled() || self.waits_for_me(holder) || start.elapsed() > WAIT_LIMIT {
                break Err(Abort::new(AbortReason::Deadlock));
            }
            // One more re-examination of the holder, still blocked (the spec runner's settle signal).
            blocked.round();
            spins += 1;
            if spins < 16 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        };
        *self.me.waiting_for.lock() = None;
        out
    }

    /// Whether the waits-for chain starting at `holder` leads back to this transaction (a link read
    /// from a record recycled meanwhile ends the chain).
    fn waits_for_me(&self, holder: Handle) -> bool {
        let mut cur = holder;
        for _ in 0..64 {
            let next = *cur.rec().waiting_for.lock();
            if cur.status().is_none() {
                return false;
            }
            match next {
                Some(n) if n.id == self.h.id => return true,
                Some(n) => cur = n,
                None => return false,
            }
        }
        false
    }

    /// Cahill Fig 3.5 with SI's first-updater-wins: takes the EXCLUSIVE lock on `rid`, copies the
    /// in-place (newest committed) row into a new write-set entry and returns its index and the version
    /// word it replaces. Under SSI, marks a conflict with every relevant SIREAD owner.
    fn lock_for_write(&mut self, t: &Table<MvMeta>, rid: RowId, key: u64) -> TxResult<usize> {
        if self.query {
            return Err(Abort::user("a query run at SI may not write"));
        }
        let p = self.p;
        let s = self.snapshot();
        let mut spins = 0;
        // (The caller checked for a doom just before.)
        loop {
            let mut rec = t.meta(rid).0.lock();
            if let Some(l) = rec.lock {
                drop(rec);
                match l.state() {
                    Some((ACTIVE | DOOMED, _)) => self.wait_for(l)?,
                    Some((COMMITTED, cts)) if !M::RC && cts > s => return Err(update_conflict()),
                    _ => pause(&mut spins),
                }
                // Doomed while it waited?
                self.check_doomed()?;
                continue;
            }
            if !M::RC && rec.cts > s {
                return Err(update_conflict());
            }
            rec.lock = Some(self.h);
            if M::SSI {
                rec.sireads.prefetch();
            }
            let words = t.schema().row_words();
            let off = self.w.images.len();
            self.w.images.resize(off + words, 0);
            t.read_into(rid, t.schema().all(), &mut self.w.images[off..]);
            let present = t.version(rid).load(Ordering::Acquire) & ABSENT == 0;
            self.w.writes.push(WriteEntry {
                table: t.id(),
                key,
                rid,
                off,
                kind: if present { Kind::Row } else { Kind::Nothing },
                written: ColumnSet(0),
            });
            if M::SSI {
                // §3.7: the EXCLUSIVE lock subsumes this transaction's own SIREAD lock.
                let (h, me) = (self.h, self.me);
                rec.sireads
                    .upgrade_and_visit(h.id, self.horizon, |owner, state| {
                        if ssi::relevant_state(state, s) {
                            p.ssi.mark_conflict(owner, h, me)?;
                        }
                        Ok(())
                    })?;
                drop(rec);
                p.ssi.check_ranges(t.id(), key, self.me, s)?;
            }
            return Ok(self.w.writes.len() - 1);
        }
    }

    /// The transaction's own version of write entry `i`: `None` if absent (deleted or never there).
    fn own_row(&mut self, i: usize) -> Option<usize> {
        let e = self.w.writes[i];
        let word = if e.kind == Kind::Row {
            self.h.id
        } else {
            self.h.id | ABSENT
        };
        self.w.rec.read(e.table, e.key, word);
        (e.kind == Kind::Row).then_some(e.off)
    }

    /// Releases every EXCLUSIVE lock and SSI trace; the transaction ends aborted.
    fn abort_inner(&mut self) {
        self.done = true;
        self.me.set_status(ABORTED);
        let db = &self.p.db;
        for e in &self.w.writes {
            let mut rec = db.table(e.table).meta(e.rid).0.lock();
            if rec.lock.is_some_and(|l| l.id == self.h.id) {
                rec.lock = None;
            }
        }
        if M::SSI {
            // An aborted transaction retained nothing, so its SIREAD locks were never counted.
            self.p.ssi.release(self.w.retained.shared(), self.h, 0);
        } else {
            self.me.retire_unshared();
        }
        self.p.clock.end(&self.w.slot);
        Pool::prefetch_next(&self.w.spent);
        self.w.rec.finish(self.h.id, false);
    }

    /// Commit step 2: installs every write under timestamp `cts`; `horizon` tells whether the replaced
    /// in-place version may still be read by a running snapshot.
    fn install(&mut self, cts: u64, horizon: u64) {
        let p = self.p;
        for e in &self.w.writes {
            let t = p.db.table(e.table);
            let mut rec = t.meta(e.rid).0.lock();
            if e.kind != Kind::Nothing {
                let old = t.version(e.rid).load(Ordering::Acquire);
                rec.prune(horizon, &self.w.slot.1, &mut self.w.spare);
                if rec.cts < cts && horizon < cts {
                    let words = t.schema().row_words();
                    let spare = &mut self.w.spare;
                    let mut data = match spare.iter().rposition(|b| b.len() == words) {
                        Some(i) => spare.swap_remove(i),
                        None => vec![0; words].into_boxed_slice(),
                    };
                    for (d, w) in data.iter_mut().zip(t.data(e.rid)) {
                        *d = w.load(Ordering::Relaxed);
                    }
                    rec.push_old(old, data, &self.w.slot.1);
                } else {
                    rec.creator = None;
                }
                let image = &self.w.images[e.off..e.off + t.schema().row_words()];
                let deleted = e.kind == Kind::Delete;
                if !deleted {
                    t.write_from(e.rid, e.written, image);
                }
                let word = if deleted {
                    self.h.id | ABSENT
                } else {
                    self.h.id
                };
                t.version(e.rid).store(word, Ordering::Release);
                rec.cts = cts;
                if M::SSI {
                    rec.creator = Some(self.h);
                }
                self.w.rec.write(e.table, e.key, old, deleted);
            }
            rec.lock = None;
            rec.prune(horizon, &self.w.slot.1, &mut self.w.spare);
        }
    }
}

impl<M: Mode> Tx for MvccTx<'_, M> {
    fn id(&self) -> TxnId {
        self.h.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        self.snapshot();
        let t = self.p.db.table(table);
        if t.is_read_only() {
            // Its rows never change after the load (every write is refused), so the in-place image
            // is what every snapshot sees: no record latch, no version chain, and under SSI no SIREAD
            // or range lock — no transaction can write it, so no rw-antidependency starts here (nor
            // a check for a doom: a doomed transaction aborts at its next step that could add one).
            return Ok(get_unlocked(
                t,
                key,
                None,
                cols,
                &mut self.w.rec,
                &mut self.w.buf,
            ));
        }
        self.check_doomed()?;
        if let Some(i) = self.find_write(table, key) {
            let words = t.schema().row_words();
            return Ok(self
                .own_row(i)
                .map(|off| RowRef::new(t.schema(), &self.w.images[off..off + words])));
        }
        let mut slot = t.lookup(key);
        if slot.is_none() && self.tracks_reads() {
            // §3.5: the absence of a key is read through a range lock on it, then looked up again.
            self.tracked = true;
            self.p.ssi.add_range(table, key, key, self.h);
            ssi::remember_range(self.me, table);
            slot = t.lookup(key);
        }
        let Some(rid) = slot else {
            self.w.rec.read(table, key, ABSENT);
            return Ok(None);
        };
        let s = self.statement_snapshot();
        let word = self.read_version(t, rid, s, cols, true)?;
        self.w.rec.read(table, key, word);
        if word & ABSENT != 0 {
            return Ok(None);
        }
        let words = t.schema().row_words();
        Ok(Some(RowRef::new(t.schema(), &self.w.buf[..words])))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        self.check_doomed()?;
        self.snapshot();
        let t = self.p.db.table(table);
        refuse_write(t)?;
        let words = t.schema().row_words();
        let i = match self.find_write(table, key) {
            Some(i) => {
                self.own_row(i);
                i
            }
            None => {
                let Some(rid) = t.lookup(key) else {
                    // Reads the key's absence (with a range lock under SSI, like `get`).
                    return self.get(table, key, cols).map(|_| None);
                };
                let i = self.lock_for_write(t, rid, key)?;
                let word = t.version(rid).load(Ordering::Acquire);
                self.w.rec.read(table, key, word);
                i
            }
        };
        let e = self.w.writes[i];
        if e.kind != Kind::Row {
            return Ok(None);
        }
        let mut row = RowMut::new(t.schema(), &mut self.w.images[e.off..e.off + words]);
        let r = f(&mut row);
        let written = row.written();
        let e = &mut self.w.writes[i];
        e.written = e.written.union(written);
        Ok(Some(r))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        self.check_doomed()?;
        self.snapshot();
        let t = self.p.db.table(table);
        refuse_write(t)?;
        let words = t.schema().row_words();
        let duplicate = || {
            Abort::with_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            )
        };
        let i = match self.find_write(table, key) {
            Some(i) => i,
            None => {
                let (rid, _) = t.get_or_create(key);
                self.lock_for_write(t, rid, key)?
            }
        };
        let e = self.w.writes[i];
        if e.kind == Kind::Row {
            return Err(duplicate());
        }
        let image = &mut self.w.images[e.off..e.off + words];
        image.fill(0);
        f(&mut RowMut::new(t.schema(), image));
        let e = &mut self.w.writes[i];
        e.kind = Kind::Row;
        e.written = t.schema().all();
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.check_doomed()?;
        self.snapshot();
        let t = self.p.db.table(table);
        refuse_write(t)?;
        let i = match self.find_write(table, key) {
            Some(i) => i,
            None => {
                let Some(rid) = t.lookup(key) else {
                    return self.get(table, key, ColumnSet(0)).map(|_| false);
                };
                let i = self.lock_for_write(t, rid, key)?;
                let word = t.version(rid).load(Ordering::Acquire);
                self.w.rec.read(table, key, word);
                i
            }
        };
        let e = &mut self.w.writes[i];
        if e.kind != Kind::Row {
            return Ok(false);
        }
        e.kind = Kind::Delete;
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
        self.snapshot();
        let t = self.p.db.table(table);
        if t.is_read_only() {
            // No range lock: nothing can be inserted into (or change in) a read-only table.
            scan_unlocked(t, lo, hi, cols, &mut self.w.rec, &mut self.w.buf, f);
            return Ok(());
        }
        self.check_doomed()?;
        let words = t.schema().row_words();
        if self.tracks_reads() {
            // §3.5: the range SIREAD lock goes in before the walk, so an insert into the range either
            // finds it or is found by the walk (as an EXCLUSIVE lock or a newer version).
            self.tracked = true;
            self.p.ssi.add_range(table, lo, hi, self.h);
            ssi::remember_range(self.me, table);
        }
        let s = self.statement_snapshot();
        let mut end = hi;
        for (key, rid) in t.range(lo, hi) {
            let keep_going = if let Some(i) = self.find_write(table, key) {
                match self.own_row(i) {
                    Some(off) => f(
                        key,
                        RowRef::new(t.schema(), &self.w.images[off..off + words]),
                    ),
                    None => true,
                }
            } else {
                let word = self.read_version(t, rid, s, cols, false)?;
                self.w.rec.read(table, key, word);
                word & ABSENT != 0 || f(key, RowRef::new(t.schema(), &self.w.buf[..words]))
            };
            if !keep_going {
                end = key;
                break;
            }
        }
        self.w.rec.scan(table, lo, end);
        Ok(())
    }

    fn commit(mut self) -> TxResult<()> {
        let p = self.p;
        let cts = if M::SSI {
            match p.ssi.commit(self.me, self.tracked, || p.clock.commit_ts()) {
                Ok(cts) => cts,
                Err(a) => {
                    self.abort_inner();
                    return Err(a);
                }
            }
        } else {
            self.me.set_status(COMMITTING);
            let cts = p.clock.commit_ts();
            self.me.set_committed(cts);
            cts
        };
        self.done = true;
        p.clock.end(&self.w.slot);
        // Any horizon once computed stays safe, so the larger of the two is.
        let horizon = p.clock.refresh_horizon().max(self.w.horizon);
        self.w.horizon = horizon;
        self.install(cts, horizon);
        debug_assert_eq!(self.me.status(), COMMITTED);
        if M::SSI {
            // Every committed transaction is retained until the horizon passes it, even one without
            // SIREAD locks or out-conflicts: a reader may still find its version (or a pivot hold it
            // as T_out) and must see its commit timestamp, so its record may not be recycled yet.
            p.ssi
                .retain_and_cleanup(&mut self.w.retained, self.h, cts, self.w.sireads, horizon);
        } else {
            self.me.retire_unshared();
        }
        Pool::prefetch_next(&self.w.spent);
        self.w.rec.finish(self.h.id, true);
        Ok(())
    }

    fn abort(mut self) {
        self.abort_inner();
    }
}

impl<M: Mode> Drop for MvccTx<'_, M> {
    fn drop(&mut self) {
        if !self.done {
            self.abort_inner();
        }
    }
}
