//! The standard lock manager: a hash table from key to a FIFO queue of lock requests (Calvin's, and
//! the "traditional" one of the VLL paper's Fig. 16).
//!
//! ```text
//!   (table, key) ──hash──▶ [ T3:S granted | T5:S granted | T7:X waiting | T8:S waiting ]
//! ```
//!
//! * **Request** (in the global order, on the lock-manager thread only): append a request to the queue
//!   of each key; it is granted at once if the queue was empty, or if it is shared and every request
//!   ahead is a granted shared one. A transaction with no waiting request is ready to execute.
//! * **Release**: remove the transaction's request from each queue, then grant from the front: an
//!   exclusive request alone at the front, or the run of shared requests at the front. Each grant that
//!   completes a transaction's lock set makes it ready.
//!
//! Since every transaction requests all its locks at once, in one global order, no transaction ever
//! waits for a younger one: deterministic locking is deadlock-free and the equivalent serial order is
//! the sequencer's order. Queues are created on first request and dropped (their memory kept for reuse)
//! once empty, as a real lock table's are; the hash is a cheap multiplicative one (the paper's point is
//! the cost of the table's structure, not of a slow hash function).

use super::plan::{LockRequest, Mode};
use super::scheduler::{Scheduler, SeqSlab};
use crate::storage::TableId;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher for `(table, key)` (the FxHash scheme).
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// One lock request in a key's queue.
#[derive(Clone, Copy, Debug)]
struct Request {
    seq: u64,
    exclusive: bool,
    granted: bool,
}

/// A transaction known to the lock manager.
#[derive(Debug)]
struct Txn {
    locks: Vec<LockRequest>,
    /// Requests not granted yet.
    waiting: usize,
}

/// The hash-table lock manager with per-key request queues granting in order.
pub struct HashLockManager {
    table: HashMap<(TableId, u64), VecDeque<Request>, BuildHasherDefault<KeyHasher>>,
    txns: SeqSlab<Txn>,
    /// Emptied queues, kept to avoid reallocating.
    spare: Vec<VecDeque<Request>>,
    /// Released transactions' lock lists, emptied (see [`Scheduler::spare_list`]); kept only once
    /// someone has asked for one (Calvin's lists come from the workers and never go back).
    spare_lists: Vec<Vec<LockRequest>>,
    recycles: bool,
}

/// Most emptied lock lists [`HashLockManager`] keeps.
const SPARE_LISTS: usize = 64;

/// Keys the table has room for from the start.
///
/// A lock table is sized for its load up front, as a disk-era one's bucket array is. Grown on
/// demand, a table whose keys come and go (every transaction inserts and removes ten) can settle
/// just above its live keys, where the hash map's deleted-entry markers fill its free slots and
/// force rehashes in place. (Presizing was tried against `2pl-deadlock-free`'s runs at either ~0.3 M
/// or ~1 M transactions/s on `vll-micro`; it did not remove them: see `docs/results/deterministic.md`,
/// "Fig. 8, all four panels".)
const INITIAL_KEYS: usize = 4096;

impl Default for HashLockManager {
    fn default() -> Self {
        HashLockManager {
            table: HashMap::with_capacity_and_hasher(INITIAL_KEYS, Default::default()),
            txns: SeqSlab::default(),
            spare: Vec::new(),
            spare_lists: Vec::new(),
            recycles: false,
        }
    }
}

impl HashLockManager {
    /// Number of keys with a non-empty queue (tests).
    pub fn keys_locked(&self) -> usize {
        self.table.len()
    }
}

impl Scheduler for HashLockManager {
    fn request(&mut self, seq: u64, locks: Vec<LockRequest>, _ready: &mut Vec<u64>) -> bool {
        let mut waiting = 0;
        for l in &locks {
            let q = self
                .table
                .entry((l.table, l.key))
                .or_insert_with(|| self.spare.pop().unwrap_or_default());
            let exclusive = l.mode == Mode::Exclusive;
            let granted = match q.back() {
                None => true,
                // Shared requests join a granted shared group (they are granted as a prefix).
                Some(last) => !exclusive && !last.exclusive && last.granted,
            };
            waiting += usize::from(!granted);
            q.push_back(Request {
                seq,
                exclusive,
                granted,
            });
        }
        self.txns.insert(seq, Txn { locks, waiting });
        waiting == 0
    }

