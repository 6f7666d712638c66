//! `-w ycsb`'s options, their defaults for a benchmark or a verification run, and the rules between
//! them ([`Ycsb::from_settings`]).
//!
//! `--theta`, `--hot-rows`, `--read-ratio` and `--commit-point` sweep: given as a list in `ordo
//! bench`, the run is repeated for each value. `--hot-rows` and `--hot-per-txn` go together (the
//! hot-set mode), and replace `--theta`'s Zipfian keys: give one key distribution or the other.
//! `--abort-ratio` goes with `--commit-point`. `--partitions P` (absent: off, as before it existed)
//! homes worker `t`'s transactions at partition `t % P` and keeps a single-partition one's keys in
//! it (key `k` is partition `k % P`'s, as the partitioned protocols split the keys, P = their thread
//! count: give `-t`); `--multi-partition PCT` (a list is a sweep; 0 by default) makes that percent
//! touch a second partition. Both are `-w vll-micro`'s declarations, shared.
//!
//! The PWV paper's YCSB (§5.1–5.2): `--ops 20 --read-ratio 0 --rmw` over the default 1,000,000
//! rows of 10 × 100 bytes, `--theta 0,0.3,0.6,0.9` (Fig. 3), and `--commit-point 0,5,10,15,20`
//! at one θ (Fig. 4).

use super::{CommitPoint, HotSet, Partitioning, Ycsb, YcsbConfig, DEFAULT_ABORT_RATIO, MAX_OPS};
pub use crate::vll_micro::options::{MULTI_PARTITION, PARTITIONS};
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const ROWS: OptionSpec = OptionSpec::new(
    "rows",
    "N",
    ValueKind::Int {
        min: 1,
        max: u64::MAX,
    },
    "YCSB: number of rows.",
);
pub const OPS: OptionSpec = OptionSpec::new(
    "ops",
    "N",
    ValueKind::Int {
        min: 1,
        max: MAX_OPS as u64,
    },
    "YCSB: requests per transaction (distinct keys).",
);
pub const READ_RATIO: OptionSpec = OptionSpec::new(
    "read-ratio",
    "FRACTION",
    ValueKind::Float { min: 0.0, max: 1.0 },
    "YCSB: fraction of requests that are reads.",
)
.sweeps();
pub const THETA: OptionSpec = OptionSpec::new(
    "theta",
    "θ",
    ValueKind::Float {
        min: 0.0,
        max: f64::INFINITY,
    },
    "YCSB: Zipfian skew θ (0 = uniform; 0.99 and above are very hot), e.g. 0,0.6,0.9,0.99.",
)
.sweeps();
pub const RMW: OptionSpec = OptionSpec::flag(
    "rmw",
    "YCSB: updates read-modify-write their field instead of overwriting it.",
);
pub const HOT_ROWS: OptionSpec = OptionSpec::new(
    "hot-rows",
    "N",
    ValueKind::Int {
        min: 1,
        max: u64::MAX,
    },
    "YCSB: hot-set mode — the number of hot rows (keys 0..N), with --hot-per-txn; instead of --theta.",
)
.sweeps();
pub const HOT_PER_TXN: OptionSpec = OptionSpec::new(
    "hot-per-txn",
    "N",
    ValueKind::Int {
        min: 0,
        max: MAX_OPS as u64,
    },
    "YCSB: hot-set mode — hot keys per transaction, with --hot-rows.",
);
pub const FIELDS: OptionSpec = OptionSpec::new(
    "fields",
    "N",
    ValueKind::Int { min: 1, max: 64 },
    "YCSB: columns per row.",
);
pub const FIELD_LEN: OptionSpec = OptionSpec::new(
    "field-len",
    "BYTES",
    ValueKind::Int {
        min: 1,
        max: u16::MAX as u64,
    },
    "YCSB: bytes per column.",
);

