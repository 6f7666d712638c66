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
//! scheduler). Entries are named by a sequence number ([`Seq`]) handed out at enqueue. Removal finds
//! the entry directly (in a one-lane queue, or at its lane's front) or by binary search in its lane;
//! the lane's front is popped, an entry behind it leaves a hole, popped once it reaches the front.
//!
//! A blocked entry becomes runnable by being **claimed** ([`TxnQueue::claim`]: Blocked → Running, the
//! paper's `T.Type = Free`), which succeeds once, so no transaction ever runs twice.
//!
//! **Lanes.** Under multi-threaded VLL every worker's critical section appends and removes entries.
//! Kept in one ring, the slots a section writes were last written by the other workers' sections,
//! so each section pulled several of the ring's cache lines over from other cores besides the
//! latch's own. The queue is therefore stored in **lanes** ([`TxnQueue::with_lanes`]): an entry
//! goes into its owner's lane ([`TxnQueue::enqueue_in`]; a worker's lane is its id modulo the lane
//! count), so a worker's sections write only its own lane's lines. It is still one queue: one counter
//! hands out the sequence numbers inside the critical section, each lane is in sequence order by
//! construction, the front is the least of the lanes' first entries (kept in the header beside the
//! counts, `heads`), and a scan oldest first (SCA, [`TxnQueue::iter`]) merges the lanes by sequence
//! number. A sequence number names its lane in its low bits. A queue owned by one thread (a
//! deterministic scheduler, single-threaded VLL) has one lane, and is the plain queue.

use super::prefix::Kind;
use super::sca::{Footprint, Sca, ScaCandidate};
use crossbeam_utils::CachePadded;
use std::collections::VecDeque;

/// Position of a transaction in its TxnQueue (increasing in enqueue order; the low bits name the
/// transaction's lane).
pub type Seq = u64;

/// The most lanes a queue has (see the module docs): workers beyond this share lanes, which costs
/// only the cache-line traffic the lanes exist to avoid.
pub const MAX_LANES: usize = 8;

/// `heads[l]` of an empty lane: greater than every sequence number, so the front is a plain minimum.
const EMPTY: Seq = Seq::MAX;

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

/// An entry of a lane: a transaction, or the hole it left (removed from behind the lane's front;
/// holes are dropped once they reach the front).
struct Entry<T> {
    seq: Seq,
    slot: Option<Slot<T>>,
}

/// A partition's TxnQueue.
///
/// `repr(C)`: the fields every critical section writes (the counter, the counts, the lanes' first
/// sequence numbers) come first, then those it only reads, so that a partition can keep the
/// written ones in its latch's cache lines (`vll::partition`).
#[repr(C)]
pub struct TxnQueue<T> {
    /// Transactions enqueued so far (the next sequence number, before its lane bits).
    next: u64,
    live: usize,
    blocked: usize,
    /// The first live sequence number of each lane ([`EMPTY`] if none): the front is their least.
    heads: [Seq; MAX_LANES],
    /// `log2` of the lane count.
    shift: u32,
    /// Each on cache lines of its own.
    lanes: Box<[CachePadded<VecDeque<Entry<T>>>]>,
    /// Footprints of removed transactions, for reuse (no allocation per SCA'd transaction). The
    /// boxes themselves are what is recycled, so they stay boxed here.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Footprint>>,
}

impl<T> Default for TxnQueue<T> {
    fn default() -> Self {
        Self::with_lanes(1)
    }
}

impl<T> TxnQueue<T> {
    /// Bytes at the start of the queue that its operations write: the counter, the counts and the
    /// lane heads. Of the rest, the lane count and the lanes' address never change, and the spare
    /// footprints change only with SCA.
    pub const WRITTEN_HEADER: usize = std::mem::offset_of!(TxnQueue<T>, shift);

    /// A queue of one lane (for a single thread).
    pub fn new() -> Self {
        Self::default()
    }

