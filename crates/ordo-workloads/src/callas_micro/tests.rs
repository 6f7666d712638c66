use super::*;
use ordo::harness::{verify, Verified, VerifyConfig};
use ordo::protocols::nocc::NoCC;
use ordo::protocols::pwv::{Fine, Pwv};
use ordo::protocols::silo::Silo;
use ordo::protocols::twopl::{Detect, TwoPl};
use ordo::protocols::{Protocol, ProtocolConfig};
use ordo::txn::declared::run_checked;
use ordo::txn::AbortReason;
use std::collections::HashSet;

fn cfg(variant: Variant) -> CallasMicroConfig {
    options::defaults(variant, crate::Purpose::Verify)
}

/// Every configuration the tests run: each variant, and each at both ends of its option.
fn configs() -> Vec<CallasMicroConfig> {
    vec![
        cfg(Variant::Nexus),
        CallasMicroConfig {
            contention: Contention::High,
            ..cfg(Variant::Nexus)
        },
        CallasMicroConfig {
            t1_share: 90.0,
            ..cfg(Variant::Frequency)
        },
        CallasMicroConfig {
            shared_rows: 1,
            ..cfg(Variant::Contention)
        },
        CallasMicroConfig {
            shared_rows: 100,
            ..cfg(Variant::Contention)
        },
        cfg(Variant::Rollback),
        CallasMicroConfig {
            rollback_pct: 30.0,
            ..cfg(Variant::Rollback)
        },
    ]
}

fn draw(w: &CallasMicro, thread: u32, n: usize) -> Vec<CallasMicroTxn> {
    let mut g = w.generator(thread, 1);
    (0..n)
        .map(|_| {
            let mut p = w.program();
            w.next(&mut g, &mut p);
            p
        })
        .collect()
}

/// The private keys of worker `thread`'s slice.
fn slice(c: &CallasMicroConfig, thread: u64) -> std::ops::Range<u64> {
    thread * c.private_rows..(thread + 1) * c.private_rows
}

#[test]
fn every_piece_declares_its_one_row_with_no_data_edges() {
    for c in configs() {
        let w = CallasMicro::new(c.clone()).unwrap();
        let mut names = HashSet::new();
        for p in draw(&w, 3, 400) {
            names.insert(p.name());
            let v = ColumnSet::one(VALUE);
            for (i, s) in p.steps.iter().enumerate() {
                let mut out = Vec::new();
                p.declare(i, &mut out);
                assert_eq!(out, vec![Access::update(s.table, s.key, v, v)], "{c:?}");
                assert!(s.key < c.rows(s.table), "{c:?}: {s:?} outside its table");
                let mut deps = Vec::new();
                p.depends_on(i, &mut deps);
                p.declaration_depends_on(i, &mut deps);
                assert!(deps.is_empty(), "{c:?}: piece {i} depends on {deps:?}");
            }
            let shape: Vec<TableId> = p.steps.iter().map(|s| s.table).collect();
            let private = [PRIVATE; PRIVATE_OPS];
            let tail = |head: &[TableId]| [head, &private[..]].concat();
            match (c.variant, p.kind) {
                (Variant::Nexus, Kind::Nexus) if c.contention == Contention::High => {
                    assert_eq!(p.steps.iter().map(|s| s.key).collect::<Vec<_>>(), [0, 1]);
                    assert_eq!(shape, [SHARED, SHARED]);
                }
                (Variant::Nexus, Kind::Nexus) => assert_eq!(shape, private),
                (Variant::Frequency, Kind::T1 | Kind::T2) => assert_eq!(shape, tail(&[SHARED])),
                (Variant::Contention, Kind::T1) => assert_eq!(shape, tail(&[SHARED, TYPE_T1])),
                (Variant::Contention, Kind::T2) => assert_eq!(shape, tail(&[SHARED, TYPE_T2])),
                (Variant::Rollback, Kind::Check) => {
                    assert_eq!(shape, tail(&[A, B, C]));
                    let i = p.steps[0].key;
                    assert!(p.steps[..3].iter().all(|s| s.key == i && s.check));
                    assert!(
                        !p.steps[..2].iter().any(|s| s.fails),
                        "only c's check fails"
                    );
                    assert_eq!(p.commit_point(), Some(ROLLBACK_PIECE));
                }
                other => panic!("{c:?}: {other:?}"),
            }
            if p.kind != Kind::Check {
                assert_eq!(p.commit_point(), None);
                assert!(p.steps.iter().all(|s| !s.check));
            }
            // The private rows: one aligned group of 5, in worker 3's slice.
            let own: Vec<u64> = p
                .steps
                .iter()
                .filter(|s| s.table == PRIVATE)
                .map(|s| s.key)
                .collect();
            if let Some(&first) = own.first() {
                assert_eq!(first % PRIVATE_OPS as u64, 0);
                assert_eq!(own, (first..first + PRIVATE_OPS as u64).collect::<Vec<_>>());
                assert!(slice(&c, 3).contains(&first), "{c:?}: {own:?}");
            }
        }
        let expected: &[&str] = match c.variant {
            Variant::Nexus => &["Nexus"],
            Variant::Rollback => &["Check"],
            _ => &["T1", "T2"],
        };
        assert_eq!(
            names,
            expected.iter().copied().collect::<HashSet<_>>(),
            "{c:?}"
        );
    }
}

