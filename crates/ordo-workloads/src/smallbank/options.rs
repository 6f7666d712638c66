//! `-w smallbank`'s options and their defaults for a benchmark or a verification run
//! ([`SmallBank::from_settings`]).

use super::{SmallBank, SmallBankConfig};
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const CUSTOMERS: OptionSpec = OptionSpec::new(
    "customers",
    "N",
    ValueKind::Int {
        min: 2,
        max: 1 << 40,
    },
    "SmallBank: number of customers (at least 2: Amalgamate needs two).",
);
pub const HOTSPOT_SIZE: OptionSpec = OptionSpec::new(
    "hotspot-size",
    "N",
    ValueKind::Int {
        min: 0,
        max: 1 << 40,
    },
    "SmallBank: customers in the hotspot (0 = uniform choice).",
);
pub const HOTSPOT_PROB: OptionSpec = OptionSpec::new(
    "hotspot-prob",
    "P",
    ValueKind::Float { min: 0.0, max: 1.0 },
    "SmallBank: probability that a transaction's customer is from the hotspot.",
);

/// Every option of `-w smallbank`.
pub const OPTIONS: &[&OptionSpec] = &[&CUSTOMERS, &HOTSPOT_SIZE, &HOTSPOT_PROB];

/// The configuration when no option is given: the usual SmallBank for benchmarks; a tiny, hot
/// bank for verification.
pub fn defaults(purpose: Purpose) -> SmallBankConfig {
    match purpose {
        Purpose::Bench => SmallBankConfig::default(),
        Purpose::Verify => SmallBankConfig {
            customers: 100,
            hotspot_size: 10,
            hotspot_prob: 0.9,
        },
    }
}

impl SmallBank {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`].
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<SmallBank> {
        let d = defaults(purpose);
        let customers = settings.int(&CUSTOMERS)?.unwrap_or(d.customers);
        SmallBank::new(SmallBankConfig {
            customers,
            // A smaller bank than the default hotspot keeps a hotspot of the same share.
            hotspot_size: settings
                .int(&HOTSPOT_SIZE)?
                .unwrap_or(d.hotspot_size.min(customers / 10)),
            hotspot_prob: settings.float(&HOTSPOT_PROB)?.unwrap_or(d.hotspot_prob),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::given;

    #[test]
    fn a_small_bank_keeps_a_hotspot_of_the_same_share() {
        let w = SmallBank::from_settings(&given(&[(&CUSTOMERS, "500")]), Purpose::Bench).unwrap();
        assert_eq!(w.config().hotspot_size, 50);
        let w = SmallBank::from_settings(&Settings::new(), Purpose::Verify).unwrap();
        assert_eq!(w.config(), &defaults(Purpose::Verify));
        let w = SmallBank::from_settings(
            &given(&[(&CUSTOMERS, "500"), (&HOTSPOT_SIZE, "0")]),
            Purpose::Bench,
        )
        .unwrap();
        assert_eq!(w.config().hotspot_size, 0, "given, it is kept");
    }

    #[test]
    fn values_the_bank_cannot_run_are_refused() {
        assert!(CUSTOMERS.parse("1").is_err());
        assert!(HOTSPOT_PROB.parse("2").is_err());
        let e = SmallBank::from_settings(&given(&[(&HOTSPOT_SIZE, "20000")]), Purpose::Bench)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("--hotspot-size (20000) cannot exceed"), "{e}");
    }
}
