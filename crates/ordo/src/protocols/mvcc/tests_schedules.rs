//! The schedules of the SSI notes (Cahill's thesis and constructed ones), driven step by step on one
//! thread with up to four transactions. Every schedule commits under `si` (the anomaly happens, and
//! the checker names it), and under `ssi` at least one transaction aborts as `unsafe` and the
//! committed history is serializable.

use super::{Mode, Mvcc, MvccTx, Si, Ssi};
use crate::check::{check, AnomalyKind, History, Report};
use crate::protocols::conformance::{open_small, B, KV};
use crate::protocols::Protocol;
use crate::storage::ColumnSet;
use crate::txn::{AbortReason, Tx, TxResult};

/// Items of the schedules: `x y z w v` are keys 10..50 of the small table.
fn item(c: char) -> u64 {
    match c {
        'x' => 10,
        'y' => 20,
        'z' => 30,
        'w' => 40,
        'v' => 50,
        'p' => 55,
        'q' => 56,
        _ => panic!("unknown item {c}"),
    }
}

/// The outcome of a schedule: which transactions committed, and the aborts (txn, step, reason).
#[derive(Debug)]
pub(super) struct Run {
    pub committed: Vec<bool>,
    pub aborts: Vec<(usize, String, AbortReason)>,
    pub report: Report,
}

/// One step of a schedule.
fn step<M: Mode>(tx: &mut MvccTx<'_, M>, op: char, arg: &str) -> TxResult<()> {
    let b = ColumnSet::one(B);
    match op {
        'r' => tx.get(KV, item(arg.chars().next().unwrap()), b).map(|_| ()),
        'w' => tx
            .update(KV, item(arg.chars().next().unwrap()), b, |r| {
                r.set_int(B, r.int(B) + 1)
            })
            .map(|_| ()),
        'i' => tx.insert(KV, arg.parse().unwrap(), |r| r.set_int(B, 1)),
        'd' => tx.delete(KV, arg.parse().unwrap()).map(|_| ()),
        's' => {
            let (lo, hi) = arg.split_once('-').unwrap();
            tx.scan(KV, lo.parse().unwrap(), hi.parse().unwrap(), b, |_, _| true)
        }
        _ => panic!("unknown op {op}"),
    }
}

/// Runs a schedule such as `b1 r1(x) w2(y) c1 c2` (ops `b r w i d s c`, transactions 1..=4; `i`/`d`
/// take a key, `s` a key range `lo-hi`) on a fresh small database.
pub(super) fn run<M: Mode>(schedule: &str) -> Run {
    let p: Mvcc<M> = open_small();
    let mut workers: Vec<_> = (0..4).map(|i| p.worker(i, true)).collect();
    let mut free: Vec<_> = workers.iter_mut().map(Some).collect();
    let mut txs: Vec<Option<MvccTx<'_, M>>> = (0..4).map(|_| None).collect();
    let mut committed = vec![false; 4];
    let mut dead = [false; 4];
    let mut aborts = Vec::new();
    for s in schedule.split_whitespace() {
        let mut cs = s.chars();
        let op = cs.next().unwrap();
        let n = cs.next().unwrap().to_digit(10).unwrap() as usize - 1;
        let arg = s[2..].trim_start_matches('(').trim_end_matches(')');
        if dead[n] {
            continue;
        }
        let res = match op {
            'b' => {
                // `b_i` is where the schedules place T_i's snapshot (the store takes it lazily, at
                // the first operation, unless forced).
                let mut tx = p.begin(free[n].take().unwrap());
                tx.snapshot();
                txs[n] = Some(tx);
                Ok(())
            }
            'c' => {
                let r = txs[n].take().unwrap().commit();
                committed[n] = r.is_ok();
                r
            }
            _ => step(txs[n].as_mut().unwrap(), op, arg),
        };
        if let Err(a) = res {
            aborts.push((n + 1, s.to_string(), a.reason));
            dead[n] = true;
            txs[n] = None;
        }
    }
    drop(txs);
    let mut txns = Vec::new();
    for w in workers.iter_mut() {
        txns.extend(Mvcc::<M>::recorder(w).take());
    }
    Run {
        committed,
        aborts,
        report: check(&History { txns }),
    }
}

