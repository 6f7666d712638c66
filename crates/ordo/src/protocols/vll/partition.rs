//! A partition: its TxnQueue and lock state behind one short critical section (Fig. 1).
//!
//! ```text
//!  BeginTransaction(T)   <critical section>            Partition::begin_transaction
//!    T.Type = Free                                       blocked = walls > 0 (someone runs alone)
//!    foreach key: Cs++ / Cx++, Blocked if not granted    S::request for every request, none skipped
//!    TxnQueue.Enqueue(T)                                 queue.enqueue(payload, blocked)
//!  FinishTransaction(T)  <critical section>            Partition::finish_transaction
//!    foreach key: Cs-- / Cx--;  TxnQueue.Remove(T)       S::release for every request T's owner
//!                                                        hands back; queue.remove
//!  front().Type == Blocked → T.Type = Free               Partition::front (lock-free), then
//!                                                        try_take_front (claim + take the parked
//!                                                        transaction, one section)
//!  SCA()                                                 Partition::try_sca_parked (+ claim and
//!                                                        take, same section)
//! ```
//!
//! Everything that can be done outside the critical section is: the lock list is resolved to record
//! slots and deduplicated before entering (`LockScheme::plan`), so the section itself is the
//! counter increments/decrements, the queue append/removal and, while transactions are blocked, two
//! published words. A queue entry holds only what *other* threads need — the state (Free, Blocked,
//! Running), the owner, whether it is a wall, with SCA a copy of its lock list for the scan, and
//! once it has blocked the transaction itself, parked there for any worker to take; the worker that
//! runs T keeps its read and write sets and hands them back to `FinishTransaction` (so without SCA
//! nothing is copied under the latch). A worker that ran a free transaction finishes it inside the
//! critical section of its next `BeginTransaction` (`finish_and_begin`), which may begin a whole
//! admission batch: one latch round trip per batch.
//!
//! The front's sequence number and the blocked count are mirrored in atomics so the main loop can poll
//! them without entering the critical section — written only while some transaction is blocked
//! (the head rule has nothing to do otherwise), so without contention they stay in every core's
//! cache; they sit in a cache-line pair of their own, and the latch in another, since waiters spin
//! on it ([`crate::protocols::kit::latch`]). A transaction that must run **alone** (an interactive
//! one, or one whose ranges are too wide to lock key by key) is a *wall*: it is blocked unless the queue
//! is empty, every transaction enqueued after it is blocked, and SCA never looks past it — so it runs
//! exactly when it reaches the head, and nothing runs beside it.

use super::scheme::LockScheme;
use crate::protocols::kit::latch::Latch;
use crate::protocols::kit::sca::Sca;
use crate::protocols::kit::txn_queue::{Seq, TxnQueue, TxnState, MAX_LANES};
use crate::storage::Database;
use std::any::Any;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A blocked transaction parked beside its queue entry by the worker loop — its program, ticket and lock
/// list, type-erased because the partition does not know the program's type — for whichever worker
/// runs it ([`Partition::park`], [`Partition::try_take_front`], [`Partition::try_sca_parked`]).
pub type Parked = Box<dyn Any + Send>;

/// What [`Partition::try_take_front`] found at the front.
pub enum FrontTake<T> {
    /// A parked blocked transaction, now claimed: the caller runs it.
    Taken(Box<T>),
    /// A parked blocked transaction begun by another worker, left to it (`only`).
    Foreign,
    /// Nothing to take: no front, or a front that is not blocked, not parked yet, or not a `T`.
    Nothing,
}

/// [`Partition::try_sca`] did not run: another thread held the critical section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Busy;

/// What one SCA pass of [`Partition::try_sca`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaPass {
    /// The blocked transaction it found, if any: the caller's, claimed ([`Partition::try_sca`]), or
    /// any parked one, claimed if the caller could take it ([`Partition::try_sca_parked`]).
    pub found: Option<Seq>,
    /// It found none it could take, but passed over a blocked transaction that could have run (see
    /// [`Sca::passed_over`]): another worker's, for [`Partition::try_sca`]'s single caller; for
    /// [`Partition::try_sca_parked`], one not parked yet.
    pub passed_over: bool,
}

