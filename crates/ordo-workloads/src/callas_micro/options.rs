//! `-w callas-micro`'s options and their defaults for a benchmark or a verification run
//! ([`CallasMicro::from_settings`]). `--variant` is salt-micro's declaration (one option, both
//! workloads' names); `--t1-share` (Fig. 4.12), `--shared-rows` (Fig. 4.13) and `--rollback-pct`
//! (Fig. 4.14) sweep. An option of another variant than the one chosen is refused.

use super::{CallasMicro, CallasMicroConfig, Contention, Variant, MAX_SHARED_ROWS};
use crate::salt_micro::options::VARIANT;
use crate::{Error, Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const CONTENTION: OptionSpec = OptionSpec::new(
    "contention",
    "C",
    ValueKind::Choice(&["none", "high"]),
    "callas-micro --variant nexus: none (each transaction updates 5 rows of its worker's own; the \
     default) or high (every transaction updates the same 2 rows), Fig. 4.11.",
);

pub const T1_SHARE: OptionSpec = OptionSpec::new(
    "t1-share",
    "PCT",
    ValueKind::Float {
        min: 0.0,
        max: 100.0,
    },
    "callas-micro --variant frequency: percent of transactions that are T1 (default 50; a T1:T2 \
     ratio of R:1 is 100R/(R+1): 10:1 is 90.91, 100:1 is 99.01), Fig. 4.12.",
)
.sweeps();

pub const SHARED_ROWS: OptionSpec = OptionSpec::new(
    "shared-rows",
    "N",
    ValueKind::Int {
        min: 1,
        max: MAX_SHARED_ROWS,
    },
    "callas-micro --variant contention: rows the first update is drawn from, shared by T1 and T2 \
     (contention across the groups 1/N; default 10), Fig. 4.13.",
)
.sweeps();

pub const ROLLBACK_PCT: OptionSpec = OptionSpec::new(
    "rollback-pct",
    "PCT",
    ValueKind::Float {
        min: 0.0,
        max: 100.0,
    },
    "callas-micro --variant rollback: percent of transactions whose check of c[i] fails, rolling \
     them back by their own logic (default 0), Fig. 4.14.",
)
.sweeps();

/// Every option of `-w callas-micro`.
pub const OPTIONS: &[&OptionSpec] = &[
    &VARIANT,
    &CONTENTION,
    &T1_SHARE,
    &SHARED_ROWS,
    &ROLLBACK_PCT,
];

/// The configuration of `variant` when no other option is given. Verification runs get small
/// slices of private rows (10 transactions' worth per worker): they are never contended anyway,
/// and the check reads them all.
pub fn defaults(variant: Variant, purpose: Purpose) -> CallasMicroConfig {
    CallasMicroConfig {
        variant,
        private_rows: match purpose {
            Purpose::Bench => 4_000,
            Purpose::Verify => 50,
        },
        ..CallasMicroConfig::default()
    }
}

impl CallasMicro {
    /// The workload `settings` describe, the others at their defaults.
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<CallasMicro> {
        let variant = match settings.text(&VARIANT)? {
            None => Variant::Frequency,
            Some(v) => Variant::parse(&v).ok_or_else(|| {
                Error::invalid(
                    "variant",
                    format!(
                        "of -w callas-micro takes nexus, frequency, contention or rollback, not \
                         `{v}`"
                    ),
                )
            })?,
        };
        for (spec, reader) in [
            (&CONTENTION, Variant::Nexus),
            (&T1_SHARE, Variant::Frequency),
            (&SHARED_ROWS, Variant::Contention),
            (&ROLLBACK_PCT, Variant::Rollback),
        ] {
            if settings.has(spec.name) && variant != reader {
                return Err(Error::invalid(
                    spec.name,
                    format!(
                        "is an option of --variant {}, not of --variant {}",
                        reader.name(),
                        variant.name()
                    ),
                ));
            }
        }
        let d = defaults(variant, purpose);
        let contention = match settings.text(&CONTENTION)? {
            None => d.contention,
            Some(c) => Contention::parse(&c).ok_or_else(|| {
                Error::invalid("contention", format!("takes none or high, not `{c}`"))
            })?,
        };
        CallasMicro::new(CallasMicroConfig {
            variant,
            contention,
            t1_share: settings.float(&T1_SHARE)?.unwrap_or(d.t1_share),
            shared_rows: settings.int(&SHARED_ROWS)?.unwrap_or(d.shared_rows),
            rollback_pct: settings.float(&ROLLBACK_PCT)?.unwrap_or(d.rollback_pct),
            private_rows: d.private_rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::given;

    #[test]
    fn variants_and_their_options_are_parsed() {
        let w = CallasMicro::from_settings(&Settings::new(), Purpose::Bench).unwrap();
        assert_eq!(*w.config(), defaults(Variant::Frequency, Purpose::Bench));
        let w = CallasMicro::from_settings(
            &given(&[(&VARIANT, "nexus"), (&CONTENTION, "high")]),
            Purpose::Verify,
        )
        .unwrap();
        assert_eq!(
            (w.config().variant, w.config().contention),
            (Variant::Nexus, Contention::High)
        );
        let w = CallasMicro::from_settings(
            &given(&[(&VARIANT, "contention"), (&SHARED_ROWS, "10000")]),
            Purpose::Bench,
        )
        .unwrap();
        assert_eq!(w.config().shared_rows, 10_000);
        let w = CallasMicro::from_settings(
            &given(&[(&VARIANT, "rollback"), (&ROLLBACK_PCT, "7.5")]),
            Purpose::Bench,
        )
        .unwrap();
        assert_eq!(w.config().rollback_pct, 7.5);
        let w =
            CallasMicro::from_settings(&given(&[(&T1_SHARE, "99.01")]), Purpose::Bench).unwrap();
        assert_eq!(w.config().t1_share, 99.01);
    }

    #[test]
    fn a_salt_variant_or_another_variants_option_is_refused() {
        let e = CallasMicro::from_settings(&given(&[(&VARIANT, "ratio")]), Purpose::Bench)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            "--variant of -w callas-micro takes nexus, frequency, contention or rollback, not \
             `ratio`"
        );
        let e = CallasMicro::from_settings(
            &given(&[(&VARIANT, "contention"), (&CONTENTION, "high")]),
            Purpose::Bench,
        )
        .err()
        .unwrap()
        .to_string();
        assert_eq!(
            e,
            "--contention is an option of --variant nexus, not of --variant contention"
        );
        let e = CallasMicro::from_settings(&given(&[(&ROLLBACK_PCT, "5")]), Purpose::Bench)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            "--rollback-pct is an option of --variant rollback, not of --variant frequency"
        );
        // Out of range: refused by the declaration, with its one-line error.
        for (spec, text) in [
            (&SHARED_ROWS, "0"),
            (&T1_SHARE, "101"),
            (&ROLLBACK_PCT, "-1"),
            (&CONTENTION, "low"),
        ] {
            let e = spec.parse(text).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--{} takes", spec.name)), "{e}");
        }
        // And by the workload itself, for a configuration built in code.
        for cfg in [
            CallasMicroConfig {
                t1_share: 150.0,
                ..CallasMicroConfig::default()
            },
            CallasMicroConfig {
                rollback_pct: f64::NAN,
                ..CallasMicroConfig::default()
            },
            CallasMicroConfig {
                shared_rows: 0,
                ..CallasMicroConfig::default()
            },
            CallasMicroConfig {
                private_rows: 12,
                ..CallasMicroConfig::default()
            },
        ] {
            assert!(CallasMicro::new(cfg).is_err());
        }
    }

    #[test]
    fn the_swept_options_sweep() {
        for (spec, list) in [
            (&T1_SHARE, "50,90.91,99.01"),
            (&SHARED_ROWS, "1,10,100"),
            (&ROLLBACK_PCT, "0,5,10"),
        ] {
            assert_eq!(given(&[(spec, list)]).sweep().unwrap().len(), 3);
        }
    }
}
