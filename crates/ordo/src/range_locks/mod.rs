//! Range lock managers compared in isolation: VLLR against the two traditional ways of locking key
//! ranges (the VLL paper, §3.4.1, Fig. 14).
//!
//! # The question
//!
//! VLLR (§2.7) locks a range as a set of bitstring prefixes with four counters each (C_x, C_s, I_x,
//! I_s; [`crate::protocols::kit::prefix`]). The paper compares it with
//!
//! * a **standard range lock manager** ([`standard`]): key ranges mapped to lock-request queues in a
//!   sorted map (the paper's `std::map`, here a `BTreeMap`), "fragmenting ranges when needed if new
//!   ranges are inserted that partially overlap existing ranges" — exact ranges, no false conflicts,
//!   but tree operations and splits on every request;
//! * a **hierarchical lock manager** ([`hierarchical`]): a hash table of request queues doing "the
//!   same bitwise-prefix hierarchical locking as VLLR, acquiring intention locks for each nonempty
//!   prefix of each element of P" — VLLR's conflicts, a traditional lock manager's costs.
//!
//! "To compare the performance and contention characteristics of these techniques in isolation of
//! other factors, we implemented a single-machine, single-threaded benchmark in which each transaction
//! locked a single range — and then imposed artificial waits on a varying fraction of transactions to
//! simulate remote reads." That benchmark is [`driver`]: one thread admits transactions, each locking
//! one range; a transaction whose locks are granted runs at once, and a chosen fraction of them then
//! wait (holding their locks) for a fixed delay while the thread goes on with others. For VLLR and
//! the hierarchical manager "we translated each key range to a singleton prefix set consisting of
//! only the longest shared prefix between the start and limit" ([`longest_shared_prefix`]), which
//! over-locks; the standard manager locks the exact range.
//!
//! ```text
//!  driver loop (one thread)                     RangeLockManager
//!    delayed transactions whose wait is over  → release(T)  → transactions now runnable
//!    runnable ones run (and maybe wait)
//!    fewer than `blocked_limit` blocked?      → acquire(T, range)  granted: run T; else T blocks
//!    else idle                                → pick_blocked()  (VLLR + SCA: a pass of Fig. 4)
//! ```
//!
//! `ordo range-locks` runs it and writes rows `ordo report` draws (Fig. 14a–d).

pub mod driver;
pub mod hierarchical;
pub mod standard;
pub mod vllr;

pub use crate::protocols::kit::lock_request::Mode;
use crate::protocols::kit::prefix::Prefix;

/// A transaction's id in a lock manager: a small integer the driver reuses once it has finished.
pub type TxnId = usize;

/// An inclusive range of keys, `lo <= hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyRange {
    pub lo: u64,
    pub hi: u64,
}

/// A lock manager for one lock per transaction on a key range, driven by one thread.
pub trait RangeLockManager {
    /// The name `ordo range-locks` and its report use.
    fn name(&self) -> &'static str;
    /// Requests `txn`'s lock on `range` in `mode`; says whether it was granted at once. A transaction
    /// that was not waits until [`Self::release`] or [`Self::pick_blocked`] hands it back.
    fn acquire(&mut self, txn: TxnId, range: KeyRange, mode: Mode) -> bool;
    /// Releases the lock of `txn`, which ran; appends to `ready` every blocked transaction that may
    /// run now (each exactly once over its life).
    fn release(&mut self, txn: TxnId, ready: &mut Vec<TxnId>);
    /// Called when the driver would otherwise idle with as many transactions blocked as it admits: a
    /// blocked transaction that may run now, if the manager can tell (VLLR with SCA); none by default.
    fn pick_blocked(&mut self) -> Option<TxnId> {
        None
    }
    /// Whether nothing is locked and nothing waits.
    fn is_empty(&self) -> bool;
}

/// The longest prefix the two ends of `r` share, as a `key_bits`-bit prefix (the whole key when
/// `lo == hi`): the paper's singleton prefix set for VLLR and the hierarchical manager, which covers
/// `r` and possibly more.
pub fn longest_shared_prefix(r: KeyRange, key_bits: u8) -> Prefix {
    let differ = r.lo ^ r.hi;
    if differ == 0 {
        return Prefix::key(r.lo, key_bits);
    }
    let free = 64 - differ.leading_zeros() as u8; // bits from the highest differing one down
    Prefix {
        len: key_bits - free,
        bits: r.lo >> free,
    }
}

#[cfg(test)]
mod tests;
