//! `rc-occ` ([`super::rc`]): what read committed (PL-2) promises — schedules where a reader never sees a
//! buffered write and writers of the same records install in one order, contended histories with no
//! G0, G1a or G1c — and what it allows by design: the lost update, write skew, phantoms.

use super::{tid, SiloRc};
use crate::check::{check, AnomalyKind, History, Report};
use crate::protocols::conformance::{open_small, A, B, KV};
use crate::protocols::Protocol;
use crate::storage::{ColumnSet, RowMut};
use crate::txn::{Abort, AbortReason, Tx};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn b() -> ColumnSet {
    ColumnSet::one(B)
}

fn b_of(p: &SiloRc, key: u64) -> i64 {
    let mut w = p.worker(9, false);
    let mut tx = p.begin(&mut w);
    let v = tx.get(KV, key, b()).unwrap().expect("present").int(B);
    tx.commit().unwrap();
    v
}

fn inc(r: &mut RowMut<'_>) {
    r.set_int(B, r.int(B) + 1)
}

fn validation(r: Result<(), Abort>) -> bool {
    matches!(r, Err(a) if a.reason == AbortReason::Validation)
}

const FORBIDDEN: [AnomalyKind; 4] = [
    AnomalyKind::G0,
    AnomalyKind::G1a,
    AnomalyKind::G1c,
    AnomalyKind::VersionFork,
];

fn assert_pl2(report: &Report) {
    for k in FORBIDDEN {
        assert!(!report.has(k), "{report}");
    }
}

/// A reader never sees a buffered write: before the writer commits it reads the committed value (and
/// commits, having read it), after it the new one.
#[test]
fn a_reader_never_sees_a_buffered_write() {
    let p: SiloRc = open_small();
    let (mut w1, mut w2) = (p.worker(0, true), p.worker(1, true));
    let mut t1 = p.begin(&mut w1);
    t1.update(KV, 50, b(), |r| r.set_int(B, 1)).unwrap();
    t1.insert(KV, 55, |r| r.set_int(A, 55)).unwrap();
    assert!(t1.delete(KV, 60).unwrap());
    assert_eq!(
        t1.get(KV, 50, b()).unwrap().unwrap().int(B),
        1,
        "own writes are seen"
    );
    let mut t2 = p.begin(&mut w2);
    assert_eq!(t2.get(KV, 50, b()).unwrap().unwrap().int(B), 0);
    assert!(t2.get(KV, 55, b()).unwrap().is_none());
    assert!(t2.get(KV, 60, b()).unwrap().is_some());
    let mut keys = Vec::new();
    t2.scan(KV, 50, 60, b(), |k, _| {
        keys.push(k);
        true
    })
    .unwrap();
    assert_eq!(keys, [50, 60], "the scan sees no buffered insert or delete");
    t2.commit().unwrap();
    t1.commit().unwrap();
    let mut t2 = p.begin(&mut w2);
    assert_eq!(t2.get(KV, 50, b()).unwrap().unwrap().int(B), 1);
    assert!(t2.get(KV, 55, b()).unwrap().is_some());
    assert!(t2.get(KV, 60, b()).unwrap().is_none());
    t2.commit().unwrap();
    let mut txns = SiloRc::recorder(&mut w1).take();
    txns.extend(SiloRc::recorder(&mut w2).take());
    let report = check(&History { txns });
    assert_pl2(&report);
    assert!(report.is_serializable(), "{report}");
}

/// A reader that meets a record locked by a committer (the latch of the paper) spins until the
/// committer installs, then reads the installed value — never the old one under the new TID or a mix.
#[test]
fn a_reader_spins_while_a_committer_holds_the_latch() {
    let p: SiloRc = open_small();
    let t = p.db().table(KV);
    let rid = t.lookup(50).unwrap();
    let meta = t.meta(rid);
    let held = tid::lock(meta);
    std::thread::scope(|s| {
        let reader = s.spawn(|| b_of(&p, 50));
        std::thread::sleep(Duration::from_millis(50));
        assert!(!reader.is_finished(), "the reader waits for the latch");
        // Install as commit does: data, then the TID (which unlocks).
        let mut image = vec![0; t.schema().row_words()];
        RowMut::new(t.schema(), &mut image).set_int(B, 7);
        t.write_from(rid, b(), &image);
        tid::unlock(meta, tid::next_after(held, p.epoch()));
        assert_eq!(reader.join().unwrap(), 7);
    });
}

