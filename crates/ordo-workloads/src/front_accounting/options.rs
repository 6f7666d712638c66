//! `-w front-accounting`'s options ([`FrontAccounting::from_settings`]): `--goods`.

use super::{FaConfig, FrontAccounting};
use crate::{Purpose, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};

pub const GOODS: OptionSpec = OptionSpec::new(
    "goods",
    "N",
    ValueKind::Int { min: 10, max: 256 },
    "front-accounting: types of goods the company sells (the thesis's 100, the default). Each \
     order is for one item; the bulk purchase restocks every item.",
);

/// Every option of `-w front-accounting`.
pub const OPTIONS: &[&OptionSpec] = &[&GOODS];

impl FrontAccounting {
    /// The workload `settings` describe (the same for a benchmark and a verification).
    pub fn from_settings(settings: &Settings, _purpose: Purpose) -> Result<FrontAccounting> {
        FrontAccounting::new(FaConfig {
            goods: settings.int(&GOODS)?.unwrap_or(FaConfig::default().goods),
        })
    }
}
