//! The primary hash index: `u64` key → `RowId`, insert-only, lock-free reads.
//!
//! Keys never leave a table's index (a delete leaves a tombstone row, see [`super::table`]), so the
//! index only grows. That allows a flat open-addressing table probed linearly:
//!
//! ```text
//!  entries: [ (key, rid+1) | (key, rid+1) | (0, 0) | … ]     rid+1 = 0 marks a free entry
//!  lookup(k): i = hash(k); while entries[i].rid != 0 { if entries[i].key == k { found } i += 1 }
//! ```
//!
//! * **Reads take no lock and write nothing shared**: a probe usually touches one cache line, then the
//!   row itself — two cache misses per lookup on a large table. (A sharded-lock map bounces its lock
//!   words between cores on every read; a map of boxed entries adds a miss.)
//! * **Inserts** are serialized per table by a mutex. An entry is published by writing the key, then the
//!   row id with `Release`; readers load the row id with `Acquire` before the key.
//! * **Growth**: past half full, the inserter copies every entry into a table twice the size and
//!   publishes it. Old tables stay allocated until the index is dropped (their total is at most the size
//!   of the current one), so a reader still probing an old table reads valid memory and finds every key
//!   that was present when it started: lookups remain linearizable in an insert-only set.

use super::arena::RowId;
use super::zeroed::ZeroedSlice;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

struct Entry {
    key: AtomicU64,
    /// `rid + 1`; 0 = free.
    rid: AtomicU64,
}

struct Slots {
    /// Zeroed (all free) on huge pages where possible: probes land at random ([`super::zeroed`]).
    entries: ZeroedSlice<Entry>,
    mask: usize,
}

impl Slots {
    /// How many slots a table made for `capacity` has: a power of two, at least 64. `None` when
    /// that does not fit a `usize`.
    fn count_for(capacity: usize) -> Option<usize> {
        capacity.checked_next_power_of_two().map(|n| n.max(64))
    }

