//! Tables: a schema, a row arena, a primary hash index and (optionally) an ordered index.
//!
//! Keys are `u64`. Workloads pack composite keys into them order-preservingly (TPC-C's
//! `(w_id, d_id, o_id)` becomes `w·2^40 | d·2^32 | o`), which keeps every index probe a single integer
//! compare; secondary indexes are tables of their own (key → primary key), so they are read and written
//! under the same concurrency control as the data.
//!
//! A key, once it enters the index, keeps its slot for the table's life: a delete leaves a tombstone
//! (version word with [`ABSENT`]) and a later insert of the same key reuses the slot. That gives every
//! protocol one thing to lock or validate per key, present or not, and the checker one version chain per key.
//!
//! **Structure stripes.** Every table keeps 1024 counters, one per stripe of the key space
//! (`(key >> stripe_shift) mod 1024`). Creating an index entry bumps its stripe's counter *after* the
//! entry is visible. A reader that saw a key missing, or scanned a range, can record the stripes it covered
//! and later validate that no key appeared there — Silo's node-set validation, with stripes in place of
//! B-tree leaves. **The supremum.** Slot 0 of every table is never indexed: it stands for "past the last key",
//! so next-key locking has something to lock at the end of a range.

use super::arena::{RowArena, RowId, ABSENT};
use super::hash_index::HashIndex;
use super::row::RowMut;
use super::schema::{ColumnSet, Schema, SchemaError};
use crossbeam_epoch as epoch;
use crossbeam_skiplist::base::SkipList;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

/// Position of a table in its [`super::Database`].
pub type TableId = u32;

/// Number of structure stripes per table.
pub const STRIPES: usize = 1024;

/// How to build a table.
#[derive(Clone, Debug)]
pub struct TableSpec {
    pub name: String,
    pub schema: Schema,
    /// Keep an ordered index too (range scans, next-key lookups).
    pub ordered: bool,
    /// Keys `k` and `k'` share a structure stripe when `k >> shift == k' >> shift` (mod 1024).
    pub stripe_shift: u32,
    /// Expected number of rows (sizes the hash index up front).
    pub capacity: usize,
    /// Read-only once loaded: the workload promises that no transaction writes it (TPC-C's ITEM and
    /// its customer-by-name index, SmallBank's `account`), and every protocol holds it to that
    /// promise: a write is refused with `InvalidData` ([`crate::txn::refuse_write`], or
    /// [`crate::txn::Access::unlocked_in`] for a declared one). In exchange, reads of it need no
    /// concurrency control — nothing can conflict with them: protocols that lock declared accesses
    /// before running (the VLL family, the deterministic and partitioned ones; H-Store replicates
    /// such tables in every partition) and 2PL take no locks for them, Silo keeps them out of its
    /// read and node sets, and the multi-version protocols (`rc`, `si`, `ssi`) read the rows in
    /// place without the record latch, SIREAD or range locks.
    pub read_only: bool,
}

impl TableSpec {
    pub fn new(name: impl Into<String>, schema: Schema) -> Self {
        TableSpec {
            name: name.into(),
            schema,
            ordered: false,
            stripe_shift: 0,
            capacity: 0,
            read_only: false,
        }
    }
    pub fn ordered(mut self, stripe_shift: u32) -> Self {
        self.ordered = true;
        self.stripe_shift = stripe_shift;
        self
    }
    pub fn capacity(mut self, rows: usize) -> Self {
        self.capacity = rows;
        self
    }
    /// Marks the table read-only once loaded (see [`TableSpec::read_only`]).
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }
}

/// One table, generic over the protocol's per-record state `M`.
pub struct Table<M> {
    id: TableId,
    name: String,
    schema: Schema,
    rows: RowArena<M>,
    hash: HashIndex,
    ordered: Option<SkipList<u64, RowId>>,
    read_only: bool,
    stripes: Box<[AtomicU64]>,
    stripe_shift: u32,
    /// The rows the table was declared to hold ([`TableSpec::capacity`]).
    capacity: usize,
}

/// The record reserved as "past the last key" of every table.
pub const SUPREMUM: RowId = 0;

