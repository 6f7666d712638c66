//! `twopl` — strict two-phase locking (2PL) with shared/exclusive row locks, next-key locking against
//! phantoms, and three ways to deal with deadlock: `2pl-nowait`, `2pl-waitdie`, `2pl-detect`; plus
//! `2pl-table`, no-wait over a traditional hash-table lock manager (the VLL paper's baseline); plus a
//! way to avoid it: `2pl-ordered` and `locking-coarse`, which know every lock before the
//! transaction runs and take them in one global order (the PWV paper's baselines, [`ordered`]).
//!
//! # Strict 2PL in one paragraph
//!
//! Before a transaction reads a record it takes a **shared** (S) lock on it; before it writes one, an
//! **exclusive** (X) lock. S is compatible with S; X with nothing. A transaction that holds S and wants
//! to write **upgrades** to X, which succeeds only if it is the sole holder (otherwise it is a conflict
//! like any other). *Two-phase*: no lock is taken after one was released. *Strict*: none is released
//! before the transaction commits or aborts, so nobody reads or overwrites uncommitted data, and an abort
//! can simply put the old values back. Every conflict edge then points from a transaction that released
//! first to one that locked later, so the serialization order is the commit order: serializable.
//!
//! ```text
//!            compatibility               worked example (no-wait), A = 10, B = 20
//!          held:  -    S    X          T1: S(A) read 10 ─ X(B) write B=25 ─────────── commit: release A, B
//!  want S         ok   ok   ✗          T2:        S(A) read 10 ─ X(B)? held by T1 ✗ → abort LockConflict
//!  want X         ok   ✗*   ✗          T2 (retry, after T1):  S(A) ─ X(B) reads 25 … commit
//!  (* ok as an upgrade when the requester is the only S holder)
//! ```
//!
//! Writes are made **in place**: the old words of the written columns and the old version word go to an
//! undo log first; an abort restores them newest-first and only then releases the locks.
//!
//! Reads of read-only tables ([`crate::storage::TableSpec::read_only`]) take no lock: no writer of them
//! exists, so nothing can conflict. A write to one is refused (`InvalidData`) before any lock is taken.
//!
//! # Deadlock: three policies
//!
//! Waiting for a lock can close a cycle (T1 holds A wants B, T2 holds B wants A). The policy type `V` of
//! [`TwoPl<V>`] decides what a conflicting request does:
//!
//! | protocol       | on conflict                                   | abort reason | file          |
//! |----------------|-----------------------------------------------|--------------|---------------|
//! | `2pl-nowait`   | abort the requester at once                   | `LockConflict` | [`nowait`]  |
//! | `2pl-waitdie`  | wait if older than every holder, else die     | `Died`       | [`waitdie`]   |
//! | `2pl-detect`   | wait; find cycles in a waits-for graph        | `Deadlock`   | [`detect`]    |
//! | `2pl-table`    | no-wait, over the lock table (below)          | `LockConflict` | [`table_nowait`] |
//! | `2pl-table-detect` | wait and detect, over the lock table      | `Deadlock`   | [`table_detect`] |
//!
//! | `2pl-ordered`  | wait: every lock taken up front, in order     | none (`Validation` on a stale plan) | [`ordered`] |
//! | `locking-coarse` | the same over the program's coarse units    | none         | [`ordered`]   |
//!
//! No-wait and wait-die *prevent* deadlock (no-wait never waits; wait-die only lets older wait for
//! younger); detection lets anyone wait and breaks the cycles that actually form, aborting the youngest
//! transaction on each. Wait-die and detect give each transaction a timestamp, kept across retries
//! ([`wait`]). Ordered locking *avoids* it: a transaction planned before it runs takes all its
//! locks in one global order, so it may wait for anyone and no cycle of waits can form. It lives
//! apart from the [`Policy`] machinery (its transactions do not lock as they go; they run on the
//! kit's executor under the locks taken), in [`ordered`], [`lock_order`], the kit's
//! [`TicketLock`](crate::protocols::kit::ticket::TicketLock) (its fair lock word) and [`stripes`]
//! (the locks of conflict units).
//!
//! # Where a lock lives: a word beside the record, or a lock table
//!
//! The first three keep each record's lock in a word in the arena beside the row ([`lock`]): the row's
//! slot leads straight to it and one compare-and-swap takes it — the "very lightweight" lock manager of
//! main-memory systems (DBx1000's). `2pl-table` keeps them where a disk-era system (System R, Gray &
//! Reuter) does: in a **lock table** ([`crate::protocols::kit::lock_table`], the kit's), a hash
//! table with a latch per bucket mapping each record to a lock head with a granted group and a FIFO
//! request queue. It exists because the VLL paper
//! (Ren, Thomson, Abadi 2015) measures VLL against *that* lock manager (Figs. 8 and 16), and the gap
//! between the two 2PLs is the part of locking cost VLL removes. The policy decides where the lock lives:
//! its `Lock` type is the per-record word (or `()`), and every call also names the record (`Record`),
//! which the lock table hashes.
//!
//! # Phantoms: next-key locking
//!
//! Locking records is not enough for a range scan: a concurrent insert of a *new* key into the range
//! (a phantom) takes no lock the scanner holds. With an ordered index, the gap between two index entries
//! is guarded by the lock of the entry **above** it, and [`SUPREMUM`](crate::storage::SUPREMUM) (row 0)
//! guards the gap after the last key:
//!
//! ```text
//!  index:   10      20 (tombstone)     40            | SUPREMUM
//!  scan [12, 30]:   S(20) ──────────── S(40)           ← 20 is in range, 40 is the next key after 30
//!  insert 25: X(25) then X(next entries up to the first present one: 40) → conflicts with the scan
//!  insert 35: X(35), X(40) → conflicts (35 > 30, a false conflict 2PL accepts)
//!  insert 45: X(45), X(SUPREMUM) → no conflict
//! ```
//!
//! * **scan(lo, hi)** S-locks every index entry in key order, present or tombstone, then the next entry
//!   after `hi` (or the supremum). After each lock it re-checks that no entry appeared between the
//!   previous entry and the locked one (and locks that one first if it did). If the visitor stops early
//!   the last visited key bounds the protected range, and no further lock is taken.
//! * **insert(k)** X-locks `k`'s slot (creating it) and then, on an ordered table, the entries after `k`
//!   **up to and including the first present record** (or the supremum). Locking through absent entries
//!   matters: an absent slot can be created at any time without next-key locks (a point read of a missing
//!   key creates one), so the first entry after `k` may be younger than a scan that guarded `k`'s gap with
//!   an older entry further up. Present records only appear by inserts, which lock through to the entry
//!   the scanner holds, so the first present entry (or one of the absent ones before it) is always one the
//!   scanner locked.
//! * **get / update / delete of a missing key** create the key's absent slot and lock it, so a later
//!   insert of that key conflicts; on hash-only tables that is the only phantom protection needed.
//!
//! # Where things live
//!
//! | concept                                   | code                                    |
//! |-------------------------------------------|-----------------------------------------|
//! | lock words (S/X, reader count / owner bitmap) | [`lock`]                            |
//! | the traditional lock table (buckets, latches, lock heads, request queues) | the kit's `lock_table` |
//! | no-wait / wait-die / detection            | [`nowait`], [`waitdie`], [`detect`]     |
//! | no-wait over the lock table               | [`table_nowait`]                        |
//! | timestamps, per-worker slots, waiting     | [`wait`]                                |
//! | lock set (held locks, "do I hold it?")    | [`lockset`]                             |
//! | the transaction: lock, read/write in place, undo, next-key locks, release | [`txn`] |
//! | ordered locking: plan, lock in order, run under the locks | [`ordered`], [`lock_order`] |
//! | its fair reader-writer lock word; unit locks in stripes | kit's [`ticket`](crate::protocols::kit::ticket), [`stripes`] |
//!
//! `--op-delay-us` and `--commit-delay-us` ([`crate::protocols::kit::hold_delay`]) are slept with
//! the locks held, after each operation and before the commit releases them, by the five
//! lock-as-you-go protocols (not by `2pl-ordered` and `locking-coarse`).
//!
//! Recording for the checker: reads record the version word read while holding the lock; each install
//! records the word it swapped out.

