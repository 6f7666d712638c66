//! `dibs` and `dibs-naive`: contended histories checked under every step of Fig. 3's ablation;
//! locks held until commit; a scan blocks an insert into its range and not outside it (phantoms);
//! opposite-order deadlocks of programs are found (or time out under `--dibs-deadlock timeout`), roll
//! back, restart and both commit; interactive deadlocks lose their youngest transaction; waits are
//! reported to an observer.

use super::{
    Dibs, Full, Naive, Variant, BUCKETS_KNOB, DEADLOCK_KNOB, OPT_KNOB, STEPS, TIMEOUT_KNOB,
};
use crate::harness::{verify, VerifyConfig};
use crate::protocols::conformance::{small_db, A, B, KV, S};
use crate::protocols::kit::testkit::{contended, interactive_alongside_worker_loop, Mixed};
use crate::protocols::{execute_retrying, Protocol, ProtocolConfig};
use crate::storage::ColumnSet;
use crate::txn::wait::{observe, WaitObserver};
use crate::txn::{
    Abort, AbortReason, Access, Backoff, Program, RequestSource, RetryPolicy, Ticket, Tx, TxResult,
};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How long a blocked request is watched to see that it stays blocked.
const BLOCKED: Duration = Duration::from_millis(150);

/// `dibs` knobs: the ablation `step`; with `timeout_ms` the paper's deadlock timeout
/// (`--dibs-deadlock timeout`), without it waits-for cycle detection (the default).
fn config(threads: usize, step: &str, timeout_ms: Option<&str>) -> ProtocolConfig {
    let c = ProtocolConfig {
        threads,
        lock_wait_timeout: Duration::from_secs(20),
        ..ProtocolConfig::default()
    }
    .with_knob(&OPT_KNOB, step)
    .unwrap();
    match timeout_ms {
        None => c,
        Some(ms) => c
            .with_knob(&DEADLOCK_KNOB, "timeout")
            .unwrap()
            .with_knob(&TIMEOUT_KNOB, ms)
            .unwrap(),
    }
}

/// `dibs` at `step` on the conformance suite's small database (keys 0, 10, …, 90).
fn small(step: &str) -> Dibs<Full> {
    Dibs::open(small_db(), &config(4, step, None))
}

/// Contended histories under every step of the ablation, and `dibs-naive`: all commit, the checker
/// finds them serializable — with deadlocks detected, once with the paper's timeout (a short
/// one: the mix deadlocks often, and each costs one), and with the paper's other bucket counts
/// (SEATS's 8, SubscriberScan's 1).
#[test]
fn contended_histories_are_serializable_under_every_step() {
    fn run<V: Variant>(protocol: ProtocolConfig, name: &str) {
        let cfg = VerifyConfig {
            protocol,
            txns: 4_000,
            seed: 11,
            prefetch: true,
        };
        let v = verify::run::<Dibs<V>, Mixed>(&contended(), &cfg).unwrap();
        let name = format!("{} {name}", V::INFO.name);
        assert_eq!(v.report.committed, 4_000, "{name}");
        assert!(v.report.is_serializable(), "{name}: {}", v.report);
        assert!(v.report.anomalies.is_empty(), "{name}: {}", v.report);
        assert!(v.report.edges > 4_000, "{name}: too few dependencies");
    }
    for step in STEPS {
        run::<Full>(config(4, step, None), step);
    }
    run::<Naive>(config(4, "full", None), "");
    run::<Full>(config(4, "full", Some("2")), "timeout 2 ms");
    for n in ["1", "8"] {
        let c = config(4, "full", None).with_knob(&BUCKETS_KNOB, n).unwrap();
        assert_eq!(
            Dibs::<Full>::open(small_db(), &c).lock_manager().buckets(0),
            Some(n.parse().unwrap())
        );
        run::<Full>(c, &format!("--dibs-buckets {n}"));
    }
}

