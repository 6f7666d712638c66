//! YCSB's commit point (`--commit-point`, `--abort-ratio`): where the check sits, what it aborts,
//! and that without it nothing changed.

use super::*;
use ordo::protocols::twopl::{NoWait, TwoPl};
use ordo::protocols::Protocol;
use ordo::txn::declared::run_checked;
use ordo::txn::AbortReason;

fn with_check(ops: usize, read_ratio: f64, after_writes: usize, abort_ratio: f64) -> Ycsb {
    Ycsb::new(YcsbConfig {
        rows: 500,
        ops,
        read_ratio,
        rmw: true,
        fields: 1,
        commit_point: Some(CommitPoint {
            after_writes,
            abort_ratio,
        }),
        ..YcsbConfig::default()
    })
    .unwrap()
}

#[test]
fn the_check_is_a_piece_after_the_kth_write_and_the_commit_point() {
    for (read_ratio, k) in [(0.0, 0), (0.0, 7), (0.0, 20), (0.5, 3), (0.5, 20)] {
        let w = with_check(20, read_ratio, k, 0.5);
        let (mut g, mut p) = (w.generator(0, 4), w.program());
        for _ in 0..300 {
            w.next(&mut g, &mut p);
            let check = p.check.expect("a commit point");
            assert_eq!(p.commit_point(), Some(check));
            assert_eq!(p.pieces(), 21);
            let mut declared = Vec::new();
            p.declare(check, &mut declared);
            assert!(declared.is_empty(), "the check touches nothing");
            // Pieces before the check are requests 0..check, the rest follow it in order.
            let writes_before = p.requests[..check].iter().filter(|r| r.write).count();
            let writes = p.requests.iter().filter(|r| r.write).count();
            assert_eq!(writes_before, k.min(writes), "{:?}", p.requests);
            if k > 0 && writes_before == k {
                assert!(p.requests[check - 1].write, "right after the K-th write");
            } else if k > 0 {
                assert_eq!(
                    check,
                    p.requests.len(),
                    "fewer writes: after the last request"
                );
            }
            for piece in (0..p.pieces()).filter(|&i| i != check) {
                let r = p.requests[piece - usize::from(piece > check)];
                declared.clear();
                p.declare(piece, &mut declared);
                assert_eq!(declared[0].target, ordo::txn::Target::Key(r.key));
            }
            let mut deps = Vec::new();
            for i in 0..p.pieces() {
                p.depends_on(i, &mut deps);
                p.declaration_depends_on(i, &mut deps);
            }
            assert!(deps.is_empty(), "no data edges, no reconnaissance");
        }
    }
}

/// The check aborts (a user abort) exactly the transactions drawn with the flag, about
/// `--abort-ratio` of them, after their first K writes; they leave no trace (under 2PL, which
/// undoes them).
#[test]
fn the_check_aborts_the_marked_transactions_and_they_leave_no_trace() {
    type P = TwoPl<NoWait>;
    let w = with_check(10, 0.0, 4, 0.2);
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = P::open(db, &Default::default());
    let mut worker = p.worker(0, false);
    let counter = |p: &P, worker: &mut _| -> u64 {
        let mut tx = p.begin(worker);
        (0..500)
            .map(|k| {
                let row = tx.get(USERTABLE, k, ColumnSet::ALL).unwrap().unwrap();
                u64::from_le_bytes(row.str(0)[..8].try_into().unwrap())
            })
            .fold(0u64, u64::wrapping_add)
    };
    let before = counter(&p, &mut worker);
    let (mut g, mut prog) = (w.generator(0, 9), w.program());
    let (mut committed, mut aborted) = (0u64, 0u64);
    for _ in 0..2_000 {
        w.next(&mut g, &mut prog);
        assert_eq!(prog.check, Some(4));
        match run_checked(&mut prog, p.begin(&mut worker)) {
            Ok(v) => {
                assert!(v.is_empty(), "{v:#?}");
                assert!(!prog.aborts);
                committed += 1;
            }
            Err(a) => {
                assert_eq!(a.reason, AbortReason::User, "{a}");
                assert!(prog.aborts);
                aborted += 1;
            }
        }
    }
    assert!((300..500).contains(&aborted), "{aborted} of 2000 aborted");
    assert_eq!(
        counter(&p, &mut worker).wrapping_sub(before),
        committed * 10,
        "an aborted transaction's first 4 writes are undone"
    );
}

#[test]
fn the_same_seed_marks_the_same_transactions() {
    let w = with_check(20, 0.0, 10, 0.1);
    let draw = || {
        let (mut g, mut p) = (w.generator(3, 77), w.program());
        (0..1000)
            .map(|_| {
                w.next(&mut g, &mut p);
                p.aborts
            })
            .collect::<Vec<bool>>()
    };
    assert_eq!(draw(), draw());
    // No abort without a ratio.
    let none = with_check(20, 0.0, 10, 0.0);
    let (mut g, mut p) = (none.generator(0, 1), none.program());
    for _ in 0..1000 {
        none.next(&mut g, &mut p);
        assert!(!p.aborts);
    }
}

/// Without `--commit-point` the programs, the request stream and the recorded parameters are
/// those of before the option.
#[test]
fn without_a_commit_point_nothing_changes() {
    let plain = Ycsb::new(YcsbConfig {
        rows: 500,
        ..YcsbConfig::default()
    })
    .unwrap();
    let (mut g, mut p) = (plain.generator(0, 4), plain.program());
    plain.next(&mut g, &mut p);
    assert_eq!((p.check, p.commit_point()), (None, None));
    assert_eq!(p.pieces(), p.requests.len());
    let params = plain.params();
    assert!(params.get("commit_point").is_none() && params.get("abort_ratio").is_none());
    let checked = with_check(16, 0.9, 2, 0.01);
    assert_eq!(checked.params()["commit_point"], 2);
    assert_eq!(checked.params()["abort_ratio"], 0.01);
    // The same keys as a workload with a check draws (the flag is drawn after them).
    let same_keys = Ycsb::new(YcsbConfig {
        commit_point: None,
        ..checked.config().clone()
    })
    .unwrap();
    let (mut g1, mut p1) = (same_keys.generator(0, 4), same_keys.program());
    let (mut g2, mut p2) = (checked.generator(0, 4), checked.program());
    same_keys.next(&mut g1, &mut p1);
    checked.next(&mut g2, &mut p2);
    assert_eq!(p1.requests, p2.requests);
}

#[test]
fn validation_bounds_the_commit_point_by_the_requests() {
    let ok = with_check(8, 0.0, 8, 1.0).config().clone();
    assert!(ok.validate().is_ok());
    for bad in [(9, 0.01), (0, 1.5), (0, -0.1), (0, f64::NAN)] {
        let cfg = YcsbConfig {
            commit_point: Some(CommitPoint {
                after_writes: bad.0,
                abort_ratio: bad.1,
            }),
            ..ok.clone()
        };
        assert!(cfg.validate().is_err(), "{bad:?}");
    }
}
