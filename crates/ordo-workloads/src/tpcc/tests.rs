use super::consistency::int;
use super::schema::*;
use super::*;
use ordo::protocols::nocc::NoCC;
use ordo::protocols::Protocol;
use ordo::storage::ColumnSet;
use ordo::txn::declared::run_checked;
use ordo::txn::AbortReason;

fn tiny(warehouses: u32, mix: &str) -> Tpcc {
    Tpcc::new(TpccConfig {
        warehouses,
        tiny: true,
        mix: Mix::parse(mix).unwrap(),
        no_ytd: false,
        remote_new_order: None,
        random_home: false,
        base_ified: base::DEFAULT,
    })
    .unwrap()
}

fn open(w: &Tpcc) -> NoCC {
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    NoCC::open(db, &Default::default())
}

const ALL_TYPES: &str = "no=30,p=30,os=10,d=10,sl=10,cc=10";

#[test]
fn population_has_the_specified_cardinalities() {
    // Full scale, one warehouse (clause 4.3.3.1 / 1.2.1).
    let w = Tpcc::new(TpccConfig::default()).unwrap();
    let p = open(&w);
    let db = p.db();
    let n = |t| db.table(t).present_keys().len();
    assert_eq!(n(WAREHOUSE), 1);
    assert_eq!(n(DISTRICT), 10);
    assert_eq!(n(CUSTOMER), 30_000);
    assert_eq!(n(HISTORY), 30_000);
    assert_eq!(n(ORDER), 30_000);
    assert_eq!(
        n(NEW_ORDER),
        9_000 + 10,
        "new orders and one fence row per district"
    );
    assert_eq!(n(ITEM), 100_000);
    assert_eq!(n(STOCK), 100_000);
    assert_eq!(n(CUSTOMER_BY_NAME), 30_000);
    let lines = n(ORDER_LINE);
    assert!((280_000..=320_000).contains(&lines), "{lines} order lines");
    assert_eq!(
        int(db.table(DISTRICT), dist_key(1, 3), col::D_NEXT_O_ID),
        Some(3001)
    );
    assert!(w.check(db).is_ok(), "{:?}", w.check(db));
    // About 10% bad credit, 10% ORIGINAL items.
    let bc = (1..=3000)
        .filter(|&c| {
            let t = db.table(CUSTOMER);
            let rid = t.lookup(cust_key(1, 1, c)).unwrap();
            let mut buf = vec![0; t.schema().row_words()];
            t.read_into(rid, ColumnSet::ALL, &mut buf);
            ordo::storage::RowRef::new(t.schema(), &buf).str(col::C_CREDIT) == b"BC"
        })
        .count();
    assert!(
        (200..=400).contains(&bc),
        "{bc} of 3000 customers with bad credit"
    );

    // By last name: the middle of the matches sorted by first name (clause 2.5.2.2).
    let mut worker = p.worker(0, false);
    let t = db.table(CUSTOMER);
    let row_of = |c: u32| {
        let rid = t.lookup(cust_key(1, 2, c)).unwrap();
        let mut buf = vec![0; t.schema().row_words()];
        t.read_into(rid, ColumnSet::ALL, &mut buf);
        buf
    };
    let mut checked = 0;
    for name in [0u32, 371, 999, 500, 123] {
        let mut last = Vec::new();
        random::last_name(name, &mut last);
        let mut matches: Vec<(Vec<u8>, u32)> = (1..=3000)
            .filter_map(|c| {
                let buf = row_of(c);
                let r = ordo::storage::RowRef::new(t.schema(), &buf);
                (r.str(col::C_LAST) == last.as_slice()).then(|| (r.str(col::C_FIRST).to_vec(), c))
            })
            .collect();
        matches.sort();
        let mut l = customer::Lookup::default();
        l.set(1, 2, By::Name(name));
        let mut tx = p.begin(&mut worker);
        l.run(&mut tx).unwrap();
        tx.commit().unwrap();
        assert_eq!(
            l.c,
            matches[(matches.len() - 1) / 2].1,
            "name {name}: {matches:?}"
        );
        checked += matches.len();
    }
    assert!(checked > 5, "names should be shared by several customers");
}