impl<M: Default + Send + Sync> Table<M> {
    /// The bytes a table built from `spec` takes once it holds its `capacity` rows, at least: a slot
    /// per row (version word, the protocol's per-record state, the data) and the hash index, which is
    /// allocated up front. Ordered indexes, versions kept beside the slots (the MVCC protocols') and
    /// growth past the capacity come on top.
    pub fn footprint(spec: &TableSpec) -> u64 {
        let slot = RowArena::<M>::slot_bytes(spec.schema.row_words()) as u64;
        (spec.capacity as u64)
            .saturating_mul(slot)
            .saturating_add(HashIndex::bytes_for(spec.capacity))
    }

    pub(crate) fn new(id: TableId, spec: TableSpec) -> Self {
        let rows = RowArena::new(spec.schema.row_words());
        let sup = rows.alloc();
        debug_assert_eq!(sup, SUPREMUM);
        Table {
            id,
            name: spec.name,
            hash: HashIndex::with_capacity(spec.capacity),
            schema: spec.schema,
            rows,
            ordered: spec
                .ordered
                .then(|| SkipList::new(epoch::default_collector().clone())),
            read_only: spec.read_only,
            stripes: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
            stripe_shift: spec.stripe_shift,
            capacity: spec.capacity,
        }
    }

    /// Faults in the row slots the table still has to fill to reach its declared capacity (see
    /// [`RowArena::prefault`]): called once a database is loaded, so that a run's inserts up to
    /// the capacity do not wait on the kernel. The memory was budgeted when the table was created
    /// ([`Self::footprint`] counts a slot per row of the capacity).
    pub fn prefault(&mut self) {
        // Slot 0 is the supremum: the capacity's rows come after it.
        self.rows.prefault(self.capacity as u64 + 1);
    }

    pub fn id(&self) -> TableId {
        self.id
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn schema(&self) -> &Schema {
        &self.schema
    }
    pub fn is_ordered(&self) -> bool {
        self.ordered.is_some()
    }
    /// Read-only once loaded (see [`TableSpec::read_only`]).
    #[inline]
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }
    /// Index entries (present records and tombstones).
    pub fn key_count(&self) -> usize {
        self.hash.len()
    }

    /// The slot of `key`, if the key was ever indexed.
    #[inline]
    pub fn lookup(&self, key: u64) -> Option<RowId> {
        self.hash.get(key)
    }

    /// Starts loading the index entry of `key` (first half of a two-step prefetch).
    #[inline]
    pub fn prefetch_index(&self, key: u64) {
        self.hash.prefetch(key);
    }

    /// Starts loading the record of `key` — the cache line of its version word, which holds the start
    /// of its protocol state — if the key is indexed (second step: after [`Self::prefetch_index`] the
    /// lookup hits the cache). Prefetching every line of a multi-version record's larger header
    /// measured no different on SmallBank (2026-11-22, `docs/results/ssi.md`, tenth pass).
    #[inline]
    pub fn prefetch_row(&self, key: u64) {
        if let Some(rid) = self.hash.get(key) {
            super::prefetch(self.version(rid));
        }
    }

    /// The slot of `key`, creating an absent one (and bumping its stripe) if the key is new.
    /// Returns whether it was created.
    ///
    /// A new key enters the ordered index and bumps its stripe *before* the hash index publishes it
    /// (inside the hash index's insert lock): whoever finds the slot by key — and may then write a row
    /// into it and commit — finds it already visible to scans, and a scan that walked past before it
    /// appeared sees its stripe move. (Published first, a slot found by a second inserter while its
    /// creator had not yet reached the ordered index let that inserter commit a row a later scan could
    /// not see, with the stripe unchanged: a phantom the checker caught under Silo on TPC-C++.)
    pub fn get_or_create(&self, key: u64) -> (RowId, bool) {
        if let Some(r) = self.lookup(key) {
            return (r, false);
        }
        self.hash.get_or_insert_with(key, || {
            let rid = self.rows.alloc();
            if let Some(o) = &self.ordered {
                let guard = epoch::pin();
                o.insert(key, rid, &guard).release(&guard);
            }
            self.stripe(key).fetch_add(1, Ordering::AcqRel);
            rid
        })
    }

    /// Protocol state of a record.
    #[inline]
    pub fn meta(&self, rid: RowId) -> &M {
        self.rows.meta(rid)
    }
    /// Version word of a record (see [`super::arena`]).
    #[inline]
    pub fn version(&self, rid: RowId) -> &AtomicU64 {
        self.rows.version(rid)
    }
    /// Data words of a record.
    #[inline]
    pub fn data(&self, rid: RowId) -> &[AtomicU64] {
        self.rows.data(rid)
    }

