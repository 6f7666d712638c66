use super::*;
use ordo::protocols::nocc::NoCC;
use ordo::protocols::Protocol;
use ordo::txn::declared::run_checked;

fn micro(records: u64, hot_position: u32) -> PwvMicro {
    PwvMicro::new(PwvMicroConfig {
        records,
        hot_position,
    })
    .unwrap()
}

#[test]
fn validation_rejects_bad_parameters() {
    assert!(PwvMicroConfig::default().validate().is_ok());
    for bad in [
        PwvMicroConfig {
            records: 19,
            ..Default::default()
        },
        PwvMicroConfig {
            hot_position: 10,
            ..Default::default()
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?} should be rejected");
    }
}

/// `--hot-position N`: exactly N updates follow the hot one, in program order and in what the
/// pieces declare; the other 9 records are distinct and cold; program order is key order. The
/// smallest table (20 records) leaves no room to spare on either side.
#[test]
fn the_hot_position_moves_the_hot_record() {
    for (records, n) in (0..=MAX_HOT_POSITION).flat_map(|n| [(1_000, n), (MIN_RECORDS, n)]) {
        let w = micro(records, n);
        let hot_key = w.config().hot_key();
        let (mut g, mut p) = (w.generator(0, 7), w.program());
        for _ in 0..500 {
            w.next(&mut g, &mut p);
            assert_eq!(p.pieces(), UPDATES);
            let at = p.keys.iter().position(|&k| k == hot_key).unwrap();
            assert_eq!(UPDATES - 1 - at, n as usize, "{:?}", p.keys);
            assert!(
                p.keys.windows(2).all(|w| w[0] < w[1]),
                "program order is key order (so distinct records): {:?}",
                p.keys
            );
            assert!(p.keys.iter().all(|&k| k < records));
            let mut declared = Vec::new();
            p.declare(at, &mut declared);
            assert_eq!(
                declared,
                [Access::update(
                    RECORDS,
                    hot_key,
                    ColumnSet::one(VALUE),
                    ColumnSet::one(VALUE)
                )]
            );
        }
    }
}

#[test]
fn no_data_edges_and_no_commit_point() {
    let w = micro(100, 4);
    let (mut g, mut p) = (w.generator(1, 1), w.program());
    w.next(&mut g, &mut p);
    let mut deps = Vec::new();
    for i in 0..p.pieces() {
        p.depends_on(i, &mut deps);
        p.declaration_depends_on(i, &mut deps);
    }
    assert!(deps.is_empty(), "{deps:?}");
    assert_eq!(p.commit_point(), None);
}

#[test]
fn runs_within_its_declarations_and_the_hot_record_counts_the_commits() {
    let w = micro(50, 3);
    let hot_key = w.config().hot_key();
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = NoCC::open(db, &Default::default());
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 3), w.program());
    for _ in 0..200 {
        w.next(&mut g, &mut prog);
        let v = run_checked(&mut prog, p.begin(&mut worker)).unwrap();
        assert!(v.is_empty(), "{v:#?}");
    }
    w.check(p.db()).unwrap();
    let mut buf = Vec::new();
    assert_eq!(
        crate::inspect::int(p.db(), RECORDS, hot_key, VALUE, &mut buf),
        Some(200)
    );
    // A lost update of the hot record breaks the invariant.
    assert!(crate::inspect::set_int(
        p.db(),
        RECORDS,
        hot_key,
        VALUE,
        199
    ));
    let e = w.check(p.db()).unwrap_err();
    assert!(e.0.contains("hot record"), "{e}");
}
