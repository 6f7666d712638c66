//! The standard range lock manager of Fig. 14: exact key ranges mapped to lock-request queues in a
//! sorted map, fragmented where ranges partially overlap.
//!
//! The map holds disjoint **fragments** `[start, end]`, each with a FIFO queue of requests. Locking
//! `[lo, hi]` first splits the fragments that straddle `lo` or `hi + 1` (each half keeps a copy of
//! the queue, so a transaction waiting in the old fragment now waits in both — "the number of lock
//! queues that a transaction's requests are in may increase over time without the transaction
//! requesting new locks"), fills the gaps with fresh fragments, and appends the request to every
//! fragment in `[lo, hi]`. A request is granted when it is compatible with every request ahead of it
//! in its queue; a transaction runs when all of its requests are granted. Releasing removes the
//! transaction's request from each fragment of its range, grants what became grantable, and drops
//! fragments left empty (fragments are never merged back).
//!
//! ```text
//!  T1 locks [10, 19]:  [10,19]: T1
//!  T2 locks [15, 24]:  [10,14]: T1   [15,19]: T1 T2(waits)   [20,24]: T2
//!  T1 releases:        [15,19]: T2   [20,24]: T2             → T2 runs
//! ```
//!
//! Requests are appended in admission order by one thread, so every queue orders any two
//! transactions alike: no deadlock.

use super::{KeyRange, Mode, RangeLockManager, TxnId};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug)]
struct Request {
    txn: TxnId,
    mode: Mode,
    granted: bool,
}

#[derive(Clone, Debug)]
struct Fragment {
    /// Inclusive.
    end: u64,
    queue: Vec<Request>,
}

/// What the manager keeps per transaction.
#[derive(Clone, Copy, Debug, Default)]
struct Txn {
    range: Option<KeyRange>,
    /// Fragments where its request is not granted yet.
    waiting: usize,
}

/// See the module docs.
#[derive(Default)]
pub struct StandardRangeLocks {
    fragments: BTreeMap<u64, Fragment>,
    txns: Vec<Txn>,
    /// Scratch: fragment starts.
    starts: Vec<u64>,
}

fn compatible(a: Mode, b: Mode) -> bool {
    a == Mode::Shared && b == Mode::Shared
}

/// Grants, front to back, every request compatible with all requests ahead of it (FIFO: the first,
/// and shared ones behind shared ones); a transaction granted its last request goes to `ready`.
fn grant_in_order(queue: &mut [Request], txns: &mut [Txn], ready: &mut Vec<TxnId>) {
    for (i, r) in queue.iter_mut().enumerate() {
        if i > 0 && r.mode == Mode::Exclusive {
            break;
        }
        if !r.granted {
            r.granted = true;
            let t = &mut txns[r.txn];
            t.waiting -= 1;
            if t.waiting == 0 {
                ready.push(r.txn);
            }
        }
        if r.mode == Mode::Exclusive {
            break;
        }
    }
}

impl StandardRangeLocks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Fragments in the map (tests, diagnostics).
    pub fn fragments(&self) -> usize {
        self.fragments.len()
    }

    fn txn(&mut self, t: TxnId) -> &mut Txn {
        if t >= self.txns.len() {
            self.txns.resize(t + 1, Txn::default());
        }
        &mut self.txns[t]
    }

    /// Splits the fragment that contains `k` (if it starts before `k`) into `[start, k - 1]` and
    /// `[k, end]`; every waiting request is now waiting in one more fragment.
    fn split_at(&mut self, k: u64) {
        let Some((_, f)) = self.fragments.range_mut(..k).next_back() else {
            return;
        };
        if f.end < k {
            return;
        }
        let upper = Fragment {
            end: f.end,
            queue: f.queue.clone(),
        };
        f.end = k - 1;
        for r in &upper.queue {
            if !r.granted {
                self.txns[r.txn].waiting += 1;
            }
        }
        self.fragments.insert(k, upper);
    }
}

impl RangeLockManager for StandardRangeLocks {
    fn name(&self) -> &'static str {
        "standard"
    }

    fn acquire(&mut self, txn: TxnId, range: KeyRange, mode: Mode) -> bool {
        debug_assert!(range.lo <= range.hi);
        *self.txn(txn) = Txn {
            range: Some(range),
            waiting: 0,
        };
        self.split_at(range.lo);
        if let Some(after) = range.hi.checked_add(1) {
            self.split_at(after);
        }
        // Gaps between the fragments already in [lo, hi] become fragments of their own.
        self.starts.clear();
        self.starts
            .extend(self.fragments.range(range.lo..=range.hi).map(|(s, _)| *s));
        let mut cursor = Some(range.lo);
        for i in 0..self.starts.len() {
            let s = self.starts[i];
            if let Some(c) = cursor.filter(|&c| c < s) {
                self.fragments.insert(
                    c,
                    Fragment {
                        end: s - 1,
                        queue: Vec::new(),
                    },
                );
            }
            cursor = self.fragments[&s].end.checked_add(1);
        }
        if let Some(c) = cursor.filter(|&c| c <= range.hi) {
            self.fragments.insert(
                c,
                Fragment {
                    end: range.hi,
                    queue: Vec::new(),
                },
            );
        }
        let mut waiting = 0;
        for f in self
            .fragments
            .range_mut(range.lo..=range.hi)
            .map(|(_, f)| f)
        {
            let granted = f.queue.iter().all(|r| compatible(r.mode, mode));
            waiting += !granted as usize;
            f.queue.push(Request { txn, mode, granted });
        }
        self.txns[txn].waiting = waiting;
        waiting == 0
    }

    fn release(&mut self, txn: TxnId, ready: &mut Vec<TxnId>) {
        let range = self.txns[txn]
            .range
            .take()
            .expect("releasing a transaction that holds no range");
        debug_assert_eq!(self.txns[txn].waiting, 0, "released before it ran");
        self.starts.clear();
        for (&start, f) in self.fragments.range_mut(range.lo..=range.hi) {
            let i = f
                .queue
                .iter()
                .position(|r| r.txn == txn)
                .expect("a fragment of the range lacks the transaction's request");
            f.queue.remove(i);
            grant_in_order(&mut f.queue, &mut self.txns, ready);
            if f.queue.is_empty() {
                self.starts.push(start);
            }
        }
        for s in &self.starts {
            self.fragments.remove(s);
        }
    }

    fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }
}
