use super::*;
use ordo::check::AnomalyKind;
use ordo::harness::{verify, VerifyConfig};
use ordo::protocols::salt::{Acid2pl, SaltProtocol};
use ordo::protocols::ProtocolConfig;

fn run<P: ordo::protocols::Protocol>(seats: u64, txns: u64) -> ordo::harness::Verified {
    let w = Ticketing::new(TicketingConfig { seats }).unwrap();
    let cfg = VerifyConfig {
        protocol: ProtocolConfig {
            lock_wait_timeout: std::time::Duration::from_millis(5),
            ..ProtocolConfig::with_threads(4)
        },
        txns,
        seed: 9,
        prefetch: true,
    };
    verify::run::<P, Ticketing>(&w, &cfg).unwrap()
}

/// Under `salt` (CreateOrder BASE) and `acid-2pl` alike: no seat sold twice and every count
/// matches, after selling out too (more orders than seats), with no dirty write or read.
#[test]
fn no_seat_is_sold_twice_and_counts_match_under_salt_and_acid() {
    for (name, v) in [
        ("salt", run::<SaltProtocol>(300, 2_000)),
        ("acid-2pl", run::<Acid2pl>(300, 2_000)),
    ] {
        assert_eq!(v.invariants, Ok(()), "{name}");
        for k in [AnomalyKind::G0, AnomalyKind::G1a, AnomalyKind::G1c] {
            assert!(!v.report.has(k), "{name}: {}", v.report);
        }
    }
}

#[test]
fn the_check_finds_a_seat_sold_twice() {
    let w = Ticketing::new(TicketingConfig { seats: 10 }).unwrap();
    let mut db: Database<()> = Database::new();
    w.load(&mut db).unwrap();
    assert_eq!(w.check(&db), Ok(()));
    // Seat 0/3 claims an order that names another seat.
    let mut scratch = Vec::new();
    db.table(ORDERS)
        .load(7, &mut scratch, |r| {
            r.set_int(O_CATEGORY, 0);
            r.set_int(O_SEAT, 4);
            Ok(())
        })
        .unwrap();
    crate::inspect::set_int(&db, SEAT, 3, ORDER_ID, 7);
    crate::inspect::set_int(&db, CATEGORY, 0, NEXT_SEAT, 1);
    crate::inspect::set_int(&db, CATEGORY, 0, SOLD, 1);
    let e = w.check(&db).unwrap_err().to_string();
    assert!(e.contains("a seat sold twice"), "{e}");
}

#[test]
fn create_order_is_base_with_the_seat_hand_out_first() {
    let w = Ticketing::new(TicketingConfig::default()).unwrap();
    let mut g = w.generator(0, 1);
    let mut p = w.program();
    loop {
        w.next(&mut g, &mut p);
        if p.kind == Kind::CreateOrder {
            break;
        }
    }
    let mut starts = Vec::new();
    p.alkaline_starts(&mut starts);
    assert_eq!(starts, vec![1, 2, 3]);
    assert_eq!(p.order >> 32, 1, "worker 0's orders");
}
