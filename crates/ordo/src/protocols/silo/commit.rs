//! Silo's commit protocol (the paper's Figure 2): lock the write set, read the epoch, validate the read
//! and node sets, then install every write under a fresh TID. Phase 1 ([`lock_writes`]), the TID
//! ([`commit_tid`]), Phase 3 ([`install`]) and giving up ([`unlock_all`]) are also read committed's
//! commit (`rc.rs`), which skips Phase 2.

use super::epoch::EpochClock;
use super::sets::Sets;
use super::tid::{fence, TidWord};
use super::{tid, SiloWorker};
use crate::check::TxnId;
use crate::storage::{Database, ABSENT};
use crate::txn::{Abort, AbortReason, Recorder, TxResult};
use std::sync::atomic::Ordering;

/// Runs the commit of the transaction `id` whose sets are in `w`; on `Err` nothing was installed and no
/// lock is held.
pub(super) fn commit(
    db: &Database<TidWord>,
    clock: &EpochClock,
    w: &mut SiloWorker,
    id: TxnId,
) -> TxResult<()> {
    let sets = &mut w.sets;

    // A read-only transaction locks nothing and writes nothing shared: it only validates.
    if sets.writes.is_empty() {
        return if validate(db, sets) {
            Ok(())
        } else {
            Err(Abort::new(AbortReason::Validation))
        };
    }

    // Phase 1: lock the write set in the global (table, row id) order.
    lock_writes(db, sets);
    let epoch = clock.current();

    // Phase 2: validation.
    if !validate(db, sets) || !inserts_still_absent(db, sets) {
        unlock_all(db, sets);
        return Err(Abort::new(AbortReason::Validation));
    }

    // Phase 3: the commit TID, then install.
    let commit_tid = commit_tid(sets, w.last_tid, epoch);
    install(db, sets, &mut w.rec, id, commit_tid);
    w.last_tid = commit_tid;
    Ok(())
}

/// Phase 1: sorts the write set into the global (table, row id) order and locks each record in it
/// (spinning: the order rules out deadlock), remembering the TID each held.
#[inline]
pub(super) fn lock_writes(db: &Database<TidWord>, sets: &mut Sets) {
    sets.sort_writes();
    for e in sets.writes.iter_mut() {
        e.locked_tid = tid::lock(db.table(e.table).meta(e.rid));
    }
    // Orders the lock acquisitions before the epoch load, the validation loads and the data stores of
    // Phase 3 (the paper's compiler fence; on a weakly ordered machine a real one).
    fence(Ordering::SeqCst);
}

/// `generate-tid`: the smallest TID in `epoch` above every TID read or written and the worker's
/// previous commit TID `last` (so each record's TIDs strictly increase, which stable readers need).
#[inline]
pub(super) fn commit_tid(sets: &Sets, last: u64, epoch: u64) -> u64 {
    let max_seen = sets
        .reads
        .iter()
        .map(|r| r.tid)
        .chain(sets.writes.iter().map(|e| e.locked_tid))
        .fold(last, u64::max);
    tid::next_after(max_seen, epoch)
}

/// Every read-set TID unchanged and not locked by another transaction, every node-set stripe unchanged.
fn validate(db: &Database<TidWord>, sets: &Sets) -> bool {
    for r in &sets.reads {
        let now = db.table(r.table).meta(r.rid).load(Ordering::Acquire);
        if now & !tid::LOCK != r.tid {
            return false;
        }
        // Locked: fine only if we hold the lock (the record is in our write set).
        if tid::is_locked(now) && !sets.writes_hold(r.table, r.rid) {
            return false;
        }
    }
    sets.nodes.iter().all(|n| {
        db.table(n.table)
            .stripe_at(n.stripe as usize)
            .load(Ordering::Acquire)
            == n.value
    })
}

/// Inserts of absent keys: still absent now that we hold their locks (else someone inserted first).
fn inserts_still_absent(db: &Database<TidWord>, sets: &Sets) -> bool {
    sets.writes
        .iter()
        .filter(|e| e.must_be_absent)
        .all(|e| db.table(e.table).version(e.rid).load(Ordering::Relaxed) & ABSENT != 0)
}

/// Gives up after Phase 1: releases every write-set lock, restoring the TID it held.
pub(super) fn unlock_all(db: &Database<TidWord>, sets: &Sets) {
    for e in &sets.writes {
        tid::unlock(db.table(e.table).meta(e.rid), e.locked_tid);
    }
}

/// Phase 3: installs each write: data words, then the version word (recorded), then the TID, which
/// unlocks.
pub(super) fn install(
    db: &Database<TidWord>,
    sets: &Sets,
    rec: &mut Recorder,
    id: TxnId,
    commit_tid: u64,
) {
    for e in &sets.writes {
        let t = db.table(e.table);
        if !e.deleted {
            let words = t.schema().row_words();
            t.write_from(e.rid, e.written, &sets.images[e.off..e.off + words]);
        }
        // We hold the lock: no one else changes the version word, and readers validate it by the TID.
        let version = t.version(e.rid);
        let prev = version.load(Ordering::Relaxed);
        version.store(if e.deleted { id | ABSENT } else { id }, Ordering::Relaxed);
        rec.write(e.table, e.key, prev, e.deleted);
        tid::unlock(t.meta(e.rid), commit_tid);
    }
}
