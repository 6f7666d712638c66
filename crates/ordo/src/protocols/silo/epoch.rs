//! The global epoch `E`: a number a background thread advances every [`EPOCH_PERIOD`].
//!
//! Workers read `E` once per commit, between locking the write set and validating (Phase 1), and put it in
//! the high bits of their commit TID. Epochs are Silo's unit of group commit, durability and garbage
//! collection; here they only order TIDs, but they are kept exactly as the paper has them so that TIDs mean
//! the same thing. Reading `E` is a load of a cache line that changes 25 times a second: no contention.

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the epoch advances (the paper's 40 ms).
pub const EPOCH_PERIOD: Duration = Duration::from_millis(40);

struct Shared {
    epoch: CachePadded<AtomicU64>,
    stop: Mutex<bool>,
    wake: Condvar,
}

/// The global epoch and the thread that advances it; dropping it stops and joins the thread.
pub struct EpochClock {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl EpochClock {
    /// Starts at epoch 1 and advances every `period`. If the thread cannot be spawned the epoch stays
    /// put, which costs nothing but TID granularity (correctness never depends on epochs advancing).
    pub fn start(period: Duration) -> Self {
        let shared = Arc::new(Shared {
            epoch: CachePadded::new(AtomicU64::new(1)),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("silo-epoch".into())
            .spawn(move || {
                let mut stop = s.stop.lock();
                while !*stop {
                    if s.wake.wait_for(&mut stop, period).timed_out() {
                        s.epoch.fetch_add(1, Ordering::Release);
                    }
                }
            })
            .ok();
        EpochClock { shared, thread }
    }

    /// The current epoch `E`.
    #[inline]
    pub fn current(&self) -> u64 {
        self.shared.epoch.load(Ordering::Acquire)
    }
}

impl Drop for EpochClock {
    fn drop(&mut self) {
        *self.shared.stop.lock() = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            // The thread only waits and increments; it cannot panic, so the join result carries nothing.
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn advances_and_stops_on_drop() {
        let c = EpochClock::start(Duration::from_millis(2));
        let e0 = c.current();
        assert!(e0 >= 1);
        let deadline = Instant::now() + Duration::from_secs(10);
        while c.current() == e0 {
            assert!(Instant::now() < deadline, "epoch never advanced");
            std::thread::sleep(Duration::from_millis(1));
        }
        let started = Instant::now();
        drop(c);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "drop joined the thread promptly"
        );
    }
}