/// The schedule commits every transaction under SI and the checker finds a cycle; under SSI some
/// transaction aborts as unsafe and the history is serializable.
fn anomaly(schedule: &str, txns: usize) {
    let si = anomaly_with_phantom(schedule, txns);
    assert!(
        !si.report.is_serializable(),
        "si history of {schedule} has a cycle"
    );
}

/// As [`anomaly`], for schedules whose cycle goes through a predicate read (a phantom): under SI
/// every transaction commits although each one's scan missed the other's insert or delete, and the
/// checker, which records each scan's range as a predicate read, finds the cycle.
fn anomaly_with_phantom(schedule: &str, txns: usize) -> Run {
    let si = run::<Si>(schedule);
    assert!(
        si.aborts.is_empty() && si.committed[..txns].iter().all(|c| *c),
        "si commits all of {schedule}: {si:?}"
    );
    assert!(
        !si.report.is_serializable(),
        "si history of {schedule} has a cycle: {}",
        si.report
    );
    let ssi = run::<Ssi>(schedule);
    assert!(
        ssi.aborts.iter().any(|a| a.2 == AbortReason::Unsafe),
        "ssi aborts in {schedule}: {ssi:?}"
    );
    assert!(ssi.report.is_serializable(), "{}", ssi.report);
    si
}

#[test]
fn write_skew() {
    anomaly("b1 b2 r1(x) r1(y) r2(x) r2(y) w1(x) w2(y) c1 c2", 2);
}

#[test]
fn read_only_anomaly_a_aborts_the_reader_at_its_read() {
    let s = "b1 r1(y) b2 w2(y) w2(z) c2 b3 w1(x) c1 r3(x) r3(z) c3";
    anomaly(s, 3);
    let ssi = run::<Ssi>(s);
    assert_eq!(
        ssi.aborts,
        vec![(3, "r3(x)".into(), AbortReason::Unsafe)],
        "T_in aborts at r_i(x)"
    );
}

#[test]
fn read_only_anomaly_b_aborts_the_pivot() {
    let s = "b1 r1(y) b2 w2(y) w2(z) c2 b3 r3(x) r3(z) w1(x) c1 c3";
    anomaly(s, 3);
    let ssi = run::<Ssi>(s);
    assert_eq!(ssi.aborts.len(), 1, "{ssi:?}");
    assert_eq!(ssi.aborts[0].0, 1, "the pivot aborts: {ssi:?}");
    assert!(ssi.committed[1] && ssi.committed[2]);
}

#[test]
fn read_only_anomaly_survives_when_queries_run_at_si() {
    // §3.8: with T_in run as a query at plain SI, schedule (a) commits non-serializably.
    let p: Mvcc<Ssi> = open_small();
    let mut ws: Vec<_> = (0..3).map(|i| p.worker(i, true)).collect();
    let (a, rest) = ws.split_at_mut(1);
    let (b, c) = rest.split_at_mut(1);
    let one = ColumnSet::one(B);
    let mut tp = p.begin(&mut a[0]);
    tp.get(KV, 20, one).unwrap();
    let mut to = p.begin(&mut b[0]);
    to.update(KV, 20, one, |r| r.set_int(B, 1)).unwrap();
    to.update(KV, 30, one, |r| r.set_int(B, 1)).unwrap();
    to.commit().unwrap();
    let mut ti = p.begin(&mut c[0]);
    ti.snapshot();
    ti.run_as_query_at_si();
    tp.update(KV, 10, one, |r| r.set_int(B, 1)).unwrap();
    tp.commit().unwrap();
    ti.get(KV, 10, one).unwrap();
    ti.get(KV, 30, one).unwrap();
    ti.commit().unwrap();
    let mut txns = Vec::new();
    for w in ws.iter_mut() {
        txns.extend(Mvcc::<Ssi>::recorder(w).take());
    }
    assert!(!check(&History { txns }).is_serializable());
}

