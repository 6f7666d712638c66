//! Serializable SI's conflict detection: `markConflict`, the commit check, SIREAD locks (point and
//! range) and the retention and cleanup of committed transactions (Cahill, thesis ch. 3).
//!
//! ## From the thesis to this file
//!
//! ```text
//!  Fig 3.1 begin(T): T.inConflict = T.outConflict = false     Conflicts::default (state.rs)
//!  Fig 3.2 commit(T): atomic { if unsafe: abort;               SsiShared::commit (latch, or own mutex)
//!                               mark T committed }
//!          keep SIREAD locks, suspend T                        SsiShared::retain_and_cleanup
//!          clean up transactions older than every active one   (same, one queue lock)
//!  Fig 3.3 markConflict(reader, writer)                        SsiShared::mark_conflict
//!  Fig 3.4 read: SIREAD lock, EXCLUSIVE-lock check,            txn.rs `read_checks` + SsiShared::siread
//!                newer-version check
//!  Fig 3.5 write: for each SIREAD lock: markConflict           txn.rs `write_checks`
//!  §3.5   gap locks for phantoms                               SsiShared::add_range / check_ranges
//! ```
//!
//! ## The commit-ordering refinement (§3.6) — exact, with the notes' fix
//!
//! Fekete et al.: every cycle of a non-serializable SI history contains `T_in →rw T_pivot →rw T_out`
//! where `T_out` commits first of the cycle. Instead of Cahill's two markers (which lose the ordering
//! when they become self-references) each transaction keeps its full lists of in- and out-conflicts, and
//! a pivot is **dangerous** when some committed `T_out` committed before the pivot and no later than some
//! live `T_in` (a running transaction's commit time is +∞):
//!
//! ```text
//!  dangerous(P) ⇔ ∃ o ∈ P.outs committed, cts(o) < cts(P),  ∃ i ∈ P.ins not aborted/doomed, cts(o) ≤ cts(i)
//! ```
//!
//! This keeps "the earliest commit time among committed out-conflicts" as the notes (and PostgreSQL) do,
//! so the constructed schedule of the notes aborts while the false positive of item 6 commits.
//!
//! ## Optimizations (§3.7)
//! * **early abort**: `markConflict` checks both ends as pivots at once; a dangerous pivot that is the
//!   caller aborts now, another running one is **doomed** (aborts at its next step);
//! * **victim selection**: the pivot, unless it already committed — then the reader `T_in` (the caller);
//! * no conflicts are recorded with aborted or doomed transactions;
//! * **SIREAD → EXCLUSIVE upgrade**: a write drops its own SIREAD lock on the record (txn.rs);
//! * (not taken: Cahill retains a transaction after commit only if it holds SIREAD locks or has
//!   out-conflicts; here every committed transaction stays until the horizon passes it, because its
//!   record is recycled once released and a later reader of an older version still needs its
//!   commit time.)
//!
//! ## Synchronization
//! * markConflict and the commit check run under one latch (Cahill's "appropriate system latch"), so
//!   "check the markers, then mark committed" is one step with respect to every markConflict; a
//!   commit timestamp is taken inside it. The exception is a transaction with no out-conflict,
//!   which cannot be a dangerous pivot: it commits under its own `conflicts` mutex only (the
//!   argument is at [`SsiShared::commit`]); a latched check therefore takes its own timestamp
//!   first and waits for an out-conflict caught in `COMMITTING`. Every conflict-list change and every doom also holds the
//!   target's `conflicts` mutex. A worker retains its newest committed transactions in a private
//!   queue, with no lock, and moves them to its shared queue (which sweepers reach) only when more
//!   than [`PRIVATE`] pile up or the worker ends ([`Retainer`]); the shared queue is locked while
//!   it holds something, and releases run under it (no one takes a queue lock while holding a
//!   record's or a table's mutex, and a sweeper only `try_lock`s another worker's queue).
//!   Cleanup releases a committed transaction whose lists nothing ever touched (most of them) without
//!   its `conflicts` mutex: once the horizon has passed it no transaction can reach it any more
//!   (`TxnShared::retire_settled` has the argument).
//!   Dooming another transaction (`Handle::doom`) is a compare-and-swap
//!   ACTIVE → DOOMED, so it can neither undo an abort nor hit a transaction that is committing.
//! * Transactions refer to each other through [`Handle`]s (see `state`): a check of another
//!   transaction's status reads its record and validates the id, with no shared counter written.
//!   A handle whose record has been released (its `id` reset under the record's `conflicts` mutex,
//!   see `state`) or recycled names a *released* transaction: one that aborted, or
//!   committed at or before the horizon (so it overlaps no running transaction), and whose traces
//!   are gone. A committed transaction is never released earlier — not even a pure writer with no
//!   SIREAD lock, which Cahill need not suspend: a later reader must still find its commit time
//!   through the versions it created (the notes' point), and a pivot through its out-conflicts. Such a transaction can take part in no new rw-edge, and in the checks below:
//!   - a **running** pivot's committed out-conflicts committed after its snapshot, hence after the
//!     horizon, so they are never released while it runs: a released out-conflict of a running
//!     pivot had aborted, and is ignored; likewise its in-conflicts;
//!   - a **committed** pivot's only needed fact — the earliest commit time among its out-conflicts
//!     that committed before it — is fixed at its commit (no later out-conflict can commit before
//!     it) and kept in the pivot itself (`out_first`, set under the latch before it is marked
//!     committed), so releasing those out-conflicts loses nothing.

