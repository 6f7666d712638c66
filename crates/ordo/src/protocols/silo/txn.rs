//! Silo's execution phase: reads take stable snapshots and go to the read set, writes are buffered in
//! the write set, absent keys and scanned ranges go to the node set. Nothing shared is written here
//! except index slots for inserted keys (as Silo inserts absent records into its tree).
//!
//! Reads of a table that is read-only once loaded ([`crate::storage::TableSpec::read_only`]) join no set:
//! no writer of it exists, so its TIDs and index never change and there is nothing to validate. Writes to
//! it are refused ([`refuse_write`]).
//!
//! Under read committed (`L::VALIDATES` false, see `rc.rs`) no read joins any set: reads take the same
//! stable snapshot, so they see only committed versions, and that is all they promise. Each place that
//! differs says so with an `if L::VALIDATES`.

use super::sets::{NodeEntry, ReadEntry, Sets, WriteEntry};
use super::tid::TidWord;
use super::{tid, Level, Occ};
use crate::check::TxnId;
use crate::protocols::kit::inplace::{get_unlocked, scan_unlocked};
use crate::storage::{ColumnSet, RowId, RowMut, RowRef, Table, TableId, ABSENT};
use crate::txn::{refuse_write, Abort, AbortReason, Recorder, Tx, TxResult, TxnIds};
use std::sync::atomic::Ordering;

/// Per-thread state of [`Occ`] (either level): ids, the recorder, the previous commit TID and
/// reusable sets.
pub struct SiloWorker {
    pub(super) ids: TxnIds,
    pub(super) rec: Recorder,
    /// This worker's most recent commit TID (commit TIDs of one worker strictly increase).
    pub(super) last_tid: u64,
    pub(super) sets: Sets,
    /// Where reads of records not in the write set are copied.
    buf: Vec<u64>,
}

impl SiloWorker {
    pub(super) fn new(ids: TxnIds, recording: bool) -> Self {
        SiloWorker {
            rec: Recorder::new(ids.worker(), recording),
            ids,
            last_tid: 0,
            sets: Sets::default(),
            buf: Vec::new(),
        }
    }
}

/// A transaction of [`Occ`] at level `L`. Dropping it before commit aborts it (it holds no locks outside
/// commit).
pub struct SiloTx<'w, L: Level> {
    pub(super) silo: &'w Occ<L>,
    pub(super) w: &'w mut SiloWorker,
    pub(super) id: TxnId,
    pub(super) done: bool,
}

type SiloTable = Table<TidWord>;

/// Copies columns `cols` of `rid` into `out` consistently with the record's TID; returns the TID and
/// the version word.
#[inline]
fn snapshot(t: &SiloTable, rid: RowId, cols: ColumnSet, out: &mut [u64]) -> (u64, u64) {
    tid::stable(t.meta(rid), || {
        t.read_into(rid, cols, out);
        t.version(rid).load(Ordering::Relaxed)
    })
}

/// The TID and version word of `rid`, consistently (no data copied).
#[inline]
fn snapshot_version(t: &SiloTable, rid: RowId) -> (u64, u64) {
    tid::stable(t.meta(rid), || t.version(rid).load(Ordering::Relaxed))
}

fn abort_validation() -> Abort {
    Abort::new(AbortReason::Validation)
}

impl<'w, L: Level> SiloTx<'w, L> {
    pub(super) fn new(silo: &'w Occ<L>, w: &'w mut SiloWorker) -> Self {
        w.sets.clear();
        let id = w.ids.next_id();
        SiloTx {
            silo,
            w,
            id,
            done: false,
        }
    }

    /// The slot of `key`, or `None` after recording the key's stripe in the node set (so that a later
    /// creation of the key fails validation). The stripe is read before the second lookup: a creator bumps
    /// it after the entry is visible, so either the lookup sees the key or validation sees the bump.
    #[inline]
    fn lookup(&mut self, t: &SiloTable, key: u64) -> Option<RowId> {
        if let Some(r) = t.lookup(key) {
            return Some(r);
        }
        if !L::VALIDATES {
            // Read committed: a key missing now may appear at any time; nothing to record.
            return None;
        }
        let stripe = t.stripe_index(key);
        let value = t.stripe_at(stripe).load(Ordering::Acquire);
        if let Some(r) = t.lookup(key) {
            return Some(r);
        }
        self.w.sets.nodes.push(NodeEntry {
            table: t.id(),
            stripe: stripe as u32,
            value,
        });
        None
    }

