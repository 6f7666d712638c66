//! `-w salt-micro`'s options and their defaults for a benchmark or a verification run
//! ([`SaltMicro::from_settings`]). `--ops-after` and `--read-only-pct` sweep (Figs. 3.11, 3.12),
//! and so does `--contended-rows` (Fig. 3.10).

use super::{SaltMicro, SaltMicroConfig, Variant};
use crate::{Error, Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const VARIANT: OptionSpec = OptionSpec::new(
    "variant",
    "V",
    ValueKind::Choice(&[
        "ratio",
        "position",
        "rw",
        "nexus",
        "frequency",
        "contention",
        "rollback",
    ]),
    "salt-micro: which of Salt's microbenchmarks (Xie 2016, §3.6.3): ratio (5 updates among \
     --contended-rows rows, Fig. 3.10), position (10 updates, one on a shared row with \
     --ops-after updates after it, Fig. 3.11; the default), rw (5 reads or 5 updates of 100 rows, \
     --read-only-pct read-only, Fig. 3.12). callas-micro: which of Callas's (§4.6.4-4.6.6): nexus \
     (nexus-lock overhead, --contention none|high, Fig. 4.11), frequency (T1 and T2 meet on 10 \
     shared rows, --t1-share of them T1, Fig. 4.12; the default), contention (1 of --shared-rows \
     shared rows, 1 of 10 rows of the type's own table, Fig. 4.13), rollback (check-and-update \
     a[i], b[i], c[i], c's check failing --rollback-pct of the time, Fig. 4.14).",
);

pub const ROWS: OptionSpec = OptionSpec::new(
    "contended-rows",
    "N",
    ValueKind::Int {
        min: 1,
        max: u64::MAX,
    },
    "salt-micro: rows in the table (ratio: the rows the 5 updates contend over, default 100; rw: \
     default 100; position: all rows, the 10 shared ones among them, default 100000).",
)
.sweeps();

pub const OPS_AFTER: OptionSpec = OptionSpec::new(
    "ops-after",
    "K",
    ValueKind::Int { min: 0, max: 9 },
    "salt-micro --variant position: updates after the contended one (0 to 9, default 9).",
)
.sweeps();

pub const READ_ONLY_PCT: OptionSpec = OptionSpec::new(
    "read-only-pct",
    "PCT",
    ValueKind::Float {
        min: 0.0,
        max: 100.0,
    },
    "salt-micro --variant rw: percent of read-only transactions (default 50).",
)
.sweeps();

/// Every option of `-w salt-micro`.
pub const OPTIONS: &[&OptionSpec] = &[&VARIANT, &ROWS, &OPS_AFTER, &READ_ONLY_PCT];

/// The configuration of `variant` when no other option is given (verification runs get smaller
/// tables, so that transactions meet).
pub fn defaults(variant: Variant, purpose: Purpose) -> SaltMicroConfig {
    let rows = match (variant, purpose) {
        (Variant::Position, Purpose::Bench) => 100_000,
        (Variant::Position, Purpose::Verify) => 1_000,
        (_, Purpose::Bench) => 100,
        (_, Purpose::Verify) => 20,
    };
    SaltMicroConfig {
        variant,
        rows,
        ..SaltMicroConfig::default()
    }
}

impl SaltMicro {
    /// The workload `settings` describe, the others at their defaults.
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<SaltMicro> {
        let variant = match settings.text(&VARIANT)? {
            None => Variant::Position,
            Some(v) => Variant::parse(&v).ok_or_else(|| {
                Error::invalid(
                    "variant",
                    format!("of -w salt-micro takes ratio, position or rw, not `{v}`"),
                )
            })?,
        };
        let d = defaults(variant, purpose);
        SaltMicro::new(SaltMicroConfig {
            variant,
            rows: settings.int(&ROWS)?.unwrap_or(d.rows),
            ops_after: settings.int_as(&OPS_AFTER)?.unwrap_or(d.ops_after),
            read_only_pct: settings.float(&READ_ONLY_PCT)?.unwrap_or(d.read_only_pct),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::given;

    #[test]
    fn variants_are_parsed_and_an_unknown_one_refused() {
        let w = SaltMicro::from_settings(&given(&[(&VARIANT, "ratio")]), Purpose::Bench).unwrap();
        assert_eq!((w.config().variant, w.config().rows), (Variant::Ratio, 100));
        let w = SaltMicro::from_settings(&Settings::new(), Purpose::Bench).unwrap();
        assert_eq!(w.config().variant, Variant::Position);
        let e = VARIANT.parse("zipf").unwrap_err().to_string();
        assert!(e.contains("takes one of ratio, position, rw"), "{e}");
    }

    #[test]
    fn ops_after_sweeps() {
        let s = given(&[(&OPS_AFTER, "0,5,9")]);
        assert_eq!(s.sweep().unwrap().len(), 3);
    }
}
