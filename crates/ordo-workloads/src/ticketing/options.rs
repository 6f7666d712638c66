//! `-w ticketing`'s options ([`Ticketing::from_settings`]): `--seats` and `--base-ified` (shared
//! with `-w tpcc`; it sweeps, for Fig. 3.9: `--base-ified 0,1,2,3,raw`).

use super::txn::BASE_ORDER;
use super::{Ticketing, TicketingConfig, DEFAULT_BASE_IFIED};
use crate::base_ified::{BaseIfied, BASE_IFIED};
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
     benchmark; 2000 for verification). Reservations pick random seats, so as the event fills \
     more of them find their seat taken.",
);

/// Every option of `-w ticketing`.
pub const OPTIONS: &[&OptionSpec] = &[&SEATS, &BASE_IFIED];

impl Ticketing {
    /// The workload `settings` describe.
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<Ticketing> {
        let default = match purpose {
            Purpose::Bench => TicketingConfig::default().seats,
            Purpose::Verify => 2_000,
        };
        let base = BaseIfied::from_settings(
            settings,
            DEFAULT_BASE_IFIED,
            BASE_ORDER.len() as u8,
            "ticketing",
        )?;
        Ok(Ticketing::new(TicketingConfig {
            seats: settings.int(&SEATS)?.unwrap_or(default),
        })?
        .with_base_ified(base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::given;

    #[test]
    fn base_ified_defaults_to_create_order_takes_0_to_3_or_raw_and_sweeps() {
        let w = Ticketing::from_settings(&Settings::new(), Purpose::Bench).unwrap();
        assert_eq!(w.base_ified(), BaseIfied::Types(1));
        for (text, want) in [
            ("0", BaseIfied::Types(0)),
            ("3", BaseIfied::Types(3)),
            ("raw", BaseIfied::Raw),
        ] {
            let w =
                Ticketing::from_settings(&given(&[(&BASE_IFIED, text)]), Purpose::Bench).unwrap();
            assert_eq!(w.base_ified(), want, "{text}");
        }
        let e = Ticketing::from_settings(&given(&[(&BASE_IFIED, "4")]), Purpose::Bench)
            .err()
            .expect("4 is refused")
            .to_string();
        assert!(e.contains("from 0 to 3 or `raw`"), "{e}");
        let s = given(&[(&BASE_IFIED, "0,1,2,3,raw")]);
        assert_eq!(s.sweep().unwrap().len(), 5);
    }
}
