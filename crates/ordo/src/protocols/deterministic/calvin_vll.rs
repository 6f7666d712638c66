//! `calvin-vll` — the VLL paper's **deterministic VLL**: Calvin's pipeline with the lock-manager thread
//! running *arrayed* VLL and SCA instead of a hash table of lock queues.
//!
//! # Arrayed VLL (paper §2.1–2.3, §3.2)
//!
//! Each lockable key maps to a pair of counters, `C_X` and `C_S`, kept in two plain arrays (not beside
//! the record: the lock-manager thread never touches records, so separate arrays keep its working set
//! small and cache-resident — the paper's "arrayed" variant). The map is a hash of `(table, key)` into
//! `2^20` slots; two keys that collide share counters and so behave as one lock (an over-conservative
//! lock, never a missed conflict), and a transaction's colliding keys are merged (exclusive wins) so it
//! never blocks on itself. The **TxnQueue** is the sequence of admitted, unfinished transactions in
//! the global order ([`SeqSlab`]).
//!
//! ```text
//!   paper (Fig. 1)                                  here
//!   BeginTransaction: C_S++ / C_X++, Blocked if      request(): same counters; Free → ready now
//!     C_X>0 (read) or C_X>1 ∨ C_S>0 (write)
//!   FinishTransaction: C_S-- / C_X--, dequeue        release(): same, then the head rule
//!   head of TxnQueue Blocked → it is safe, run it   release(): if the oldest is Blocked → ready
//!   SCA (Fig. 4) when the CPU would idle             idle(): one scan, every blocked txn it finds safe
//! ```
//!
//! Why the head is safe: a transaction younger than the head that conflicts with it saw the head's
//! counters when it entered, so it is Blocked; an older one has finished. SCA generalizes this: a blocked
//! transaction conflicting with no older unfinished transaction can run. Because transactions enter the
//! queue in the global order and only ever run after every older conflicting one finished, the result
//! equals the serial execution in sequence order, as with Calvin's lock manager.
//!
//! SCA here scans the queue oldest first with two bit arrays `D_X`, `D_S` (indexed by the same slot
//! hash, modulo their size): a blocked transaction whose keys hit no bit set by an older transaction is
//! safe; every transaction sets its bits whether or not it was found safe (younger ones cannot jump it).
//! The paper's SCA returns one transaction per call; continuing the scan after marking the found one
//! is equivalent to calling it again and cheaper. It runs only when the lock-manager thread would
//! otherwise wait for a message, and only if something changed since the last scan.

use super::plan::LockReq;
use super::scheduler::{Scheduler, SeqSlab};
use super::{Deterministic, Flavor};
use crate::protocols::{Isolation, ProtocolInfo};

/// Counter slots (`2^SLOT_BITS`).
pub const SLOT_BITS: u32 = 20;
/// Bits in each of SCA's `D_X` and `D_S` arrays (the paper uses 819,200 bits = 100 kB each).
pub const SCA_BITS: usize = 1 << 20;

/// The counter slot of `(table, key)`.
#[inline]
pub fn slot(table: u32, key: u64) -> u32 {
    let h = (key ^ ((table as u64) << 56)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - SLOT_BITS)) as u32
}

/// A transaction in the TxnQueue.
#[derive(Debug)]
struct Txn {
    /// Its locks as counter slots: `key` holds the slot, sorted and merged (exclusive wins).
    slots: Vec<LockReq>,
    blocked: bool,
}

/// Arrayed VLL with SCA, run by the lock-manager thread.
pub struct ArrayedVll {
    cx: Vec<u32>,
    cs: Vec<u32>,
    queue: SeqSlab<Txn>,
    /// Blocked transactions in the queue.
    blocked: usize,
    /// Something changed since SCA last ran.
    dirty: bool,
    dx: Vec<u64>,
    ds: Vec<u64>,
}

impl Default for ArrayedVll {
    fn default() -> Self {
        ArrayedVll {
            cx: vec![0; 1 << SLOT_BITS],
            cs: vec![0; 1 << SLOT_BITS],
            queue: SeqSlab::default(),
            blocked: 0,
            dirty: false,
            dx: vec![0; SCA_BITS / 64],
            ds: vec![0; SCA_BITS / 64],
        }
    }
}

impl ArrayedVll {
    /// `(C_X, C_S)` of `(table, key)` (tests).
    pub fn counters(&self, table: u32, key: u64) -> (u32, u32) {
        let j = slot(table, key) as usize;
        (self.cx[j], self.cs[j])
    }

    /// Blocked transactions in the TxnQueue (tests).
    pub fn blocked(&self) -> usize {
        self.blocked
    }

    /// Selective contention analysis: pushes every blocked transaction that conflicts with no older
    /// one in the queue, and marks it free.
    pub fn sca(&mut self, ready: &mut Vec<u64>) -> bool {
        self.dirty = false;
        if self.blocked == 0 {
            return false;
        }
        self.dx.iter_mut().for_each(|w| *w = 0);
        self.ds.iter_mut().for_each(|w| *w = 0);
        let (dx, ds) = (&mut self.dx, &mut self.ds);
        let bit = |s: u64| ((s as usize % SCA_BITS) / 64, 1u64 << (s % 64));
        let mut found = 0;
        let mut still_blocked = self.blocked;
        for (seq, t) in self.queue.iter_mut() {
            if still_blocked == 0 {
                break;
            }
            let mut success = t.blocked;
            for l in &t.slots {
                let (w, b) = bit(l.key);
                if l.exclusive {
                    success &= dx[w] & b == 0 && ds[w] & b == 0;
                    dx[w] |= b;
                } else {
                    success &= dx[w] & b == 0;
                    ds[w] |= b;
                }
            }
            if t.blocked {
                still_blocked -= 1;
                if success {
                    t.blocked = false;
                    ready.push(seq);
                    found += 1;
                }
            }
        }
        self.blocked -= found;
        found > 0
    }
}