/// Schedule (a) of the read-only anomaly, with T_out a pure writer (no SIREAD lock, so Cahill would
/// not even suspend it) whose worker runs on, so T_out's record is recycled before the pivot commits
/// and before T_in reads: the pivot must still know T_out committed first, and T_in must abort.
#[test]
fn a_recycled_t_out_still_makes_the_committed_pivot_dangerous() {
    let p: Mvcc<Ssi> = open_small();
    let mut ws: Vec<_> = (0..3).map(|i| p.worker(i, true)).collect();
    let (a, rest) = ws.split_at_mut(1);
    let (b, c) = rest.split_at_mut(1);
    let one = ColumnSet::one(B);
    let mut tp = p.begin(&mut a[0]);
    tp.get(KV, 20, one).unwrap();
    let mut to = p.begin(&mut b[0]);
    to.update(KV, 20, one, |r| r.set_int(B, 1)).unwrap();
    to.update(KV, 30, one, |r| r.set_int(B, 1)).unwrap();
    to.commit().unwrap();
    for _ in 0..4 {
        let mut t = p.begin(&mut b[0]);
        t.update(KV, 90, one, |r| r.set_int(B, r.int(B) + 1))
            .unwrap();
        t.commit().unwrap();
    }
    let mut ti = p.begin(&mut c[0]);
    ti.snapshot();
    tp.update(KV, 10, one, |r| r.set_int(B, 1)).unwrap();
    tp.commit().unwrap();
    let r = ti.get(KV, 10, one).map(|_| ());
    assert_eq!(
        r.map_err(|a| a.reason),
        Err(AbortReason::Unsafe),
        "T_in aborts at r_i(x)"
    );
    drop(ti);
    let mut txns = Vec::new();
    for w in ws.iter_mut() {
        txns.extend(Mvcc::<Ssi>::recorder(w).take());
    }
    assert!(check(&History { txns }).is_serializable());
}

#[test]
fn doctors_on_call() {
    // Doctors 100 and 110 are on call (b = 1); each transaction checks that at least two are on call
    // (a scan) and takes one off.
    fn go<M: Mode>() -> (usize, Report) {
        let p: Mvcc<M> = open_small();
        let (mut w0, mut w1, mut w2) = (p.worker(0, true), p.worker(1, true), p.worker(2, true));
        let mut setup = p.begin(&mut w0);
        setup.insert(KV, 100, |r| r.set_int(B, 1)).unwrap();
        setup.insert(KV, 110, |r| r.set_int(B, 1)).unwrap();
        setup.commit().unwrap();
        let on_call = |tx: &mut MvccTx<'_, M>| -> TxResult<i64> {
            let mut n = 0;
            tx.scan(KV, 100, 199, ColumnSet::one(B), |_, r| {
                n += r.int(B);
                true
            })?;
            Ok(n)
        };
        let mut t1 = p.begin(&mut w1);
        let mut t2 = p.begin(&mut w2);
        let mut aborts = 0;
        let n1 = on_call(&mut t1).unwrap();
        let n2 = on_call(&mut t2).unwrap();
        assert_eq!((n1, n2), (2, 2));
        let r1 = t1.update(KV, 100, ColumnSet::one(B), |r| r.set_int(B, 0));
        let r2 = t2.update(KV, 110, ColumnSet::one(B), |r| r.set_int(B, 0));
        for (r, t) in [(r1, t1), (r2, t2)] {
            if r.is_err() || t.commit().is_err() {
                aborts += 1;
            }
        }
        let mut txns = Mvcc::<M>::recorder(&mut w0).take();
        txns.extend(Mvcc::<M>::recorder(&mut w1).take());
        txns.extend(Mvcc::<M>::recorder(&mut w2).take());
        (aborts, check(&History { txns }))
    }
    let (aborts, report) = go::<Si>();
    assert_eq!(aborts, 0);
    assert!(!report.is_serializable(), "si: both doctors leave");
    let (aborts, report) = go::<Ssi>();
    assert!(aborts >= 1);
    assert!(report.is_serializable(), "{report}");
}