pub mod detect;
pub mod lock;
pub mod lock_order;
pub mod lockset;
pub mod nowait;
pub mod ordered;
pub mod stripes;
pub mod table_detect;
pub mod table_nowait;
pub mod txn;
pub mod wait;
pub mod waitdie;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ordered;

pub use detect::Detect;
pub use lock::Mode;
pub use nowait::NoWait;
pub use ordered::{LockingCoarse, Ordered, Ordered2pl};
pub use table_detect::TableDetect;
pub use table_nowait::TableNoWait;
pub use txn::{TwoPlTx, TwoPlWorker};
pub use waitdie::WaitDie;

use crate::options::OptionSpec;
use crate::protocols::kit::hold_delay::{HoldDelay, COMMIT_DELAY_KNOB, OP_DELAY_KNOB};
use crate::protocols::{Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::{Database, RowId, TableId};
use crate::txn::{AbortReason, IdLedger, Recorder};
use std::sync::Arc;

/// Where 2PL and its deadlock policies come from.
pub const PAPER: &str = "Eswaran et al. 1976; Bernstein, Hadzilacos, Goodman 1987; Rosenkrantz et al. 1978 (wait-die); \
DBx1000 (Yu et al., VLDB 2014) NO_WAIT / WAIT_DIE / DL_DETECT";

/// The knobs of the lock-as-you-go 2PLs: the lock hold-time emulation (`--op-delay-us`,
/// `--commit-delay-us`, slept after each operation and before the commit releases, locks held).
pub const KNOBS: &[&OptionSpec] = &[&OP_DELAY_KNOB, &COMMIT_DELAY_KNOB];

/// A record a lock is on: its table and row slot.
pub type Record = (TableId, RowId);

/// A deadlock policy: where a lock lives (the word beside each record it needs, or a shared lock table)
/// and what a conflicting request does.
pub trait Policy: Send + Sync + Sized + 'static {
    /// The per-record lock (the protocol's `Meta`).
    type Lock: Default + Send + Sync + 'static;
    /// State shared by all workers (clock, waits-for graph).
    type Shared: Send + Sync;
    /// Per-worker state.
    type Local: Send;

    const INFO: ProtocolInfo;
    /// The most workers it supports ([`Protocol::MAX_WORKERS`]).
    const MAX_WORKERS: usize = usize::MAX;

    fn shared(config: &ProtocolConfig) -> Self::Shared;
    fn local(shared: &Self::Shared, worker: u32) -> Self::Local;
    /// A transaction starts on this worker.
    #[inline]
    fn begin(_shared: &Self::Shared, _local: &mut Self::Local) {}
    /// It ended; `retry`: it was aborted by the protocol and will probably run again.
    #[inline]
    fn end(_shared: &Self::Shared, _local: &mut Self::Local, _retry: bool) {}
    /// Takes `lock` in `mode` (not held by this transaction yet), or says why the transaction must abort.
    /// `at` names the record: the lock-word policies ignore it (`lock` is the record's own word), the
    /// lock-table one hashes it (its `lock` is `()`).
    fn acquire(
        shared: &Self::Shared,
        local: &mut Self::Local,
        lock: &Self::Lock,
        at: Record,
        mode: Mode,
    ) -> Result<(), AbortReason>;
    /// Upgrades this transaction's shared lock on `at` to exclusive. By default an exclusive
    /// [`Self::acquire`], for policies whose acquire recognizes the holder's own shared lock and converts
    /// it (wait-die, detect, the lock table); `2pl-nowait`'s counting lock word cannot tell its own
    /// reader from another's and overrides this.
    #[inline]
    fn upgrade(
        shared: &Self::Shared,
        local: &mut Self::Local,
        lock: &Self::Lock,
        at: Record,
    ) -> Result<(), AbortReason> {
        Self::acquire(shared, local, lock, at, Mode::Exclusive)
    }
    /// Releases a lock this transaction holds on `at` in `mode`.
    fn release(
        shared: &Self::Shared,
        local: &Self::Local,
        lock: &Self::Lock,
        at: Record,
        mode: Mode,
    );
}

