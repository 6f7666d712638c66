//! `-w vll-micro`'s options and their defaults for a benchmark or a verification run
//! ([`VllMicro::from_settings`]).
//!
//! `--ci` (Fig. 8) and `--multi-partition` (Fig. 9) sweep: given as a list in `ordo bench`, the run
//! is repeated for each value. `--long` is shared with `-w vll-range`, which does the same extra
//! work per record, and `--records` with `-w pwv-micro`, whose table is the same.

use super::{VllMicro, VllMicroConfig, MAX_REMOTE_WAIT_US, PER_TXN};
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const CI: OptionSpec = OptionSpec::new(
    "ci",
    "CI",
    ValueKind::Float { min: 0.0, max: 1.0 },
    "vll-micro: contention index in (0, 1] = 1 / hot records per partition, e.g. \
     0.0001,0.001,0.01,0.1,1 (the paper's Fig. 8).",
)
.sweeps();
pub const LONG: OptionSpec = OptionSpec::flag(
    "long",
    "vll-micro, vll-range: long transactions (fixed extra CPU work per record, ~3× a short one).",
);
pub const MULTI_PARTITION: OptionSpec = OptionSpec::new(
    "multi-partition",
    "PCT",
    ValueKind::Float {
        min: 0.0,
        max: 100.0,
    },
    "vll-micro, ycsb: percent of transactions that touch two partitions, e.g. 0,20,40,60,80,100 \
     (the VLL paper's Fig. 9; ycsb: with --partitions, 0 by default).",
)
.sweeps();
pub const PARTITIONS: OptionSpec = OptionSpec::new(
    "partitions",
    "N",
    ValueKind::Int {
        min: 1,
        max: u32::MAX as u64,
    },
    "vll-micro, ycsb: number of partitions (keys k with k % partitions = p belong to partition \
     p; worker t's transactions are homed at partition t % partitions). The partitioned \
     protocols split keys by the thread count: give ycsb as many partitions as threads.",
);
pub const RECORDS: OptionSpec = OptionSpec::new(
    "records",
    "N",
    ValueKind::Int {
        min: 1,
        max: u64::MAX,
    },
    "vll-micro, pwv-micro: number of records.",
);
pub const REMOTE_WAIT: OptionSpec = OptionSpec::new(
    "remote-wait",
    "MICROS",
    ValueKind::Float {
        min: 0.0,
        max: MAX_REMOTE_WAIT_US,
    },
    "vll-micro: simulated remote-read round trip, in microseconds: a multi-partition transaction \
     sleeps this long once, before its first access at the other partition (the paper's network \
     wait behind Fig. 9; 0 = none).",
);
pub const HOT_ACCESSES: OptionSpec = OptionSpec::new(
    "hot-accesses",
    "N",
    ValueKind::Int {
        min: 1,
        max: PER_TXN as u64,
    },
    "vll-micro: hot records each transaction updates, at each partition it touches (at most 5 \
     with --multi-partition; default 1, the paper's Fig. 8a/c; 2 or more let two transactions \
     meet on two hot records in opposite orders, so 2PL can deadlock: Fig. 8b/d).",
);

/// Every option of `-w vll-micro`.
pub const OPTIONS: &[&OptionSpec] = &[
    &CI,
    &LONG,
    &MULTI_PARTITION,
    &PARTITIONS,
    &RECORDS,
    &REMOTE_WAIT,
    &HOT_ACCESSES,
];

/// The configuration when no option is given: the paper's setup for benchmarks; a small,
/// contended table for verification.
pub fn defaults(purpose: Purpose) -> VllMicroConfig {
    match purpose {
        Purpose::Bench => VllMicroConfig::default(),
        Purpose::Verify => VllMicroConfig {
            records: 10_000,
            ci: 0.1,
            ..VllMicroConfig::default()
        },
    }
}

