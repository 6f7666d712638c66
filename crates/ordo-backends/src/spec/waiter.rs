//! How a spec session waits for a DIBS lock: it reports each round of the wait to the runner
//! ([`Observer`], isolationtester's "is it blocked?"), looks for waits-for cycles on the shared
//! graph ([`ordo_predicate::waits_for`]) — the youngest transaction of a cycle gives up — and gives
//! up when the runner cancels it.

use ordo_predicate::waits_for::WaitsFor;
use ordo_predicate::{Config, Waiter};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// A DIBS lock wait, as the runner sees it from outside (isolationtester's "is it blocked?").
#[derive(Debug, Default)]
pub struct Observer {
    waiting: AtomicBool,
    rounds: AtomicU64,
    cancel: AtomicBool,
}

impl Observer {
    pub fn is_waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire)
    }
    pub fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Acquire)
    }
    /// Makes the current (or next) DIBS wait give up: the statement fails with `57014`.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Release);
    }
}

/// One slice of a DIBS wait: how often a waiter looks for a cycle and reports a round.
const ROUND: Duration = Duration::from_micros(200);

/// How a spec session's statement waits for a DIBS lock.
pub(super) struct SpecWaiter<'a> {
    pub(super) waits: &'a WaitsFor,
    pub(super) me: u64,
    pub(super) age: u64,
    pub(super) observer: &'a Observer,
    pub(super) victim: bool,
    pub(super) canceled: bool,
    pub(super) waited: bool,
}

impl Waiter for SpecWaiter<'_> {
    fn config(&self) -> Option<Config> {
        // The runner, not a timeout, decides how long a blocked step may wait.
        Some(Config {
            timeout: Duration::from_secs(3600),
            jitter: Duration::ZERO,
        })
    }

    fn slice(&self) -> Option<Duration> {
        Some(ROUND)
    }

    fn round(&mut self, holder: u64) -> bool {
        self.waited = true;
        self.observer.waiting.store(true, Ordering::Release);
        if self.waits.wait_for(self.me, self.age, holder) {
            self.victim = true;
            return false;
        }
        self.observer.rounds.fetch_add(1, Ordering::AcqRel);
        if self.observer.cancel.swap(false, Ordering::AcqRel) {
            self.canceled = true;
            return false;
        }
        true
    }
}

impl Drop for SpecWaiter<'_> {
    fn drop(&mut self) {
        if self.waited {
            self.waits.done(self.me);
            self.observer.waiting.store(false, Ordering::Release);
        }
    }
}