#[test]
fn every_transaction_type_stays_within_its_declarations() {
    for mix in [ALL_TYPES, "standard"] {
        let w = tiny(2, mix);
        let p = open(&w);
        let mut worker = p.worker(0, false);
        let (mut g, mut prog) = (w.generator(0, 3), w.program());
        let mut seen = std::collections::HashSet::new();
        for _ in 0..3000 {
            w.next(&mut g, &mut prog);
            seen.insert(prog.name());
            match run_checked(&mut prog, p.begin(&mut worker)) {
                Ok(v) => assert!(v.is_empty(), "{}: {v:#?}", prog.name()),
                Err(a) => {
                    assert_eq!(a.reason, AbortReason::User, "{a}");
                    assert_eq!(prog.name(), "NewOrder", "{a}");
                }
            }
        }
        let expected = if mix == ALL_TYPES { 6 } else { 5 };
        assert_eq!(seen.len(), expected, "{seen:?}");
        w.check(p.db()).unwrap();
    }
}

#[test]
fn about_one_percent_of_new_orders_roll_back_and_leave_no_trace() {
    let w = tiny(1, "no=100");
    let (mut g, mut prog) = (w.generator(0, 9), w.program());
    let n = 20_000;
    let invalid = (0..n)
        .filter(|_| {
            w.next(&mut g, &mut prog);
            prog.new_order
                .lines
                .iter()
                .any(|l| l.i > w.config().items())
        })
        .count();
    assert!(
        (140..=260).contains(&invalid),
        "{invalid} of {n} with an invalid item"
    );

    let p = open(&w);
    let mut worker = p.worker(0, false);
    let (mut committed, mut rolled_back) = (0i64, 0);
    for _ in 0..2000 {
        w.next(&mut g, &mut prog);
        match p.execute(&mut worker, &mut prog) {
            Ok(()) => committed += 1,
            Err(a) => {
                assert_eq!(a.reason, AbortReason::User);
                rolled_back += 1;
            }
        }
    }
    assert!(
        (5..=45).contains(&rolled_back),
        "{rolled_back} rollbacks of 2000"
    );
    let db = p.db();
    let next: i64 = (1..=10)
        .map(|d| int(db.table(DISTRICT), dist_key(1, d), col::D_NEXT_O_ID).unwrap() - 101)
        .sum();
    assert_eq!(
        next, committed,
        "rolled-back orders must not take an order number"
    );
    assert_eq!(
        db.table(ORDER).present_keys().len() as i64,
        1000 + committed
    );
    w.check(db).unwrap();
}

#[test]
fn remote_warehouses_and_last_names_follow_the_specified_rates() {
    let w = tiny(4, "no=50,p=50");
    let (mut g, mut prog) = (w.generator(0, 5), w.program());
    let (mut lines, mut remote_lines, mut payments, mut remote_pay, mut by_name) = (0, 0, 0, 0, 0);
    for _ in 0..40_000 {
        w.next(&mut g, &mut prog);
        match prog.kind.unwrap() {
            Kind::NewOrder => {
                let no = &prog.new_order;
                lines += no.lines.len();
                remote_lines += no.lines.iter().filter(|l| l.supply_w != no.w).count();
            }
            Kind::Payment => {
                let p = &prog.payment;
                payments += 1;
                remote_pay += (p.customer.w != p.w) as u32;
                by_name += p.customer.by_name() as u32;
            }
            _ => unreachable!(),
        }
    }
    let rate = |a: usize, b: usize| a as f64 / b as f64;
    assert!(
        (0.007..0.013).contains(&rate(remote_lines, lines)),
        "{remote_lines}/{lines}"
    );
    assert!(
        (0.13..0.17).contains(&rate(remote_pay as usize, payments)),
        "{remote_pay}/{payments}"
    );
    assert!(
        (0.57..0.63).contains(&rate(by_name as usize, payments)),
        "{by_name}/{payments}"
    );

    // One warehouse: nothing is remote.
    let w = tiny(1, "no=50,p=50");
    let (mut g, mut prog) = (w.generator(0, 5), w.program());
    for _ in 0..5000 {
        w.next(&mut g, &mut prog);
        assert!(prog.new_order.all_local() && prog.payment.customer.w == prog.payment.w);
    }
}

