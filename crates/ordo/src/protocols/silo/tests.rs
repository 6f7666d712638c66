//! Single-threaded tests: the conformance suite and deterministic interleavings of two workers.

use super::{tid, Silo};
use crate::check::Event;
use crate::protocols::conformance::{self, open_small, A, B, KV};
use crate::protocols::Protocol;
use crate::storage::{ColumnSet, ABSENT};
use crate::txn::{AbortReason, Tx};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Reads and scans of a read-only table join neither the read set nor the node set (there is nothing
/// to validate), and a transaction of them alone commits without touching any shared word.
#[test]
fn read_only_table_reads_join_no_set() {
    let p = Silo::open(
        conformance::read_only_db(),
        &crate::protocols::ProtocolConfig::default(),
    );
    let mut w = p.worker(0, false);
    let mut tx = p.begin(&mut w);
    conformance::read_the_read_only_table(&mut tx);
    assert_eq!((tx.w.sets.reads.len(), tx.w.sets.nodes.len()), (0, 0));
    tx.get(KV, 10, ColumnSet::ALL).unwrap();
    tx.get(KV, 11, ColumnSet::ALL).unwrap();
    assert_eq!((tx.w.sets.reads.len(), tx.w.sets.nodes.len()), (1, 1));
    tx.commit().unwrap();
}

fn b_of(p: &Silo, key: u64) -> i64 {
    let mut w = p.worker(9, false);
    let mut tx = p.begin(&mut w);
    let v = tx
        .get(KV, key, ColumnSet::one(B))
        .unwrap()
        .expect("present")
        .int(B);
    tx.commit().unwrap();
    v
}

fn tid_of(p: &Silo, key: u64) -> u64 {
    let t = p.db().table(KV);
    t.meta(t.lookup(key).unwrap()).load(Ordering::Acquire)
}

fn validation(r: Result<(), crate::txn::Abort>) -> bool {
    matches!(r, Err(a) if a.reason == AbortReason::Validation)
}

#[test]
fn stale_read_fails_validation() {
    let p: Silo = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut t1 = p.begin(&mut w1);
    assert_eq!(
        t1.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B),
        0
    );
    let mut t2 = p.begin(&mut w2);
    t2.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 7))
        .unwrap();
    t2.commit().unwrap();
    t1.update(KV, 20, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    assert!(validation(t1.commit()), "t1 read a version t2 overwrote");
    assert_eq!(b_of(&p, 20), 0, "the aborted write was not installed");
    assert_eq!(b_of(&p, 10), 7);
    // Read-only transactions validate too.
    let mut t1 = p.begin(&mut w1);
    t1.get(KV, 10, ColumnSet::one(B)).unwrap();
    let mut t2 = p.begin(&mut w2);
    t2.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 8))
        .unwrap();
    t2.commit().unwrap();
    assert!(validation(t1.commit()));
}

