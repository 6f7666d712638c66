use super::*;
use ordo::protocols::nocc::NoCC;
use ordo::protocols::Protocol;
use ordo::txn::declared::run_checked;
use ordo::txn::AbortReason;

fn small(subscribers: u64) -> Tatp {
    Tatp::new(TatpConfig { subscribers }).unwrap()
}

fn loaded(w: &Tatp) -> NoCC {
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    NoCC::open(db, &Default::default())
}

#[test]
fn validation_and_the_spec_constants() {
    assert!(TatpConfig { subscribers: 0 }.validate().is_err());
    assert!(TatpConfig {
        subscribers: MAX_SUBSCRIBERS + 1
    }
    .validate()
    .is_err());
    let a = |subscribers| TatpConfig { subscribers }.nurand_a();
    assert_eq!(a(1_000_000), 65_535);
    assert_eq!(a(5_000_000), 1_048_575);
    assert_eq!(a(50_000_000), 2_097_151);
    assert_eq!(a(100_000), 8_191); // 6,553.6 → 8,192
    assert_eq!(a(1_000), 63); // 65.5 → 64
    assert_eq!(a(1), 0);
    assert_eq!(sub_nbr(42), *b"000000000000042");
    assert_eq!(nbr_value(&sub_nbr(987_654_321)), 987_654_321);
}

#[test]
fn the_mix_follows_the_spec_and_s_ids_are_skewed() {
    let w = small(1000);
    let (mut g, mut p) = (w.generator(0, 1), w.program());
    let n = 200_000;
    let mut per_kind = [0u32; 7];
    let mut per_sid = vec![0u32; 1001];
    for _ in 0..n {
        w.next(&mut g, &mut p);
        per_kind[Kind::ALL.iter().position(|k| *k == p.kind).unwrap()] += 1;
        assert!((1..=1000).contains(&p.s_id));
        per_sid[p.s_id as usize] += 1;
        assert_eq!(p.sub_nbr, p.s_id);
    }
    for (k, c) in Kind::ALL.iter().zip(per_kind) {
        let share = c as f64 / n as f64 * 100.0;
        assert!((share - k.percent() as f64).abs() < 0.5, "{k:?}: {share}%");
    }
    let max = *per_sid.iter().max().unwrap() as f64;
    assert!(
        max > 3.0 * n as f64 / 1000.0,
        "NURand should make some subscribers hot: max {max}"
    );
}

#[test]
fn the_population_has_the_spec_sizes_whatever_the_loader_threads() {
    let w = small(20_000);
    let p = loaded(&w);
    let db = p.db();
    assert_eq!(db.table(SUBSCRIBER).present_keys().len(), 20_000);
    let per_sub = |t| db.table(t).present_keys().len() as f64 / 20_000.0;
    // 1-4 rows, uniform: 2.5 on average; 0-3 forwardings per facility: 1.5 each.
    assert!((per_sub(ACCESS_INFO) - 2.5).abs() < 0.05);
    assert!((per_sub(SPECIAL_FACILITY) - 2.5).abs() < 0.05);
    assert!((per_sub(CALL_FORWARDING) - 3.75).abs() < 0.1);
    let mut buf = Vec::new();
    let active = db
        .table(SPECIAL_FACILITY)
        .present_keys()
        .iter()
        .filter(|&&k| inspect::int(db, SPECIAL_FACILITY, k, IS_ACTIVE, &mut buf) == Some(1))
        .count() as f64
        / db.table(SPECIAL_FACILITY).present_keys().len() as f64;
    assert!((active - 0.85).abs() < 0.02, "{active}");
    w.check(db).unwrap();
    // Chunks are seeded by position: a second load gives the same data.
    let q = loaded(&w);
    assert_eq!(
        q.db().table(CALL_FORWARDING).present_keys(),
        db.table(CALL_FORWARDING).present_keys()
    );
}

/// Runs one transaction alone under nocc.
fn run(p: &NoCC, txn: &mut TatpTxn) -> Result<(), AbortReason> {
    let mut worker = p.worker(0, false);
    txn.settle(0);
    p.execute(&mut worker, txn).map_err(|a| a.reason)
}