#[test]
fn the_mixes_follow_their_options() {
    let share = |c: CallasMicroConfig, kind: Kind| {
        let txns = draw(&CallasMicro::new(c).unwrap(), 0, 2_000);
        txns.iter().filter(|p| p.kind == kind).count()
    };
    let t1 = share(
        CallasMicroConfig {
            t1_share: 90.0,
            ..cfg(Variant::Frequency)
        },
        Kind::T1,
    );
    assert!((1_700..1_900).contains(&t1), "{t1} of 2000 T1 at 90%");
    let t1 = share(cfg(Variant::Contention), Kind::T1);
    assert!(
        (900..1_100).contains(&t1),
        "{t1} of 2000 T1: equal frequency"
    );
    let w = CallasMicro::new(CallasMicroConfig {
        rollback_pct: 25.0,
        ..cfg(Variant::Rollback)
    })
    .unwrap();
    let failing = draw(&w, 0, 2_000).iter().filter(|p| p.fails()).count();
    assert!(
        (400..600).contains(&failing),
        "{failing} of 2000 fail at 25%"
    );
    let rows: HashSet<u64> = draw(
        &CallasMicro::new(CallasMicroConfig {
            shared_rows: 3,
            ..cfg(Variant::Contention)
        })
        .unwrap(),
        0,
        200,
    )
    .iter()
    .map(|p| p.steps[0].key)
    .collect();
    assert_eq!(
        rows,
        HashSet::from([0, 1, 2]),
        "the first update among --shared-rows"
    );
}

#[test]
fn workers_never_share_private_rows_and_each_cycles_through_its_slice() {
    let c = cfg(Variant::Nexus);
    let w = CallasMicro::new(c.clone()).unwrap();
    let per_cycle = (c.private_rows / PRIVATE_OPS as u64) as usize;
    let keys = |thread: u32| -> Vec<u64> {
        draw(&w, thread, per_cycle)
            .iter()
            .flat_map(|p| p.steps.iter().map(|s| s.key))
            .collect()
    };
    let (k0, k1) = (keys(0), keys(1));
    let (s0, s1): (HashSet<u64>, HashSet<u64>) =
        (k0.iter().copied().collect(), k1.iter().copied().collect());
    assert_eq!(
        s0.len(),
        k0.len(),
        "a cycle touches each row of the slice once"
    );
    assert_eq!(s0, slice(&c, 0).collect(), "and the whole slice");
    assert!(s0.is_disjoint(&s1));
    // Worker 128 wraps onto worker 0's slice.
    assert_eq!(keys(PRIVATE_SLOTS as u32), k0);
}

#[test]
fn programs_stay_within_their_declarations_and_only_a_failed_check_aborts() {
    for c in configs() {
        let w = CallasMicro::new(c.clone()).unwrap();
        let mut db = Database::new();
        w.load(&mut db).unwrap();
        let p = NoCC::open(db, &Default::default());
        let mut worker = p.worker(0, false);
        for mut prog in draw(&w, 0, 300) {
            match run_checked(&mut prog, p.begin(&mut worker)) {
                Ok(v) => {
                    assert!(v.is_empty(), "{c:?}: {v:#?}");
                    assert!(!prog.fails());
                }
                Err(a) => {
                    assert_eq!(a.reason, AbortReason::User, "{a}");
                    assert!(prog.fails(), "{c:?}: {a}");
                }
            }
        }
    }
}

fn run<P: Protocol>(w: &CallasMicro, threads: usize, txns: u64) -> Verified {
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(threads),
        txns,
        seed: 5,
        prefetch: true,
    };
    verify::run::<P, CallasMicro>(w, &cfg).unwrap()
}