impl VllMicro {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`]. Every option must
    /// have one value (a sweep's point: see [`Settings::sweep`]).
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<VllMicro> {
        let d = defaults(purpose);
        VllMicro::new(VllMicroConfig {
            records: settings.int(&RECORDS)?.unwrap_or(d.records),
            ci: settings.float(&CI)?.unwrap_or(d.ci),
            long: settings.flag(&LONG) || d.long,
            partitions: settings.int_as(&PARTITIONS)?.unwrap_or(d.partitions),
            multi_partition_pct: settings
                .float(&MULTI_PARTITION)?
                .unwrap_or(d.multi_partition_pct),
            remote_wait_us: settings.float(&REMOTE_WAIT)?.unwrap_or(d.remote_wait_us),
            hot_accesses: settings.int_as(&HOT_ACCESSES)?.unwrap_or(d.hot_accesses),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::given;

    /// Each point of the sweep `options` describe, labelled, built for a benchmark; `Err` if a
    /// value is refused as it is read or the sweep is not one.
    fn points(
        options: &[(&OptionSpec, &str)],
    ) -> std::result::Result<Vec<(String, Result<VllMicro>)>, String> {
        let mut s = Settings::new();
        for (spec, text) in options {
            s.parse(spec, text).map_err(|e| e.0)?;
        }
        Ok(s.sweep()
            .map_err(|e| e.0)?
            .into_iter()
            .map(|(p, one)| {
                let label = p.map_or(String::new(), |p| p.to_string());
                (label, VllMicro::from_settings(&one, Purpose::Bench))
            })
            .collect())
    }

    /// Whether `options` are refused, when read, swept, or built.
    fn refused(options: &[(&OptionSpec, &str)]) -> bool {
        points(options).map_or(true, |p| p.iter().any(|(_, w)| w.is_err()))
    }

    #[test]
    fn ci_lists_make_sweeps_and_bad_values_are_usage_errors() {
        let s = points(&[(&CI, "0.0001, 0.01,1")]).unwrap();
        let labels: Vec<&str> = s.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["ci=0.0001", "ci=0.01", "ci=1"]);
        assert!(s.iter().all(|(_, w)| w.is_ok()));
        let list = given(&[(&CI, "0.0001,0.01,1")]);
        assert!(
            VllMicro::from_settings(&list, Purpose::Bench).is_err(),
            "a list is not one run"
        );
        for bad in ["0", "-0.1", "1.5", "x", "0.1,,0.2", "nan", "0.1,0.1"] {
            assert!(refused(&[(&CI, bad)]), "{bad}");
        }
    }

    #[test]
    fn hot_accesses_ride_along_a_ci_sweep_and_are_checked_at_each_point() {
        for (_, w) in points(&[(&CI, "0.001,0.5"), (&HOT_ACCESSES, "2")]).unwrap() {
            assert_eq!(w.unwrap().config().hot_accesses, 2);
        }
        // CI 1 is one hot record: two per transaction cannot be drawn.
        let e =
            VllMicro::from_settings(&given(&[(&CI, "1"), (&HOT_ACCESSES, "2")]), Purpose::Bench)
                .err()
                .unwrap()
                .to_string();
        assert!(
            e.contains("--hot-accesses 2 needs at least 2 hot records"),
            "{e}"
        );
        for bad in ["0", "11"] {
            assert!(refused(&[(&HOT_ACCESSES, bad)]), "{bad}");
        }
    }

    #[test]
    fn multi_partition_lists_make_fig9_sweeps() {
        let two = (&PARTITIONS, "2");
        let s = points(&[(&MULTI_PARTITION, "0,50,100"), two]).unwrap();
        let labels: Vec<&str> = s.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "multi-partition=0",
                "multi-partition=50",
                "multi-partition=100"
            ]
        );
        let pcts: Vec<f64> = s
            .iter()
            .map(|(_, w)| w.as_ref().unwrap().config().multi_partition_pct)
            .collect();
        assert_eq!(pcts, [0.0, 50.0, 100.0]);
        let list = given(&[(&MULTI_PARTITION, "0,50,100"), two]);
        assert!(
            VllMicro::from_settings(&list, Purpose::Bench).is_err(),
            "a list is not one run"
        );
        for bad in ["-1", "101", "x", "5,5"] {
            assert!(refused(&[(&MULTI_PARTITION, bad), two]), "{bad}");
        }
        // A simulated remote wait rides along every point of the sweep.
        let waiting = points(&[(&MULTI_PARTITION, "0,50,100"), two, (&REMOTE_WAIT, "250")]);
        assert!(waiting
            .unwrap()
            .iter()
            .all(|(_, w)| w.as_ref().unwrap().config().remote_wait_us == 250.0));
        let Err(e) = points(&[(&CI, "0.1,1"), (&MULTI_PARTITION, "0,50"), two]) else {
            panic!("two lists swept at once");
        };
        assert!(e.contains("one option at a time"), "{e}");
    }
}