/// Strict two-phase locking with deadlock policy `V` ([`NoWait`], [`WaitDie`] or [`Detect`]).
pub struct TwoPl<V: Policy> {
    pub(super) db: Database<V::Lock>,
    pub(super) shared: V::Shared,
    /// `--op-delay-us`, `--commit-delay-us`: lock hold time slept (see the kit's `hold_delay`).
    pub(super) delay: HoldDelay,
    ids: Arc<IdLedger>,
}

impl<V: Policy> Protocol for TwoPl<V> {
    type Meta = V::Lock;
    type Worker = TwoPlWorker<V>;
    type Tx<'w> = TwoPlTx<'w, V>;

    const INFO: ProtocolInfo = V::INFO;
    const MAX_WORKERS: usize = V::MAX_WORKERS;

    fn open(db: Database<V::Lock>, config: &ProtocolConfig) -> Self {
        TwoPl {
            db,
            shared: V::shared(config),
            delay: HoldDelay::of(config),
            ids: IdLedger::new(),
        }
    }
    fn db(&self) -> &Database<V::Lock> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> TwoPlWorker<V> {
        TwoPlWorker::new(self.ids.lease(id), recording, V::local(&self.shared, id))
    }
    fn recorder(w: &mut TwoPlWorker<V>) -> &mut Recorder {
        w.recorder()
    }
    fn begin<'w>(&'w self, w: &'w mut TwoPlWorker<V>) -> TwoPlTx<'w, V> {
        TwoPlTx::begin(self, w)
    }
}
