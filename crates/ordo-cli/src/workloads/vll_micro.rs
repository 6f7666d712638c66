//! `-w vll-micro`: the VLL paper's micro-benchmark (1 hot + 9 cold records per transaction).

use super::Purpose;
use crate::opts::parse_list;
use crate::UsageError;
use clap::Args;
use ordo_workloads::vll_micro::{VllMicro, VllMicroConfig};

/// VLL micro-benchmark options.
#[derive(Args, Debug, Clone, Default)]
pub struct VllMicroArgs {
    /// vll-micro: contention index(es) in (0, 1] = 1 / hot records per partition; a comma-separated
    /// list (0.0001,0.001,0.01,0.1,1) describes a sweep.
    #[arg(long, allow_negative_numbers = true)]
    pub ci: Option<String>,
    /// vll-micro, vll-range: long transactions (fixed extra CPU work per record, ~3× a short one).
    #[arg(long)]
    pub long: bool,
    /// vll-micro: percent of transactions that touch two partitions; a comma-separated list
    /// (0,20,40,60,80,100) describes a sweep (the paper's Fig. 9).
    #[arg(long = "multi-partition", allow_negative_numbers = true)]
    pub multi_partition: Option<String>,
    /// vll-micro: number of partitions (keys k with k % partitions = p belong to partition p).
    #[arg(long)]
    pub partitions: Option<u32>,
    /// vll-micro: number of records.
    #[arg(long)]
    pub records: Option<u64>,
    /// vll-micro: simulated remote-read round trip, in microseconds: a multi-partition transaction
    /// sleeps this long once, before its first access at the other partition (the paper's network
    /// wait behind Fig. 9; 0 = none).
    #[arg(
        long = "remote-wait",
        allow_negative_numbers = true,
        value_name = "MICROS"
    )]
    pub remote_wait: Option<f64>,
    /// vll-micro: hot records each transaction updates, at each partition it touches (1 to 10, or
    /// 5 with --multi-partition; default 1, the paper's Fig. 8a/c; 2 or more let two transactions
    /// meet on two hot records in opposite orders, so 2PL can deadlock: Fig. 8b/d).
    #[arg(long = "hot-accesses", value_name = "N")]
    pub hot_accesses: Option<u32>,
}

/// Defaults: the paper's setup for benchmarks; a small, contended table for verification.
fn defaults(purpose: Purpose) -> VllMicroConfig {
    match purpose {
        Purpose::Bench => VllMicroConfig::default(),
        Purpose::Verify => VllMicroConfig {
            records: 10_000,
            ci: 0.1,
            ..VllMicroConfig::default()
        },
    }
}

/// `--ci`: numbers in (0, 1].
fn parse_ci(s: &str) -> Result<Vec<f64>, UsageError> {
    parse_list(
        "ci",
        s,
        |x| x > 0.0 && x <= 1.0,
        "numbers in (0, 1] (1 / hot records)",
    )
}

/// `--multi-partition`: percentages in [0, 100].
fn parse_multi_partition(s: &str) -> Result<Vec<f64>, UsageError> {
    parse_list(
        "multi-partition",
        s,
        |x| (0.0..=100.0).contains(&x),
        "percentages in [0, 100]",
    )
}

/// The one value of a list option, or an error naming the sweep it describes.
fn one(flag: &str, values: Vec<f64>) -> Result<f64, UsageError> {
    match values[..] {
        [one] => Ok(one),
        ref many => Err(UsageError(format!(
            "--{flag} lists {} values: a run takes one (the list describes a sweep)",
            many.len()
        ))),
    }
}

