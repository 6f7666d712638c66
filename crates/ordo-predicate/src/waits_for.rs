//! A waits-for graph over lock-manager transactions, for callers that detect deadlocks instead of
//! waiting out the timeout of §3.1 (which leaves the method open: "the flexibility to choose the
//! deadlock avoidance or detection method that best suits the workload").
//!
//! Only transactions that wait now are in the graph: a [`Waiter`](crate::Waiter) calls
//! [`WaitsFor::wait_for`] on each round of a wait, naming the holder it waits for, and
//! [`WaitsFor::done`] when the wait ends. The waiter that finds itself on a cycle and is its
//! youngest member (the largest age; ties broken by id) is the victim: it gives up, so exactly one
//! transaction of the cycle aborts. Ordo's `dibs` protocol and the spec runner in front of real
//! engines both use it.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// `waiter` (a [`Txn::id`](crate::Txn::id)) waits for `holder`; `age` orders the waiters' begins.
#[derive(Clone, Copy, Debug)]
struct Edge {
    waiter: u64,
    holder: u64,
    age: u64,
}

/// The waits-for graph of the transactions that wait now.
#[derive(Debug, Default)]
pub struct WaitsFor {
    edges: Mutex<Vec<Edge>>,
    sessions: AtomicU64,
}

impl WaitsFor {
    /// The age of a new interactive transaction: a count of them, so that sessions are ordered by
    /// their begins (1, 2, …; a caller that mixes in other transactions gives those larger ages).
    pub fn session_age(&self) -> u64 {
        self.sessions.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Records that `me` (of `age`) waits for `holder`, and tells whether `me` is the youngest
    /// transaction of a cycle through that edge.
    pub fn wait_for(&self, me: u64, age: u64, holder: u64) -> bool {
        let mut edges = self.edges.lock();
        match edges.iter_mut().find(|e| e.waiter == me) {
            Some(e) => e.holder = holder,
            None => edges.push(Edge {
                waiter: me,
                holder,
                age,
            }),
        }
        let mut youngest = (age, me);
        let mut cur = holder;
        for _ in 0..edges.len() {
            if cur == me {
                return youngest.1 == me;
            }
            let Some(e) = edges.iter().find(|e| e.waiter == cur) else {
                return false;
            };
            youngest = youngest.max((e.age, e.waiter));
            cur = e.holder;
        }
        cur == me && youngest.1 == me
    }

    /// `me` no longer waits.
    pub fn done(&self, me: u64) {
        let mut edges = self.edges.lock();
        if let Some(i) = edges.iter().position(|e| e.waiter == me) {
            edges.swap_remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_youngest_on_a_cycle_gives_up_and_only_it() {
        let g = WaitsFor::default();
        // 1 (age 1) waits for 2, 2 (age 2) for 3: no cycle yet.
        assert!(!g.wait_for(1, 1, 2));
        assert!(!g.wait_for(2, 2, 3));
        // 3 (age 3, the youngest) closes the cycle: it is the victim.
        assert!(g.wait_for(3, 3, 1));
        // The others see the cycle but are not the youngest.
        assert!(!g.wait_for(1, 1, 2));
        assert!(!g.wait_for(2, 2, 3));
        g.done(3);
        assert!(!g.wait_for(1, 1, 2), "the cycle is gone");
        // A cycle that does not pass through the waiter is not its business.
        let h = WaitsFor::default();
        assert!(!h.wait_for(5, 5, 6));
        assert!(
            h.wait_for(6, 6, 5),
            "6 closes a cycle with 5 and is the younger"
        );
        assert!(!h.wait_for(7, 7, 5), "7 waits on a cycle it is not part of");
    }
}
