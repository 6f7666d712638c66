//! What the waiting policies (wait-die, detect) share: per-worker slots that name each worker's running
//! transaction (its timestamp, whom it waits for), a global timestamp clock, and the wait loop.
//!
//! **Timestamps.** A transaction takes its timestamp from one global counter at `begin`; smaller is older.
//! A worker whose last transaction was aborted by the protocol (a concurrency abort) *keeps* its
//! timestamp for its next `begin`, on the assumption that the caller is retrying the same transaction:
//! each retry is then older than everything that started since, so under wait-die it eventually waits
//! instead of dying, and under detection it stops being chosen as the (youngest) victim. That is the
//! classic cure for starvation. After a commit, or an abort the caller asked for, the next `begin` takes a
//! fresh timestamp.
//!
//! **Waiting** spins on the lock word with exponential backoff, then yields the CPU (never sleeps), and
//! re-evaluates the policy on every round, so a decision made on a stale view of the holders is corrected
//! on the next one. A wait also gives up after [`WAIT_TIMEOUT`]: the waits-for graph only sees waits that
//! go through locks, so a holder that is stuck elsewhere (for instance a transaction driven by the same
//! OS thread as the waiter) would otherwise block it forever. The timeout is far above any real lock hold
//! time, so it fires only in such cases.

use super::lock::{Mode, OwnerLock, MAX_OWNER_WORKERS};
use crate::txn::AbortReason;
use crossbeam_utils::{Backoff, CachePadded};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a lock wait may last before the waiter gives up by default (see the module docs); set per
/// instance with [`crate::protocols::ProtocolConfig::lock_wait_timeout`].
pub const WAIT_TIMEOUT: Duration = Duration::from_millis(250);

/// What one worker publishes about its running transaction.
#[derive(Debug, Default)]
pub struct Slot {
    /// The running transaction's timestamp (0 before the first).
    pub ts: AtomicU64,
    /// Bitmap of the workers whose locks it is waiting for (0 when not waiting).
    pub waits_for: AtomicU64,
}

/// The per-worker slots and the timestamp clock.
pub struct Registry {
    clock: CachePadded<AtomicU64>,
    slots: Box<[CachePadded<Slot>]>,
    /// How long one lock wait may last.
    timeout: Duration,
}

/// A worker's private side of its slot.
#[derive(Debug)]
pub struct Local {
    pub worker: usize,
    /// This worker's bit in lock words and waits-for sets.
    pub bit: u64,
    /// The running transaction's timestamp.
    pub ts: u64,
    reuse_ts: bool,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new(WAIT_TIMEOUT)
    }
}

impl Registry {
    /// Slots for every worker; lock waits give up after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Registry {
            clock: CachePadded::new(AtomicU64::new(0)),
            slots: (0..MAX_OWNER_WORKERS)
                .map(|_| CachePadded::new(Slot::default()))
                .collect(),
            timeout,
        }
    }

    /// How long one lock wait may last.
    #[inline]
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The private state of worker `worker`. Panics if `worker >= MAX_OWNER_WORKERS` (a configuration
    /// limit of the waiting policies, see [`super::lock`]).
    pub fn local(&self, worker: u32) -> Local {
        assert!(
            worker < MAX_OWNER_WORKERS,
            "2pl-waitdie, 2pl-detect and 2pl-table-detect support at most {MAX_OWNER_WORKERS} workers (got worker id {worker})"
        );
        Local {
            worker: worker as usize,
            bit: 1 << worker,
            ts: 0,
            reuse_ts: false,
        }
    }

    /// The slot of worker `w`.
    #[inline]
    pub fn slot(&self, w: usize) -> &Slot {
        &self.slots[w]
    }

    /// Starts a transaction: a fresh timestamp, unless the last one was aborted by the protocol.
    #[inline]
    pub fn begin(&self, l: &mut Local) {
        if !l.reuse_ts || l.ts == 0 {
            l.ts = self.clock.fetch_add(1, Ordering::Relaxed) + 1;
        }
        l.reuse_ts = false;
        self.slots[l.worker].ts.store(l.ts, Ordering::Release);
    }

    /// Ends a transaction; `retry`: it was aborted by the protocol, so keep the timestamp.
    #[inline]
    pub fn end(&self, l: &mut Local, retry: bool) {
        l.reuse_ts = retry;
    }

    /// The timestamp of worker `w`'s running transaction.
    #[inline]
    pub fn ts(&self, w: usize) -> u64 {
        self.slots[w].ts.load(Ordering::Acquire)
    }
}

/// Takes `lock` in `mode` for worker bit `me`, waiting while `on_conflict(holders, round)` says so
/// (`Ok`) and returning its abort otherwise; gives up with `timeout_reason` after `timeout`.
/// `round` counts the conflicting observations, from 0.
#[inline]
pub fn acquire_waiting(
    lock: &OwnerLock,
    me: u64,
    mode: Mode,
    timeout: Duration,
    timeout_reason: AbortReason,
    mut on_conflict: impl FnMut(u64, u32) -> Result<(), AbortReason>,
) -> Result<(), AbortReason> {
    let holders = match lock.try_acquire(me, mode) {
        Ok(()) => return Ok(()),
        Err(h) => h,
    };
    on_conflict(holders, 0)?;
    wait_slow(lock, me, mode, timeout, timeout_reason, &mut on_conflict)
}

#[cold]
fn wait_slow(
    lock: &OwnerLock,
    me: u64,
    mode: Mode,
    timeout: Duration,
    timeout_reason: AbortReason,
    on_conflict: &mut dyn FnMut(u64, u32) -> Result<(), AbortReason>,
) -> Result<(), AbortReason> {
    let waiting = crate::txn::wait::blocked();
    let backoff = Backoff::new();
    let start = Instant::now();
    let mut round = 1u32;
    loop {
        backoff.snooze();
        waiting.round();
        match lock.try_acquire(me, mode) {
            Ok(()) => return Ok(()),
            Err(holders) => on_conflict(holders, round)?,
        }
        // A cancel (the spec runner's, as isolationtester's) gives up as the timeout does.
        if waiting.canceled() || (round.is_multiple_of(16) && start.elapsed() > timeout) {
            return Err(timeout_reason);
        }
        round = round.wrapping_add(1);
    }
}