    /// Makes columns `cols` of write entry `i`'s image valid, copying missing ones from the record at the
    /// TID the entry was read at (a newer TID means the transaction cannot commit: abort now). Under read
    /// committed the missing columns come from the newest committed version, whichever it is.
    #[inline]
    fn fill(&mut self, t: &SiloTable, i: usize, cols: ColumnSet) -> TxResult<()> {
        let words = t.schema().row_words();
        let e = self.w.sets.writes[i];
        let missing = ColumnSet(t.schema().clamp(cols).0 & !e.have.0);
        if missing.is_empty() {
            return Ok(());
        }
        let (now, _) = snapshot(
            t,
            e.rid,
            missing,
            &mut self.w.sets.images[e.off..e.off + words],
        );
        if L::VALIDATES && now != e.read_tid {
            return Err(abort_validation());
        }
        self.w.sets.writes[i].have = e.have.union(missing);
        Ok(())
    }

    /// A read of the transaction's own write `i`: `None` if it deleted the record.
    fn own_row(
        &mut self,
        t: &'w SiloTable,
        i: usize,
        cols: ColumnSet,
    ) -> TxResult<Option<RowRef<'_>>> {
        let e = self.w.sets.writes[i];
        if e.deleted {
            self.w.rec.read(e.table, e.key, self.id | ABSENT);
            return Ok(None);
        }
        self.fill(t, i, cols)?;
        self.w.rec.read(e.table, e.key, self.id);
        let words = t.schema().row_words();
        Ok(Some(RowRef::new(
            t.schema(),
            &self.w.sets.images[e.off..e.off + words],
        )))
    }

    #[inline]
    fn read_buf(&mut self, words: usize) {
        if self.w.buf.len() < words {
            self.w.buf.resize(words, 0);
        }
    }
}