/// Two transactions write the same two records in opposite program orders and commit interleaved
/// with each other's writes: both commit (nothing is locked before commit), and both records end with
/// the later committer's values — the ww order is the same on both (no G0, no mix).
#[test]
fn writers_of_the_same_records_install_in_one_order() {
    let p: SiloRc = open_small();
    let (mut w1, mut w2) = (p.worker(0, true), p.worker(1, true));
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    t1.update(KV, 10, b(), |r| r.set_int(B, 1)).unwrap();
    t2.update(KV, 20, b(), |r| r.set_int(B, 2)).unwrap();
    t2.update(KV, 10, b(), |r| r.set_int(B, 2)).unwrap();
    t1.update(KV, 20, b(), |r| r.set_int(B, 1)).unwrap();
    let tid_before = {
        let t = p.db().table(KV);
        t.meta(t.lookup(10).unwrap()).load(Ordering::Acquire)
    };
    t2.commit().unwrap();
    t1.commit().unwrap();
    assert_eq!((b_of(&p, 10), b_of(&p, 20)), (1, 1));
    let t = p.db().table(KV);
    assert!(t.meta(t.lookup(10).unwrap()).load(Ordering::Acquire) > tid_before);
    let mut txns = SiloRc::recorder(&mut w1).take();
    txns.extend(SiloRc::recorder(&mut w2).take());
    let report = check(&History { txns });
    assert_pl2(&report);
}

/// The lost update read committed allows (and the paper's RC shows): two increments both read 0, both
/// commit, the counter ends at 1. The checker names the cycle (`T2 →rw T1 →ww T2`) G-single — an
/// anomaly PL-2 permits — and nothing PL-2 forbids.
#[test]
fn a_lost_update_happens() {
    let p: SiloRc = open_small();
    let (mut w1, mut w2) = (p.worker(0, true), p.worker(1, true));
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    assert_eq!(t1.update(KV, 50, b(), inc).unwrap(), Some(()));
    assert_eq!(t2.update(KV, 50, b(), inc).unwrap(), Some(()));
    t1.commit().unwrap();
    t2.commit().unwrap();
    assert_eq!(b_of(&p, 50), 1, "one of the two increments is lost");
    let mut txns = SiloRc::recorder(&mut w1).take();
    txns.extend(SiloRc::recorder(&mut w2).take());
    let report = check(&History { txns });
    assert!(report.has(AnomalyKind::GSingle), "{report}");
    assert_pl2(&report);
}

/// Write skew and phantoms: each transaction reads what the other writes, or counts a range the other
/// inserts into, and both commit.
#[test]
fn write_skew_and_phantoms_commit() {
    let p: SiloRc = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    for t in [&mut t1, &mut t2] {
        t.get(KV, 10, b()).unwrap();
        t.get(KV, 20, b()).unwrap();
        t.scan(KV, 30, 40, b(), |_, _| true).unwrap();
        assert!(t.get(KV, 35, b()).unwrap().is_none());
    }
    t1.update(KV, 10, b(), |r| r.set_int(B, 1)).unwrap();
    t2.update(KV, 20, b(), |r| r.set_int(B, 1)).unwrap();
    t2.insert(KV, 35, |r| r.set_int(A, 35)).unwrap();
    t2.commit().unwrap();
    t1.commit().unwrap();
    assert_eq!((b_of(&p, 10), b_of(&p, 20)), (1, 1));
}

/// No read joins any set, so a transaction's reads alone never make it abort.
#[test]
fn reads_join_no_set() {
    let p: SiloRc = open_small();
    let mut w = p.worker(0, false);
    let mut tx = p.begin(&mut w);
    tx.get(KV, 10, b()).unwrap();
    tx.get(KV, 11, b()).unwrap();
    tx.scan(KV, 0, 99, b(), |_, _| true).unwrap();
    tx.update(KV, 20, b(), inc).unwrap();
    tx.delete(KV, 30).unwrap();
    tx.get(KV, 20, ColumnSet::ALL).unwrap();
    assert_eq!((tx.w.sets.reads.len(), tx.w.sets.nodes.len()), (0, 0));
    assert_eq!(tx.w.sets.writes.len(), 2);
    tx.commit().unwrap();
}