type Corruption = dyn Fn(&mut <NoCC as Protocol>::Tx<'_>);

#[test]
fn consistency_check_detects_a_corrupted_database() {
    let w = tiny(1, "standard");
    w.check(open(&w).db()).unwrap();
    // Each corruption breaks one condition, and the error names it.
    let corruptions: Vec<(&str, Box<Corruption>)> = vec![
        (
            "condition 1",
            Box::new(|tx| {
                tx.update(DISTRICT, dist_key(1, 4), ColumnSet::one(col::D_YTD), |r| {
                    r.set_int(col::D_YTD, r.int(col::D_YTD) + 1)
                })
                .unwrap();
            }),
        ),
        (
            "condition 2",
            Box::new(|tx| {
                tx.update(
                    DISTRICT,
                    dist_key(1, 2),
                    ColumnSet::one(col::D_NEXT_O_ID),
                    |r| r.set_int(col::D_NEXT_O_ID, r.int(col::D_NEXT_O_ID) + 1),
                )
                .unwrap();
            }),
        ),
        (
            "condition 3",
            Box::new(|tx| {
                assert!(tx.delete(NEW_ORDER, order_key(1, 7, 80)).unwrap());
            }),
        ),
        (
            "condition 4",
            Box::new(|tx| {
                assert!(tx.delete(ORDER_LINE, ol_key(1, 9, 5, 1)).unwrap());
            }),
        ),
    ];
    for (what, corrupt) in corruptions {
        let p = open(&w);
        let mut wk = p.worker(0, false);
        let mut tx = p.begin(&mut wk);
        corrupt(&mut tx);
        tx.commit().unwrap();
        let e = w.check(p.db()).unwrap_err();
        assert!(e.0.contains(what), "expected {what}: {e}");
    }
}

#[test]
fn delivery_delivers_each_districts_oldest_order() {
    let w = tiny(1, "d=100");
    let p = open(&w);
    let db = p.db();
    let balance = |d, c| int(db.table(CUSTOMER), cust_key(1, d, c), col::C_BALANCE).unwrap();
    // Orders 71..=100 are undelivered after loading tiny (customers 100, 70% delivered).
    let oldest = load::delivered(100) + 1;
    let before: Vec<(u32, i64, i64)> = (1..=10)
        .map(|d| {
            let c = int(db.table(ORDER), order_key(1, d, oldest), col::O_C_ID).unwrap() as u32;
            let sum = (1..=15)
                .filter_map(|ol| {
                    int(
                        db.table(ORDER_LINE),
                        ol_key(1, d, oldest, ol),
                        col::OL_AMOUNT,
                    )
                })
                .sum();
            (c, balance(d, c), sum)
        })
        .collect();
    let mut worker = p.worker(0, false);
    let mut prog = w.program();
    w.next(&mut w.generator(0, 1), &mut prog);
    prog.delivery.carrier = 7;
    p.execute(&mut worker, &mut prog).unwrap();
    assert_eq!(prog.delivery.delivered(), 10);
    for d in 1..=10 {
        let (c, bal, sum) = before[d as usize - 1];
        assert!(db
            .table(NEW_ORDER)
            .present_keys()
            .iter()
            .all(|&k| k != order_key(1, d, oldest)));
        assert_eq!(
            int(db.table(ORDER), order_key(1, d, oldest), col::O_CARRIER_ID),
            Some(7)
        );
        assert_eq!(balance(d, c), bal + sum);
        assert!(
            int(
                db.table(ORDER_LINE),
                ol_key(1, d, oldest, 1),
                col::OL_DELIVERY_D
            )
            .unwrap()
                > 0
        );
    }
    w.check(db).unwrap();
}

#[test]
fn credit_check_compares_balance_plus_undelivered_orders_with_the_limit() {
    let w = tiny(1, "cc=100");
    let p = open(&w);
    let db = p.db();
    let mut worker = p.worker(0, false);
    let mut prog = w.program();
    let mut g = w.generator(0, 2);
    let (mut bad, mut good) = (0, 0);
    for round in 0..200 {
        w.next(&mut g, &mut prog);
        let cc = &prog.credit_check;
        let (d, c) = (cc.d, cc.c);
        if round % 2 == 0 {
            // Push some customers over their limit.
            let mut tx = p.begin(&mut worker);
            tx.update(
                CUSTOMER,
                cust_key(1, d, c),
                ColumnSet::one(col::C_BALANCE),
                |r| r.set_int(col::C_BALANCE, 4_990_000),
            )
            .unwrap();
            tx.commit().unwrap();
        }
        // The expected verdict, from the tables: balance + undelivered order lines of c > limit.
        let orders = db.table(ORDER);
        let undelivered: i64 = db
            .table(NEW_ORDER)
            .present_keys()
            .into_iter()
            .filter(|&k| order_district(k) == dist_key(1, d))
            .filter(|&k| int(orders, k, col::O_C_ID) == Some(c as i64))
            .map(|k| {
                (1..=15)
                    .filter_map(|ol| int(db.table(ORDER_LINE), (k << 4) | ol, col::OL_AMOUNT))
                    .sum::<i64>()
            })
            .sum();
        let expect_bad = int(db.table(CUSTOMER), cust_key(1, d, c), col::C_BALANCE).unwrap()
            + undelivered
            > int(db.table(CUSTOMER), cust_key(1, d, c), col::C_CREDIT_LIM).unwrap();
        p.execute(&mut worker, &mut prog).unwrap();
        assert_eq!(prog.credit_check.bad_credit, expect_bad);
        let t = db.table(CUSTOMER);
        let rid = t.lookup(cust_key(1, d, c)).unwrap();
        let mut buf = vec![0; t.schema().row_words()];
        t.read_into(rid, ColumnSet::ALL, &mut buf);
        let credit = ordo::storage::RowRef::new(t.schema(), &buf)
            .str(col::C_CREDIT)
            .to_vec();
        assert_eq!(
            credit,
            if expect_bad {
                b"BC".to_vec()
            } else {
                b"GC".to_vec()
            }
        );
        if expect_bad {
            bad += 1
        } else {
            good += 1
        }
    }
    assert!(bad > 20 && good > 20, "{bad} bad, {good} good");
}

#[test]
fn stock_level_and_order_status_see_recent_orders() {
    let w = tiny(1, "no=100");
    let p = open(&w);
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 4), w.program());
    for _ in 0..300 {
        w.next(&mut g, &mut prog);
        let _ = p.execute(&mut worker, &mut prog);
    }
    let mut sl = stock_level::StockLevel::default();
    (sl.w, sl.d, sl.threshold) = (1, 3, 101);
    p.execute(&mut worker, &mut sl).unwrap();
    // Every item of the last 20 orders has fewer than 101 in stock (quantities stay in 10..=100).
    assert!(sl.low_stock >= 20, "{}", sl.low_stock);
    sl.threshold = 0;
    p.execute(&mut worker, &mut sl).unwrap();
    assert_eq!(sl.low_stock, 0);
    // The last customer to order in district 3 sees that order.
    let db = p.db();
    let last = int(db.table(DISTRICT), dist_key(1, 3), col::D_NEXT_O_ID).unwrap() as u32 - 1;
    let c = int(db.table(ORDER), order_key(1, 3, last), col::O_C_ID).unwrap() as u32;
    let mut os = order_status::OrderStatus::default();
    os.customer.set(1, 3, By::Id(c));
    p.execute(&mut worker, &mut os).unwrap();
    assert_eq!(os.o_id, last);
    assert_eq!(
        os.lines as i64,
        int(db.table(ORDER), order_key(1, 3, last), col::O_OL_CNT).unwrap()
    );
}

