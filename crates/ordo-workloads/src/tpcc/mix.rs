//! Transaction mixes: the specification's, the papers', and custom ones.
//!
//! A mix is a weight per transaction type; each transaction draws its type with probability weight /
//! total. Named mixes:
//!
//! | name                        | NO | P  | OS | D | SL | CC | from |
//! |-----------------------------|----|----|----|---|----|----|------|
//! | `standard` (alias `vll`)    | 45 | 43 | 4  | 4 | 4  | –  | TPC-C clause 5.2.3; VLL Fig. 12 |
//! | `new-order-payment` (`pwv`) | 50 | 50 | –  | – | –  | –  | PWV Fig. 5 |
//! | `tpcc++`                    | 41 | 43 | 4  | 4 | 4  | 4  | SSI thesis §5.3.4 (CC as often as D) |
//! | `stock-level`               | 1  | –  | –  | – | 10 | –  | SSI thesis §5.3.5: 10 SL per NO |
//! | `dbx1000`                   | 50 | 50 | –  | – | –  | –  | DBx1000's TPC-C (`PERC_PAYMENT` 0.5), with its work: see below |
//!
//! **`dbx1000`** does exactly the work of DBx1000's TPC-C (`benchmarks/tpcc_txn.cpp`), so that a
//! comparison with it is like for like: New-Order reads the warehouse, customer and items, bumps
//! `d_next_o_id` and updates each line's stock, but inserts no ORDER, NEW-ORDER or ORDER-LINE row
//! and never rolls back on an unused item (DBx1000 draws `rbk` and ignores it); Payment updates the
//! warehouse, district and customer but inserts no HISTORY row and leaves a bad-credit customer's
//! `c_data` alone. Only consistency condition 1 (`W_YTD = sum(D_YTD)`) can hold without the
//! inserts, so only it is checked. Still different from DBx1000: the order of the accesses (items
//! first, then warehouse, customer, district, then the stock, as [`super::new_order`]'s pieces
//! run; DBx1000 interleaves each item with its stock). Workers are bound to home warehouses as
//! DBx1000's `FIRST_PART_LOCAL` binds its threads (worker t to warehouse t mod W + 1; see
//! [`super`]).
//!
//! A custom mix is written `no=50,p=50` (keys `no`, `p`, `os`, `d`, `sl`, `cc`), in percent summing to 100.

use serde::Serialize;
use std::fmt;

/// The transaction types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Kind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
    /// TPC-C++ only.
    CreditCheck,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::NewOrder,
        Kind::Payment,
        Kind::OrderStatus,
        Kind::Delivery,
        Kind::StockLevel,
        Kind::CreditCheck,
    ];
    /// The short name of custom mixes.
    pub fn short(self) -> &'static str {
        match self {
            Kind::NewOrder => "no",
            Kind::Payment => "p",
            Kind::OrderStatus => "os",
            Kind::Delivery => "d",
            Kind::StockLevel => "sl",
            Kind::CreditCheck => "cc",
        }
    }
}

/// Why a mix does not parse ([`Mix::parse`]); one line each.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MixError {
    #[error(
        "unknown mix `{0}` (known: {known}; or a custom mix like no=50,p=50)",
        known = NAMED.iter().map(|n| n.0).collect::<Vec<_>>().join(", ")
    )]
    UnknownName(String),
    #[error("mix entry `{0}` is not of the form type=percent")]
    NotTypePercent(String),
    #[error("unknown transaction type `{0}` in mix (known: no, p, os, d, sl, cc)")]
    UnknownType(String),
    #[error("transaction type `{0}` given twice in mix")]
    Twice(String),
    #[error("mix percentage `{percent}` for `{kind}` is not a whole number")]
    NotWhole { kind: String, percent: String },
    #[error("mix percentages must sum to 100, got {0}")]
    Sum(u64),
}

/// Weights per [`Kind`] (in [`Kind::ALL`] order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Mix {
    pub weights: [u32; 6],
    /// DBx1000's work (see the module docs): no inserts, no rollbacks, no `c_data`.
    pub dbx1000: bool,
}

/// The named mixes (name, weights).
pub const NAMED: &[(&str, [u32; 6])] = &[
    ("standard", [45, 43, 4, 4, 4, 0]),
    ("vll", [45, 43, 4, 4, 4, 0]),
    ("new-order-payment", [50, 50, 0, 0, 0, 0]),
    ("pwv", [50, 50, 0, 0, 0, 0]),
    ("tpcc++", [41, 43, 4, 4, 4, 4]),
    ("stock-level", [1, 0, 0, 0, 10, 0]),
    ("dbx1000", [50, 50, 0, 0, 0, 0]),
];

