//! Telling an observer that the current thread is blocked inside the protocol, waiting for another
//! transaction (a lock held by someone else, a first-updater-wins wait).
//!
//! Step-by-step interleaving tools (the isolation spec runner) must know when a session's step is
//! blocked so they can move on to the next step, as PostgreSQL's isolationtester does — and they must
//! learn it from the protocol itself, not by guessing from a timeout. A protocol brackets every wait
//! with [`blocked`]:
//!
//! ```ignore
//! let waiting = ordo::txn::wait::blocked();   // observer count +1 until the guard drops
//! while !lock.try_acquire() { backoff.snooze(); waiting.round(); }
//! ```
//!
//! An observer [`observe`]s a thread by installing a [`WaitObserver`] in it; other threads read
//! [`WaitObserver::is_waiting`]. Each time the wait re-examines its condition (retries the lock,
//! re-runs deadlock detection) the protocol calls [`Blocked::round`], so an observer can tell a wait
//! that is *settled* — it re-examined its condition after everything else stopped and is still
//! blocked — from one that is about to end ([`WaitObserver::rounds`]). Every protocol that marks waits
//! must report rounds: the spec runner (`ordo-sql`) counts a blocked session as settled only after it
//! reported some rounds since the last change. On threads with no observer (every benchmark thread)
//! [`blocked`] costs one thread-local read, and it is only called on the slow path of a wait.
//!
//! **Cancel.** An observer may also ask the observed thread to give up its wait
//! ([`WaitObserver::cancel`]), as PostgreSQL's isolationtester cancels a step that can never
//! complete: a wait that can end in an abort checks [`Blocked::canceled`] every round and, when set,
//! gives up as it does on its lock-wait timeout (2PL's lock waits, the multi-version protocols'
//! first-updater waits: the waits of every protocol that runs concurrent interactive transactions).
//! The waiting thread then tells the abort of a cancel from others with [`take_cancel`]. Waits
//! that cannot end in an abort (the barriers and ticket locks of the planning protocols) ignore it.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Shared view of whether one thread is waiting inside a protocol.
#[derive(Clone, Debug, Default)]
pub struct WaitObserver(Arc<Counters>);

#[derive(Debug, Default)]
struct Counters {
    /// Open [`Blocked`] guards of the thread.
    waiting: AtomicUsize,
    /// Wait rounds the thread has reported, ever.
    rounds: AtomicU64,
    /// A cancel asked for and not yet taken ([`WaitObserver::cancel`]).
    cancel: AtomicBool,
}

impl WaitObserver {
    pub fn new() -> Self {
        Self::default()
    }
    /// Whether the observed thread is currently blocked waiting for another transaction.
    pub fn is_waiting(&self) -> bool {
        self.0.waiting.load(Ordering::SeqCst) > 0
    }
    /// How many wait rounds the observed thread has reported so far (see [`Blocked::round`]).
    pub fn rounds(&self) -> u64 {
        self.0.rounds.load(Ordering::SeqCst)
    }
    /// Asks the observed thread to give up its current (or next) wait: the protocol aborts the
    /// transaction as on a lock-wait timeout. Stays set until the thread takes it ([`take_cancel`]).
    pub fn cancel(&self) {
        self.0.cancel.store(true, Ordering::SeqCst);
    }
}

/// Takes (clears) a cancel asked for the current thread's observer: whether one was pending. The
/// waiting thread calls it after a statement fails, to tell a cancel from other aborts, and before
/// new work, so a cancel that came too late to end a wait does not end the next one.
pub fn take_cancel() -> bool {
    OBSERVER.with(|o| {
        o.borrow()
            .as_ref()
            .is_some_and(|o| o.0.cancel.swap(false, Ordering::SeqCst))
    })
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
        o.0.waiting.fetch_add(1, Ordering::SeqCst);
    }
    Blocked(obs)
}

/// While alive, the current thread counts as waiting (see [`blocked`]).
pub struct Blocked(Option<WaitObserver>);

impl Blocked {
    /// Reports one more round of the wait: the protocol re-examined what it waits for and is still
    /// blocked. Costs nothing on a thread with no observer.
    #[inline]
    pub fn round(&self) {
        if let Some(o) = &self.0 {
            o.0.rounds.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Whether the observer asked this wait to give up ([`WaitObserver::cancel`]); always false on
    /// a thread with no observer.
    #[inline]
    pub fn canceled(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|o| o.0.cancel.load(Ordering::SeqCst))
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        if let Some(o) = &self.0 {
            o.0.waiting.fetch_sub(1, Ordering::SeqCst);
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
            g.round();
            tx.send(()).unwrap();
            go_rx.recv().unwrap();
            drop(g);
        });
        rx.recv().unwrap();
        assert!(seen.is_waiting());
        assert_eq!(seen.rounds(), 1);
        // A wait on an unobserved thread changes nothing.
        let _other = blocked();
        go_tx.send(()).unwrap();
        h.join().unwrap();
        assert!(!seen.is_waiting());
    }

    #[test]
    fn a_cancel_reaches_the_wait_of_its_thread_until_taken() {
        let obs = WaitObserver::new();
        let ctl = obs.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let h = std::thread::spawn(move || {
            observe(Some(obs));
            let g = blocked();
            tx.send(()).unwrap();
            let mut rounds = 0u64;
            while !g.canceled() {
                g.round();
                rounds += 1;
                std::thread::yield_now();
            }
            drop(g);
            let taken = take_cancel();
            (rounds, taken, take_cancel(), blocked().canceled())
        });
        rx.recv().unwrap();
        ctl.cancel();
        let (_, taken, again, next_wait) = h.join().unwrap();
        assert!(taken, "the cancel is taken once");
        assert!(!again && !next_wait, "and then gone");
        // No observer: nothing to cancel.
        assert!(!blocked().canceled());
        assert!(!take_cancel());
    }
}
