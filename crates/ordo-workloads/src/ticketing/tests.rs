use super::*;
use crate::base_ified::Cut;
use crate::inspect;
use crate::testkit::{loaded, run_declared};
use ordo::check::AnomalyKind;
use ordo::harness::{verify, Verified, VerifyConfig};
use ordo::protocols::nocc::NoCC;
use ordo::protocols::{Protocol, ProtocolConfig};
use ordo::txn::Program;

fn small(seats: u64) -> Ticketing {
    Ticketing::new(TicketingConfig { seats }).unwrap()
}

fn txn(kind: Kind, seats: u64) -> TicketTxn {
    TicketTxn {
        kind,
        seats,
        ..TicketTxn::default()
    }
}

fn get(p: &NoCC, table: TableId, key: u64, col: usize) -> Option<i64> {
    inspect::int(p.db(), table, key, col, &mut Vec::new())
}

fn customer(p: &NoCC, c: u64) -> [i64; 4] {
    [C_ORDERS, C_SPENT, C_PAID, C_CART].map(|col| get(p, CUSTOMER, c, col).unwrap())
}

fn seat(p: &NoCC, key: u64) -> (i64, i64) {
    (
        get(p, SEAT, key, STATUS).unwrap(),
        get(p, SEAT, key, HOLDER).unwrap(),
    )
}

/// Each transaction alone, step by step through a booking: what it writes, what it refuses, and
/// the invariants after every step. Every operation is one its piece declared.
#[test]
fn each_transaction_alone_does_what_it_says_and_refuses_before_writing() {
    let w = small(10);
    let p = loaded(&w);
    let ok = |p: &NoCC| assert_eq!(w.check(p.db()), Ok(()));
    let reserve = |r: u64, c: u64, s: u64, stamp: i64| TicketTxn {
        reservation: r,
        customer: c,
        category: 1,
        seat: s,
        stamp,
        ..txn(Kind::ReserveSeat, 10)
    };
    // ReserveSeat: seat 1/3 (key 13) into customer 5's cart.
    run_declared(&p, reserve(1, 5, 3, 20)).unwrap();
    assert_eq!(seat(&p, 13), (RESERVED, 1));
    assert_eq!(get(&p, SEAT, 13, STAMP), Some(20));
    assert_eq!(get(&p, RESERVATION, 1, R_SEAT), Some(3));
    assert_eq!(customer(&p, 5), [0, 0, 0, 1]);
    ok(&p);
    // The same seat again: taken, nothing written.
    let e = run_declared(&p, reserve(2, 6, 3, 20)).unwrap_err();
    assert!(e.contains("seat taken"), "{e}");
    assert_eq!(get(&p, RESERVATION, 2, R_SEAT), None);
    assert_eq!(customer(&p, 6), [0; 4]);
    for kind in [Kind::ViewCart, Kind::ViewEvent, Kind::ViewCategory] {
        let t = TicketTxn {
            reservation: 1,
            category: 1,
            seat: 8, // ViewCategory's map row wraps: seats 8, 9, 0, 1
            ..txn(kind, 10)
        };
        run_declared(&p, t).unwrap();
    }
    // CreateOrder: the seat is sold, counted, the cart entry becomes order 100.
    let create = |r: u64, o: u64| TicketTxn {
        reservation: r,
        order: o,
        customer: 5,
        category: 1,
        seat: 3,
        fee: 2,
        ..txn(Kind::CreateOrder, 10)
    };
    let t = run_declared(&p, create(1, 100)).unwrap();
    assert_eq!(t.price, 75, "category 1's price");
    assert_eq!(seat(&p, 13), (SOLD_TO, 100));
    assert_eq!(get(&p, CATEGORY, 1, SOLD), Some(1));
    assert_eq!(get(&p, RESERVATION, 1, R_SEAT), None);
    assert_eq!(get(&p, ORDERS, 100, O_STATUS), Some(ORDERED));
    assert_eq!(customer(&p, 5), [1, 77, 0, 0]);
    ok(&p);
    let e = run_declared(&p, create(1, 101)).unwrap_err();
    assert!(e.contains("the reservation is gone"), "{e}");
    assert_eq!(get(&p, CATEGORY, 1, SOLD), Some(1));
    // Payment, once.
    let order = |kind| TicketTxn {
        order: 100,
        customer: 5,
        category: 1,
        seat: 3,
        ..txn(kind, 10)
    };
    run_declared(&p, order(Kind::Payment)).unwrap();
    assert_eq!(get(&p, ORDERS, 100, O_STATUS), Some(PAID));
    assert_eq!(get(&p, PAYMENT, 100, P_AMOUNT), Some(77));
    assert_eq!(customer(&p, 5), [1, 77, 77, 0]);
    ok(&p);
    let e = run_declared(&p, order(Kind::Payment)).unwrap_err();
    assert!(
        e.contains("nothing") || e.contains("no unpaid order"),
        "{e}"
    );
    run_declared(&p, order(Kind::ViewOrder)).unwrap();
    run_declared(&p, order(Kind::ViewCustomer)).unwrap();
    // DeleteOrder: the seat is free again, the counts go back, the payment is refunded.
    run_declared(&p, order(Kind::DeleteOrder)).unwrap();
    assert_eq!(get(&p, ORDERS, 100, O_STATUS), Some(DELETED));
    assert_eq!(seat(&p, 13), (FREE, 0));
    assert_eq!(get(&p, CATEGORY, 1, SOLD), Some(0));
    assert_eq!(get(&p, CATEGORY, 1, RETURNED), Some(1));
    assert_eq!(get(&p, PAYMENT, 100, P_REFUNDED), Some(1));
    assert_eq!(customer(&p, 5), [0; 4]);
    ok(&p);
    let e = run_declared(&p, order(Kind::DeleteOrder)).unwrap_err();
    assert!(e.contains("no order to delete"), "{e}");
    assert_eq!(get(&p, CATEGORY, 1, RETURNED), Some(1));
    // The freed seat can be reserved again; released only once its stamp has passed.
    run_declared(&p, reserve(3, 7, 3, 30)).unwrap();
    let release = |now: i64| TicketTxn {
        reservation: 3,
        customer: 7,
        category: 1,
        seat: 3,
        stamp: now,
        ..txn(Kind::ReleaseExpired, 10)
    };
    let e = run_declared(&p, release(29)).unwrap_err();
    assert!(e.contains("has not expired"), "{e}");
    assert_eq!(seat(&p, 13), (RESERVED, 3));
    run_declared(&p, release(30)).unwrap();
    assert_eq!(seat(&p, 13), (FREE, 0));
    assert_eq!(get(&p, RESERVATION, 3, R_SEAT), None);
    assert_eq!(customer(&p, 7), [0; 4]);
    ok(&p);
    // RemoveFromCart, once.
    run_declared(&p, reserve(4, 8, 9, 40)).unwrap();
    let remove = TicketTxn {
        reservation: 4,
        customer: 8,
        category: 1,
        seat: 9,
        ..txn(Kind::RemoveFromCart, 10)
    };
    run_declared(&p, remove.clone()).unwrap();
    assert_eq!(seat(&p, 19), (FREE, 0));
    assert_eq!(customer(&p, 8), [0; 4]);
    let e = run_declared(&p, remove).unwrap_err();
    assert!(e.contains("no such reservation"), "{e}");
    ok(&p);
}

