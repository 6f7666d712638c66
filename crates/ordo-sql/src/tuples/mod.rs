//! What a statement names, as predicates over a table's integer columns: the tuples a predicate
//! lock manager (DIBS, Gaffney, Claus, Patel 2021 §2.1) locks instead of keys. The executor hands
//! them to the protocol beside each request; a protocol without predicate locks ignores them
//! ([`ordo::txn::Tx::scan_where`] by default scans every key, the `*_described` writes are plain
//! writes).
//!
//! ```text
//! SELECT … WHERE day = 7 AND note = 'x'    → scan_where(day = 7)          (cover of the WHERE)
//! INSERT INTO shifts VALUES (10, 7, 'x')   → insert_described(id = 10 ∧ day = 7)
//! UPDATE shifts SET day = 8 WHERE id = 10  → update_described(id = 10 ∧ (day = 7 ∨ day = 8))
//! DELETE FROM shifts WHERE id = 10         → delete_described(id = 10 ∧ day = 7)
//! ```
//!
//! **A cover never misses a row.** [`cover`] translates a WHERE clause atom by atom: `column op
//! value` (either side; the value free of the row, so constants and parameters), `BETWEEN`, `IN`,
//! `AND`, `OR`, `NOT` and a bare boolean column, over `INT` and `BOOLEAN` columns (stored as
//! integers, compared exactly). `NOT` is pushed to the atoms; whatever else a clause holds — text
//! and float columns, arithmetic on columns, `IS NULL`, a `NULL` value — is *unknown* and becomes
//! `TRUE` where it stands. After the push every connective is monotone, so a `TRUE` in place of a
//! subformula only widens: every row the clause accepts satisfies the cover. The executor still
//! tests the whole clause on every row the protocol returns. A cover whose DNF would pass
//! [`MAX_TERMS`] terms is `TRUE` too (the naive lock manager expands it in full).
//!
//! A row's tuple ([`tuple`]) pins each integer column to its value; text and float columns, and any
//! column holding NULL, stay unconstrained, so the lock covers every row with those integers
//! (coarser, never finer). A NULL never makes a WHERE clause TRUE through a comparison (SQL's
//! three-valued logic), so neither side of a conflict test can miss a row for holding one.

use crate::catalog::TableDef;
use crate::expr::{Env, Expr, Op};
use crate::value::{Datum, SqlType};
use ordo::txn::predicate::{Expr as P, Op as POp, Predicate};

/// The most DNF terms a cover may expand to before it is widened to `TRUE`.
pub const MAX_TERMS: u64 = 256;

/// A predicate over `def`'s integer columns that every row satisfying `cond` satisfies; `None`
/// when that is every row (`TRUE`: lock the table's whole key range instead).
pub fn cover(def: &TableDef, cond: &Expr, params: &[Datum]) -> Option<Predicate> {
    let p = walk(def, cond, params, false).simplify();
    let small = ordo_predicate::dnf::term_count(&p) <= MAX_TERMS;
    match p {
        P::True => None,
        p if small && p.validate(def.columns.len().min(64) as u16).is_ok() => Some(p),
        _ => None,
    }
}

