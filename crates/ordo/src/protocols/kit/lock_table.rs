//! The traditional lock manager: a latched hash table of lock heads with FIFO request queues (Gray &
//! Reuter 1993, §8; System R's lock manager). It is the baseline the VLL paper measures against
//! (Ren, Thomson, Abadi 2015, §1 and Fig. 16: "a hash table that maps each record's primary key to a
//! linked list of lock requests", 21.07 µs of locking CPU per transaction against VLL's 1.83 µs).
//!
//! ```text
//!   buckets (fixed number, each with its own latch)
//!   ┌──────────┐
//!   │ latch  ──┼─▶ chain: [ head (t0, r17) ] [ head (t1, r4) ] …     one lock head per locked record
//!   ├──────────┤            │ granted group: S×2
//!   │ latch  ──┼─▶ …        ▼ queue (FIFO): T3:S granted │ T5:S granted │ T7:X waiting │ T8:S waiting
//!   └──────────┘
//! ```
//!
//! * **lock(owner, record, mode)**: hash `(table, rid)` to a bucket, take the bucket's latch, find the
//!   record's lock head on the bucket chain (or take a free one there), and append a
//!   request. It is granted at once iff nobody is waiting ahead of it (FIFO fairness) and its mode is
//!   compatible with the **granted group** (S with S; X with nothing). Otherwise the caller either
//!   gives up at once (`wait = false`: no-wait, the request is not left behind) or leaves it queued and
//!   waits until a release grants it.
//! * **Conversion** (upgrade S → X): a transaction holding S that asks for X is converted in place if it
//!   is the only granted holder; otherwise the conversion is pending and has priority over every
//!   waiting request (it is granted as soon as the other holders leave).
//! * **downgrade(owner, record, mode)**: a granted request keeps a weaker mode its own covers (X
//!   kept as S; Salt's alkaline locks turned saline), and the waiters it no longer blocks are granted.
//! * **unlock(owner, record)**: latch the bucket, remove the owner's request from the queue, then grant
//!   from the front of the queue: the pending conversion if it has become possible, then waiting
//!   requests in arrival order as long as each is compatible with the group (the first one that is not
//!   stops the walk). A head whose queue is empty is free for the next record hashed there.
//!
//! A transaction releases by walking its own lock list (kept by the 2PL transaction, `twopl::lockset`)
//! and calling `unlock` for each entry, as the textbook's lock list of request blocks does.
//!
//! **The compatibility matrix is a parameter** ([`LockModes`]): which modes exist, which pairs may
//! be granted together, which mode covers which, and what a conversion asks for. 2PL runs the table
//! with shared and exclusive ([`Mode`]: S with S, X with nothing); a protocol with more kinds of
//! locks (Salt's ACID, alkaline and saline locks, Callas's nexus locks) supplies its own matrix. A
//! head counts its granted requests per mode and keeps a bit per mode held, so "compatible with the
//! granted group" is one mask test whatever the matrix.
//!
//! **Memory.** Lock heads stay in their bucket's chain: an emptied head is free, keeps its queue's
//! buffer and is taken, in place, by the next record hashed to that bucket that has none, so a
//! steady-state request allocates and copies nothing. The queue is a ring buffer rather than a linked list of
//! request blocks; the algorithm (walk the queue, grant from the front) is the same and the layout is
//! only friendlier to the cache — if anything, this baseline is cheaper than the paper's.
//!
//! **Waiting** polls the request's status under the bucket latch with exponential backoff (the
//! textbook's waiter sleeps on a semaphore that the releaser signals; either way the grant itself is
//! decided by the releaser, in `unlock`).
//!
//! Contrast with Ordo's lock-word 2PL (`twopl::lock`): there the lock *is* a word beside the record,
//! found through the row's slot and taken with one compare-and-swap, no hash, no latch, no queue — the
//! "very lightweight" lock manager the VLL paper says main-memory systems move toward. This file is the
//! heavyweight one they move away from.

pub use super::lock_request::Mode;
use crate::storage::{RowId, TableId};
use parking_lot::Mutex;
use std::collections::VecDeque;

/// Default number of buckets of a [`LockTable`] (fixed for its lifetime). A lock table is sized by the
/// number of locks held at once, not by the database: 4096 buckets (256 KiB, cache-resident) keep chains
/// to about one head for thousands of concurrent locks. (With 65,536 buckets the table itself no longer
/// fits in cache and every request misses on its bucket; see the Fig. 16 bench.)
pub const DEFAULT_BUCKETS: usize = 1 << 12;

/// Who owns a request: a worker id (a worker runs one transaction at a time).
pub type Owner = u32;

