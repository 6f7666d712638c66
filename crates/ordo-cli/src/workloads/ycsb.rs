//! `-w ycsb`: its options and their defaults.

use super::Purpose;
use crate::UsageError;
use clap::Args;
use ordo_workloads::ycsb::{HotSet, Ycsb, YcsbConfig};

/// YCSB options.
#[derive(Args, Debug, Clone, Default)]
pub struct YcsbArgs {
    /// YCSB: number of rows.
    #[arg(long)]
    pub rows: Option<u64>,
    /// YCSB: requests per transaction.
    #[arg(long)]
    pub ops: Option<usize>,
    /// YCSB: fraction of requests that are reads, in [0, 1].
    #[arg(long = "read-ratio")]
    pub read_ratio: Option<f64>,
    /// YCSB: Zipfian skew θ (0 = uniform; 0.99 and above are very hot).
    #[arg(long, allow_negative_numbers = true)]
    pub theta: Option<f64>,
    /// YCSB: updates read-modify-write their field instead of overwriting it.
    #[arg(long)]
    pub rmw: bool,
    /// YCSB: hot-set mode — the number of hot rows (keys 0..H).
    #[arg(long = "hot-rows", requires = "hot_per_txn")]
    pub hot_rows: Option<u64>,
    /// YCSB: hot-set mode — hot keys per transaction.
    #[arg(long = "hot-per-txn", requires = "hot_rows")]
    pub hot_per_txn: Option<usize>,
    /// YCSB: columns per row.
    #[arg(long)]
    pub fields: Option<usize>,
    /// YCSB: bytes per column.
    #[arg(long = "field-len")]
    pub field_len: Option<u16>,
}

/// Defaults: the papers' configuration for benchmarks; a small, contended table for verification.
fn defaults(purpose: Purpose) -> YcsbConfig {
    match purpose {
        Purpose::Bench => YcsbConfig::default(),
        Purpose::Verify => YcsbConfig {
            rows: 1_000,
            ops: 8,
            read_ratio: 0.5,
            theta: 0.9,
            rmw: true,
            ..YcsbConfig::default()
        },
    }
}

impl YcsbArgs {
    pub fn build(&self, purpose: Purpose) -> Result<Ycsb, UsageError> {
        let defaults = defaults(purpose);
        if self.hot_rows.is_some() && self.theta.is_some() {
            return Err(UsageError(
                "--theta and --hot-rows are alternative key distributions: give one".into(),
            ));
        }
        let cfg = YcsbConfig {
            rows: self.rows.unwrap_or(defaults.rows),
            fields: self.fields.unwrap_or(defaults.fields),
            field_len: self.field_len.unwrap_or(defaults.field_len),
            ops: self.ops.unwrap_or(defaults.ops),
            read_ratio: self.read_ratio.unwrap_or(defaults.read_ratio),
            theta: self.theta.unwrap_or(defaults.theta),
            rmw: self.rmw || defaults.rmw,
            hot: match (self.hot_rows, self.hot_per_txn) {
                (Some(rows), Some(per_txn)) => Some(HotSet { rows, per_txn }),
                _ => defaults.hot,
            },
        };
        Ycsb::new(cfg).map_err(UsageError)
    }
}