/// `cond` (negated when `neg`) as a predicate, unknown parts `TRUE` (see the module docs).
fn walk(def: &TableDef, cond: &Expr, params: &[Datum], neg: bool) -> Predicate {
    match cond {
        Expr::Bin(op @ (Op::And | Op::Or), a, b) => {
            let parts = vec![walk(def, a, params, neg), walk(def, b, params, neg)];
            // De Morgan: under a NOT, AND is OR and OR is AND.
            if (*op == Op::And) != neg {
                P::And(parts)
            } else {
                P::Or(parts)
            }
        }
        Expr::Not(x) => walk(def, x, params, !neg),
        Expr::Bin(op, l, r) => {
            let Some(op) = comparison(*op) else {
                return P::True;
            };
            match (&**l, &**r) {
                (Expr::Col(c), v) => atom_at(def, *c, op, v, params, neg),
                (v, Expr::Col(c)) => atom_at(def, *c, op.flipped(), v, params, neg),
                _ => P::True,
            }
        }
        Expr::Between { e, lo, hi, negated } => {
            let Expr::Col(c) = &**e else { return P::True };
            // x BETWEEN lo AND hi ≡ x ≥ lo ∧ x ≤ hi; negated by the clause and by a NOT outside.
            let neg = neg != *negated;
            let (l, h) = (
                atom_at(def, *c, POp::Ge, lo, params, neg),
                atom_at(def, *c, POp::Le, hi, params, neg),
            );
            if neg {
                P::Or(vec![l, h])
            } else {
                P::And(vec![l, h])
            }
        }
        Expr::InList { e, list, negated } => {
            let Expr::Col(c) = &**e else { return P::True };
            if list.is_empty() {
                return P::True;
            }
            let neg = neg != *negated;
            let parts = list
                .iter()
                .map(|v| atom_at(def, *c, POp::Eq, v, params, neg))
                .collect();
            if neg {
                P::And(parts)
            } else {
                P::Or(parts)
            }
        }
        Expr::Col(c) if def.columns[*c].ty == SqlType::Bool => {
            let col = *c as u16;
            P::atom(col, if neg { POp::Ne } else { POp::Eq }, 1)
        }
        _ => P::True,
    }
}

/// `column c op v`, negated when `neg`; `TRUE` when unknown.
fn atom_at(def: &TableDef, c: usize, op: POp, v: &Expr, params: &[Datum], neg: bool) -> Predicate {
    match (column(def, c), value(v, params)) {
        (Some(col), Some(x)) => P::atom(col, if neg { op.negated() } else { op }, x),
        _ => P::True,
    }
}

/// The predicate column of `def`'s column `c` if it is compared exactly as an integer (`INT`,
/// `BOOLEAN`) and within the lock manager's 64 columns.
fn column(def: &TableDef, c: usize) -> Option<u16> {
    let integer = matches!(def.columns.get(c)?.ty, SqlType::Int | SqlType::Bool);
    (integer && c < 64).then_some(c as u16)
}

/// The integer value of a row-free expression: an integer, or a boolean as 0 or 1. Anything else
/// (a float, a string, `NULL`, an error) is unknown.
fn value(v: &Expr, params: &[Datum]) -> Option<i64> {
    if !v.is_row_free() {
        return None;
    }
    let env = Env {
        row: &[],
        params,
        aggs: &[],
    };
    match v.eval(&env).ok()? {
        Datum::Int(x) => Some(x),
        Datum::Bool(b) => Some(i64::from(b)),
        _ => None,
    }
}

fn comparison(op: Op) -> Option<POp> {
    Some(match op {
        Op::Eq => POp::Eq,
        Op::Ne => POp::Ne,
        Op::Lt => POp::Lt,
        Op::Le => POp::Le,
        Op::Gt => POp::Gt,
        Op::Ge => POp::Ge,
        _ => return None,
    })
}

/// The tuple of `row` over `def`'s integer columns: each pinned to its value (`TRUE` if it has
/// none).
pub fn tuple(def: &TableDef, row: &[Datum]) -> Predicate {
    let atoms: Vec<Predicate> = row
        .iter()
        .enumerate()
        .filter_map(|(c, d)| {
            let col = column(def, c)?;
            let x = match d {
                Datum::Int(x) => *x,
                Datum::Bool(b) => i64::from(*b),
                _ => return None,
            };
            Some(P::eq(col, x))
        })
        .collect();
    P::And(atoms).simplify()
}

/// The tuples of a row before (`old`) and after (`new`) an update: `old ∨ new`, or `old` alone
/// when the update changed no integer column.
pub fn images(def: &TableDef, old: &[Datum], new: &[Datum]) -> Predicate {
    let (a, b) = (tuple(def, old), tuple(def, new));
    if a == b {
        a
    } else {
        P::Or(vec![a, b]).simplify()
    }
}

#[cfg(test)]
mod tests;