    /// A queue of `lanes` lanes (a power of two, at most [`MAX_LANES`]), for several threads that
    /// each enqueue into their own ([`Self::enqueue_in`]).
    pub fn with_lanes(lanes: usize) -> Self {
        assert!(
            lanes.is_power_of_two() && lanes <= MAX_LANES,
            "a TxnQueue has a power of two lanes, at most {MAX_LANES}: {lanes}"
        );
        TxnQueue {
            next: 0,
            live: 0,
            blocked: 0,
            heads: [EMPTY; MAX_LANES],
            shift: lanes.trailing_zeros(),
            lanes: (0..lanes)
                .map(|_| CachePadded::new(VecDeque::new()))
                .collect(),
            spare: Vec::new(),
        }
    }

    /// The lane bits of a sequence number (the lane count less one).
    #[inline]
    fn lane_mask(&self) -> u64 {
        (1 << self.shift) - 1
    }

    /// The lane that `owner`'s transactions go into.
    #[inline]
    pub fn lane_of(&self, owner: u32) -> usize {
        (owner as u64 & self.lane_mask()) as usize
    }

    /// `TxnQueue.Enqueue(T)`: appends a transaction, free or blocked (into the first lane).
    pub fn enqueue(&mut self, payload: T, blocked: bool) -> Seq {
        self.enqueue_in(0, payload, blocked)
    }

    /// The lane of transaction `seq`.
    #[inline]
    pub fn lane_of_seq(&self, seq: Seq) -> usize {
        (seq & self.lane_mask()) as usize
    }

    /// [`Self::enqueue`] into the lane of `owner` ([`Self::lane_of`]).
    #[inline]
    pub fn enqueue_in(&mut self, owner: u32, payload: T, blocked: bool) -> Seq {
        let lane = self.lane_of(owner);
        let seq = (self.next << self.shift) | lane as Seq;
        self.next += 1;
        self.lanes[lane].push_back(Entry {
            seq,
            slot: Some(Slot {
                state: if blocked {
                    TxnState::Blocked
                } else {
                    TxnState::Free
                },
                payload,
                footprint: None,
            }),
        });
        if self.heads[lane] == EMPTY {
            self.heads[lane] = seq;
        }
        self.live += 1;
        self.blocked += blocked as usize;
        seq
    }

    /// Where transaction `seq`'s entry is: its lane, and its index there.
    #[inline]
    fn locate(&self, seq: Seq) -> Option<(usize, usize)> {
        let lane = self.lane_of_seq(seq);
        let entries = &self.lanes[lane];
        let first = entries.front()?.seq;
        let i = if self.shift == 0 {
            // One lane holds every sequence number from its first on.
            usize::try_from(seq.checked_sub(first)?).ok()?
        } else if seq == first {
            // A worker finishes its transactions mostly oldest first.
            0
        } else {
            entries.binary_search_by_key(&seq, |e| e.seq).ok()?
        };
        Some((lane, i))
    }

    fn slot(&self, seq: Seq) -> Option<&Slot<T>> {
        let (lane, i) = self.locate(seq)?;
        self.lanes[lane].get(i)?.slot.as_ref()
    }

    fn slot_mut(&mut self, seq: Seq) -> Option<&mut Slot<T>> {
        let (lane, i) = self.locate(seq)?;
        self.lanes[lane].get_mut(i)?.slot.as_mut()
    }

    /// The payload of transaction `seq`, to change it.
    pub fn payload_mut(&mut self, seq: Seq) -> Option<&mut T> {
        self.slot_mut(seq).map(|s| &mut s.payload)
    }

