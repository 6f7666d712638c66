//! The TxnQueue: every active transaction of a partition, in the order it requested its locks (§2.1).
//!
//! `BeginTransaction` appends a transaction (free or blocked) inside the same critical section that
//! requested its locks, so queue order is lock-request order. `FinishTransaction` removes it from
//! wherever it is ("not, strictly speaking, a queue", footnote 1). Two facts make VLL work:
//! * **the head rule** — the front transaction can always run, whatever the counters say: everyone who
//!   requested locks before it has finished, and everyone after it that conflicts is blocked;
//! * **admission control** — new transactions are admitted only while the number of *blocked* ones is
//!   under a threshold ("TxnQueue is not full"), which adapts to contention by itself.
//!
//! This queue is a plain data structure, generic over the per-transaction `payload` (what the caller
//! needs back: lock requests, an owner, a program), with no locking and no threads of its own: callers
//! hold their partition's critical section around it (VLL), or own it from one thread (a deterministic
//! scheduler). Entries are named by a sequence number ([`Seq`]) handed out at enqueue; removal is
//! O(1) (the slot is emptied and empty slots are popped from the front).
//!
//! A blocked entry becomes runnable by being **claimed** ([`TxnQueue::claim`]: Blocked → Running, the
//! paper's `T.Type = Free`), which succeeds once, so no transaction ever runs twice.

use super::sca::{Footprint, Sca, ScaCandidate};
use std::collections::VecDeque;

/// Position of a transaction in its TxnQueue (increasing in enqueue order).
pub type Seq = u64;

/// The type of a queued transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnState {
    /// Got every lock at once; running.
    Free,
    /// Missed at least one lock; waits to be unblocked (head rule or SCA).
    Blocked,
    /// Was blocked and has been claimed to run.
    Running,
}

struct Slot<T> {
    state: TxnState,
    payload: T,
    /// SCA's cached hashed offsets, boxed so that a slot stays small (every critical section writes
    /// one; a small slot shares its cache line with fewer neighbours) and recycled through `spare`.
    footprint: Option<Box<Footprint>>,
}

/// A partition's TxnQueue.
pub struct TxnQueue<T> {
    slots: VecDeque<Option<Slot<T>>>,
    /// Sequence number of `slots[0]`.
    base: Seq,
    live: usize,
    blocked: usize,
    /// Footprints of removed transactions, for reuse (no allocation per SCA'd transaction). The
    /// boxes themselves are what is recycled, so they stay boxed here.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Footprint>>,
}

impl<T> Default for TxnQueue<T> {
    fn default() -> Self {
        TxnQueue {
            slots: VecDeque::new(),
            base: 0,
            live: 0,
            blocked: 0,
            spare: Vec::new(),
        }
    }
}

