//! The shared transaction record: what other transactions may see of a transaction `T` — its status,
//! commit timestamp, the lock it waits for, and (under SSI) its rw-conflicts and SIREAD locks — and the
//! [`Handle`] through which data records, lock lists and conflict lists refer to it.
//!
//! ## Type-stable records, validated handles
//!
//! Records are never freed while the protocol lives: every record ever allocated is kept in the
//! protocol's pool ([`Pool`]), and a worker **recycles** one of its own records for a new transaction
//! once the previous transaction in it is [released](TxnShared::is_released) — aborted, or committed
//! and no longer overlapping any running transaction, with its SSI traces dropped (Cahill §3.3). So a
//! reference to a transaction is a plain copyable [`Handle`] — the transaction's id and a pointer to
//! its record — with no reference count: versions (as their creator), EXCLUSIVE locks, SIREAD lists and
//! conflict lists hold handles, and following one is a read of the record, never a write to it (the
//! old `Arc`s made every SIREAD lock, version and conflict a shared counter update, and a transaction's
//! record could not be reused while a stale SIREAD lock still pointed to it).
//!
//! A handle is **validated** by comparing its id with the record's: the record's `id` works as a
//! sequence lock. Releasing a record ([`TxnShared::retire`], under its `conflicts` mutex, or
//! [`TxnShared::retire_settled`] without it once nothing can reach the transaction) stores
//! `RECYCLING` in `id`, then resets status and timestamps, then marks it released; reusing it later
//! for the worker's next transaction only stores the new id (no lock: nothing can be pushed into a
//! record whose `id` names no transaction); [`Handle::state`] reads `id`, status and
//! commit timestamp, and `id` again, and trusts what it read only if both ids are the handle's. A
//! handle whose record was released (or recycled) names a released transaction, which by construction nothing needs
//! any more: it is treated as stale (its SIREAD locks are ignored, it is no conflict), and the one
//! fact about a released transaction that is still needed later — the commit time of a pivot's
//! earliest committed out-conflict — is copied into the pivot at its commit (`out_first`).
//!
//! Writes to another transaction's record (pushing a conflict, dooming it) happen under that record's
//! `conflicts` mutex after checking its id there, so they can never land in a recycled record.

use crate::check::TxnId;
use crate::storage::TableId;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::Arc;

// The record's atomics and its `conflicts` mutex are loom's in a `--cfg ordo_loom` build, which
// model-checks the handle protocol (`state_loom.rs`); the same code runs on `std`'s otherwise.
#[cfg(not(ordo_loom))]
use super::spin::SpinMutex;
#[cfg(not(ordo_loom))]
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8};
#[cfg(ordo_loom)]
use {
    loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8},
    loom_mutex::SpinMutex,
};

/// Under loom, the `conflicts` mutex is loom's (a spin lock on `std` atomics would spin forever
/// when loom pauses its holder), with the one method this file and `ssi` use.
#[cfg(ordo_loom)]
mod loom_mutex {
    #[derive(Debug, Default)]
    pub struct SpinMutex<T>(loom::sync::Mutex<T>);

    impl<T> SpinMutex<T> {
        pub fn new(t: T) -> Self {
            SpinMutex(loom::sync::Mutex::new(t))
        }
        pub fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
            self.0.lock().expect("no panics while holding it")
        }
    }
}

/// Running (may still commit or abort).
pub const ACTIVE: u8 = 0;
/// Committed: `cts` is its commit timestamp (its writes may still be being installed).
pub const COMMITTED: u8 = 1;
/// Aborted: its locks are being (or have been) released and it wrote nothing.
pub const ABORTED: u8 = 2;
/// SSI chose it as the victim of a dangerous structure; it aborts at its next operation on a table
/// others can write, or at its commit (§3.7).
pub const DOOMED: u8 = 3;
/// Taking its commit timestamp: readers and writers that meet its lock wait until it is COMMITTED,
/// so no snapshot taken after the timestamp can miss its writes.
pub const COMMITTING: u8 = 4;

/// A commit timestamp later than any real one: the "commit time" of a running transaction.
pub const INFINITY: u64 = u64::MAX;

/// The `id` of a record while it is being recycled (no transaction id is 0).
const RECYCLING: TxnId = 0;

/// The SSI bookkeeping of one transaction. The lists are changed under the SSI latch (markConflict
/// and the commit check are atomic with respect to each other) and this mutex.
#[derive(Debug, Default)]
pub struct Conflicts {
    /// Transactions with an rw-antidependency *into* this one (they read what this one overwrote):
    /// Cahill's `T.inConflict`, kept as the full list so the commit-ordering refinement is exact.
    pub ins: Vec<Handle>,
    /// Transactions this one has an rw-antidependency to (it read what they overwrote): `T.outConflict`.
    pub outs: Vec<Handle>,
    /// Whether it holds range SIREAD locks (in tables' predicate lists).
    pub ranges: Vec<TableId>,
}

