use super::txn::{doc_key, move_key};
use super::*;
use crate::inspect;
use crate::testkit::{loaded, run_declared};
use ordo::check::AnomalyKind;
use ordo::harness::{verify, Verified, VerifyConfig};
use ordo::protocols::nocc::NoCC;
use ordo::protocols::{Protocol, ProtocolConfig};
use ordo::txn::Program;
use std::collections::HashMap;

fn small() -> FrontAccounting {
    FrontAccounting::new(FaConfig { goods: 10 }).unwrap()
}

fn txn(kind: Kind) -> FaTxn {
    FaTxn {
        kind,
        goods: 10,
        ..FaTxn::default()
    }
}

fn get(p: &NoCC, table: TableId, key: u64, col: usize) -> Option<i64> {
    inspect::int(p.db(), table, key, col, &mut Vec::new())
}

/// Each transaction alone, through an order's life and the supplier side: what it writes, what it
/// refuses, the invariants after every step. Every operation is one its piece declared.
#[test]
fn each_transaction_alone_does_what_it_says_and_refuses_before_writing() {
    let w = small();
    let p = loaded(&w);
    let ok = |p: &NoCC| assert_eq!(w.check(p.db()), Ok(()));
    let (price, cost) = FrontAccounting::price_cost(3);
    let order = |kind| FaTxn {
        order: 7,
        customer: 5,
        item: 3,
        qty: 4,
        ..txn(kind)
    };
    // CreateOrder: number 0, the item's price, 4 on order.
    let t = run_declared(&p, order(Kind::CreateOrder)).unwrap();
    assert_eq!((t.number, t.price), (0, price));
    assert_eq!(get(&p, STOCK, 3, ON_ORDER), Some(4));
    assert_eq!(get(&p, ORDERS, 7, O_STATUS), Some(ORDERED));
    assert_eq!(get(&p, DEBTORS, 5, C_ORDERS), Some(1));
    assert_eq!(get(&p, SYS_TYPES, T_ORDER, NEXT), Some(1));
    ok(&p);
    // Payment before delivery: refused, nothing written.
    let e = run_declared(&p, order(Kind::Payment)).unwrap_err();
    assert!(e.contains("not delivered"), "{e}");
    assert_eq!(get(&p, SYS_TYPES, T_PAYMENT, NEXT), Some(0));
    // Delivery: stock leaves, the invoice and the move exist.
    let t = run_declared(&p, order(Kind::Delivery)).unwrap();
    assert_eq!(t.amount, 4 * price);
    assert_eq!(get(&p, STOCK, 3, ON_HAND), Some(INITIAL_STOCK - 4));
    assert_eq!(get(&p, STOCK, 3, ON_ORDER), Some(0));
    assert_eq!(get(&p, ORDERS, 7, O_STATUS), Some(DELIVERED));
    assert_eq!(
        get(&p, DEBTOR_TRANS, doc_key(7, false), D_AMOUNT),
        Some(4 * price)
    );
    assert_eq!(get(&p, MOVES, move_key(7, 3), M_QTY), Some(-4));
    assert_eq!(get(&p, DEBTORS, 5, C_INVOICED), Some(4 * price));
    ok(&p);
    // Payment.
    run_declared(&p, order(Kind::Payment)).unwrap();
    assert_eq!(get(&p, ORDERS, 7, O_STATUS), Some(PAID));
    assert_eq!(
        get(&p, DEBTOR_TRANS, doc_key(7, true), D_AMOUNT),
        Some(4 * price)
    );
    assert_eq!(get(&p, DEBTORS, 5, C_PAID), Some(4 * price));
    ok(&p);
    let e = run_declared(&p, order(Kind::Payment)).unwrap_err();
    assert!(e.contains("not delivered"), "{e}");
    // A delivery short of stock: refused, nothing written.
    let big = FaTxn {
        order: 8,
        customer: 5,
        item: 3,
        qty: INITIAL_STOCK,
        ..txn(Kind::CreateOrder)
    };
    run_declared(&p, big.clone()).unwrap();
    let e = run_declared(
        &p,
        FaTxn {
            kind: Kind::Delivery,
            ..big
        },
    )
    .unwrap_err();
    assert!(e.contains("not enough on hand"), "{e}");
    assert_eq!(get(&p, ORDERS, 8, O_STATUS), Some(ORDERED));
    assert_eq!(get(&p, SYS_TYPES, T_DELIVERY, NEXT), Some(1));
    ok(&p);
    // StockAdjustment: down by 3, and not below zero.
    let adjust = |id: u64, qty: i64| FaTxn {
        order: id,
        item: 3,
        qty,
        ..txn(Kind::StockAdjustment)
    };
    run_declared(&p, adjust(20, -3)).unwrap();
    assert_eq!(get(&p, STOCK, 3, ON_HAND), Some(INITIAL_STOCK - 7));
    let e = run_declared(&p, adjust(21, -INITIAL_STOCK)).unwrap_err();
    assert!(e.contains("below zero"), "{e}");
    ok(&p);
    // PaySupplier: every item + BULK, invoiced at cost and paid.
    let t = run_declared(
        &p,
        FaTxn {
            order: 30,
            supplier: 2,
            ..txn(Kind::PaySupplier)
        },
    )
    .unwrap();
    assert_eq!(get(&p, STOCK, 3, ON_HAND), Some(INITIAL_STOCK - 7 + BULK));
    assert_eq!(t.costs[3], cost);
    let total: i64 = (0..10)
        .map(|i| FrontAccounting::price_cost(i).1 * BULK)
        .sum();
    assert_eq!(
        get(&p, SUPP_TRANS, doc_key(30, false), D_AMOUNT),
        Some(total)
    );
    assert_eq!(get(&p, SUPPLIERS, 2, S_PAID), Some(total));
    ok(&p);
    // Every query runs, declaring what it reads.
    for kind in Kind::ALL.into_iter().filter(|k| !k.writes()) {
        let t = FaTxn {
            order: if kind == Kind::SupplierTrans { 30 } else { 7 },
            customer: 5,
            supplier: 2,
            item: 0,
            listed: [7, 8, 7],
            ..txn(kind)
        };
        run_declared(&p, t).unwrap();
    }
    ok(&p);
}

