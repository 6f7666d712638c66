//! The in-place executor shared by `nocc`, 2PL, VLL and the deterministic engines (Calvin,
//! deterministic VLL, H-Store, partitioned VLL).
//!
//! All of these protocols execute a transaction the same way once they have decided it may touch a
//! record: read the row's words into a reusable image buffer, let the program change the image, write
//! the changed columns straight back into the shared row, and replace the record's version word with
//! the writer's id (`id | ABSENT` for a delete). Every read and write is reported to the [`Recorder`]
//! with the version word it saw or replaced, so the checker can rebuild the version order. To abort,
//! each write first copies the columns it overwrites into an undo log (and, once installed, the old
//! version word); [`InPlace::finish`] replays that log newest first, so a record written twice ends
//! with its oldest image.
//!
//! What differs between the protocols is everything *around* this executor, which stays in their own
//! folders:
//!
//! * `nocc` calls it with no locks and the undo log off (an aborted transaction's writes stay visible).
//! * 2PL (`twopl/txn.rs`) takes a shared or exclusive lock before each call (next-key locks for inserts
//!   and scans) and releases them after [`InPlace::finish`].
//! * VLL (`vll/txn.rs`) checks each call against the lock requests granted in `BeginTransaction`, and
//!   turns the undo log off for transactions that can no longer abort ([`InPlace::set_logging`]).
//! * The deterministic engines (`deterministic/exec.rs`) check each call against the transaction's
//!   planned cover (keys or partitions) and, since that cover excludes every other writer, install the
//!   version word with a plain store over the word they read ([`Install::Over`]).
//!
//! Every method is `#[inline]` and generic over the table's per-record state `M`, so each protocol gets
//! its own monomorphized copy; buffers are cleared, never freed, between transactions.
//!
//! The reads are also free functions over a recorder and a buffer ([`locate`], [`get_unlocked`],
//! [`scan_unlocked`]), for the protocols with an executor of their own (Silo, the multi-version
//! store) where they read rows in place too: tables that are read-only once loaded.

use crate::storage::{ColumnSet, Database, RowId, RowMut, RowRef, Table, TableId, ABSENT};
use crate::txn::{Recorder, TxResult};
use std::sync::atomic::Ordering;

/// Looks `key` up (at `hint`, the slot a lock already resolved, if given) and records in `rec` the read
/// of the version word found (a key never indexed reads as the initial absent version). Returns the
/// slot and word when the record is present.
#[inline]
pub fn locate<M: Default + Send + Sync>(
    t: &Table<M>,
    key: u64,
    hint: Option<RowId>,
    rec: &mut Recorder,
) -> Option<(RowId, u64)> {
    let Some(rid) = hint.or_else(|| t.lookup(key)) else {
        rec.read(t.id(), key, ABSENT);
        return None;
    };
    let v = t.version(rid).load(Ordering::Acquire);
    rec.read(t.id(), key, v);
    (v & ABSENT == 0).then_some((rid, v))
}

/// Makes `buf` at least one row of `t` long (without clearing it: only the columns read are
/// defined) and returns the row's length in words.
#[inline]
fn fit<M: Default + Send + Sync>(t: &Table<M>, buf: &mut Vec<u64>) -> usize {
    let words = t.schema().row_words();
    if buf.len() < words {
        buf.resize(words, 0);
    }
    words
}

/// Point read with no concurrency control of its own (the caller made `key` safe to read, or nothing
/// writes `t`): [`locate`], then `cols` of the record into `buf`, if it is present.
#[inline]
pub fn get_unlocked<'b, M: Default + Send + Sync>(
    t: &'b Table<M>,
    key: u64,
    hint: Option<RowId>,
    cols: ColumnSet,
    rec: &mut Recorder,
    buf: &'b mut Vec<u64>,
) -> Option<RowRef<'b>> {
    let (rid, _) = locate(t, key, hint, rec)?;
    let words = fit(t, buf);
    t.read_into(rid, cols, &mut buf[..words]);
    Some(RowRef::new(t.schema(), &buf[..words]))
}