/// The check catches each broken invariant: a seat sold twice, a deleted order keeping its seat,
/// a payment that does not match its order, a customer's count off.
#[test]
fn the_check_finds_each_kind_of_broken_state() {
    let w = small(10);
    let fresh = || {
        let p = loaded(&w);
        let reserve = TicketTxn {
            reservation: 1,
            customer: 2,
            seat: 4,
            ..txn(Kind::ReserveSeat, 10)
        };
        run_declared(&p, reserve).unwrap();
        let create = TicketTxn {
            reservation: 1,
            order: 9,
            customer: 2,
            seat: 4,
            ..txn(Kind::CreateOrder, 10)
        };
        run_declared(&p, create).unwrap();
        assert_eq!(w.check(p.db()), Ok(()));
        p
    };
    let broken = |p: &NoCC| w.check(p.db()).unwrap_err().to_string();
    // A second live order naming seat 0/4.
    let p = fresh();
    p.db()
        .table(ORDERS)
        .load(10, &mut Vec::new(), |r| {
            r.set_int(O_CUSTOMER, 2);
            r.set_int(O_SEAT, 4);
            r.set_int(O_STATUS, ORDERED);
            Ok(())
        })
        .unwrap();
    let e = broken(&p);
    assert!(e.contains("a seat sold twice"), "{e}");
    // Order 9 deleted but still holding its seat.
    let p = fresh();
    inspect::set_int(p.db(), ORDERS, 9, O_STATUS, DELETED);
    let e = broken(&p);
    assert!(e.contains("still holds seat"), "{e}");
    // Order 9 paid without a payment.
    let p = fresh();
    inspect::set_int(p.db(), ORDERS, 9, O_STATUS, PAID);
    let e = broken(&p);
    assert!(e.contains("payments do not match orders"), "{e}");
    // The category counts one sale too many.
    let p = fresh();
    inspect::set_int(p.db(), CATEGORY, 0, SOLD, 2);
    let e = broken(&p);
    assert!(e.contains("category 0"), "{e}");
    // The customer's cart says one reservation, there is none.
    let p = fresh();
    inspect::set_int(p.db(), CUSTOMER, 2, C_CART, 1);
    let e = broken(&p);
    assert!(e.contains("customer 2"), "{e}");
}