/// A lock table's modes and their compatibility matrix.
pub trait LockModes: Copy + Eq + std::fmt::Debug + Send + 'static {
    /// Granted requests per mode, indexed by [`LockModes::index`] (`[u32; N]` for N modes, at
    /// most 32).
    type Counts: Copy + Default + std::fmt::Debug + Send + AsRef<[u32]> + AsMut<[u32]>;
    /// This mode's index in [`LockModes::Counts`].
    fn index(self) -> usize;
    /// The modes that may not be granted while `self` is requested, as a mask of indices: the row
    /// of the compatibility matrix (symmetric: `a` conflicts with `b` iff `b` conflicts with `a`).
    fn conflicts(self) -> u32;
    /// Whether holding `self` already grants a request for `other` (X covers S).
    fn covers(self, other: Self) -> bool;
    /// The mode a holder of `self` converts to when it asks for `other` (S asking for X: X).
    fn join(self, other: Self) -> Self;
}

/// Shared and exclusive: S with S, X with nothing; X covers S.
impl LockModes for Mode {
    type Counts = [u32; 2];
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
    #[inline]
    fn conflicts(self) -> u32 {
        match self {
            Mode::Shared => 1 << Mode::Exclusive as u32,
            Mode::Exclusive => (1 << Mode::Shared as u32) | (1 << Mode::Exclusive as u32),
        }
    }
    #[inline]
    fn covers(self, other: Self) -> bool {
        self >= other
    }
    #[inline]
    fn join(self, other: Self) -> Self {
        self.max(other)
    }
}

/// What a lock request got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The lock is held in the requested mode (or a stronger one).
    Granted,
    /// The request is queued (only when the caller asked to wait); [`LockTable::is_granted`] tells when
    /// a release has granted it.
    Waiting,
    /// It conflicts and the caller asked not to wait: nothing was left in the table.
    Conflict,
}

/// One lock request in a head's queue.
#[derive(Clone, Copy, Debug)]
struct Request<M> {
    owner: Owner,
    mode: M,
    granted: bool,
    /// A granted request waiting to be converted to a stronger mode (S to X).
    converting: bool,
    /// The mode a pending conversion asks for.
    target: M,
}

impl<M: LockModes> Request<M> {
    /// Whether it is granted in `mode` or one that covers it (a pending conversion is granted in
    /// none).
    fn holds(&self, mode: M) -> bool {
        self.granted && !self.converting && self.mode.covers(mode)
    }
}

/// The lock of one record: its granted group and its request queue (granted requests first, then the
/// waiting ones in arrival order).
#[derive(Debug, Default)]
struct LockHead<M: LockModes> {
    table: TableId,
    rid: RowId,
    /// Granted requests per mode.
    granted: M::Counts,
    /// Bit `i` set iff some request is granted in the mode of index `i`.
    held: u32,
    /// Waiting requests plus pending conversions: when nonzero, a new request may not overtake them.
    waiting: u32,
    queue: VecDeque<Request<M>>,
}

impl<M: LockModes> LockHead<M> {
    /// Whether `mode` may join the granted group.
    #[inline]
    fn compatible(&self, mode: M) -> bool {
        mode.conflicts() & self.held == 0
    }

    #[inline]
    fn grant(&mut self, mode: M) {
        self.granted.as_mut()[mode.index()] += 1;
        self.held |= 1 << mode.index();
    }

    #[inline]
    fn ungrant(&mut self, mode: M) {
        let n = &mut self.granted.as_mut()[mode.index()];
        *n -= 1;
        if *n == 0 {
            self.held &= !(1 << mode.index());
        }
    }

    /// Converts the granted request at `p` to `target` if the rest of the granted group allows it.
    #[inline]
    fn try_convert(&mut self, p: usize, target: M) -> bool {
        let own = self.queue[p].mode;
        self.ungrant(own);
        if self.compatible(target) {
            self.grant(target);
            let r = &mut self.queue[p];
            r.mode = target;
            r.converting = false;
            true
        } else {
            self.grant(own);
            false
        }
    }

    /// Grants from the front after a release: a pending conversion first (it has priority), then the
    /// waiting requests in FIFO order while each is compatible with the granted group.
    fn grant_waiters(&mut self) {
        if self.waiting == 0 {
            return;
        }
        if let Some(c) = self.queue.iter().position(|r| r.converting) {
            // Possible once the holder's own grant is the only one in its way.
            if self.try_convert(c, self.queue[c].target) {
                self.waiting -= 1;
            }
            return;
        }
        for i in 0..self.queue.len() {
            let r = self.queue[i];
            if r.granted {
                continue;
            }
            if !self.compatible(r.mode) {
                return;
            }
            self.grant(r.mode);
            self.queue[i].granted = true;
            self.waiting -= 1;
        }
    }
}

