//! Silo's commit protocol (the paper's Figure 2): lock the write set, read the epoch, validate the read
//! and node sets, then install every write under a fresh TID.

use super::sets::Sets;
use super::tid::{fence, TidWord};
use super::{tid, Silo};
use crate::check::TxnId;
use crate::storage::{Database, ABSENT};
use crate::txn::{Abort, AbortReason, Recorder, TxResult};
use std::sync::atomic::Ordering;

/// Runs the commit of the transaction `id` whose sets are in `w`; on `Err` nothing was installed and no
/// lock is held.
pub(super) fn commit(silo: &Silo, w: &mut super::SiloWorker, id: TxnId) -> TxResult<()> {
    let db = &silo.db;
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
    sets.sort_writes();
    for e in sets.writes.iter_mut() {
        e.locked_tid = tid::lock(db.table(e.table).meta(e.rid));
    }
    // Orders the lock acquisitions before the epoch load, the validation loads and the data stores of
    // Phase 3 (the paper's compiler fence; on a weakly ordered machine a real one).
    fence(Ordering::SeqCst);
    let epoch = silo.epoch.current();

    // Phase 2: validation.
    if !validate(db, sets) || !inserts_still_absent(db, sets) {
        unlock_all(db, sets);
        return Err(Abort::new(AbortReason::Validation));
    }

    // Phase 3: the commit TID, then install.
    let max_seen = sets
        .reads
        .iter()
        .map(|r| r.tid)
        .chain(sets.writes.iter().map(|e| e.locked_tid))
        .fold(w.last_tid, u64::max);
    let commit_tid = tid::next_after(max_seen, epoch);
    install(db, sets, &mut w.rec, id, commit_tid);
    w.last_tid = commit_tid;
    Ok(())
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

fn unlock_all(db: &Database<TidWord>, sets: &Sets) {
    for e in &sets.writes {
        tid::unlock(db.table(e.table).meta(e.rid), e.locked_tid);
    }
}

/// Installs each write: data words, then the version word (recorded), then the TID, which unlocks.
fn install(db: &Database<TidWord>, sets: &Sets, rec: &mut Recorder, id: TxnId, commit_tid: u64) {
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
