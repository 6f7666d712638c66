//! Telling an observer that the current thread is blocked inside the protocol, waiting for another
//! transaction (a lock held by someone else, a first-updater-wins wait).
//!
//! Step-by-step interleaving tools (the isolation spec runner) must know when a session's step is
//! blocked so they can move on to the next step, as PostgreSQL's isolationtester does — and they must
//! learn it from the protocol itself, not by guessing from a timeout. A protocol brackets every wait
//! with [`blocked`]:
//!
//! ```ignore
//! let _waiting = ordo::txn::wait::blocked();   // observer count +1 until the guard drops
//! while !lock.try_acquire() { backoff.snooze(); }
//! ```
//!
//! An observer [`observe`]s a thread by installing a [`WaitObserver`] in it; other threads read
//! [`WaitObserver::is_waiting`]. On threads with no observer (every benchmark thread) [`blocked`] costs
//! one thread-local read, and it is only called on the slow path of a wait.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Shared view of whether one thread is waiting inside a protocol.
#[derive(Clone, Debug, Default)]
pub struct WaitObserver(Arc<AtomicUsize>);

impl WaitObserver {
    pub fn new() -> Self {
        Self::default()
    }
    /// Whether the observed thread is currently blocked waiting for another transaction.
    pub fn is_waiting(&self) -> bool {
        self.0.load(Ordering::SeqCst) > 0
    }
}

thread_local! {
    static OBSERVER: RefCell<Option<WaitObserver>> = const { RefCell::new(None) };
}

/// Installs `observer` for the current thread (replacing any previous one); `None` removes it.
pub fn observe(observer: Option<WaitObserver>) {
    OBSERVER.with(|o| *o.borrow_mut() = observer);
}

/// Marks the current thread as waiting until the returned guard is dropped.
#[must_use = "the thread counts as waiting only while the guard lives"]
pub fn blocked() -> Blocked {
    let obs = OBSERVER.with(|o| o.borrow().clone());
    if let Some(o) = &obs {
        o.0.fetch_add(1, Ordering::SeqCst);
    }
    Blocked(obs)
}

/// While alive, the current thread counts as waiting (see [`blocked`]).
pub struct Blocked(Option<WaitObserver>);

impl Drop for Blocked {
    fn drop(&mut self) {
        if let Some(o) = &self.0 {
            o.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observer_sees_the_wait_of_its_thread_only() {
        let obs = WaitObserver::new();
        let seen = obs.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            observe(Some(obs));
            let g = blocked();
            tx.send(()).unwrap();
            go_rx.recv().unwrap();
            drop(g);
        });
        rx.recv().unwrap();
        assert!(seen.is_waiting());
        // A wait on an unobserved thread changes nothing.
        let _other = blocked();
        go_tx.send(()).unwrap();
        h.join().unwrap();
        assert!(!seen.is_waiting());
    }
}
