use super::*;
use crate::catalog::given;
use crate::testkit::loaded;
use crate::Purpose;
use ordo::harness::{verify, VerifyConfig};
use ordo::protocols::nocc::NoCC;
use ordo::protocols::{Protocol, ProtocolConfig};
use ordo::txn::declared::run_checked;
use ordo::txn::AbortReason;

fn small(customers: u64, flights: u64) -> Seats {
    Seats::new(SeatsConfig { customers, flights }).unwrap()
}

/// Runs one transaction alone under nocc.
fn run(p: &NoCC, txn: &mut SeatsTxn) -> Result<(), AbortReason> {
    let mut worker = p.worker(0, false);
    p.execute(&mut worker, txn).map_err(|a| a.reason)
}

fn seats_left(db: &Database<()>, f: u64) -> i64 {
    inspect::int(db, FLIGHT, f, F_SEATS_LEFT, &mut Vec::new()).unwrap()
}

fn held(db: &Database<()>, c: u64) -> i64 {
    inspect::int(db, CUSTOMER, c, C_IATTR10, &mut Vec::new()).unwrap()
}

#[test]
fn validation_options_and_the_mix() {
    assert!(SeatsConfig::default().validate().is_ok());
    assert_eq!(SeatsConfig::default().customers, 100_000);
    assert_eq!(SeatsConfig::default().flights, 4_000);
    for (customers, flights) in [(0, 10), (10, 3), (MAX_CUSTOMERS + 1, 10)] {
        assert!(SeatsConfig { customers, flights }.validate().is_err());
    }
    let w = Seats::from_settings(&given(&[]), Purpose::Verify).unwrap();
    assert_eq!(w.config(), &SeatsConfig::scaled(0.2));
    assert_eq!(w.config().flights, 8);
    let w = Seats::from_settings(&given(&[(&options::SCALE, "2")]), Purpose::Bench).unwrap();
    assert_eq!(
        w.config(),
        &SeatsConfig {
            customers: 2_000,
            flights: 80
        }
    );
    assert_eq!(Kind::ALL.iter().map(|k| k.percent()).sum::<u32>(), 100);
    let read_only: u32 = Kind::ALL
        .iter()
        .filter(|k| k.read_only())
        .map(|k| k.percent())
        .sum();
    assert_eq!(read_only, 45, "FindFlights + FindOpenSeats");

    let w = small(1_000, 40);
    let (mut g, mut p) = (w.generator(0, 1), w.program());
    let n = 100_000;
    let mut per_kind = [0u32; 6];
    let mut by_str = 0;
    for _ in 0..n {
        w.next(&mut g, &mut p);
        per_kind[Kind::ALL.iter().position(|k| *k == p.kind).unwrap()] += 1;
        assert!((1..=1_000).contains(&p.c_id));
        assert!((1..=40).contains(&p.f_id));
        assert!(p.seat < SEATS_PER_FLIGHT);
        by_str += u32::from(p.kind == Kind::DeleteReservation && p.lookup == Lookup::IdStr);
    }
    for (k, c) in Kind::ALL.iter().zip(per_kind) {
        let share = c as f64 / n as f64 * 100.0;
        assert!((share - k.percent() as f64).abs() < 0.6, "{k:?}: {share}%");
    }
    let share = by_str as f64 / per_kind[0] as f64;
    assert!((share - 0.2).abs() < 0.03, "{share}");
}

#[test]
fn the_load_is_consistent_and_has_the_planned_sizes() {
    let w = small(2_000, 40);
    let p = loaded(&w);
    let db = p.db();
    w.check(db).unwrap();
    let reservations = db.table(RESERVATION).present_keys().len() as f64;
    // Each of 4 home flights booked with probability 1/2: 2 per customer.
    assert!((reservations / 2_000.0 - 2.0).abs() < 0.1, "{reservations}");
    let ff = db.table(FREQUENT_FLYER).present_keys().len() as f64 / 2_000.0;
    assert!(
        (ff - 1.5).abs() < 0.1,
        "{ff} frequent-flyer rows per customer"
    );
    assert_eq!(
        db.table(AIRPORT_DISTANCE).present_keys().len() as u64,
        AIRPORTS * (AIRPORTS - 1)
    );
    // Some airports lie within 100 miles of each other (the distance search finds some).
    let near = (1..=AIRPORTS)
        .flat_map(|a| (1..=AIRPORTS).map(move |b| (a, b)))
        .filter(|&(a, b)| a != b && airport_distance(a, b) <= 100)
        .count();
    assert!(near > 20, "{near} pairs within 100 miles");
    for f in 1..=40 {
        let i = flight_info(f);
        assert_ne!(i.depart, i.arrive);
        assert!(i.depart_time < DAYS * MINUTES_PER_DAY && i.arrive_time > i.depart_time);
    }
    // The same data again.
    let q = loaded(&w);
    assert_eq!(
        q.db().table(RESERVATION).present_keys(),
        db.table(RESERVATION).present_keys()
    );
}