pub const COMMIT_POINT: OptionSpec = OptionSpec::new(
    "commit-point",
    "K",
    ValueKind::Int {
        min: 0,
        max: MAX_OPS as u64,
    },
    "YCSB: an explicit abort check in every transaction after its K-th write (0 to --ops; the \
     PWV paper's commit position, Fig. 4), which aborts the fraction --abort-ratio of them.",
)
.sweeps();
pub const ABORT_RATIO: OptionSpec = OptionSpec::new(
    "abort-ratio",
    "FRACTION",
    ValueKind::Float { min: 0.0, max: 1.0 },
    "YCSB: with --commit-point, the fraction of transactions its check aborts (a flag drawn with \
     each transaction, so every protocol aborts the same ones; default 0.01).",
);

/// Every option of `-w ycsb`.
pub const OPTIONS: &[&OptionSpec] = &[
    &ROWS,
    &OPS,
    &READ_RATIO,
    &THETA,
    &RMW,
    &HOT_ROWS,
    &HOT_PER_TXN,
    &FIELDS,
    &FIELD_LEN,
    &COMMIT_POINT,
    &ABORT_RATIO,
    &PARTITIONS,
    &MULTI_PARTITION,
];

/// The configuration when no option is given: the papers' for benchmarks; a small, contended
/// table of read-modify-writes for verification.
pub fn defaults(purpose: Purpose) -> YcsbConfig {
    match purpose {
        Purpose::Bench => YcsbConfig::default(),
        Purpose::Verify => YcsbConfig {
            rows: 1_000,
            ops: 8,
            read_ratio: 0.5,
            theta: 0.9,
            rmw: true,
            ..YcsbConfig::default()
        },
    }
}

