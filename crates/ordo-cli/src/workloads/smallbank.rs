//! `-w smallbank`: its options and their defaults.

use super::Purpose;
use crate::UsageError;
use clap::Args;
use ordo_workloads::smallbank::{SmallBank, SmallBankConfig};

/// SmallBank options.
#[derive(Args, Debug, Clone, Default)]
pub struct SmallBankArgs {
    /// SmallBank: number of customers.
    #[arg(long)]
    pub customers: Option<u64>,
    /// SmallBank: customers in the hotspot (0 = uniform choice).
    #[arg(long = "hotspot-size")]
    pub hotspot_size: Option<u64>,
    /// SmallBank: probability that a transaction's customer is from the hotspot, in [0, 1].
    #[arg(long = "hotspot-prob")]
    pub hotspot_prob: Option<f64>,
}

/// Defaults: the usual SmallBank configuration for benchmarks; a tiny, hot bank for verification.
fn defaults(purpose: Purpose) -> SmallBankConfig {
    match purpose {
        Purpose::Bench => SmallBankConfig::default(),
        Purpose::Verify => SmallBankConfig {
            customers: 100,
            hotspot_size: 10,
            hotspot_prob: 0.9,
        },
    }
}

impl SmallBankArgs {
    /// The first option given, if any (options of another workload are refused).
    pub fn given(&self) -> Option<&'static str> {
        [
            (self.customers.is_some(), "--customers"),
            (self.hotspot_size.is_some(), "--hotspot-size"),
            (self.hotspot_prob.is_some(), "--hotspot-prob"),
        ]
        .into_iter()
        .find_map(|(set, name)| set.then_some(name))
    }

    pub fn build(&self, purpose: Purpose) -> Result<SmallBank, UsageError> {
        let d = defaults(purpose);
        let customers = self.customers.unwrap_or(d.customers);
        let cfg = SmallBankConfig {
            customers,
            // A smaller bank than the default hotspot keeps a hotspot of the same share.
            hotspot_size: self
                .hotspot_size
                .unwrap_or(d.hotspot_size.min(customers / 10)),
            hotspot_prob: self.hotspot_prob.unwrap_or(d.hotspot_prob),
        };
        SmallBank::new(cfg).map_err(|e| UsageError(e.to_string()))
    }
}