    /// `TxnQueue.Remove(T)`: takes transaction `seq` out (from anywhere) and returns its payload.
    #[inline]
    pub fn remove(&mut self, seq: Seq) -> Option<T> {
        let (lane, i) = self.locate(seq)?;
        let entries = &mut self.lanes[lane];
        let mut slot = if i == 0 {
            // The lane's front (the common case: a worker finishes its oldest first) is popped at
            // once rather than left as a hole; a lane's front is never a hole.
            entries.pop_front()?.slot?
        } else {
            entries.get_mut(i)?.slot.take()?
        };
        while matches!(entries.front(), Some(Entry { slot: None, .. })) {
            entries.pop_front();
        }
        self.heads[lane] = entries.front().map_or(EMPTY, |e| e.seq);
        self.recycle(slot.footprint.take());
        self.live -= 1;
        if slot.state == TxnState::Blocked {
            self.blocked -= 1;
        }
        Some(slot.payload)
    }

    fn recycle(&mut self, fp: Option<Box<Footprint>>) {
        if let Some(mut fp) = fp {
            if self.spare.len() < 64 {
                fp.clear();
                self.spare.push(fp);
            }
        }
    }

    /// The oldest transaction still in the queue.
    #[inline]
    pub fn front(&self) -> Option<Seq> {
        let least = self.heads.iter().copied().min().unwrap_or(EMPTY);
        (least != EMPTY).then_some(least)
    }

    /// The state of transaction `seq`.
    pub fn state(&self, seq: Seq) -> Option<TxnState> {
        self.slot(seq).map(|s| s.state)
    }

    /// The payload of transaction `seq`.
    pub fn payload(&self, seq: Seq) -> Option<&T> {
        self.slot(seq).map(|s| &s.payload)
    }

    /// Unblocks transaction `seq` (Blocked → Running). `true` exactly once per blocked transaction.
    pub fn claim(&mut self, seq: Seq) -> bool {
        match self.slot_mut(seq) {
            Some(s) if s.state == TxnState::Blocked => s.state = TxnState::Running,
            _ => return false,
        }
        self.blocked -= 1;
        true
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

    /// Live entries, oldest first: the lanes merged by sequence number.
    fn in_order(&self) -> impl Iterator<Item = (Seq, &Slot<T>)> {
        let lanes = &self.lanes;
        let mut at = [0usize; MAX_LANES];
        std::iter::from_fn(move || {
            let mut oldest: Option<(usize, Seq)> = None;
            for (lane, entries) in lanes.iter().enumerate() {
                // Skip the lane's holes up to its next live entry.
                while let Some(e) = entries.get(at[lane]) {
                    if e.slot.is_some() {
                        if oldest.is_none_or(|(_, s)| e.seq < s) {
                            oldest = Some((lane, e.seq));
                        }
                        break;
                    }
                    at[lane] += 1;
                }
            }
            let (lane, seq) = oldest?;
            let slot = lanes[lane][at[lane]].slot.as_ref()?;
            at[lane] += 1;
            Some((seq, slot))
        })
    }

    /// Live transactions, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (Seq, TxnState, &T)> {
        self.in_order().map(|(seq, s)| (seq, s.state, &s.payload))
    }

    /// Runs SCA (Fig. 4) over the queue, oldest first, and returns the oldest blocked transaction that
    /// conflicts with no older one and that `eligible` accepts (a caller that can only run some
    /// transactions, e.g. its own, still lets the others mark their keys). `keys` lists a payload's
    /// lock ids and whether each is exclusive; it is called once per transaction, the first time SCA
    /// sees it — the hashed offsets are cached in the queue (§2.6's optimization).
    pub fn sca(
        &mut self,
        sca: &mut Sca,
        eligible: impl FnMut(&T) -> bool,
        keys: impl FnMut(&T, &mut dyn FnMut(u64, Kind)),
    ) -> Option<Seq> {
        self.footprints(sca, keys);
        let i = sca.select(self.candidates(eligible))?;
        // `i` counts live transactions oldest first; map it back to a sequence number.
        self.in_order().nth(i).map(|(seq, _)| seq)
    }

