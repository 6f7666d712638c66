//! A transaction's lock requests: which record, in which mode — the currency of every protocol that
//! knows its whole lock set before it runs (the VLL family, Calvin, deadlock-free 2PL, the
//! partitioned engines).
//!
//! [`normalize`] turns a transaction's declared keys into its lock requests: each key once, a key
//! both read and written (read-modify-write) only as a write — so a transaction never blocks itself.
//! Short lists stay in request order and are searched linearly behind a 64-bit signature; longer ones
//! are sorted and binary-searched ([`find`], [`count_in`]).
//!
//! A request may remember the address of its record's per-record state ([`LockRequest::with_meta`]):
//! a lock manager whose locks live beside the records (VLL's colocated counters) then finds the lock
//! without a second table look-up.

use crate::storage::{RowId, TableId};

/// Lock mode of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// Read lock: counted in C_S.
    Shared,
    /// Read-write lock: counted in C_X.
    Exclusive,
}

/// One lock request of a transaction: a record (by table, key and slot) and a mode.
#[derive(Clone, Copy, Debug)]
pub struct LockRequest {
    pub table: TableId,
    pub key: u64,
    pub rid: RowId,
    pub mode: Mode,
    /// The address of the record's per-record state (its colocated lock, such as VLL's counters),
    /// resolved when the request was planned ([`LockRequest::with_meta`]), so that the lock
    /// manager's request and release do not each repeat the table look-up and row-arena address
    /// computation; `None`: found by `table` and `rid`.
    meta: Option<MetaRef>,
}

impl PartialEq for LockRequest {
    /// The same lock: record and mode (how its per-record state is found is not part of it).
    fn eq(&self, o: &Self) -> bool {
        (self.table, self.key, self.rid, self.mode) == (o.table, o.key, o.rid, o.mode)
    }
}
impl Eq for LockRequest {}

impl LockRequest {
    pub fn new(table: TableId, key: u64, rid: RowId, mode: Mode) -> Self {
        LockRequest {
            table,
            key,
            rid,
            mode,
            meta: None,
        }
    }

    /// The request with the address of its record's per-record state `meta` remembered.
    ///
    /// # Safety
    /// `meta` must be the per-record state of record `rid` of table `table` in the database (of
    /// per-record state `M`) this request will be requested and released in, that database must
    /// live as long as the request is used (row-arena slots never move and are freed only with the
    /// database), and [`LockRequest::meta`] must read it back as the same `M`.
    pub unsafe fn with_meta<M: Sync>(mut self, meta: &M) -> Self {
        self.meta = Some(MetaRef(std::ptr::NonNull::from(meta).cast()));
        self
    }

    /// The per-record state remembered by [`LockRequest::with_meta`], if any.
    ///
    /// # Safety
    /// `M` must be the type it was remembered as, and the database it belongs to alive for `'d`
    /// (see [`LockRequest::with_meta`]).
    #[inline(always)]
    pub unsafe fn meta<'d, M: Sync>(&self) -> Option<&'d M> {
        // SAFETY: the caller's contract, as `with_meta`'s.
        self.meta.map(|m| unsafe { m.0.cast::<M>().as_ref() })
    }
}

/// The address of a record's per-record state (see [`LockRequest::with_meta`]).
#[derive(Clone, Copy, Debug)]
struct MetaRef(std::ptr::NonNull<()>);

// SAFETY: the state is `Sync` (`with_meta`'s bound) and only read through a shared reference, and
// `with_meta`'s contract keeps the address valid wherever the request is used.
unsafe impl Send for MetaRef {}
unsafe impl Sync for MetaRef {}

/// The id of a record's lock: table and key folded into one word (what SCA and the short lists'
/// signatures hash).
#[inline]
pub fn lock_id(table: TableId, key: u64) -> u64 {
    key ^ (table as u64).rotate_right(8)
}

/// Lock lists up to this long are kept in first-request order and searched linearly (cheaper than
/// sorting for the typical 10-key transaction); longer ones are sorted and binary-searched.
pub const SMALL: usize = 16;