#[test]
fn inserts_deletes_and_updates_do_what_the_spec_says() {
    let w = small(50);
    let p = loaded(&w);
    let db = p.db();
    let mut buf = Vec::new();
    let mut t = w.program();
    // A subscriber with facility type 1 and no forwarding at start 8 yet: find one.
    let s = (1..=50)
        .find(|&s| {
            db.table(SPECIAL_FACILITY).lookup(sf_key(s, 1)).is_some()
                && inspect::int(db, CALL_FORWARDING, cf_key(s, 1, 8), END_TIME, &mut buf).is_none()
        })
        .expect("some subscriber qualifies");
    t.kind = Kind::InsertCallForwarding;
    (t.s_id, t.sub_nbr, t.sf_type, t.start_time, t.end_time) = (s, s, 1, 8, 12);
    run(&p, &mut t).unwrap();
    assert_eq!(
        inspect::int(db, CALL_FORWARDING, cf_key(s, 1, 8), END_TIME, &mut buf),
        Some(12)
    );
    assert_eq!(run(&p, &mut t), Err(AbortReason::DuplicateKey));
    assert_eq!(w.net_forwardings(), 1);
    w.check(db).unwrap();

    t.kind = Kind::DeleteCallForwarding;
    run(&p, &mut t).unwrap();
    assert_eq!(run(&p, &mut t), Err(AbortReason::User), "already gone");
    assert_eq!(w.net_forwardings(), 0);
    w.check(db).unwrap();

    t.kind = Kind::UpdateLocation;
    t.vlr_location = 77;
    run(&p, &mut t).unwrap();
    assert_eq!(
        inspect::int(db, SUBSCRIBER, s, VLR_LOCATION, &mut buf),
        Some(77)
    );

    // A facility type the subscriber lacks: UpdateSubscriberData and InsertCallForwarding roll back.
    if let Some(missing) =
        (1..=4u8).find(|&f| db.table(SPECIAL_FACILITY).lookup(sf_key(s, f)).is_none())
    {
        for kind in [Kind::UpdateSubscriberData, Kind::InsertCallForwarding] {
            t.kind = kind;
            t.sf_type = missing;
            assert_eq!(run(&p, &mut t), Err(AbortReason::User), "{kind:?}");
        }
    }
    w.check(db).unwrap();
}

#[test]
fn every_transaction_stays_within_its_declarations() {
    let w = small(100);
    let p = loaded(&w);
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 3), w.program());
    let mut seen = [false; 7];
    for _ in 0..3000 {
        w.next(&mut g, &mut prog);
        seen[Kind::ALL.iter().position(|k| *k == prog.kind).unwrap()] = true;
        match run_checked(&mut prog, p.begin(&mut worker)) {
            Ok(v) => assert!(v.is_empty(), "{}: {v:#?}", prog.kind.name()),
            Err(a) => assert!(
                matches!(a.reason, AbortReason::User | AbortReason::DuplicateKey),
                "{a}"
            ),
        }
    }
    assert!(seen.iter().all(|&s| s), "every type ran: {seen:?}");
}

#[test]
fn the_check_catches_orphans_bad_times_and_uncounted_rows() {
    let w = small(30);
    let p = loaded(&w);
    let db = p.db();
    let mut scratch = Vec::new();
    // A forwarding whose facility does not exist.
    let (s, f) = (1..=30)
        .flat_map(|s| (1..=4u8).map(move |f| (s, f)))
        .find(|&(s, f)| db.table(SPECIAL_FACILITY).lookup(sf_key(s, f)).is_none())
        .unwrap();
    db.table(CALL_FORWARDING)
        .load(cf_key(s, f, 0), &mut scratch, |r| {
            r.set_int(END_TIME, 3);
            Ok(())
        })
        .unwrap();
    assert!(w
        .check(db)
        .unwrap_err()
        .0
        .contains("has no special_facility"));

    let w = small(30);
    let p = loaded(&w);
    let k = p.db().table(CALL_FORWARDING).present_keys()[0];
    assert!(inspect::set_int(p.db(), CALL_FORWARDING, k, END_TIME, 40));
    assert!(w.check(p.db()).unwrap_err().0.contains("end_time"));

    let w = small(30);
    let p = loaded(&w);
    let (s, f) = (1..=30)
        .flat_map(|s| (1..=4u8).map(move |f| (s, f)))
        .find(|&(s, f)| {
            p.db()
                .table(SPECIAL_FACILITY)
                .lookup(sf_key(s, f))
                .is_some()
                && p.db()
                    .table(CALL_FORWARDING)
                    .lookup(cf_key(s, f, 16))
                    .is_none()
        })
        .unwrap();
    p.db()
        .table(CALL_FORWARDING)
        .load(cf_key(s, f, 16), &mut scratch, |r| {
            r.set_int(END_TIME, 20);
            Ok(())
        })
        .unwrap();
    assert!(w
        .check(p.db())
        .unwrap_err()
        .0
        .contains("net committed inserts"));
}
