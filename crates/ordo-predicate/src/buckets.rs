//! Active sets of predicate locks and column filtering (§2.2.3).
//!
//! A [`Bucket`] is one active set: a mutex over its locks (Algorithm 1's `FetchInsert` is one
//! critical section: snapshot, then insert) and a condition variable that releases signal. Without
//! filtering the whole database has one bucket; with it each relation has N, and a lock goes to the
//! buckets of the values its predicate pins the relation's filter (key) column to — `k = v` to
//! bucket `v mod N`, `k = 1 ∨ k = 2` to two — or, when it pins nothing (a scan), to all N. Two
//! conflicting locks always share a bucket: a tuple satisfying both has one key value, which both
//! predicates' key sets contain, unless one has no key set and is in every bucket. Each worker
//! computes its own buckets; there is no global critical section.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

use crate::lock::Lock;
use crate::predicate::{ColumnId, Expr, Op};

/// The most key values a lock is filed under one by one; more go to all buckets.
pub const MAX_KEY_VALUES: usize = 64;

/// One active set (own cache line: neighbouring buckets are taken by different workers).
#[repr(align(64))]
#[derive(Default)]
pub struct Bucket {
    active: Mutex<Vec<Arc<Lock>>>,
    released: Condvar,
}

impl Bucket {
    /// Algorithm 1's `FetchInsert`: append to `snapshot` the unreleased locks of other transactions
    /// (tagged with this bucket's `index`), then insert `lock` — both under the bucket's mutex.
    pub fn fetch_insert(&self, lock: &Arc<Lock>, index: u32, snapshot: &mut Vec<(Arc<Lock>, u32)>) {
        let mut active = self.active.lock();
        snapshot.extend(
            active
                .iter()
                .filter(|l| l.txn != lock.txn && !l.released.load(Ordering::Relaxed))
                .map(|l| (Arc::clone(l), index)),
        );
        active.push(Arc::clone(lock));
    }

    /// Remove `lock` (already marked released) and wake the waiters.
    pub fn remove(&self, lock: &Arc<Lock>) {
        let mut active = self.active.lock();
        if let Some(i) = active.iter().position(|l| Arc::ptr_eq(l, lock)) {
            active.swap_remove(i);
        }
        drop(active);
        self.released.notify_all();
    }

    /// Wait until `lock`, which is (or was) in this bucket, is released; `false` at `deadline`.
    pub fn wait_released(&self, lock: &Lock, deadline: Instant) -> bool {
        let mut active = self.active.lock();
        while !lock.released.load(Ordering::Acquire) {
            if self.released.wait_until(&mut active, deadline).timed_out() {
                return lock.released.load(Ordering::Acquire);
            }
        }
        true
    }

    /// Locks in the set now.
    pub fn len(&self) -> usize {
        self.active.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The values `p` pins column `key` to (every tuple satisfying `p` has its key among them), or
/// `None` if it pins none, or more than [`MAX_KEY_VALUES`]. An equality atom on the key pins its
/// value; a conjunction pins what its most selective pinned part pins; a disjunction pins the union
/// of its parts, if every part pins; `FALSE` pins the empty set. (The public artifact handles the
/// first two.)
pub fn key_values<V: Copy + PartialEq>(p: &Expr<V>, key: ColumnId) -> Option<Vec<V>> {
    match p {
        Expr::Atom(a) if a.column == key && a.op == Op::Eq => Some(vec![a.value]),
        Expr::True | Expr::Atom(_) => None,
        Expr::False => Some(vec![]),
        Expr::And(ps) => ps
            .iter()
            .filter_map(|q| key_values(q, key))
            .min_by_key(Vec::len),
        Expr::Or(ps) => {
            let mut all = Vec::new();
            for q in ps {
                for v in key_values(q, key)? {
                    if !all.contains(&v) {
                        all.push(v);
                    }
                }
                if all.len() > MAX_KEY_VALUES {
                    return None;
                }
            }
            Some(all)
        }
    }
}

/// Bounds `[lo, hi]` that `p` keeps column `key` within, from its top-level conjuncts (`key ≥ a`,
/// `key > a`, `key ≤ b`, `key < b`, `BETWEEN`; a strict bound is kept as the non-strict one, a
/// superset), or `None` unless it bounds both ends. A range narrower than the buckets is filed in
/// the buckets of its values rather than in all of them: a tuple in the range has one of those
/// values, so two locks that can share a tuple still share a bucket.
pub fn key_bounds<V: Copy + PartialEq>(p: &Expr<V>, key: ColumnId) -> Option<(V, V)> {
    let atoms: &[Expr<V>] = match p {
        Expr::And(ps) => ps,
        Expr::Atom(_) => std::slice::from_ref(p),
        _ => return None,
    };
    let (mut lo, mut hi) = (None, None);
    for q in atoms {
        if let Expr::Atom(a) = q {
            if a.column == key {
                match a.op {
                    Op::Ge | Op::Gt if lo.is_none() => lo = Some(a.value),
                    Op::Le | Op::Lt if hi.is_none() => hi = Some(a.value),
                    _ => {}
                }
            }
        }
    }
    Some((lo?, hi?))
}

/// The bucket of key value `v` among `n`: `v mod n` (the paper's PK mod N).
#[inline]
pub fn bucket_of(v: i64, n: u32) -> u32 {
    v.rem_euclid(i64::from(n.max(1))) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicate::Predicate;

    #[test]
    fn key_values_of_shapes() {
        let k = |s: &str| key_values(&Predicate::parse(s).unwrap(), 0);
        assert_eq!(k("a = 5"), Some(vec![5]));
        assert_eq!(k("a = 5 AND b > 3"), Some(vec![5]));
        assert_eq!(k("b > 3 AND (a = 1 OR a = 2)"), Some(vec![1, 2]));
        assert_eq!(k("a = 1 OR a = 2 OR a = 1"), Some(vec![1, 2]));
        assert_eq!(k("a = 1 OR b = 2"), None);
        assert_eq!(k("a > 1"), None);
        assert_eq!(k("b = 1"), None);
        assert_eq!(k("a = 1 AND a = 2"), Some(vec![1]));
        assert_eq!(bucket_of(-1, 4), 3);
        let b = |s: &str| key_bounds(&Predicate::parse(s).unwrap(), 0);
        assert_eq!(b("a BETWEEN 3 AND 9"), Some((3, 9)));
        assert_eq!(b("b = 1 AND a > 3 AND a < 9"), Some((3, 9)));
        assert_eq!(b("a >= 3"), None);
        assert_eq!(b("a >= 3 OR a <= 9"), None);
        assert_eq!(bucket_of(9, 4), 1);
    }
}
