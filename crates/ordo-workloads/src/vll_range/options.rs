//! `-w vll-range`'s options and their defaults for a benchmark or a verification run
//! ([`VllRange::from_settings`]).
//!
//! `--shared-prefix` sweeps (the paper's Fig. 15: a list in `ordo bench` repeats the run for each
//! value). `--long` is `-w vll-micro`'s option, shared: the same extra work per record.

use super::{VllRange, VllRangeConfig, MAX_KEY_BITS};
use crate::vll_micro::options::LONG;
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const SHARED_PREFIX: OptionSpec = OptionSpec::new(
    "shared-prefix",
    "BITS",
    ValueKind::Int {
        min: 0,
        max: MAX_KEY_BITS as u64,
    },
    "vll-range: bits the two ends of each range share (0 to --key-bits; ranges average half of \
     2^(key-bits − shared-prefix) records), e.g. 16,15,14,13,12,11,10,9,8,7 (the paper's Fig. 15).",
)
.sweeps();
pub const KEY_BITS: OptionSpec = OptionSpec::new(
    "key-bits",
    "BITS",
    ValueKind::Int {
        min: 1,
        max: MAX_KEY_BITS as u64,
    },
    "vll-range: key width in bits (2^key-bits records; default 16, the paper's).",
);

/// Every option of `-w vll-range`.
pub const OPTIONS: &[&OptionSpec] = &[&SHARED_PREFIX, &KEY_BITS, &LONG];

/// The configuration when no option is given: the paper's for benchmarks; small and contended
/// for verification (1,024 records, ranges of up to 64).
pub fn defaults(purpose: Purpose) -> VllRangeConfig {
    match purpose {
        Purpose::Bench => VllRangeConfig::default(),
        Purpose::Verify => VllRangeConfig {
            key_bits: 10,
            shared_prefix: 4,
            long: false,
        },
    }
}

impl VllRange {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`]. Every option must
    /// have one value (a sweep's point: see [`Settings::sweep`]).
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<VllRange> {
        let d = defaults(purpose);
        VllRange::new(VllRangeConfig {
            key_bits: settings.int_as(&KEY_BITS)?.unwrap_or(d.key_bits),
            shared_prefix: settings.int_as(&SHARED_PREFIX)?.unwrap_or(d.shared_prefix),
            long: settings.flag(&LONG) || d.long,
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
    ) -> std::result::Result<Vec<(String, Result<VllRange>)>, String> {
        let mut s = Settings::new();
        for (spec, text) in options {
            s.parse(spec, text).map_err(|e| e.0)?;
        }
        Ok(s.sweep()
            .map_err(|e| e.0)?
            .into_iter()
            .map(|(p, one)| {
                let label = p.map_or(String::new(), |p| p.to_string());
                (label, VllRange::from_settings(&one, Purpose::Bench))
            })
            .collect())
    }

    #[test]
    fn shared_prefix_lists_make_fig15_sweeps_and_bad_values_are_usage_errors() {
        let s = points(&[(&SHARED_PREFIX, "16, 11,7")]).unwrap();
        let labels: Vec<&str> = s.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            ["shared-prefix=16", "shared-prefix=11", "shared-prefix=7"]
        );
        let bits: Vec<u8> = s
            .iter()
            .map(|(_, w)| w.as_ref().unwrap().config().shared_prefix)
            .collect();
        assert_eq!(bits, [16, 11, 7]);
        let list = given(&[(&SHARED_PREFIX, "16,11,7")]);
        let e = VllRange::from_settings(&list, Purpose::Bench)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("describes a sweep"), "{e}");
        for bad in ["17", "-1", "x", "7,,8", "8,8", "300"] {
            let refused = points(&[(&SHARED_PREFIX, bad)])
                .map_or(true, |p| p.iter().any(|(_, w)| w.is_err()));
            assert!(refused, "{bad}");
        }
        // The key width rides along each point, and bounds it.
        let built = points(&[(&SHARED_PREFIX, "8,12"), (&KEY_BITS, "10")]).unwrap();
        assert_eq!(built[0].1.as_ref().unwrap().config().key_bits, 10);
        let e = built[1].1.as_ref().err().unwrap().to_string();
        assert!(e.contains("--shared-prefix must be in [0, 10]"), "{e}");
        for bad in ["0", "25"] {
            assert!(KEY_BITS.parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn long_is_vll_micro_s_option_shared() {
        let w = VllRange::from_settings(&given(&[(&LONG, "")]), Purpose::Verify).unwrap();
        assert!(w.config().long);
        assert_eq!(w.config().key_bits, 10);
    }
}