/// The one check at commit: an insert whose key another transaction inserted first, and an update of
/// a record another deleted, abort (retryably); retried, they see the record as it is.
#[test]
fn a_write_whose_record_changed_existence_aborts() {
    let p: SiloRc = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let mut t1 = p.begin(&mut w1);
    let mut t2 = p.begin(&mut w2);
    t1.insert(KV, 45, |r| r.set_int(A, 1)).unwrap();
    t2.insert(KV, 45, |r| r.set_int(A, 2)).unwrap();
    t1.commit().unwrap();
    assert!(validation(t2.commit()));
    let mut t2 = p.begin(&mut w2);
    let dup = t2.insert(KV, 45, |r| r.set_int(A, 2)).unwrap_err();
    assert_eq!(dup.reason, AbortReason::DuplicateKey);
    drop(t2);

    let mut t1 = p.begin(&mut w1);
    t1.update(KV, 70, b(), inc).unwrap();
    let mut t2 = p.begin(&mut w2);
    assert!(t2.delete(KV, 70).unwrap());
    t2.commit().unwrap();
    assert!(validation(t1.commit()), "the update would revive key 70");
    let mut t1 = p.begin(&mut w1);
    assert_eq!(t1.update(KV, 70, b(), inc).unwrap(), None);
    assert!(t1.get(KV, 70, b()).unwrap().is_none());
    t1.commit().unwrap();
}

/// `threads` workers each run `txns` random transactions over the small table — reads, increments,
/// blind writes of several keys in random order, inserts, deletes, scans — with recording on; the
/// checker's report.
fn contended(threads: u32, txns: usize, seed: u64) -> Report {
    let p: SiloRc = open_small();
    let mut all = Vec::new();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|id| {
                let p = &p;
                s.spawn(move || {
                    let mut w = p.worker(id, true);
                    let mut rng = SmallRng::seed_from_u64(seed + id as u64);
                    for _ in 0..txns {
                        let mut t = p.begin(&mut w);
                        let r = (|| {
                            for _ in 0..rng.gen_range(1..6) {
                                let key = rng.gen_range(0..12u64) * 5;
                                match rng.gen_range(0..10) {
                                    0..=2 => {
                                        t.get(KV, key, b())?;
                                    }
                                    3..=4 => {
                                        t.update(KV, key, b(), inc)?;
                                    }
                                    5 => {
                                        let v = t.id() as i64;
                                        for k in [key, (key + 25) % 60, (key + 40) % 60] {
                                            t.update(KV, k, b(), |r| r.set_int(B, v))?;
                                        }
                                    }
                                    6 => match t.insert(KV, key, |r| r.set_int(A, key as i64)) {
                                        Err(a) if a.reason == AbortReason::DuplicateKey => {
                                            return Err(a)
                                        }
                                        r => r?,
                                    },
                                    7 => {
                                        t.delete(KV, key)?;
                                    }
                                    _ => t.scan(KV, key, key + 20, b(), |_, _| true)?,
                                }
                            }
                            Ok(())
                        })();
                        match r {
                            Ok(()) => {
                                // Let transactions overlap (busy: sleeping would let them drift apart).
                                let until = Instant::now() + Duration::from_micros(20);
                                while Instant::now() < until {
                                    std::hint::spin_loop();
                                }
                                if let Err(a) = t.commit() {
                                    assert_eq!(a.reason, AbortReason::Validation);
                                }
                            }
                            Err(a) => {
                                assert_eq!(a.reason, AbortReason::DuplicateKey);
                                drop(t);
                            }
                        }
                    }
                    SiloRc::recorder(&mut w).take()
                })
            })
            .collect();
        for h in hs {
            all.extend(h.join().unwrap());
        }
    });
    check(&History { txns: all })
}

/// Contended histories (4 threads on 2 cores: preemption inside commits too) have no G0, G1a or G1c;
/// they do have the cycles read committed allows.
#[test]
fn contended_histories_have_no_g0_or_g1() {
    let report = contended(4, 3000, 5);
    assert!(report.committed > 8000, "{report}");
    assert_pl2(&report);
    assert!(
        !report.is_serializable(),
        "lost updates and read skew show: {report}"
    );
}