/// `front()` when the queue is empty.
pub const NO_FRONT: Seq = u64::MAX;

/// `sca_dry` while no dry pass stands (`finishes` never reaches it): a pass is due.
const NO_DRY: u64 = u64::MAX;

/// What the queue keeps per transaction.
pub struct Queued<R> {
    /// The worker that began the transaction (with SCA, the one whose lock-list pool its copy
    /// returns to).
    pub owner: u32,
    /// Runs alone (a wall).
    pub alone: bool,
    /// A copy of its lock requests, kept only with SCA (which reads other workers' transactions).
    /// Without SCA nobody but the owner needs them, and the owner hands them back to
    /// `FinishTransaction`.
    pub locks: Vec<R>,
    /// Whether the worker loop has parked the blocked transaction itself (in the partition's
    /// `parked` list, beside the queue: the queue's slots stay small): then another worker may run
    /// it (Fig. 4: the idle worker runs what SCA finds; Fig. 1's front: its owner, or an idle
    /// worker). `false` while its owner still holds it, and always for the embedding path's
    /// (`Protocol::execute`: the program is the caller's, on the caller's stack).
    pub parked: bool,
}

/// `repr(C)`: the queue's header first (see [`Partition`]'s layout).
#[repr(C)]
struct Inner<S: LockScheme> {
    queue: TxnQueue<Queued<S::Request>>,
    /// Queued walls. Read by every `BeginTransaction`, written only when a wall comes or goes.
    walls: usize,
    locks: S::State,
    /// Boxed: its 200 kB of bits live elsewhere anyway, and the partition's hot fields stay in one
    /// cache-line pair.
    sca: Option<Box<Sca>>,
    /// The parked transactions ([`Queued::parked`]), by sequence number: few (blocked ones only),
    /// so a list.
    parked: Vec<(Seq, Parked)>,
    /// The published words say that no transaction is blocked ([`Partition::publish`]): while that
    /// stays true they are not written.
    quiet: bool,
    /// The last dry pass ([`Partition::sca_due`]) passed over a runnable transaction that was not
    /// parked yet: parking it makes a pass due again.
    dry_passed_over: bool,
}

/// The lock-list copies a worker recycles for its queue entries (with SCA, see [`Queued::locks`]):
/// copies are made from it *before* the critical section and returned to it by the section that
/// finishes their transactions, so the section itself only moves them.
pub struct CopyPool<R> {
    lists: Vec<Vec<R>>,
}

impl<R> Default for CopyPool<R> {
    fn default() -> Self {
        CopyPool { lists: Vec::new() }
    }
}

impl<R: Copy> CopyPool<R> {
    /// Copies kept at most (the rest are freed after the section that returned them).
    const KEEP: usize = 64;

    /// A copy of `locks` for a queue entry: empty without SCA (nobody else reads it then).
    pub fn copy(&mut self, sca: bool, locks: &[R]) -> Vec<R> {
        if !sca {
            return Vec::new();
        }
        let mut c = self.lists.pop().unwrap_or_default();
        c.clear();
        c.extend_from_slice(locks);
        c
    }

    /// Copies ready for reuse.
    pub fn len(&self) -> usize {
        self.lists.len()
    }

    /// Whether no copy is ready for reuse.
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// Takes back a finished entry's copy (inside the section: a push, nothing freed).
    fn put(&mut self, c: Vec<R>) {
        if c.capacity() > 0 {
            self.lists.push(c);
        }
    }

    /// Frees what is over [`Self::KEEP`] (after the section).
    fn trim(&mut self) {
        self.lists.truncate(Self::KEEP);
    }
}