use super::record::bump;
use super::spin::SpinMutex;
use super::state::{Handle, TxnShared, ABORTED, ACTIVE, COMMITTED, COMMITTING, DOOMED, INFINITY};
use crate::check::TxnId;
use crate::storage::TableId;
use crate::txn::{Abort, AbortReason, TxResult};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, RwLock};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

/// A range SIREAD lock: the owner read every key in `lo..=hi` of a table (and saw which were absent).
#[derive(Debug)]
pub struct RangeLock {
    pub lo: u64,
    pub hi: u64,
    pub owner: Handle,
}

/// The range SIREAD locks of one table.
#[derive(Debug, Default)]
struct Ranges {
    count: AtomicUsize,
    locks: Mutex<Vec<RangeLock>>,
}

/// SSI state shared by all transactions of a protocol instance.
#[derive(Debug)]
pub struct SsiShared {
    /// Makes markConflict atomic with the commit check (the thesis's "appropriate system latch"): a
    /// spin lock, as a parking mutex would put a committer to sleep (a system call) whenever two
    /// commits meet, which at these rates costs more than the critical section many times over.
    latch: SpinMutex<()>,
    ranges: Box<[Ranges]>,
    /// Every worker's [`Retained`] queue (for the occasional sweep and the statistics).
    workers: RwLock<Vec<Arc<Retained>>>,
    /// How many workers have registered: a sweeping worker copies `workers` again only when this
    /// moved (reading the lock word at every sweep moved its line between the cores).
    registered: AtomicUsize,
}

/// How often (in commits) a worker also cleans up the other workers' queues, so an idle worker's
/// retained transactions are released too. Rarely: a sweep touches lines the other workers write
/// (their queue locks, their transaction records).
pub const SWEEP: u32 = 64;

/// The most committed transactions a worker keeps in its private queue (see [`Retainer`]) before
/// it hands them to its shared one.
pub const PRIVATE: usize = 8;

/// One worker's committed transactions kept for later conflict detection (Cahill's suspended
/// transactions), oldest first, as the other workers can reach them, and its count of the point
/// SIREAD locks they hold. The worker's own side is its [`Retainer`].
///
/// Each worker retains its own transactions and releases them at its next commits, so the queue,
/// the counter and the released records stay in that worker's cache (a global queue was a shared
/// mutex taken twice per transaction); every [`SWEEP`]-th commit it also sweeps the other queues.
#[derive(Debug, Default)]
pub struct Retained {
    /// Each with the number of point SIREAD locks it took.
    queue: CachePadded<SpinMutex<VecDeque<(Handle, usize)>>>,
    /// Point SIREAD locks of committed transactions not yet released, counted at commit (not per
    /// read) and decremented by whoever releases them, each in its own counter (so only its worker
    /// writes it): only the sum over workers means anything.
    sireads: AtomicI64,
    /// The private queue's length after the worker's last commit (for the statistics).
    private: AtomicUsize,
    /// The shared queue's length when it was last unlocked (written under its lock, seldom: so
    /// sweepers read it from a line that stays put, and pass over empty queues).
    queued: CachePadded<AtomicUsize>,
    /// A worker holds these queues; an ended worker's go to the next worker that registers (with
    /// what it handed over, which the new holder's commits and the sweeps release).
    taken: AtomicBool,
}

/// A worker's side of retention: its shared queue ([`Retained`]), its **private** queue of the
/// newest retained transactions, and the other workers' queues as it last copied them.
///
/// The worker pushes to and releases from the private queue with no lock and no write another
/// core reads: at two threads a commit usually retains the transaction it commits and releases the
/// one before, so it holds one or two. Once it holds more than [`PRIVATE`] (a long reader holds
/// the horizon back), and when the worker ends, they move to the shared queue, where sweepers
/// reach them (and which the worker itself locks at every commit until it is empty again): a
/// worker that falls idle leaves at most [`PRIVATE`] transactions that only its next commit
/// releases.
#[derive(Debug)]
pub struct Retainer {
    shared: Arc<Retained>,
    recent: VecDeque<(Handle, usize)>,
    /// The registered queues (this worker's included), copied when `SsiShared::registered` moves.
    peers: Vec<Arc<Retained>>,
    seen: usize,
    /// Commits so far (every [`SWEEP`]-th also sweeps the other workers' queues).
    commits: u32,
}

impl Retainer {
    /// The worker's shared queue.
    pub fn shared(&self) -> &Retained {
        &self.shared
    }

    /// Publishes the private queue's length for the statistics (a store only when it changed).
    #[inline]
    fn publish_private(&self) {
        let private = &self.shared.private;
        if private.load(Ordering::Relaxed) != self.recent.len() {
            private.store(self.recent.len(), Ordering::Relaxed);
        }
    }
}

