//! Protocol-level tests of strict 2PL under all three deadlock policies.

use super::*;
use crate::protocols::conformance::{self, open_small, A, B, KV, RO};
use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::{Column, ColumnSet, ColumnType, Schema, TableSpec};
use crate::txn::{Abort, AbortReason, Backoff, RetryPolicy, Tx, TxResult};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Barrier};

type P<V> = TwoPl<V>;

macro_rules! for_each_policy {
    ($($name:ident => $body:ident;)*) => {
        mod nowait_tests { use super::*; $(#[test] fn $name() { super::$body::<NoWait>(); })* }
        mod waitdie_tests { use super::*; $(#[test] fn $name() { super::$body::<WaitDie>(); })* }
        mod detect_tests { use super::*; $(#[test] fn $name() { super::$body::<Detect>(); })* }
        mod table_nowait_tests { use super::*; $(#[test] fn $name() { super::$body::<TableNoWait>(); })* }
        mod table_detect_tests { use super::*; $(#[test] fn $name() { super::$body::<TableDetect>(); })* }
    };
}

for_each_policy! {
    read_only_reads_take_no_lock => read_only_reads_take_no_lock;
    scan_conflicts_with_insert_in_range => scan_conflicts_with_insert_in_range;
    scan_conflicts_with_insert_after_last_key => scan_conflicts_with_insert_after_last_key;
    scan_protects_gaps_split_by_absent_slots => scan_protects_gaps_split_by_absent_slots;
    missing_key_read_conflicts_with_insert => missing_key_read_conflicts_with_insert;
    transfers_keep_the_total => transfers_keep_the_total;
    increments_are_never_lost => increments_are_never_lost;
    no_phantom_inserts_past_the_limit => no_phantom_inserts_past_the_limit;
    recorded_history_is_serializable => recorded_history_is_serializable;
}

/// Gets (present and absent keys) and scans of a read-only table take no lock and create no slot;
/// the same reads of a normal table do.
fn read_only_reads_take_no_lock<V: Policy>() {
    let p = P::<V>::open(
        conformance::read_only_db(),
        &ProtocolConfig {
            threads: 2,
            ..ProtocolConfig::default()
        },
    );
    let entries = p.db().table(RO).key_count();
    let mut w = p.worker(0, false);
    let mut tx = p.begin(&mut w);
    conformance::read_the_read_only_table(&mut tx);
    assert_eq!(tx.locks_held(), 0, "reads of a read-only table locked");
    assert_eq!(p.db().table(RO).key_count(), entries, "a slot was created");
    tx.get(KV, 10, ColumnSet::ALL).unwrap();
    assert_eq!(tx.locks_held(), 1, "a read of a normal table locks");
    tx.commit().unwrap();
}

/// A conflict abort under any policy (no-wait: at once; wait-die: the younger requester dies;
/// detect: the wait times out because the holder is driven by the same thread).
#[track_caller]
fn assert_conflict<T: std::fmt::Debug>(r: TxResult<T>) {
    match r {
        Err(a) => assert!(
            matches!(
                a.reason,
                AbortReason::LockConflict | AbortReason::Died | AbortReason::Deadlock
            ),
            "expected a lock conflict, got {a}"
        ),
        Ok(v) => panic!("expected a lock conflict, got Ok({v:?})"),
    }
}

fn count_range<T: Tx>(tx: &mut T, lo: u64, hi: u64) -> TxResult<usize> {
    let mut n = 0;
    tx.scan(KV, lo, hi, ColumnSet::one(A), |_, _| {
        n += 1;
        true
    })?;
    Ok(n)
}

// ---------------------------------------------------------------------------------------------------------
// Lock compatibility, upgrades, release (no-wait: conflicts are immediate and typed).

#[test]
fn nowait_lock_compatibility_and_release() {
    no_wait_lock_compatibility_and_release::<NoWait>();
}

#[test]
fn table_nowait_lock_compatibility_and_release() {
    no_wait_lock_compatibility_and_release::<TableNoWait>();
}

/// The same outcomes whether the lock is a word beside the record or a head in the lock table.
fn no_wait_lock_compatibility_and_release<V: Policy>() {
    let p: P<V> = open_small();
    let (mut w1, mut w2, mut w3) = (p.worker(0, false), p.worker(1, false), p.worker(2, false));

    // S + S.
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    assert_eq!(
        t1.get(KV, 10, ColumnSet::one(A)).unwrap().unwrap().int(A),
        10
    );
    assert_eq!(
        t2.get(KV, 10, ColumnSet::one(A)).unwrap().unwrap().int(A),
        10
    );
    // S + X: the writer aborts, and its shared lock goes with it.
    let e = t2
        .update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap_err();
    assert_eq!(e.reason, AbortReason::LockConflict);
    assert_eq!(
        t2.get(KV, 0, ColumnSet::one(A)).unwrap_err().reason,
        AbortReason::LockConflict,
        "stays aborted"
    );
    assert_eq!(t2.commit().unwrap_err().reason, AbortReason::LockConflict);
    // Upgrade as the sole holder.
    t1.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 7))
        .unwrap();
    // X + S, X + X.
    let mut t2 = p.begin(&mut w2);
    assert_eq!(
        t2.get(KV, 10, ColumnSet::one(B)).unwrap_err().reason,
        AbortReason::LockConflict
    );
    drop(t2);
    let mut t3 = p.begin(&mut w3);
    assert_eq!(
        t3.update(KV, 10, ColumnSet::one(B), |_| ())
            .unwrap_err()
            .reason,
        AbortReason::LockConflict
    );
    drop(t3);
    // Released at commit.
    t1.commit().unwrap();
    let mut t2 = p.begin(&mut w2);
    t2.update(KV, 10, ColumnSet::one(B), |r| {
        assert_eq!(r.int(B), 7);
        r.set_int(B, 8)
    })
    .unwrap();
    // Released at abort (and undone).
    t2.abort();
    let mut t3 = p.begin(&mut w3);
    assert_eq!(
        t3.update(KV, 10, ColumnSet::one(B), |r| r.int(B)).unwrap(),
        Some(7)
    );
    t3.commit().unwrap();
    // Released when an uncommitted handle is dropped.
    let mut t1 = p.begin(&mut w1);
    t1.get(KV, 20, ColumnSet::one(A)).unwrap();
    drop(t1);
    let mut t2 = p.begin(&mut w2);
    t2.delete(KV, 20).unwrap();
    t2.commit().unwrap();
}

#[test]
fn upgrade_with_another_reader_conflicts() {
    upgrade_with_another_reader_conflicts_under::<NoWait>();
    upgrade_with_another_reader_conflicts_under::<TableNoWait>();
}

fn upgrade_with_another_reader_conflicts_under<V: Policy>() {
    let p: P<V> = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    t1.get(KV, 30, ColumnSet::one(A)).unwrap();
    t2.get(KV, 30, ColumnSet::one(A)).unwrap();
    assert_eq!(
        t1.update(KV, 30, ColumnSet::one(B), |_| ())
            .unwrap_err()
            .reason,
        AbortReason::LockConflict
    );
    // t1 is gone, so t2 is the sole reader now and may upgrade.
    t2.update(KV, 30, ColumnSet::one(B), |r| r.set_int(B, 3))
        .unwrap();
    t2.commit().unwrap();
}

#[test]
fn repeated_access_takes_one_lock() {
    let p: P<NoWait> = open_small();
    let mut w = p.worker(0, false);
    let mut t = p.begin(&mut w);
    for _ in 0..3 {
        t.get(KV, 40, ColumnSet::ALL).unwrap();
        t.update(KV, 40, ColumnSet::one(B), |r| r.set_int(B, r.int(B) + 1))
            .unwrap();
    }
    assert_eq!(t.get(KV, 40, ColumnSet::one(B)).unwrap().unwrap().int(B), 3);
    t.commit().unwrap();
    let t = p.begin(&mut w);
    drop(t);
    assert_eq!(w.locks_held(), 0);
    let lock = p.db().table(KV).meta(p.db().table(KV).lookup(40).unwrap());
    assert_eq!(lock.word(), 0, "released");
}

#[test]
fn table_nowait_takes_one_request_per_record_and_releases_them_all() {
    let p: P<TableNoWait> = open_small();
    let mut w = p.worker(0, false);
    let mut t = p.begin(&mut w);
    for _ in 0..3 {
        t.get(KV, 40, ColumnSet::ALL).unwrap();
        t.update(KV, 40, ColumnSet::one(B), |r| r.set_int(B, r.int(B) + 1))
            .unwrap();
    }
    t.get(KV, 41, ColumnSet::ALL).unwrap();
    // A missing key's absent slot is locked too (phantom protection).
    assert!(t.get(KV, 999_999, ColumnSet::ALL).unwrap().is_none());
    assert_eq!(
        p.shared.requests(),
        3,
        "one request per record, upgraded in place"
    );
    t.commit().unwrap();
    assert_eq!((p.shared.heads_in_use(), p.shared.requests()), (0, 0));
    let mut t = p.begin(&mut w);
    t.update(KV, 40, ColumnSet::one(B), |r| r.set_int(B, 0))
        .unwrap();
    drop(t);
    assert_eq!(
        (p.shared.heads_in_use(), p.shared.requests()),
        (0, 0),
        "released on abort"
    );
}

#[test]
fn large_transactions_use_the_lock_index() {
    let p: P<NoWait> = open_small();
    let mut w = p.worker(0, false);
    let mut t = p.begin(&mut w);
    for k in 1000..1100 {
        t.insert(KV, k, |r| r.set_int(A, k as i64)).unwrap();
    }
    for k in 1000..1100 {
        t.update(KV, k, ColumnSet::one(A), |r| r.set_int(A, r.int(A) + 1))
            .unwrap();
    }
    assert_eq!(count_range(&mut t, 1000, 1099).unwrap(), 100);
    t.commit().unwrap();
    let mut t = p.begin(&mut w);
    assert_eq!(
        t.get(KV, 1050, ColumnSet::one(A)).unwrap().unwrap().int(A),
        1051
    );
    t.commit().unwrap();
}

// ---------------------------------------------------------------------------------------------------------
// Wait-die.

#[test]
fn waitdie_younger_requester_dies() {
    let p: P<WaitDie> = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut old = p.begin(&mut w1);
    let mut young = p.begin(&mut w2);
    old.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    assert_eq!(
        young.get(KV, 10, ColumnSet::one(B)).unwrap_err().reason,
        AbortReason::Died
    );
    drop(young);
    // Upgrades too: both read, the younger one wants to write.
    let mut young = p.begin(&mut w2);
    old.get(KV, 20, ColumnSet::one(A)).unwrap();
    young.get(KV, 20, ColumnSet::one(A)).unwrap();
    assert_eq!(
        young
            .update(KV, 20, ColumnSet::one(B), |_| ())
            .unwrap_err()
            .reason,
        AbortReason::Died
    );
    old.update(KV, 20, ColumnSet::one(B), |r| r.set_int(B, 2))
        .unwrap();
    old.commit().unwrap();
}

#[test]
fn waitdie_older_requester_waits_for_younger_holder() {
    let p: P<WaitDie> = open_small();
    let (mut w_old, mut w_young) = (p.worker(0, false), p.worker(1, false));
    let (began_tx, began_rx) = mpsc::channel();
    let (locked_tx, locked_rx) = mpsc::channel();
    let requesting = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (p, requesting) = (&p, &requesting);
        let old = s.spawn(move || {
            let mut t = p.begin(&mut w_old);
            began_tx.send(()).unwrap();
            locked_rx.recv().unwrap();
            requesting.store(true, Ordering::SeqCst);
            // Older than the holder: waits (does not die) and then sees the holder's committed write.
            let seen = t.update(KV, 10, ColumnSet::one(B), |r| {
                let b = r.int(B);
                r.set_int(B, b + 1);
                b
            });
            let seen = seen.expect("the older transaction waits instead of dying");
            t.commit().unwrap();
            seen
        });
        let young = s.spawn(move || {
            began_rx.recv().unwrap();
            let mut t = p.begin(&mut w_young);
            t.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 41))
                .unwrap();
            locked_tx.send(()).unwrap();
            while !requesting.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            // Give the older one time to start waiting (not a correctness condition: it either waits or
            // finds the lock free; it must never die).
            std::thread::sleep(std::time::Duration::from_millis(5));
            t.commit().unwrap();
        });
        young.join().unwrap();
        assert_eq!(old.join().unwrap(), Some(41));
    });
    let mut w = p.worker(2, false);
    let mut t = p.begin(&mut w);
    assert_eq!(
        t.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B),
        42
    );
    t.commit().unwrap();
}

#[test]
fn waitdie_retry_keeps_its_timestamp() {
    let p: P<WaitDie> = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut old = p.begin(&mut w1);
    old.update(KV, 10, ColumnSet::one(B), |_| ()).unwrap();
    let mut young = p.begin(&mut w2);
    let ts = p.shared.ts(1);
    assert_eq!(
        young.get(KV, 10, ColumnSet::ALL).unwrap_err().reason,
        AbortReason::Died
    );
    drop(young);
    let retry = p.begin(&mut w2);
    assert_eq!(
        p.shared.ts(1),
        ts,
        "a retry after a protocol abort keeps its timestamp"
    );
    retry.commit().unwrap();
    let next = p.begin(&mut w2);
    assert!(
        p.shared.ts(1) > ts,
        "a new transaction after a commit gets a fresh one"
    );
    drop(next);
    old.commit().unwrap();
}

// ---------------------------------------------------------------------------------------------------------
// Deadlock detection.

/// Runs `n` transactions on `n` threads; transaction `i` X-locks key `keys[i]`, all meet at a barrier,
/// then each X-locks `keys[(i + 1) % n]`: a waits-for cycle of length `n`. Exactly one must die.
fn deadlock_cycle<V: Policy>(n: usize) {
    let p: P<V> = open_small();
    let keys = [10u64, 20, 30, 40, 50];
    let barrier = Barrier::new(n);
    let results: Vec<Result<(), Abort>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (p, barrier) = (&p, &barrier);
                s.spawn(move || {
                    let mut w = p.worker(i as u32, false);
                    let mut t = p.begin(&mut w);
                    t.update(KV, keys[i], ColumnSet::one(B), |r| {
                        r.set_int(B, r.int(B) + 1)
                    })
                    .unwrap();
                    barrier.wait();
                    t.update(KV, keys[(i + 1) % n], ColumnSet::one(B), |r| {
                        r.set_int(B, r.int(B) + 1)
                    })?;
                    t.commit()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let deadlocks = results
        .iter()
        .filter(|r| matches!(r, Err(a) if a.reason == AbortReason::Deadlock))
        .count();
    let commits = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(
        (deadlocks, commits),
        (1, n - 1),
        "exactly one victim: {results:?}"
    );
    // The committed ones each added 2, the victim nothing.
    let mut w = p.worker(9, false);
    let mut t = p.begin(&mut w);
    let total: i64 = keys[..n]
        .iter()
        .map(|&k| t.get(KV, k, ColumnSet::one(B)).unwrap().unwrap().int(B))
        .sum();
    assert_eq!(total, 2 * (n as i64 - 1));
    t.commit().unwrap();
}

#[test]
fn detect_breaks_a_two_cycle() {
    for _ in 0..5 {
        deadlock_cycle::<Detect>(2);
        deadlock_cycle::<TableDetect>(2);
    }
}

#[test]
fn detect_breaks_a_three_cycle() {
    for _ in 0..5 {
        deadlock_cycle::<Detect>(3);
        deadlock_cycle::<TableDetect>(3);
    }
}

#[test]
fn detect_upgrade_deadlock() {
    upgrade_deadlock::<Detect>();
    upgrade_deadlock::<TableDetect>();
}

fn upgrade_deadlock<V: Policy>() {
    // Both read, both want to write: the classic upgrade deadlock; one dies, the other commits.
    let p: P<V> = open_small();
    let barrier = Barrier::new(2);
    let results: Vec<TxResult<()>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|i| {
                let (p, barrier) = (&p, &barrier);
                s.spawn(move || {
                    let mut w = p.worker(i, false);
                    let mut t = p.begin(&mut w);
                    t.get(KV, 60, ColumnSet::one(B)).unwrap();
                    barrier.wait();
                    t.update(KV, 60, ColumnSet::one(B), |r| r.set_int(B, r.int(B) + 1))?;
                    t.commit()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    assert!(results
        .iter()
        .any(|r| matches!(r, Err(a) if a.reason == AbortReason::Deadlock)));
}

// ---------------------------------------------------------------------------------------------------------
// Next-key locking. small_db keys: 0, 10, …, 90. The scanner begins first (it is older), so under
// wait-die the inserter dies; under detect it times out; under no-wait it conflicts at once.

fn scan_conflicts_with_insert_in_range<V: Policy>() {
    let p: P<V> = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut scan = p.begin(&mut w1);
    assert_eq!(count_range(&mut scan, 12, 38).unwrap(), 2, "20 and 30");
    assert_conflict(p.begin(&mut w2).insert(KV, 25, |_| ()));
    assert_conflict(p.begin(&mut w2).insert(KV, 12, |_| ()));
    assert_conflict(p.begin(&mut w2).insert(KV, 35, |_| ()));
    // Deleting a scanned record is a write on a locked record.
    assert_conflict(p.begin(&mut w2).delete(KV, 20));
    // Beyond the next key (40): no conflict.
    let mut t = p.begin(&mut w2);
    t.insert(KV, 45, |r| r.set_int(A, 45)).unwrap();
    t.commit().unwrap();
    // The scan is repeatable.
    assert_eq!(count_range(&mut scan, 12, 38).unwrap(), 2);
    scan.commit().unwrap();
    // After the scanner commits the insert goes through.
    let mut t = p.begin(&mut w2);
    t.insert(KV, 25, |_| ()).unwrap();
    t.commit().unwrap();
}

fn scan_conflicts_with_insert_after_last_key<V: Policy>() {
    let p: P<V> = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut scan = p.begin(&mut w1);
    assert_eq!(count_range(&mut scan, 85, u64::MAX).unwrap(), 1, "90");
    // Past the last key: guarded by the supremum.
    assert_conflict(p.begin(&mut w2).insert(KV, 95, |_| ()));
    assert_conflict(p.begin(&mut w2).insert(KV, 1 << 40, |_| ()));
    // Below the range and below its first key: not guarded.
    let mut t = p.begin(&mut w2);
    t.insert(KV, 75, |_| ()).unwrap();
    t.commit().unwrap();
    scan.commit().unwrap();
    // A scan that stops early protects only up to the last key it visited.
    let mut scan = p.begin(&mut w1);
    let mut seen = Vec::new();
    scan.scan(KV, 0, 100, ColumnSet::one(A), |k, _| {
        seen.push(k);
        seen.len() < 2
    })
    .unwrap();
    assert_eq!(seen, vec![0, 10]);
    assert_conflict(p.begin(&mut w2).insert(KV, 5, |_| ()));
    let mut t = p.begin(&mut w2);
    t.insert(KV, 15, |_| ()).unwrap();
    t.commit().unwrap();
    scan.commit().unwrap();
}

/// A point read of a missing key creates an absent slot inside a gap a scan guarded with an older
/// entry; an insert just below it must still conflict (it locks through absent entries).
fn scan_protects_gaps_split_by_absent_slots<V: Policy>() {
    let p: P<V> = open_small();
    let (mut w1, mut w2, mut w3) = (p.worker(0, false), p.worker(1, false), p.worker(2, false));
    let mut scan = p.begin(&mut w1);
    assert_eq!(count_range(&mut scan, 12, 38).unwrap(), 2);
    let mut reader = p.begin(&mut w3);
    assert!(reader.get(KV, 36, ColumnSet::ALL).unwrap().is_none());
    reader.commit().unwrap();
    assert_conflict(p.begin(&mut w2).insert(KV, 33, |_| ()));
    scan.commit().unwrap();
}

fn missing_key_read_conflicts_with_insert<V: Policy>() {
    // Ordered table, and a hash-only one.
    let p: P<V> = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut r = p.begin(&mut w1);
    assert!(r.get(KV, 15, ColumnSet::ALL).unwrap().is_none());
    assert_conflict(p.begin(&mut w2).insert(KV, 15, |_| ()));
    assert_eq!(r.update(KV, 16, ColumnSet::ALL, |_| ()).unwrap(), None);
    assert_conflict(p.begin(&mut w2).insert(KV, 16, |_| ()));
    assert!(
        r.get(KV, 15, ColumnSet::ALL).unwrap().is_none(),
        "repeatable absence"
    );
    r.commit().unwrap();

    let p: P<V> = TwoPl::open(
        hash_db(),
        &ProtocolConfig {
            threads: 2,
            ..ProtocolConfig::default()
        },
    );
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut r = p.begin(&mut w1);
    assert!(r.get(0, 17, ColumnSet::ALL).unwrap().is_none());
    assert_conflict(p.begin(&mut w2).insert(0, 17, |_| ()));
    // Scans need an ordered index: an error, not a panic.
    assert_eq!(
        r.scan(0, 0, 10, ColumnSet::ALL, |_, _| true)
            .unwrap_err()
            .reason,
        AbortReason::InvalidData
    );
    let mut t = p.begin(&mut w2);
    t.insert(0, 17, |r| r.set_int(0, 1)).unwrap();
    t.commit().unwrap();
}

/// One hash-only table `(v: Int)` with keys 0..10, v = 100.
fn hash_db<M: Default + Send + Sync>() -> crate::storage::Database<M> {
    let mut db = crate::storage::Database::new();
    let schema = Schema::new(vec![Column::new("v", ColumnType::Int)]).unwrap();
    let t = db.create_table(TableSpec::new("acct", schema)).unwrap();
    let mut scratch = Vec::new();
    for k in 0..10 {
        db.table(t)
            .load(k, &mut scratch, |r| {
                r.set_int(0, 100);
                Ok(())
            })
            .unwrap();
    }
    db
}

// ---------------------------------------------------------------------------------------------------------
// Contended invariants with retries.

const THREADS: u32 = 4;

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// 4 threads × 2,000 random transfers among 10 accounts (read both, then write both: upgrades), plus
/// read-only audits that must always see the same total.
fn transfers_keep_the_total<V: Policy>() {
    let p: P<V> = TwoPl::open(
        hash_db(),
        &ProtocolConfig {
            threads: THREADS as usize,
            ..ProtocolConfig::default()
        },
    );
    const N: u32 = 2000;
    let commits = AtomicU64::new(0);
    std::thread::scope(|s| {
        for i in 0..THREADS {
            let (p, commits) = (&p, &commits);
            s.spawn(move || {
                let mut w = p.worker(i, false);
                let mut next = rng(i as u64 + 1);
                let mut backoff = Backoff::new(RetryPolicy::default(), i as u64 + 7);
                for n in 0..N {
                    let (a, b, amt) = (next() % 10, next() % 10, (next() % 20) as i64);
                    let audit = n % 10 == 0;
                    backoff
                        .run(
                            || {
                                let mut t = p.begin(&mut w);
                                if audit {
                                    let mut sum = 0;
                                    for k in 0..10 {
                                        sum += t.get(0, k, ColumnSet::ALL)?.unwrap().int(0);
                                    }
                                    assert_eq!(sum, 1000, "an audit saw a partial transfer");
                                } else {
                                    let va = t.get(0, a, ColumnSet::ALL)?.unwrap().int(0);
                                    let _ = t.get(0, b, ColumnSet::ALL)?.unwrap().int(0);
                                    t.update(0, a, ColumnSet::ALL, |r| r.set_int(0, va - amt))?;
                                    t.update(0, b, ColumnSet::ALL, |r| {
                                        r.set_int(0, r.int(0) + amt)
                                    })?;
                                }
                                t.commit()
                            },
                            |a| assert!(a.is_retryable(), "{a}"),
                        )
                        .expect("every transaction eventually commits");
                    commits.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(commits.load(Ordering::Relaxed), (THREADS * N) as u64);
    let mut w = p.worker(THREADS, false);
    let mut t = p.begin(&mut w);
    let total: i64 = (0..10)
        .map(|k| t.get(0, k, ColumnSet::ALL).unwrap().unwrap().int(0))
        .sum();
    assert_eq!(total, 1000);
    t.commit().unwrap();
}

/// Concurrent read-then-write increments of one counter (the lost-update pattern) are never lost.
fn increments_are_never_lost<V: Policy>() {
    let p: P<V> = TwoPl::open(
        hash_db(),
        &ProtocolConfig {
            threads: THREADS as usize,
            ..ProtocolConfig::default()
        },
    );
    const N: u32 = 2000;
    std::thread::scope(|s| {
        for i in 0..THREADS {
            let p = &p;
            s.spawn(move || {
                let mut w = p.worker(i, false);
                let mut backoff = Backoff::new(RetryPolicy::default(), i as u64 + 3);
                for _ in 0..N {
                    backoff
                        .run(
                            || {
                                let mut t = p.begin(&mut w);
                                let v = t.get(0, 3, ColumnSet::ALL)?.unwrap().int(0);
                                t.update(0, 3, ColumnSet::ALL, |r| r.set_int(0, v + 1))?;
                                t.commit()
                            },
                            |_| {},
                        )
                        .unwrap();
                }
            });
        }
    });
    let mut w = p.worker(THREADS, false);
    let mut t = p.begin(&mut w);
    assert_eq!(
        t.get(0, 3, ColumnSet::ALL).unwrap().unwrap().int(0),
        100 + (THREADS * N) as i64
    );
    t.commit().unwrap();
}

/// "Count the rows in [1000, 2000]; insert one if fewer than 5": without phantom protection two
/// transactions both count 4 and both insert.
fn no_phantom_inserts_past_the_limit<V: Policy>() {
    const LIMIT: usize = 5;
    let p: P<V> = open_small();
    std::thread::scope(|s| {
        for i in 0..THREADS {
            let p = &p;
            s.spawn(move || {
                let mut w = p.worker(i, false);
                let mut backoff = Backoff::new(RetryPolicy::default(), i as u64 + 11);
                for j in 0..20u64 {
                    let key = 1000 + (i as u64) * 100 + j * 3;
                    backoff
                        .run(
                            || {
                                let mut t = p.begin(&mut w);
                                if count_range(&mut t, 1000, 2000)? < LIMIT {
                                    t.insert(KV, key, |r| r.set_int(A, key as i64))?;
                                }
                                t.commit()
                            },
                            |_| {},
                        )
                        .unwrap();
                }
            });
        }
    });
    let present = p.db().table(KV).present_keys();
    let in_range = present
        .iter()
        .filter(|&&k| (1000..=2000).contains(&k))
        .count();
    assert_eq!(in_range, LIMIT, "{present:?}");
}

/// Transfers, audits, scans and inserts on four threads with recording on: the checker finds the
/// history serializable.
fn recorded_history_is_serializable<V: Policy>() {
    let p: P<V> = open_small();
    let mut txns = Vec::new();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..THREADS)
            .map(|i| {
                let p = &p;
                s.spawn(move || {
                    let mut w = p.worker(i, true);
                    let mut next = rng(i as u64 + 21);
                    let mut backoff = Backoff::new(RetryPolicy::default(), i as u64 + 5);
                    for n in 0..300u64 {
                        let (a, b) = (next() % 10 * 10, next() % 10 * 10);
                        let fresh = 100 + (i as u64) * 1000 + n;
                        let _ = backoff.run(
                            || {
                                let mut t = p.begin(&mut w);
                                match n % 3 {
                                    0 => {
                                        let v = t
                                            .get(KV, a, ColumnSet::one(B))?
                                            .map_or(0, |r| r.int(B));
                                        t.update(KV, b, ColumnSet::one(B), |r| {
                                            r.set_int(B, r.int(B) + v + 1)
                                        })?;
                                    }
                                    1 => {
                                        let n = count_range(&mut t, a, a + 500)?;
                                        t.update(KV, b, ColumnSet::one(A), |r| {
                                            r.set_int(A, n as i64)
                                        })?;
                                    }
                                    _ => {
                                        t.insert(KV, fresh, |r| r.set_int(A, 1))?;
                                        t.get(KV, a + 5, ColumnSet::ALL)?;
                                    }
                                }
                                t.commit()
                            },
                            |_| {},
                        );
                    }
                    P::<V>::recorder(&mut w).take()
                })
            })
            .collect();
        for h in hs {
            txns.extend(h.join().unwrap());
        }
    });
    assert_eq!(
        txns.iter().filter(|t| t.committed).count(),
        THREADS as usize * 300,
        "every transaction committed"
    );
    let report = crate::check::check(&crate::check::History { txns });
    assert!(report.is_serializable(), "{}", report.summary());
}