#[test]
fn no_ytd_leaves_warehouse_and_district_totals_alone() {
    let mut cfg = tiny(1, "p=100").config().clone();
    cfg.no_ytd = true;
    let w = Tpcc::new(cfg).unwrap();
    let p = open(&w);
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 4), w.program());
    for _ in 0..200 {
        w.next(&mut g, &mut prog);
        p.execute(&mut worker, &mut prog).unwrap();
    }
    let db = p.db();
    assert_eq!(int(db.table(WAREHOUSE), 1, col::W_YTD), Some(30_000_000));
    assert_eq!(db.table(HISTORY).present_keys().len(), 1000 + 200);
    w.check(db).unwrap();
}

#[test]
fn bad_configurations_are_rejected() {
    let zero = TpccConfig {
        warehouses: 0,
        ..TpccConfig::default()
    };
    assert!(zero
        .validate()
        .unwrap_err()
        .to_string()
        .contains("--warehouses"));
    let many = TpccConfig {
        warehouses: MAX_WAREHOUSES,
        ..TpccConfig::default()
    };
    assert!(many.validate().is_err());
    assert!(TpccConfig::default().validate().is_ok());
}

#[test]
fn delivery_scan_marks_never_pass_an_undelivered_order() {
    let w = tiny(1, "no=50,d=50");
    let p = open(&w);
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 8), w.program());
    let mut delivered = 0;
    for _ in 0..1500 {
        w.next(&mut g, &mut prog);
        let _ = p.execute(&mut worker, &mut prog);
        if prog.kind == Some(Kind::Delivery) {
            delivered += prog.delivery.delivered();
        }
        let keys = p.db().table(NEW_ORDER).present_keys();
        for d in 1..=DISTRICTS {
            let mark = w.oldest.get(1, d);
            let oldest = keys.iter().find(|&&k| order_district(k) == dist_key(1, d));
            if let Some(&k) = oldest {
                assert!(
                    order_id(k) >= mark,
                    "district {d}: mark {mark} passed order {}",
                    order_id(k)
                );
            }
        }
    }
    assert!(delivered > 700, "{delivered} orders delivered");
    assert!((1..=DISTRICTS).all(|d| w.oldest.get(1, d) > load::delivered(100)));
    let fences = p.db().table(NEW_ORDER).present_keys();
    for d in 1..=DISTRICTS {
        assert!(
            fences.contains(&order_key(1, d, FENCE_O_ID)),
            "district {d} lost its fence"
        );
    }
    w.check(p.db()).unwrap();
}