    /// [`Sca::select_all`] over the queue: appends to `found` every blocked transaction (that
    /// `eligible` accepts) conflicting with no older one, oldest first — what calling [`Self::sca`]
    /// and claiming its find until it finds nothing would claim, in one pass. Claims nothing.
    pub fn sca_all(
        &mut self,
        sca: &mut Sca,
        eligible: impl FnMut(&T) -> bool,
        keys: impl FnMut(&T, &mut dyn FnMut(u64, Kind)),
        found: &mut Vec<Seq>,
    ) {
        self.footprints(sca, keys);
        // Each find is an index among the live transactions oldest first, ascending: appended as
        // such, then mapped to its sequence number in place (no scratch list per pass).
        let start = found.len();
        sca.select_all(self.candidates(eligible), |i| found.push(i as Seq));
        let mut k = start;
        for (i, (seq, _)) in self.in_order().enumerate() {
            if k == found.len() {
                break;
            }
            if found[k] == i as Seq {
                found[k] = seq;
                k += 1;
            }
        }
    }

    /// Hashes the keys of every entry SCA has not met yet (once per entry: cached in its slot).
    fn footprints(&mut self, sca: &Sca, mut keys: impl FnMut(&T, &mut dyn FnMut(u64, Kind))) {
        let TxnQueue { lanes, spare, .. } = self;
        for s in lanes
            .iter_mut()
            .flat_map(|l| l.iter_mut())
            .flat_map(|e| &mut e.slot)
        {
            if s.footprint.is_none() {
                let mut fp = spare.pop().unwrap_or_default();
                keys(&s.payload, &mut |id, kind| fp.add(sca, id, kind));
                s.footprint = Some(fp);
            }
        }
    }

