//! Additive increase, multiplicative decrease: a bound on how much work a worker keeps queued ahead
//! of itself, for the protocols that plan a dependent transaction from a reconnaissance read and
//! validate it only when it runs.
//!
//! The deeper the queue a transaction waits in, the more likely something ahead of it changes what
//! its reconnaissance read, and a stale reconnaissance costs an abort and a resubmission. A workload
//! without dependent transactions loses nothing to depth and gains from it (the cores stay busy), a
//! workload with them wants a shallow queue. So the bound starts at its maximum, halves on every
//! stale reconnaissance (down to a floor), and grows by one for every bound's worth of transactions
//! completed: workloads that never go stale never leave the maximum, the others settle where
//! staleness is rare. Used for the deterministic pipeline's in-flight window
//! ([`crate::protocols::deterministic::new_window`]), the partitioned protocols' blocked-transaction
//! threshold ([`crate::protocols::partitioned::worker::new_blocked_limit`]), and the VLL main loop's
//! ("TxnQueue is full").

use crate::txn::AbortReason;

/// An AIMD bound between a floor and a maximum (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aimd {
    cur: usize,
    credit: usize,
    min: usize,
    max: usize,
}

impl Aimd {
    /// A bound at `max` that never leaves `min..=max` (`min` is raised to 1, and `max` to `min`).
    pub fn new(min: usize, max: usize) -> Self {
        let min = min.max(1);
        let max = max.max(min);
        Aimd {
            cur: max,
            credit: 0,
            min,
            max,
        }
    }
    /// The bound now.
    #[inline]
    pub fn size(&self) -> usize {
        self.cur
    }
    /// A reconnaissance went stale: halve (not below the floor) and start counting again.
    pub fn stale(&mut self) {
        self.cur = (self.cur / 2).max(self.min);
        self.credit = 0;
    }
    /// A transaction aborted for `reason` and will be resubmitted: a stale reconnaissance
    /// ([`AbortReason::Validation`]) halves the bound ([`Self::stale`]). Returns whether it was one.
    pub fn aborted(&mut self, reason: AbortReason) -> bool {
        let stale = reason == AbortReason::Validation;
        if stale {
            self.stale();
        }
        stale
    }
    /// A transaction completed (committed, or aborted for good): a bound's worth of them grows it
    /// by one (not above the maximum).
    #[inline]
    pub fn completed(&mut self) {
        if self.cur == self.max {
            return;
        }
        self.credit += 1;
        if self.credit >= self.cur {
            self.credit = 0;
            self.cur += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Aimd;

    #[test]
    fn halves_on_stale_down_to_the_floor_and_grows_back_by_one_per_bound_of_completions() {
        let mut a = Aimd::new(2, 64);
        assert_eq!(a.size(), 64);
        for _ in 0..1000 {
            a.completed();
        }
        assert_eq!(a.size(), 64, "never above the maximum");
        a.stale();
        assert_eq!(a.size(), 32);
        for _ in 0..10 {
            a.stale();
        }
        assert_eq!(a.size(), 2, "never below the floor");
        a.completed();
        assert_eq!(a.size(), 2);
        a.completed();
        assert_eq!(
            a.size(),
            3,
            "one more after a bound's worth (2) of completions"
        );
        // A stale one in the middle of a bound's worth resets the count.
        a.completed();
        a.stale();
        assert_eq!(a.size(), 2);
        a.completed();
        assert_eq!(a.size(), 2, "the credit was reset");
        for _ in 0..64 * 64 {
            a.completed();
        }
        assert_eq!(a.size(), 64);
    }

    #[test]
    fn only_a_stale_reconnaissance_halves_it() {
        use crate::txn::AbortReason;
        let mut a = Aimd::new(1, 8);
        for r in AbortReason::ALL {
            let stale = a.aborted(r);
            assert_eq!(stale, r == AbortReason::Validation, "{r:?}");
        }
        assert_eq!(a.size(), 4, "halved once");
    }

    #[test]
    fn degenerate_bounds_are_made_sane() {
        let mut a = Aimd::new(0, 0);
        assert_eq!(a.size(), 1);
        a.stale();
        assert_eq!(a.size(), 1);
        let b = Aimd::new(8, 4);
        assert_eq!(b.size(), 8);
    }
}
