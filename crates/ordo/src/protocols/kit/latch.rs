//! The partition's latch: the lock around VLL's critical section (Fig. 1's `<critical section>`).
//!
//! A spinning test-and-test-and-set lock that never puts a waiter to sleep, with exponential
//! backoff that turns into `yield` once it has spun a while ([`crossbeam_utils::Backoff`]), alone
//! on its own aligned pair of cache lines.
//!
//! **Why not a sleeping mutex.** VLL's critical section is a few hundred nanoseconds (ten counter
//! increments and a queue append), and every transaction enters it, so with many workers the latch
//! is always wanted. A mutex that parks its waiters (`parking_lot`'s, or any futex-based one) parks
//! them after a few microseconds of waiting, and from then on a release has to wake a sleeper with
//! a system call: the handoff costs more than the section, and the waiters form a convoy. On a
//! 16-core machine that made `vll` *slower* with more workers (`vll-micro` CI 0.0001, short:
//! 2.2–3.9 M transactions/s at 4 workers, 1.1–1.6 M at 8, 0.66–0.87 M at 16), where the paper's
//! design promises at worst a plateau at the section's own rate.
//!
//! **Why alone on its lines.** A waiter spins on a *read* of the latch word, i.e. on its own cached
//! copy, and every such read pulls the line back from the holder. Next to the partition's published
//! words and the queue's header (which the holder writes during the section), those reads made the
//! holder fetch its own lines back mid-section, lengthening the very section everyone waits for.
//! Measured on the same 16-core machine, interleaved, two runs each (`docs/results/vll.md`,
//! fourteenth pass): spinning beside the written fields 1.0–1.2 M at 16 workers, 1.7–2.1 M at 8;
//! spinning alone on its lines **1.9–2.0 M** at 16 and **3.4–3.5 M** at 8; at CI 0.01 and 0.1
//! (16 workers) 2.2–2.4× the parking mutex. At 2 workers on the 2-vCPU development VM the extra
//! line a section now moves cost nothing measurable (bar 1: 0.831 parking, 0.841 spinning alone,
//! 100 pairs each, alternating).
//!
//! It yields rather than spinning on when the wait goes on (the holder is probably off its core: an
//! oversubscribed machine, where spinning would only keep it off longer), and after losing a race to
//! another waiter it backs off before reading again, so a release is not answered by every waiter's
//! write at once.
//!
//! **Model-checked.** `latch_loom.rs` runs the acquire and release paths under loom (every
//! interleaving of two holders up to three preemptions, of three up to one) with the guarded value
//! in a loom cell, so a holder that could see a stale value — a `Relaxed` release or acquire — or
//! two holders at once fail the model. In that `--cfg ordo_loom` build the word is loom's atomic, which cannot
//! be built in a `const`, so [`Latch`] there is `parking_lot`'s mutex and the model drives
//! [`RawSpinLatch`]'s own `acquire`/`release` — the code the `RawMutex` impl forwards to.
use std::sync::atomic::Ordering;

#[cfg(ordo_loom)]
use loom::sync::atomic::AtomicBool;
#[cfg(not(ordo_loom))]
use std::sync::atomic::AtomicBool;

/// The raw latch (see the module docs). Use it through [`Latch`]. Aligned to 128 bytes (a pair of
/// lines, as the adjacent-line prefetcher moves them) so that nothing else shares them.
#[repr(align(128))]
pub struct RawSpinLatch {
    locked: AtomicBool,
}

#[cfg(not(ordo_loom))]
unsafe impl parking_lot::lock_api::RawMutex for RawSpinLatch {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawSpinLatch {
        locked: AtomicBool::new(false),
    };
    type GuardMarker = parking_lot::lock_api::GuardSend;

    #[inline]
    fn lock(&self) {
        self.acquire()
    }

    #[inline]
    fn try_lock(&self) -> bool {
        self.try_lock_once()
    }

    #[inline]
    unsafe fn unlock(&self) {
        self.release()
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Relaxed)
    }
}

impl RawSpinLatch {
    /// A free latch (loom builds; otherwise `RawMutex::INIT`).
    #[cfg(ordo_loom)]
    fn new() -> Self {
        RawSpinLatch {
            locked: AtomicBool::new(false),
        }
    }

    /// Takes the latch, spinning (then yielding) until it is free.
    #[inline]
    fn acquire(&self) {
        if !self.try_acquire() {
            self.lock_contended();
        }
    }

    /// One attempt, which does not write the latch's line when the latch is visibly held.
    #[inline]
    fn try_lock_once(&self) -> bool {
        !self.locked.load(Ordering::Relaxed) && self.try_acquire()
    }

    /// Frees the latch: its `Release` store orders the holder's writes before the next holder's
    /// `Acquire`.
    #[inline]
    fn release(&self) {
        self.locked.store(false, Ordering::Release);
    }

    #[inline]
    fn try_acquire(&self) -> bool {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[cold]
    fn lock_contended(&self) {
        let backoff = Backoff::new();
        loop {
            // Wait on a read: the cached copy, until the holder's release invalidates it.
            while self.locked.load(Ordering::Relaxed) {
                backoff.snooze();
            }
            if self.try_acquire() {
                return;
            }
            // Lost the race to another waiter: back off before the next read.
            backoff.spin();
        }
    }
}

/// `crossbeam`'s backoff; under loom, every wait is a yield to the model's scheduler (a spin loop
/// loom cannot see past would never end).
#[cfg(not(ordo_loom))]
use crossbeam_utils::Backoff;
#[cfg(ordo_loom)]
struct Backoff;
#[cfg(ordo_loom)]
impl Backoff {
    fn new() -> Self {
        Backoff
    }
    fn snooze(&self) {
        loom::thread::yield_now()
    }
    fn spin(&self) {
        loom::thread::yield_now()
    }
}

/// A value behind the spinning latch, with `parking_lot`'s guard API (`lock`, `try_lock`).
#[cfg(not(ordo_loom))]
pub type Latch<T> = parking_lot::lock_api::Mutex<RawSpinLatch, T>;
/// In a loom build (see the module docs), `parking_lot`'s mutex stands in.
#[cfg(ordo_loom)]
pub type Latch<T> = parking_lot::Mutex<T>;

#[cfg(all(test, ordo_loom))]
#[path = "latch_loom.rs"]
mod loom_tests;

#[cfg(all(test, not(ordo_loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_latch_excludes_and_loses_no_update_under_contention() {
        // A plain (non-atomic) read-modify-write under the latch: a second holder at once would
        // lose increments. More threads than this machine has cores, so that waiters get
        // descheduled while they spin (the yield path).
        let threads = 8;
        let per = 20_000;
        let l = Arc::new(Latch::new((0u64, false)));
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || {
                    for _ in 0..per {
                        let mut g = l.lock();
                        assert!(!g.1, "two holders at once");
                        g.1 = true;
                        let v = g.0;
                        std::hint::black_box(v);
                        g.0 = v + 1;
                        g.1 = false;
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(l.lock().0, threads * per);
    }

    #[test]
    fn try_lock_fails_while_held_and_succeeds_after() {
        let l = Latch::new(1);
        let g = l.lock();
        assert!(l.try_lock().is_none());
        assert!(l.is_locked());
        drop(g);
        assert!(!l.is_locked());
        assert_eq!(*l.try_lock().expect("free latch"), 1);
    }
}