impl<L: Level> Tx for SiloTx<'_, L> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        let t = self.silo.db.table(table);
        if t.is_read_only() {
            // No TID snapshot, no read- or node-set entry: nothing can change under this read.
            return Ok(get_unlocked(
                t,
                key,
                None,
                cols,
                &mut self.w.rec,
                &mut self.w.buf,
            ));
        }
        if let Some(i) = self.w.sets.find_write(table, key) {
            return self.own_row(t, i, cols);
        }
        let Some(rid) = self.lookup(t, key) else {
            self.w.rec.read(table, key, ABSENT);
            return Ok(None);
        };
        let words = t.schema().row_words();
        self.read_buf(words);
        let (tid, version) = snapshot(t, rid, cols, &mut self.w.buf[..words]);
        if L::VALIDATES {
            self.w.sets.reads.push(ReadEntry { table, rid, tid });
        }
        self.w.rec.read(table, key, version);
        if version & ABSENT != 0 {
            return Ok(None);
        }
        Ok(Some(RowRef::new(t.schema(), &self.w.buf[..words])))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        let t = self.silo.db.table(table);
        refuse_write(t)?;
        let words = t.schema().row_words();
        if let Some(i) = self.w.sets.find_write(table, key) {
            let e = self.w.sets.writes[i];
            if e.deleted {
                self.w.rec.read(table, key, self.id | ABSENT);
                return Ok(None);
            }
            self.fill(t, i, cols)?;
            self.w.rec.read(table, key, self.id);
            let mut row = RowMut::new(t.schema(), &mut self.w.sets.images[e.off..e.off + words]);
            let r = f(&mut row);
            let written = row.written();
            let e = &mut self.w.sets.writes[i];
            e.written = e.written.union(written);
            e.have = e.have.union(written);
            return Ok(Some(r));
        }
        let Some(rid) = self.lookup(t, key) else {
            self.w.rec.read(table, key, ABSENT);
            return Ok(None);
        };
        // Silo's read-modify-write: the read goes to the read set like any other (under read committed
        // to none: the update may overwrite a version committed after it read, a lost update).
        let off = self.w.sets.alloc_image(words);
        let (tid, version) = snapshot(t, rid, cols, &mut self.w.sets.images[off..off + words]);
        if L::VALIDATES {
            self.w.sets.reads.push(ReadEntry { table, rid, tid });
        }
        self.w.rec.read(table, key, version);
        if version & ABSENT != 0 {
            self.w.sets.images.truncate(off);
            return Ok(None);
        }
        let mut row = RowMut::new(t.schema(), &mut self.w.sets.images[off..off + words]);
        let r = f(&mut row);
        let written = row.written();
        self.w.sets.push_write(WriteEntry {
            table,
            rid,
            key,
            off,
            read_tid: tid,
            have: t.schema().clamp(cols).union(written),
            written,
            deleted: false,
            must_be_absent: false,
            locked_tid: 0,
        });
        Ok(Some(r))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        let t = self.silo.db.table(table);
        refuse_write(t)?;
        let words = t.schema().row_words();
        let all = t.schema().all();
        if let Some(i) = self.w.sets.find_write(table, key) {
            let e = self.w.sets.writes[i];
            if !e.deleted {
                return Err(Abort::with_detail(
                    AbortReason::DuplicateKey,
                    format!("{}: key {key}", t.name()),
                ));
            }
            // Re-insert of a record this transaction deleted: a fresh image over the tombstone.
            let image = &mut self.w.sets.images[e.off..e.off + words];
            image.fill(0);
            f(&mut RowMut::new(t.schema(), image));
            let e = &mut self.w.sets.writes[i];
            (e.deleted, e.written, e.have) = (false, all, all);
            return Ok(());
        }
        let (rid, created) = t.get_or_create(key);
        if L::VALIDATES && created {
            self.w.sets.own_bump(table, t.stripe_index(key) as u32);
        }
        let (tid, version) = snapshot_version(t, rid);
        if version & ABSENT == 0 {
            return Err(Abort::with_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            ));
        }
        let off = self.w.sets.alloc_image(words);
        f(&mut RowMut::new(
            t.schema(),
            &mut self.w.sets.images[off..off + words],
        ));
        self.w.sets.push_write(WriteEntry {
            table,
            rid,
            key,
            off,
            read_tid: tid,
            have: all,
            written: all,
            deleted: false,
            must_be_absent: true,
            locked_tid: 0,
        });
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let t = self.silo.db.table(table);
        refuse_write(t)?;
        if let Some(i) = self.w.sets.find_write(table, key) {
            let e = &mut self.w.sets.writes[i];
            if e.deleted {
                return Ok(false);
            }
            e.deleted = true;
            return Ok(true);
        }
        let Some(rid) = self.lookup(t, key) else {
            self.w.rec.read(table, key, ABSENT);
            return Ok(false);
        };
        let (tid, version) = snapshot_version(t, rid);
        if L::VALIDATES {
            self.w.sets.reads.push(ReadEntry { table, rid, tid });
        }
        self.w.rec.read(table, key, version);
        if version & ABSENT != 0 {
            return Ok(false);
        }
        let off = self.w.sets.alloc_image(t.schema().row_words());
        self.w.sets.push_write(WriteEntry {
            table,
            rid,
            key,
            off,
            read_tid: tid,
            have: ColumnSet::NONE,
            written: ColumnSet::NONE,
            deleted: true,
            must_be_absent: false,
            locked_tid: 0,
        });
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
        let t = self.silo.db.table(table);
        if t.is_read_only() {
            // No node-set (phantom) or read-set entries: no key of it can appear, vanish or change.
            scan_unlocked(t, lo, hi, cols, &mut self.w.rec, &mut self.w.buf, f);
            return Ok(());
        }
        // Node set first: any key created in the range after these loads fails validation, any created
        // before them is already in the index the scan walks. (Read committed: phantoms are allowed.)
        if L::VALIDATES {
            for stripe in t.stripes_of_range(lo, hi) {
                let value = t.stripe_at(stripe).load(Ordering::Acquire);
                self.w.sets.nodes.push(NodeEntry {
                    table,
                    stripe: stripe as u32,
                    value,
                });
            }
        }
        let words = t.schema().row_words();
        self.read_buf(words);
        let mut end = hi;
        for (key, rid) in t.range(lo, hi) {
            if let Some(i) = self.w.sets.find_write(table, key) {
                match self.own_row(t, i, cols)? {
                    Some(row) => {
                        if !f(key, row) {
                            end = key;
                            break;
                        }
                    }
                    None => continue,
                }
                continue;
            }
            let (tid, version) = snapshot(t, rid, cols, &mut self.w.buf[..words]);
            // Tombstones too: a re-insert changes their TID.
            if L::VALIDATES {
                self.w.sets.reads.push(ReadEntry { table, rid, tid });
            }
            self.w.rec.read(table, key, version);
            if version & ABSENT != 0 {
                continue;
            }
            if !f(key, RowRef::new(t.schema(), &self.w.buf[..words])) {
                end = key;
                break;
            }
        }
        self.w.rec.scan(table, lo, end);
        Ok(())
    }

    fn commit(mut self) -> TxResult<()> {
        self.done = true;
        let (db, clock) = (&self.silo.db, &self.silo.epoch);
        let r = if L::VALIDATES {
            super::commit::commit(db, clock, self.w, self.id)
        } else {
            super::rc::commit(db, clock, self.w, self.id)
        };
        self.w.rec.finish(self.id, r.is_ok());
        r
    }

    fn abort(self) {}
}

impl<L: Level> Drop for SiloTx<'_, L> {
    fn drop(&mut self) {
        if !self.done {
            // Nothing shared was written (writes are buffered, locks are only held inside commit).
            self.w.rec.finish(self.id, false);
        }
    }
}
