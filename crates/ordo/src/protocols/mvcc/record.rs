//! Multi-version records: the newest committed image in place, older images in a per-record chain.
//!
//! ```text
//!  arena slot:  version word (writer id | ABSENT) · MvMeta · data words   ← newest committed version
//!                                 │
//!                                 ▼  SpinMutex<Record>
//!               cts (commit timestamp of the in-place version), creator, EXCLUSIVE lock owner,
//!               chain: [oldest … newest-but-one]   each Version { cts, word, creator, data }
//!               sireads: SIREAD lock owners (SSI only)
//! ```
//!
//! * **Visibility.** A snapshot `s` sees the newest version with `cts ≤ s` ([`Record::visible`]). Deletes
//!   install a **tombstone** (version word with `ABSENT`), so a reader with an older snapshot still finds
//!   the row in the chain, and a reader that sees the tombstone gets "absent".
//! * **Uncommitted writes never reach the record**: a transaction buffers its writes and installs them at
//!   commit, holding the record's EXCLUSIVE lock from its first write (first-updater-wins) until then. So
//!   the in-place image is always committed data, and old images only ever move into the chain.
//! * **Garbage collection** ([`Record::prune`]): versions older than the newest one with `cts ≤ horizon`
//!   can be seen by no running or future snapshot and are dropped whenever the record is touched; a commit
//!   whose old image no running snapshot can need does not keep it at all, and one that must keep it
//!   reuses the buffer of a version its worker dropped earlier (no allocation in the steady state). Live versions
//!   are counted per worker (no shared counter on the write path) and summed by `Mvcc::gc_stats`.
//! * **Safety.** Every field, and the in-place data words while a version moves, are changed only under
//!   the record's mutex, so versions are plain owned values freed by ordinary drops: no epoch-based
//!   reclamation is needed.

use super::spin::SpinMutex;
use super::state::Handle;
use std::sync::atomic::{AtomicI64, Ordering};

/// How many dropped version buffers a worker keeps for reuse.
pub const SPARE_BUFFERS: usize = 64;

/// Adds `by` to a counter that only the calling worker writes (others only read it, for statistics):
/// a plain load and store, not a locked read-modify-write, which on the commit path also waited for
/// every store before it to reach the cache.
#[inline]
pub fn bump(counter: &AtomicI64, by: i64) {
    counter.store(counter.load(Ordering::Relaxed) + by, Ordering::Relaxed);
}

/// An older committed version of a record.
#[derive(Debug)]
pub struct Version {
    /// Commit timestamp of its writer.
    pub cts: u64,
    /// Version word: the writer's id, with `ABSENT` for a tombstone or a not-yet-existing record.
    pub word: u64,
    /// Its writer's record (SSI: the `creator` a reader marks a conflict with); `None` when no running
    /// transaction can overlap it any more, or outside SSI.
    pub creator: Option<Handle>,
    pub data: Box<[u64]>,
}

/// The protocol state of one record (the mutex is the record latch: a [`SpinMutex`], held for a few
/// instructions and never across a wait).
#[derive(Debug, Default)]
pub struct Record {
    /// Commit timestamp of the in-place version (0 for loaded rows and never-existing slots).
    pub cts: u64,
    /// Writer of the in-place version (SSI only).
    pub creator: Option<Handle>,
    /// The EXCLUSIVE lock: the transaction that wrote the record first and has not finished installing.
    pub lock: Option<Handle>,
    /// Older versions, oldest first.
    pub chain: Vec<Version>,
    /// Owners of SIREAD locks on this record (SSI only).
    pub sireads: super::ssi::SireadList,
}

/// The per-record state kept in the arena (the protocol's `Meta`).
#[derive(Debug, Default)]
pub struct MvMeta(pub(super) SpinMutex<Record>);

/// Which version a snapshot sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visible {
    /// The in-place image.
    InPlace,
    /// `chain[i]`.
    Chain(usize),
    /// Nothing: the record was garbage collected past this snapshot (cannot happen while the snapshot
    /// is published) — read as absent, version 0.
    None,
}

impl Record {
    /// The version snapshot `s` sees.
    #[inline]
    pub fn visible(&self, s: u64) -> Visible {
        if self.cts <= s {
            return Visible::InPlace;
        }
        match self.chain.iter().rposition(|v| v.cts <= s) {
            Some(i) => Visible::Chain(i),
            None => Visible::None,
        }
    }

    /// Drops versions no snapshot at or after `horizon` can see, and creator references no running
    /// transaction can conflict with. The dropped versions' buffers go to `spare` (the worker's pool,
    /// kept to at most [`SPARE_BUFFERS`]) for the versions it will push later.
    #[inline]
    pub fn prune(&mut self, horizon: u64, live: &AtomicI64, spare: &mut Vec<Box<[u64]>>) {
        if self.chain.is_empty() {
            // The common case, inlined: at most a creator reference to drop.
            if self.cts <= horizon {
                self.creator = None;
            }
            return;
        }
        self.prune_chain(horizon, live, spare);
    }

    /// [`Self::prune`] for a record with older versions.
    #[inline(never)]
    fn prune_chain(&mut self, horizon: u64, live: &AtomicI64, spare: &mut Vec<Box<[u64]>>) {
        let upto = if self.cts <= horizon {
            self.creator = None;
            self.chain.len()
        } else {
            match self.chain.iter().rposition(|v| v.cts <= horizon) {
                Some(i) => {
                    self.chain[i].creator = None;
                    i
                }
                None => 0,
            }
        };
        if upto == 0 {
            return;
        }
        bump(live, -(upto as i64));
        for v in self.chain.drain(..upto) {
            if spare.len() < SPARE_BUFFERS {
                spare.push(v.data);
            }
        }
    }

    /// Moves the in-place version (`word`, `data`) into the chain.
    pub fn push_old(&mut self, word: u64, data: Box<[u64]>, live: &AtomicI64) {
        bump(live, 1);
        self.chain.push(Version {
            cts: self.cts,
            word,
            creator: self.creator.take(),
            data,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(cts: u64) -> Version {
        Version {
            cts,
            word: cts,
            creator: None,
            data: Box::new([]),
        }
    }

    #[test]
    fn snapshots_see_the_newest_version_at_or_before_them_and_gc_keeps_what_they_need() {
        let live = AtomicI64::new(0);
        let mut r = Record {
            cts: 30,
            chain: vec![version(0), version(10), version(20)],
            ..Record::default()
        };
        live.store(3, Ordering::Relaxed);
        assert_eq!(r.visible(35), Visible::InPlace);
        assert_eq!(r.visible(30), Visible::InPlace);
        assert_eq!(r.visible(25), Visible::Chain(2));
        assert_eq!(r.visible(10), Visible::Chain(1));
        assert_eq!(r.visible(5), Visible::Chain(0));
        let mut spare = Vec::new();
        r.prune(15, &live, &mut spare);
        assert_eq!(spare.len(), 1, "the dropped buffer is kept for reuse");
        assert_eq!(r.chain.iter().map(|v| v.cts).collect::<Vec<_>>(), [10, 20]);
        assert_eq!(
            r.visible(15),
            Visible::Chain(0),
            "horizon snapshot still served"
        );
        assert_eq!(live.load(Ordering::Relaxed), 2);
        r.prune(30, &live, &mut spare);
        assert_eq!(spare.len(), 3);
        assert!(r.chain.is_empty());
        assert_eq!(live.load(Ordering::Relaxed), 0);
    }
}