/// What other transactions can see of one transaction. The fields another transaction reads
/// through a [`Handle`] come first, on the record's first cache line (`repr(C)`, aligned).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct TxnShared {
    /// The transaction's id; [`RECYCLING`] while the record is being reset (a sequence lock).
    id: AtomicU64,
    status: AtomicU8,
    cts: AtomicU64,
    /// Commit time of its earliest out-conflict that committed before it (set at its commit, under
    /// the SSI latch; [`INFINITY`] if none): the §3.6 test for a committed pivot.
    out_first: AtomicU64,
    /// Its SSI traces are gone and nothing needs the record any more: its worker may recycle it.
    released: AtomicBool,
    /// The transaction whose EXCLUSIVE lock this one is waiting for (deadlock detection).
    pub waiting_for: Mutex<Option<Handle>>,
    pub conflicts: SpinMutex<Conflicts>,
    /// Another transaction (or its own range read) has touched its `conflicts` since it began: a
    /// conflict list or its range list may be non-empty (see [`TxnShared::retire_settled`]). Last,
    /// off the first line: the transaction that sets it must not invalidate the line every handle
    /// check reads.
    traced: AtomicBool,
}

/// A reference to a transaction: its id and its (never freed) record. See the module doc.
#[derive(Clone, Copy, Debug)]
pub struct Handle {
    pub id: TxnId,
    ptr: NonNull<TxnShared>,
}

// SAFETY: a handle only ever reads the record through atomics and mutexes, and the record outlives
// every handle (the protocol's pool keeps it until the protocol, and with it every handle, is dropped).
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl PartialEq for Handle {
    fn eq(&self, o: &Handle) -> bool {
        self.id == o.id
    }
}

impl Handle {
    /// The record (whichever transaction it belongs to now: validate with `id` before trusting it).
    #[inline]
    pub fn rec(&self) -> &TxnShared {
        // SAFETY: records are kept alive by the protocol's pool for as long as any handle exists.
        unsafe { self.ptr.as_ref() }
    }

    /// Starts loading the record into the cache (a hint: a handle about to be checked is usually
    /// another core's transaction, and the check would otherwise wait for the load).
    #[inline]
    pub fn prefetch(&self) {
        crate::storage::prefetch(self.ptr.as_ptr());
    }

    /// Status and commit timestamp of the transaction, or `None` if its record was recycled (the
    /// transaction was released: nothing can conflict with it any more). The timestamp means
    /// something only with `COMMITTED`, and then it is the commit timestamp (it is stored first);
    /// a transaction caught committing may show it beside its earlier status (loom found the pair
    /// `(COMMITTING, cts)`), which every caller reads as "not committed".
    #[inline]
    pub fn state(&self) -> Option<(u8, u64)> {
        let r = self.rec();
        if r.id.load(Ordering::Acquire) != self.id {
            return None;
        }
        let status = r.status.load(Ordering::Acquire);
        let cts = r.cts.load(Ordering::Acquire);
        fence(Ordering::Acquire);
        if r.id.load(Ordering::Relaxed) != self.id {
            return None;
        }
        Some((status, cts))
    }

    /// Status, or `None` if released.
    #[inline]
    pub fn status(&self) -> Option<u8> {
        self.state().map(|s| s.0)
    }

    /// Commit timestamp, [`INFINITY`] while not committed; `None` if released.
    #[inline]
    pub fn cts(&self) -> Option<u64> {
        self.state()
            .map(|(s, c)| if s == COMMITTED { c } else { INFINITY })
    }

    /// Aborted, doomed or released: SSI records no conflicts against it (§3.7).
    #[inline]
    pub fn is_dead(&self) -> bool {
        !matches!(self.status(), Some(ACTIVE | COMMITTING | COMMITTED))
    }

    /// Runs `f` on the conflict lists if the record still belongs to this transaction.
    #[inline]
    pub fn with_conflicts<R>(&self, f: impl FnOnce(&mut Conflicts) -> R) -> Option<R> {
        let r = self.rec();
        let mut c = r.conflicts.lock();
        (r.id.load(Ordering::Acquire) == self.id).then(|| {
            r.mark_traced();
            f(&mut c)
        })
    }

