//! The per-record lock words, kept in the arena beside every row (the protocol's `Meta`).
//!
//! Both are a single `AtomicU64`, so taking an uncontended lock is one compare-and-swap and the arena
//! slot grows by eight bytes:
//!
//! ```text
//!  CountLock (no-wait):   bit 63: exclusive │ bits 0..63: number of shared holders
//!  OwnerLock (wait-die,   bit 63: exclusive │ bits 0..63: one bit per *worker* holding the lock
//!             detect):
//! ```
//!
//! No-wait never needs to know who holds a lock, only whether it may have it, so a reader count does.
//! Wait-die must compare the requester's timestamp with every conflicting holder's, and deadlock
//! detection must publish whom a waiter waits for; both find a holder's transaction through its worker
//! (each worker runs one transaction at a time and publishes its timestamp and waits-for set in a
//! per-worker slot), so the holder set is a bitmap of worker ids. That caps these two policies at
//! [`MAX_OWNER_WORKERS`] workers, and in exchange a waits-for edge set is one `u64` and cycle detection
//! never allocates.

use std::sync::atomic::Ordering;

// loom's atomic in a `--cfg ordo_loom` build, which model-checks both words (`lock_loom.rs`).
#[cfg(ordo_loom)]
use loom::sync::atomic::AtomicU64;
#[cfg(not(ordo_loom))]
use std::sync::atomic::AtomicU64;

/// The exclusive bit of both lock words.
pub const X_BIT: u64 = 1 << 63;

/// Lock modes (the kit's, as every lock-based protocol's): `Shared < Exclusive`, holding exclusive
/// covers a shared request.
pub use crate::protocols::kit::lock_request::Mode;

/// No-wait's lock: an exclusive bit and a reader count.
#[derive(Debug, Default)]
pub struct CountLock(AtomicU64);

impl CountLock {
    /// Takes the lock in `mode` if it is free for that mode (one CAS when uncontended). `false`: a
    /// conflicting holder exists.
    #[inline]
    pub fn try_acquire(&self, mode: Mode) -> bool {
        match mode {
            Mode::Exclusive => self
                .0
                .compare_exchange(0, X_BIT, Ordering::Acquire, Ordering::Relaxed)
                .is_ok(),
            Mode::Shared => {
                let mut v = self.0.load(Ordering::Relaxed);
                loop {
                    if v & X_BIT != 0 {
                        return false;
                    }
                    // Another reader coming or going is not a conflict: retry with the fresh word.
                    match self.0.compare_exchange_weak(
                        v,
                        v + 1,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return true,
                        Err(cur) => v = cur,
                    }
                }
            }
        }
    }

    /// Upgrades the caller's shared lock to exclusive if it is the only holder.
    #[inline]
    pub fn try_upgrade(&self) -> bool {
        self.0
            .compare_exchange(1, X_BIT, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Releases a lock held in `mode`.
    #[inline]
    pub fn release(&self, mode: Mode) {
        match mode {
            // The exclusive holder is alone: no read-modify-write needed.
            Mode::Exclusive => self.0.store(0, Ordering::Release),
            Mode::Shared => {
                self.0.fetch_sub(1, Ordering::Release);
            }
        }
    }

    /// The raw word (tests and diagnostics).
    pub fn word(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// How many workers the owner-bitmap lock (wait-die, detect) can tell apart.
pub const MAX_OWNER_WORKERS: u32 = 63;

/// Wait-die's and detect's lock: an exclusive bit and the bitmap of holding workers.
#[derive(Debug, Default)]
pub struct OwnerLock(AtomicU64);

impl OwnerLock {
    /// The workers (other than `me`) whose hold conflicts with a `mode` request by `me`, given word `v`;
    /// 0 when the request can be granted now.
    #[inline]
    pub fn conflicting(v: u64, me: u64, mode: Mode) -> u64 {
        match mode {
            Mode::Shared if v & X_BIT == 0 => 0,
            // Exclusive request, or a shared request against an exclusive holder. A word of exactly `me`
            // (the caller is the sole reader) is an upgrade, which is granted.
            _ => v & !X_BIT & !me,
        }
    }

    /// One attempt: `Ok(())` if the lock was taken (or upgraded) for `me`, `Err(holders)` with the
    /// conflicting workers otherwise.
    #[inline]
    pub fn try_acquire(&self, me: u64, mode: Mode) -> Result<(), u64> {
        let mut v = self.0.load(Ordering::Acquire);
        loop {
            let c = Self::conflicting(v, me, mode);
            if c != 0 {
                return Err(c);
            }
            let new = match mode {
                Mode::Shared => v | me,
                Mode::Exclusive => X_BIT | me,
            };
            match self
                .0
                .compare_exchange_weak(v, new, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Ok(()),
                Err(cur) => v = cur,
            }
        }
    }

    /// Releases `me`'s hold (either mode).
    #[inline]
    pub fn release(&self, me: u64, mode: Mode) {
        match mode {
            Mode::Exclusive => self.0.store(0, Ordering::Release),
            Mode::Shared => {
                self.0.fetch_and(!me, Ordering::Release);
            }
        }
    }

    /// The raw word (tests and diagnostics).
    pub fn word(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, ordo_loom))]
#[path = "lock_loom.rs"]
mod loom_tests;

#[cfg(all(test, not(ordo_loom)))]
mod tests {
    use super::*;

    #[test]
    fn count_lock_compatibility() {
        let l = CountLock::default();
        assert!(l.try_acquire(Mode::Shared));
        assert!(l.try_acquire(Mode::Shared), "S + S");
        assert!(!l.try_acquire(Mode::Exclusive), "S + X");
        assert!(!l.try_upgrade(), "upgrade with another reader");
        l.release(Mode::Shared);
        assert!(l.try_upgrade(), "upgrade as the sole reader");
        assert!(!l.try_acquire(Mode::Shared), "X + S");
        assert!(!l.try_acquire(Mode::Exclusive), "X + X");
        l.release(Mode::Exclusive);
        assert_eq!(l.word(), 0);
        assert!(l.try_acquire(Mode::Exclusive));
    }

    #[test]
    fn owner_lock_compatibility() {
        let l = OwnerLock::default();
        let (a, b) = (1u64 << 0, 1u64 << 5);
        assert_eq!(l.try_acquire(a, Mode::Shared), Ok(()));
        assert_eq!(l.try_acquire(b, Mode::Shared), Ok(()));
        assert_eq!(
            l.try_acquire(b, Mode::Exclusive),
            Err(a),
            "upgrade blocked by the other reader"
        );
        l.release(a, Mode::Shared);
        assert_eq!(
            l.try_acquire(b, Mode::Exclusive),
            Ok(()),
            "sole reader upgrades"
        );
        assert_eq!(l.word(), X_BIT | b);
        assert_eq!(l.try_acquire(a, Mode::Shared), Err(b));
        assert_eq!(l.try_acquire(a, Mode::Exclusive), Err(b));
        l.release(b, Mode::Exclusive);
        assert_eq!(l.try_acquire(a, Mode::Exclusive), Ok(()));
    }
}