    /// The live transactions as SCA's candidates, oldest first (footprints computed).
    fn candidates<'a>(
        &'a self,
        mut eligible: impl FnMut(&T) -> bool + 'a,
    ) -> impl Iterator<Item = ScaCandidate<'a>> + 'a {
        self.in_order().map(move |(_, s)| ScaCandidate {
            blocked: s.state == TxnState::Blocked,
            eligible: s.state == TxnState::Blocked && eligible(&s.payload),
            footprint: s.footprint.as_ref().expect("footprints computed first"),
        })
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

    #[test]
    fn lanes_keep_one_queue_order() {
        let mut q = TxnQueue::with_lanes(2);
        // Owners 0 and 1 take the two lanes; owner 3 shares owner 1's.
        let a = q.enqueue_in(0, 'a', false);
        let b = q.enqueue_in(1, 'b', true);
        let c = q.enqueue_in(3, 'c', true);
        let d = q.enqueue_in(0, 'd', false);
        assert!(
            a < b && b < c && c < d,
            "sequence numbers follow enqueue order"
        );
        assert_eq!(q.lane_of(3), q.lane_of(1));
        let order: Vec<char> = q.iter().map(|(_, _, &p)| p).collect();
        assert_eq!(order, ['a', 'b', 'c', 'd'], "iteration merges the lanes");
        assert_eq!((q.front(), q.len(), q.blocked()), (Some(a), 4, 2));
        assert_eq!(q.remove(a), Some('a'));
        assert_eq!(q.front(), Some(b), "the front moves to the other lane");
        assert_eq!(q.remove(c), Some('c'), "removed behind its lane's front");
        assert_eq!(q.state(c), None);
        assert!(q.claim(b) && !q.claim(b));
        assert_eq!(q.remove(b), Some('b'));
        assert_eq!((q.front(), q.len(), q.blocked()), (Some(d), 1, 0));
        assert_eq!(q.remove(d), Some('d'));
        assert!(q.is_empty() && q.front().is_none());
    }

    /// What the queue holds, kept the obvious way: sequence number → (state, payload).
    type Model = std::collections::BTreeMap<Seq, (TxnState, u32)>;

    fn check_against(q: &TxnQueue<u32>, model: &Model, gone: &[Seq]) {
        assert_eq!(q.front(), model.keys().next().copied());
        assert_eq!(q.len(), model.len());
        let blocked = model
            .values()
            .filter(|(s, _)| *s == TxnState::Blocked)
            .count();
        assert_eq!(q.blocked(), blocked);
        let got: Vec<(Seq, TxnState, u32)> = q.iter().map(|(s, st, &p)| (s, st, p)).collect();
        let want: Vec<(Seq, TxnState, u32)> =
            model.iter().map(|(&s, &(st, p))| (s, st, p)).collect();
        assert_eq!(got, want);
        for &s in gone {
            assert_eq!(q.state(s), None, "{s} was removed");
        }
    }

    proptest::proptest! {
        /// Any sequence of enqueues (by any owner), removals and claims leaves a laned queue
        /// exactly where the one-map model is: same front, counts, order and states.
        #[test]
        fn a_laned_queue_matches_the_model(
            lanes in proptest::sample::select(vec![1usize, 2, 8]),
            ops in proptest::collection::vec((0u8..3, 0u32..20, proptest::bool::ANY), 1..200),
        ) {
            let mut q = TxnQueue::with_lanes(lanes);
            let mut model = Model::new();
            let mut gone = Vec::new();
            for (i, (op, n, blocked)) in ops.into_iter().enumerate() {
                let live: Vec<Seq> = model.keys().copied().collect();
                match op {
                    0 => {
                        let seq = q.enqueue_in(n, i as u32, blocked);
                        proptest::prop_assert!(live.last().is_none_or(|&l| l < seq));
                        let state = if blocked { TxnState::Blocked } else { TxnState::Free };
                        model.insert(seq, (state, i as u32));
                    }
                    _ if live.is_empty() => {}
                    1 => {
                        let seq = live[n as usize % live.len()];
                        proptest::prop_assert_eq!(q.remove(seq), model.remove(&seq).map(|e| e.1));
                        proptest::prop_assert_eq!(q.remove(seq), None);
                        gone.push(seq);
                    }
                    _ => {
                        let seq = live[n as usize % live.len()];
                        let e = model.get_mut(&seq).expect("live");
                        let blocked = e.0 == TxnState::Blocked;
                        if blocked {
                            e.0 = TxnState::Running;
                        }
                        proptest::prop_assert_eq!(q.claim(seq), blocked);
                    }
                }
                check_against(&q, &model, &gone);
            }
        }
    }

    /// SCA over a laned queue scans the lanes merged, oldest first: it returns the oldest blocked
    /// transaction that conflicts with no older one (SCA's brute-force oracle on the queue's order),
    /// whatever lanes the transactions sit in, and one `sca_all` pass returns all of them.
    #[test]
    fn sca_scans_the_lanes_in_queue_order() {
        use super::super::sca::tests::{random_queue, runnable, T};
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let mut sca = Sca::new();
        for _ in 0..2_000 {
            let mut q = TxnQueue::with_lanes(8);
            for t in random_queue(&mut rng) {
                let blocked = t.blocked;
                let seq = q.enqueue_in(rng.gen_range(0..16), t, blocked);
                if rng.gen_bool(0.2) {
                    q.remove(seq);
                }
            }
            let (seqs, left): (Vec<Seq>, Vec<T>) =
                q.iter().map(|(seq, _, t)| (seq, t.clone())).unzip();
            let want = runnable(&left).first().map(|&i| seqs[i]);
            let got = q.sca(
                &mut sca,
                |_| true,
                |t, f| t.locks.iter().for_each(|&(k, x)| f(k, x)),
            );
            assert_eq!(got, want, "{left:?}");
            // One pass finds every such transaction, by sequence number, appended after what
            // `found` already held.
            let mut found = vec![Seq::MAX];
            q.sca_all(
                &mut sca,
                |_| true,
                |t, f| t.locks.iter().for_each(|&(k, x)| f(k, x)),
                &mut found,
            );
            let want_all: Vec<Seq> = std::iter::once(Seq::MAX)
                .chain(runnable(&left).into_iter().map(|i| seqs[i]))
                .collect();
            assert_eq!(found, want_all, "{left:?}");
        }
    }
}
