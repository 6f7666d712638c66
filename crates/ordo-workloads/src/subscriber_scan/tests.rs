use super::*;
use crate::catalog::given;
use crate::Purpose;
use ordo::harness::{verify, VerifyConfig};
use ordo::protocols::nocc::NoCC;
use ordo::protocols::{Protocol, ProtocolConfig};
use ordo::txn::declared::run_checked;

fn scan(subscribers: u64, conjuncts: u32) -> SubscriberScan {
    SubscriberScan::new(SubscriberScanConfig {
        subscribers,
        conjuncts,
    })
    .unwrap()
}

#[test]
fn validation_and_options() {
    assert!(SubscriberScanConfig::default().validate().is_ok());
    for (s, c) in [(0, 1), (10, 0), (10, 9)] {
        let cfg = SubscriberScanConfig {
            subscribers: s,
            conjuncts: c,
        };
        assert!(cfg.validate().is_err(), "{cfg:?}");
    }
    let w = SubscriberScan::from_settings(&given(&[]), Purpose::Bench).unwrap();
    assert_eq!(w.config(), &SubscriberScanConfig::default());
    assert_eq!(w.config().subscribers, 100_000, "the paper's table");
    let w = SubscriberScan::from_settings(
        &given(&[(&options::CONJUNCTS, "8"), (&SUBSCRIBERS_OPT, "50")]),
        Purpose::Verify,
    )
    .unwrap();
    assert_eq!(w.config().conjuncts, 8);
    assert_eq!(w.config().subscribers, 50);
    assert!(options::CONJUNCTS.parse("9").is_err());
}

use crate::tatp::options::SUBSCRIBERS as SUBSCRIBERS_OPT;

/// `--conjuncts n`: an ∧ of n conjuncts on byte2_1..byte2_n, each an ∨ of two 16-wide BETWEENs
/// inside 0..=255; 80% of the transactions read.
#[test]
fn predicates_have_the_papers_shape() {
    for n in 1..=MAX_CONJUNCTS {
        let w = scan(10, n);
        let (mut g, mut p) = (w.generator(0, 3), w.program());
        let mut reads = 0;
        for _ in 0..1_000 {
            w.next(&mut g, &mut p);
            reads += u32::from(!p.update);
            let conjuncts = match &p.predicate {
                Expr::And(cs) => cs.clone(),
                one => vec![one.clone()],
            };
            assert_eq!(conjuncts.len(), n as usize);
            for (i, c) in conjuncts.iter().enumerate() {
                let Expr::Or(ranges) = c else { panic!("{c:?}") };
                assert_eq!(ranges.len(), 2);
                for r in ranges {
                    let Expr::And(ends) = r else { panic!("{r:?}") };
                    let [Expr::Atom(lo), Expr::Atom(hi)] = &ends[..] else {
                        panic!("{r:?}")
                    };
                    assert_eq!(usize::from(lo.column), BYTE2_1 + i);
                    assert_eq!(hi.value - lo.value, WIDTH - 1);
                    assert!(lo.value >= 0 && hi.value <= 255);
                }
            }
        }
        assert!((750..850).contains(&reads), "{reads} reads of 1000");
    }
}

/// A read returns exactly the rows the predicate names (counted by brute force over the loaded
/// values), and an update writes `vlr_location` of exactly those rows; the check holds.
#[test]
fn requests_name_exactly_the_rows_of_their_predicate() {
    let w = scan(2_000, 1);
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = NoCC::open(db, &ProtocolConfig::default());
    let mut worker = p.worker(0, false);
    let (mut g, mut prog) = (w.generator(0, 9), w.program());
    let (mut reads, mut updates) = (0, 0);
    while reads < 5 || updates < 5 {
        w.next(&mut g, &mut prog);
        let expected: Vec<u64> = (1..=2_000)
            .filter(|&s| {
                prog.predicate
                    .eval_by(&|c| byte2(s, usize::from(c) - BYTE2_1))
            })
            .collect();
        assert!(!expected.is_empty() && expected.len() < 2_000);
        let tx = p.begin(&mut worker);
        run_checked(&mut prog, tx).unwrap();
        assert_eq!(prog.rows, expected.len() as u64, "{}", prog.predicate);
        if prog.update {
            updates += 1;
            let mut buf = Vec::new();
            for s in 1..=2_000u64 {
                let vlr = crate::inspect::int(p.db(), SUBSCRIBER, s, VLR_LOCATION, &mut buf);
                assert_eq!(
                    vlr == Some(prog.vlr),
                    expected.contains(&s),
                    "subscriber {s}"
                );
            }
        } else {
            reads += 1;
        }
    }
    w.check(p.db()).unwrap();
}

/// Contended: 4 threads over 300 rows with one conjunct (an update names about 40 rows, and most
/// pairs of predicates overlap). DIBS with and without its optimizations, and a protocol that
/// protects the requests as whole-table scans: serializable, the invariant kept.
#[test]
fn contended_histories_are_serializable() {
    let w = scan(300, 1);
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(4),
        txns: 2_000,
        seed: 5,
        prefetch: true,
    };
    for name in ["dibs", "dibs-naive", "2pl-detect", "silo", "ssi"] {
        let v = verify::run_named(name, &w, &cfg)
            .unwrap()
            .expect("verification run");
        assert!(v.report.committed >= 2_000, "{name}: {}", v.report);
        assert!(v.report.is_serializable(), "{name}: {}", v.report);
        assert!(v.report.anomalies.is_empty(), "{name}: {}", v.report);
        assert!(v.report.edges > 1_000, "{name}: too few dependencies");
    }
}