/// The check catches each broken invariant.
#[test]
fn the_check_finds_each_kind_of_broken_state() {
    let w = small();
    let fresh = || {
        let p = loaded(&w);
        let order = |kind| FaTxn {
            order: 7,
            customer: 5,
            item: 3,
            qty: 2,
            ..txn(kind)
        };
        for k in [Kind::CreateOrder, Kind::Delivery, Kind::Payment] {
            run_declared(&p, order(k)).unwrap();
        }
        assert_eq!(w.check(p.db()), Ok(()));
        p
    };
    let broken = |p: &NoCC| w.check(p.db()).unwrap_err().to_string();
    let p = fresh();
    inspect::set_int(p.db(), STOCK, 3, ON_HAND, INITIAL_STOCK);
    assert!(broken(&p).contains("item 3"));
    let p = fresh();
    inspect::set_int(p.db(), DEBTOR_TRANS, doc_key(7, true), D_AMOUNT, 1);
    assert!(broken(&p).contains("payments do not match invoices"));
    let p = fresh();
    inspect::set_int(p.db(), DEBTORS, 5, C_PAID, 0);
    assert!(broken(&p).contains("customer 5"));
    let p = fresh();
    inspect::set_int(p.db(), SYS_TYPES, T_ORDER, NEXT, 2);
    assert!(broken(&p).contains("document type 0"));
    let p = fresh();
    inspect::set_int(p.db(), DEBTOR_TRANS, doc_key(7, true), D_NUMBER, 0);
    inspect::set_int(p.db(), SYS_TYPES, T_PAYMENT, NEXT, 1);
    assert_eq!(w.check(p.db()), Ok(()), "numbers from 0");
}

#[test]
fn the_mix_adds_up_with_five_writers_and_twelve_queries() {
    assert_eq!(MIX.iter().map(|m| m.1).sum::<u32>(), 100_000);
    assert_eq!(MIX.map(|m| m.0), Kind::ALL);
    assert_eq!(Kind::ALL.iter().filter(|k| k.writes()).count(), 5);
    let mut names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 17);
    // One bulk purchase per ~1,000 sale orders.
    let orders = MIX[0].1 as f64;
    assert!((orders / MIX[4].1 as f64 - 1_000.0).abs() < 1.0);
}

/// A worker's stream follows the flow: deliveries deliver its ordered orders, payments pay its
/// delivered ones, each once, oldest first; every kind appears.
#[test]
fn the_generator_follows_the_flow() {
    let w = FrontAccounting::new(FaConfig::default()).unwrap();
    let mut g = w.generator(1, 3);
    let mut p = w.program();
    let mut status: HashMap<u64, (i64, FaTxn)> = HashMap::new();
    let mut count: HashMap<&str, u32> = HashMap::new();
    let n = 200_000;
    for _ in 0..n {
        w.next(&mut g, &mut p);
        *count.entry(p.name()).or_default() += 1;
        let same =
            |a: &FaTxn, b: &FaTxn| (a.customer, a.item, a.qty) == (b.customer, b.item, b.qty);
        match p.kind {
            Kind::CreateOrder => {
                assert_eq!(p.order >> 32, 2);
                assert!((1..=5).contains(&p.qty));
                assert!(status.insert(p.order, (ORDERED, p.clone())).is_none());
            }
            Kind::Delivery | Kind::Payment => {
                let (from, to) = if p.kind == Kind::Delivery {
                    (ORDERED, DELIVERED)
                } else {
                    (DELIVERED, PAID)
                };
                let s = status.get_mut(&p.order).expect("an order it took");
                assert_eq!(s.0, from);
                assert!(same(&s.1, &p));
                s.0 = to;
            }
            Kind::ViewPayment => assert_eq!(status[&p.order].0, PAID),
            _ => {}
        }
    }
    assert_eq!(count.len(), 17, "every kind: {count:?}");
    let orders = count["CreateOrder"] as f64;
    let bulk = count["PaySupplier"] as f64;
    assert!((400.0..3_000.0).contains(&(orders / bulk)), "{count:?}");
}