impl Ycsb {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`]. Every option must
    /// have one value (a sweep's point: see [`Settings::sweep`]).
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<Ycsb> {
        let d = defaults(purpose);
        let theta = settings.float(&THETA)?;
        let hot_rows = settings.int(&HOT_ROWS)?;
        let hot_per_txn = settings.int_as::<usize>(&HOT_PER_TXN)?;
        let hot = match (hot_rows, hot_per_txn) {
            (Some(rows), Some(per_txn)) => Some(HotSet { rows, per_txn }),
            (Some(_), None) => return Err(HOT_ROWS.error("needs --hot-per-txn").into()),
            (None, Some(_)) => return Err(HOT_PER_TXN.error("needs --hot-rows").into()),
            (None, None) => d.hot,
        };
        let abort_ratio = settings.float(&ABORT_RATIO)?;
        let commit_point = match (settings.int_as::<usize>(&COMMIT_POINT)?, abort_ratio) {
            (Some(after_writes), ratio) => Some(CommitPoint {
                after_writes,
                abort_ratio: ratio.unwrap_or(DEFAULT_ABORT_RATIO),
            }),
            (None, Some(_)) => return Err(ABORT_RATIO.error("needs --commit-point").into()),
            (None, None) => d.commit_point,
        };
        let partitioning = match (
            settings.int_as::<u32>(&PARTITIONS)?,
            settings.float(&MULTI_PARTITION)?,
        ) {
            (Some(partitions), pct) => Some(Partitioning {
                partitions,
                multi_partition_pct: pct.unwrap_or(0.0),
            }),
            (None, Some(_)) => return Err(MULTI_PARTITION.error("needs --partitions").into()),
            (None, None) => d.partitioning,
        };
        if hot_rows.is_some() && theta.is_some() {
            return Err(THETA
                .error("and --hot-rows are alternative key distributions: give one")
                .into());
        }
        Ycsb::new(YcsbConfig {
            rows: settings.int(&ROWS)?.unwrap_or(d.rows),
            fields: settings.int_as(&FIELDS)?.unwrap_or(d.fields),
            field_len: settings.int_as(&FIELD_LEN)?.unwrap_or(d.field_len),
            ops: settings.int_as(&OPS)?.unwrap_or(d.ops),
            read_ratio: settings.float(&READ_RATIO)?.unwrap_or(d.read_ratio),
            theta: theta.unwrap_or(d.theta),
            rmw: settings.flag(&RMW) || d.rmw,
            hot,
            commit_point,
            partitioning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    /// Settings as the command line would give them.
    fn given(options: &[(&OptionSpec, &str)]) -> Settings {
        options.iter().fold(Settings::new(), |s, (spec, text)| {
            s.with(spec, text).expect("a valid value")
        })
    }

    fn error(s: &Settings, purpose: Purpose) -> String {
        match Ycsb::from_settings(s, purpose) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error"),
        }
    }

    #[test]
    fn a_list_sweeps_its_option_in_order() {
        let points = given(&[(&THETA, "0,0.6,0.99"), (&ROWS, "100")])
            .sweep()
            .unwrap();
        let labels: Vec<String> = points
            .iter()
            .map(|(p, _)| p.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(labels, ["theta=0", "theta=0.6", "theta=0.99"]);
        for ((_, one), theta) in points.iter().zip([0.0, 0.6, 0.99]) {
            assert_eq!(one.float(&THETA), Ok(Some(theta)));
            assert_eq!(one.int(&ROWS), Ok(Some(100)), "other options are kept");
            let w = Ycsb::from_settings(one, Purpose::Bench).unwrap();
            assert_eq!(w.config().theta, theta);
        }
    }

    #[test]
    fn hot_rows_and_read_ratio_sweep_too() {
        let points = given(&[(&HOT_ROWS, "10,100"), (&HOT_PER_TXN, "2"), (&ROWS, "1000")])
            .sweep()
            .unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(points[1].0.as_ref().unwrap().to_string(), "hot-rows=100");
        let hot = Ycsb::from_settings(&points[1].1, Purpose::Bench)
            .unwrap()
            .config()
            .hot;
        assert_eq!(
            hot,
            Some(HotSet {
                rows: 100,
                per_txn: 2
            })
        );
        let points = given(&[(&READ_RATIO, "0.5,1"), (&THETA, "0.9")])
            .sweep()
            .unwrap();
        assert_eq!(points[0].0.as_ref().unwrap().to_string(), "read-ratio=0.5");
        assert_eq!(points[1].1.float(&READ_RATIO), Ok(Some(1.0)));
        assert_eq!(
            points[1].1.float(&THETA),
            Ok(Some(0.9)),
            "a single value is not swept"
        );
    }

    #[test]
    fn no_list_is_one_unlabelled_point() {
        let points = given(&[(&THETA, "0.9")]).sweep().unwrap();
        assert_eq!(points.len(), 1);
        assert!(points[0].0.is_none());
        assert_eq!(points[0].1.float(&THETA), Ok(Some(0.9)));
    }

    #[test]
    fn sweeping_two_options_or_repeating_a_value_is_an_error() {
        let e = given(&[(&THETA, "0,0.9"), (&READ_RATIO, "0.5,1")])
            .sweep()
            .unwrap_err()
            .0;
        assert!(
            e.contains("one option at a time") && e.contains("--theta"),
            "{e}"
        );
        let e = THETA.parse("0.9,0.9").unwrap_err().0;
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn build_takes_one_value_per_option() {
        let e = error(&given(&[(&THETA, "0,0.9")]), Purpose::Verify);
        assert!(
            e.contains("--theta") && e.contains("a run takes one"),
            "{e}"
        );
        // Each value is checked as it is read, before any point is built.
        assert!(THETA.parse("0.5,-1").is_err());
        // And each point is still validated as a whole.
        let points = given(&[(&THETA, "0.5,1e14"), (&ROWS, "1000")])
            .sweep()
            .unwrap();
        assert!(Ycsb::from_settings(&points[0].1, Purpose::Bench).is_ok());
        assert!(Ycsb::from_settings(&points[1].1, Purpose::Bench).is_err());
    }

    #[test]
    fn the_hot_set_takes_both_of_its_options_and_not_theta() {
        let e = error(&given(&[(&HOT_ROWS, "10")]), Purpose::Bench);
        assert_eq!(e, "--hot-rows needs --hot-per-txn");
        let e = error(&given(&[(&HOT_PER_TXN, "1")]), Purpose::Bench);
        assert_eq!(e, "--hot-per-txn needs --hot-rows");
        let both = given(&[(&THETA, "0.5"), (&HOT_ROWS, "10"), (&HOT_PER_TXN, "1")]);
        assert_eq!(
            error(&both, Purpose::Bench),
            "--theta and --hot-rows are alternative key distributions: give one"
        );
        assert!(matches!(
            Ycsb::from_settings(&both, Purpose::Bench),
            Err(Error::Option(_))
        ));
    }

    #[test]
    fn the_commit_point_sweeps_and_takes_its_abort_ratio_along() {
        let points = given(&[(&COMMIT_POINT, "0,10,20"), (&OPS, "20"), (&READ_RATIO, "0")])
            .sweep()
            .unwrap();
        assert_eq!(points.len(), 3);
        assert_eq!(points[1].0.as_ref().unwrap().to_string(), "commit-point=10");
        for ((_, one), k) in points.iter().zip([0, 10, 20]) {
            let w = Ycsb::from_settings(one, Purpose::Bench).unwrap();
            assert_eq!(
                w.config().commit_point,
                Some(CommitPoint {
                    after_writes: k,
                    abort_ratio: DEFAULT_ABORT_RATIO
                })
            );
        }
        let w = Ycsb::from_settings(
            &given(&[(&COMMIT_POINT, "3"), (&ABORT_RATIO, "0.5")]),
            Purpose::Verify,
        )
        .unwrap();
        assert_eq!(w.config().commit_point.unwrap().abort_ratio, 0.5);
        assert_eq!(
            Ycsb::from_settings(&Settings::new(), Purpose::Bench)
                .unwrap()
                .config()
                .commit_point,
            None,
            "none unless asked for"
        );
    }

    #[test]
    fn a_commit_point_beyond_the_requests_or_a_ratio_alone_is_refused() {
        // Past --ops (16 by default, 8 for verification).
        let e = error(&given(&[(&COMMIT_POINT, "17")]), Purpose::Bench);
        assert!(
            e.starts_with("--commit-point (17) cannot exceed --ops (16)"),
            "{e}"
        );
        let e = error(&given(&[(&COMMIT_POINT, "9")]), Purpose::Verify);
        assert!(
            e.starts_with("--commit-point (9) cannot exceed --ops (8)"),
            "{e}"
        );
        assert_eq!(
            error(&given(&[(&ABORT_RATIO, "0.1")]), Purpose::Bench),
            "--abort-ratio needs --commit-point"
        );
        for bad in ["-1", "x", "1.5", "1025"] {
            assert!(COMMIT_POINT.parse(bad).is_err(), "{bad}");
        }
        for bad in ["-0.1", "1.01", "nan", "0.1,0.2"] {
            assert!(ABORT_RATIO.parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_pwv_papers_setup_is_reachable() {
        // §5.1: 1,000,000 records of 1,000 bytes, 20 read-modify-writes per transaction, θ swept.
        let s = given(&[
            (&OPS, "20"),
            (&READ_RATIO, "0"),
            (&RMW, ""),
            (&THETA, "0,0.3,0.6,0.9"),
        ]);
        for (_, one) in s.sweep().unwrap() {
            let c = Ycsb::from_settings(&one, Purpose::Bench)
                .unwrap()
                .config()
                .clone();
            assert_eq!(
                (c.rows, c.fields * c.field_len as usize),
                (1_000_000, 1_000)
            );
            assert_eq!((c.ops, c.read_ratio, c.rmw), (20, 0.0, true));
        }
    }

    #[test]
    fn verification_defaults_are_small_and_contended() {
        let w = Ycsb::from_settings(&Settings::new(), Purpose::Verify).unwrap();
        assert_eq!(w.config(), &defaults(Purpose::Verify));
        assert_eq!(w.config().rows, 1_000);
        assert!(w.config().rmw);
        let w = Ycsb::from_settings(&given(&[(&ROWS, "50")]), Purpose::Verify).unwrap();
        assert_eq!((w.config().rows, w.config().ops), (50, 8));
    }
}
