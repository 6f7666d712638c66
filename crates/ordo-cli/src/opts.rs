//! Options shared by the subcommands: protocol and thread lists, protocol knobs (workload options:
//! [`crate::workloads`]).

use crate::UsageError;

/// Splits a comma-separated list.
pub fn split(list: &str) -> Vec<&str> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parses a comma-separated list of numbers, each accepted by `ok`; `what` describes the range.
pub fn parse_list(
    flag: &str,
    s: &str,
    ok: fn(f64) -> bool,
    what: &str,
) -> Result<Vec<f64>, UsageError> {
    let values = s
        .split(',')
        .map(|v| {
            let v = v.trim();
            match v.parse::<f64>() {
                Ok(x) if ok(x) => Ok(x),
                _ => Err(UsageError(format!("--{flag} takes {what}, got `{v}`"))),
            }
        })
        .collect::<Result<Vec<f64>, _>>()?;
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(UsageError(format!("--{flag} lists {v} twice")));
        }
    }
    Ok(values)
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

/// Protocol knobs shared by `bench` and `verify` (each applies to one protocol family and is ignored by
/// the others).
#[derive(clap::Args, Debug, Clone)]
pub struct ProtocolKnobs {
    /// VLL family (`vll`, `vll-sca`, `vll-arrayed`, `vllr`): no new transaction is admitted while this
    /// many are blocked in the TxnQueue (1 to 4096; the paper tunes it per workload). It is the
    /// most: a worker halves its own threshold when a dependent transaction's reconnaissance went
    /// stale while it waited, and grows it back as transactions complete.
    #[arg(long, value_name = "N")]
    pub vll_blocked_limit: Option<String>,
    /// VLL family: the most transactions a worker admits in one critical section while none blocks
    /// (1 to 1024; 1 is the paper's one at a time; a batch also stops at 8 lock requests per
    /// member allowed, 32 at the default).
    #[arg(long, value_name = "N")]
    pub vll_batch: Option<String>,
    /// `vll-sca`, `vllr-sca`: bits in each of SCA's bit arrays (64 to 134217728; the paper's 819200 =
    /// 100 kB each by default). Fewer bits stay in L1 and move fewer cache lines between scanning workers;
    /// more hash collisions only make SCA miss runnable transactions, never pick a conflicting one.
    #[arg(long, value_name = "BITS")]
    pub vll_sca_bits: Option<String>,
}

impl ProtocolKnobs {
    /// The knobs given, checked.
    pub fn settings(&self) -> Result<ordo::options::Settings, UsageError> {
        use ordo::protocols::vll::{BATCH_KNOB, BLOCKED_LIMIT_KNOB, SCA_BITS_KNOB};
        let mut s = ordo::options::Settings::new();
        for (spec, value) in [
            (&BLOCKED_LIMIT_KNOB, &self.vll_blocked_limit),
            (&BATCH_KNOB, &self.vll_batch),
            (&SCA_BITS_KNOB, &self.vll_sca_bits),
        ] {
            if let Some(v) = value {
                s.parse(spec, v).map_err(|e| UsageError(e.to_string()))?;
            }
        }
        Ok(s)
    }
}
