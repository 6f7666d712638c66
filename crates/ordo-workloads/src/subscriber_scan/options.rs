//! `-w subscriber-scan`'s options and their defaults for a benchmark or a verification run
//! ([`SubscriberScan::from_settings`]). `--subscribers` is `-w tatp`'s option, shared.

use super::{SubscriberScan, SubscriberScanConfig, MAX_CONJUNCTS};
use crate::tatp::options::SUBSCRIBERS;
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const CONJUNCTS: OptionSpec = OptionSpec::new(
    "conjuncts",
    "N",
    ValueKind::Int {
        min: 1,
        max: MAX_CONJUNCTS as u64,
    },
    "subscriber-scan: conjuncts per predicate, each a disjunction of two 16-wide BETWEENs on one \
     byte2_x column (default 6, the paper's Fig. 3c), e.g. 1,2,3,4,5,6,7,8 (Fig. 4).",
)
.sweeps();

/// Every option of `-w subscriber-scan`.
pub const OPTIONS: &[&OptionSpec] = &[&CONJUNCTS, &SUBSCRIBERS];

/// The configuration when no option is given: the paper's 100,000 rows and 6 conjuncts for
/// benchmarks; for verification 1,000 rows and one conjunct, so that an update's rows (about one
/// in eight) often meet other transactions' predicates.
pub fn defaults(purpose: Purpose) -> SubscriberScanConfig {
    match purpose {
        Purpose::Bench => SubscriberScanConfig::default(),
        Purpose::Verify => SubscriberScanConfig {
            subscribers: 1_000,
            conjuncts: 1,
        },
    }
}

impl SubscriberScan {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`].
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<SubscriberScan> {
        let d = defaults(purpose);
        SubscriberScan::new(SubscriberScanConfig {
            subscribers: settings.int(&SUBSCRIBERS)?.unwrap_or(d.subscribers),
            conjuncts: settings.int_as(&CONJUNCTS)?.unwrap_or(d.conjuncts),
        })
    }
}
