//! A spin lock for the few-instruction critical sections of this store (a transaction record's
//! conflict lists, a worker's retained queue, a record latch, SSI's markConflict/commit latch).
//!
//! `parking_lot`'s mutex releases with a compare-and-swap (it must see whether a waiter parked); a
//! locked instruction also waits for every earlier store of the thread to reach the cache, so on the
//! commit path — right after the stores that install a transaction's writes to shared lines — each
//! unlock paid for those misses. This lock is released with a plain `Release` store; a waiter spins
//! briefly, then yields its time slice (nobody holds one of these across a wait, so a holder is only
//! ever delayed by preemption).

use parking_lot::lock_api::{self, GuardSend};
use std::sync::atomic::{AtomicBool, Ordering};

/// The raw lock: one flag.
#[derive(Debug)]
pub struct RawSpin(AtomicBool);

// SAFETY: `lock` and `try_lock` succeed only by switching the flag from false to true with an
// `Acquire` compare-and-swap, and `unlock` stores false with `Release`: mutual exclusion, and every
// access in a critical section happens before the next holder's.
unsafe impl lock_api::RawMutex for RawSpin {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawSpin = RawSpin(AtomicBool::new(false));
    type GuardMarker = GuardSend;

    #[inline]
    fn lock(&self) {
        if self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        self.lock_contended();
    }

    #[inline]
    fn try_lock(&self) -> bool {
        !self.0.load(Ordering::Relaxed)
            && self
                .0
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    #[inline]
    unsafe fn unlock(&self) {
        self.0.store(false, Ordering::Release);
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl RawSpin {
    #[cold]
    fn lock_contended(&self) {
        let mut spins = 0u32;
        loop {
            while self.0.load(Ordering::Relaxed) {
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            if self
                .0
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

/// A mutex on [`RawSpin`] (the `parking_lot` API: `lock`, `try_lock`, guards).
pub type SpinMutex<T> = lock_api::Mutex<RawSpin, T>;
/// Its guard.
pub type SpinGuard<'a, T> = lock_api::MutexGuard<'a, RawSpin, T>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Four threads increment a plain counter under the lock (half through `try_lock`): no
    /// increment is lost.
    #[test]
    fn excludes() {
        let m = SpinMutex::new(0u64);
        std::thread::scope(|s| {
            for t in 0..4 {
                let m = &m;
                s.spawn(move || {
                    for _ in 0..20_000 {
                        if t % 2 == 0 {
                            *m.lock() += 1;
                        } else {
                            loop {
                                if let Some(mut g) = m.try_lock() {
                                    *g += 1;
                                    break;
                                }
                                std::hint::spin_loop();
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(m.into_inner(), 80_000);
    }

    /// Many more threads than cores, and holders that lose their core inside the critical section
    /// (a yield while holding): waiters must yield rather than spin the holder off the machine, and
    /// every increment still lands.
    #[test]
    fn oversubscribed_with_descheduled_holders() {
        let m = SpinMutex::new(0u64);
        std::thread::scope(|s| {
            for _ in 0..32 {
                let m = &m;
                s.spawn(move || {
                    for i in 0..2_000 {
                        let mut g = m.lock();
                        *g += 1;
                        if i % 100 == 0 {
                            std::thread::yield_now();
                        }
                    }
                });
            }
        });
        assert_eq!(m.into_inner(), 64_000);
    }
}
