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
    #[arg(long, value_name = "N", default_value_t = ordo::protocols::vll::DEFAULT_BLOCKED_LIMIT)]
    pub vll_blocked_limit: usize,
    /// VLL family: the most transactions a worker admits in one critical section while none blocks
    /// (1 to 1024; 1 is the paper's one at a time; a batch also stops at 8 lock requests per
    /// member allowed, 32 at the default).
    #[arg(long, value_name = "N", default_value_t = ordo::protocols::vll::DEFAULT_MAX_BATCH)]
    pub vll_batch: usize,
    /// `vll-sca`, `vllr-sca`: bits in each of SCA's bit arrays (64 to 134217728; the paper's 819200 =
    /// 100 kB each by default). Fewer bits stay in L1 and move fewer cache lines between scanning workers;
    /// more hash collisions only make SCA miss runnable transactions, never pick a conflicting one.
    #[arg(long, value_name = "BITS", default_value_t = ordo::protocols::vll::sca::SCA_BITS)]
    pub vll_sca_bits: u32,
}

/// The range `--vll-sca-bits` accepts: one word at least, 16 MiB per array at most.
const SCA_BITS_RANGE: (usize, usize) = (64, 1 << 27);

impl ProtocolKnobs {
    /// The VLL knobs, checked.
    pub fn vll(&self) -> Result<ordo::protocols::vll::VllConfig, UsageError> {
        let check = |name: &str, v: usize, (min, max): (usize, usize)| {
            if (min..=max).contains(&v) {
                Ok(v)
            } else {
                Err(UsageError(format!(
                    "--{name} must be an integer from {min} to {max}, got {v}"
                )))
            }
        };
        Ok(ordo::protocols::vll::VllConfig {
            blocked_limit: check("vll-blocked-limit", self.vll_blocked_limit, (1, 4096))?,
            max_batch: check("vll-batch", self.vll_batch, (1, 1024))?,
            sca_bits: check("vll-sca-bits", self.vll_sca_bits as usize, SCA_BITS_RANGE)? as u32,
        })
    }
}