#[test]
fn the_dbx1000_mix_does_dbx1000s_work_and_no_more() {
    let w = tiny(2, "dbx1000");
    let p = open(&w);
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 5), w.program());
    let db = p.db();
    let before = |t| db.table(t).present_keys().len();
    let (orders, lines, history) = (before(ORDER), before(ORDER_LINE), before(HISTORY));
    let bad_credit_data: Vec<Vec<u8>> = {
        let t = db.table(CUSTOMER);
        (1..=100)
            .map(|c| {
                let mut buf = vec![0u64; t.schema().row_words()];
                let rid = t.lookup(cust_key(1, 1, c)).unwrap();
                t.read_into(rid, ColumnSet::one(col::C_DATA), &mut buf);
                ordo::storage::RowRef::new(t.schema(), &buf)
                    .str(col::C_DATA)
                    .to_vec()
            })
            .collect()
    };
    let (mut new_orders, mut payments) = (0i64, 0);
    for _ in 0..2000 {
        w.next(&mut g, &mut prog);
        // Within its declarations, and never rolled back (DBx1000 makes no invalid items).
        let v = run_checked(&mut prog, p.begin(&mut worker)).expect("no rollbacks");
        assert!(v.is_empty(), "{}: {v:#?}", prog.name());
        match prog.name() {
            "NewOrder" => new_orders += 1,
            _ => payments += 1,
        }
    }
    assert!((800..=1200).contains(&new_orders), "{new_orders} of 2000");
    assert_eq!(new_orders + payments, 2000);
    // New-Order takes order numbers and updates stock, but inserts nothing; Payment inserts no
    // history and leaves c_data alone.
    let next: i64 = (1..=2)
        .flat_map(|wh| (1..=10).map(move |d| (wh, d)))
        .map(|(wh, d)| int(db.table(DISTRICT), dist_key(wh, d), col::D_NEXT_O_ID).unwrap() - 101)
        .sum();
    assert_eq!(next, new_orders);
    assert_eq!(before(ORDER), orders);
    assert_eq!(before(ORDER_LINE), lines);
    assert_eq!(before(HISTORY), history);
    let t = db.table(CUSTOMER);
    for (c, data) in (1..=100).zip(&bad_credit_data) {
        let mut buf = vec![0u64; t.schema().row_words()];
        let rid = t.lookup(cust_key(1, 1, c)).unwrap();
        t.read_into(rid, ColumnSet::one(col::C_DATA), &mut buf);
        let now = ordo::storage::RowRef::new(t.schema(), &buf).str(col::C_DATA);
        assert_eq!(now, &data[..], "customer {c}'s c_data changed");
    }
    w.check(db).unwrap();
    assert_eq!(w.params()["mix"], "dbx1000");
}

