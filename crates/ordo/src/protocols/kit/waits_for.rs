//! A waits-for graph over lock owners numbered below 64, one bitmap word per owner: each waiter
//! publishes the owners it waits for ([`super::lock_table::LockTable::poll`]'s blockers), and a
//! waiter on a cycle whose number is the highest on it gives up (`Deadlock`), so that one member
//! of each cycle — always the same one — breaks it. A lock wait then ends in microseconds
//! instead of the lock-wait timeout, which stays as a safety net (a cycle read mid-change may be
//! missed once; the search runs again every few rounds).
//!
//! Used by `sc_chopping`; `twopl`'s detectors keep their own graph, with transaction timestamps
//! to pick the youngest.

use std::sync::atomic::{AtomicU64, Ordering};

/// The most owners the graph holds (bits of a word).
pub const MAX_OWNERS: u32 = 64;

/// The graph.
pub struct WaitsFor {
    slots: Box<[AtomicU64]>,
}

impl Default for WaitsFor {
    fn default() -> Self {
        WaitsFor {
            slots: (0..MAX_OWNERS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl WaitsFor {
    /// `owner` waits for the owners in `blockers` (0: for none). Owners from 64 up are not
    /// tracked (they wait out the timeout).
    pub fn publish(&self, owner: u32, blockers: u64) {
        if let Some(s) = self.slots.get(owner as usize) {
            // SeqCst with the loads below: of two waiters closing a cycle at once, at least one
            // sees the other's edge.
            s.store(blockers, Ordering::SeqCst);
        }
    }

    /// Every owner reachable from the owners in `start` (them included).
    fn closure(&self, start: u64) -> u64 {
        let (mut seen, mut frontier) = (start, start);
        while frontier != 0 {
            let x = frontier.trailing_zeros();
            frontier &= frontier - 1;
            let next = self.slots[x as usize].load(Ordering::SeqCst) & !seen;
            seen |= next;
            frontier |= next;
        }
        seen
    }

    /// Whether `owner` is on a cycle and numbered highest of the owners on it: the one to give up.
    pub fn victim(&self, owner: u32) -> bool {
        let Some(mine) = self.slots.get(owner as usize) else {
            return false;
        };
        let me = 1u64 << owner;
        let ahead = self.closure(mine.load(Ordering::SeqCst));
        if ahead & me == 0 {
            return false;
        }
        // On the cycle: the owners reachable from me that reach me back.
        let mut higher = ahead & !((me << 1).wrapping_sub(1));
        while higher != 0 {
            let x = higher.trailing_zeros();
            higher &= higher - 1;
            if self.closure(self.slots[x as usize].load(Ordering::SeqCst)) & me != 0 {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_owner_on_a_cycle_gives_up_and_only_it() {
        let g = WaitsFor::default();
        // 1 → 4 → 2 → 1, and 7 waits for 1 (not on the cycle).
        g.publish(1, 1 << 4);
        g.publish(4, 1 << 2);
        g.publish(2, 1 << 1);
        g.publish(7, 1 << 1);
        assert_eq!(
            [1, 2, 4, 7].map(|o| g.victim(o)),
            [false, false, true, false]
        );
        // 4 gave up: no cycle left.
        g.publish(4, 0);
        assert!(![1, 2, 4, 7].iter().any(|&o| g.victim(o)));
        // A wait for nobody, an owner beyond the graph.
        assert!(!g.victim(9) && !g.victim(70));
        g.publish(70, 1);
        // Two owners waiting for each other: the higher gives up.
        g.publish(60, 1 << 63);
        g.publish(63, 1 << 60);
        assert!(g.victim(63) && !g.victim(60));
    }
}
