//! `-w vll-range`: the VLL paper's range micro-benchmark (one range per transaction; Fig. 15).

use super::Purpose;
use crate::UsageError;
use clap::Args;
use ordo_workloads::vll_range::{VllRange, VllRangeConfig};

/// Range micro-benchmark options.
#[derive(Args, Debug, Clone, Default)]
pub struct VllRangeArgs {
    /// vll-range: bits the two ends of each range share (0 to --key-bits; ranges average half of
    /// 2^(key-bits − shared-prefix) records); a comma-separated list (16,15,14,13,12,11,10,9,8,7)
    /// describes a sweep (the paper's Fig. 15).
    #[arg(long = "shared-prefix", value_name = "BITS")]
    pub shared_prefix: Option<String>,
    /// vll-range: key width in bits (2^key-bits records; default 16, the paper's).
    #[arg(long = "key-bits", value_name = "BITS")]
    pub key_bits: Option<u8>,
}

/// `--shared-prefix`: whole numbers of bits, each listed once (checked against the key width when
/// the workload is built).
fn parse_shared_prefix(s: &str) -> Result<Vec<u8>, UsageError> {
    let values = s
        .split(',')
        .map(|v| {
            let v = v.trim();
            v.parse::<u8>().map_err(|_| {
                UsageError(format!(
                    "--shared-prefix takes whole numbers of bits, got `{v}`"
                ))
            })
        })
        .collect::<Result<Vec<u8>, _>>()?;
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(UsageError(format!("--shared-prefix lists {v} twice")));
        }
    }
    Ok(values)
}

impl VllRangeArgs {
    /// The first of these options given, if any (options of another workload are refused).
    pub fn given(&self) -> Option<&'static str> {
        [
            (self.shared_prefix.is_some(), "--shared-prefix"),
            (self.key_bits.is_some(), "--key-bits"),
        ]
        .into_iter()
        .find_map(|(set, name)| set.then_some(name))
    }

    /// One run per value of `--shared-prefix` given as a list (labelled `shared-prefix=<bits>`);
    /// one run otherwise.
    pub fn sweep(&self) -> Result<Vec<(String, VllRangeArgs)>, UsageError> {
        let values = match &self.shared_prefix {
            Some(s) => parse_shared_prefix(s)?,
            None => Vec::new(),
        };
        if values.len() <= 1 {
            return Ok(vec![(String::new(), self.clone())]);
        }
        Ok(values
            .into_iter()
            .map(|v| {
                let mut one = self.clone();
                one.shared_prefix = Some(v.to_string());
                (format!("shared-prefix={v}"), one)
            })
            .collect())
    }

    /// The workload; `long` is vll-micro's `--long`, which `-w vll-range` shares (the same extra
    /// CPU work per record).
    pub fn build(&self, purpose: Purpose, long: bool) -> Result<VllRange, UsageError> {
        let d = match purpose {
            Purpose::Bench => VllRangeConfig::default(),
            // Small and contended: 1,024 records, ranges of up to 64.
            Purpose::Verify => VllRangeConfig {
                key_bits: 10,
                shared_prefix: 4,
                long: false,
            },
        };
        let shared_prefix = match &self.shared_prefix {
            None => d.shared_prefix,
            Some(s) => match parse_shared_prefix(s)?[..] {
                [one] => one,
                ref many => {
                    return Err(UsageError(format!(
                    "--shared-prefix lists {} values: a run takes one (the list describes a sweep)",
                    many.len()
                )))
                }
            },
        };
        let cfg = VllRangeConfig {
            key_bits: self.key_bits.unwrap_or(d.key_bits),
            shared_prefix,
            long: long || d.long,
        };
        VllRange::new(cfg).map_err(|e| UsageError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_prefix_lists_make_fig15_sweeps_and_bad_values_are_usage_errors() {
        let a = VllRangeArgs {
            shared_prefix: Some("16, 11,7".into()),
            ..Default::default()
        };
        let s = a.sweep().unwrap();
        let labels: Vec<&str> = s.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            ["shared-prefix=16", "shared-prefix=11", "shared-prefix=7"]
        );
        let bits: Vec<u8> = s
            .iter()
            .map(|(_, a)| {
                a.build(Purpose::Bench, false)
                    .unwrap()
                    .config()
                    .shared_prefix
            })
            .collect();
        assert_eq!(bits, [16, 11, 7]);
        let e = a.build(Purpose::Bench, false).err().unwrap().0;
        assert!(e.contains("describes a sweep"), "{e}");
        for bad in ["17", "-1", "x", "7,,8", "8,8", "300"] {
            let a = VllRangeArgs {
                shared_prefix: Some(bad.into()),
                ..Default::default()
            };
            assert!(
                a.sweep().is_err() || a.build(Purpose::Bench, false).is_err(),
                "{bad}"
            );
        }
        // The key width rides along each point, and bounds it.
        let narrow = VllRangeArgs {
            shared_prefix: Some("8,12".into()),
            key_bits: Some(10),
        };
        let built: Vec<_> = narrow
            .sweep()
            .unwrap()
            .into_iter()
            .map(|(_, a)| a.build(Purpose::Bench, false))
            .collect();
        assert_eq!(built[0].as_ref().unwrap().config().key_bits, 10);
        let e = built[1].as_ref().err().unwrap().0.clone();
        assert!(e.contains("--shared-prefix must be in [0, 10]"), "{e}");
        for bad in [0u8, 25] {
            let a = VllRangeArgs {
                key_bits: Some(bad),
                ..Default::default()
            };
            assert!(a.build(Purpose::Bench, false).is_err(), "{bad}");
        }
    }
}