/// One partition's lock state and TxnQueue.
///
/// Layout, in aligned pairs of cache lines: the published atomics (the only part of the partition
/// other workers poll outside the section; written only under contention, see `Partition::publish`);
/// the latch ([`Latch`]), alone, since its waiters spin on reads of it; then the queue's header (its counter, counts and lane heads), the rest of what a
/// section writes. Nothing else of the partition moves with a section: the queue's entries are in
/// the worker's own lane (see [`TxnQueue`]), and the lock-list copies SCA keeps are made before
/// the section from a pool of the worker's ([`CopyPool`]);
/// what a section only reads (the lanes' address, the wall count, the SCA switch) follows, in lines
/// that stay shared. (`docs/results/vll.md`: ninth pass, a section at 2 workers took ≈ 750 cycles
/// with one ring and this header over three lines, ≈ 650 with everything written in one pair, the
/// latch word included; fourteenth pass, on 16 cores that shared pair cost half the throughput once
/// the waiters spun on it, and at 2 workers the latch's own pair costs nothing measurable.) A test
/// checks the layout.
#[repr(C, align(128))]
pub struct Partition<S: LockScheme> {
    front: AtomicU64,
    blocked: AtomicUsize,
    /// Counts the `FinishTransaction`s that leave a blocked transaction in the queue (kept with SCA
    /// only): only such a finish can make a blocked transaction runnable, so SCA need not run
    /// again until this moves.
    finishes: AtomicU64,
    /// `finishes` as of the last worker-loop SCA pass that found nothing ([`Self::sca_due`]), for
    /// every worker: until a transaction finishes, another pass would find nothing either.
    sca_dry: AtomicU64,
    inner: Latch<Inner<S>>,
    /// With SCA, the bits in each of its arrays (read-only after `new`; [`Self::worker_sca`]); and
    /// then every queue entry carries a copy of its lock list.
    sca_bits: Option<u32>,
}

impl<S: LockScheme> Partition<S> {
    /// A partition; with `sca`, SCA's bit arrays of the paper's size ([`crate::protocols::kit::sca::SCA_BITS`]).
    pub fn new(sca: bool) -> Self {
        Self::with_sca(sca.then_some(crate::protocols::kit::sca::SCA_BITS))
    }

    /// A partition; with `Some(bits)`, SCA with bit arrays of `bits` bits each.
    pub fn with_sca(sca_bits: Option<u32>) -> Self {
        Partition {
            inner: Latch::new(Inner {
                queue: TxnQueue::with_lanes(MAX_LANES),
                locks: S::State::default(),
                walls: 0,
                sca: sca_bits.map(|bits| Box::new(Sca::with_bits(bits))),
                parked: Vec::new(),
                quiet: true,
                dry_passed_over: false,
            }),
            sca_bits,
            front: AtomicU64::new(NO_FRONT),
            blocked: AtomicUsize::new(0),
            finishes: AtomicU64::new(0),
            sca_dry: AtomicU64::new(NO_DRY),
        }
    }

    /// Mirrors the front and the blocked count in the published words — only while some
    /// transaction is blocked, and once more when none is left: the front matters only to the head
    /// rule, which applies to a blocked front, and without contention the words (and their cache
    /// lines) then stay untouched, shared by every core instead of moving with each section.
    fn publish(&self, inner: &mut Inner<S>) {
        let blocked = inner.queue.blocked();
        if blocked == 0 && inner.quiet {
            return;
        }
        inner.quiet = blocked == 0;
        self.front
            .store(inner.queue.front().unwrap_or(NO_FRONT), Ordering::Release);
        self.blocked.store(blocked, Ordering::Release);
    }

    /// Counts a finish for SCA (inside the critical section, so a plain increment suffices) — one
    /// that leaves a blocked transaction behind: SCA runs only while some are blocked, and only a
    /// finish in their presence can make one runnable. Without contention the count, like the
    /// other published words, stays untouched.
    #[inline]
    fn count_finish(&self, inner: &Inner<S>) {
        if inner.sca.is_some() && inner.queue.blocked() > 0 {
            let n = self.finishes.load(Ordering::Relaxed);
            self.finishes.store(n + 1, Ordering::Release);
        }
    }