impl Drop for Retainer {
    /// A worker that ends hands its private queue to its shared one, where the other workers'
    /// sweeps release it (a session that ends must not leave range locks behind).
    fn drop(&mut self) {
        if !self.recent.is_empty() {
            let mut q = self.shared.queue.lock();
            q.extend(self.recent.drain(..));
            self.shared.queued.store(q.len(), Ordering::Relaxed);
        }
        self.publish_private();
        self.shared.taken.store(false, Ordering::Release);
    }
}

#[inline]
fn unsafe_abort() -> Abort {
    Abort::new(AbortReason::Unsafe)
}

/// Whether a SIREAD lock of `owner` makes a write by `writer` (whose snapshot is `begin`) an
/// rw-conflict worth recording (Fig 3.5: "owner uncommitted or committed after begin(writer)", and
/// §3.7: not aborted or doomed).
#[inline]
pub fn relevant(owner: &Handle, writer: TxnId, begin: u64) -> bool {
    owner.id != writer
        && match owner.state() {
            Some((ACTIVE | COMMITTING, _)) => true,
            Some((COMMITTED, cts)) => cts > begin,
            _ => false,
        }
}

/// The state of `o` once it is not `COMMITTING`: a transaction in that state has taken (or is
/// taking) its commit timestamp and will publish it, or abort, within a few instructions — a
/// latch-free commit (see [`SsiShared::commit`]) or a latched commit that failed its check — and
/// holds nothing the caller may hold while it finishes. Without the wait, a latch holder could
/// read an out-conflict as running although its timestamp is already below the caller's.
fn settled(o: &Handle) -> Option<(u8, u64)> {
    let mut spins = 0u32;
    loop {
        match o.state() {
            Some((COMMITTING, _)) => {
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            s => return s,
        }
    }
}

/// The earliest commit time below `before` among `outs` (the out-conflicts of a transaction not yet
/// committed, so a released one had aborted: see the module doc), or [`INFINITY`].
fn earliest_committed(outs: &[Handle], before: u64) -> u64 {
    outs.iter()
        .filter_map(|o| match settled(o) {
            Some((COMMITTED, cts)) if cts < before => Some(cts),
            _ => None,
        })
        .min()
        .unwrap_or(INFINITY)
}

/// The §3.6 test with the notes' fix on `p`'s conflict lists, for a pivot that has not committed
/// (or is committing at `before`): a `T_out` committed first and a `T_in` that did not commit before
/// it. Returns whether `p` is dangerous and its earliest committed out-conflict.
fn dangerous_lists(c: &super::state::Conflicts, before: u64) -> (bool, u64) {
    let out_first = earliest_committed(&c.outs, before);
    let dangerous = out_first != INFINITY
        && c.ins.iter().any(|i| match i.state() {
            Some((ACTIVE | COMMITTING, _)) => true,
            Some((COMMITTED, cts)) => out_first <= cts,
            _ => false,
        });
    (dangerous, out_first)
}

/// [`dangerous_lists`] for a running pivot `p`. Call under the latch.
fn dangerous(p: &Handle) -> bool {
    p.with_conflicts(|c| dangerous_lists(c, INFINITY).0)
        .unwrap_or(false)
}

/// Alive: neither aborted, doomed nor released.
#[inline]
fn alive(s: Option<(u8, u64)>) -> Option<(u8, u64)> {
    s.filter(|s| matches!(s.0, ACTIVE | COMMITTING | COMMITTED))
}

impl SsiShared {
    pub fn new(tables: usize) -> Self {
        SsiShared {
            latch: SpinMutex::new(()),
            ranges: (0..tables).map(|_| Ranges::default()).collect(),
            workers: RwLock::new(Vec::new()),
            registered: AtomicUsize::new(0),
        }
    }

    /// Cahill Fig 3.3 (with §3.6 and §3.7): records `reader →rw writer` or aborts. `me` is the running
    /// caller (the reader or the writer); `Err` means `me` must abort as unsafe.
    pub fn mark_conflict(&self, reader: Handle, writer: Handle, me: &TxnShared) -> TxResult<()> {
        if reader.id == writer.id {
            return Ok(());
        }
        let _latch = self.latch.lock();
        if me.status() == DOOMED {
            return Err(unsafe_abort());
        }
        let (Some(r), Some(w)) = (alive(reader.state()), alive(writer.state())) else {
            return Ok(());
        };
        // The writer already committed as a pivot whose T_out committed before it: the reader is T_in
        // (the reader is the caller, running, or it could not meet a committed writer).
        if w.0 == COMMITTED {
            let reader_cts = if r.0 == COMMITTED { r.1 } else { INFINITY };
            if writer
                .out_first()
                .is_some_and(|o| o < w.1 && o <= reader_cts)
            {
                return Err(unsafe_abort());
            }
        }
        let added = reader.with_conflicts(|rc| {
            if rc.outs.contains(&writer) {
                // The edge is already known: nothing new to record or check.
                return false;
            }
            rc.outs.push(writer);
            true
        });
        if added != Some(true) {
            return Ok(());
        }
        writer.with_conflicts(|wc| wc.ins.push(reader));
        // Early abort (§3.7): either end may now be a dangerous pivot; the victim is that pivot.
        for p in [reader, writer] {
            if p.status() != Some(COMMITTED) && dangerous(&p) {
                if p.id == me.handle().id {
                    return Err(unsafe_abort());
                }
                p.doom();
            }
        }
        Ok(())
    }

    /// Cahill Fig 3.2, the atomic part: refuses to commit a dangerous pivot, else marks `me` committed at
    /// the timestamp `cts()` hands out (taken under the latch, so the check and the commit are one step).
    ///
    /// A transaction without out-conflicts commits without the latch, holding only its own
    /// `conflicts` mutex: it cannot be a dangerous pivot now (no `T_out`), nor later — an
    /// out-conflict added after this check is pushed under the same mutex, so after it is committed,
    /// by a writer still running, which therefore commits after it (not "first", §3.6). Dooming it
    /// also needs that mutex, so it cannot be doomed half-way. It may, however, be some pivot's
    /// `T_out` and take its timestamp while that pivot's check runs under the latch: so the latched
    /// path takes its own timestamp *before* its check, and every check waits for an out-conflict
    /// in `COMMITTING` to settle (`settled`) — otherwise a pivot could read its `T_out` as running,
    /// commit after it, and record no `out_first` (found in review; test
    /// `a_t_out_committing_without_the_latch_is_seen_by_the_pivot`).
    ///
    /// A transaction that made no tracked read (`tracked` false: no SIREAD or range lock, no read
    /// that could meet a newer version) has no out-conflict and can get none: every out-conflict
    /// is added either by its own tracked read or by a writer that found one of its SIREAD or range
    /// locks. So it commits without even its own mutex; only a doom can race with it, and the
    /// compare-and-swap ACTIVE → COMMITTING settles that (dooming is ACTIVE → DOOMED).
    ///
    /// The untracked path (most transactions of write-heavy workloads) is inlined into the caller;
    /// the rest is `commit_tracked`.
    #[inline]
    pub fn commit(
        &self,
        me: &TxnShared,
        tracked: bool,
        cts: impl FnOnce() -> u64,
    ) -> TxResult<u64> {
        if !tracked {
            if !me.try_begin_commit() {
                return Err(unsafe_abort());
            }
            let t = cts();
            me.set_committed(t);
            return Ok(t);
        }
        self.commit_tracked(me, cts)
    }

    /// [`Self::commit`] for a transaction that made a tracked read.
    #[inline(never)]
    fn commit_tracked(&self, me: &TxnShared, cts: impl FnOnce() -> u64) -> TxResult<u64> {
        {
            let c = me.conflicts.lock();
            if c.outs.is_empty() {
                if me.status() == DOOMED {
                    return Err(unsafe_abort());
                }
                me.set_status(COMMITTING);
                let t = cts();
                me.set_out_first(INFINITY);
                me.set_committed(t);
                return Ok(t);
            }
        }
        let _latch = self.latch.lock();
        let h = me.handle();
        if me.status() == DOOMED {
            return Err(unsafe_abort());
        }
        // The timestamp comes before the check: an out-conflict committing without the latch either
        // took its timestamp first — then it is visible as COMMITTING or COMMITTED now, and
        // `settled` reads its timestamp — or it commits after `t`, and is not "first" (§3.6).
        // A failed check wastes `t`; the caller aborts, and a reader waiting for this commit to
        // settle sees the abort.
        me.set_status(COMMITTING);
        let t = cts();
        let (dangerous, out_first) = h
            .with_conflicts(|c| dangerous_lists(c, t))
            .unwrap_or((false, INFINITY));
        if dangerous {
            return Err(unsafe_abort());
        }
        me.set_out_first(out_first);
        me.set_committed(t);
        Ok(t)
    }

    /// Whether `me` was doomed by another transaction's markConflict.
    #[inline]
    pub fn doomed(&self, me: &TxnShared) -> TxResult<()> {
        if me.status() == DOOMED {
            Err(unsafe_abort())
        } else {
            Ok(())
        }
    }

    /// Range SIREAD lock on `lo..=hi` of `table` (§3.5: a scan, or a read of a key never indexed). Taken
    /// *before* the scan walks the index, so any insert either sees the lock or is seen by the scan.
    pub fn add_range(&self, table: TableId, lo: u64, hi: u64, me: Handle) {
        let r = &self.ranges[table as usize];
        let mut locks = r.locks.lock();
        if locks
            .iter()
            .any(|l| l.owner.id == me.id && l.lo <= lo && hi <= l.hi)
        {
            return;
        }
        locks.push(RangeLock { lo, hi, owner: me });
        r.count.store(locks.len(), Ordering::Release);
    }

    /// Fig 3.5 for range locks: a write (insert, delete, update) of `key` conflicts with every range
    /// SIREAD lock covering it. Called after the writer holds the record's EXCLUSIVE lock.
    #[inline]
    pub fn check_ranges(
        &self,
        table: TableId,
        key: u64,
        writer: &TxnShared,
        begin: u64,
    ) -> TxResult<()> {
        if self.ranges[table as usize].count.load(Ordering::Acquire) == 0 {
            return Ok(());
        }
        self.check_ranges_held(table, key, writer, begin)
    }

    /// [`Self::check_ranges`] when the table has range locks.
    #[inline(never)]
    fn check_ranges_held(
        &self,
        table: TableId,
        key: u64,
        writer: &TxnShared,
        begin: u64,
    ) -> TxResult<()> {
        let h = writer.handle();
        let r = &self.ranges[table as usize];
        let locks = r.locks.lock();
        for l in locks.iter() {
            if l.lo <= key && key <= l.hi && relevant(&l.owner, h.id, begin) {
                self.mark_conflict(l.owner, h, writer)?;
            }
        }
        Ok(())
    }

    /// Range locks held.
    pub fn range_locks(&self) -> usize {
        self.ranges
            .iter()
            .map(|r| r.count.load(Ordering::Relaxed))
            .sum()
    }

    /// The retention queues of a new worker: an ended worker's if there is one (so the list every
    /// sweep walks grows with the most workers alive at once), else new ones.
    pub fn register(&self) -> Retainer {
        let retainer = |shared: Arc<Retained>, workers: &Vec<Arc<Retained>>| Retainer {
            shared,
            recent: VecDeque::new(),
            peers: workers.clone(),
            seen: workers.len(),
            commits: 0,
        };
        {
            let workers = self.workers.read();
            let free = workers.iter().find(|w| {
                w.taken
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            });
            if let Some(w) = free {
                return retainer(w.clone(), &workers);
            }
        }
        let shared = Arc::new(Retained {
            taken: AtomicBool::new(true),
            ..Retained::default()
        });
        let mut workers = self.workers.write();
        workers.push(shared.clone());
        self.registered.store(workers.len(), Ordering::Release);
        retainer(shared, &workers)
    }

    /// Retention queues registered (the most workers alive at once).
    pub fn queues(&self) -> usize {
        self.registered.load(Ordering::Relaxed)
    }

    /// Committed transactions retained.
    pub fn retained(&self) -> usize {
        self.workers
            .read()
            .iter()
            .map(|w| w.queue.lock().len() + w.private.load(Ordering::Relaxed))
            .sum()
    }

    /// Point SIREAD locks held by committed transactions not yet released.
    pub fn sireads(&self) -> i64 {
        self.workers
            .read()
            .iter()
            .map(|w| w.sireads.load(Ordering::Relaxed))
            .sum()
    }

    /// Suspends a committed transaction `t` (commit timestamp `cts`) of the worker whose retention
    /// is `r`, that holds `sireads` point SIREAD locks (§3.3), until the horizon passes it, and
    /// cleans up (Cahill §3.3) the worker's retained transactions that no running transaction
    /// overlaps any more (committed at or before `horizon`, `t` itself included); every [`SWEEP`]-th
    /// commit also those of the other workers' shared queues. A `t` the horizon already passed is
    /// released at once when nothing older is retained. The worker's shared queue is locked only
    /// while it holds something or when the private queue overflows ([`PRIVATE`]): releasing
    /// under it cannot deadlock, as nobody takes a queue lock while holding a record's or a
    /// table's mutex, and a sweeper only tries it.
    ///
    /// Inlined into the commit: the usual cases — `t` released at once, or retained in the private
    /// queue while older ones leave it — touch only the worker's own state; the shared queue, an
    /// overflow and the sweep are `retain_shared`.
    #[inline]
    pub fn retain_and_cleanup(
        &self,
        r: &mut Retainer,
        t: Handle,
        cts: u64,
        sireads: usize,
        horizon: u64,
    ) {
        r.commits = r.commits.wrapping_add(1);
        let sweep = r.commits.is_multiple_of(SWEEP);
        let mine = &*r.shared;
        let shared = mine.queued.load(Ordering::Relaxed);
        if sweep || shared != 0 || r.recent.len() >= PRIVATE {
            return self.retain_shared(r, t, sireads, horizon, sweep, shared);
        }
        if cts <= horizon && r.recent.is_empty() {
            // Nothing older is retained and `t` already overlaps no running transaction (none ran
            // when the horizon was computed): released at once.
            self.release_settled(mine, t, 0);
            return;
        }
        self.retain_privately(r, t, sireads, horizon);
        r.publish_private();
    }

    /// Both paths of [`Self::retain_and_cleanup`]: counts `t`'s point SIREAD locks, puts it at the
    /// back of the private queue and releases that queue's front while the horizon passed it.
    #[inline]
    fn retain_privately(&self, r: &mut Retainer, t: Handle, sireads: usize, horizon: u64) {
        if sireads != 0 {
            bump(&r.shared.sireads, sireads as i64);
        }
        r.recent.push_back((t, sireads));
        self.release_front(&r.shared, &mut r.recent, horizon);
    }

    /// [`Self::retain_and_cleanup`] when the worker's shared queue holds something, the private
    /// queue is full, or this commit sweeps.
    #[inline(never)]
    fn retain_shared(
        &self,
        r: &mut Retainer,
        t: Handle,
        sireads: usize,
        horizon: u64,
        sweep: bool,
        shared: usize,
    ) {
        self.retain_privately(r, t, sireads, horizon);
        let mine = &*r.shared;
        if shared != 0 || r.recent.len() > PRIVATE {
            let mut q = mine.queue.lock();
            self.release_front(mine, &mut q, horizon);
            if r.recent.len() > PRIVATE {
                // Where a sweeper can reach them, should this worker fall idle (after the older
                // ones).
                q.extend(r.recent.drain(..));
            }
            mine.queued.store(q.len(), Ordering::Relaxed);
        }
        r.publish_private();
        if sweep {
            let n = self.registered.load(Ordering::Acquire);
            if n != r.seen {
                r.peers = self.workers.read().clone();
                r.seen = n;
            }
            for other in &r.peers {
                // A queue another worker is sweeping: it will get there (never urgent).
                if !std::ptr::eq(&**other, mine) && other.queued.load(Ordering::Relaxed) != 0 {
                    if let Some(mut q) = other.queue.try_lock() {
                        self.release_front(mine, &mut q, horizon);
                        other.queued.store(q.len(), Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// Drops every SSI trace of `t` (aborted, or committed and overlapping no running transaction):
    /// its SIREAD locks (range locks at once; point locks become stale, see [`SireadList`]) and its
    /// conflict lists; then its worker may recycle its record.
    /// `mine` is the releasing worker's queue (its counter takes the decrement).
    pub fn release(&self, mine: &Retained, t: Handle, sireads: usize) {
        // (The list is taken only when it holds something: most transactions hold no range lock.)
        let ranges = t.rec().retire(|c| {
            if c.ranges.is_empty() {
                Vec::new()
            } else {
                std::mem::take(&mut c.ranges)
            }
        });
        // Point locks are not visited: from now on they are stale (see `SireadList`), ignored by
        // writers and dropped by the next transaction that locks the record.
        if sireads != 0 {
            bump(&mine.sireads, -(sireads as i64));
        }
        for table in ranges {
            let r = &self.ranges[table as usize];
            let mut locks = r.locks.lock();
            locks.retain(|l| l.owner.id != t.id);
            r.count.store(locks.len(), Ordering::Release);
        }
    }

    /// [`Self::release`] for a committed transaction the horizon has passed: without its
    /// `conflicts` mutex when its lists were never touched (see [`TxnShared::retire_settled`]).
    #[inline]
    fn release_settled(&self, mine: &Retained, t: Handle, sireads: usize) {
        if !t.rec().retire_settled() {
            return self.release(mine, t, sireads);
        }
        if sireads != 0 {
            bump(&mine.sireads, -(sireads as i64));
        }
    }

    /// Releases the front of `queue` while it committed at or before the horizon.
    #[inline]
    fn release_front(&self, mine: &Retained, queue: &mut VecDeque<(Handle, usize)>, horizon: u64) {
        while let Some(&(t, sireads)) = queue.front() {
            if t.cts().is_some_and(|c| c > horizon) {
                break;
            }
            queue.pop_front();
            self.release_settled(mine, t, sireads);
        }
    }
}

/// The SIREAD locks on one record: two owners inline (no heap access), more in a vector allocated
/// only while more than two locks on the record are live at once.
///
/// Locks are released lazily: once its owner aborted or was cleaned up (committed at or before the
/// horizon, so no running transaction overlaps it) a lock is **stale** — `relevant` ignores it, and
/// the next writer of the record, or the next reader that finds both inline slots taken, drops it. So
/// a record holds at most two stale locks plus the locks of transactions still overlapping a running
/// one: memory stays bounded, and cleanup never revisits the records a transaction read.
///
/// A reader that finds a free slot takes it without looking at the other owner: deciding whether a
/// lock is stale means reading its owner's transaction record, which is usually another core's (a
/// cache miss that, on this engine's short transactions, costs as much as the rest of the read).
/// Readers and writers usually alternate on a record, and a writer visits every owner anyway
/// ([`SireadList::upgrade_and_visit`]), so most stale locks are dropped by the writer that must read
/// their owners' state regardless.
#[derive(Debug, Default)]
pub struct SireadList {
    slots: [Option<Handle>; 2],
    /// Boxed: one word in every record instead of a vector's three, for a list that is almost
    /// never allocated.
    #[allow(clippy::box_collection)]
    more: Option<Box<Vec<Handle>>>,
}

/// A lock nothing can conflict with any more: its owner aborted, or committed at or before the
/// horizon, or was released.
#[inline]
fn stale(o: &Handle, horizon: u64) -> bool {
    stale_state(o.state(), horizon)
}

#[inline]
fn stale_state(s: Option<(u8, u64)>, horizon: u64) -> bool {
    match s {
        None | Some((ABORTED, _)) => true,
        Some((COMMITTED, cts)) => cts <= horizon,
        _ => false,
    }
}

/// Fig 3.5's test on a state read through a handle: the owner is running, or committed after the
/// writer's snapshot `begin` (§3.7: not aborted or doomed).
#[inline]
pub fn relevant_state(s: (u8, u64), begin: u64) -> bool {
    match s {
        (ACTIVE | COMMITTING, _) => true,
        (COMMITTED, cts) => cts > begin,
        _ => false,
    }
}

impl SireadList {
    /// Cahill Fig 3.4, "take SIREAD lock on x" (the caller holds the record latch). Returns whether a
    /// new lock was taken. Reads other owners' states (to drop stale locks) only when both inline
    /// slots are taken.
    #[inline]
    pub fn lock(&mut self, me: Handle, horizon: u64) -> bool {
        if self.slots.iter().flatten().any(|o| o.id == me.id)
            || self
                .more
                .as_ref()
                .is_some_and(|m| m.iter().any(|o| o.id == me.id))
        {
            return false;
        }
        if !self.take_free_slot(me) {
            self.lock_full(me, horizon);
        }
        true
    }

    /// Puts `me` in a free inline slot, if there is one.
    #[inline]
    fn take_free_slot(&mut self, me: Handle) -> bool {
        match self.slots.iter_mut().find(|s| s.is_none()) {
            Some(free) => {
                *free = Some(me);
                true
            }
            None => false,
        }
    }

    /// [`Self::lock`] when both inline slots are taken: drops the stale locks, then takes a freed
    /// slot or spills into the vector.
    #[cold]
    #[inline(never)]
    fn lock_full(&mut self, me: Handle, horizon: u64) {
        for s in &mut self.slots {
            if s.is_some_and(|o| stale(&o, horizon)) {
                *s = None;
            }
        }
        if self.take_free_slot(me) {
            return;
        }
        let more = self.more.get_or_insert_with(Default::default);
        if more.len() >= 4 {
            more.retain(|o| !stale(o, horizon));
        }
        more.push(me);
    }

    /// Prefetches the inline owners' records (see [`Handle::prefetch`]) for a writer, which reads
    /// them all.
    #[inline]
    pub fn prefetch(&self) {
        for o in self.slots.iter().flatten() {
            o.prefetch();
        }
    }

    /// Prefetches the inline owners' records for a reader if it will read them: only when both
    /// slots are taken (a needless prefetch would also pull the line away from its owner, which
    /// writes it at its next transaction).
    #[inline]
    pub fn prefetch_for_lock(&self) {
        if self.slots.iter().all(Option::is_some) {
            self.prefetch();
        }
    }

    /// Fig 3.5 "for each SIREAD lock" for a writer `me` holding the record latch, with §3.7's
    /// upgrade: drops `me`'s own lock (the EXCLUSIVE lock subsumes it) and every stale one, and calls
    /// `f` with every other owner and the state it was read in (each owner is read once, and a list
    /// a writer visited holds no stale lock for the next one to scan). Stops at `f`'s first error.
    #[inline]
    pub fn upgrade_and_visit(
        &mut self,
        me: TxnId,
        horizon: u64,
        mut f: impl FnMut(Handle, (u8, u64)) -> TxResult<()>,
    ) -> TxResult<()> {
        // Visits `o` if its lock is another live owner's; `false`: drop the lock.
        let mut keep = |o: Handle| -> TxResult<bool> {
            match o.state() {
                Some(s) if o.id != me && !stale_state(Some(s), horizon) => f(o, s).map(|()| true),
                _ => Ok(false),
            }
        };
        for slot in &mut self.slots {
            if let Some(o) = *slot {
                if !keep(o)? {
                    *slot = None;
                }
            }
        }
        if let Some(more) = &mut self.more {
            let mut i = 0;
            while i < more.len() {
                if keep(more[i])? {
                    i += 1;
                } else {
                    more.swap_remove(i);
                }
            }
            if more.is_empty() {
                self.more = None;
            }
        }
        Ok(())
    }
}

/// Remembers that `t` holds range locks in `table` (released at cleanup).
pub fn remember_range(t: &TxnShared, table: TableId) {
    let mut c = t.conflicts.lock();
    t.mark_traced();
    if !c.ranges.contains(&table) {
        c.ranges.push(table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::mvcc::state::Pool;
    use std::collections::VecDeque;
    use std::sync::atomic::AtomicU64;
    use std::sync::Barrier;
    use std::time::Duration;

    /// `T_in → P → T_out` with `T_in` running. `T_out` has no out-conflict, so it commits without
    /// the latch, and it is caught between taking its timestamp and publishing it while `P` checks
    /// under the latch. `T_out` committed first, so `P` is a dangerous pivot and must abort; reading
    /// `T_out` as still running, `P` would commit (and record no `out_first`). Both latch-free
    /// paths: `T_out` with tracked reads (under its own mutex) and without (no mutex at all).
    #[test]
    fn a_t_out_committing_without_the_latch_is_seen_by_the_pivot() {
        t_out_committing_without_the_latch(true);
        t_out_committing_without_the_latch(false);
    }

    fn t_out_committing_without_the_latch(t_out_tracked: bool) {
        let pool = Pool::default();
        let (mut a, mut b, mut c) = (VecDeque::new(), VecDeque::new(), VecDeque::new());
        let t_in = pool.record(&mut a, 1);
        let p = pool.record(&mut b, 2);
        let t_out = pool.record(&mut c, 3);
        let ssi = SsiShared::new(1);
        let (hi, hp, ho) = (t_in.handle(), p.handle(), t_out.handle());
        hi.with_conflicts(|c| c.outs.push(hp));
        hp.with_conflicts(|c| {
            c.ins.push(hi);
            c.outs.push(ho);
        });
        ho.with_conflicts(|c| c.ins.push(hp));
        let clock = AtomicU64::new(10);
        let taken = Barrier::new(2);
        let (out, pivot) = std::thread::scope(|s| {
            let out = s.spawn(|| {
                ssi.commit(t_out, t_out_tracked, || {
                    let t = clock.fetch_add(1, Ordering::SeqCst) + 1;
                    taken.wait();
                    // Published late: the pivot checks meanwhile.
                    std::thread::sleep(Duration::from_millis(50));
                    t
                })
            });
            let pivot = s.spawn(|| {
                taken.wait();
                ssi.commit(p, true, || clock.fetch_add(1, Ordering::SeqCst) + 1)
            });
            (out.join().unwrap(), pivot.join().unwrap())
        });
        assert_eq!(out, Ok(11), "T_out commits first");
        assert_eq!(
            pivot.map_err(|a| a.reason),
            Err(AbortReason::Unsafe),
            "the pivot sees T_out committed before it (T_out tracked: {t_out_tracked})"
        );
    }

    /// A transaction without tracked reads that another's markConflict doomed first aborts at its
    /// commit (the compare-and-swap sees DOOMED), and one that got to COMMITTING first can no
    /// longer be doomed.
    #[test]
    fn an_untracked_commit_and_a_doom_settle_by_compare_and_swap() {
        let pool = Pool::default();
        let (mut a, mut b) = (VecDeque::new(), VecDeque::new());
        let ssi = SsiShared::new(1);
        let doomed = pool.record(&mut a, 1);
        doomed.handle().doom();
        assert_eq!(
            ssi.commit(doomed, false, || 5).map_err(|a| a.reason),
            Err(AbortReason::Unsafe)
        );
        let first = pool.record(&mut b, 2);
        let h = first.handle();
        assert_eq!(
            ssi.commit(first, false, || {
                h.doom(); // too late: it is COMMITTING
                6
            }),
            Ok(6)
        );
        assert_eq!(h.state(), Some((COMMITTED, 6)));
    }

    /// Cleanup releases a committed transaction without its `conflicts` mutex only if nothing was
    /// ever pushed into its lists: one that got an in-conflict after it committed (a reader of an
    /// older version) or holds a range lock goes through `retire`, which empties the lists and
    /// drops the range lock; the recycled records start untouched.
    #[test]
    fn cleanup_skips_the_mutex_only_for_transactions_nothing_touched() {
        let pool = Pool::default();
        let ssi = SsiShared::new(1);
        let mut mine = ssi.register();
        let (mut a, mut b, mut c) = (VecDeque::new(), VecDeque::new(), VecDeque::new());
        let quiet = pool.record(&mut a, 1);
        let written = pool.record(&mut b, 2);
        let scanner = pool.record(&mut c, 3);
        let reader = pool.record(&mut a, 4).handle();
        ssi.add_range(0, 10, 20, scanner.handle());
        remember_range(scanner, 0);
        for (t, cts) in [(quiet, 5), (written, 6), (scanner, 7)] {
            assert_eq!(ssi.commit(t, false, || cts), Ok(cts));
        }
        // After `written` committed, a reader that read the version it overwrote: `reader →rw written`.
        assert!(written
            .handle()
            .with_conflicts(|c| c.ins.push(reader))
            .is_some());
        assert_eq!(ssi.range_locks(), 1);
        for (t, cts) in [(quiet, 5), (written, 6), (scanner, 7)] {
            ssi.retain_and_cleanup(&mut mine, t.handle(), cts, 0, 10);
            assert!(t.is_released());
        }
        assert_eq!(
            ssi.range_locks(),
            0,
            "the scanner's range lock went with it"
        );
        // The recycled records start untouched, with empty lists.
        let again = pool.record(&mut b, 12);
        assert!(std::ptr::eq(again, written), "recycled");
        let lists = again.retire(|c| (c.ins.len(), c.outs.len(), c.ranges.len()));
        assert_eq!(lists, (0, 0, 0));
        let again = pool.record(&mut c, 13);
        assert!(std::ptr::eq(again, scanner), "recycled");
        assert_eq!(ssi.commit(again, false, || 20), Ok(20));
        assert!(again.retire_settled(), "untouched again");
        // One touched after its commit is left to `retire`.
        let touched = pool.record(&mut a, 14);
        assert_eq!(ssi.commit(touched, false, || 21), Ok(21));
        touched.handle().with_conflicts(|_| ());
        assert!(!touched.retire_settled());
        assert!(!touched.is_released());
    }
}
