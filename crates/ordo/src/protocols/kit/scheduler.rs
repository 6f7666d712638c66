//! What the lock-manager thread runs: a [`Scheduler`] grants locks to transactions in the global order.
//!
//! Implementations: Calvin's [`super::lock_manager::HashLockManager`] (also `hstore-lockmgr`'s, in
//! each partition), and deterministic VLL's `ArrayedVll` (`deterministic::calvin_vll`). They see
//! transactions only as a sequence number and a lock set; the programs stay with the worker threads
//! that will execute them.

use super::plan::LockRequest;
use crate::protocols::ProtocolConfig;
use std::collections::VecDeque;

/// A lock manager run by one thread, fed transactions in the sequencer's order.
pub trait Scheduler: Default + Send + 'static {
    /// Whether lock requests must name their row slots ([`LockRequest::rid`]).
    const NEEDS_ROWS: bool = false;

    /// Reads its knobs from the protocol's configuration (once, before the first request).
    fn configure(&mut self, _config: &ProtocolConfig) {}

    /// Transaction `seq` (higher than every earlier one) asks for `locks` (one per key).
    /// Returns whether all are granted now; may also push other transactions that became ready.
    fn request(&mut self, seq: u64, locks: Vec<LockRequest>, ready: &mut Vec<u64>) -> bool;

    /// Transaction `seq` finished: release its locks and push every transaction that became ready.
    fn release(&mut self, seq: u64, ready: &mut Vec<u64>);

    /// An empty lock list to fill and pass to [`Self::request`]: a released transaction's, when the
    /// scheduler keeps them, so that a caller on the scheduler's own thread allocates none per
    /// transaction.
    fn spare_list(&mut self) -> Vec<LockRequest> {
        Vec::new()
    }

    /// Starts loading whatever [`Self::request`] of `locks` will touch (a hint, called a few
    /// transactions ahead of the request).
    fn prefetch(&self, _locks: &[LockRequest]) {}

    /// Whether the scheduler takes another transaction now (VLL: while its TxnQueue is not full).
    /// The lock-manager thread keeps the rest, in order, until a release or [`Self::idle`] frees
    /// room.
    fn admits(&self) -> bool {
        true
    }

    /// Called when the lock-manager thread has no message to handle (VLL runs SCA here). Pushes
    /// transactions found safe to run; returns whether it did anything.
    fn idle(&mut self, _ready: &mut Vec<u64>) -> bool {
        false
    }
}

/// Transactions in flight indexed by their sequence number: a deque from the oldest one still present.
#[derive(Debug)]
pub struct SeqSlab<T> {
    base: u64,
    items: VecDeque<Option<T>>,
}

impl<T> Default for SeqSlab<T> {
    fn default() -> Self {
        SeqSlab {
            base: 0,
            items: VecDeque::new(),
        }
    }
}

impl<T> SeqSlab<T> {
    /// Adds `seq`, which must be higher than every sequence number added before.
    pub fn insert(&mut self, seq: u64, item: T) {
        if self.items.is_empty() {
            self.base = seq;
        }
        debug_assert!(seq >= self.base + self.items.len() as u64);
        while self.base + (self.items.len() as u64) < seq {
            self.items.push_back(None);
        }
        self.items.push_back(Some(item));
    }

    pub fn get(&self, seq: u64) -> Option<&T> {
        let i = seq.checked_sub(self.base)?;
        self.items.get(i as usize)?.as_ref()
    }

    pub fn get_mut(&mut self, seq: u64) -> Option<&mut T> {
        let i = seq.checked_sub(self.base)?;
        self.items.get_mut(i as usize)?.as_mut()
    }

    pub fn remove(&mut self, seq: u64) -> Option<T> {
        let i = seq.checked_sub(self.base)?;
        let item = self.items.get_mut(i as usize)?.take();
        while matches!(self.items.front(), Some(None)) {
            self.items.pop_front();
            self.base += 1;
        }
        item
    }

    /// The oldest entry present.
    pub fn front(&self) -> Option<(u64, &T)> {
        self.items
            .front()
            .and_then(|t| t.as_ref())
            .map(|t| (self.base, t))
    }

    pub fn front_mut(&mut self) -> Option<(u64, &mut T)> {
        let base = self.base;
        self.items
            .front_mut()
            .and_then(|t| t.as_mut())
            .map(|t| (base, t))
    }

    /// Entries oldest first.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u64, &mut T)> {
        let base = self.base;
        self.items
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, t)| t.as_mut().map(|t| (base + i as u64, t)))
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_keeps_order_and_drops_finished_prefixes() {
        let mut s = SeqSlab::default();
        s.insert(5, 'a');
        s.insert(7, 'c');
        s.insert(8, 'd');
        assert_eq!(s.front(), Some((5, &'a')));
        assert_eq!(s.remove(7), Some('c'));
        assert_eq!(s.remove(5), Some('a'));
        assert_eq!(s.front(), Some((8, &'d')));
        assert_eq!(s.get(7), None);
        assert_eq!(s.remove(8), Some('d'));
        assert!(s.is_empty());
        s.insert(20, 'x');
        assert_eq!(s.front(), Some((20, &'x')));
    }
}
