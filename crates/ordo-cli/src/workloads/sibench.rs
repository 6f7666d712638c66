//! `-w sibench`: its options and their defaults.

use super::Purpose;
use crate::UsageError;
use clap::Args;
use ordo_workloads::sibench::{SiBench, SiBenchConfig};

/// sibench options.
#[derive(Args, Debug, Clone, Default)]
pub struct SiBenchArgs {
    /// sibench: rows in the table (the thesis's I: 10, 100, 1000).
    #[arg(long)]
    pub items: Option<u64>,
    /// sibench: queries to updates, as Q:U (the thesis: 1:1, 10:1).
    #[arg(long = "query-ratio")]
    pub query_ratio: Option<String>,
}

/// Defaults: I = 100 at 1:1 for benchmarks; 10 hot rows for verification.
fn defaults(purpose: Purpose) -> SiBenchConfig {
    match purpose {
        Purpose::Bench => SiBenchConfig::default(),
        Purpose::Verify => SiBenchConfig {
            items: 10,
            ..SiBenchConfig::default()
        },
    }
}

/// Parses `Q:U`.
fn ratio(s: &str) -> Result<(u32, u32), UsageError> {
    let bad = || {
        UsageError(format!(
            "--query-ratio must look like 10:1 (queries:updates), got `{s}`"
        ))
    };
    let (q, u) = s.split_once(':').ok_or_else(bad)?;
    Ok((
        q.trim().parse().map_err(|_| bad())?,
        u.trim().parse().map_err(|_| bad())?,
    ))
}

impl SiBenchArgs {
    /// The first option given, if any (options of another workload are refused).
    pub fn given(&self) -> Option<&'static str> {
        [
            (self.items.is_some(), "--items"),
            (self.query_ratio.is_some(), "--query-ratio"),
        ]
        .into_iter()
        .find_map(|(set, name)| set.then_some(name))
    }

    pub fn build(&self, purpose: Purpose) -> Result<SiBench, UsageError> {
        let d = defaults(purpose);
        let (queries, updates) = match &self.query_ratio {
            Some(r) => ratio(r)?,
            None => (d.queries, d.updates),
        };
        let cfg = SiBenchConfig {
            items: self.items.unwrap_or(d.items),
            queries,
            updates,
        };
        SiBench::new(cfg).map_err(|e| UsageError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_parse() {
        assert_eq!(ratio("10:1").ok(), Some((10, 1)));
        assert_eq!(ratio(" 1 : 1 ").ok(), Some((1, 1)));
        for bad in ["10", "a:1", "1:-1", "1:2:3", ""] {
            assert!(ratio(bad).is_err(), "{bad}");
        }
    }
}