/// Reads `cols` of the present records with keys in `lo..=hi` of ordered table `t` into `buf`, in key
/// order, until `f` returns `false`, with no concurrency control of its own (the caller covers the
/// range, or nothing writes `t`). `rec` gets a read of every slot passed, absent ones too, and the
/// walked range as a predicate read (see [`crate::check::Event::Scan`]).
#[inline]
pub fn scan_unlocked<M: Default + Send + Sync>(
    t: &Table<M>,
    lo: u64,
    hi: u64,
    cols: ColumnSet,
    rec: &mut Recorder,
    buf: &mut Vec<u64>,
    f: impl FnMut(u64, RowRef<'_>) -> bool,
) {
    let never_fails = scan_guarded(t, (lo, hi), cols, rec, buf, &mut Unguarded, f);
    debug_assert!(never_fails.is_ok());
}

/// What guards each row a scan passes that the caller's locks do not cover ([`scan_guarded`]):
/// `enter` before the row is read — it may wait (for the row's writer to end), or fail the scan —
/// returning whether it holds something that `leave` must give back once the row is read.
pub trait RowGuard {
    fn enter(&mut self, table: TableId, key: u64, rid: RowId) -> TxResult<bool>;
    fn leave(&mut self, table: TableId, rid: RowId);
}

/// No guard: the caller covers the range.
struct Unguarded;

impl RowGuard for Unguarded {
    #[inline]
    fn enter(&mut self, _: TableId, _: u64, _: RowId) -> TxResult<bool> {
        Ok(false)
    }
    #[inline]
    fn leave(&mut self, _: TableId, _: RowId) {}
}

/// [`scan_unlocked`] over the keys `lo..=hi`, with `guard` around the read of each row passed.
#[inline]
pub fn scan_guarded<M: Default + Send + Sync, G: RowGuard + ?Sized>(
    t: &Table<M>,
    (lo, hi): (u64, u64),
    cols: ColumnSet,
    rec: &mut Recorder,
    buf: &mut Vec<u64>,
    guard: &mut G,
    mut f: impl FnMut(u64, RowRef<'_>) -> bool,
) -> TxResult<()> {
    let words = fit(t, buf);
    let mut end = hi;
    for (key, rid) in t.range(lo, hi) {
        let held = guard.enter(t.id(), key, rid)?;
        let v = t.version(rid).load(Ordering::Acquire);
        rec.read(t.id(), key, v);
        let go = v & ABSENT != 0 || {
            t.read_into(rid, cols, &mut buf[..words]);
            f(key, RowRef::new(t.schema(), &buf[..words]))
        };
        if held {
            guard.leave(t.id(), rid);
        }
        if !go {
            end = key;
            break;
        }
    }
    rec.scan(t.id(), lo, end);
    Ok(())
}

/// One undo record: restore `cols` of `rid` from `undo_words[start..]`, then its version word to `prev`.
#[derive(Clone, Copy, Debug)]
struct Undo {
    table: TableId,
    rid: RowId,
    cols: ColumnSet,
    start: usize,
    prev: u64,
}

/// The version word a write installs (the writer's id, with [`ABSENT`] for a delete), and how.
#[derive(Clone, Copy, Debug)]
pub enum Install {
    /// Atomically swap it in, learning the word replaced (any concurrent writer is ordered exactly).
    Swap(u64),
    /// Store `word` over `prev`, the word read while no other writer could run (the caller guarantees it).
    Over { word: u64, prev: u64 },
}

/// Per-worker state of in-place execution: the recorder, the undo log and the row-image buffer.
#[derive(Debug)]
pub struct InPlace {
    /// The history of this worker's transactions, for the checker.
    pub rec: Recorder,
    undo: Vec<Undo>,
    undo_words: Vec<u64>,
    buf: Vec<u64>,
    /// Keep an undo log for the running transaction.
    logging: bool,
    /// The running transaction installed a write.
    wrote: bool,
}

impl InPlace {
    /// State for worker `worker`; `logging` turns the undo log on.
    pub fn new(worker: u32, recording: bool, logging: bool) -> Self {
        InPlace {
            rec: Recorder::new(worker, recording),
            undo: Vec::new(),
            undo_words: Vec::new(),
            buf: Vec::new(),
            logging,
            wrote: false,
        }
    }

    /// Turns the undo log on or off for the running transaction (before its first write).
    #[inline]
    pub fn set_logging(&mut self, on: bool) {
        self.logging = on;
    }

    /// Whether the undo log is on.
    #[inline]
    pub fn logging(&self) -> bool {
        self.logging
    }

    /// Whether the running transaction installed a write.
    #[inline]
    pub fn wrote(&self) -> bool {
        self.wrote
    }

    /// Looks `key` up (at `hint`, the slot a lock already resolved, if given) and records the read of the
    /// version word found (a key never indexed reads as the initial absent version). Returns the slot and
    /// word when the record is present.
    #[inline]
    pub fn read_version<M: Default + Send + Sync>(
        &mut self,
        t: &Table<M>,
        key: u64,
        hint: Option<RowId>,
    ) -> Option<(RowId, u64)> {
        locate(t, key, hint, &mut self.rec)
    }

    /// Point read for a protocol that has already made `key` safe to read: [`get_unlocked`] into the
    /// zeroed image buffer ([`locate`], then the columns read if the record is present).
    #[inline]
    pub fn get<'s, M: Default + Send + Sync>(
        &'s mut self,
        t: &'s Table<M>,
        key: u64,
        hint: Option<RowId>,
        cols: ColumnSet,
    ) -> Option<RowRef<'s>> {
        self.image(t);
        get_unlocked(t, key, hint, cols, &mut self.rec, &mut self.buf)
    }

    /// Point read-modify-write for a protocol that has already made `key` safe to write:
    /// [`Self::read_version`], then [`Self::update`] with the install `how` picks from the version
    /// word read, if the record is present.
    #[inline]
    pub fn update_key<M: Default + Send + Sync, R>(
        &mut self,
        t: &Table<M>,
        key: u64,
        hint: Option<RowId>,
        cols: ColumnSet,
        how: impl FnOnce(u64) -> Install,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> Option<R> {
        let (rid, v) = self.read_version(t, key, hint)?;
        Some(self.update(t, key, rid, cols, how(v), f))
    }

    /// Reads `cols` of `rid` into the image buffer.
    #[inline]
    pub fn read<'s, M: Default + Send + Sync>(
        &'s mut self,
        t: &'s Table<M>,
        rid: RowId,
        cols: ColumnSet,
    ) -> RowRef<'s> {
        self.image(t);
        t.read_into(rid, cols, &mut self.buf);
        RowRef::new(t.schema(), &self.buf)
    }

    /// The image buffer as a row of `t`: what the last [`Self::read`] of `t` read, handed out after
    /// the caller did something between the read and the hand-out (Salt releases a short-term lock).
    #[inline]
    pub fn last_image<'s, M: Default + Send + Sync>(&'s self, t: &'s Table<M>) -> RowRef<'s> {
        RowRef::new(t.schema(), &self.buf[..t.schema().row_words()])
    }

    /// Read-modify-write of `cols` of present record `rid`: `f` changes the image, the columns it wrote
    /// are undo-logged, written in place and stamped with the version word `how` installs (if it wrote any).
    #[inline]
    pub fn update<M: Default + Send + Sync, R>(
        &mut self,
        t: &Table<M>,
        key: u64,
        rid: RowId,
        cols: ColumnSet,
        how: Install,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> R {
        self.image(t);
        t.read_into(rid, cols, &mut self.buf);
        let mut row = RowMut::new(t.schema(), &mut self.buf);
        let out = f(&mut row);
        let written = t.schema().clamp(row.written());
        if !written.is_empty() {
            self.log_undo(t, rid, written);
            t.write_from(rid, written, &self.buf);
            self.install(t, key, rid, how);
        }
        out
    }

    /// Fills absent slot `rid` with the row `f` builds and stamps it with the version word `how` installs.
    #[inline]
    pub fn insert<M: Default + Send + Sync>(
        &mut self,
        t: &Table<M>,
        key: u64,
        rid: RowId,
        how: Install,
        f: impl FnOnce(&mut RowMut<'_>),
    ) {
        self.image(t);
        f(&mut RowMut::new(t.schema(), &mut self.buf));
        // The slot was absent: its old data is meaningless, only the version word needs undoing.
        self.log_undo(t, rid, ColumnSet::NONE);
        t.write_from(rid, t.schema().all(), &self.buf);
        self.install(t, key, rid, how);
    }

    /// Deletes present record `rid`: a tombstone keeps the data, only the version word changes to
    /// the one `how` installs (which carries [`ABSENT`]).
    #[inline]
    pub fn delete<M: Default + Send + Sync>(
        &mut self,
        t: &Table<M>,
        key: u64,
        rid: RowId,
        how: Install,
    ) {
        self.log_undo(t, rid, ColumnSet::NONE);
        self.install(t, key, rid, how);
    }

    /// Reads `cols` of the present records with keys in `lo..=hi` of ordered table `t`, in key order,
    /// recording each read, until `f` returns `false`. (No locking: the caller covers the range.) The
    /// history gets the walked range as a predicate read and a read of every slot passed, absent
    /// ones too (see [`crate::check::Event::Scan`]).
    #[inline]
    pub fn scan<M: Default + Send + Sync>(
        &mut self,
        t: &Table<M>,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) {
        self.image(t);
        scan_unlocked(t, lo, hi, cols, &mut self.rec, &mut self.buf, f);
    }

    /// [`Self::scan`], with `guard` around the read of each row (see [`scan_guarded`]).
    pub fn scan_guarded<M: Default + Send + Sync, G: RowGuard + ?Sized>(
        &mut self,
        t: &Table<M>,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        guard: &mut G,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        self.image(t);
        scan_guarded(t, (lo, hi), cols, &mut self.rec, &mut self.buf, guard, f)
    }

    /// A scan of the whole of ordered table `t` that keeps only the rows `keep` accepts (a predicate
    /// over the row's columns `filter`, read first; `f` sees `cols` of the rows kept), with no
    /// concurrency control of its own: the caller's lock covers the rows the predicate names
    /// (DIBS's predicate locks). `rec` gets a
    /// read of each row kept, and nothing else: rows `keep` refuses were never part of the
    /// request's result, and recording them — or the walked key range as a predicate read, which
    /// the checker judges key by key — would add anti-dependencies on writers the predicate lock
    /// rightly let run alongside. So the checker sees no phantom of such a scan; the protocol's
    /// own tests show that an insert waits for it.
    pub fn scan_filtered<M: Default + Send + Sync>(
        &mut self,
        t: &Table<M>,
        filter: ColumnSet,
        cols: ColumnSet,
        keep: impl Fn(&RowRef<'_>) -> bool,
        mut f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) {
        self.image(t);
        // The filter's columns first; the others only for a row kept.
        let rest = ColumnSet(cols.0 & !filter.0);
        for (key, rid) in t.range(0, u64::MAX) {
            let v = t.version(rid).load(Ordering::Acquire);
            if v & ABSENT != 0 {
                continue;
            }
            t.read_into(rid, filter, &mut self.buf);
            if !keep(&RowRef::new(t.schema(), &self.buf)) {
                continue;
            }
            t.read_into(rid, rest, &mut self.buf);
            let row = RowRef::new(t.schema(), &self.buf);
            self.rec.read(t.id(), key, v);
            if !f(key, row) {
                break;
            }
        }
    }

    /// One row of a scan whose locking the caller does itself: records the read of version `v` of `key`
    /// and reads `cols` of `rid` into the image buffer, which [`Self::image`] prepared for `t`.
    #[inline]
    pub fn scan_row<'s, M: Default + Send + Sync>(
        &'s mut self,
        t: &'s Table<M>,
        key: u64,
        rid: RowId,
        v: u64,
        cols: ColumnSet,
    ) -> RowRef<'s> {
        self.rec.read(t.id(), key, v);
        t.read_into(rid, cols, &mut self.buf);
        RowRef::new(t.schema(), &self.buf)
    }

    /// Ends the transaction's writes: on abort, restores every logged image and version word, newest
    /// first; then empties the undo log. (The outcome is recorded by the caller, after it released
    /// whatever it holds.)
    pub fn finish<M: Default + Send + Sync>(&mut self, db: &Database<M>, committed: bool) {
        if !committed {
            for u in self.undo.iter().rev() {
                let t = db.table(u.table);
                let data = t.data(u.rid);
                let mut i = u.start;
                t.schema().for_each_word_run(u.cols, |r| {
                    for word in &data[r] {
                        word.store(self.undo_words[i], Ordering::Relaxed);
                        i += 1;
                    }
                });
                t.version(u.rid).store(u.prev, Ordering::Release);
            }
        }
        self.undo.clear();
        self.undo_words.clear();
        self.wrote = false;
    }

    /// Undo-logs `cols` of `rid` (its old version word is filled in by [`Self::install`]).
    #[inline]
    fn log_undo<M: Default + Send + Sync>(&mut self, t: &Table<M>, rid: RowId, cols: ColumnSet) {
        self.wrote = true;
        if !self.logging {
            return;
        }
        let start = self.undo_words.len();
        let data = t.data(rid);
        let words = &mut self.undo_words;
        t.schema().for_each_word_run(cols, |r| {
            words.extend(data[r].iter().map(|w| w.load(Ordering::Relaxed)))
        });
        self.undo.push(Undo {
            table: t.id(),
            rid,
            cols,
            start,
            prev: 0,
        });
    }

    /// Replaces the version word with `word`, completes the newest undo record with the old one, and
    /// records the write.
    #[inline]
    fn install<M: Default + Send + Sync>(
        &mut self,
        t: &Table<M>,
        key: u64,
        rid: RowId,
        how: Install,
    ) {
        let (word, prev) = match how {
            Install::Swap(word) => (word, t.version(rid).swap(word, Ordering::AcqRel)),
            Install::Over { word, prev } => {
                t.version(rid).store(word, Ordering::Release);
                (word, prev)
            }
        };
        if self.logging {
            if let Some(u) = self.undo.last_mut() {
                u.prev = prev;
            }
        }
        self.rec.write(t.id(), key, prev, word & ABSENT != 0);
    }

    /// Sizes the image buffer for a row of `t`.
    #[inline]
    pub fn image<M: Default + Send + Sync>(&mut self, t: &Table<M>) {
        self.buf.clear();
        self.buf.resize(t.schema().row_words(), 0);
    }
}
