//! `-w tatp`'s option and its defaults for a benchmark or a verification run
//! ([`Tatp::from_settings`]).

use super::{Tatp, TatpConfig, MAX_SUBSCRIBERS};
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const SUBSCRIBERS: OptionSpec = OptionSpec::new(
    "subscribers",
    "N",
    ValueKind::Int {
        min: 1,
        max: MAX_SUBSCRIBERS,
    },
    "TATP, subscriber-scan: subscribers (TATP: the spec's and DIBS's 1,000,000; subscriber-scan: \
     DIBS's 100,000).",
);

/// Every option of `-w tatp`.
pub const OPTIONS: &[&OptionSpec] = &[&SUBSCRIBERS];

/// The configuration when no option is given: the spec's 1M subscribers for benchmarks; 100
/// (NURand A = 7) for verification.
pub fn defaults(purpose: Purpose) -> TatpConfig {
    match purpose {
        Purpose::Bench => TatpConfig::default(),
        Purpose::Verify => TatpConfig { subscribers: 100 },
    }
}

impl Tatp {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`].
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<Tatp> {
        Tatp::new(TatpConfig {
            subscribers: settings
                .int(&SUBSCRIBERS)?
                .unwrap_or(defaults(purpose).subscribers),
        })
    }
}
