//! The board of live transactions: one slot per worker, holding what other transactions ask about
//! the one transaction that worker runs — its state, how far it has got, and whom it waits for.
//!
//! A worker runs one transaction at a time, so a transaction id (`(worker + 1) << 40 | sequence`)
//! names its slot, and the slot's one **word** says everything a dependent polls:
//!
//! ```text
//!  bits 24..64  sequence     the transaction the slot holds now (an older one is "gone")
//!  bits  2..24  progress     how far it has got (IC3: pieces finished; Callas: ranks passed)
//!  bits  0..2   status       running · committed · aborting (undoing) · aborted (undone)
//! ```
//!
//! **Waits and cycles.** A transaction waits for another (its piece wait, its commit wait) through
//! [`Board::wait`], which publishes the awaited id in the slot's `waits_on`. A waiter waits for one
//! transaction at a time, so the waits-for graph has at most one edge out of each transaction, and
//! a cycle is found by following `waits_on` from the awaited transaction; the largest id on the
//! cycle gives way (aborts with `Deadlock`), so one member breaks it. The walk reads the slots
//! without a snapshot: a stale read can only show a cycle that just dissolved (a needless abort),
//! and a real cycle stays put until someone on it sees it.

use crate::check::TxnId;
use crate::txn::{wait, AbortReason};
use crossbeam_utils::{Backoff, CachePadded};
use std::sync::atomic::{AtomicU64, Ordering};

const SEQ_SHIFT: u32 = 24;
const PROGRESS_SHIFT: u32 = 2;
const PROGRESS_MASK: u64 = (1 << 22) - 1;
const STATUS_MASK: u64 = 3;

const RUNNING: u64 = 0;
const COMMITTED: u64 = 1;
const ABORTING: u64 = 2;
const ABORTED: u64 = 3;

/// What a transaction is, seen from another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Running, with this many pieces finished.
    Running(u32),
    Committed,
    /// Aborted and still undoing its writes.
    Aborting,
    /// Aborted and undone.
    Aborted,
    /// Ended: its worker has gone on to another transaction (or the id was never on the board).
    Gone,
}

impl State {
    /// Aborted (undone or not).
    pub fn aborted(self) -> bool {
        matches!(self, State::Aborting | State::Aborted)
    }
}

/// The worker whose slot holds `id`.
#[inline]
pub fn worker_of(id: TxnId) -> usize {
    (id >> 40).wrapping_sub(1) as usize
}

#[inline]
fn seq_of(id: TxnId) -> u64 {
    id & ((1 << 40) - 1)
}

#[derive(Debug, Default)]
struct Slot {
    word: AtomicU64,
    /// The id this slot's transaction waits for now (0: none).
    waits_on: AtomicU64,
}

/// The board (see the module docs).
#[derive(Debug)]
pub struct Board {
    slots: Box<[CachePadded<Slot>]>,
}

impl Board {
    /// A board for workers `0..workers`.
    pub fn new(workers: usize) -> Self {
        Board {
            slots: (0..workers).map(|_| CachePadded::default()).collect(),
        }
    }

    fn slot(&self, id: TxnId) -> &Slot {
        &self.slots[worker_of(id)]
    }

    /// Whether the slot of `id` still holds it (its worker has not gone on to another).
    #[inline]
    pub fn holds(&self, id: TxnId) -> bool {
        self.slots
            .get(worker_of(id))
            .is_some_and(|s| s.word.load(Ordering::Acquire) >> SEQ_SHIFT == seq_of(id))
    }

    /// Puts transaction `id` on its worker's slot, running, with no progress.
    pub fn begin(&self, id: TxnId) {
        let s = self.slot(id);
        s.waits_on.store(0, Ordering::Relaxed);
        s.word
            .store(seq_of(id) << SEQ_SHIFT | RUNNING, Ordering::Release);
    }