impl Default for Mix {
    fn default() -> Self {
        Mix::STANDARD
    }
}

impl Mix {
    pub const STANDARD: Mix = Mix {
        weights: [45, 43, 4, 4, 4, 0],
        dbx1000: false,
    };

    /// Parses a mix name or a custom `no=50,p=50` list; the error is one line for the user.
    pub fn parse(s: &str) -> Result<Mix, MixError> {
        let s = s.trim();
        if let Some((_, w)) = NAMED.iter().find(|(n, _)| *n == s) {
            return Ok(Mix {
                weights: *w,
                dbx1000: s == "dbx1000",
            });
        }
        if !s.contains('=') {
            return Err(MixError::UnknownName(s.to_string()));
        }
        let mut weights = [0u32; 6];
        let mut seen = [false; 6];
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| MixError::NotTypePercent(part.to_string()))?;
            let (k, v) = (k.trim(), v.trim());
            let i = Kind::ALL
                .iter()
                .position(|kind| kind.short() == k)
                .ok_or_else(|| MixError::UnknownType(k.to_string()))?;
            if seen[i] {
                return Err(MixError::Twice(k.to_string()));
            }
            seen[i] = true;
            weights[i] = v.parse::<u32>().map_err(|_| MixError::NotWhole {
                kind: k.to_string(),
                percent: v.to_string(),
            })?;
        }
        let sum: u64 = weights.iter().map(|&w| w as u64).sum();
        if sum != 100 {
            return Err(MixError::Sum(sum));
        }
        Ok(Mix {
            weights,
            dbx1000: false,
        })
    }

    pub fn total(&self) -> u32 {
        self.weights.iter().sum()
    }

    /// The type drawn by `r` in `0..total()`.
    #[inline]
    pub fn pick(&self, mut r: u32) -> Kind {
        for (i, &w) in self.weights.iter().enumerate() {
            if r < w {
                return Kind::ALL[i];
            }
            r -= w;
        }
        Kind::ALL[self.weights.iter().rposition(|&w| w > 0).unwrap_or(0)]
    }

    pub fn weight(&self, k: Kind) -> u32 {
        self.weights[Kind::ALL.iter().position(|&x| x == k).expect("kind")]
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.dbx1000 {
            return f.write_str("dbx1000");
        }
        let parts: Vec<String> = Kind::ALL
            .iter()
            .zip(self.weights)
            .filter(|(_, w)| *w > 0)
            .map(|(k, w)| format!("{}={w}", k.short()))
            .collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_custom_mixes_parse() {
        assert_eq!(Mix::parse("standard").unwrap(), Mix::STANDARD);
        assert_eq!(Mix::parse("vll").unwrap(), Mix::STANDARD);
        assert_eq!(
            Mix::parse("no=50, p=50").unwrap(),
            Mix::parse("new-order-payment").unwrap()
        );
        let pp = Mix::parse("tpcc++").unwrap();
        assert_eq!(pp.total(), 100);
        assert_eq!(pp.weight(Kind::CreditCheck), 4);
        let sl = Mix::parse("stock-level").unwrap();
        assert_eq!(sl.weight(Kind::StockLevel), 10 * sl.weight(Kind::NewOrder));
        assert_eq!(
            Mix::parse(&Mix::STANDARD.to_string()).unwrap(),
            Mix::STANDARD
        );
        // DBx1000's: its fractions, its work, and its name kept through a round trip.
        let dbx = Mix::parse("dbx1000").unwrap();
        assert!(dbx.dbx1000);
        assert_eq!(dbx.weights, Mix::parse("no=50,p=50").unwrap().weights);
        assert!(!Mix::parse("no=50,p=50").unwrap().dbx1000);
        assert_eq!(Mix::parse(&dbx.to_string()).unwrap(), dbx);
    }

    #[test]
    fn bad_mixes_are_rejected_with_a_reason() {
        for (bad, says) in [
            ("nosuch", "unknown mix"),
            ("no=50,p=40", "sum to 100"),
            ("no=50,x=50", "unknown transaction type"),
            ("no=50,no=50", "twice"),
            ("no=fifty,p=50", "whole number"),
            ("no=-5,p=105", "whole number"),
            ("no", "unknown mix"),
        ] {
            let e = Mix::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn pick_follows_the_weights() {
        let m = Mix::STANDARD;
        let mut counts = [0u32; 6];
        for r in 0..m.total() {
            counts[Kind::ALL.iter().position(|&k| k == m.pick(r)).unwrap()] += 1;
        }
        assert_eq!(counts, m.weights);
    }
}