#[test]
fn the_mix_adds_up_and_every_kind_has_a_distinct_name() {
    assert_eq!(MIX.iter().map(|m| m.1).sum::<u32>(), 100);
    assert_eq!(MIX.map(|m| m.0), Kind::ALL);
    let mut names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 11);
    assert!(names.contains(&"CreateOrder"));
}

/// A worker's stream follows the booking flow: every checkout, cart view, removal and release
/// names a reservation the worker made before and has not used up; payments, order views and
/// deletions name its orders; CreateOrder is the most frequent kind and DeleteOrder rare.
#[test]
fn the_generator_follows_the_flow() {
    let w = Ticketing::new(TicketingConfig::default()).unwrap();
    let mut g = w.generator(2, 7);
    let mut p = w.program();
    let mut cart: HashMap<u64, TicketTxn> = HashMap::new();
    let mut orders: HashMap<u64, TicketTxn> = HashMap::new();
    let mut count: HashMap<&str, u32> = HashMap::new();
    let n = 20_000;
    for _ in 0..n {
        w.next(&mut g, &mut p);
        *count.entry(p.name()).or_default() += 1;
        let same = |a: &TicketTxn, b: &TicketTxn| {
            (a.customer, a.category, a.seat) == (b.customer, b.category, b.seat)
        };
        match p.kind {
            Kind::ReserveSeat => {
                assert_eq!(p.reservation >> 32, 3, "worker 2's ids");
                assert!(cart.len() < MAX_CART);
                assert!(cart.insert(p.reservation, p.clone()).is_none());
            }
            Kind::ViewCart => assert!(same(&cart[&p.reservation], &p)),
            Kind::RemoveFromCart | Kind::ReleaseExpired => {
                let r = cart
                    .remove(&p.reservation)
                    .expect("a reservation in the cart");
                assert!(same(&r, &p));
                if p.kind == Kind::ReleaseExpired {
                    assert!(p.stamp >= r.stamp, "released at or after its expiry");
                }
            }
            Kind::CreateOrder => {
                let r = cart
                    .remove(&p.reservation)
                    .expect("a reservation in the cart");
                assert!(same(&r, &p));
                assert!(FEES.contains(&p.fee));
                orders.insert(p.order, p.clone());
            }
            Kind::Payment | Kind::ViewOrder => assert!(same(&orders[&p.order], &p)),
            Kind::DeleteOrder => assert!(same(&orders.remove(&p.order).unwrap(), &p)),
            _ => {}
        }
    }
    assert_eq!(count.len(), 11, "every kind: {count:?}");
    let share = |k: &str| count[k] as f64 / n as f64;
    assert!(share("CreateOrder") > 0.25, "{count:?}");
    assert!(share("DeleteOrder") < 0.02, "{count:?}");
    assert!(share("ReleaseExpired") > 0.005, "{count:?}");
}

#[test]
fn base_ified_cuts_the_documented_kinds() {
    let starts = |b: BaseIfied, kind: Kind| {
        let t = TicketTxn {
            cut: txn::cut(b, kind),
            ..txn(kind, 10)
        };
        let mut out = Vec::new();
        t.alkaline_starts(&mut out);
        out
    };
    let based = |b: BaseIfied| -> Vec<Kind> {
        Kind::ALL
            .into_iter()
            .filter(|&k| !starts(b, k).is_empty())
            .collect()
    };
    assert_eq!(based(BaseIfied::Types(0)), []);
    assert_eq!(based(BaseIfied::Types(1)), [Kind::CreateOrder]);
    assert_eq!(
        based(BaseIfied::Types(2)),
        [Kind::ViewEvent, Kind::CreateOrder]
    );
    assert_eq!(
        based(BaseIfied::Types(3)),
        [Kind::ViewEvent, Kind::ViewCategory, Kind::CreateOrder]
    );
    assert_eq!(starts(BaseIfied::Types(1), Kind::CreateOrder), [1, 2, 3, 4]);
    assert_eq!(
        starts(BaseIfied::Types(3), Kind::ViewCategory),
        [1, 2, 3, 4]
    );
    // raw: every kind of more than one piece, one subtransaction per piece.
    for k in Kind::ALL {
        let want: Vec<usize> = (1..k.pieces()).collect();
        assert_eq!(starts(BaseIfied::Raw, k), want, "{k:?}");
    }
    assert_eq!(txn::cut(BaseIfied::Types(1), Kind::Payment), Cut::Acid);
    // The default workload BASE-ifies CreateOrder.
    let w = small(10);
    let mut g = w.generator(0, 1);
    let mut p = w.program();
    while p.kind != Kind::CreateOrder {
        w.next(&mut g, &mut p);
    }
    assert_eq!(p.cut, Cut::Base);
}