/// One bucket: its chain of lock heads. A head whose queue is empty is free: it stays in place,
/// keeping its queue's buffer, and the next record hashed to the bucket that has no head takes it.
/// (Moving emptied heads to a free list and back copied each head twice a lock: with Callas's 16
/// groups of nexus-lock modes a head is about 200 bytes.)
#[derive(Debug)]
struct Chain<M: LockModes> {
    heads: Vec<LockHead<M>>,
}

impl<M: LockModes> Default for Chain<M> {
    fn default() -> Self {
        Chain { heads: Vec::new() }
    }
}

impl<M: LockModes> Chain<M> {
    /// The head of `(table, rid)` (it may be free: a free head keeps the record it last served).
    #[inline]
    fn find(&self, table: TableId, rid: RowId) -> Option<usize> {
        self.heads
            .iter()
            .position(|h| h.rid == rid && h.table == table)
    }

    /// Where `owner`'s request on `(table, rid)` is: its head's index and its place in the queue.
    #[inline]
    fn request_of(&self, table: TableId, rid: RowId, owner: Owner) -> Option<(usize, usize)> {
        let i = self.find(table, rid)?;
        let p = self.heads[i].queue.iter().position(|r| r.owner == owner)?;
        Some((i, p))
    }

    /// The head of `(table, rid)`: its own, else a free one, else a new one. One record never has
    /// two heads: a head takes a record only when no head has it.
    #[inline]
    fn find_or_insert(&mut self, table: TableId, rid: RowId) -> usize {
        if let Some(i) = self.find(table, rid) {
            return i;
        }
        if let Some(i) = self.heads.iter().position(|h| h.queue.is_empty()) {
            let h = &mut self.heads[i];
            debug_assert!(h.held == 0 && h.waiting == 0);
            h.table = table;
            h.rid = rid;
            return i;
        }
        self.heads.push(LockHead {
            table,
            rid,
            granted: M::Counts::default(),
            held: 0,
            waiting: 0,
            queue: VecDeque::new(),
        });
        self.heads.len() - 1
    }
}

/// A bucket: a latch over a chain, on its own cache line.
#[derive(Debug)]
#[repr(align(64))]
struct Bucket<M: LockModes>(Mutex<Chain<M>>);

/// The hash table of lock heads, over the modes `M` (shared and exclusive by default).
pub struct LockTable<M: LockModes = Mode> {
    buckets: Box<[Bucket<M>]>,
    mask: usize,
}

impl<M: LockModes> Default for LockTable<M> {
    fn default() -> Self {
        LockTable::new(DEFAULT_BUCKETS)
    }
}

impl<M: LockModes> LockTable<M> {
    /// A table with `buckets` buckets (rounded up to a power of two).
    pub fn new(buckets: usize) -> Self {
        let n = buckets.max(1).next_power_of_two();
        LockTable {
            buckets: (0..n)
                .map(|_| Bucket(Mutex::new(Chain::default())))
                .collect(),
            mask: n - 1,
        }
    }