impl Scheduler for ArrayedVll {
    fn request(&mut self, seq: u64, mut locks: Vec<LockReq>, _ready: &mut Vec<u64>) -> bool {
        for l in locks.iter_mut() {
            l.key = slot(l.table, l.key) as u64;
            l.table = 0;
        }
        locks.sort_unstable_by_key(|l| (l.key, !l.exclusive));
        locks.dedup_by_key(|l| l.key);
        let mut blocked = false;
        for l in &locks {
            let j = l.key as usize;
            if l.exclusive {
                self.cx[j] += 1;
                blocked |= self.cx[j] > 1 || self.cs[j] > 0;
            } else {
                self.cs[j] += 1;
                blocked |= self.cx[j] > 0;
            }
        }
        self.queue.insert(
            seq,
            Txn {
                slots: locks,
                blocked,
            },
        );
        if blocked {
            self.blocked += 1;
            self.dirty = true;
        }
        !blocked
    }

    fn release(&mut self, seq: u64, ready: &mut Vec<u64>) {
        let Some(t) = self.queue.remove(seq) else {
            return;
        };
        debug_assert!(!t.blocked, "only a running transaction finishes");
        for l in &t.slots {
            let j = l.key as usize;
            if l.exclusive {
                self.cx[j] -= 1;
            } else {
                self.cs[j] -= 1;
            }
        }
        self.dirty = true;
        // The head of the TxnQueue conflicts with nobody older: if it is blocked, it may run.
        if let Some((head, h)) = self.queue.front_mut() {
            if h.blocked {
                h.blocked = false;
                self.blocked -= 1;
                ready.push(head);
            }
        }
    }

    fn idle(&mut self, ready: &mut Vec<u64>) -> bool {
        self.dirty && self.sca(ready)
    }
}

impl Flavor for ArrayedVll {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "calvin-vll",
        summary: "deterministic VLL: Calvin's sequencer with arrayed VLL counters + SCA in the lock-manager thread",
        paper: "Ren, Thomson, Abadi, VLL (VLDB J. 2015) §2.1-2.4, §3.2 (deterministic VLL)",
        isolation: Isolation::Serializable,
    };
}

/// Deterministic VLL: the Calvin pipeline with [`ArrayedVll`] as its lock manager.
pub type CalvinVll = Deterministic<ArrayedVll>;

#[cfg(test)]
mod tests {
    use super::*;

    fn x(key: u64) -> LockReq {
        LockReq {
            table: 0,
            key,
            exclusive: true,
        }
    }
    fn s(key: u64) -> LockReq {
        LockReq {
            table: 0,
            key,
            exclusive: false,
        }
    }

    /// The paper's §2.5 trace: A(x), B(y), C(x, z), D(z). C is blocked by A; D by C (z). Basic VLL runs
    /// C only when it reaches the head; SCA finds C after A finishes... and not D, which is behind C.
    #[test]
    fn section_2_5_trace_with_counters_head_rule_and_sca() {
        let (kx, ky, kz) = (1, 2, 3);
        let mut v = ArrayedVll::default();
        let mut ready = Vec::new();
        assert!(v.request(1, vec![x(kx)], &mut ready), "A free");
        assert!(v.request(2, vec![x(ky)], &mut ready), "B free");
        assert!(
            !v.request(3, vec![x(kx), x(kz)], &mut ready),
            "C blocked on x"
        );
        assert!(!v.request(4, vec![x(kz)], &mut ready), "D blocked on z");
        assert_eq!(v.counters(0, kx), (2, 0));
        assert_eq!(v.counters(0, kz), (2, 0));
        assert_eq!(v.blocked(), 2);
        assert!(
            !v.sca(&mut ready) && ready.is_empty(),
            "C still conflicts with A"
        );
        v.release(1, &mut ready);
        assert!(
            ready.is_empty(),
            "B is the head and runs already; C is not the head"
        );
        assert!(v.sca(&mut ready));
        assert_eq!(ready, vec![3], "SCA returns C, not D");
        ready.clear();
        v.release(3, &mut ready);
        assert!(ready.is_empty(), "B is still the head");
        v.release(2, &mut ready);
        assert_eq!(ready, vec![4], "D at the head");
        ready.clear();
        v.release(4, &mut ready);
        for k in [kx, ky, kz] {
            assert_eq!(v.counters(0, k), (0, 0), "counters back to zero");
        }
    }

    #[test]
    fn shared_locks_coexist_and_a_writer_waits_for_readers() {
        let mut v = ArrayedVll::default();
        let mut ready = Vec::new();
        assert!(v.request(1, vec![s(7)], &mut ready));
        assert!(v.request(2, vec![s(7)], &mut ready));
        assert!(!v.request(3, vec![x(7)], &mut ready));
        assert!(
            !v.request(4, vec![s(7)], &mut ready),
            "a reader behind a writer waits"
        );
        v.release(2, &mut ready);
        assert!(!v.sca(&mut ready), "T1 still reads");
        v.release(1, &mut ready);
        assert_eq!(ready, vec![3], "the writer is the head");
        ready.clear();
        v.release(3, &mut ready);
        assert_eq!(ready, vec![4]);
    }

    #[test]
    fn duplicate_and_colliding_keys_do_not_self_block() {
        let mut v = ArrayedVll::default();
        let mut ready = Vec::new();
        assert!(v.request(1, vec![s(5), x(5), x(5)], &mut ready));
        assert_eq!(v.counters(0, 5), (1, 0));
        v.release(1, &mut ready);
        assert_eq!(v.counters(0, 5), (0, 0));
    }
}