#[test]
fn each_worker_is_a_terminal_of_its_home_warehouse_unless_homes_are_random() {
    let w = tiny(3, ALL_TYPES);
    assert_eq!(w.params()["home_warehouse"], "bound");
    // Worker t's every transaction has home warehouse t mod 3 + 1.
    for (thread, home) in [(0, 1), (1, 2), (2, 3), (3, 1), (7, 2)] {
        let (mut g, mut prog) = (w.generator(thread, 11), w.program());
        for _ in 0..500 {
            w.next(&mut g, &mut prog);
            let w_of = match prog.kind.unwrap() {
                Kind::NewOrder => prog.new_order.w,
                Kind::Payment => prog.payment.w,
                Kind::OrderStatus => prog.order_status.customer.w,
                Kind::Delivery => prog.delivery.w,
                Kind::StockLevel => prog.stock_level.w,
                Kind::CreditCheck => prog.credit_check.w,
            };
            assert_eq!(w_of, home, "worker {thread}: {:?}", prog.kind);
        }
    }
    // Random homes: one worker's transactions visit every warehouse, about evenly.
    let mut cfg = w.config().clone();
    cfg.random_home = true;
    let w = Tpcc::new(cfg).unwrap();
    assert_eq!(w.params()["home_warehouse"], "random");
    let (mut g, mut prog) = (w.generator(0, 11), w.program());
    let mut seen = [0u32; 3];
    for _ in 0..3000 {
        w.next(&mut g, &mut prog);
        if prog.kind == Some(Kind::NewOrder) {
            seen[prog.new_order.w as usize - 1] += 1;
        }
    }
    let total: u32 = seen.iter().sum();
    assert!(
        seen.iter().all(|&n| n * 4 > total && n * 2 < total),
        "{seen:?}"
    );
}

/// `--base-ified` reaches each drawn program's alkaline starts: the default cuts New-Order after
/// its district counter and Payment after its totals and leaves the rest ACID; `0` leaves all
/// ACID; `raw` cuts every type at every piece; and the option parses, sweeps and refuses a count
/// above the five types.
#[test]
fn base_ified_cuts_the_drawn_programs() {
    use crate::base_ified::{BaseIfied, BASE_IFIED};
    use crate::catalog::given;
    let starts_by_type = |b: BaseIfied| {
        let w = Tpcc::new(TpccConfig {
            base_ified: b,
            ..tiny(1, ALL_TYPES).config().clone()
        })
        .unwrap();
        let mut g = w.generator(0, 5);
        let mut p = w.program();
        let mut seen = std::collections::BTreeMap::new();
        for _ in 0..300 {
            w.next(&mut g, &mut p);
            let mut out = Vec::new();
            p.alkaline_starts(&mut out);
            seen.insert(p.name(), out);
        }
        assert_eq!(seen.len(), 6, "every type drawn");
        seen
    };
    let thesis = starts_by_type(base::DEFAULT);
    assert_eq!(thesis["NewOrder"], [2, 3]);
    assert_eq!(thesis["Payment"], [1, 2]);
    for t in ["Delivery", "StockLevel", "OrderStatus", "CreditCheck"] {
        assert!(thesis[t].is_empty(), "{t}");
    }
    assert!(starts_by_type(BaseIfied::Types(0))
        .values()
        .all(Vec::is_empty));
    let raw = starts_by_type(BaseIfied::Raw);
    assert_eq!(raw["Delivery"], (1..30).collect::<Vec<_>>());
    assert_eq!(raw["CreditCheck"], [1, 2]);
    let three = starts_by_type(BaseIfied::Types(3));
    assert_eq!(three["Delivery"], [3, 6, 9, 12, 15, 18, 21, 24, 27]);
    assert!(three["StockLevel"].is_empty());

    let points = given(&[(&BASE_IFIED, "0,2,raw")]).sweep().unwrap();
    let cuts: Vec<BaseIfied> = points
        .iter()
        .map(|(_, s)| {
            Tpcc::from_settings(s, crate::Purpose::Bench)
                .unwrap()
                .config()
                .base_ified
        })
        .collect();
    assert_eq!(
        cuts,
        [BaseIfied::Types(0), BaseIfied::Types(2), BaseIfied::Raw]
    );
    let e = Tpcc::from_settings(&given(&[(&BASE_IFIED, "6")]), crate::Purpose::Bench)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("--base-ified") && e.contains("from 0 to 5"),
        "{e}"
    );
}

