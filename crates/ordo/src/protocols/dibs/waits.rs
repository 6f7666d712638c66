//! How a DIBS transaction waits when it looks for deadlocks: it says so ([`crate::txn::wait`]),
//! waits at most the engine's lock wait timeout, and breaks deadlocks by finding waits-for cycles.
//!
//! The paper resolves deadlocks by a timeout plus random jitter (§3.1), and so do transactions run
//! as programs under `--dibs-deadlock timeout` ([`super::TIMEOUT_KNOB`]). The timeout cannot tell a
//! deadlock from a long wait: too short, it aborts waits that are no deadlock (an interactive session
//! — or the spec runner, which holds a lock across steps on purpose — may keep a lock for seconds,
//! and a spec's outcome would depend on the machine's speed); too long, deadlocked workers idle
//! (under contended YCSB the 10-ms timeout left the CPUs 97% idle). §3.1 leaves the method open
//! ("the flexibility to choose the deadlock avoidance or detection method that best suits the
//! workload"): waiters publish whom they wait for in a waits-for graph ([`WaitsFor`], shared with the spec
//! runner in front of real engines), and a waiter that finds
//! itself on a cycle, and is the youngest transaction there (the one begun last; a program's
//! transaction restarted after giving up keeps its first age, so it cannot lose forever), gives
//! up — an `AbortReason::Deadlock` like the timeout's. Only waiting transactions are in the graph,
//! so a transaction pays for it only when it waits.
//!
//! Every slice of a wait ([`ROUND`], or sooner when a lock of the bucket is released) is one wait
//! round for the spec runner's observer ([`crate::txn::wait::Blocked::round`]), and a wait the
//! observer cancels ([`crate::txn::wait::Blocked::canceled`]) gives up at its next slice.

use crate::txn::wait::{blocked, Blocked};
pub use ordo_predicate::waits_for::WaitsFor;
use ordo_predicate::Config;
use std::time::Duration;

/// One slice of an interactive wait: how often a waiter looks for a cycle and reports a round.
pub const ROUND: Duration = Duration::from_micros(200);

/// The age of a program's new transaction (larger is younger): the time-stamp counter at its
/// begin, which no other worker's begin touches (ties are broken by the lock-manager id on a
/// cycle). It is far above every interactive transaction's age ([`WaitsFor::session_age`]), so on a
/// cycle with a session a program gives up, never a user's session.
pub fn age() -> u64 {
    crate::txn::source::clock().raw() | PROGRAM
}

/// The bit every program transaction's age has and no session's does.
pub const PROGRAM: u64 = 1 << 62;

/// The [`ordo_predicate::Waiter`] of one acquisition: with an age, it detects deadlocks as this
/// module says; without one, it leaves the wait to the lock manager's timeout and jitter.
pub struct Detect<'a> {
    pub graph: &'a WaitsFor,
    /// The lock-manager transaction id.
    pub me: u64,
    /// `None`: no detection (`--dibs-deadlock timeout`).
    pub age: Option<u64>,
    pub config: Config,
    /// Set when it gave up as a deadlock victim (not by its timeout).
    pub victim: bool,
    blocked: Option<Blocked>,
}

impl<'a> Detect<'a> {
    pub fn new(graph: &'a WaitsFor, me: u64, age: Option<u64>, timeout: Duration) -> Self {
        Detect {
            graph,
            me,
            age,
            config: Config {
                timeout,
                jitter: Duration::ZERO,
            },
            victim: false,
            blocked: None,
        }
    }
}

impl ordo_predicate::Waiter for Detect<'_> {
    fn config(&self) -> Option<Config> {
        self.age.map(|_| self.config)
    }

    fn slice(&self) -> Option<Duration> {
        self.age.map(|_| ROUND)
    }

    fn round(&mut self, holder: u64) -> bool {
        let Some(age) = self.age else {
            return true;
        };
        let blocked = self.blocked.get_or_insert_with(blocked);
        if self.graph.wait_for(self.me, age, holder) {
            self.victim = true;
            return false;
        }
        blocked.round();
        // The spec runner cancelling the wait (isolationtester's cancel): give up as on a timeout.
        !blocked.canceled()
    }
}

impl Drop for Detect<'_> {
    fn drop(&mut self) {
        if self.blocked.is_some() {
            self.graph.done(self.me);
        }
    }
}