    fn spare_list(&mut self) -> Vec<LockRequest> {
        self.recycles = true;
        self.spare_lists.pop().unwrap_or_default()
    }

    fn release(&mut self, seq: u64, ready: &mut Vec<u64>) {
        let Some(mut txn) = self.txns.remove(seq) else {
            return;
        };
        for l in &txn.locks {
            let key = (l.table, l.key);
            let q = self.table.get_mut(&key).expect("a held lock has a queue");
            let pos = q.iter().position(|r| r.seq == seq).expect("request queued");
            q.remove(pos);
            if q.is_empty() {
                let q = self.table.remove(&key).expect("queue present");
                self.spare.push(q);
                continue;
            }
            // Grant from the front: an exclusive request alone, or a run of shared ones.
            for (i, r) in q.iter_mut().enumerate() {
                if !r.granted {
                    if r.exclusive && i > 0 {
                        break;
                    }
                    r.granted = true;
                    let t = self.txns.get_mut(r.seq).expect("waiting transaction");
                    t.waiting -= 1;
                    if t.waiting == 0 {
                        ready.push(r.seq);
                    }
                }
                if r.exclusive {
                    break;
                }
            }
        }
        if self.recycles && self.spare_lists.len() < SPARE_LISTS {
            txn.locks.clear();
            self.spare_lists.push(txn.locks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: u64, exclusive: bool) -> LockRequest {
        let mode = if exclusive {
            Mode::Exclusive
        } else {
            Mode::Shared
        };
        LockRequest::new(0, key, 0, mode)
    }

    #[test]
    fn grants_in_order_shared_groups_then_exclusive() {
        let mut lm = HashLockManager::default();
        let mut ready = Vec::new();
        assert!(lm.request(1, vec![req(1, false)], &mut ready));
        assert!(lm.request(2, vec![req(1, false), req(2, true)], &mut ready));
        assert!(
            !lm.request(3, vec![req(1, true)], &mut ready),
            "X behind two S"
        );
        assert!(
            !lm.request(4, vec![req(1, false)], &mut ready),
            "S behind a waiting X"
        );
        assert!(
            !lm.request(5, vec![req(2, false)], &mut ready),
            "S behind a granted X"
        );
        lm.release(1, &mut ready);
        assert!(ready.is_empty(), "T2 still holds S");
        lm.release(2, &mut ready);
        assert_eq!(ready, vec![3, 5], "X(1) to T3, S(2) to T5");
        ready.clear();
        lm.release(3, &mut ready);
        assert_eq!(ready, vec![4]);
        ready.clear();
        lm.release(4, &mut ready);
        lm.release(5, &mut ready);
        assert!(ready.is_empty());
        assert_eq!(lm.keys_locked(), 0, "every queue dropped once empty");
    }

    #[test]
    fn a_transaction_is_ready_only_when_all_its_locks_are_granted() {
        let mut lm = HashLockManager::default();
        let mut ready = Vec::new();
        assert!(lm.request(1, vec![req(1, true)], &mut ready));
        assert!(lm.request(2, vec![req(2, true)], &mut ready));
        assert!(!lm.request(3, vec![req(1, true), req(2, true)], &mut ready));
        lm.release(2, &mut ready);
        assert!(ready.is_empty());
        lm.release(1, &mut ready);
        assert_eq!(ready, vec![3]);
    }

    #[test]
    fn a_released_transactions_lock_list_is_handed_out_again_empty() {
        let mut lm = HashLockManager::default();
        let mut ready = Vec::new();
        assert!(lm.spare_list().is_empty());
        let locks: Vec<LockRequest> = (0..10).map(|k| req(k, true)).collect();
        let cap = locks.capacity();
        assert!(lm.request(1, locks, &mut ready));
        lm.release(1, &mut ready);
        let list = lm.spare_list();
        assert!(list.is_empty() && list.capacity() == cap, "reused, emptied");
        assert_eq!(lm.keys_locked(), 0);

        // A manager nobody asks for lists (Calvin's) keeps none.
        let mut calvin = HashLockManager::default();
        assert!(calvin.request(1, vec![req(1, true)], &mut ready));
        calvin.release(1, &mut ready);
        assert!(calvin.spare_lists.is_empty());
    }
}