fn verify_run(name: &str, w: &Ticketing, threads: usize, txns: u64, seed: u64) -> Verified {
    verify_at(name, None, w, threads, txns, seed)
}

/// A verification run; `level`: the Salt protocols' `--salt-level` (default read committed).
fn verify_at(
    name: &str,
    level: Option<&str>,
    w: &Ticketing,
    threads: usize,
    txns: u64,
    seed: u64,
) -> Verified {
    let mut protocol = ProtocolConfig {
        lock_wait_timeout: std::time::Duration::from_millis(5),
        ..ProtocolConfig::with_threads(threads)
    };
    if let Some(level) = level {
        protocol = protocol
            .with_knob(&ordo::protocols::salt::LEVEL_KNOB, level)
            .unwrap();
    }
    let cfg = VerifyConfig {
        protocol,
        txns,
        seed,
        prefetch: true,
    };
    verify::run_named(name, w, &cfg)
        .unwrap()
        .expect("verification run")
}

/// Contended (300 seats a category for 3,000 transactions on 4 threads: as the event fills seats
/// are taken and orders refused; every order updates one of two category rows): the invariants
/// hold and no transaction (or alkaline subtransaction) sees dirty data under the read-committed
/// protocols — `salt`, `salt-local`, `acid-2pl` at their default level, `callas` — and the
/// serializable ones — the Salt protocols at `ser`, `silo`, `ssi`, `pwv`, `vll` — produce a
/// serializable history, as `ordo verify` checks it.
#[test]
fn invariants_hold_under_contention_and_the_acid_protocols_are_serializable() {
    let w = small(300);
    let runs = [
        ("salt", None, false),
        ("salt-local", None, false),
        ("acid-2pl", None, false),
        ("callas", None, false),
        ("acid-2pl", Some("ser"), true),
        ("salt", Some("ser"), true),
        ("salt-local", Some("ser"), true),
        ("silo", None, true),
        ("ssi", None, true),
        ("pwv", None, true),
        ("vll", None, true),
    ];
    for (name, level, serializable) in runs {
        let v = verify_at(name, level, &w, 4, 3_000, 11);
        let at = format!("{name} at {}", level.unwrap_or("its default level"));
        assert_eq!(v.invariants, Ok(()), "{at}");
        let r = &v.report;
        for k in [AnomalyKind::G0, AnomalyKind::G1a, AnomalyKind::G1c] {
            assert!(!r.has(k), "{at}: {r}");
        }
        if serializable {
            assert!(r.is_serializable() && r.anomalies.is_empty(), "{at}: {r}");
        }
        assert!(r.committed > 1_500, "{at}: {r}");
        assert!(r.edges > 500, "{at}: too little contention: {r}");
    }
}

/// Every `--base-ified` setting, under `salt` and `salt-local`: the invariants hold after a
/// contended run, and alkaline subtransactions show no dirty write or read.
#[test]
fn every_base_ified_setting_keeps_the_invariants_under_salt() {
    let mut committed = Vec::new();
    for b in [
        BaseIfied::Types(0),
        BaseIfied::Types(1),
        BaseIfied::Types(2),
        BaseIfied::Types(3),
        BaseIfied::Raw,
    ] {
        let w = small(300).with_base_ified(b);
        for name in ["salt", "salt-local"] {
            let v = verify_run(name, &w, 4, 3_000, 5);
            assert_eq!(v.invariants, Ok(()), "{name} --base-ified {b}");
            for k in [AnomalyKind::G0, AnomalyKind::G1a, AnomalyKind::G1c] {
                assert!(!v.report.has(k), "{name} --base-ified {b}: {}", v.report);
            }
            assert!(v.report.committed > 1_500, "{name} {b}: {}", v.report);
            if name == "salt" {
                committed.push(v.report.committed);
            }
        }
    }
    // Each alkaline subtransaction is recorded as a transaction: the more is BASE-ified, the more
    // the same 3,000 transactions record (the option reaches the protocol).
    assert!(
        committed[0] < committed[1] && committed[1] < committed[4],
        "recorded commits at 0, 1, 2, 3, raw: {committed:?}"
    );
}

/// Without concurrency control the same contended runs break the check (so the check can fail
/// under concurrency): two reservations of one seat both win, or an order's count is lost.
#[test]
fn nocc_breaks_the_invariants() {
    let w = small(300);
    let broken = (0..20).find_map(|seed| verify_run("nocc", &w, 8, 3_000, seed).invariants.err());
    assert!(broken.is_some(), "nocc never broke ticketing's invariants");
}