impl<T> TxnQueue<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// `TxnQueue.Enqueue(T)`: appends a transaction, free or blocked.
    pub fn enqueue(&mut self, payload: T, blocked: bool) -> Seq {
        let seq = self.base + self.slots.len() as Seq;
        self.slots.push_back(Some(Slot {
            state: if blocked {
                TxnState::Blocked
            } else {
                TxnState::Free
            },
            payload,
            footprint: None,
        }));
        self.live += 1;
        self.blocked += blocked as usize;
        seq
    }

    fn slot(&self, seq: Seq) -> Option<&Slot<T>> {
        let i = seq.checked_sub(self.base)?;
        self.slots.get(i as usize)?.as_ref()
    }

    /// `TxnQueue.Remove(T)`: takes transaction `seq` out (from anywhere) and returns its payload.
    pub fn remove(&mut self, seq: Seq) -> Option<T> {
        let i = seq.checked_sub(self.base)? as usize;
        let mut slot = self.slots.get_mut(i)?.take()?;
        self.recycle(slot.footprint.take());
        self.live -= 1;
        if slot.state == TxnState::Blocked {
            self.blocked -= 1;
        }
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        Some(slot.payload)
    }

    fn recycle(&mut self, fp: Option<Box<Footprint>>) {
        if let Some(mut fp) = fp {
            if self.spare.len() < 64 {
                fp.reads.clear();
                fp.writes.clear();
                self.spare.push(fp);
            }
        }
    }

    /// The oldest transaction still in the queue.
    pub fn front(&self) -> Option<Seq> {
        self.slots.front().map(|_| self.base)
    }

    /// The state of transaction `seq`.
    pub fn state(&self, seq: Seq) -> Option<TxnState> {
        self.slot(seq).map(|s| s.state)
    }

    /// The payload of transaction `seq`.
    pub fn payload(&self, seq: Seq) -> Option<&T> {
        self.slot(seq).map(|s| &s.payload)
    }

    /// Mutable payload; drops the cached SCA footprint (the payload's keys may change).
    pub fn payload_mut(&mut self, seq: Seq) -> Option<&mut T> {
        let i = seq.checked_sub(self.base)? as usize;
        let fp = self.slots.get_mut(i)?.as_mut()?.footprint.take();
        self.recycle(fp);
        self.slots
            .get_mut(i)
            .and_then(|s| s.as_mut())
            .map(|s| &mut s.payload)
    }

    /// Unblocks transaction `seq` (Blocked → Running). `true` exactly once per blocked transaction.
    pub fn claim(&mut self, seq: Seq) -> bool {
        let Some(i) = seq.checked_sub(self.base) else {
            return false;
        };
        match self.slots.get_mut(i as usize) {
            Some(Some(s)) if s.state == TxnState::Blocked => {
                s.state = TxnState::Running;
                self.blocked -= 1;
                true
            }
            _ => false,
        }
    }

    /// Transactions in the queue.
    pub fn len(&self) -> usize {
        self.live
    }
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    /// Blocked transactions in the queue (what admission control compares with its threshold).
    pub fn blocked(&self) -> usize {
        self.blocked
    }

    /// Live transactions, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (Seq, TxnState, &T)> {
        let base = self.base;
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, s)| s.as_ref().map(|s| (base + i as Seq, s.state, &s.payload)))
    }

    /// Runs SCA (Fig. 4) over the queue, oldest first, and returns the oldest blocked transaction that
    /// conflicts with no older one and that `eligible` accepts (a caller that can only run some
    /// transactions, e.g. its own, still lets the others mark their keys). `keys` lists a payload's
    /// lock ids and whether each is exclusive; it is called once per transaction, the first time SCA
    /// sees it — the hashed offsets are cached in the queue (§2.6's optimization).
    pub fn sca(
        &mut self,
        sca: &mut Sca,
        mut eligible: impl FnMut(&T) -> bool,
        mut keys: impl FnMut(&T, &mut dyn FnMut(u64, bool)),
    ) -> Option<Seq> {
        for s in self.slots.iter_mut().flatten() {
            if s.footprint.is_none() {
                let mut fp = self.spare.pop().unwrap_or_default();
                keys(&s.payload, &mut |id, x| fp.add(sca, id, x));
                s.footprint = Some(fp);
            }
        }
        let base = self.base;
        let candidates = self.slots.iter().flatten().map(|s| ScaCandidate {
            blocked: s.state == TxnState::Blocked,
            eligible: s.state == TxnState::Blocked && eligible(&s.payload),
            footprint: s.footprint.as_ref().expect("footprint computed above"),
        });
        let i = sca.select(candidates)?;
        // `i` counts live slots; map it back to a sequence number.
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_some())
            .nth(i)
            .map(|(j, _)| base + j as Seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removal_from_anywhere_and_the_front() {
        let mut q = TxnQueue::new();
        let a = q.enqueue('a', false);
        let b = q.enqueue('b', true);
        let c = q.enqueue('c', true);
        assert_eq!((q.len(), q.blocked(), q.front()), (3, 2, Some(a)));
        assert_eq!(q.remove(b), Some('b'), "removed from the middle");
        assert_eq!((q.len(), q.blocked(), q.front()), (2, 1, Some(a)));
        assert_eq!(q.remove(b), None, "never twice");
        assert_eq!(q.remove(a), Some('a'));
        assert_eq!(q.front(), Some(c), "empty slots are skipped");
        assert!(q.claim(c));
        assert!(!q.claim(c), "a blocked transaction is claimed once");
        assert_eq!((q.blocked(), q.state(c)), (0, Some(TxnState::Running)));
        q.remove(c);
        assert!(q.is_empty() && q.front().is_none());
        let d = q.enqueue('d', false);
        assert_eq!(d, c + 1, "sequence numbers keep increasing");
    }
}
