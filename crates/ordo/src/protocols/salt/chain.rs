//! The order in which saline locks may go (§3.3 "indirect dirty reads", §3.4.3), in O(1) per lock.
//!
//! The thesis keeps, "for each saline lock a pointer to the most recent non-ACID lock on the
//! queue. Before releasing a saline lock, Salt simply checks whether the pointer points to a held
//! lock." Here every record carries two counters beside its row ([`SaltMeta`], the protocol's
//! per-record state):
//!
//! * `entered` — how many BASE operations entered the record's chain. Entering hands out a
//!   **ticket** (the old value); ticket `n`'s pointer is ticket `n − 1`, the most recent non-ACID
//!   lock before it. The record's most recent non-ACID lock is `entered − 1`.
//! * `released` — how many entries were released. Entries release in ticket order, so "ticket
//!   `n − 1` is held" is `released != n`, and "some chain entry on the record is held" (what was
//!   read may be a BASE transaction's uncommitted write) is `released != entered`.
//!
//! Who enters: every BASE write, at the operation; and a BASE read that finds the record *dirty*
//! (`released != entered`): it read what an unfinished BASE transaction wrote, or what was derived
//! from it. A BASE read of a clean record enters nothing and keeps no saline lock at read committed.
//!
//! The two release rules then read:
//! 1. **read-after-write across transactions**: an entry may go only when its predecessor has
//!    (`released == ticket`); by induction every earlier entry on the record has, the writer's
//!    among them.
//! 2. **write-after-read within a transaction**: a write entry may go only when every read entry
//!    its transaction made *before* that write has gone (the transaction's own list, in
//!    [`super::txn`]).
//!
//! Every wait points to an entry made strictly earlier (an earlier ticket on the same record, or an
//! earlier read of the same transaction), so the releases never wait in a circle.

use std::sync::atomic::{AtomicU32, Ordering};

/// Salt's per-record state: the record's chain of non-ACID lock entries.
#[derive(Debug, Default)]
pub struct SaltMeta {
    entered: AtomicU32,
    released: AtomicU32,
}

impl SaltMeta {
    /// Enters the chain: the new entry's ticket.
    #[inline]
    pub fn enter(&self) -> u32 {
        self.entered.fetch_add(1, Ordering::AcqRel)
    }

    /// Whether some entry on the record is still held (its value may come from an unfinished BASE
    /// transaction): the most recent non-ACID lock is held.
    #[inline]
    pub fn dirty(&self) -> bool {
        self.released.load(Ordering::Acquire) != self.entered.load(Ordering::Acquire)
    }

    /// Whether the entry with `ticket` may be released: its predecessor (`ticket − 1`) was.
    #[inline]
    pub fn may_release(&self, ticket: u32) -> bool {
        self.released.load(Ordering::Acquire) == ticket
    }

    /// Releases the entry with `ticket` (which [`Self::may_release`]).
    #[inline]
    pub fn release(&self, ticket: u32) {
        debug_assert!(self.may_release(ticket));
        self.released
            .store(ticket.wrapping_add(1), Ordering::Release);
    }

    /// The most recent entry's ticket, if any was ever made (tests).
    pub fn last(&self) -> Option<u32> {
        let e = self.entered.load(Ordering::Acquire);
        (e != 0).then(|| e.wrapping_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_release_in_ticket_order_and_dirtiness_follows_the_last() {
        let m = SaltMeta::default();
        assert!(!m.dirty());
        let (a, b, c) = (m.enter(), m.enter(), m.enter());
        assert_eq!((a, b, c), (0, 1, 2));
        assert!(m.dirty());
        assert!(m.may_release(a) && !m.may_release(b) && !m.may_release(c));
        m.release(a);
        assert!(m.may_release(b) && !m.may_release(c));
        m.release(b);
        m.release(c);
        assert!(!m.dirty(), "every entry gone: clean");
        assert_eq!(m.last(), Some(2));
    }
}