    /// Copies columns `cols` of record `rid` into `out` (a full-row image buffer).
    #[inline]
    pub fn read_into(&self, rid: RowId, cols: ColumnSet, out: &mut [u64]) {
        let data = self.rows.data(rid);
        self.schema.for_each_word_run(cols, |r| {
            for (o, w) in out[r.clone()].iter_mut().zip(&data[r]) {
                *o = w.load(Ordering::Relaxed);
            }
        });
    }

    /// Copies columns `cols` from the image `src` into record `rid`.
    #[inline]
    pub fn write_from(&self, rid: RowId, cols: ColumnSet, src: &[u64]) {
        let data = self.rows.data(rid);
        self.schema.for_each_word_run(cols, |r| {
            for (w, s) in data[r.clone()].iter().zip(&src[r]) {
                w.store(*s, Ordering::Relaxed);
            }
        });
    }

    /// Index entries with keys in `lo..=hi`, ascending (tombstones included: check the version word).
    /// Empty on a table without an ordered index. Read in [`Batches`]: an entry created while the
    /// range is walked may or may not be seen, as with any concurrent walk of the index.
    pub fn range(&self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, RowId)> + '_ {
        self.ordered
            .iter()
            .flat_map(move |o| Batches::new(o, lo, hi))
    }

    /// The first index entry with a key greater than `key` (the "next key" of next-key locking), or `None`
    /// when `key` is the last (lock [`SUPREMUM`] then).
    pub fn next_after(&self, key: u64) -> Option<(u64, RowId)> {
        let guard = epoch::pin();
        self.ordered
            .as_ref()?
            .lower_bound(Bound::Excluded(&key), &guard)
            .map(|e| (*e.key(), *e.value()))
    }

    /// The structure stripe of `key`.
    #[inline]
    pub fn stripe(&self, key: u64) -> &AtomicU64 {
        &self.stripes[self.stripe_index(key)]
    }
    #[inline]
    pub fn stripe_index(&self, key: u64) -> usize {
        ((key >> self.stripe_shift) as usize) % STRIPES
    }
    /// The structure stripe at `index` (from [`Self::stripe_index`] or [`Self::stripes_of_range`]).
    #[inline]
    pub fn stripe_at(&self, index: usize) -> &AtomicU64 {
        &self.stripes[index]
    }
    /// Indices of the stripes that keys in `lo..=hi` fall in (each once).
    pub fn stripes_of_range(&self, lo: u64, hi: u64) -> impl Iterator<Item = usize> {
        let (a, b) = (lo >> self.stripe_shift, hi >> self.stripe_shift);
        let n = if hi < lo {
            0
        } else {
            (b - a).saturating_add(1).min(STRIPES as u64)
        };
        (0..n).map(move |i| ((a + i) as usize) % STRIPES)
    }

    /// Loads a row outside any transaction (initial population): the record becomes present with
    /// version 0. Fails if the key is already present or a value does not fit.
    pub fn load(
        &self,
        key: u64,
        scratch: &mut Vec<u64>,
        fill: impl FnOnce(&mut RowMut) -> Result<(), SchemaError>,
    ) -> Result<(), LoadError> {
        let (rid, _) = self.get_or_create(key);
        if self.version(rid).load(Ordering::Acquire) & ABSENT == 0 {
            return Err(LoadError::Duplicate {
                table: self.name.clone(),
                key,
            });
        }
        scratch.clear();
        scratch.resize(self.schema.row_words(), 0);
        fill(&mut RowMut::new(&self.schema, scratch))?;
        self.write_from(rid, self.schema.all(), scratch);
        self.version(rid).store(0, Ordering::Release);
        Ok(())
    }

    /// Keys of the present records, ascending — for invariant checks after a run, not for transactions:
    /// it takes no locks.
    pub fn present_keys(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .hash
            .entries()
            .into_iter()
            .filter(|(_, rid)| self.version(*rid).load(Ordering::Acquire) & ABSENT == 0)
            .map(|(key, _)| key)
            .collect();
        v.sort_unstable();
        v
    }
}

