//! The TID word: Silo's per-record lock, version and commit timestamp in one `AtomicU64`.
//!
//! ```text
//!   63   62 ............ 32 31 ............. 0
//!  ┌────┬──────────────────┬──────────────────┐
//!  │lock│   epoch (31 b)   │  sequence (32 b) │
//!  └────┴──────────────────┴──────────────────┘
//! ```
//!
//! * **lock** — held by a committer from Phase 1 until it installs (or gives up). Readers never take it;
//!   they spin while it is set and re-check the word after copying ([`stable`]).
//! * **epoch | sequence** — the TID of the transaction that wrote the record's current version. Epoch in
//!   the high bits makes TIDs ordered by epoch first, as in the paper. Loaded rows have TID 0.
//!
//! Whether the record exists is not here but in the storage version word (`ABSENT` bit); Silo changes
//! that word only while holding this lock, so one stable snapshot of the TID covers both.

use std::sync::atomic::Ordering;

/// The TID word: `std`'s atomic, or loom's in a `--cfg ordo_loom` build, which model-checks
/// [`stable`] against a committer (`tid_loom.rs`).
#[cfg(not(ordo_loom))]
pub type TidWord = std::sync::atomic::AtomicU64;
#[cfg(ordo_loom)]
pub type TidWord = loom::sync::atomic::AtomicU64;
#[cfg(ordo_loom)]
pub use loom::{hint::spin_loop, sync::atomic::fence};
#[cfg(not(ordo_loom))]
pub use std::{hint::spin_loop, sync::atomic::fence};

/// The lock bit.
pub const LOCK: u64 = 1 << 63;
/// Position of the epoch field.
pub const EPOCH_SHIFT: u32 = 32;
/// Mask of the epoch field (after shifting).
pub const EPOCH_MASK: u64 = (1 << 31) - 1;
/// Mask of the sequence field.
pub const SEQ_MASK: u64 = (1 << EPOCH_SHIFT) - 1;

/// Whether the lock bit is set.
#[inline]
pub fn is_locked(word: u64) -> bool {
    word & LOCK != 0
}

/// The epoch of a TID.
#[inline]
pub fn epoch_of(word: u64) -> u64 {
    (word >> EPOCH_SHIFT) & EPOCH_MASK
}

/// The sequence number of a TID within its epoch.
#[inline]
pub fn seq_of(word: u64) -> u64 {
    word & SEQ_MASK
}

/// The TID `(epoch, seq)`, unlocked.
#[inline]
pub fn make(epoch: u64, seq: u64) -> u64 {
    ((epoch & EPOCH_MASK) << EPOCH_SHIFT) | (seq & SEQ_MASK)
}

/// The commit TID of Phase 3: the smallest TID in epoch `epoch` greater than `max_seen` (the largest TID
/// read or written, or the worker's previous commit TID).
#[inline]
pub fn next_after(max_seen: u64, epoch: u64) -> u64 {
    ((max_seen & !LOCK) + 1).max(make(epoch, 0))
}

/// Waits until the word is unlocked and returns it (`Acquire`: the data of that version is visible).
#[inline]
pub fn load_unlocked(word: &TidWord) -> u64 {
    loop {
        let v = word.load(Ordering::Acquire);
        if !is_locked(v) {
            return v;
        }
        spin_loop();
    }
}

/// A stable read (the seqlock reader of the paper's §4.5): loads the unlocked TID, runs `copy` (which
/// reads data words and the version word with `Relaxed` loads), then checks that the TID did not change;
/// retries until it did not. Returns the TID the copy is consistent with and `copy`'s result.
///
/// Why it is enough: a committer sets the lock bit, issues a fence, and only then stores data words; if
/// `copy` saw any of those stores, the `Acquire` fence below makes the re-load see the lock bit or the
/// committer's new TID, which differs from the first load because commit TIDs strictly increase.
#[inline]
pub fn stable<R>(word: &TidWord, mut copy: impl FnMut() -> R) -> (u64, R) {
    loop {
        let before = load_unlocked(word);
        let r = copy();
        fence(Ordering::Acquire);
        if word.load(Ordering::Relaxed) == before {
            return (before, r);
        }
        spin_loop();
    }
}

/// Phase 1: spins until this thread sets the lock bit; returns the TID it held. Callers lock in a global
/// order, so spinning cannot deadlock.
#[inline]
pub fn lock(word: &TidWord) -> u64 {
    loop {
        let v = word.load(Ordering::Relaxed);
        if !is_locked(v)
            && word
                .compare_exchange_weak(v, v | LOCK, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return v;
        }
        spin_loop();
    }
}

/// Releases a lock taken by [`lock`] without installing anything (`tid` is what `lock` returned), or
/// installs `tid` as the record's new TID, which releases the lock too. `Release`: everything written
/// under the lock is visible to whoever sees the new word.
#[inline]
pub fn unlock(word: &TidWord, tid: u64) {
    word.store(tid & !LOCK, Ordering::Release);
}

#[cfg(all(test, ordo_loom))]
#[path = "tid_loom.rs"]
mod loom_tests;

#[cfg(all(test, not(ordo_loom)))]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_order_by_epoch_first() {
        let t = make(7, 42);
        assert_eq!((epoch_of(t), seq_of(t), is_locked(t)), (7, 42, false));
        assert!(is_locked(t | LOCK));
        assert_eq!(epoch_of(t | LOCK), 7);
        assert!(make(8, 0) > make(7, SEQ_MASK));
    }

    #[test]
    fn next_tid_is_greater_and_in_the_epoch() {
        assert_eq!(next_after(0, 3), make(3, 0));
        assert_eq!(next_after(make(3, 5), 3), make(3, 6));
        assert_eq!(next_after(make(3, 5) | LOCK, 4), make(4, 0));
        assert_eq!(
            next_after(make(5, 9), 4),
            make(5, 10),
            "never goes backwards"
        );
    }

    #[test]
    fn lock_and_unlock() {
        let w = TidWord::new(make(1, 1));
        assert_eq!(lock(&w), make(1, 1));
        assert!(is_locked(w.load(Ordering::Relaxed)));
        unlock(&w, make(1, 2));
        assert_eq!(load_unlocked(&w), make(1, 2));
        let (t, x) = stable(&w, || 5);
        assert_eq!((t, x), (make(1, 2), 5));
    }
}