/// A customer, a home flight it holds no seat on, and a free seat there.
fn free_trip(w: &Seats, db: &Database<()>) -> (u64, u64, u64) {
    let mut buf = Vec::new();
    for c in 1..=w.config().customers {
        for j in 0..HOME_FLIGHTS {
            let f = w.config().home_flight(c, j);
            if inspect::int(db, RESERVATION_BY_CUSTOMER, rc_key(c, f), RC_SEAT, &mut buf).is_none()
            {
                let seat = (0..SEATS_PER_FLIGHT)
                    .find(|&s| {
                        inspect::int(db, RESERVATION, res_key(f, s), R_ID, &mut buf).is_none()
                    })
                    .unwrap();
                return (c, f, seat);
            }
        }
    }
    panic!("every customer is on every home flight")
}

#[test]
fn each_transaction_does_what_the_spec_says() {
    let w = small(50, 8);
    let p = loaded(&w);
    let db = p.db();
    let mut buf = Vec::new();
    let mut t = w.program();
    let (c, f, seat) = free_trip(&w, db);
    let (left, before) = (seats_left(db, f), held(db, c));

    // NewReservation books the seat.
    t.reset(Kind::NewReservation);
    (t.c_id, t.c_id_str, t.f_id, t.seat, t.r_id) = (c, c_id_str(c), f, seat, 77);
    run(&p, &mut t).unwrap();
    assert_eq!(seats_left(db, f), left - 1);
    assert_eq!(held(db, c), before + 1);
    assert_eq!(
        inspect::int(db, RESERVATION, res_key(f, seat), R_C_ID, &mut buf),
        Some(c as i64)
    );
    assert_eq!(
        inspect::int(db, RESERVATION_BY_CUSTOMER, rc_key(c, f), RC_SEAT, &mut buf),
        Some(seat as i64)
    );
    w.check(db).unwrap();
    // Again: the seat is taken; another seat: the customer is on board already.
    assert_eq!(run(&p, &mut t), Err(AbortReason::User));
    t.seat = (0..SEATS_PER_FLIGHT)
        .find(|&s| inspect::int(db, RESERVATION, res_key(f, s), R_ID, &mut buf).is_none())
        .unwrap();
    assert_eq!(run(&p, &mut t), Err(AbortReason::User));
    assert_eq!(seats_left(db, f), left - 1);

    // FindOpenSeats sees the seat map.
    t.reset(Kind::FindOpenSeats);
    t.f_id = f;
    run(&p, &mut t).unwrap();
    assert_eq!(t.found_rows as i64, left - 1);

    // UpdateReservation moves it to a free seat.
    let to = t.seat;
    t.reset(Kind::UpdateReservation);
    (t.c_id, t.f_id, t.seat, t.attr_idx, t.attrs[0]) = (c, f, to, 2, 4242);
    run(&p, &mut t).unwrap();
    assert!(inspect::int(db, RESERVATION, res_key(f, seat), R_ID, &mut buf).is_none());
    assert_eq!(
        inspect::int(db, RESERVATION, res_key(f, to), R_IATTR00 + 2, &mut buf),
        Some(4242)
    );
    assert_eq!(
        inspect::int(db, RESERVATION, res_key(f, to), R_ID, &mut buf),
        Some(77)
    );
    assert_eq!(
        inspect::int(db, RESERVATION_BY_CUSTOMER, rc_key(c, f), RC_SEAT, &mut buf),
        Some(to as i64)
    );
    assert_eq!(seats_left(db, f), left - 1);
    assert_eq!(run(&p, &mut t), Err(AbortReason::User), "its own seat now");
    w.check(db).unwrap();

    // DeleteReservation by each lookup frees the seat.
    let balance = inspect::int(db, CUSTOMER, c, C_BALANCE, &mut buf).unwrap();
    let price = inspect::int(db, RESERVATION, res_key(f, to), R_PRICE, &mut buf).unwrap();
    t.reset(Kind::DeleteReservation);
    (t.c_id, t.c_id_str, t.f_id, t.lookup) = (c, c_id_str(c), f, Lookup::IdStr);
    run(&p, &mut t).unwrap();
    assert!(inspect::int(db, RESERVATION, res_key(f, to), R_ID, &mut buf).is_none());
    assert_eq!(seats_left(db, f), left);
    assert_eq!(held(db, c), before);
    assert_eq!(
        inspect::int(db, CUSTOMER, c, C_BALANCE, &mut buf),
        Some(balance - price)
    );
    assert_eq!(
        run(&p, &mut t),
        Err(AbortReason::User),
        "nothing left to delete"
    );
    w.check(db).unwrap();

    // By frequent-flyer number: a customer with a frequent-flyer row and a reservation.
    let (c2, f2) = (1..=50)
        .flat_map(|c| (0..HOME_FLIGHTS).map(move |j| (c, j)))
        .map(|(c, j)| (c, w.config().home_flight(c, j)))
        .find(|&(c, f)| {
            db.table(FF_BY_NUMBER).lookup(c_id_str(c)).is_some()
                && inspect::int(db, RESERVATION_BY_CUSTOMER, rc_key(c, f), RC_SEAT, &mut buf)
                    .is_some()
        })
        .unwrap();
    let left2 = seats_left(db, f2);
    t.reset(Kind::DeleteReservation);
    (t.c_id, t.c_id_str, t.f_id, t.lookup) = (c2, c_id_str(c2), f2, Lookup::FrequentFlyer);
    run(&p, &mut t).unwrap();
    assert_eq!(seats_left(db, f2), left2 + 1);
    w.check(db).unwrap();

    // UpdateCustomer by c_id_str, with its frequent-flyer rows.
    t.reset(Kind::UpdateCustomer);
    (t.c_id, t.c_id_str, t.lookup, t.update_ff, t.attrs) =
        (c2, c_id_str(c2), Lookup::IdStr, true, [11, 12, 0, 0]);
    run(&p, &mut t).unwrap();
    assert_eq!(
        inspect::int(db, CUSTOMER, c2, C_IATTR01, &mut buf),
        Some(12)
    );
    let ff = db.table(FREQUENT_FLYER).present_keys();
    let mine: Vec<u64> = ff.into_iter().filter(|k| k >> 8 == c2).collect();
    assert!(!mine.is_empty());
    for k in mine {
        assert_eq!(
            inspect::int(db, FREQUENT_FLYER, k, FF_IATTR00, &mut buf),
            Some(11)
        );
    }

    // FindFlights finds an existing flight by its airports and day.
    let info = flight_info(f);
    t.reset(Kind::FindFlights);
    t.depart = info.depart;
    t.arrive = info.arrive;
    t.start = info.depart_time - info.depart_time % MINUTES_PER_DAY;
    t.end = t.start + 2 * MINUTES_PER_DAY - 1;
    t.distance = 100;
    run(&p, &mut t).unwrap();
    assert!(t.found_rows >= 1);
    let expected = (1..=8)
        .filter(|&g| {
            let i = flight_info(g);
            i.depart == info.depart
                && (t.start..=t.end).contains(&i.depart_time)
                && (i.arrive == info.arrive
                    || (i.arrive != info.depart && airport_distance(info.depart, i.arrive) <= 100))
        })
        .count();
    assert!(
        t.found_rows as usize <= expected,
        "{} > {expected}",
        t.found_rows
    );
    w.check(db).unwrap();
}