    /// `BeginTransaction`: requests every lock in `locks` and enqueues the transaction. Returns its
    /// sequence number and whether it is blocked.
    pub fn begin_transaction(
        &self,
        db: &Database<S::Meta>,
        owner: u32,
        locks: &[S::Request],
        alone: bool,
    ) -> (Seq, bool) {
        let copy = CopyPool::default().copy(self.sca_bits.is_some(), locks);
        let mut g = self.inner.lock();
        let r = Self::begin_locked(&mut g, db, owner, locks, alone, copy);
        self.publish(&mut g);
        r
    }

    /// `FinishTransaction` for every transaction in `finish`, then `BeginTransaction` for every one in
    /// `begin` (its lock requests, whether it runs alone, and its entry's copy of the requests from
    /// `pool`, [`CopyPool::copy`], made before the call), in order, in **one** critical section: a
    /// worker releases the free transactions it ran and enqueues its next ones with a single latch
    /// acquisition. The outcome of each begin, `(seq, blocked)`, is appended to `out` in order; the
    /// finished entries' copies go back to `pool`. Returns
    /// the number of blocked transactions it left in the queue (the caller's view of "TxnQueue is
    /// full" until its next critical section).
    ///
    /// Admitting several transactions in one section is the same as admitting them one after another
    /// with nobody else's section in between: queue order is still lock-request order, and a
    /// transaction of the batch that conflicts with an earlier one of the same batch is blocked behind
    /// it like any other.
    pub fn finish_and_begin<'a>(
        &self,
        db: &Database<S::Meta>,
        finish: impl IntoIterator<Item = (Seq, &'a [S::Request])>,
        owner: u32,
        begin: impl IntoIterator<Item = (&'a [S::Request], bool, Vec<S::Request>)>,
        out: &mut Vec<(Seq, bool)>,
        pool: &mut CopyPool<S::Request>,
    ) -> usize {
        let mut g = self.inner.lock();
        let inner = &mut *g;
        for (seq, held) in finish {
            pool.put(Self::finish_locked(inner, db, seq, held));
            self.count_finish(inner);
        }
        for (locks, alone, copy) in begin {
            out.push(Self::begin_locked(inner, db, owner, locks, alone, copy));
        }
        self.publish(inner);
        let blocked = inner.queue.blocked();
        drop(g);
        pool.trim();
        blocked
    }

    fn begin_locked(
        inner: &mut Inner<S>,
        db: &Database<S::Meta>,
        owner: u32,
        locks: &[S::Request],
        alone: bool,
        copy: Vec<S::Request>,
    ) -> (Seq, bool) {
        debug_assert!(inner.sca.is_none() || copy.len() == locks.len());
        let mut blocked = inner.walls > 0 || (alone && !inner.queue.is_empty());
        for r in locks {
            // No short-circuit: every request is counted, granted or not.
            blocked |= !S::request(&mut inner.locks, db, r);
        }
        if alone {
            inner.walls += 1;
        }
        let seq = inner.queue.enqueue_in(
            owner,
            Queued {
                owner,
                alone,
                locks: copy,
                parked: false,
            },
            blocked,
        );
        (seq, blocked)
    }

    /// `FinishTransaction`: releases the locks of transaction `seq` — `locks`, exactly the requests it
    /// began with — and removes it from the queue.
    pub fn finish_transaction(&self, db: &Database<S::Meta>, seq: Seq, locks: &[S::Request]) {
        let mut g = self.inner.lock();
        let copy = Self::finish_locked(&mut g, db, seq, locks);
        self.count_finish(&g);
        self.publish(&mut g);
        drop(g);
        drop(copy);
    }

    /// How many transactions have finished while others were blocked: SCA need not rerun a pass
    /// that found nothing until this moves.
    #[inline]
    pub fn finishes(&self) -> u64 {
        self.finishes.load(Ordering::Acquire)
    }

    /// Whether a worker-loop SCA pass ([`Self::try_sca_parked`]) may find something: not while the
    /// last one found nothing and no transaction has finished since (enqueues add only younger,
    /// blocked transactions, whose conflicts are all still there). One dry pass stands for every
    /// worker: on 16 cores, each idle worker rerunning it after each finish kept the latch so busy
    /// that `vll-sca` ran at a fifth of `vll` (`docs/results/vll.md`, eighteenth pass).
    #[inline]
    pub fn sca_due(&self) -> bool {
        self.finishes() != self.sca_dry.load(Ordering::Acquire)
    }

    /// SCA bit arrays for one worker's passes ([`Self::try_sca_parked`]), sized as the partition's
    /// (the queue caches each entry's hashed offsets, which depend on the size); `None` without
    /// SCA. Each worker scanning with arrays of its own keeps their lines in its own cache: shared
    /// arrays, set and cleared by whichever worker scanned last, came to every pass from another
    /// core.
    pub fn worker_sca(&self) -> Option<Sca> {
        self.sca_bits.map(Sca::with_bits)
    }

    /// Returns the entry's copy of the lock list (empty without SCA), for the caller to recycle or
    /// free outside the section.
    #[must_use]
    fn finish_locked(
        inner: &mut Inner<S>,
        db: &Database<S::Meta>,
        seq: Seq,
        locks: &[S::Request],
    ) -> Vec<S::Request> {
        let q = inner
            .queue
            .remove(seq)
            .expect("finishing a transaction that is not in the TxnQueue");
        debug_assert!(!q.parked, "a parked transaction is taken before it runs");
        assert!(
            inner.sca.is_none() || q.locks.len() == locks.len(),
            "FinishTransaction must release exactly the locks its BeginTransaction requested"
        );
        for r in locks {
            S::release(&mut inner.locks, db, r);
        }
        if q.alone {
            inner.walls -= 1;
        }
        q.locks
    }

    /// The oldest transaction in the queue ([`NO_FRONT`] if none), without entering the critical
    /// section — kept current only while a transaction is blocked (see `publish`): with
    /// none blocked it may name a finished one, and the head rule has nothing to do anyway.
    #[inline]
    pub fn front(&self) -> Seq {
        self.front.load(Ordering::Acquire)
    }

    /// Blocked transactions in the queue, without entering the critical section.
    #[inline]
    pub fn blocked(&self) -> usize {
        self.blocked.load(Ordering::Acquire)
    }

    /// Unblocks `seq` (the head rule's `T.Type = Free`); `true` exactly once.
    pub fn claim(&self, seq: Seq) -> bool {
        let mut g = self.inner.lock();
        let ok = g.queue.claim(seq);
        self.publish(&mut g);
        ok
    }

    /// Runs SCA for `owner`: the oldest blocked transaction of `owner` that conflicts with no older
    /// transaction, already claimed. `None` without SCA, or when there is none (or a wall is in the way).
    pub fn sca(&self, owner: u32) -> Option<Seq> {
        let mut g = self.inner.lock();
        self.sca_locked(&mut g, owner).found
    }

    /// [`Self::sca`] only if the critical section is free right now: `Err(Busy)` if another thread
    /// is in it. SCA is for a worker that would otherwise idle, and a busy latch means some other
    /// worker is making progress (beginning, finishing, or running SCA itself); queueing behind it
    /// for a scan only lengthens the line for the workers with real work, and with many idle workers
    /// their scans would follow each other through the latch.
    pub fn try_sca(&self, owner: u32) -> Result<ScaPass, Busy> {
        let mut g = self.inner.try_lock().ok_or(Busy)?;
        Ok(self.sca_locked(&mut g, owner))
    }

    /// SCA for `owner`'s own transactions that it still holds (not parked: a parked one must be
    /// taken with its entry, [`Self::try_sca_parked`]); claims what it finds.
    fn sca_locked(&self, inner: &mut Inner<S>, owner: u32) -> ScaPass {
        let pass = Self::sca_pass(inner, None, |q| q.owner == owner && !q.parked);
        if let Some(seq) = pass.found {
            let claimed = inner.queue.claim(seq);
            debug_assert!(claimed);
            self.publish(inner);
        }
        pass
    }

    /// One SCA pass (Fig. 4) over the queue, picking among the `eligible` blocked transactions,
    /// with the caller's bit arrays `own` if given, else the partition's; claims nothing.
    fn sca_pass(
        inner: &mut Inner<S>,
        own: Option<&mut Sca>,
        eligible: impl FnMut(&Queued<S::Request>) -> bool,
    ) -> ScaPass {
        let mut pass = ScaPass {
            found: None,
            passed_over: false,
        };
        // A wall is a barrier nothing may pass: while one is queued SCA finds nothing.
        let Inner {
            queue, walls, sca, ..
        } = inner;
        let Some(sca) = sca.as_deref_mut().filter(|_| *walls == 0) else {
            return pass;
        };
        let sca = match own {
            Some(own) => {
                debug_assert_eq!(own.bits(), sca.bits(), "worker_sca sizes it");
                own
            }
            None => sca,
        };
        pass.found = queue.sca(sca, eligible, |q, f| {
            q.locks.iter().for_each(|r| S::sca_keys(r, f))
        });
        pass.passed_over = sca.passed_over();
        pass
    }

    /// Parks blocked transactions with their queue entries (`(seq, parked)`, one critical section for
    /// all), so that any worker may run them: the worker loop parks every transaction of its that
    /// blocks, at once. Nobody else claims a transaction before it is parked.
    pub fn park(&self, parked: impl IntoIterator<Item = (Seq, Parked)>) {
        let mut g = self.inner.lock();
        let inner = &mut *g;
        for (seq, p) in parked {
            debug_assert_eq!(inner.queue.state(seq), Some(TxnState::Blocked));
            let q = inner
                .queue
                .payload_mut(seq)
                .expect("parking a transaction that is not in the TxnQueue");
            debug_assert!(!q.parked, "parked twice");
            q.parked = true;
            inner.parked.push((seq, p));
        }
        if inner.dry_passed_over {
            inner.dry_passed_over = false;
            self.sca_dry.store(NO_DRY, Ordering::Release);
        }
    }

    /// Fig. 1's head rule: if the front is a blocked transaction parked as a `T` — and begun by
    /// `only`, if given — claims it and takes it out of its entry. `Err(Busy)` if another thread
    /// holds the critical section (the caller tries again on a later turn).
    pub fn try_take_front<T: Any>(&self, only: Option<u32>) -> Result<FrontTake<T>, Busy> {
        let mut g = self.inner.try_lock().ok_or(Busy)?;
        let inner = &mut *g;
        let Some(seq) = inner.queue.front() else {
            return Ok(FrontTake::Nothing);
        };
        if let Some(owner) = only {
            match inner.queue.payload_mut(seq) {
                Some(q) if q.parked && q.owner != owner => return Ok(FrontTake::Foreign),
                _ => {}
            }
        }
        Ok(match Self::take_parked::<T>(inner, seq) {
            Some(t) => {
                self.publish(inner);
                FrontTake::Taken(t)
            }
            None => FrontTake::Nothing,
        })
    }

    /// [`Self::try_sca`] for the worker loop: the oldest parked blocked transaction, anyone's, that
    /// conflicts with no older one — Fig. 4 as the paper runs it — claimed and taken if it is a `T`
    /// (workers drawing from sources of different program types do not run each other's). Scans
    /// with the worker's own bit arrays `sca` ([`Self::worker_sca`]). A pass that takes nothing
    /// makes passes not due ([`Self::sca_due`]) until the next finish.
    pub fn try_sca_parked<T: Any>(&self, sca: &mut Sca) -> Result<(ScaPass, Option<Box<T>>), Busy> {
        let mut g = self.inner.try_lock().ok_or(Busy)?;
        let inner = &mut *g;
        let pass = Self::sca_pass(inner, Some(sca), |q| q.parked);
        let taken = pass
            .found
            .and_then(|seq| Self::take_parked::<T>(inner, seq));
        if taken.is_some() {
            self.publish(inner);
        } else {
            // `finishes` moves only inside the section: this is the epoch the pass saw.
            inner.dry_passed_over = pass.passed_over;
            self.sca_dry
                .store(self.finishes.load(Ordering::Relaxed), Ordering::Release);
        }
        Ok((pass, taken))
    }

    /// Claims blocked transaction `seq` and takes it out of its entry, if it is parked as a `T`.
    fn take_parked<T: Any>(inner: &mut Inner<S>, seq: Seq) -> Option<Box<T>> {
        if inner.queue.state(seq) != Some(TxnState::Blocked) {
            return None;
        }
        let i = inner
            .parked
            .iter()
            .position(|(s, p)| *s == seq && p.is::<T>())?;
        let t = inner.parked.swap_remove(i).1.downcast::<T>().ok()?;
        inner.queue.payload_mut(seq)?.parked = false;
        let claimed = inner.queue.claim(seq);
        debug_assert!(claimed);
        Some(t)
    }

    /// Parked transactions waiting in the queue (the worker loop ends only when there are none).
    pub fn parked(&self) -> usize {
        self.inner.lock().parked.len()
    }

    /// Transactions in the queue and each one's state (tests, diagnostics).
    pub fn snapshot(&self) -> Vec<(Seq, TxnState)> {
        self.inner
            .lock()
            .queue
            .iter()
            .map(|(s, st, _)| (s, st))
            .collect()
    }

    /// Runs `f` on the lock state inside the critical section (tests: counter states).
    pub fn with_locks<T>(&self, f: impl FnOnce(&S::State) -> T) -> T {
        f(&self.inner.lock().locks)
    }
}

#[cfg(all(test, not(ordo_loom)))]
mod tests {
    use super::*;
    use crate::protocols::kit::counters::Colocated;
    use crate::protocols::kit::lock_request::LockRequest;
    use crate::protocols::vll::scheme::PointLocks;