#[test]
fn tpcc_plus_plus_credit_check_anomaly() {
    // Example 5 of the thesis on a tiny model: key 10 holds c_balance, key 20 c_credit, keys 100..199
    // the customer's undelivered orders. Payment (T2) lowers the balance; New Order (T3) reads the
    // credit and inserts an order; Credit Check (T1) reads balance and orders and writes the credit.
    let s = "b2 b1 w2(x) c2 b3 r3(y) i3(150) c3 r1(x) s1(100-199) w1(y) c1";
    anomaly_with_phantom(s, 3);
    let ssi = run::<Ssi>(s);
    assert_eq!(ssi.aborts.len(), 1);
    assert_eq!(
        ssi.aborts[0].0, 1,
        "the credit check (pivot) aborts: {ssi:?}"
    );
}

#[test]
fn phantom_insert_with_index_both_orders() {
    // Each counts the keys in 100..199 (a range scan on the ordered index) and inserts one. No item
    // is both read and written: only the scans' predicate anti-dependencies close the cycle (G2).
    for s in [
        "b1 b2 s1(100-199) s2(100-199) i1(110) i2(120) c1 c2",
        "b1 b2 s1(100-199) i1(110) s2(100-199) i2(120) c2 c1",
    ] {
        let si = anomaly_with_phantom(s, 2);
        assert!(si.report.has(AnomalyKind::G2), "{s}: {}", si.report);
    }
}

#[test]
fn phantom_insert_without_index_both_orders() {
    // A predicate over the whole table (no usable index: every row is read) instead of a key range.
    anomaly_with_phantom("b1 b2 s1(0-1000) s2(0-1000) i1(115) i2(125) c1 c2", 2);
    anomaly_with_phantom("b1 b2 s1(0-1000) i1(115) s2(0-1000) i2(125) c2 c1", 2);
}

#[test]
fn phantom_via_absent_key_reads() {
    // Each reads that keys 55 and 56 are absent (point reads of never-indexed keys), then inserts one;
    // here the checker sees the cycle through the absent versions.
    anomaly("b1 b2 r1(p) r1(q) r2(p) r2(q) i1(55) i2(56) c1 c2", 2);
    anomaly("b1 b2 r1(p) r1(q) i1(55) r2(p) r2(q) i2(56) c2 c1", 2);
    anomaly_with_phantom("b1 b2 s1(55-56) s2(55-56) i1(55) i2(56) c1 c2", 2);
}

#[test]
fn phantom_delete() {
    // Keys 100 and 110 exist; each sees both in the range and deletes a different one.
    for order in [
        "b3 i3(100) i3(110) c3 b1 b2 s1(100-199) s2(100-199) d1(100) d2(110) c1 c2",
        "b3 i3(100) i3(110) c3 b1 b2 s1(0-1000) d1(100) s2(0-1000) d2(110) c2 c1",
    ] {
        anomaly_with_phantom(order, 3);
    }
}

#[test]
fn constructed_commit_ordering_schedule_aborts() {
    // NOTES [note]: T=1, O1=2, O2=3, In=4. The literal self-reference rule admits it; keeping the
    // earliest commit among committed out-conflicts aborts T.
    let s = "b1 r1(y) b2 w2(y) w2(z) b3 r1(w) w3(w) c2 b4 r4(z) r4(x) c4 w1(x) c1 c3";
    let si = run::<Si>(s);
    assert!(si.aborts.is_empty(), "{si:?}");
    assert!(!si.report.is_serializable());
    let ssi = run::<Ssi>(s);
    assert!(
        ssi.aborts
            .iter()
            .any(|a| a.0 == 1 && a.2 == AbortReason::Unsafe),
        "{ssi:?}"
    );
    assert!(ssi.report.is_serializable());
}

