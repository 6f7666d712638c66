//! `-w seats`'s option and its defaults for a benchmark or a verification run
//! ([`Seats::from_settings`]).

use super::{Seats, SeatsConfig};
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const SCALE: OptionSpec = OptionSpec::new(
    "scale",
    "S",
    ValueKind::Float {
        min: 0.001,
        max: 100_000.0,
    },
    "SEATS: scale, 1,000·S customers and 40·S flights of 150 seats (at least 4; default 100: \
     100,000 customers, BenchBase's scale factor 1, and 4,000 flights; verification 0.2: 200 \
     customers on 8 flights).",
);

/// Every option of `-w seats`.
pub const OPTIONS: &[&OptionSpec] = &[&SCALE];

/// The scale when no option is given: 100 for benchmarks; 0.2 (200 customers, 8 flights, each
/// with about 50 reservations) for verification, so that concurrent transactions meet on flights.
pub fn default_scale(purpose: Purpose) -> f64 {
    match purpose {
        Purpose::Bench => 100.0,
        Purpose::Verify => 0.2,
    }
}

/// The configuration when no option is given (see [`default_scale`]).
pub fn defaults(purpose: Purpose) -> SeatsConfig {
    SeatsConfig::scaled(default_scale(purpose))
}

impl Seats {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`].
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<Seats> {
        let scale = settings.float(&SCALE)?.unwrap_or(default_scale(purpose));
        Seats::new(SeatsConfig::scaled(scale))
    }
}
