//! `-w tatp`: its options and their defaults.

use super::Purpose;
use crate::UsageError;
use clap::Args;
use ordo_workloads::tatp::{Tatp, TatpConfig};

/// TATP options.
#[derive(Args, Debug, Clone, Default)]
pub struct TatpArgs {
    /// TATP: subscribers (the spec and DIBS: 1,000,000).
    #[arg(long)]
    pub subscribers: Option<u64>,
}

/// Defaults: the spec's 1M subscribers for benchmarks; 100 (NURand A = 7) for verification.
fn defaults(purpose: Purpose) -> TatpConfig {
    match purpose {
        Purpose::Bench => TatpConfig::default(),
        Purpose::Verify => TatpConfig { subscribers: 100 },
    }
}

impl TatpArgs {
    /// The first option given, if any (options of another workload are refused).
    pub fn given(&self) -> Option<&'static str> {
        self.subscribers.map(|_| "--subscribers")
    }

    pub fn build(&self, purpose: Purpose) -> Result<Tatp, UsageError> {
        let d = defaults(purpose);
        let cfg = TatpConfig {
            subscribers: self.subscribers.unwrap_or(d.subscribers),
        };
        Tatp::new(cfg).map_err(|e| UsageError(e.to_string()))
    }
}