impl VllMicroArgs {
    /// The first of these options given, if any (options of another workload are refused).
    pub fn given(&self) -> Option<&'static str> {
        self.long
            .then_some("--long")
            .or_else(|| self.given_beyond_long())
    }

    /// As [`Self::given`], leaving out `--long` (which `-w vll-range` shares).
    pub fn given_beyond_long(&self) -> Option<&'static str> {
        [
            (self.ci.is_some(), "--ci"),
            (self.multi_partition.is_some(), "--multi-partition"),
            (self.partitions.is_some(), "--partitions"),
            (self.records.is_some(), "--records"),
            (self.remote_wait.is_some(), "--remote-wait"),
            (self.hot_accesses.is_some(), "--hot-accesses"),
        ]
        .into_iter()
        .find_map(|(set, name)| set.then_some(name))
    }

    /// One run per value of the option given as a list: `--ci` (Fig. 8, labelled `ci=<value>`)
    /// or `--multi-partition` (Fig. 9, `multi-partition=<value>`); one run without a list.
    pub fn sweep(&self) -> Result<Vec<(String, VllMicroArgs)>, UsageError> {
        let ci = match &self.ci {
            Some(s) => parse_ci(s)?,
            None => Vec::new(),
        };
        let mp = match &self.multi_partition {
            Some(s) => parse_multi_partition(s)?,
            None => Vec::new(),
        };
        let point = |flag: &str, v: &f64| {
            let mut one = self.clone();
            match flag {
                "ci" => one.ci = Some(v.to_string()),
                _ => one.multi_partition = Some(v.to_string()),
            }
            (format!("{flag}={v}"), one)
        };
        match (ci.len() > 1, mp.len() > 1) {
            (true, true) => Err(UsageError(
                "--ci and --multi-partition are both lists: sweep one option at a time".into(),
            )),
            (true, false) => Ok(ci.iter().map(|v| point("ci", v)).collect()),
            (false, true) => Ok(mp.iter().map(|v| point("multi-partition", v)).collect()),
            (false, false) => Ok(vec![(String::new(), self.clone())]),
        }
    }

    pub fn build(&self, purpose: Purpose) -> Result<VllMicro, UsageError> {
        let d = defaults(purpose);
        let ci = match &self.ci {
            None => d.ci,
            Some(s) => one("ci", parse_ci(s)?)?,
        };
        let multi_partition_pct = match &self.multi_partition {
            None => d.multi_partition_pct,
            Some(s) => one("multi-partition", parse_multi_partition(s)?)?,
        };
        let cfg = VllMicroConfig {
            records: self.records.unwrap_or(d.records),
            ci,
            long: self.long || d.long,
            partitions: self.partitions.unwrap_or(d.partitions),
            multi_partition_pct,
            remote_wait_us: self.remote_wait.unwrap_or(d.remote_wait_us),
            hot_accesses: self.hot_accesses.unwrap_or(d.hot_accesses),
        };
        VllMicro::new(cfg).map_err(|e| UsageError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_lists_make_sweeps_and_bad_values_are_usage_errors() {
        let a = VllMicroArgs {
            ci: Some("0.0001, 0.01,1".into()),
            ..Default::default()
        };
        let s = a.sweep().unwrap();
        let labels: Vec<&str> = s.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["ci=0.0001", "ci=0.01", "ci=1"]);
        assert!(s.iter().all(|(_, a)| a.build(Purpose::Bench).is_ok()));
        assert!(a.build(Purpose::Bench).is_err(), "a list is not one run");
        for bad in ["0", "-0.1", "1.5", "x", "0.1,,0.2", "nan"] {
            let a = VllMicroArgs {
                ci: Some(bad.into()),
                ..Default::default()
            };
            assert!(a.build(Purpose::Bench).is_err(), "{bad}");
        }
        let twice = VllMicroArgs {
            ci: Some("0.1,0.1".into()),
            ..Default::default()
        };
        assert!(twice.sweep().is_err());
    }

    #[test]
    fn hot_accesses_ride_along_a_ci_sweep_and_are_checked_at_each_point() {
        let a = VllMicroArgs {
            ci: Some("0.001,0.5".into()),
            hot_accesses: Some(2),
            ..Default::default()
        };
        for (_, point) in a.sweep().unwrap() {
            assert_eq!(
                point.build(Purpose::Bench).unwrap().config().hot_accesses,
                2
            );
        }
        // CI 1 is one hot record: two per transaction cannot be drawn.
        let e = VllMicroArgs {
            ci: Some("1".into()),
            hot_accesses: Some(2),
            ..Default::default()
        }
        .build(Purpose::Bench)
        .err()
        .unwrap()
        .0;
        assert!(
            e.contains("--hot-accesses 2 needs at least 2 hot records"),
            "{e}"
        );
        for bad in [0, 11] {
            let a = VllMicroArgs {
                hot_accesses: Some(bad),
                ..Default::default()
            };
            assert!(a.build(Purpose::Bench).is_err(), "{bad}");
        }
    }

    #[test]
    fn multi_partition_lists_make_fig9_sweeps() {
        let a = VllMicroArgs {
            multi_partition: Some("0,50,100".into()),
            partitions: Some(2),
            ..Default::default()
        };
        let s = a.sweep().unwrap();
        let labels: Vec<&str> = s.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "multi-partition=0",
                "multi-partition=50",
                "multi-partition=100"
            ]
        );
        let cfgs: Vec<f64> = s
            .iter()
            .map(|(_, a)| {
                a.build(Purpose::Bench)
                    .unwrap()
                    .config()
                    .multi_partition_pct
            })
            .collect();
        assert_eq!(cfgs, [0.0, 50.0, 100.0]);
        assert!(a.build(Purpose::Bench).is_err(), "a list is not one run");
        for bad in ["-1", "101", "x", "5,5"] {
            let a = VllMicroArgs {
                multi_partition: Some(bad.into()),
                partitions: Some(2),
                ..Default::default()
            };
            assert!(
                a.sweep().is_err() || a.build(Purpose::Bench).is_err(),
                "{bad}"
            );
        }
        // A simulated remote wait rides along every point of the sweep.
        let waiting = VllMicroArgs {
            remote_wait: Some(250.0),
            ..a.clone()
        };
        assert!(waiting.sweep().unwrap().iter().all(|(_, a)| a
            .build(Purpose::Bench)
            .unwrap()
            .config()
            .remote_wait_us
            == 250.0));
        let both = VllMicroArgs {
            ci: Some("0.1,1".into()),
            multi_partition: Some("0,50".into()),
            partitions: Some(2),
            ..Default::default()
        };
        let e = both.sweep().unwrap_err().0;
        assert!(e.contains("one option at a time"), "{e}");
    }
}
