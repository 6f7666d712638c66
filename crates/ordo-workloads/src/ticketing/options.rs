//! `-w ticketing`'s options ([`Ticketing::from_settings`]).

use super::{Ticketing, TicketingConfig};
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const SEATS: OptionSpec = OptionSpec::new(
    "seats",
    "N",
    ValueKind::Int {
        min: 1,
        max: (1 << 32) - 1,
    },
    "ticketing: seats in each of the event's two categories (the thesis's 10000, the default for a \
     benchmark; 2000 for verification). The event sells out after twice as many orders.",
);

/// Every option of `-w ticketing`.
pub const OPTIONS: &[&OptionSpec] = &[&SEATS];

impl Ticketing {
    /// The workload `settings` describe.
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<Ticketing> {
        let default = match purpose {
            Purpose::Bench => TicketingConfig::default().seats,
            Purpose::Verify => 2_000,
        };
        Ticketing::new(TicketingConfig {
            seats: settings.int(&SEATS)?.unwrap_or(default),
        })
    }
}