    /// The state of `id`.
    #[inline]
    pub fn state(&self, id: TxnId) -> State {
        let Some(s) = self.slots.get(worker_of(id)) else {
            return State::Gone;
        };
        let w = s.word.load(Ordering::Acquire);
        if w >> SEQ_SHIFT != seq_of(id) {
            return State::Gone;
        }
        match w & STATUS_MASK {
            RUNNING => State::Running(((w >> PROGRESS_SHIFT) & PROGRESS_MASK) as u32),
            COMMITTED => State::Committed,
            ABORTING => State::Aborting,
            _ => State::Aborted,
        }
    }

    fn set_status(&self, id: TxnId, status: u64) {
        let s = self.slot(id);
        let w = s.word.load(Ordering::Relaxed);
        debug_assert_eq!(
            w >> SEQ_SHIFT,
            seq_of(id),
            "only the owner changes its slot"
        );
        s.word.store((w & !STATUS_MASK) | status, Ordering::Release);
    }

    /// `id` got one step further (IC3: finished one more piece).
    pub fn advance(&self, id: TxnId) {
        self.slot(id)
            .word
            .fetch_add(1 << PROGRESS_SHIFT, Ordering::Release);
    }

    /// `id` got as far as `progress` (never backwards; at most 2^22 - 1).
    pub fn set_progress(&self, id: TxnId, progress: u32) {
        let s = self.slot(id);
        let w = s.word.load(Ordering::Relaxed);
        debug_assert!(((w >> PROGRESS_SHIFT) & PROGRESS_MASK) as u32 <= progress);
        let p = (progress as u64).min(PROGRESS_MASK) << PROGRESS_SHIFT;
        s.word.store(
            (w & !(PROGRESS_MASK << PROGRESS_SHIFT)) | p,
            Ordering::Release,
        );
    }
    /// `id` committed (its writes are final; dependents may commit).
    pub fn committed(&self, id: TxnId) {
        self.set_status(id, COMMITTED);
    }
    /// `id` aborts: dependents that saw its writes must abort, newcomers wait for its undo.
    pub fn aborting(&self, id: TxnId) {
        self.set_status(id, ABORTING);
    }
    /// `id` has undone every write and left every access list.
    pub fn aborted(&self, id: TxnId) {
        self.set_status(id, ABORTED);
    }

    /// Waits, as `me`, for `on` until `ready` holds; every few rounds gives up with what `doomed`
    /// says (a dependency that aborted), or with `Deadlock` when `me` closes a cycle of waits and
    /// has the largest id on it.
    pub fn wait(
        &self,
        me: TxnId,
        on: TxnId,
        mut ready: impl FnMut(&Board) -> bool,
        mut doomed: impl FnMut(&Board) -> Option<AbortReason>,
    ) -> Result<(), AbortReason> {
        if ready(self) {
            return Ok(());
        }
        let slot = self.slot(me);
        slot.waits_on.store(on, Ordering::SeqCst);
        let waiting = wait::blocked();
        let backoff = Backoff::new();
        let mut rounds = 0u32;
        let out = loop {
            backoff.snooze();
            waiting.round();
            rounds = rounds.wrapping_add(1);
            if ready(self) {
                break Ok(());
            }
            if rounds.is_multiple_of(8) {
                if let Some(r) = doomed(self) {
                    break Err(r);
                }
                if self.victim(me, on) {
                    break Err(AbortReason::Deadlock);
                }
            }
        };
        slot.waits_on.store(0, Ordering::SeqCst);
        out
    }

    /// Whether `me`, waiting for `on`, closes a cycle of waits on which it has the largest id.
    fn victim(&self, me: TxnId, on: TxnId) -> bool {
        let mut cur = on;
        let mut largest = me;
        for _ in 0..=self.slots.len() {
            if cur == me {
                return largest == me;
            }
            if !matches!(self.state(cur), State::Running(_)) {
                return false;
            }
            largest = largest.max(cur);
            cur = self.slot(cur).waits_on.load(Ordering::SeqCst);
            if cur == 0 {
                return false;
            }
        }
        false
    }
}