    #[test]
    fn the_latch_has_a_line_pair_of_its_own_between_the_published_words_and_the_queue_header() {
        let p = Partition::<PointLocks<Colocated>>::new(true);
        let at = |r: usize| r - &p as *const _ as usize;
        // SAFETY: the raw latch is only looked at, not locked or unlocked.
        let latch = at(unsafe { p.inner.raw() } as *const _ as usize);
        let g = p.inner.lock();
        let queue = at(&g.queue as *const _ as usize);
        let pair = |offset: usize| offset / 128;
        for (name, offset) in [
            ("front", at(&p.front as *const _ as usize)),
            ("blocked", at(&p.blocked as *const _ as usize)),
            ("finishes", at(&p.finishes as *const _ as usize)),
        ] {
            assert_eq!(pair(offset), 0, "{name} at byte {offset}");
        }
        assert_eq!(latch, 128, "the latch starts its own pair");
        assert_eq!(
            std::mem::size_of::<crate::protocols::kit::latch::RawSpinLatch>(),
            128
        );
        let header_end = queue + TxnQueue::<Queued<LockRequest>>::WRITTEN_HEADER - 1;
        assert_eq!(pair(queue), 2, "queue header at byte {queue}");
        assert_eq!(
            pair(header_end),
            2,
            "queue header ends at byte {header_end}"
        );
        assert_eq!(
            std::mem::align_of::<Partition<PointLocks<Colocated>>>(),
            128
        );
    }
}
