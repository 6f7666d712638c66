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
//! SCA here keeps one bit array per kind (C_x, C_s, I_x, I_s) over the counters' hashed slots, so
//! two intentions never look like a conflict (with one exclusive array for I_x every writer's
//! intention on the empty prefix would make every younger one look conflicting), as the `vllr-sca`
//! protocol's SCA does ([`crate::protocols::vll::sca::Footprint`]). Slots that collide give false
//! conflicts only.

use super::{longest_shared_prefix, KeyRange, Mode, RangeLockManager, TxnId};
use crate::protocols::vll::prefix::{conflicts, slot_of, Kind, Prefix, PrefixTable, SLOT_BITS};
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
    /// Its SCA offsets are in `VllrRangeLocks::offsets` (computed on the first pass that meets it).
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
    sca: Option<Sca>,
    /// With SCA, each transaction's counters as (slot, kind), hashed once per transaction (Fig. 4:
    /// "cache each transaction's hashed offsets"); indexed by transaction id, reused.
    offsets: Vec<Vec<(u32, Kind)>>,
}

/// SCA's bit arrays, one per counter kind, over the counters' slots.
struct Sca {
    bits: [Vec<u64>; 4],
    touched: Vec<u32>,
    /// A pass found nothing and no transaction has finished since.
    dry: bool,
}

const KINDS: [Kind; 4] = [Kind::Cx, Kind::Cs, Kind::Ix, Kind::Is];

fn kind_index(k: Kind) -> usize {
    match k {
        Kind::Cx => 0,
        Kind::Cs => 1,
        Kind::Ix => 2,
        Kind::Is => 3,
    }
}

/// The counters a lock on `p` in `mode` takes: (slot, kind) for C on `p`, I on each shorter prefix.
fn footprint(p: Prefix, mode: Mode) -> impl Iterator<Item = (u32, Kind)> {
    let (c, i) = match mode {
        Mode::Exclusive => (Kind::Cx, Kind::Ix),
        Mode::Shared => (Kind::Cs, Kind::Is),
    };
    (0..p.len)
        .map(move |len| (slot_of(TABLE, p.ancestor(len)), i))
        .chain(std::iter::once((slot_of(TABLE, p), c)))
}

impl Sca {
    fn new() -> Self {
        let words = (1usize << SLOT_BITS) / 64;
        Sca {
            bits: std::array::from_fn(|_| vec![0; words]),
            touched: Vec::new(),
            dry: false,
        }
    }
    fn test(&self, k: usize, slot: u32) -> bool {
        self.bits[k][slot as usize / 64] >> (slot % 64) & 1 == 1
    }
    fn set(&mut self, k: usize, slot: u32) {
        self.bits[k][slot as usize / 64] |= 1 << (slot % 64);
        self.touched.push(slot);
    }
    fn clear(&mut self) {
        for &s in &self.touched {
            for b in &mut self.bits {
                b[s as usize / 64] = 0;
            }
        }
        self.touched.clear();
    }
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
            sca: sca.then(Sca::new),
            offsets: Vec::new(),
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
        if let Some(s) = &mut self.sca {
            s.dry = false;
        }
    }

    fn pick_blocked(&mut self) -> Option<TxnId> {
        let sca = self.sca.as_mut().filter(|s| !s.dry)?;
        let offsets = &mut self.offsets;
        let mut found = None;
        for e in self.queue.iter_mut().filter(|e| e.state != State::Done) {
            if e.txn >= offsets.len() {
                offsets.resize_with(e.txn + 1, Vec::new);
            }
            let fp = &mut offsets[e.txn];
            if !e.hashed {
                fp.clear();
                fp.extend(footprint(e.prefix, e.mode));
                e.hashed = true;
            }
            // A running transaction only marks its counters; a blocked one is safe if none of them
            // meets a conflicting kind an older transaction marked, and marks them either way.
            let mut safe = e.state == State::Blocked;
            for &(slot, k) in fp.iter() {
                safe = safe
                    && !KINDS
                        .iter()
                        .any(|&b| conflicts(k, b) && sca.test(kind_index(b), slot));
                sca.set(kind_index(k), slot);
            }
            if safe {
                e.state = State::Running;
                found = Some(e.txn);
                break;
            }
        }
        sca.clear();
        sca.dry = found.is_none();
        found
    }

    fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.counters.is_empty()
    }
}