/// The bit of (`table`, `key`) in a 64-bit signature of a short lock list (see [`normalize`]).
#[inline]
pub fn signature_bit(table: TableId, key: u64) -> u64 {
    1u64 << (lock_id(table, key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// Merges duplicate requests in `locks`: each key once, exclusive if any request for it was
/// exclusive. After this a transaction's requests never conflict with each other. Lists longer than
/// [`SMALL`] come out sorted by (table, key).
pub fn normalize(locks: &mut Vec<LockRequest>) {
    if locks.len() <= SMALL {
        // A 64-bit signature of the keys kept so far: a key whose bit is clear is certainly new, so the
        // linear search runs only on a signature hit (a duplicate, or 1 in 64 by chance per key).
        let mut sig = 0u64;
        let mut n = 0;
        for i in 0..locks.len() {
            let l = locks[i];
            let bit = signature_bit(l.table, l.key);
            let dup = if sig & bit == 0 {
                None
            } else {
                locks[..n]
                    .iter()
                    .position(|k| k.key == l.key && k.table == l.table)
            };
            sig |= bit;
            match dup {
                Some(j) => locks[j].mode = locks[j].mode.max(l.mode),
                None => {
                    locks[n] = l;
                    n += 1;
                }
            }
        }
        locks.truncate(n);
        return;
    }
    locks.sort_unstable_by_key(|l| (l.table, l.key, std::cmp::Reverse(l.mode)));
    // Sorted with the exclusive request first among equal keys, so keeping the first keeps the strongest.
    locks.dedup_by_key(|l| (l.table, l.key));
}

/// Where the request for (`table`, `key`) is in normalized `locks`, if anywhere.
#[inline]
pub fn find(locks: &[LockRequest], table: TableId, key: u64) -> Option<usize> {
    if locks.len() <= SMALL {
        return locks.iter().position(|l| l.key == key && l.table == table);
    }
    locks
        .binary_search_by_key(&(table, key), |l| (l.table, l.key))
        .ok()
}

/// How many of normalized `locks` fall in `lo..=hi` of `table`.
pub fn count_in(locks: &[LockRequest], table: TableId, lo: u64, hi: u64) -> usize {
    if locks.len() <= SMALL {
        return locks
            .iter()
            .filter(|l| l.table == table && (lo..=hi).contains(&l.key))
            .count();
    }
    let from = locks.partition_point(|l| (l.table, l.key) < (table, lo));
    let to = locks.partition_point(|l| (l.table, l.key) <= (table, hi));
    to - from
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::kit::counters::{Arrayed, CounterStore};
    use crate::storage::Database;

    #[test]
    fn normalize_keeps_each_key_once_and_writes_win() {
        let l = |key, mode| LockRequest::new(0, key, key, mode);
        let mut v = vec![
            l(5, Mode::Shared),
            l(3, Mode::Shared),
            l(5, Mode::Exclusive),
            l(3, Mode::Shared),
            l(1, Mode::Exclusive),
        ];
        normalize(&mut v);
        let mut sorted = v.clone();
        sorted.sort_by_key(|l| l.key);
        assert_eq!(
            sorted,
            vec![
                l(1, Mode::Exclusive),
                l(3, Mode::Shared),
                l(5, Mode::Exclusive)
            ]
        );
        assert_eq!(find(&v, 0, 5).map(|i| v[i].mode), Some(Mode::Exclusive));
        assert!(find(&v, 0, 4).is_none());
        assert_eq!(count_in(&v, 0, 2, 5), 2);
        // Long lists take the sorted path.
        let mut long: Vec<_> = (0..40)
            .rev()
            .flat_map(|k| {
                let m = if k % 2 == 0 {
                    Mode::Exclusive
                } else {
                    Mode::Shared
                };
                [l(k, Mode::Shared), l(k, m)]
            })
            .collect();
        normalize(&mut long);
        assert_eq!(long.len(), 40);
        assert!(long.windows(2).all(|w| w[0].key < w[1].key));
        assert!(long
            .iter()
            .all(|x| (x.mode == Mode::Exclusive) == (x.key % 2 == 0)));
        assert_eq!(find(&long, 0, 17).map(|i| long[i].mode), Some(Mode::Shared));
        assert_eq!(count_in(&long, 0, 10, 19), 10);
        // A normalized set never blocks itself.
        let mut store = Arrayed::default();
        let db = Database::<()>::new();
        assert!(v.iter().all(|r| store.request(&db, r)));
    }
}