    /// §3.7: makes a running transaction the victim of a dangerous structure (it aborts at its next
    /// step). No effect if it already finished or was recycled.
    pub fn doom(&self) {
        let r = self.rec();
        let _c = r.conflicts.lock();
        if r.id.load(Ordering::Acquire) == self.id {
            let _ = r
                .status
                .compare_exchange(ACTIVE, DOOMED, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// The §3.6 value of a committed pivot (see `TxnShared::out_first`); `None` if released.
    #[inline]
    pub fn out_first(&self) -> Option<u64> {
        let r = self.rec();
        let v = r.out_first.load(Ordering::Acquire);
        (r.id.load(Ordering::Acquire) == self.id).then_some(v)
    }
}

impl TxnShared {
    fn new(id: TxnId) -> Self {
        TxnShared {
            id: AtomicU64::new(id),
            status: AtomicU8::new(ACTIVE),
            cts: AtomicU64::new(INFINITY),
            out_first: AtomicU64::new(INFINITY),
            released: AtomicBool::new(false),
            waiting_for: Mutex::new(None),
            conflicts: SpinMutex::new(Conflicts::default()),
            traced: AtomicBool::new(false),
        }
    }

    /// The handle of the transaction that owns the record now (call only from that transaction).
    #[inline]
    pub fn handle(&self) -> Handle {
        Handle {
            id: self.id.load(Ordering::Relaxed),
            ptr: NonNull::from(self),
        }
    }

    /// Releases the record (Cahill §3.3 cleanup, or an abort): under the `conflicts` mutex, hands
    /// `f` the conflict lists to drop, then stores `RECYCLING` in `id` and resets the record for
    /// its next transaction, and only then marks it released. From the `id` store on every handle
    /// to it reads `None` (released), and no conflict can be pushed or doom land here (both check
    /// `id` under this mutex), so the owner recycles it later (`TxnShared::reuse`) with plain
    /// stores — no second lock, and no second touch of the mutex's cache line.
    ///
    /// Resetting at release rather than at reuse changes nothing another transaction can see: a
    /// released record could already be recycled at once by its worker's next transaction.
    pub fn retire<R>(&self, f: impl FnOnce(&mut Conflicts) -> R) -> R {
        let mut c = self.conflicts.lock();
        let r = f(&mut c);
        c.ins.clear();
        c.outs.clear();
        c.ranges.clear();
        self.id.store(RECYCLING, Ordering::Relaxed);
        fence(Ordering::Release);
        self.status.store(ACTIVE, Ordering::Relaxed);
        self.cts.store(INFINITY, Ordering::Relaxed);
        self.out_first.store(INFINITY, Ordering::Relaxed);
        self.traced.store(false, Ordering::Relaxed);
        // `waiting_for` is already `None`: a wait clears it before it returns.
        drop(c);
        self.released.store(true, Ordering::Release);
        r
    }

    /// [`TxnShared::retire`] for a record no other transaction writes to any more — under `si` and
    /// `rc`, which push no conflicts and doom no one, and under `ssi` through
    /// [`TxnShared::retire_settled`]: the same reset without the `conflicts` mutex (a reader through
    /// a stale handle still sees `RECYCLING` first, then the reset).
    pub fn retire_unshared(&self) {
        self.id.store(RECYCLING, Ordering::Relaxed);
        fence(Ordering::Release);
        self.status.store(ACTIVE, Ordering::Relaxed);
        self.cts.store(INFINITY, Ordering::Relaxed);
        self.out_first.store(INFINITY, Ordering::Relaxed);
        self.released.store(true, Ordering::Release);
    }

    /// Releases a committed transaction that no running transaction overlaps any more (committed at
    /// or before the horizon), without the `conflicts` mutex if nothing was ever pushed into its
    /// lists: returns `false`, having done nothing, if something was (then call
    /// [`TxnShared::retire`]).
    ///
    /// Why no other transaction can touch the record meanwhile: every push into a transaction's
    /// lists and every doom comes from `markConflict` run by a *running* transaction `P` with `T` as
    /// its other end, and such a `T` always commits after `P`'s snapshot (it wrote a version `P` did
    /// not see, holds a lock `P` met, or read what `P` overwrites while running or committed after
    /// `P` began). So while `P` runs the horizon stays below `T`'s commit time and `T` is not
    /// released; once the horizon passed it, `P` had ended, and its end (the release store of its
    /// snapshot slot, which the horizon computation read) orders every one of its pushes, and the
    /// `traced` flag each set, before this call.
    pub fn retire_settled(&self) -> bool {
        if self.traced.load(Ordering::Relaxed) {
            return false;
        }
        self.retire_unshared();
        true
    }

    /// Notes that its `conflicts` were touched (call under the `conflicts` mutex).
    #[inline]
    pub fn mark_traced(&self) {
        if !self.traced.load(Ordering::Relaxed) {
            self.traced.store(true, Ordering::Relaxed);
        }
    }

    /// Makes a record released by [`TxnShared::retire`] (whose reset the `Acquire` load of
    /// `released` made visible) the record of transaction `id`.
    fn reuse(&self, id: TxnId) {
        self.released.store(false, Ordering::Relaxed);
        self.id.store(id, Ordering::Release);
    }

    /// Own status (only the owner calls the `status`/`set_*` methods on its record).
    #[inline]
    pub fn status(&self) -> u8 {
        self.status.load(Ordering::Acquire)
    }
    pub fn set_status(&self, s: u8) {
        self.status.store(s, Ordering::Release);
    }
    /// ACTIVE → COMMITTING, unless another transaction doomed it first (then `false`).
    pub fn try_begin_commit(&self) -> bool {
        self.status
            .compare_exchange(ACTIVE, COMMITTING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
    /// Marks it committed at `cts` (the timestamp first, so a reader that sees COMMITTED sees it).
    pub fn set_committed(&self, cts: u64) {
        self.cts.store(cts, Ordering::Release);
        self.status.store(COMMITTED, Ordering::Release);
    }
    /// Records the §3.6 value at commit (under the SSI latch).
    pub fn set_out_first(&self, t: u64) {
        self.out_first.store(t, Ordering::Release);
    }
    pub fn is_released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }
}

/// Every record ever allocated, kept until the protocol is dropped (what makes handles valid), and
/// the records of workers that ended, parked for the next workers (a worker recycles only its own
/// records, so without this every ended worker's few records would be lost for good). Where their
/// transaction ids stopped is the protocol's [`crate::txn::IdLedger`]'s.
#[derive(Debug, Default)]
pub struct Pool {
    all: Mutex<Vec<Arc<TxnShared>>>,
    /// Each ended worker's records, oldest first.
    parked: Mutex<Vec<VecDeque<Handle>>>,
}

impl Pool {
    /// A record for transaction `id`: the oldest of `mine` (the worker's records, oldest first) if
    /// it was released, else a new one (registered in the pool). The record is pushed back onto
    /// `mine` and returned, borrowed from the pool: no reference count is touched per transaction
    /// (an `Arc` clone and drop were two atomic writes to a cold line of the record's allocation).
    pub fn record<'a>(&'a self, mine: &mut VecDeque<Handle>, id: TxnId) -> &'a TxnShared {
        let h = match mine.front() {
            Some(t) if t.rec().is_released() => {
                let t = mine.pop_front().expect("front exists");
                t.rec().reuse(id);
                t.rec().handle()
            }
            _ => {
                let t = Arc::new(TxnShared::new(id));
                let h = t.handle();
                self.all.lock().push(t);
                h
            }
        };
        mine.push_back(h);
        // SAFETY: the pool keeps every record, at a stable address, until it is dropped, and `'a`
        // borrows the pool.
        unsafe { h.ptr.as_ref() }
    }

    /// Starts loading the record `record` will look at next (see [`Handle::prefetch`]): called at
    /// the end of a transaction, so the next one's begin does not wait for it.
    #[inline]
    pub fn prefetch_next(mine: &VecDeque<Handle>) {
        if let Some(t) = mine.front() {
            t.prefetch();
        }
    }

    /// Records allocated so far.
    pub fn allocated(&self) -> usize {
        self.all.lock().len()
    }

    /// For a new worker: the records an ended worker left (oldest first; empty if none).
    pub fn unpark(&self) -> VecDeque<Handle> {
        self.parked.lock().pop().unwrap_or_default()
    }

    /// Leaves an ending worker's records for the next worker — they are recycled as they are
    /// released, by whoever holds them then (a committed one may still be retained, and is released
    /// by a sweep or by the next holder of its retention queue).
    pub fn park(&self, records: VecDeque<Handle>) {
        if !records.is_empty() {
            self.parked.lock().push(records);
        }
    }
}

#[cfg(all(test, not(ordo_loom)))]
mod tests {
    use super::*;

    /// What another transaction reads through a handle (id, status, timestamp) shares one cache
    /// line with nothing another transaction writes: the conflicts mutex and the `traced` flag
    /// (written by whoever pushes a conflict) come after it.
    #[test]
    fn the_line_handles_read_is_not_written_by_other_transactions() {
        use std::mem::offset_of;
        let first_line = [
            offset_of!(TxnShared, id),
            offset_of!(TxnShared, status),
            offset_of!(TxnShared, cts),
            offset_of!(TxnShared, out_first),
            offset_of!(TxnShared, released),
        ];
        assert!(first_line.iter().all(|&o| o < 64), "{first_line:?}");
        assert!(offset_of!(TxnShared, conflicts) >= 64);
        assert!(offset_of!(TxnShared, traced) >= 64);
    }
}

#[cfg(all(test, ordo_loom))]
#[path = "state_loom.rs"]
mod loom_tests;
