//! VLLR as Fig. 14 runs it: one thread, a range locked as its longest shared prefix with the four
//! counters of Fig. 5 on that prefix and intentions on every shorter one (the paper's literal scheme:
//! every prefix length, [`PrefixTable::with_step`] 1), a TxnQueue with the head rule, and optionally
//! SCA.
//!
//! ```text
//!  acquire(T, range):  p = longest shared prefix; C_x/C_s[p]++, I_x/I_s[q]++ for each q shorter
//!                      granted iff no conflicting counter is held (Fig. 5), or T is the front;
//!                      T joins the TxnQueue
//!  release(T):         the same counters --; T leaves the queue; if the new front is blocked, it runs
//!  pick_blocked():     [SCA] Fig. 4 over the queue, oldest first, with a bit array per counter kind:
//!                      a blocked T none of whose counters meets a conflicting kind's bit
//!                      (Fig. 5) set by an older transaction runs now
//! ```
//!
//! SCA is the VLL family's ([`crate::protocols::kit::sca::Sca`], as `vllr-sca` runs it): four bit
//! arrays, one per counter kind (C_x, C_s, I_x, I_s), marked at the counters' hashed slots, so two
//! intentions never look like a conflict (with one exclusive array for I_x every writer's intention
//! on the empty prefix would make every younger one look conflicting). Slots that collide give
//! false conflicts only.

use super::{longest_shared_prefix, KeyRange, Mode, RangeLockManager, TxnId};
use crate::protocols::kit::prefix::{kinds, slot_of, Kind, Prefix, PrefixTable, SLOT_BITS};
use crate::protocols::kit::sca::{Footprint, Sca, ScaCandidate};
use std::collections::VecDeque;

/// The table id the prefixes are hashed under (one key space).
const TABLE: u32 = 0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Blocked,
    Running,
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    txn: TxnId,
    prefix: Prefix,
    mode: Mode,
    state: State,
    /// Its SCA footprint is in `VllrRangeLocks::footprints` (computed on the first pass that meets
    /// it).
    hashed: bool,
}

/// See the module docs.
pub struct VllrRangeLocks {
    key_bits: u8,
    counters: PrefixTable,
    /// The TxnQueue, oldest first; finished entries leave from the front.
    queue: VecDeque<Entry>,
    /// Sequence number of `queue[0]`.
    base: u64,
    /// Each transaction's sequence number.
    seq_of: Vec<u64>,
    /// SCA's bit arrays, one bit per counter slot.
    sca: Option<Sca>,
    /// With SCA: a pass found nothing and no transaction has finished since.
    dry: bool,
    /// With SCA, each transaction's counters by kind, at their slots, computed once per transaction
    /// (Fig. 4: "cache each transaction's hashed offsets"); indexed by transaction id, reused.
    footprints: Vec<Footprint>,
}

/// The counters a lock on `p` in `mode` takes: (slot, kind) for C on `p`, I on each shorter prefix.
fn footprint(p: Prefix, mode: Mode) -> impl Iterator<Item = (u32, Kind)> {
    let (c, i) = kinds(mode);
    (0..p.len)
        .map(move |len| (slot_of(TABLE, p.ancestor(len)), i))
        .chain(std::iter::once((slot_of(TABLE, p), c)))
}

impl VllrRangeLocks {
    /// VLLR for `key_bits`-bit keys (1 to 64), with SCA if `sca`.
    pub fn new(key_bits: u8, sca: bool) -> Self {
        assert!((1..=64).contains(&key_bits), "key bits in 1..=64");
        VllrRangeLocks {
            key_bits,
            counters: PrefixTable::with_step(1),
            queue: VecDeque::new(),
            base: 0,
            seq_of: Vec::new(),
            sca: sca.then(|| Sca::with_bits(1 << SLOT_BITS)),
            dry: false,
            footprints: Vec::new(),
        }
    }

    fn entry(&mut self, txn: TxnId) -> &mut Entry {
        let i = (self.seq_of[txn] - self.base) as usize;
        let e = &mut self.queue[i];
        debug_assert_eq!(e.txn, txn);
        e
    }

    /// The queue's states, oldest first (tests).
    pub fn states(&self) -> Vec<(TxnId, bool)> {
        self.queue
            .iter()
            .filter(|e| e.state != State::Done)
            .map(|e| (e.txn, e.state == State::Blocked))
            .collect()
    }
}

impl RangeLockManager for VllrRangeLocks {
    fn name(&self) -> &'static str {
        if self.sca.is_some() {
            "vllr-sca"
        } else {
            "vllr"
        }
    }

    fn acquire(&mut self, txn: TxnId, range: KeyRange, mode: Mode) -> bool {
        let prefix = longest_shared_prefix(range, self.key_bits);
        // The head rule at once: with nothing older in the queue, only a hash collision (of two of
        // its own prefixes' slots) can have refused it, so it runs.
        let granted = self.counters.lock(TABLE, prefix, mode) | self.queue.is_empty();
        if txn >= self.seq_of.len() {
            self.seq_of.resize(txn + 1, 0);
        }
        self.seq_of[txn] = self.base + self.queue.len() as u64;
        self.queue.push_back(Entry {
            txn,
            prefix,
            mode,
            hashed: false,
            state: if granted {
                State::Running
            } else {
                State::Blocked
            },
        });
        granted
    }

    fn release(&mut self, txn: TxnId, ready: &mut Vec<TxnId>) {
        let e = self.entry(txn);
        assert_eq!(
            e.state,
            State::Running,
            "released a transaction that did not run"
        );
        e.state = State::Done;
        let (prefix, mode) = (e.prefix, e.mode);
        self.counters.unlock(TABLE, prefix, mode);
        while self.queue.front().is_some_and(|e| e.state == State::Done) {
            self.queue.pop_front();
            self.base += 1;
        }
        // The head rule: everything older has finished, so a blocked front runs.
        if let Some(front) = self.queue.front_mut() {
            if front.state == State::Blocked {
                front.state = State::Running;
                ready.push(front.txn);
            }
        }
        self.dry = false;
    }

    fn pick_blocked(&mut self) -> Option<TxnId> {
        let VllrRangeLocks {
            queue,
            sca,
            dry,
            footprints,
            ..
        } = self;
        let sca = sca.as_mut().filter(|_| !*dry)?;
        let live = |e: &Entry| e.state != State::Done;
        for e in queue.iter_mut().filter(|e| live(e) && !e.hashed) {
            if e.txn >= footprints.len() {
                footprints.resize_with(e.txn + 1, Footprint::default);
            }
            let fp = &mut footprints[e.txn];
            fp.clear();
            for (slot, kind) in footprint(e.prefix, e.mode) {
                fp.add_offset(slot, kind);
            }
            e.hashed = true;
        }
        // A running transaction only marks its counters; a blocked one is safe if none of them
        // meets a kind that conflicts with it (Fig. 5) marked by an older transaction.
        let found = sca.select(queue.iter().filter(|e| live(e)).map(|e| ScaCandidate {
            blocked: e.state == State::Blocked,
            eligible: e.state == State::Blocked,
            footprint: &footprints[e.txn],
        }));
        *dry = found.is_none();
        let e = queue.iter_mut().filter(|e| live(e)).nth(found?)?;
        e.state = State::Running;
        Some(e.txn)
    }

    fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.counters.is_empty()
    }
}
