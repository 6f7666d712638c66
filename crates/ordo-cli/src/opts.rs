//! Options shared by the subcommands: protocol and thread lists, workload parameters.

use crate::UsageError;
use clap::Args;
use ordo_workloads::ycsb::{HotSet, Ycsb, YcsbConfig};

/// Workloads: name, summary, source.
pub const WORKLOADS: &[(&str, &str, &str)] = &[(
    "ycsb",
    "key-value requests with Zipfian or hot-set skew",
    "Cooper et al. SoCC 2010; as configured in DBx1000, VLL, PWV, DIBS",
)];

/// Splits a comma-separated list.
pub fn split(list: &str) -> Vec<&str> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parses and checks a protocol list.
pub fn protocols(list: &str) -> Result<Vec<&'static ordo::protocols::ProtocolInfo>, UsageError> {
    let names = split(list);
    if names.is_empty() {
        return Err(UsageError("no protocol given (see `ordo list`)".into()));
    }
    names
        .into_iter()
        .map(|n| {
            ordo::protocols::info(n)
                .ok_or_else(|| UsageError(ordo::protocols::UnknownProtocol(n.into()).to_string()))
        })
        .collect()
}

/// Parses a thread-count list: positive integers.
pub fn threads(list: &str) -> Result<Vec<usize>, UsageError> {
    let items = split(list);
    if items.is_empty() {
        return Err(UsageError("no thread count given".into()));
    }
    items
        .into_iter()
        .map(|t| match t.parse::<usize>() {
            Ok(n) if (1..=1024).contains(&n) => Ok(n),
            _ => Err(UsageError(format!(
                "invalid thread count `{t}`: expected an integer from 1 to 1024"
            ))),
        })
        .collect()
}

/// The workload name and its parameters. Unset values take the subcommand's defaults.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Workload (see `ordo list`).
    #[arg(short = 'w', long = "workload", default_value = "ycsb")]
    pub workload: String,
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

/// A workload ready to run.
pub enum Workload {
    Ycsb(Ycsb),
}

impl WorkloadArgs {
    /// Builds the workload, filling unset YCSB values from `defaults`.
    pub fn build(&self, defaults: YcsbConfig) -> Result<Workload, UsageError> {
        match self.workload.as_str() {
            "ycsb" => {
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
                Ok(Workload::Ycsb(Ycsb::new(cfg).map_err(UsageError)?))
            }
            other => Err(UsageError(format!(
                "unknown workload `{other}` (known: {})",
                WORKLOADS.iter().map(|w| w.0).collect::<Vec<_>>().join(", ")
            ))),
        }
    }
}
