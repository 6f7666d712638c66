//! `-w vll-micro`: the VLL paper's micro-benchmark (1 hot + 9 cold records per transaction).

use super::Purpose;
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
    /// vll-micro: long transactions (fixed extra CPU work per record, ~3× a short one).
    #[arg(long)]
    pub long: bool,
    /// vll-micro: percent of transactions that touch two partitions.
    #[arg(long = "multi-partition", allow_negative_numbers = true)]
    pub multi_partition: Option<f64>,
    /// vll-micro: number of partitions (keys k with k % partitions = p belong to partition p).
    #[arg(long)]
    pub partitions: Option<u32>,
    /// vll-micro: number of records.
    #[arg(long)]
    pub records: Option<u64>,
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

/// Parses `--ci`: one or more numbers in (0, 1], comma-separated.
fn parse_ci(s: &str) -> Result<Vec<f64>, UsageError> {
    s.split(',')
        .map(|v| {
            let v = v.trim();
            match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 1.0 => Ok(x),
                _ => Err(UsageError(format!(
                    "--ci takes numbers in (0, 1] (1 / hot records), got `{v}`"
                ))),
            }
        })
        .collect()
}

impl VllMicroArgs {
    /// One run per contention index of `--ci`, labelled `ci=<value>` (a single value gives one).
    // Used by the bench sweep wiring (to be connected in `bench`); tested below.
    #[allow(dead_code)]
    pub fn sweep(&self) -> Vec<(String, VllMicroArgs)> {
        let Some(list) = &self.ci else {
            return vec![(String::new(), self.clone())];
        };
        list.split(',')
            .map(|v| {
                let v = v.trim().to_string();
                (
                    format!("ci={v}"),
                    VllMicroArgs {
                        ci: Some(v),
                        ..self.clone()
                    },
                )
            })
            .collect()
    }

    pub fn build(&self, purpose: Purpose) -> Result<VllMicro, UsageError> {
        let d = defaults(purpose);
        let ci = match &self.ci {
            None => d.ci,
            Some(s) => match parse_ci(s)?[..] {
                [one] => one,
                ref many => {
                    return Err(UsageError(format!(
                        "--ci lists {} values: a run takes one (the list describes a sweep)",
                        many.len()
                    )))
                }
            },
        };
        let cfg = VllMicroConfig {
            records: self.records.unwrap_or(d.records),
            ci,
            long: self.long || d.long,
            partitions: self.partitions.unwrap_or(d.partitions),
            multi_partition_pct: self.multi_partition.unwrap_or(d.multi_partition_pct),
        };
        VllMicro::new(cfg).map_err(UsageError)
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
        let s = a.sweep();
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
    }
}