/// With TPC-C partitioned by warehouse and workers bound to home warehouses (W = P = 2), hstore's
/// planner puts a New-Order or Payment in its worker's partition alone unless it touches another
/// warehouse (a remote order line's stock, a remote customer), and then in both.
#[test]
fn warehouses_are_partitions_for_the_partitioned_protocols() {
    use ordo::protocols::kit::partition_map::PartitionMap;
    use ordo::protocols::partitioned::parts::PartSet;
    use ordo::txn::Target;
    let w = tiny(2, "new-order-payment");
    let p = open(&w);
    let db = p.db();
    let (mut set, mut decl) = (PartSet::default(), Vec::new());
    let mut planner = ordo::protocols::kit::plan::Planner::default();
    let (mut single, mut multi) = (0, 0);
    for t in 0..2u32 {
        let (mut g, mut prog) = (w.generator(t, 9), w.program());
        for _ in 0..400 {
            w.next(&mut g, &mut prog);
            // What hstore plans: the pieces whose keys are the program's inputs, and the bounds of
            // the others (a Payment's customer found by name: its district's customers).
            planner.plan_known(&prog, &mut decl);
            set.of(db, &decl, PartitionMap::new(2, prog.partitioning()))
                .unwrap();
            let warehouses: std::collections::BTreeSet<u64> = decl
                .iter()
                // Read-only tables (ITEM, CUSTOMER_BY_NAME) are in every partition.
                .filter(|a| !a.unlocked_in(db).unwrap())
                .map(|a| match a.target {
                    Target::Key(k) | Target::Range { lo: k, .. } => {
                        partitions::partition_key(a.table, k)
                    }
                })
                .collect();
            if warehouses.len() == 1 {
                assert_eq!(
                    set.list,
                    [t],
                    "worker {t}'s home warehouse is partition {t}"
                );
                single += 1;
            } else {
                assert_eq!(set.list, [0, 1]);
                multi += 1;
            }
        }
    }
    // About 10% of New-Orders and 15% of Payments reach the other warehouse.
    assert!(multi > 20 && single > 550, "{single} single, {multi} multi");
}

/// Planned only as far as its partitions, with the bounds of a customer found by name, no
/// New-Order or Payment strays under `hstore` (W = P = 2, a partition per warehouse): each commits
/// on its first attempt (or rolls back by its own logic: New-Order's invalid item), remote
/// customers by name included.
#[test]
fn hstore_runs_every_new_order_and_payment_on_its_first_plan() {
    use ordo::protocols::partitioned::HStore;
    use ordo::protocols::ProtocolConfig;
    let w = tiny(2, "new-order-payment");
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = HStore::open(db, &ProtocolConfig::with_threads(2));
    let mut committed = 0;
    for t in 0..2u32 {
        let mut worker = p.worker(t, false);
        let (mut g, mut prog) = (w.generator(t, 21), w.program());
        for _ in 0..500 {
            w.next(&mut g, &mut prog);
            match p.execute(&mut worker, &mut prog) {
                Ok(()) => committed += 1,
                Err(a) => assert_ne!(a.reason, AbortReason::Validation, "strayed: {a}"),
            }
        }
    }
    assert!(committed > 950, "{committed} of 1,000 committed");
}