#[test]
fn interactive_transactions_alongside_the_worker_loop() {
    interactive_alongside_worker_loop::<Dibs<Full>>();
    interactive_alongside_worker_loop::<Dibs<Naive>>();
}

/// Runs `f` on a new thread with `p`'s worker 1 and a wait observer; the receiver gets its result.
fn on_thread<T: Send + 'static>(
    p: &Arc<Dibs<Full>>,
    f: impl FnOnce(&Dibs<Full>, &mut super::DibsWorker) -> T + Send + 'static,
) -> (mpsc::Receiver<T>, WaitObserver) {
    let (tx, rx) = mpsc::channel();
    let obs = WaitObserver::new();
    let seen = obs.clone();
    let p = p.clone();
    std::thread::spawn(move || {
        observe(Some(obs));
        let mut w = p.worker(1, false);
        let _ = tx.send(f(&p, &mut w));
    });
    (rx, seen)
}

/// A second transaction on a key another has written waits — and says so — until the first
/// commits, then reads its write: the lock was held to the commit, not to the end of the request.
#[test]
fn locks_are_held_until_commit() {
    for step in STEPS {
        let p = Arc::new(small(step));
        let mut w = p.worker(0, false);
        let mut t1 = p.begin(&mut w);
        t1.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 7))
            .unwrap();
        assert_eq!(t1.locks_held(), 1);
        let (rx, obs) = on_thread(&p, |p, w| {
            let mut t2 = p.begin(w);
            let b = t2.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B);
            t2.commit().unwrap();
            b
        });
        assert!(rx.recv_timeout(BLOCKED).is_err(), "{step}: the read waits");
        assert!(obs.is_waiting(), "{step}: and says so");
        let rounds = obs.rounds();
        std::thread::sleep(Duration::from_millis(20));
        assert!(obs.rounds() > rounds, "{step}: reporting rounds");
        // Another column of the same row waits too: locks cover whole rows (see `requests`).
        let (rx2, _) = on_thread(&p, |p, w| {
            let mut t3 = p.begin(w);
            let a = t3.get(KV, 10, ColumnSet::one(A)).unwrap().unwrap().int(A);
            t3.commit().unwrap();
            a
        });
        assert!(rx2.recv_timeout(BLOCKED).is_err(), "{step}: another column");
        t1.commit().unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(7), "{step}");
        assert_eq!(rx2.recv_timeout(Duration::from_secs(10)), Ok(10), "{step}");
        assert!(!obs.is_waiting());
        assert_eq!(p.lock_manager().active(), 0, "{step}: everything released");
    }
}

/// A scan of `[20, 50]` blocks an insert of 35 until it commits, and not an insert of 65; the
/// scan's transaction sees no phantom when it scans again.
#[test]
fn a_scan_blocks_an_insert_into_its_range_and_not_outside() {
    for step in STEPS {
        let p = Arc::new(small(step));
        let mut w = p.worker(0, false);
        let mut t1 = p.begin(&mut w);
        let scan = |t: &mut super::DibsTx<'_, Full>| {
            let mut keys = Vec::new();
            t.scan(KV, 20, 50, ColumnSet::one(A), |k, _| {
                keys.push(k);
                true
            })
            .unwrap();
            keys
        };
        assert_eq!(scan(&mut t1), [20, 30, 40, 50]);
        let insert = |k: u64| {
            move |p: &Dibs<Full>, w: &mut super::DibsWorker| {
                let mut t = p.begin(w);
                t.insert(KV, k, |r| r.set_int(A, k as i64)).unwrap();
                t.commit().unwrap();
            }
        };
        let (inside, _) = on_thread(&p, insert(35));
        assert!(
            inside.recv_timeout(BLOCKED).is_err(),
            "{step}: insert 35 waits"
        );
        let (outside, _) = on_thread(&p, insert(65));
        assert_eq!(
            outside.recv_timeout(Duration::from_secs(10)),
            Ok(()),
            "{step}: insert 65 does not"
        );
        assert_eq!(scan(&mut t1), [20, 30, 40, 50], "{step}: no phantom");
        t1.commit().unwrap();
        assert_eq!(inside.recv_timeout(Duration::from_secs(10)), Ok(()));
        let mut t = p.begin(&mut w);
        assert_eq!(scan(&mut t), [20, 30, 35, 40, 50], "{step}");
        t.commit().unwrap();
    }
}