/// Every configuration under 2PL (deadlock detection), Silo and PWV (which reads the commit
/// point), on 1 and 4 workers: serializable, the invariant holds, everything commits but the
/// Checks that fail.
#[test]
fn every_variant_keeps_its_invariant_under_2pl_silo_and_pwv() {
    for c in configs() {
        let w = CallasMicro::new(c.clone()).unwrap();
        for threads in [1, 4] {
            for (name, v) in [
                ("2pl-detect", run::<TwoPl<Detect>>(&w, threads, 2_000)),
                ("silo", run::<Silo>(&w, threads, 2_000)),
                ("pwv", run::<Pwv<Fine>>(&w, threads, 2_000)),
            ] {
                let r = &v.report;
                let at = format!("{name} × {threads}, {c:?}");
                assert!(r.is_serializable() && r.anomalies.is_empty(), "{at}: {r}");
                assert_eq!(v.invariants, Ok(()), "{at}");
                if c.rollback_pct == 0.0 {
                    assert_eq!(r.committed, 2_000, "{at}");
                } else {
                    assert!((1_200..1_600).contains(&r.committed), "{at}: {r}");
                }
            }
        }
    }
}

/// `--rollback-pct 100`: every Check's check of c[i] fails, so nothing commits, and the invariant
/// (a[i] = b[i] = c[i]) shows that the updates of a[i] and b[i] before it were rolled back.
#[test]
fn a_check_whose_check_failed_never_commits() {
    let w = CallasMicro::new(CallasMicroConfig {
        rollback_pct: 100.0,
        ..cfg(Variant::Rollback)
    })
    .unwrap();
    for threads in [1, 4] {
        for (name, v) in [
            ("2pl-detect", run::<TwoPl<Detect>>(&w, threads, 2_000)),
            ("silo", run::<Silo>(&w, threads, 2_000)),
            ("pwv", run::<Pwv<Fine>>(&w, threads, 2_000)),
        ] {
            assert_eq!(v.report.committed, 0, "{name} × {threads}: {}", v.report);
            assert_eq!(v.invariants, Ok(()), "{name} × {threads}");
        }
    }

    // Half of them fail: exactly the others commit, and only they leave a trace.
    let w = CallasMicro::new(CallasMicroConfig {
        rollback_pct: 50.0,
        ..cfg(Variant::Rollback)
    })
    .unwrap();
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = TwoPl::<Detect>::open(db, &ProtocolConfig::with_threads(1));
    let mut worker = p.worker(0, false);
    let mut committed = 0;
    for mut prog in draw(&w, 0, 2_000) {
        match p.execute(&mut worker, &mut prog) {
            Ok(()) => {
                assert!(!prog.fails(), "a Check whose check failed committed");
                committed += 1;
            }
            Err(a) => {
                assert!(prog.fails(), "{a}");
                assert_eq!(a.reason, AbortReason::User);
            }
        }
    }
    assert!((800..1_200).contains(&committed), "{committed} of 2000");
    let c = w.config();
    for t in [A, B, C] {
        let sum: i64 = values(p.db(), t, c.rows(t)).unwrap().iter().sum();
        assert_eq!(sum, committed, "table {t}");
    }
    assert_eq!(w.check(p.db()), Ok(()));
}

#[test]
fn the_check_finds_a_torn_transaction_or_a_lost_update() {
    let broken = |c: CallasMicroConfig, t: TableId, keys: &[u64], what: &str| {
        let w = CallasMicro::new(c).unwrap();
        let mut db: Database<()> = Database::new();
        w.load(&mut db).unwrap();
        assert_eq!(w.check(&db), Ok(()));
        for &k in keys {
            assert!(crate::inspect::set_int(&db, t, k, VALUE, 1));
        }
        let e = w.check(&db).unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    };
    // Four of a group of five private rows updated.
    broken(cfg(Variant::Nexus), PRIVATE, &[5, 6, 7, 8], "torn");
    // A whole group, but no shared row: the shared update lost.
    let group = [10, 11, 12, 13, 14];
    broken(cfg(Variant::Frequency), PRIVATE, &group, "sum to 0");
    broken(cfg(Variant::Contention), SHARED, &[3], "sum to 1");
    broken(
        CallasMicroConfig {
            contention: Contention::High,
            ..cfg(Variant::Nexus)
        },
        SHARED,
        &[1],
        "shared rows 0 and 1",
    );
    // A rolled-back Check that left a[4] and b[4] behind.
    let rollback = cfg(Variant::Rollback);
    broken(rollback.clone(), A, &[4], "a[4], b[4], c[4]");
    broken(rollback, PRIVATE, &group, "the rows of table a sum to 0");
}