#[test]
fn write_skew_lets_exactly_one_commit() {
    let p: Silo = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let (x, y) = (10, 20);
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    for t in [&mut t1, &mut t2] {
        assert!(t.get(KV, x, ColumnSet::one(A)).unwrap().is_some());
        assert!(t.get(KV, y, ColumnSet::one(A)).unwrap().is_some());
    }
    t1.update(KV, x, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    t2.update(KV, y, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    let r1 = t1.commit();
    let r2 = t2.commit();
    assert!(r1.is_ok(), "the first committer wins");
    assert!(validation(r2), "the second saw x change under it");
    assert_eq!((b_of(&p, x), b_of(&p, y)), (1, 0));
}

#[test]
fn write_write_conflict_serializes_at_commit() {
    let p: Silo = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let inc = |r: &mut crate::storage::RowMut<'_>| r.set_int(B, r.int(B) + 1);
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    t1.update(KV, 50, ColumnSet::one(B), inc).unwrap();
    t2.update(KV, 50, ColumnSet::one(B), inc).unwrap();
    t1.commit().unwrap();
    assert!(validation(t2.commit()), "a lost update would follow");
    let mut t2 = p.begin(&mut w2);
    t2.update(KV, 50, ColumnSet::one(B), inc).unwrap();
    t2.commit().unwrap();
    assert_eq!(b_of(&p, 50), 2);
}

#[test]
fn phantom_in_scanned_range_fails_validation() {
    let p: Silo = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut t1 = p.begin(&mut w1);
    let mut n = 0;
    t1.scan(KV, 10, 40, ColumnSet::one(A), |_, _| {
        n += 1;
        true
    })
    .unwrap();
    assert_eq!(n, 4);
    let mut t2 = p.begin(&mut w2);
    t2.insert(KV, 35, |r| r.set_int(A, 35)).unwrap();
    t2.commit().unwrap();
    t1.update(KV, 90, ColumnSet::one(B), |r| r.set_int(B, n))
        .unwrap();
    assert!(
        validation(t1.commit()),
        "key 35 appeared in the scanned range"
    );
    assert_eq!(b_of(&p, 90), 0);
}

#[test]
fn phantom_of_a_missing_key_fails_validation() {
    let p: Silo = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut t1 = p.begin(&mut w1);
    assert!(t1.get(KV, 77, ColumnSet::ALL).unwrap().is_none());
    let mut t2 = p.begin(&mut w2);
    t2.insert(KV, 77, |r| r.set_int(A, 77)).unwrap();
    t2.commit().unwrap();
    assert!(
        validation(t1.commit()),
        "key 77 appeared after t1 saw it missing"
    );
}

#[test]
fn reinsert_over_a_scanned_tombstone_fails_validation() {
    let p: Silo = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut t = p.begin(&mut w1);
    assert!(t.delete(KV, 30).unwrap());
    t.commit().unwrap();
    let mut t1 = p.begin(&mut w1);
    let mut keys = Vec::new();
    t1.scan(KV, 0, 50, ColumnSet::one(A), |k, _| {
        keys.push(k);
        true
    })
    .unwrap();
    assert_eq!(keys, vec![0, 10, 20, 40, 50]);
    // The slot exists already: the re-insert bumps no stripe, only the tombstone's TID.
    let mut t2 = p.begin(&mut w2);
    t2.insert(KV, 30, |r| r.set_int(A, 3)).unwrap();
    t2.commit().unwrap();
    t1.update(KV, 90, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    assert!(validation(t1.commit()));
}

#[test]
fn own_inserts_do_not_fail_own_node_set() {
    let p: Silo = open_small();
    let mut w = p.worker(0, false);
    let mut t = p.begin(&mut w);
    assert!(t.get(KV, 21, ColumnSet::ALL).unwrap().is_none());
    t.scan(KV, 10, 40, ColumnSet::one(A), |_, _| true).unwrap();
    t.insert(KV, 21, |r| r.set_int(A, 21)).unwrap();
    t.insert(KV, 22, |r| r.set_int(A, 22)).unwrap();
    t.scan(KV, 0, 30, ColumnSet::one(A), |_, _| true).unwrap();
    t.commit().unwrap();
    let mut t = p.begin(&mut w);
    assert_eq!(
        t.get(KV, 22, ColumnSet::one(A)).unwrap().unwrap().int(A),
        22
    );
    t.commit().unwrap();
}

#[test]
fn insert_race_second_committer_aborts_then_sees_duplicate() {
    let p: Silo = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    t1.insert(KV, 45, |r| r.set_int(A, 1)).unwrap();
    t2.insert(KV, 45, |r| r.set_int(A, 2)).unwrap();
    t1.commit().unwrap();
    assert!(validation(t2.commit()));
    let mut t2 = p.begin(&mut w2);
    assert_eq!(
        t2.insert(KV, 45, |r| r.set_int(A, 2)).unwrap_err().reason,
        AbortReason::DuplicateKey
    );
    drop(t2);
    let mut t = p.begin(&mut w1);
    assert_eq!(t.get(KV, 45, ColumnSet::one(A)).unwrap().unwrap().int(A), 1);
    t.commit().unwrap();
}

#[test]
fn read_locked_by_another_committer_fails_validation() {
    let p: Silo = open_small();
    let mut w = p.worker(0, false);
    let t = p.db().table(KV);
    let meta = t.meta(t.lookup(60).unwrap());
    let mut t1 = p.begin(&mut w);
    t1.get(KV, 60, ColumnSet::one(B)).unwrap();
    // Another committer in Phase 1 holds the lock: the TID bits are unchanged but t1 must abort.
    let held = tid::lock(meta);
    assert!(validation(t1.commit()));
    tid::unlock(meta, held);
    let mut t1 = p.begin(&mut w);
    t1.get(KV, 60, ColumnSet::one(B)).unwrap();
    t1.commit().unwrap();
}

#[test]
fn read_only_transactions_write_nothing_shared() {
    let p: Silo = open_small();
    let t = p.db().table(KV);
    let state = || -> Vec<(u64, u64, u64)> {
        let mut v: Vec<_> = (0..200)
            .filter_map(|k| {
                t.lookup(k).map(|r| {
                    (
                        k,
                        t.meta(r).load(Ordering::SeqCst),
                        t.version(r).load(Ordering::SeqCst),
                    )
                })
            })
            .collect();
        v.extend(
            (0..crate::storage::table::STRIPES)
                .map(|i| (u64::MAX, i as u64, t.stripe_at(i).load(Ordering::SeqCst))),
        );
        v
    };
    let mut w = p.worker(0, false);
    let mut tx = p.begin(&mut w);
    tx.insert(KV, 35, |_| ()).unwrap();
    tx.commit().unwrap();
    let before = state();
    let keys = t.key_count();
    let mut tx = p.begin(&mut w);
    tx.get(KV, 10, ColumnSet::ALL).unwrap();
    tx.get(KV, 11, ColumnSet::ALL).unwrap();
    tx.scan(KV, 0, 100, ColumnSet::one(A), |_, _| true).unwrap();
    assert!(!tx.delete(KV, 12).unwrap());
    assert_eq!(tx.update(KV, 13, ColumnSet::one(B), |_| ()).unwrap(), None);
    tx.commit().unwrap();
    assert_eq!(state(), before, "no TID, version word or stripe changed");
    assert_eq!(t.key_count(), keys, "no index entry created");
}

#[test]
fn tids_increase_and_carry_the_current_epoch() {
    let p: Silo = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut last = 0;
    for i in 0..50 {
        let w = if i % 2 == 0 { &mut w1 } else { &mut w2 };
        let e0 = p.epoch();
        let mut tx = p.begin(w);
        tx.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, i))
            .unwrap();
        tx.commit().unwrap();
        let e1 = p.epoch();
        let t = tid_of(&p, 10);
        assert!(!tid::is_locked(t));
        assert!(
            t > last,
            "TIDs of successive writers of one record increase"
        );
        assert!(
            (e0..=e1).contains(&tid::epoch_of(t)),
            "TID carries the epoch read at commit"
        );
        last = t;
    }
    // A transaction that read a record commits with a larger TID than the one it read.
    let mut tx = p.begin(&mut w1);
    tx.get(KV, 10, ColumnSet::one(B)).unwrap();
    tx.update(KV, 20, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    tx.commit().unwrap();
    assert!(tid_of(&p, 20) > tid_of(&p, 10));
}

#[test]
fn epoch_advances_over_time() {
    let p: Silo = open_small();
    let e0 = p.epoch();
    assert!(e0 >= 1);
    let deadline = Instant::now() + Duration::from_secs(20);
    while p.epoch() == e0 {
        assert!(Instant::now() < deadline, "epoch did not advance in 20 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn history_records_versions_read_and_replaced() {
    let p: Silo = open_small();
    let mut w = p.worker(0, true);
    let mut tx = p.begin(&mut w);
    let id1 = tx.id();
    tx.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    tx.commit().unwrap();
    let mut tx = p.begin(&mut w);
    let id2 = tx.id();
    tx.get(KV, 10, ColumnSet::one(B)).unwrap();
    assert!(tx.delete(KV, 10).unwrap());
    tx.commit().unwrap();
    let mut tx = p.begin(&mut w);
    tx.get(KV, 20, ColumnSet::one(B)).unwrap();
    drop(tx);
    let txns = Silo::recorder(&mut w).take();
    assert_eq!(txns.len(), 3);
    assert!(txns[0].committed && txns[1].committed && !txns[2].committed);
    let item = crate::check::ItemKey { table: KV, key: 10 };
    assert_eq!(
        txns[0].events,
        vec![
            Event::Read { item, version: 0 },
            Event::Write {
                item,
                prev: 0,
                deleted: false
            }
        ]
    );
    assert_eq!(
        txns[1].events,
        vec![
            Event::Read { item, version: id1 },
            Event::Read { item, version: id1 },
            Event::Write {
                item,
                prev: id1,
                deleted: true
            }
        ]
    );
    let t = p.db().table(KV);
    assert_eq!(
        t.version(t.lookup(10).unwrap()).load(Ordering::Acquire),
        id2 | ABSENT
    );
}