    fn new(capacity: usize) -> Box<Self> {
        // A capacity past any allocation is a hint that cannot be honoured: start small and grow.
        let n = Self::count_for(capacity).unwrap_or(64);
        // SAFETY: an all-zero `Entry` is a free slot (two zero atomics), and it needs no drop.
        let entries = unsafe { ZeroedSlice::new(n) };
        Box::new(Slots {
            entries,
            mask: n - 1,
        })
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing: sequential keys spread over the table, and the high bits are the best mixed.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) as usize & self.mask
    }

    #[inline]
    fn find(&self, key: u64) -> Option<RowId> {
        let mut i = self.home(key);
        loop {
            let e = &self.entries[i];
            let rid = e.rid.load(Ordering::Acquire);
            if rid == 0 {
                return None;
            }
            if e.key.load(Ordering::Relaxed) == key {
                return Some(rid - 1);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Stores a key known to be absent (caller holds the insert lock).
    fn put(&self, key: u64, rid: RowId) {
        let mut i = self.home(key);
        while self.entries[i].rid.load(Ordering::Relaxed) != 0 {
            i = (i + 1) & self.mask;
        }
        self.entries[i].key.store(key, Ordering::Relaxed);
        self.entries[i].rid.store(rid + 1, Ordering::Release);
    }
}

/// An insert-only concurrent map from key to row id.
pub struct HashIndex {
    current: AtomicPtr<Slots>,
    insert: Mutex<InsertState>,
}

struct InsertState {
    len: usize,
    /// Every table ever published (the last is current); freed on drop.
    tables: Vec<*mut Slots>,
}

// SAFETY: the raw pointers are owned by the index and only freed in `drop` (exclusive access).
unsafe impl Send for HashIndex {}
unsafe impl Sync for HashIndex {}

impl HashIndex {
    /// The bytes of the slots [`Self::with_capacity`] allocates up front (saturating: a capacity
    /// too large to allocate gives `u64::MAX`).
    pub fn bytes_for(capacity: usize) -> u64 {
        match Slots::count_for(capacity.saturating_mul(2)) {
            Some(n) => (n as u64).saturating_mul(std::mem::size_of::<Entry>() as u64),
            None => u64::MAX,
        }
    }

    /// An index sized for `capacity` keys without growing.
    pub fn with_capacity(capacity: usize) -> Self {
        let first = Box::into_raw(Slots::new(capacity.saturating_mul(2)));
        HashIndex {
            current: AtomicPtr::new(first),
            insert: Mutex::new(InsertState {
                len: 0,
                tables: vec![first],
            }),
        }
    }

    #[inline]
    fn slots(&self) -> &Slots {
        // SAFETY: published tables are never freed before the index is dropped.
        unsafe { &*self.current.load(Ordering::Acquire) }
    }

    /// Starts loading the cache line where `key`'s probe begins.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        let slots = self.slots();
        super::prefetch(&slots.entries[slots.home(key)]);
    }

    /// The row of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<RowId> {
        self.slots().find(key)
    }

    /// The row of `key`, or, if absent, the row `make()` returns, now indexed. Returns whether it
    /// inserted.
    pub fn get_or_insert_with(&self, key: u64, make: impl FnOnce() -> RowId) -> (RowId, bool) {
        let mut st = self.insert.lock();
        let cur = self.slots();
        if let Some(r) = cur.find(key) {
            return (r, false);
        }
        let slots = if (st.len + 1) * 2 > cur.entries.len() {
            let bigger = Slots::new(cur.entries.len() * 2);
            for e in cur.entries.iter() {
                let rid = e.rid.load(Ordering::Relaxed);
                if rid != 0 {
                    bigger.put(e.key.load(Ordering::Relaxed), rid - 1);
                }
            }
            let p = Box::into_raw(bigger);
            st.tables.push(p);
            self.current.store(p, Ordering::Release);
            self.slots()
        } else {
            cur
        };
        let rid = make();
        slots.put(key, rid);
        st.len += 1;
        (rid, true)
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.insert.lock().len
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every (key, row) pair, in no particular order (a snapshot of the current table).
    pub fn entries(&self) -> Vec<(u64, RowId)> {
        self.slots()
            .entries
            .iter()
            .filter_map(|e| {
                let rid = e.rid.load(Ordering::Acquire);
                (rid != 0).then(|| (e.key.load(Ordering::Relaxed), rid - 1))
            })
            .collect()
    }
}

impl Drop for HashIndex {
    fn drop(&mut self) {
        for &p in &self.insert.get_mut().tables {
            // SAFETY: each pointer came from Box::into_raw and is freed once, here.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_and_keeps_every_key() {
        let ix = HashIndex::with_capacity(4);
        for k in 0..10_000u64 {
            let key = k.wrapping_mul(7919) ^ 0xABCD;
            assert_eq!(ix.get_or_insert_with(key, || k), (k, true));
        }
        for k in 0..10_000u64 {
            let key = k.wrapping_mul(7919) ^ 0xABCD;
            assert_eq!(ix.get(key), Some(k));
            assert_eq!(ix.get_or_insert_with(key, || unreachable!()), (k, false));
        }
        assert_eq!(ix.get(u64::MAX), None);
        assert_eq!(ix.len(), 10_000);
        assert_eq!(ix.entries().len(), 10_000);
    }

    #[test]
    fn concurrent_readers_and_inserters_agree() {
        let ix = HashIndex::with_capacity(16);
        std::thread::scope(|s| {
            for t in 0..2u64 {
                let ix = &ix;
                s.spawn(move || {
                    for k in 0..20_000u64 {
                        // Both threads insert the same keys: exactly one wins, both see the winner.
                        let (rid, _) = ix.get_or_insert_with(k, || k * 2 + t);
                        assert!(rid == k * 2 || rid == k * 2 + 1);
                        assert_eq!(ix.get(k), Some(rid));
                    }
                });
            }
            let ix = &ix;
            s.spawn(move || {
                for _ in 0..5 {
                    for k in 0..20_000u64 {
                        if let Some(r) = ix.get(k) {
                            assert_eq!(r / 2, k);
                        }
                    }
                }
            });
        });
        assert_eq!(ix.len(), 20_000);
    }
}
