//! `--base-ified N|raw`: how much of a workload is BASE-ified for Salt (Xie 2016, §3.6.2,
//! Figs. 3.8–3.9, incremental BASE-ification) — one declaration that every workload with BASE
//! transactions lists, so the option means the same everywhere.
//!
//! A workload ranks its transaction types by how much BASE-ifying them pays (the thesis's
//! method: raise the load and watch which types' latency grows out of proportion), and
//! `--base-ified N` BASE-ifies the first `N` of them, each cut into the alkaline subtransactions
//! its module documents; `raw` cuts **every** type into one alkaline subtransaction per piece —
//! the thesis's "RAW OPS" bar, an upper bound that gives no guarantee a real application would
//! want. Only `salt` and `salt-local` read the marks ([`ordo::txn::Program::alkaline_starts`]);
//! every other protocol runs every transaction ACID whatever the option says.

use crate::{Error, Result};
use ordo::options::{OptionSpec, Settings, ValueKind};
use serde::Serialize;
use std::fmt;

pub const BASE_IFIED: OptionSpec = OptionSpec::new(
    "base-ified",
    "N|raw",
    ValueKind::Choice(&[
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "raw",
    ]),
    "tpcc, ticketing: under salt/salt-local, BASE-ify the first N transaction types in the \
     workload's order of contention (0 = all ACID; tpcc: new-order, payment, delivery, \
     stock-level, order-status, default 2 as the thesis's Fig. 3.6; ticketing: its module's order, \
     default 1 = create-order), or `raw`: every type, one alkaline subtransaction per piece (the \
     thesis's RAW OPS). Other protocols run everything ACID. Sweeps: --base-ified 0,1,2,raw.",
)
.sweeps();

/// How much of a workload is BASE-ified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BaseIfied {
    /// The first `n` types of the workload's order, each cut as its module documents.
    Types(u8),
    /// Every type, one alkaline subtransaction per piece.
    Raw,
}

impl fmt::Display for BaseIfied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaseIfied::Types(n) => write!(f, "{n}"),
            BaseIfied::Raw => f.write_str("raw"),
        }
    }
}

/// How one transaction type is cut, given a [`BaseIfied`] and the type's rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cut {
    /// ACID: no alkaline boundary.
    #[default]
    Acid,
    /// BASE-ified as its module documents.
    Base,
    /// One alkaline subtransaction per piece.
    Raw,
}

impl BaseIfied {
    /// The cut of the type ranked `rank` (0 = the first to BASE-ify).
    pub fn cut(self, rank: usize) -> Cut {
        match self {
            BaseIfied::Raw => Cut::Raw,
            BaseIfied::Types(n) if rank < n as usize => Cut::Base,
            BaseIfied::Types(_) => Cut::Acid,
        }
    }

    /// The cut of `kind` in a workload that BASE-ifies its types in `order`: its rank's there;
    /// a type not in the order is cut only by `raw`.
    pub fn cut_in<K: PartialEq>(self, order: &[K], kind: &K) -> Cut {
        match order.iter().position(|k| k == kind) {
            Some(rank) => self.cut(rank),
            None if self == BaseIfied::Raw => Cut::Raw,
            None => Cut::Acid,
        }
    }

    /// `--base-ified` from `settings`, `default` when not given; a count above `types` (the
    /// workload's number of transaction types) is refused, naming the option.
    pub fn from_settings(
        settings: &Settings,
        default: BaseIfied,
        types: u8,
        workload: &str,
    ) -> Result<BaseIfied> {
        let Some(text) = settings.text(&BASE_IFIED)? else {
            return Ok(default);
        };
        Self::parse(&text, types)
            .map_err(|why| Error::invalid("base-ified", format!("of -w {workload} {why}")))
    }

    /// Parses `N` (0..=`types`) or `raw`; the error says what was expected.
    pub fn parse(text: &str, types: u8) -> std::result::Result<BaseIfied, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("raw") {
            return Ok(BaseIfied::Raw);
        }
        match text.parse::<u8>() {
            Ok(n) if n <= types => Ok(BaseIfied::Types(n)),
            _ => Err(format!(
                "takes a number of transaction types from 0 to {types} or `raw`, not `{text}`"
            )),
        }
    }
}

/// Appends one alkaline start per piece boundary of a `pieces`-piece program (the `raw` cut).
pub fn every_piece(pieces: usize, out: &mut Vec<usize>) {
    out.extend(1..pieces);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_raw_parse_and_bad_values_say_what_is_expected() {
        assert_eq!(BaseIfied::parse("0", 5), Ok(BaseIfied::Types(0)));
        assert_eq!(BaseIfied::parse(" 5 ", 5), Ok(BaseIfied::Types(5)));
        assert_eq!(BaseIfied::parse("RAW", 5), Ok(BaseIfied::Raw));
        for bad in ["6", "-1", "two", "", "1.5"] {
            let e = BaseIfied::parse(bad, 5).unwrap_err();
            assert!(e.contains("from 0 to 5 or `raw`"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_first_n_ranks_are_base_the_rest_acid_and_raw_cuts_everything() {
        let two = BaseIfied::Types(2);
        assert_eq!(
            [0, 1, 2, 4].map(|r| two.cut(r)),
            [Cut::Base, Cut::Base, Cut::Acid, Cut::Acid]
        );
        assert_eq!(BaseIfied::Types(0).cut(0), Cut::Acid);
        assert_eq!(BaseIfied::Raw.cut(7), Cut::Raw);
        let mut out = Vec::new();
        every_piece(4, &mut out);
        assert_eq!(out, [1, 2, 3]);
    }
}
