//! The `Tx` contract, first-updater-wins, waits and deadlocks, read committed, garbage collection, and
//! randomized multi-threaded histories judged by the checker.

use super::{Mode, Mvcc, MvccTx, MvccWorker, Rc, Si, Ssi};
use crate::check::{check, AnomalyKind, History, Report};
use crate::protocols::conformance::{open_small, B, KV};
use crate::protocols::Protocol;
use crate::storage::ColumnSet;
use crate::txn::{wait, AbortReason, Tx};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn one() -> ColumnSet {
    ColumnSet::one(B)
}

#[test]
fn snapshot_reads_ignore_later_commits_but_read_committed_sees_them() {
    fn second_read<M: Mode>() -> (i64, Option<i64>) {
        let p: Mvcc<M> = open_small();
        let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
        let mut r = p.begin(&mut w1);
        assert_eq!(r.get(KV, 10, one()).unwrap().unwrap().int(B), 0);
        let mut w = p.begin(&mut w2);
        w.update(KV, 10, one(), |row| row.set_int(B, 7)).unwrap();
        assert!(w.delete(KV, 20).unwrap());
        w.commit().unwrap();
        let b = r.get(KV, 10, one()).unwrap().unwrap().int(B);
        let gone = r.get(KV, 20, one()).unwrap().map(|row| row.int(B));
        r.commit().unwrap();
        (b, gone)
    }
    assert_eq!(
        second_read::<Si>(),
        (0, Some(0)),
        "the snapshot keeps old versions"
    );
    assert_eq!(second_read::<Ssi>(), (0, Some(0)));
    assert_eq!(
        second_read::<Rc>(),
        (7, None),
        "each statement sees the newest commit"
    );
}

/// The snapshot is taken at the first operation (as PostgreSQL does), not at `begin`: a transaction
/// created before a commit but first used after it sees the commit.
#[test]
fn the_snapshot_is_taken_at_the_first_operation() {
    fn sees_the_commit<M: Mode>() -> (i64, i64) {
        let p: Mvcc<M> = open_small();
        let (mut w1, mut w2, mut w3) = (p.worker(0, false), p.worker(1, false), p.worker(2, false));
        let mut lazy = p.begin(&mut w1);
        let mut forced = p.begin(&mut w3);
        forced.snapshot();
        let mut w = p.begin(&mut w2);
        w.update(KV, 10, one(), |row| row.set_int(B, 7)).unwrap();
        w.commit().unwrap();
        let got = |t: &mut MvccTx<'_, M>| t.get(KV, 10, one()).unwrap().unwrap().int(B);
        let seen = (got(&mut lazy), got(&mut forced));
        lazy.commit().unwrap();
        forced.commit().unwrap();
        seen
    }
    assert_eq!(sees_the_commit::<Si>(), (7, 0));
    assert_eq!(sees_the_commit::<Ssi>(), (7, 0));
    assert_eq!(sees_the_commit::<Rc>(), (7, 7));
}

#[test]
fn first_updater_wins_under_si_and_ssi_but_not_read_committed() {
    fn second_writer<M: Mode>() -> Result<(), AbortReason> {
        let p: Mvcc<M> = open_small();
        let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
        let mut late = p.begin(&mut w1);
        late.snapshot();
        let mut t = p.begin(&mut w2);
        t.update(KV, 10, one(), |r| r.set_int(B, 1)).unwrap();
        t.commit().unwrap();
        let r = late
            .update(KV, 10, one(), |r| r.set_int(B, r.int(B) + 1))
            .map(|_| ())
            .map_err(|a| a.reason);
        if r.is_ok() {
            late.commit().unwrap();
        }
        r
    }
    assert_eq!(second_writer::<Si>(), Err(AbortReason::UpdateConflict));
    assert_eq!(second_writer::<Ssi>(), Err(AbortReason::UpdateConflict));
    assert_eq!(second_writer::<Rc>(), Ok(()));
}