#[test]
fn false_positive_of_item_6_commits() {
    let s = "b1 b2 r1(x) r2(y) w2(x) c1 b3 w3(y) c3 c2";
    let ssi = run::<Ssi>(s);
    assert!(ssi.aborts.is_empty(), "{ssi:?}");
    assert!(ssi.report.is_serializable());
}

/// All interleavings of `a`, `b`, `c` (each kept in order).
fn interleavings(seqs: &[Vec<&'static str>]) -> Vec<Vec<&'static str>> {
    fn go(
        seqs: &[Vec<&'static str>],
        pos: &mut Vec<usize>,
        cur: &mut Vec<&'static str>,
        out: &mut Vec<Vec<&'static str>>,
    ) {
        if pos.iter().zip(seqs).all(|(p, s)| *p == s.len()) {
            out.push(cur.clone());
            return;
        }
        for i in 0..seqs.len() {
            if pos[i] < seqs[i].len() {
                cur.push(seqs[i][pos[i]]);
                pos[i] += 1;
                go(seqs, pos, cur, out);
                pos[i] -= 1;
                cur.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(seqs, &mut vec![0; seqs.len()], &mut Vec::new(), &mut out);
    out
}

#[test]
fn exhaustive_three_transaction_test_of_section_4_7() {
    // T1 = r1(x), T2 = r2(y) w2(x), T3 = w3(y), with begins and commits: 4200 interleavings.
    let all = interleavings(&[
        vec!["b1", "r1(x)", "c1"],
        vec!["b2", "r2(y)", "w2(x)", "c2"],
        vec!["b3", "w3(y)", "c3"],
    ]);
    assert_eq!(all.len(), 4200);
    let mut ssi_aborting = 0;
    for s in &all {
        let s = s.join(" ");
        let ssi = run::<Ssi>(&s);
        assert!(ssi.report.is_serializable(), "{s}: {}", ssi.report);
        assert!(ssi.aborts.iter().all(|a| a.2 == AbortReason::Unsafe));
        ssi_aborting += usize::from(!ssi.aborts.is_empty());
        let si = run::<Si>(&s);
        assert!(si.aborts.is_empty(), "SI commits every interleaving: {s}");
    }
    // The dangerous structure T1 → T2 → T3 with T3 committing first is refused (conservatively:
    // this set has no cycle), and only in a minority of interleavings.
    assert!(
        ssi_aborting > 0 && ssi_aborting < all.len() / 2,
        "{ssi_aborting}"
    );
}

#[test]
fn exhaustive_read_only_anomaly_interleavings() {
    // T_in = r1(x) r1(z), T_pivot = r2(y) w2(x), T_out = w3(y) w3(z): 34650 interleavings. SI commits
    // them all and some are not serializable; SSI never commits a non-serializable one.
    let all = interleavings(&[
        vec!["b1", "r1(x)", "r1(z)", "c1"],
        vec!["b2", "r2(y)", "w2(x)", "c2"],
        vec!["b3", "w3(y)", "w3(z)", "c3"],
    ]);
    assert_eq!(all.len(), 34650);
    let mut si_cycles = 0;
    for (n, s) in all.iter().enumerate() {
        let s = s.join(" ");
        let ssi = run::<Ssi>(&s);
        assert!(ssi.report.is_serializable(), "{s}: {}", ssi.report);
        if n % 7 == 0 {
            let si = run::<Si>(&s);
            assert!(si.aborts.is_empty());
            si_cycles += usize::from(!si.report.is_serializable());
        }
    }
    assert!(si_cycles > 0);
}