#[test]
fn every_transaction_stays_within_its_declarations() {
    let w = small(100, 8);
    let p = loaded(&w);
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 3), w.program());
    let mut seen = [false; 6];
    let mut committed = [0u32; 6];
    for _ in 0..5_000 {
        w.next(&mut g, &mut prog);
        let i = Kind::ALL.iter().position(|k| *k == prog.kind).unwrap();
        seen[i] = true;
        match run_checked(&mut prog, p.begin(&mut worker)) {
            Ok(v) => {
                assert!(v.is_empty(), "{}: {v:#?}", prog.kind.name());
                committed[i] += 1;
            }
            Err(a) => assert_eq!(a.reason, AbortReason::User, "{a}"),
        }
    }
    assert!(seen.iter().all(|&s| s), "every type ran: {seen:?}");
    assert!(
        committed.iter().all(|&n| n > 50),
        "each commits: {committed:?}"
    );
    w.check(p.db()).unwrap();
}

#[test]
fn the_check_catches_lost_updates_and_double_bookings() {
    type Corruption = (&'static str, fn(&Database<()>));
    let corrupt: [Corruption; 6] = [
        ("f_seats_left is", |db| {
            let left = seats_left(db, 3);
            inspect::set_int(db, FLIGHT, 3, F_SEATS_LEFT, left + 1);
        }),
        ("c_iattr10 is", |db| {
            inspect::set_int(db, CUSTOMER, 5, C_IATTR10, held(db, 5) + 1);
        }),
        ("ff_iattr10 is", |db| {
            let k = db.table(FREQUENT_FLYER).present_keys()[0];
            let v = inspect::int(db, FREQUENT_FLYER, k, FF_IATTR10, &mut Vec::new()).unwrap();
            inspect::set_int(db, FREQUENT_FLYER, k, FF_IATTR10, v + 1);
        }),
        ("holds seats", |db| {
            // A second seat of one customer on one flight (the index names the other).
            let k = db.table(RESERVATION).present_keys()[0];
            let mut buf = Vec::new();
            let c = inspect::int(db, RESERVATION, k, R_C_ID, &mut buf).unwrap();
            let f = k >> 8;
            let seat = (0..SEATS_PER_FLIGHT)
                .find(|&s| inspect::int(db, RESERVATION, res_key(f, s), R_ID, &mut buf).is_none())
                .unwrap();
            db.table(RESERVATION)
                .load(res_key(f, seat), &mut buf, |r| {
                    r.set_int(R_C_ID, c);
                    r.set_int(R_F_ID, f as i64);
                    r.set_int(R_SEAT, seat as i64);
                    Ok(())
                })
                .unwrap();
        }),
        ("says flight", |db| {
            let k = db.table(RESERVATION).present_keys()[1];
            inspect::set_int(db, RESERVATION, k, R_SEAT, 149);
        }),
        ("has no reservation", |db| {
            // An index entry whose reservation is gone: a half-done delete.
            db.table(RESERVATION_BY_CUSTOMER)
                .load(rc_key(1, 2), &mut Vec::new(), |r| {
                    r.set_int(RC_SEAT, 200);
                    Ok(())
                })
                .ok();
        }),
    ];
    for (what, f) in corrupt {
        let w = small(60, 8);
        let p = loaded(&w);
        w.check(p.db()).unwrap();
        f(p.db());
        let e = w.check(p.db()).unwrap_err().0;
        assert!(e.contains(what), "{what}: {e}");
    }
}

#[test]
fn a_long_serial_run_keeps_the_invariants() {
    let w = small(200, 8);
    let p = loaded(&w);
    let (mut g, mut prog) = (w.generator(1, 7), w.program());
    let mut worker = p.worker(0, false);
    let (mut committed, mut read_only) = (0, 0);
    for _ in 0..20_000 {
        w.next(&mut g, &mut prog);
        match p.execute(&mut worker, &mut prog) {
            Ok(()) => committed += 1,
            Err(a) => assert_eq!(a.reason, AbortReason::User, "{a}"),
        }
        read_only += u32::from(prog.kind.read_only());
    }
    assert!(committed > 12_000, "{committed}");
    assert!(read_only > 8_000);
    w.check(p.db()).unwrap();
}

/// Contended: 4 threads, 100 customers on 4 flights. Every family of protocols (predicate locks,
/// 2PL, OCC, SSI, deterministic, partitioned): serializable, the invariants kept.
#[test]
fn contended_histories_are_serializable_and_keep_the_invariants() {
    let w = small(100, 4);
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(4),
        txns: 2_000,
        seed: 5,
        prefetch: true,
    };
    for name in [
        "dibs",
        "dibs-naive",
        "2pl-nowait",
        "silo",
        "ssi",
        "calvin",
        "vll",
        "hstore",
    ] {
        let v = verify::run_named(name, &w, &cfg)
            .unwrap()
            .expect("verification run");
        assert!(v.report.committed >= 1_000, "{name}: {}", v.report);
        assert!(v.report.is_serializable(), "{name}: {}", v.report);
        assert!(v.report.anomalies.is_empty(), "{name}: {}", v.report);
        assert_eq!(v.invariants, Ok(()), "{name}");
        assert!(v.report.edges > 500, "{name}: too few dependencies");
    }
}