/// A predicate on a non-key column (`a BETWEEN 20 AND 50`) locks the predicate itself: an update
/// of the rows of a disjoint predicate runs alongside, an overlapping one waits, and so does an
/// insert anywhere (its values are unknown when it locks); a predicate on a string column is
/// refused with `InvalidData`, holding nothing.
#[test]
fn a_predicate_on_a_column_blocks_only_what_can_overlap_it() {
    use crate::txn::predicate::{Expr, Predicate};
    fn between(lo: i64, hi: i64) -> Predicate {
        Expr::between(A as u16, lo, hi)
    }
    for step in ["naive", "grouping", "full"] {
        let p = Arc::new(small(step));
        let mut w = p.worker(0, false);
        let mut t1 = p.begin(&mut w);
        let mut seen = Vec::new();
        t1.scan_where(KV, &between(20, 50), ColumnSet::one(B), |k, _| {
            seen.push(k);
            true
        })
        .unwrap();
        assert_eq!(seen, [20, 30, 40, 50], "{step}");
        let update = |lo: i64, hi: i64| {
            move |p: &Dibs<Full>, w: &mut super::DibsWorker| {
                let mut t = p.begin(w);
                let n = t
                    .update_where(KV, &between(lo, hi), ColumnSet::one(B), |r| r.set_int(B, 7))
                    .unwrap();
                t.commit().unwrap();
                n
            }
        };
        let (disjoint, _) = on_thread(&p, update(70, 90));
        assert_eq!(
            disjoint.recv_timeout(Duration::from_secs(10)),
            Ok(3),
            "{step}: a disjoint predicate does not wait"
        );
        let (overlapping, _) = on_thread(&p, update(40, 60));
        let (insert, _) = on_thread(&p, |p: &Dibs<Full>, w: &mut super::DibsWorker| {
            let mut t = p.begin(w);
            t.insert(KV, 95, |r| r.set_int(A, 95)).unwrap();
            t.commit().unwrap();
        });
        assert!(overlapping.recv_timeout(BLOCKED).is_err(), "{step}");
        assert!(insert.recv_timeout(BLOCKED).is_err(), "{step}");
        t1.commit().unwrap();
        assert_eq!(overlapping.recv_timeout(Duration::from_secs(10)), Ok(3));
        assert_eq!(insert.recv_timeout(Duration::from_secs(10)), Ok(()));
        let mut t = p.begin(&mut w);
        let bad = Expr::eq(S as u16, 1);
        let e = t
            .scan_where(KV, &bad, ColumnSet::one(B), |_, _| true)
            .unwrap_err();
        assert_eq!(e.reason, AbortReason::InvalidData, "{step}: {e:?}");
        assert_eq!(t.locks_held(), 0);
    }
}

