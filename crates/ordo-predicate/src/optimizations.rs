//! Which of §2.2's optimizations a lock manager uses, each switchable, so the paper's cumulative
//! ablation of Fig. 3 (naive → grouping → prepared → filter → full) is one value each.

use crate::error::Error;

/// The threshold k of §2.2.4 when none is given: DNF conversions (and prepared conflict predicates)
/// of more terms than this fall back to the conservative answer, "conflict".
pub const DEFAULT_THRESHOLD: u64 = 1024;

/// The switches. `Optimizations::naive()` is §2.1's Algorithm 1 alone: one active set for the whole
/// database, every lock's predicate in full DNF, pairs compared term by term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Optimizations {
    /// §2.2.1: conjunct grouping (union-find over columns) instead of the full DNF of `P ∧ P'`.
    pub grouping: bool,
    /// §2.2.2: prepared requests are compared through the offline conflict graph.
    pub prepared: bool,
    /// §2.2.3: N buckets per relation keyed by an equality on its filter (key) column, instead of one
    /// active set for the whole database.
    pub filter: bool,
    /// §2.2.4: conflicts over columns (R∩W', W∩R', W∩W') instead of relations and modes.
    pub column_level: bool,
    /// §2.2.4: the DNF blow-up threshold k; `None` converts whatever it is given, up to the hard
    /// caps [`crate::lock::HARD_TERMS`] (terms stored per predicate) and [`crate::lock::HARD_PRODUCT`]
    /// (term combinations tested per pair), past which even the naive manager answers "conflict"
    /// rather than run out of memory or stall.
    pub threshold: Option<u64>,
}

/// The cumulative steps of the paper's Fig. 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Naive,
    Grouping,
    Prepared,
    Filter,
    Full,
}

impl Step {
    pub const ALL: [Step; 5] = [
        Step::Naive,
        Step::Grouping,
        Step::Prepared,
        Step::Filter,
        Step::Full,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Step::Naive => "naive",
            Step::Grouping => "grouping",
            Step::Prepared => "prepared",
            Step::Filter => "filter",
            Step::Full => "full",
        }
    }
}

impl Default for Optimizations {
    fn default() -> Self {
        Self::full()
    }
}

impl Optimizations {
    pub const fn naive() -> Self {
        Optimizations {
            grouping: false,
            prepared: false,
            filter: false,
            column_level: false,
            threshold: None,
        }
    }

    pub const fn full() -> Self {
        Optimizations {
            grouping: true,
            prepared: true,
            filter: true,
            column_level: true,
            threshold: Some(DEFAULT_THRESHOLD),
        }
    }

    /// Everything up to and including `step` (Fig. 3's cumulative ablation): `Filter` is naive +
    /// grouping + prepared + filter; `Full` adds column-level conflicts and the threshold.
    pub fn cumulative(step: Step) -> Self {
        let mut o = Self::naive();
        o.grouping = step >= Step::Grouping;
        o.prepared = step >= Step::Prepared;
        o.filter = step >= Step::Filter;
        if step >= Step::Full {
            o.column_level = true;
            o.threshold = Some(DEFAULT_THRESHOLD);
        }
        o
    }

    /// A comma-separated list of switches, each adding one to `naive` (which adds nothing):
    /// `grouping`, `prepared`, `filter`, `column`, `threshold` (or `threshold=K`); `full` is all of
    /// them. Fig. 3's steps are `naive`, `grouping`, `grouping,prepared`,
    /// `grouping,prepared,filter` and `full` ([`Optimizations::cumulative`]).
    pub fn parse(text: &str) -> Result<Self, Error> {
        let mut o = Self::naive();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match item {
                "naive" => {}
                "grouping" => o.grouping = true,
                "prepared" => o.prepared = true,
                "filter" => o.filter = true,
                "column" | "column-level" => o.column_level = true,
                "threshold" => o.threshold = Some(DEFAULT_THRESHOLD),
                "full" => o = Self::full(),
                _ => match item.strip_prefix("threshold=").map(str::parse::<u64>) {
                    Some(Ok(k)) => o.threshold = Some(k),
                    _ => return Err(Error::UnknownOptimization(item.to_string())),
                },
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_steps_add_up() {
        assert_eq!(
            Optimizations::cumulative(Step::Naive),
            Optimizations::naive()
        );
        assert_eq!(Optimizations::cumulative(Step::Full), Optimizations::full());
        let f = Optimizations::cumulative(Step::Filter);
        assert!(f.grouping && f.prepared && f.filter && !f.column_level && f.threshold.is_none());
        assert_eq!(Optimizations::parse("grouping,prepared,filter").unwrap(), f);
        assert_eq!(Optimizations::parse("full").unwrap(), Optimizations::full());
        assert_eq!(
            Optimizations::parse("naive,threshold=8").unwrap().threshold,
            Some(8)
        );
        assert!(Optimizations::parse("grouping,fast").is_err());
    }
}