fn verify_run(name: &str, w: &FrontAccounting, threads: usize, txns: u64, seed: u64) -> Verified {
    let cfg = VerifyConfig {
        protocol: ProtocolConfig {
            lock_wait_timeout: std::time::Duration::from_millis(5),
            ..ProtocolConfig::with_threads(threads)
        },
        txns,
        seed,
        prefetch: true,
    };
    verify::run_named(name, w, &cfg)
        .unwrap()
        .expect("verification run")
}

/// Contended (10 goods, 4 threads; every document of a type updates its numbering row): the
/// invariants hold, and no transaction sees dirty data under the read-committed protocols
/// (`acid-2pl`, `callas`); the serializable ones (`callas-ser`, `silo`, `2pl-detect`) produce a
/// serializable history, as `ordo verify` checks it.
#[test]
fn invariants_hold_under_contention_and_serializable_protocols_are_serializable() {
    let w = small();
    for (name, serializable) in [
        ("acid-2pl", false),
        ("callas", false),
        ("callas-ser", true),
        ("silo", true),
        ("2pl-detect", true),
    ] {
        let v = verify_run(name, &w, 4, 3_000, 9);
        assert_eq!(v.invariants, Ok(()), "{name}");
        let r = &v.report;
        for k in [AnomalyKind::G0, AnomalyKind::G1a, AnomalyKind::G1c] {
            assert!(!r.has(k), "{name}: {r}");
        }
        if serializable {
            assert!(r.is_serializable() && r.anomalies.is_empty(), "{name}: {r}");
        }
        assert!(r.committed > 2_000, "{name}: {r}");
        assert!(r.edges > 500, "{name}: too little contention: {r}");
    }
}

/// Without concurrency control the same contended runs break the check.
#[test]
fn nocc_breaks_the_invariants() {
    let w = small();
    let broken = (0..20).find_map(|seed| verify_run("nocc", &w, 8, 3_000, seed).invariants.err());
    assert!(
        broken.is_some(),
        "nocc never broke front-accounting's invariants"
    );
}

/// Callas's grouping heuristic (`ordo::protocols::callas::grouping`) on real workloads, with the
/// lock hold times of the figures (scaled down): a profile under `acid-2pl` at 1 and many workers.
fn proposal<W: Workload>(w: &W, threads: usize, per_thread: u64) -> grouping::Proposal {
    let protocol = ProtocolConfig::default()
        .with_knob(&ordo::protocols::kit::hold_delay::OP_DELAY_KNOB, "50")
        .unwrap()
        .with_knob(&ordo::protocols::kit::hold_delay::COMMIT_DELAY_KNOB, "300")
        .unwrap();
    let cfg = grouping::ProfileConfig {
        protocol,
        threads,
        per_thread,
        seed: 3,
    };
    grouping::propose(w, &cfg).unwrap()
}

use ordo::protocols::callas::grouping;

/// Ticketing has one clearly contended type — CreateOrder, which every order of a category runs
/// through one row with — and the heuristic puts it in a group of its own, the rest together (the
/// thesis's Fusion Ticket grouping).
#[test]
fn the_heuristic_puts_ticketings_checkout_alone() {
    let w = crate::ticketing::Ticketing::new(crate::ticketing::TicketingConfig { seats: 2_000 })
        .unwrap();
    let p = proposal(&w, 24, 80);
    assert_eq!(p.candidates, ["CreateOrder"], "{}", p.report());
    assert_eq!(p.groups, "CreateOrder", "{}", p.report());
}

/// TPC-C (one warehouse): New-Order and Payment are candidates, the read-only types are not, and
/// whatever grouping wins names no read-only type (they stay in the unpipelined group).
#[test]
fn the_heuristic_separates_tpccs_new_order_and_payment_from_the_read_only_types() {
    let w = crate::tpcc::Tpcc::new(crate::tpcc::TpccConfig {
        warehouses: 1,
        ..Default::default()
    })
    .unwrap();
    let p = proposal(&w, 24, 60);
    let r = p.report();
    for t in ["NewOrder", "Payment"] {
        assert!(p.candidates.contains(&t), "{r}");
        assert!(p.groups.contains(t), "{r}");
    }
    for t in ["OrderStatus", "StockLevel"] {
        assert!(!p.candidates.contains(&t), "{r}");
        assert!(!p.groups.contains(t), "{r}");
    }
}

/// Front Accounting: the three writers the thesis's tool separated are the candidates.
#[test]
fn the_heuristic_finds_front_accountings_contended_writers() {
    let w = FrontAccounting::new(FaConfig::default()).unwrap();
    let p = proposal(&w, 16, 150);
    let r = p.report();
    assert!(p.candidates.contains(&"CreateOrder"), "{r}");
    for c in &p.candidates {
        assert!(
            ["CreateOrder", "Delivery", "Payment", "StockAdjustment"].contains(c),
            "{r}"
        );
    }
    assert!(!p.groups.contains("View"), "{r}");
}