/// An update whose rows lie outside a scan's predicate but which writes the predicate's column
/// can move them into it (`SET a = 30 WHERE a BETWEEN 70 AND 90` against a reader of `a BETWEEN
/// 20 AND 50`): it waits, and the reader sees no phantom when it scans again. The same update of
/// another column runs alongside (the previous test).
#[test]
fn an_update_that_moves_rows_into_a_predicate_waits_for_it() {
    use crate::txn::predicate::{Expr, Predicate};
    fn between(lo: i64, hi: i64) -> Predicate {
        Expr::between(A as u16, lo, hi)
    }
    for step in ["naive", "grouping", "full"] {
        let p = Arc::new(small(step));
        let mut w = p.worker(0, false);
        let mut t1 = p.begin(&mut w);
        let scan = |t: &mut super::DibsTx<'_, Full>| {
            let mut seen = Vec::new();
            t.scan_where(KV, &between(20, 50), ColumnSet::one(B), |k, _| {
                seen.push(k);
                true
            })
            .unwrap();
            seen
        };
        assert_eq!(scan(&mut t1), [20, 30, 40, 50], "{step}");
        let (mover, _) = on_thread(&p, |p: &Dibs<Full>, w: &mut super::DibsWorker| {
            let mut t = p.begin(w);
            let n = t
                .update_where(KV, &between(70, 90), ColumnSet::one(A), |r| {
                    r.set_int(A, 30)
                })
                .unwrap();
            t.commit().unwrap();
            n
        });
        assert!(mover.recv_timeout(BLOCKED).is_err(), "{step}: it waits");
        assert_eq!(scan(&mut t1), [20, 30, 40, 50], "{step}: no phantom");
        t1.commit().unwrap();
        assert_eq!(mover.recv_timeout(Duration::from_secs(10)), Ok(3), "{step}");
        let mut t = p.begin(&mut w);
        assert_eq!(scan(&mut t), [20, 30, 40, 50, 70, 80, 90], "{step}");
        t.commit().unwrap();
    }
}

/// Updates `first` then `second`; on its first attempt it meets its twin at `barrier` in between,
/// so that the two hold one key each and wait for each other.
struct Crossing {
    first: u64,
    second: u64,
    barrier: Arc<Barrier>,
    attempts: u32,
}

impl Program for Crossing {
    fn name(&self) -> &'static str {
        "Crossing"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        for k in [self.first, self.second] {
            out.push(Access::update(KV, k, ColumnSet::one(B), ColumnSet::one(B)));
        }
    }
    fn run_piece<X: Tx>(&mut self, _: usize, tx: &mut X) -> TxResult<()> {
        self.attempts += 1;
        tx.update(KV, self.first, ColumnSet::one(B), |r| {
            r.set_int(B, r.int(B) + 1)
        })?;
        if self.attempts == 1 {
            self.barrier.wait();
        }
        tx.update(KV, self.second, ColumnSet::one(B), |r| {
            r.set_int(B, r.int(B) + 1)
        })?;
        Ok(())
    }
}

/// Counts aborts by reason.
#[derive(Default)]
struct Aborts(Vec<AbortReason>);

impl RequestSource for Aborts {
    type Program = Crossing;
    fn program(&self) -> Crossing {
        unreachable!()
    }
    fn next(&mut self, _: &mut Crossing) -> Option<Ticket> {
        unreachable!()
    }
    fn aborted(&mut self, r: AbortReason) {
        self.0.push(r);
    }
    fn finished(&mut self, _: Ticket, _: Result<(), Abort>) {}
    fn seed(&self) -> u64 {
        1
    }
}