    #[inline]
    fn bucket(&self, table: TableId, rid: RowId) -> &Mutex<Chain<M>> {
        let h = (rid ^ ((table as u64) << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &self.buckets[(h >> 32) as usize & self.mask].0
    }

    /// Requests `(table, rid)` in `mode` for `owner`. With `wait`, a conflicting request is queued
    /// ([`Outcome::Waiting`]); without, it is withdrawn ([`Outcome::Conflict`]). A request for a lock the
    /// owner already holds in a mode that does not cover it asks for a conversion (S to X); one it
    /// holds strongly enough is granted.
    pub fn lock(&self, owner: Owner, table: TableId, rid: RowId, mode: M, wait: bool) -> Outcome {
        let mut chain = self.bucket(table, rid).lock();
        let i = chain.find_or_insert(table, rid);
        let head = &mut chain.heads[i];
        if let Some(p) = head.queue.iter().position(|r| r.owner == owner) {
            return Self::convert(head, p, mode, wait);
        }
        if head.waiting == 0 && head.compatible(mode) {
            head.grant(mode);
            head.queue.push_back(Request {
                owner,
                mode,
                granted: true,
                converting: false,
                target: mode,
            });
            return Outcome::Granted;
        }
        if wait {
            head.waiting += 1;
            head.queue.push_back(Request {
                owner,
                mode,
                granted: false,
                converting: false,
                target: mode,
            });
            Outcome::Waiting
        } else {
            // The head has the conflicting holders: its queue stays as it was.
            Outcome::Conflict
        }
    }

    /// A second request by the owner of queue entry `p`.
    fn convert(head: &mut LockHead<M>, p: usize, mode: M, wait: bool) -> Outcome {
        let r = head.queue[p];
        if !r.granted || r.converting {
            // Already waiting: the caller waits on that request.
            return Outcome::Waiting;
        }
        if r.mode.covers(mode) {
            return Outcome::Granted;
        }
        // Held in a weaker mode (S held, X wanted): convert at once if nobody else is in the way.
        let target = r.mode.join(mode);
        if head.try_convert(p, target) {
            return Outcome::Granted;
        }
        if wait && !head.queue.iter().any(|q| q.converting) {
            head.queue[p].converting = true;
            head.queue[p].target = target;
            head.waiting += 1;
            Outcome::Waiting
        } else {
            // No-wait, or a second conversion on the same record (the two would deadlock).
            Outcome::Conflict
        }
    }

    /// Whether `owner`'s request on `(table, rid)` is granted in `mode` (or stronger) — what a waiter
    /// polls.
    pub fn is_granted(&self, owner: Owner, table: TableId, rid: RowId, mode: M) -> bool {
        let chain = self.bucket(table, rid).lock();
        // An owner has at most one request per record (a second one converts it).
        chain
            .request_of(table, rid, owner)
            .is_some_and(|(i, p)| chain.heads[i].queue[p].holds(mode))
    }

    /// Waits until `owner`'s queued request on `(table, rid)` is granted in `mode`.
    pub fn wait_granted(&self, owner: Owner, table: TableId, rid: RowId, mode: M) {
        let backoff = crossbeam_utils::Backoff::new();
        while !self.is_granted(owner, table, rid, mode) {
            backoff.snooze();
        }
    }

    /// The owners `owner`'s waiting request on `(table, rid)` waits for, as a bitmap of owner ids
    /// below 64 (the waits-for edges of a deadlock detector): the granted holders it conflicts with,
    /// a pending conversion (it has priority), and the conflicting requests queued ahead of it
    /// (FIFO: it cannot overtake them). For a pending conversion, the other granted holders. Empty
    /// if the request is granted or absent.
    pub fn blockers(&self, owner: Owner, table: TableId, rid: RowId) -> u64 {
        let chain = self.bucket(table, rid).lock();
        let Some((i, p)) = chain.request_of(table, rid, owner) else {
            return 0;
        };
        blockers_of(&chain.heads[i].queue, p)
    }

    /// One round of a waiter: [`Self::is_granted`] and, if not granted, [`Self::blockers`], under
    /// one acquisition of the bucket's latch instead of two.
    pub fn poll(&self, owner: Owner, table: TableId, rid: RowId, mode: M) -> Poll {
        let chain = self.bucket(table, rid).lock();
        let Some((i, p)) = chain.request_of(table, rid, owner) else {
            return Poll::Waiting(0);
        };
        let queue = &chain.heads[i].queue;
        if queue[p].holds(mode) {
            Poll::Granted
        } else {
            Poll::Waiting(blockers_of(queue, p))
        }
    }

    /// Withdraws `owner`'s waiting request on `(table, rid)` (a deadlock victim gives up) and grants
    /// the waiters queued behind it that it held up; a pending conversion is withdrawn and the S lock
    /// under it kept. Returns `false`, changing nothing, if a release granted the request meanwhile:
    /// the caller holds the lock after all.
    pub fn withdraw(&self, owner: Owner, table: TableId, rid: RowId) -> bool {
        let mut chain = self.bucket(table, rid).lock();
        let Some((i, p)) = chain.request_of(table, rid, owner) else {
            debug_assert!(false, "withdrawing a request never made");
            return true;
        };
        let head = &mut chain.heads[i];
        let r = head.queue[p];
        if r.converting {
            head.queue[p].converting = false;
        } else if r.granted {
            return false;
        } else {
            head.queue.remove(p);
        }
        head.waiting -= 1;
        head.grant_waiters();
        true
    }

    /// Removes `owner`'s request on `(table, rid)` (granted or waiting) and grants the waiters it
    /// unblocks. A pending conversion is withdrawn and the S lock under it released too.
    pub fn unlock(&self, owner: Owner, table: TableId, rid: RowId) {
        let mut chain = self.bucket(table, rid).lock();
        let Some((i, p)) = chain.request_of(table, rid, owner) else {
            debug_assert!(false, "unlock of a lock never requested, or by a non-owner");
            return;
        };
        let head = &mut chain.heads[i];
        let r = head.queue.remove(p).expect("position is in range");
        if r.granted {
            head.ungrant(r.mode);
        }
        if !r.granted || r.converting {
            head.waiting -= 1;
        }
        head.grant_waiters();
    }

    /// Downgrades `owner`'s granted request on `(table, rid)` to `mode`, a mode its current one
    /// covers (an X lock kept as S; Salt's alkaline lock turned saline at the end of its
    /// subtransaction), and grants the waiters the weaker mode no longer blocks. Returns `false`,
    /// changing nothing, if the owner holds no granted request there, or a request its mode does
    /// not cover, or one converting.
    pub fn downgrade(&self, owner: Owner, table: TableId, rid: RowId, mode: M) -> bool {
        let mut chain = self.bucket(table, rid).lock();
        let Some((i, p)) = chain.request_of(table, rid, owner) else {
            return false;
        };
        let head = &mut chain.heads[i];
        let r = head.queue[p];
        if !r.granted || r.converting || !r.mode.covers(mode) {
            return false;
        }
        if r.mode != mode {
            head.ungrant(r.mode);
            head.grant(mode);
            head.queue[p].mode = mode;
            head.queue[p].target = mode;
            head.grant_waiters();
        }
        true
    }

    /// Lock heads in use (not free) over all buckets (tests: 0 once every lock was released).
    pub fn heads_in_use(&self) -> usize {
        self.buckets
            .iter()
            .map(|b| {
                b.0.lock()
                    .heads
                    .iter()
                    .filter(|h| !h.queue.is_empty())
                    .count()
            })
            .sum()
    }

    /// Requests (granted or waiting) over all buckets.
    pub fn requests(&self) -> usize {
        self.buckets
            .iter()
            .map(|b| {
                b.0.lock()
                    .heads
                    .iter()
                    .map(|h| h.queue.len())
                    .sum::<usize>()
            })
            .sum()
    }
}

/// What [`LockTable::poll`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poll {
    /// The request is granted in the mode asked for (or a stronger one).
    Granted,
    /// It still waits, for these owners ([`LockTable::blockers`]).
    Waiting(u64),
}

/// [`LockTable::blockers`] of the request at `p` in `queue`.
fn blockers_of<M: LockModes>(queue: &VecDeque<Request<M>>, p: usize) -> u64 {
    let me = queue[p];
    if me.granted && !me.converting {
        return 0;
    }
    let mut bits = 0u64;
    for (j, r) in queue.iter().enumerate() {
        let blocks = r.owner != me.owner
            && if me.converting {
                r.granted
            } else if r.converting {
                true
            } else if r.granted || j < p {
                r.mode.conflicts() & (1 << me.mode.index()) != 0
            } else {
                false
            };
        if blocks && r.owner < 64 {
            bits |= 1 << r.owner;
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::Outcome::{Conflict, Granted, Waiting};
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    const S: Mode = Mode::Shared;
    const X: Mode = Mode::Exclusive;

    #[test]
    fn grant_compatibility_no_wait() {
        let t = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 7, S, false), Granted);
        assert_eq!(t.lock(2, 0, 7, S, false), Granted, "S with S");
        assert_eq!(t.lock(3, 0, 7, X, false), Conflict, "X with S");
        assert_eq!(
            t.requests(),
            2,
            "a refused no-wait request leaves nothing behind"
        );
        t.unlock(1, 0, 7);
        t.unlock(2, 0, 7);
        assert_eq!(t.heads_in_use(), 0);
        assert_eq!(t.lock(3, 0, 7, X, false), Granted);
        assert_eq!(t.lock(4, 0, 7, X, false), Conflict, "X with X");
        assert_eq!(t.lock(4, 0, 7, S, false), Conflict, "S with X");
        assert_eq!(
            t.lock(4, 1, 7, X, false),
            Granted,
            "same row slot, other table"
        );
        assert_eq!(t.lock(3, 0, 7, S, false), Granted, "X covers S");
        t.unlock(3, 0, 7);
        t.unlock(4, 1, 7);
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
    }

    #[test]
    fn waiters_are_granted_in_fifo_order() {
        let t = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, S, true), Granted);
        assert_eq!(t.lock(2, 0, 1, X, true), Waiting);
        // Compatible with the granted group, but may not overtake the waiting X.
        assert_eq!(t.lock(3, 0, 1, S, true), Waiting);
        assert_eq!(
            t.lock(4, 0, 1, S, false),
            Conflict,
            "no-wait does not jump the queue either"
        );
        t.unlock(1, 0, 1);
        assert!(t.is_granted(2, 0, 1, X));
        assert!(!t.is_granted(3, 0, 1, S));
        t.unlock(2, 0, 1);
        assert!(t.is_granted(3, 0, 1, S));
        t.unlock(3, 0, 1);
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
    }

    #[test]
    fn release_grants_every_compatible_waiter_up_to_the_first_incompatible() {
        let t = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, X, true), Granted);
        assert_eq!(t.lock(2, 0, 1, S, true), Waiting);
        assert_eq!(t.lock(3, 0, 1, S, true), Waiting);
        assert_eq!(t.lock(4, 0, 1, X, true), Waiting);
        assert_eq!(t.lock(5, 0, 1, S, true), Waiting);
        t.unlock(1, 0, 1);
        assert!(t.is_granted(2, 0, 1, S) && t.is_granted(3, 0, 1, S));
        assert!(!t.is_granted(4, 0, 1, X) && !t.is_granted(5, 0, 1, S));
        t.unlock(3, 0, 1);
        assert!(!t.is_granted(4, 0, 1, X), "one reader left");
        t.unlock(2, 0, 1);
        assert!(t.is_granted(4, 0, 1, X) && !t.is_granted(5, 0, 1, S));
        // A waiter that gives up leaves the queue too.
        t.unlock(5, 0, 1);
        t.unlock(4, 0, 1);
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
    }

    #[test]
    fn upgrade_converts_in_place_or_waits_with_priority() {
        let t = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, S, false), Granted);
        assert_eq!(t.lock(1, 0, 1, X, false), Granted, "sole holder converts");
        assert_eq!(t.requests(), 1, "a conversion adds no request");
        assert_eq!(t.lock(2, 0, 1, S, false), Conflict);
        t.unlock(1, 0, 1);

        assert_eq!(t.lock(1, 0, 1, S, true), Granted);
        assert_eq!(t.lock(2, 0, 1, S, true), Granted);
        assert_eq!(
            t.lock(1, 0, 1, X, false),
            Conflict,
            "no-wait conversion with another reader"
        );
        assert!(
            t.is_granted(1, 0, 1, S),
            "a refused conversion keeps the S lock"
        );
        assert_eq!(t.lock(1, 0, 1, X, true), Waiting);
        assert_eq!(
            t.lock(2, 0, 1, X, true),
            Conflict,
            "a second conversion would deadlock"
        );
        assert_eq!(
            t.lock(3, 0, 1, S, true),
            Waiting,
            "the pending conversion goes first"
        );
        t.unlock(2, 0, 1);
        assert!(t.is_granted(1, 0, 1, X));
        assert!(!t.is_granted(3, 0, 1, S));
        t.unlock(1, 0, 1);
        assert!(t.is_granted(3, 0, 1, S));
        t.unlock(3, 0, 1);
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
    }

    #[test]
    fn blockers_are_the_conflicting_holders_and_the_conflicting_requests_ahead() {
        let t = LockTable::new(8);
        let bits = |owners: &[u32]| owners.iter().fold(0u64, |b, &o| b | 1 << o);
        assert_eq!(t.lock(1, 0, 1, S, true), Granted);
        assert_eq!(t.lock(2, 0, 1, S, true), Granted);
        assert_eq!(t.lock(3, 0, 1, X, true), Waiting);
        assert_eq!(t.lock(4, 0, 1, S, true), Waiting);
        assert_eq!(t.lock(5, 0, 1, X, true), Waiting);
        assert_eq!(t.blockers(1, 0, 1), 0, "granted: waits for nobody");
        assert_eq!(t.blockers(3, 0, 1), bits(&[1, 2]), "X behind two readers");
        assert_eq!(
            t.blockers(4, 0, 1),
            bits(&[3]),
            "S: not the granted readers, the X queued ahead"
        );
        assert_eq!(t.blockers(5, 0, 1), bits(&[1, 2, 3, 4]));
        assert_eq!(t.blockers(9, 0, 1), 0, "no request");
        assert_eq!(t.blockers(9, 0, 2), 0, "no lock head");
        // A pending conversion waits for the other holders, and everyone else for it.
        assert_eq!(t.lock(6, 0, 2, S, true), Granted);
        assert_eq!(t.lock(7, 0, 2, S, true), Granted);
        assert_eq!(t.lock(6, 0, 2, X, true), Waiting);
        assert_eq!(t.lock(8, 0, 2, S, true), Waiting);
        assert_eq!(t.blockers(6, 0, 2), bits(&[7]));
        assert_eq!(t.blockers(8, 0, 2), bits(&[6]));
    }

    /// A waiter's one look (`poll`) says what `is_granted` and `blockers` say, for a granted
    /// request, queued ones, a pending conversion and an absent one; and follows the releases.
    #[test]
    fn poll_is_is_granted_and_blockers_in_one_look() {
        let t = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, S, true), Granted);
        assert_eq!(t.lock(2, 0, 1, S, true), Granted);
        assert_eq!(t.lock(3, 0, 1, X, true), Waiting);
        assert_eq!(t.lock(4, 0, 1, S, true), Waiting);
        assert_eq!(t.lock(5, 0, 2, S, true), Granted);
        assert_eq!(t.lock(6, 0, 2, S, true), Granted);
        assert_eq!(t.lock(5, 0, 2, X, true), Waiting, "a conversion");
        let agree = |t: &LockTable| {
            for (owner, rid, mode) in [
                (1, 1, S),
                (2, 1, S),
                (3, 1, X),
                (4, 1, S),
                (9, 1, S),
                (5, 2, X),
                (5, 2, S),
                (6, 2, S),
                (9, 3, X),
            ] {
                let expected = if t.is_granted(owner, 0, rid, mode) {
                    Poll::Granted
                } else {
                    Poll::Waiting(t.blockers(owner, 0, rid))
                };
                assert_eq!(
                    t.poll(owner, 0, rid, mode),
                    expected,
                    "{owner} on {rid} {mode:?}"
                );
            }
        };
        agree(&t);
        assert_eq!(t.poll(3, 0, 1, X), Poll::Waiting(1 << 1 | 1 << 2));
        assert_eq!(t.poll(5, 0, 2, X), Poll::Waiting(1 << 6));
        assert_eq!(
            t.poll(5, 0, 2, S),
            Poll::Waiting(1 << 6),
            "a request converting is not granted in any mode until the conversion is"
        );
        t.unlock(1, 0, 1);
        t.unlock(2, 0, 1);
        t.unlock(6, 0, 2);
        agree(&t);
        assert_eq!(t.poll(3, 0, 1, X), Poll::Granted);
        assert_eq!(t.poll(4, 0, 1, S), Poll::Waiting(1 << 3));
        assert_eq!(t.poll(5, 0, 2, X), Poll::Granted, "converted");
    }

    #[test]
    fn a_downgrade_keeps_the_weaker_lock_and_grants_the_waiters_it_no_longer_blocks() {
        let t = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, X, true), Granted);
        assert_eq!(t.lock(2, 0, 1, S, true), Waiting);
        assert_eq!(t.lock(3, 0, 1, X, true), Waiting);
        assert!(
            !t.downgrade(2, 0, 1, S),
            "a waiting request is not downgraded"
        );
        assert!(t.downgrade(1, 0, 1, S));
        assert!(t.is_granted(1, 0, 1, S) && !t.is_granted(1, 0, 1, X));
        assert!(t.is_granted(2, 0, 1, S), "the reader joins");
        assert!(
            !t.is_granted(3, 0, 1, X),
            "the writer still waits for both readers"
        );
        assert!(!t.downgrade(1, 0, 1, X), "S does not cover X");
        t.unlock(1, 0, 1);
        t.unlock(2, 0, 1);
        assert!(t.is_granted(3, 0, 1, X));
        t.unlock(3, 0, 1);
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
    }

    #[test]
    fn a_withdrawn_waiter_lets_the_queue_behind_it_go() {
        let t = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, S, true), Granted);
        assert_eq!(t.lock(2, 0, 1, X, true), Waiting);
        assert_eq!(t.lock(3, 0, 1, S, true), Waiting);
        assert!(t.withdraw(2, 0, 1), "a waiting X gives up");
        assert!(
            t.is_granted(3, 0, 1, S),
            "the S behind it joins the readers"
        );
        assert_eq!(t.requests(), 2);
        // Granted before the victim could withdraw: it keeps the lock.
        assert_eq!(t.lock(4, 0, 1, X, true), Waiting);
        t.unlock(1, 0, 1);
        t.unlock(3, 0, 1);
        assert!(!t.withdraw(4, 0, 1), "granted meanwhile");
        assert!(t.is_granted(4, 0, 1, X));
        t.unlock(4, 0, 1);
        // A withdrawn conversion keeps its S lock.
        assert_eq!(t.lock(5, 0, 1, S, true), Granted);
        assert_eq!(t.lock(6, 0, 1, S, true), Granted);
        assert_eq!(t.lock(5, 0, 1, X, true), Waiting);
        assert_eq!(t.lock(7, 0, 1, S, true), Waiting, "behind the conversion");
        assert!(t.withdraw(5, 0, 1));
        assert!(t.is_granted(5, 0, 1, S) && !t.is_granted(5, 0, 1, X));
        assert!(t.is_granted(7, 0, 1, S), "the reader behind it goes");
        for o in [5, 6, 7] {
            t.unlock(o, 0, 1);
        }
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
    }

    /// Threads lock random records (few, in few buckets, so chains and queues are long) in key order —
    /// waiting, or no-wait and backing off — check mutual exclusion on every grant, and release. No
    /// request may be lost: every waiter is eventually granted (or the test hangs), and the table ends
    /// empty.
    #[test]
    fn no_lost_requests_under_multithreaded_stress() {
        const KEYS: u64 = 12;
        const THREADS: u32 = 4;
        const ROUNDS: usize = 3000;
        let t = LockTable::new(4);
        // Per record: bit 31 = writer, low bits = readers.
        let state: Vec<AtomicU32> = (0..2 * KEYS).map(|_| AtomicU32::new(0)).collect();
        const W: u32 = 1 << 31;
        std::thread::scope(|s| {
            for th in 0..THREADS {
                let (t, state) = (&t, &state);
                s.spawn(move || {
                    let mut x = 0x9E37_79B9u64 * (th as u64 + 1);
                    let mut rnd = move || {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x
                    };
                    let mut held: Vec<(u32, u64, Mode)> = Vec::new();
                    for _ in 0..ROUNDS {
                        let mut recs: Vec<(u32, u64)> =
                            (0..3).map(|_| ((rnd() % 2) as u32, rnd() % KEYS)).collect();
                        recs.sort_unstable();
                        recs.dedup();
                        let wait = rnd() % 3 != 0;
                        for &(tb, k) in &recs {
                            let mode = if rnd() % 2 == 0 { S } else { X };
                            match t.lock(th, tb, k, mode, wait) {
                                Granted => {}
                                Waiting => t.wait_granted(th, tb, k, mode),
                                Conflict => break,
                            }
                            let st = &state[(tb as u64 * KEYS + k) as usize];
                            match mode {
                                X => assert_eq!(
                                    st.swap(W, Ordering::SeqCst),
                                    0,
                                    "X granted while held"
                                ),
                                S => assert_eq!(
                                    st.fetch_add(1, Ordering::SeqCst) & W,
                                    0,
                                    "S granted under X"
                                ),
                            };
                            held.push((tb, k, mode));
                        }
                        for (tb, k, mode) in held.drain(..) {
                            let st = &state[(tb as u64 * KEYS + k) as usize];
                            match mode {
                                X => st.store(0, Ordering::SeqCst),
                                S => {
                                    st.fetch_sub(1, Ordering::SeqCst);
                                }
                            }
                            t.unlock(th, tb, k);
                        }
                    }
                });
            }
        });
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
        assert!(state.iter().all(|s| s.load(Ordering::SeqCst) == 0));
    }

    /// A matrix other than S/X: the multigranularity modes IS, IX, S, X (Gray et al. 1976). The
    /// table grants, queues, converts and reports blockers by the matrix it is given.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Gran {
        Is,
        Ix,
        S,
        X,
    }

    impl LockModes for Gran {
        type Counts = [u32; 4];
        fn index(self) -> usize {
            self as usize
        }
        fn conflicts(self) -> u32 {
            let bits = |ms: &[Gran]| ms.iter().fold(0, |m, g| m | 1 << *g as u32);
            match self {
                Gran::Is => bits(&[Gran::X]),
                Gran::Ix => bits(&[Gran::S, Gran::X]),
                Gran::S => bits(&[Gran::Ix, Gran::X]),
                Gran::X => bits(&[Gran::Is, Gran::Ix, Gran::S, Gran::X]),
            }
        }
        fn covers(self, other: Self) -> bool {
            self == other || self == Gran::X || (other == Gran::Is && self != Gran::Is)
        }
        fn join(self, other: Self) -> Self {
            match (self, other) {
                (a, b) if a.covers(b) => a,
                (a, b) if b.covers(a) => b,
                // IX and S: no SIX here, so X.
                _ => Gran::X,
            }
        }
    }

    #[test]
    fn a_four_mode_matrix_grants_queues_and_converts_by_its_own_rules() {
        use Gran::*;
        let t: LockTable<Gran> = LockTable::new(8);
        assert_eq!(t.lock(1, 0, 1, Is, true), Granted);
        assert_eq!(t.lock(2, 0, 1, Ix, true), Granted, "IS with IX");
        assert_eq!(t.lock(3, 0, 1, S, false), Conflict, "S with IX");
        assert_eq!(t.lock(3, 0, 1, S, true), Waiting);
        assert_eq!(t.blockers(3, 0, 1), 1 << 2, "only the IX holder blocks S");
        assert_eq!(
            t.lock(4, 0, 1, Is, true),
            Waiting,
            "FIFO: no overtaking the waiting S"
        );
        // IS converts to IX at once beside another IX; IX to X must wait for the others.
        assert_eq!(t.lock(1, 0, 1, Ix, true), Granted);
        assert!(t.is_granted(1, 0, 1, Is), "IX covers IS");
        assert_eq!(t.lock(2, 0, 1, X, true), Waiting);
        assert_eq!(
            t.blockers(2, 0, 1),
            1 << 1,
            "the conversion waits for the other holder"
        );
        t.unlock(1, 0, 1);
        assert!(t.is_granted(2, 0, 1, X), "converted once alone");
        assert!(!t.is_granted(3, 0, 1, S));
        t.unlock(2, 0, 1);
        assert!(
            t.is_granted(3, 0, 1, S) && t.is_granted(4, 0, 1, Is),
            "S and IS together"
        );
        t.unlock(3, 0, 1);
        t.unlock(4, 0, 1);
        assert_eq!((t.heads_in_use(), t.requests()), (0, 0));
    }
}
