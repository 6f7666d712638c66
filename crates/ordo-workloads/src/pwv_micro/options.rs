//! `-w pwv-micro`'s options and their defaults for a benchmark or a verification run
//! ([`PwvMicro::from_settings`]).
//!
//! `--hot-position` sweeps (the paper's Fig. 1: a list in `ordo bench` repeats the run for each
//! value). `--records` is `-w vll-micro`'s option, shared: the same table of integer records.

use super::{PwvMicro, PwvMicroConfig, MAX_HOT_POSITION};
use crate::vll_micro::options::RECORDS;
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const HOT_POSITION: OptionSpec = OptionSpec::new(
    "hot-position",
    "N",
    ValueKind::Int {
        min: 0,
        max: MAX_HOT_POSITION as u64,
    },
    "pwv-micro: updates each transaction makes after its update of the hot record (the paper's \
     write visibility delay): 0 = hot record last, 9 = first (default), e.g. 0,1,2,3,4,5,6,7,8,9 \
     (the paper's Fig. 1).",
)
.sweeps();

/// Every option of `-w pwv-micro`.
pub const OPTIONS: &[&OptionSpec] = &[&HOT_POSITION, &RECORDS];

/// The configuration when no option is given: the paper's table with the hot record first for
/// benchmarks; for verification a small table, so that the cold records meet too.
pub fn defaults(purpose: Purpose) -> PwvMicroConfig {
    match purpose {
        Purpose::Bench => PwvMicroConfig::default(),
        Purpose::Verify => PwvMicroConfig {
            records: 1_000,
            ..PwvMicroConfig::default()
        },
    }
}

impl PwvMicro {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`]. Every option must
    /// have one value (a sweep's point: see [`Settings::sweep`]).
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<PwvMicro> {
        let d = defaults(purpose);
        PwvMicro::new(PwvMicroConfig {
            records: settings.int(&RECORDS)?.unwrap_or(d.records),
            hot_position: settings.int_as(&HOT_POSITION)?.unwrap_or(d.hot_position),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::given;

    #[test]
    fn a_hot_position_list_is_a_sweep_of_fig_1() {
        let s = given(&[(&HOT_POSITION, "0,4,9"), (&RECORDS, "100")]);
        let points = s.sweep().unwrap();
        let labels: Vec<String> = points
            .iter()
            .map(|(p, _)| p.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(
            labels,
            ["hot-position=0", "hot-position=4", "hot-position=9"]
        );
        for ((_, one), n) in points.iter().zip([0, 4, 9]) {
            let w = PwvMicro::from_settings(one, Purpose::Bench).unwrap();
            assert_eq!(w.config().hot_position, n);
            assert_eq!(w.config().records, 100, "other options are kept");
        }
        assert!(
            PwvMicro::from_settings(&s, Purpose::Bench).is_err(),
            "a list is not one run"
        );
    }

    #[test]
    fn out_of_range_values_are_refused() {
        for bad in ["10", "-1", "x", "1.5", "3,3"] {
            assert!(HOT_POSITION.parse(bad).is_err(), "{bad}");
        }
        assert!(RECORDS.parse("0").is_err());
        let e = PwvMicro::from_settings(&given(&[(&RECORDS, "9")]), Purpose::Verify)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("--records (9) too small"), "{e}");
        assert!(PwvMicro::from_settings(&given(&[(&RECORDS, "19")]), Purpose::Verify).is_err());
        assert!(PwvMicro::from_settings(&given(&[(&RECORDS, "20")]), Purpose::Verify).is_ok());
    }

    #[test]
    fn defaults_are_the_papers_and_small_for_verification() {
        let bench = PwvMicro::from_settings(&Settings::new(), Purpose::Bench).unwrap();
        assert_eq!(bench.config().records, 1_000_000);
        assert_eq!(bench.config().hot_position, MAX_HOT_POSITION);
        let verify = PwvMicro::from_settings(&Settings::new(), Purpose::Verify).unwrap();
        assert_eq!(verify.config().records, 1_000);
    }
}