/// Two programs update 10 and 20 in opposite orders and deadlock: the cycle is found (or, under
/// `--dibs-deadlock timeout`, a wait times out), one transaction rolls back (its first update
/// undone), releases and restarts, and both commit. Detection needs no timeout: the engine's lock
/// wait timeout is 20 s, and the pair is done well within it.
#[test]
fn opposite_order_deadlock_is_broken_rolls_back_and_both_commit() {
    for (step, timeout_ms) in [
        ("naive", None),
        ("full", None),
        ("naive", Some("10")),
        ("full", Some("10")),
    ] {
        let p: Dibs<Full> = Dibs::open(small_db(), &config(4, step, timeout_ms));
        let step = format!("{step} timeout {timeout_ms:?}");
        let barrier = Arc::new(Barrier::new(2));
        let started = Instant::now();
        let aborts: Vec<Vec<AbortReason>> = std::thread::scope(|s| {
            let hs: Vec<_> = [(10, 20), (20, 10)]
                .into_iter()
                .enumerate()
                .map(|(i, (first, second))| {
                    let (p, barrier) = (&p, barrier.clone());
                    s.spawn(move || {
                        let mut w = p.worker(i as u32, false);
                        let mut prog = Crossing {
                            first,
                            second,
                            barrier,
                            attempts: 0,
                        };
                        let mut src = Aborts::default();
                        let mut backoff = Backoff::new(RetryPolicy::default(), i as u64);
                        execute_retrying(p, &mut w, &mut prog, &mut src, &mut backoff).unwrap();
                        assert_eq!(w.locks_held(), 0);
                        src.0
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let all: Vec<AbortReason> = aborts.concat();
        assert!(!all.is_empty(), "{step}: someone gave up");
        assert!(
            all.iter().all(|r| *r == AbortReason::Deadlock),
            "{step}: {all:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{step}");
        let mut w = p.worker(3, false);
        let mut t = p.begin(&mut w);
        for k in [10, 20] {
            let b = t.get(KV, k, ColumnSet::one(B)).unwrap().unwrap().int(B);
            assert_eq!(
                b, 2,
                "{step}: key {k} updated once by each, the rollback undone"
            );
        }
        t.commit().unwrap();
        assert_eq!(p.lock_manager().active(), 0);
    }
}

/// Two interactive transactions in opposite orders: the younger one, closing the waits-for cycle,
/// gives up with `Deadlock` and holds nothing afterwards; the older one commits.
#[test]
fn an_interactive_deadlock_loses_its_youngest() {
    let p = Arc::new(small("full"));
    let mut w = p.worker(0, false);
    let mut older = p.begin(&mut w);
    older
        .update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    let (go, wait) = mpsc::channel::<()>();
    let (rx, obs) = on_thread(&p, move |p, w| {
        let mut younger = p.begin(w);
        younger
            .update(KV, 20, ColumnSet::one(B), |r| r.set_int(B, 2))
            .unwrap();
        wait.recv().unwrap();
        let r = younger.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 2));
        let held = younger.locks_held();
        (r.map(|_| ()), held)
    });
    go.send(()).unwrap();
    // The younger one waits for the older one's lock on 10…
    let until = Instant::now() + Duration::from_secs(10);
    while !obs.is_waiting() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(obs.is_waiting());
    // …and when the older one waits for 20, the younger one is the victim.
    older
        .update(KV, 20, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    let (r, held) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(r.unwrap_err().reason, AbortReason::Deadlock);
    assert_eq!(held, 0, "rolled back and released at once");
    older.commit().unwrap();
    let mut t = p.begin(&mut w);
    for k in [10, 20] {
        assert_eq!(t.get(KV, k, ColumnSet::one(B)).unwrap().unwrap().int(B), 1);
    }
    t.commit().unwrap();
}

#[test]
fn the_knob_picks_the_ablation_step_and_dibs_naive_ignores_it() {
    use ordo_predicate::{Optimizations, Step};
    for (name, step) in STEPS.iter().zip(Step::ALL) {
        let p = small(name);
        assert_eq!(
            p.lock_manager().optimizations(),
            Optimizations::cumulative(step)
        );
        let n: Dibs<Naive> = Dibs::open(small_db(), &config(2, name, Some("10")));
        assert_eq!(n.lock_manager().optimizations(), Optimizations::naive());
    }
    let d: Dibs<Full> = Dibs::open(small_db(), &ProtocolConfig::default());
    assert_eq!(d.lock_manager().optimizations(), Optimizations::full());
    assert!(OPT_KNOB.parse("fastest").is_err());
    assert!(DEADLOCK_KNOB.parse("pray").is_err());
    assert!(d.programs_detect, "detection is the default");
    assert!(!n_timeout().programs_detect);
}

fn n_timeout() -> Dibs<Naive> {
    Dibs::open(small_db(), &config(2, "naive", Some("10")))
}
