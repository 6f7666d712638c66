use super::*;
use crate::testkit::loaded;
use ordo::protocols::nocc::NoCC;
use ordo::protocols::Protocol;
use ordo::txn::declared::run_checked;
use ordo::txn::AbortReason;

fn small(customers: u64) -> SmallBank {
    SmallBank::new(SmallBankConfig {
        customers,
        hotspot_size: 0,
        hotspot_prob: 0.0,
    })
    .unwrap()
}

fn balances(p: &NoCC, c: u64) -> (i64, i64) {
    let mut buf = Vec::new();
    (
        inspect::int(p.db(), SAVING, c, BALANCE, &mut buf).unwrap(),
        inspect::int(p.db(), CHECKING, c, BALANCE, &mut buf).unwrap(),
    )
}

#[test]
fn validation_rejects_bad_parameters() {
    assert!(SmallBankConfig::default().validate().is_ok());
    let ok = SmallBankConfig::default();
    for bad in [
        SmallBankConfig {
            customers: 1,
            ..ok.clone()
        },
        SmallBankConfig {
            hotspot_size: 20_000,
            ..ok.clone()
        },
        SmallBankConfig {
            hotspot_prob: 1.5,
            ..ok.clone()
        },
        SmallBankConfig {
            hotspot_prob: f64::NAN,
            ..ok.clone()
        },
        SmallBankConfig {
            hotspot_size: 18_000,
            ..ok.clone()
        },
        SmallBankConfig {
            hotspot_size: 1,
            hotspot_prob: 1.0,
            ..ok.clone()
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?} should be rejected");
    }
}

#[test]
fn the_mix_is_twenty_percent_each_and_the_hotspot_gets_its_share() {
    let w = SmallBank::new(SmallBankConfig {
        customers: 1000,
        hotspot_size: 10,
        hotspot_prob: 0.9,
    })
    .unwrap();
    let (mut g, mut p) = (w.generator(0, 1), w.program());
    let mut per_kind = [0u32; 5];
    let (mut hot, n) = (0u32, 20_000u32);
    let hot_names: Vec<u64> = (0..10).map(name_of).collect();
    for _ in 0..n {
        w.next(&mut g, &mut p);
        per_kind[Kind::ALL.iter().position(|k| *k == p.kind).unwrap()] += 1;
        hot += hot_names.contains(&p.n1) as u32;
        if p.kind == Kind::Amalgamate {
            assert_ne!(p.n1, p.n2);
        }
    }
    for c in per_kind {
        assert!((c as f64 / n as f64 - 0.2).abs() < 0.015, "{per_kind:?}");
    }
    assert!(
        (hot as f64 / n as f64 - 0.9).abs() < 0.015,
        "hot share {hot}"
    );
}

/// Runs one transaction alone under nocc.
fn run(p: &NoCC, w: &SmallBank, kind: Kind, c1: u64, c2: u64, v: i64) -> Result<(), AbortReason> {
    let mut worker = p.worker(0, false);
    let mut prog = w.program();
    prog.set(kind, name_of(c1), name_of(c2), v, 0);
    p.execute(&mut worker, &mut prog).map_err(|a| a.reason)
}

#[test]
fn each_transaction_does_what_the_thesis_says() {
    let w = small(10);
    let p = loaded(&w);
    let (s0, c0) = balances(&p, 0);
    let (s1, c1) = balances(&p, 1);

    run(&p, &w, Kind::DepositChecking, 0, 0, 7).unwrap();
    assert_eq!(balances(&p, 0), (s0, c0 + 7));
    assert_eq!(
        run(&p, &w, Kind::DepositChecking, 0, 0, -1),
        Err(AbortReason::User)
    );

    run(&p, &w, Kind::TransactSavings, 0, 0, -5).unwrap();
    assert_eq!(balances(&p, 0), (s0 - 5, c0 + 7));
    assert_eq!(
        run(&p, &w, Kind::TransactSavings, 0, 0, -(s0 - 5) - 1),
        Err(AbortReason::User),
        "a withdrawal below zero rolls back"
    );
    assert_eq!(balances(&p, 0), (s0 - 5, c0 + 7), "and writes nothing");

    run(&p, &w, Kind::Amalgamate, 0, 1, 0).unwrap();
    assert_eq!(balances(&p, 0), (0, 0));
    assert_eq!(balances(&p, 1), (s1, c1 + s0 - 5 + c0 + 7));

    // Customer 0 now holds nothing: a check of 3 overdraws and costs the $1 penalty.
    run(&p, &w, Kind::WriteCheck, 0, 0, 3).unwrap();
    assert_eq!(balances(&p, 0), (0, -4));
    // Customer 1 has plenty: no penalty.
    run(&p, &w, Kind::WriteCheck, 1, 0, 3).unwrap();
    assert_eq!(balances(&p, 1), (s1, c1 + s0 - 5 + c0 + 7 - 3));

    run(&p, &w, Kind::Balance, 1, 0, 0).unwrap();
    assert_eq!(w.net_deposits(), 7 - 5 - 4 - 3);
    w.check(p.db()).unwrap();
}

#[test]
fn every_transaction_stays_within_its_declarations() {
    let w = small(50);
    let p = loaded(&w);
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 3), w.program());
    for _ in 0..500 {
        w.next(&mut g, &mut prog);
        match run_checked(&mut prog, p.begin(&mut worker)) {
            Ok(v) => assert!(v.is_empty(), "{}: {v:#?}", prog.kind.name()),
            Err(a) => assert_eq!(a.reason, AbortReason::User),
        }
    }
}

#[test]
fn the_check_catches_money_appearing_or_vanishing() {
    let w = small(20);
    let p = loaded(&w);
    let (mut worker, mut g, mut prog) = (p.worker(0, false), w.generator(0, 9), w.program());
    for _ in 0..300 {
        w.next(&mut g, &mut prog);
        let _ = p.execute(&mut worker, &mut prog);
    }
    w.check(p.db()).unwrap();
    let (_, c) = balances(&p, 4);
    assert!(inspect::set_int(p.db(), CHECKING, 4, BALANCE, c + 1));
    let e = w.check(p.db()).unwrap_err();
    assert!(e.0.contains("money not conserved"), "{e}");
    assert!(inspect::set_int(p.db(), CHECKING, 4, BALANCE, c));
    assert!(inspect::set_int(p.db(), SAVING, 5, BALANCE, -1));
    assert!(w.check(p.db()).unwrap_err().0.contains("negative savings"));
}

#[test]
fn a_reload_resets_the_ledger() {
    let w = small(5);
    let p = loaded(&w);
    run(&p, &w, Kind::DepositChecking, 2, 0, 50).unwrap();
    assert_eq!(w.net_deposits(), 50);
    let p = loaded(&w);
    assert_eq!(w.net_deposits(), 0);
    w.check(p.db()).unwrap();
}