/// Errors while loading initial data.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("table {table}: key {key} loaded twice")]
    Duplicate { table: String, key: u64 },
    #[error(transparent)]
    Schema(#[from] SchemaError),
    #[error(transparent)]
    Create(#[from] super::database::CreateTableError),
}

/// The most entries one [`Batches`] step reads under one pin.
const BATCH: usize = 64;

/// A range of the ordered index, read a batch at a time: each batch is one descent and a walk along
/// the bottom level under one epoch pin, copied out. The skip list's own iterator
/// (`crossbeam_skiplist::SkipMap`'s) pins the epoch and takes and drops a reference count on every
/// entry it passes — atomic read-modify-writes on lines every scanning thread shares, ~100 ns an
/// entry (`cargo bench -p ordo --bench scan`). Batches start at one entry (a `range(..).next()` is
/// a lookup) and double up to [`BATCH`].
struct Batches<'a> {
    list: &'a SkipList<u64, RowId>,
    /// Where the next batch starts; `None` once the range is read.
    from: Option<u64>,
    hi: u64,
    buf: [(u64, RowId); BATCH],
    len: usize,
    pos: usize,
    size: usize,
}

impl<'a> Batches<'a> {
    fn new(list: &'a SkipList<u64, RowId>, lo: u64, hi: u64) -> Self {
        Batches {
            list,
            from: (lo <= hi).then_some(lo),
            hi,
            buf: [(0, 0); BATCH],
            len: 0,
            pos: 0,
            size: 1,
        }
    }

    fn refill(&mut self) {
        let Some(from) = self.from else {
            self.len = 0;
            return;
        };
        let guard = epoch::pin();
        let mut n = 0;
        for e in self.list.range(from..=self.hi, &guard).take(self.size) {
            self.buf[n] = (*e.key(), *e.value());
            n += 1;
        }
        drop(guard);
        self.from = match n == self.size {
            true => self.buf[n - 1].0.checked_add(1).filter(|&k| k <= self.hi),
            false => None,
        };
        self.len = n;
        self.pos = 0;
        self.size = (self.size * 2).min(BATCH);
    }
}

impl Iterator for Batches<'_> {
    type Item = (u64, RowId);

    #[inline]
    fn next(&mut self) -> Option<(u64, RowId)> {
        if self.pos == self.len {
            self.refill();
            if self.len == 0 {
                return None;
            }
        }
        self.pos += 1;
        Some(self.buf[self.pos - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Column, ColumnType, Database};
    use std::sync::atomic::AtomicBool;

    /// Two threads race, in lock step, to create each new key. Whoever did not create it may write a
    /// row into the slot at once, so by the time it holds the slot the key must already be in the
    /// ordered index: a scan sees it. (The stripe is bumped at the same point, before the key is
    /// published.)
    #[test]
    fn a_slot_found_by_key_is_already_visible_to_scans() {
        let mut db = Database::<()>::new();
        let schema = Schema::new(vec![Column::new("v", ColumnType::Int)]).unwrap();
        let t = db
            .create_table(TableSpec::new("t", schema).ordered(8))
            .unwrap();
        let t = db.table(t);
        const KEYS: u64 = 2_000;
        let reached = [AtomicU64::new(0), AtomicU64::new(0)];
        let failed = AtomicBool::new(false);
        /// Tells the other thread to stop waiting if this one panics.
        struct Flag<'a>(&'a AtomicBool);
        impl Drop for Flag<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.store(true, Ordering::Release);
                }
            }
        }
        std::thread::scope(|s| {
            for me in 0..2 {
                let (reached, failed) = (&reached, &failed);
                s.spawn(move || {
                    let _flag = Flag(failed);
                    for key in 0..KEYS {
                        reached[me].store(key + 1, Ordering::Release);
                        while reached[1 - me].load(Ordering::Acquire) < key + 1 {
                            if failed.load(Ordering::Acquire) {
                                return;
                            }
                            std::hint::spin_loop();
                        }
                        let (rid, created) = t.get_or_create(key);
                        if !created {
                            assert_eq!(
                                t.range(key, key).next(),
                                Some((key, rid)),
                                "key {key} found by look-up but not by a scan"
                            );
                        }
                    }
                });
            }
        });
        assert_eq!(t.range(0, KEYS).count() as u64, KEYS);
    }
}