/// A writer blocked on a running holder's EXCLUSIVE lock (seen through `txn::wait`) aborts with an
/// update conflict when the holder commits, and proceeds when it aborts.
#[test]
fn blocked_writer_aborts_if_the_holder_commits() {
    for holder_commits in [true, false] {
        let p: Mvcc<Si> = open_small();
        let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
        let mut holder = p.begin(&mut w1);
        holder.update(KV, 10, one(), |r| r.set_int(B, 1)).unwrap();
        let observer = wait::WaitObserver::new();
        let seen = observer.clone();
        std::thread::scope(|s| {
            let p = &p;
            let w2 = &mut w2;
            let h = s.spawn(move || {
                wait::observe(Some(observer));
                let mut t = p.begin(w2);
                let r = t.update(KV, 10, one(), |r| r.set_int(B, 2));
                r.map(|_| t.commit())
            });
            while !seen.is_waiting() {
                std::thread::yield_now();
            }
            if holder_commits {
                holder.commit().unwrap();
            } else {
                holder.abort();
            }
            let got = h.join().unwrap();
            if holder_commits {
                assert_eq!(got.unwrap_err().reason, AbortReason::UpdateConflict);
            } else {
                assert!(got.unwrap().is_ok());
            }
        });
    }
}

#[test]
fn two_blocked_writers_end_in_a_deadlock_abort() {
    let p: Mvcc<Si> = open_small();
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let b = std::sync::Barrier::new(2);
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = [(&mut w1, 10, 20), (&mut w2, 20, 10)]
            .into_iter()
            .map(|(w, a, c)| {
                let (p, b) = (&p, &b);
                s.spawn(move || {
                    let mut t = p.begin(w);
                    t.update(KV, a, one(), |r| r.set_int(B, 1)).unwrap();
                    b.wait();
                    match t.update(KV, c, one(), |r| r.set_int(B, 1)) {
                        Ok(_) => t.commit().map_err(|a| a.reason),
                        Err(a) => Err(a.reason),
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(results.contains(&Err(AbortReason::Deadlock)), "{results:?}");
}

/// Runs `txns` random transactions per thread on `threads` threads over the ten keys of the small
/// table — each reads two keys and increments one (write-skew prone) or scans — retrying concurrency
/// aborts; returns the checker's report and the abort reasons seen.
fn contended<M: Mode>(threads: u32, txns: usize, seed: u64) -> (Report, Vec<AbortReason>, Mvcc<M>) {
    contended_sessions(threads, txns, seed, usize::MAX)
}

/// [`contended`] with each thread ending its worker and starting a new one (same id) every
/// `per_worker` transactions, as sessions that come and go.
fn contended_sessions<M: Mode>(
    threads: u32,
    txns: usize,
    seed: u64,
    per_worker: usize,
) -> (Report, Vec<AbortReason>, Mvcc<M>) {
    let p: Mvcc<M> = open_small();
    let mut all = Vec::new();
    let mut reasons = Vec::new();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|id| {
                let p = &p;
                s.spawn(move || {
                    let mut w = p.worker(id, true);
                    let mut rng = SmallRng::seed_from_u64(seed + id as u64);
                    let mut reasons = Vec::new();
                    let mut history = Vec::new();
                    for i in 0..txns {
                        if i > 0 && i % per_worker == 0 {
                            history.extend(Mvcc::<M>::recorder(&mut w).take());
                            drop(w); // ended before the next one starts: ids are distinct among live workers
                            w = p.worker(id, true);
                        }
                        let (a, b) = (rng.gen_range(0..10u64) * 10, rng.gen_range(0..10u64) * 10);
                        let scan = rng.gen_bool(0.1);
                        loop {
                            let mut t = p.begin(&mut w);
                            let r = (|| {
                                let x = t.get(KV, a, one())?.map_or(0, |r| r.int(B));
                                let y = t.get(KV, b, one())?.map_or(0, |r| r.int(B));
                                if scan {
                                    t.scan(KV, 0, 99, one(), |_, _| true)?;
                                }
                                if x + y < 1_000_000 {
                                    t.update(KV, a, one(), |r| r.set_int(B, r.int(B) + 1))?;
                                }
                                Ok::<_, crate::txn::Abort>(())
                            })();
                            match r.and_then(|_| t.commit()) {
                                Ok(()) => break,
                                Err(e) => {
                                    assert!(e.is_retryable(), "{e}");
                                    reasons.push(e.reason);
                                }
                            }
                        }
                    }
                    history.extend(Mvcc::<M>::recorder(&mut w).take());
                    (history, reasons)
                })
            })
            .collect();
        for h in hs {
            let (t, r) = h.join().unwrap();
            all.extend(t);
            reasons.extend(r);
        }
    });
    (check(&History { txns: all }), reasons, p)
}

#[test]
fn ssi_histories_have_no_cycles() {
    let (report, reasons, _) = contended::<Ssi>(4, 1500, 1);
    assert!(report.is_serializable(), "{report}");
    assert!(!report.has(AnomalyKind::VersionFork), "{report}");
    assert!(
        reasons.iter().all(|r| super::ABORTS.contains(r)),
        "{reasons:?}"
    );
}

/// The same with every worker ending after three transactions: the ended workers' slots, queues
/// and records pass to the next ones, their retained transactions are still found by id, and the
/// history stays serializable (a worker that restarted its transaction ids would also give the
/// checker two transactions with one id).
#[test]
fn ssi_histories_have_no_cycles_when_sessions_come_and_go() {
    let (report, _, p) = contended_sessions::<Ssi>(4, 1500, 11, 3);
    assert!(report.is_serializable(), "{report}");
    assert!(!report.has(AnomalyKind::VersionFork), "{report}");
    let g = p.gc_stats();
    assert!(g.slots <= 8, "{g:?}");
}

#[test]
fn si_histories_have_no_g0_g1_or_g_single() {
    let (report, _, _) = contended::<Si>(4, 1500, 2);
    for k in [
        AnomalyKind::G0,
        AnomalyKind::G1a,
        AnomalyKind::G1c,
        AnomalyKind::GSingle,
        AnomalyKind::VersionFork,
    ] {
        assert!(!report.has(k), "{report}");
    }
}

#[test]
fn si_write_skew_is_g2_item() {
    let si = super::tests_schedules::run::<Si>("b1 b2 r1(x) r1(y) r2(x) r2(y) w1(x) w2(y) c1 c2");
    assert!(si.report.has(AnomalyKind::G2Item), "{}", si.report);
    assert!(!si.report.has(AnomalyKind::GSingle));
}

#[test]
fn rc_histories_have_no_g0_or_g1() {
    let (report, _, _) = contended::<Rc>(4, 1500, 3);
    for k in [
        AnomalyKind::G0,
        AnomalyKind::G1a,
        AnomalyKind::G1c,
        AnomalyKind::VersionFork,
    ] {
        assert!(!report.has(k), "{report}");
    }
}

/// Two overlapping transactions, each reading one random key and incrementing another.
fn round(p: &Mvcc<Ssi>, w1: &mut MvccWorker, w2: &mut MvccWorker, rng: &mut SmallRng) {
    let mut k = || rng.gen_range(0..10u64) * 10;
    let (a, b, c, d) = (k(), k(), k(), k());
    let mut t1 = p.begin(w1);
    let mut t2 = p.begin(w2);
    let r1 = t1.get(KV, a, one()).map(|_| ());
    let r2 = t2.get(KV, b, one()).map(|_| ());
    let u2 = r2.and_then(|_| t2.update(KV, c, one(), |r| r.set_int(B, r.int(B) + 1)));
    if u2.is_ok() {
        let _ = t2.commit();
    } else {
        drop(t2);
    }
    let u1 = r1.and_then(|_| t1.update(KV, d, one(), |r| r.set_int(B, r.int(B) + 1)));
    if u1.is_ok() {
        let _ = t1.commit();
    }
}

/// [`super::ssi::SWEEP`] commits by `w`, so that one of them sweeps the other workers' shared
/// retention queues.
fn sweep_commits(p: &Mvcc<Ssi>, w: &mut MvccWorker) {
    for _ in 0..super::ssi::SWEEP {
        let mut t = p.begin(w);
        t.update(KV, 0, one(), |r| r.set_int(B, 1)).unwrap();
        t.commit().unwrap();
    }
}

/// Garbage collection keeps versions, SIREAD locks and retained transactions bounded in a long run
/// of overlapping transactions (driven step by step on one thread, so no scheduling can stretch the
/// overlap), lets a long reader pin exactly the versions it needs, and frees them when it ends.
#[test]
fn long_runs_keep_multi_version_state_bounded() {
    let p: Mvcc<Ssi> = open_small();
    let (mut w1, mut w2, mut w3) = (p.worker(0, false), p.worker(1, false), p.worker(2, false));
    let mut rng = SmallRng::seed_from_u64(7);
    let mut peak = super::GcStats::default();
    for _ in 0..20_000 {
        round(&p, &mut w1, &mut w2, &mut rng);
        let g = p.gc_stats();
        peak.versions = peak.versions.max(g.versions);
        peak.sireads = peak.sireads.max(g.sireads);
        peak.retained = peak.retained.max(g.retained);
        peak.records = peak.records.max(g.records);
    }
    // 20 000 rounds installed ~40 000 versions; only those an overlapping snapshot needs stay.
    assert!(peak.versions <= 20, "{peak:?}");
    assert!(peak.sireads <= 20, "{peak:?}");
    assert!(peak.retained <= 20, "{peak:?}");
    // ~40 000 transactions ran on ~20 records: each worker recycles its released ones.
    assert!(peak.records <= 20, "{peak:?}");

    // A long reader pins the versions its snapshot needs …
    let mut long = p.begin(&mut w3);
    let v0 = long.get(KV, 10, one()).unwrap().unwrap().int(B);
    for _ in 0..1_000 {
        round(&p, &mut w1, &mut w2, &mut rng);
    }
    let pinned = p.gc_stats();
    assert!(pinned.versions >= 100, "{pinned:?}");
    assert_eq!(
        long.get(KV, 10, one()).unwrap().unwrap().int(B),
        v0,
        "the snapshot is intact"
    );
    long.commit().unwrap();
    // … and once it ends, the next commits (each releases its worker's retained transactions, every
    // SWEEP-th the other workers' shared queues too) free all but the few that the idle workers
    // keep privately …
    sweep_commits(&p, &mut w1);
    let idle = p.gc_stats();
    assert!(idle.retained <= 2 * super::ssi::PRIVATE, "{idle:?}");
    // … which their next commits release; a pass over the keys drops the last versions.
    for w in [&mut w2, &mut w3] {
        let mut t = p.begin(w);
        t.update(KV, 1, one(), |r| r.set_int(B, 1)).unwrap();
        t.commit().unwrap();
    }
    let mut t = p.begin(&mut w1);
    t.scan(KV, 0, 99, one(), |_, _| true).unwrap();
    t.commit().unwrap();
    let g = p.gc_stats();
    assert_eq!(
        (g.versions, g.sireads, g.retained, g.range_locks),
        (0, 0, 0, 0),
        "{g:?}"
    );
}

/// A worker that ends with transactions in its private retention queue hands them to its shared
/// queue, so the other workers' sweeps release them and their range locks: a session that ends
/// leaks nothing (without the hand-over its scan's range lock stayed in the table for good).
#[test]
fn a_worker_that_ends_leaves_nothing_retained() {
    let p: Mvcc<Ssi> = open_small();
    let mut w1 = p.worker(0, false);
    {
        let mut w2 = p.worker(1, false);
        // `old` overlaps the scanner, so the scanner is retained (privately) when it commits.
        let mut old = p.begin(&mut w1);
        old.snapshot();
        let mut scanner = p.begin(&mut w2);
        scanner.scan(KV, 0, 99, one(), |_, _| true).unwrap();
        scanner.update(KV, 10, one(), |r| r.set_int(B, 7)).unwrap();
        scanner.commit().unwrap();
        old.commit().unwrap();
        let g = p.gc_stats();
        assert_eq!((g.retained, g.range_locks), (1, 1), "{g:?}");
    } // w2 ends
    sweep_commits(&p, &mut w1);
    let g = p.gc_stats();
    assert_eq!((g.retained, g.range_locks), (0, 0), "{g:?}");
}

/// Sessions that come and go (an embedder opening one per request) reuse what the ended ones left
/// — snapshot slot, retention queues, transaction records — so the registries every commit walks
/// and the record pool stay as large as the most workers alive at once; a new worker with an ended
/// one's id goes on with its transaction ids; and nothing the ended ones retained is lost.
#[test]
fn sessions_that_come_and_go_reuse_what_ended_sessions_left() {
    let p: Mvcc<Ssi> = open_small();
    let mut kept = p.worker(0, false);
    let mut seen = std::collections::HashSet::new();
    for i in 0..500u64 {
        // Every tenth round a transaction of the kept worker overlaps the short sessions, so
        // theirs are retained when they end.
        let mut old = (i % 10 == 0).then(|| p.begin(&mut kept));
        if let Some(t) = &mut old {
            t.get(KV, 50, one()).unwrap();
        }
        for id in [1, 2] {
            let mut w = p.worker(id, false);
            let mut t = p.begin(&mut w);
            assert!(
                seen.insert(t.id()),
                "transaction id {} handed out twice",
                t.id()
            );
            t.get(KV, i % 40, one()).unwrap();
            t.update(KV, 40 + i % 40, one(), |r| r.set_int(B, i as i64))
                .unwrap();
            t.scan(KV, 90, 95, one(), |_, _| true).unwrap();
            t.commit().unwrap();
        }
        if let Some(t) = old {
            t.commit().unwrap();
        }
    }
    let g = p.gc_stats();
    // The kept worker and one session at a time.
    assert_eq!(g.slots, 2, "{g:?}");
    assert!(g.records <= 10, "1 000 sessions' records: {g:?}");
    assert_eq!(p.ssi.queues(), 2, "retention queues");
    // What the last sessions left retained goes at the kept worker's next commits.
    sweep_commits(&p, &mut kept);
    let g = p.gc_stats();
    assert_eq!((g.retained, g.range_locks), (0, 0), "{g:?}");
}

/// A table that is read-only once loaded is read without SIREAD or range locks under `ssi` (no
/// transaction can write it, so no rw-antidependency can start at such a read), while a read of an
/// ordinary table in the same transaction still takes its lock; writes to it are refused at every
/// level.
#[test]
fn read_only_tables_take_no_siread_or_range_locks() {
    use crate::protocols::ProtocolConfig;
    use crate::storage::{Column, ColumnType, Database, Schema, TableSpec};
    let mut db = Database::new();
    let schema = || Schema::new(vec![Column::new("v", ColumnType::Int)]).unwrap();
    let rw = db
        .create_table(TableSpec::new("rw", schema()).ordered(0))
        .unwrap();
    let ro = db
        .create_table(TableSpec::new("ro", schema()).ordered(0).read_only())
        .unwrap();
    let mut scratch = Vec::new();
    for t in [rw, ro] {
        for k in 0..4u64 {
            db.table(t)
                .load(k, &mut scratch, |r| {
                    r.set_int(0, k as i64 * 10);
                    Ok(())
                })
                .unwrap();
        }
    }
    let p = Mvcc::<Ssi>::open(db, &ProtocolConfig::default());
    let (mut w1, mut w2) = (p.worker(0, false), p.worker(1, false));
    let v = ColumnSet::one(0);
    // A running transaction keeps the next one retained (with its locks) after it commits.
    let mut old = p.begin(&mut w2);
    old.snapshot();
    let mut t = p.begin(&mut w1);
    assert_eq!(t.get(ro, 2, v).unwrap().unwrap().int(0), 20);
    assert!(t.get(ro, 9, v).unwrap().is_none(), "absent key");
    let mut seen = Vec::new();
    t.scan(ro, 0, 100, v, |k, r| {
        seen.push((k, r.int(0)));
        true
    })
    .unwrap();
    assert_eq!(seen, [(0, 0), (1, 10), (2, 20), (3, 30)]);
    assert_eq!(t.get(rw, 1, v).unwrap().unwrap().int(0), 10);
    t.commit().unwrap();
    let s = p.gc_stats();
    assert_eq!(s.retained, 1, "the reader is retained while `old` runs");
    assert_eq!(
        s.sireads, 1,
        "only the read of the ordinary table took a SIREAD lock"
    );
    assert_eq!(
        s.range_locks, 0,
        "no range lock for the absent key or the scan"
    );
    old.commit().unwrap();

    fn refused<M: Mode>(p: &Mvcc<M>, w: &mut MvccWorker, ro: crate::storage::TableId) {
        let v = ColumnSet::one(0);
        let mut t = p.begin(w);
        let errs = [
            t.update(ro, 1, v, |r| r.set_int(0, 5))
                .map(|_| ())
                .unwrap_err(),
            t.insert(ro, 7, |r| r.set_int(0, 5)).unwrap_err(),
            t.delete(ro, 1).map(|_| ()).unwrap_err(),
        ];
        for e in errs {
            assert_eq!(e.reason, AbortReason::InvalidData, "{e:?}");
        }
        assert_eq!(t.get(ro, 1, v).unwrap().unwrap().int(0), 10, "unchanged");
        assert!(t.get(ro, 7, v).unwrap().is_none(), "no insert");
        drop(t);
    }
    refused(&p, &mut w1, ro);
    let si = Mvcc::<Si>::open(p.db, &ProtocolConfig::default());
    refused(&si, &mut si.worker(0, false), ro);
}
