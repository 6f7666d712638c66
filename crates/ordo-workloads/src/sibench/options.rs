//! `-w sibench`'s options and their defaults for a benchmark or a verification run
//! ([`SiBench::from_settings`]).

use super::{SiBench, SiBenchConfig, MAX_ITEMS};
use crate::{Purpose, Result};
use ordo::options::{OptionError, OptionSpec, Settings, ValueKind};

pub const ITEMS: OptionSpec = OptionSpec::new(
    "items",
    "N",
    ValueKind::Int {
        min: 1,
        max: MAX_ITEMS,
    },
    "sibench: rows in the table (the thesis's I: 10, 100, 1000).",
);
pub const QUERY_RATIO: OptionSpec = OptionSpec::new(
    "query-ratio",
    "Q:U",
    ValueKind::Text,
    "sibench: queries to updates, as Q:U (the thesis: 1:1, 10:1).",
);

/// Every option of `-w sibench`.
pub const OPTIONS: &[&OptionSpec] = &[&ITEMS, &QUERY_RATIO];

/// The configuration when no option is given: I = 100 at 1:1 for benchmarks; 10 hot rows for
/// verification.
pub fn defaults(purpose: Purpose) -> SiBenchConfig {
    match purpose {
        Purpose::Bench => SiBenchConfig::default(),
        Purpose::Verify => SiBenchConfig {
            items: 10,
            ..SiBenchConfig::default()
        },
    }
}

/// Parses `Q:U` (queries to updates).
fn ratio(s: &str) -> std::result::Result<(u32, u32), OptionError> {
    let bad = || QUERY_RATIO.error(format!("must look like 10:1 (queries:updates), got `{s}`"));
    let (q, u) = s.split_once(':').ok_or_else(bad)?;
    Ok((
        q.trim().parse().map_err(|_| bad())?,
        u.trim().parse().map_err(|_| bad())?,
    ))
}

impl SiBench {
    /// The workload `settings` describe, the others at `purpose`'s [`defaults`].
    pub fn from_settings(settings: &Settings, purpose: Purpose) -> Result<SiBench> {
        let d = defaults(purpose);
        let (queries, updates) = match settings.text(&QUERY_RATIO)? {
            Some(r) => ratio(&r)?,
            None => (d.queries, d.updates),
        };
        SiBench::new(SiBenchConfig {
            items: settings.int(&ITEMS)?.unwrap_or(d.items),
            queries,
            updates,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::given;

    #[test]
    fn ratios_parse() {
        assert_eq!(ratio("10:1").ok(), Some((10, 1)));
        assert_eq!(ratio(" 1 : 1 ").ok(), Some((1, 1)));
        for bad in ["10", "a:1", "1:-1", "1:2:3", ""] {
            assert!(ratio(bad).is_err(), "{bad}");
        }
        let w = SiBench::from_settings(&given(&[(&QUERY_RATIO, "10:1")]), Purpose::Verify).unwrap();
        assert_eq!(
            (w.config().queries, w.config().updates, w.config().items),
            (10, 1, 10)
        );
        for bad in ["0:0", "4294967295:1", "99999999999:1"] {
            let s = given(&[(&QUERY_RATIO, bad)]);
            assert!(SiBench::from_settings(&s, Purpose::Bench).is_err(), "{bad}");
        }
    }
}
