//! A WHERE clause as a lock predicate that covers it: every row the clause selects satisfies the
//! predicate (see the module docs of [`super`] for the rules, and `tests/lock_cover.rs` in
//! `ordo-backends` for the check against SQLite).

use super::columns::column_ref;
use super::{ColumnKind, LockTable};
use ordo_predicate::predicate::{float_key, string_key, ColumnId, Op};
use ordo_predicate::{Expr, Predicate};
use sqlparser::ast::{self, Expr as E};

/// The lock predicate of a WHERE clause: `TRUE` without one.
pub(super) fn where_predicate(
    selection: Option<&E>,
    t: &LockTable,
    alias: Option<&str>,
) -> Predicate {
    selection
        .and_then(|e| cover(e, t, alias, true, 0))
        .unwrap_or(Expr::True)
}

pub(super) fn conjunction(mut parts: Vec<Predicate>) -> Predicate {
    match parts.len() {
        0 => Expr::True,
        1 => parts.pop().expect("one part"),
        _ => Expr::and(parts),
    }
}

pub(super) fn disjunction(mut parts: Vec<Predicate>) -> Predicate {
    if parts.contains(&Expr::True) {
        return Expr::True;
    }
    match parts.len() {
        0 => Expr::False,
        1 => parts.pop().expect("one part"),
        _ => Expr::or(parts),
    }
}

/// Deepest WHERE nesting translated; deeper is unknown (the lock manager's own limit is 64).
const MAX_DEPTH: usize = 32;

/// A predicate that covers `e` (when `positive`) or `¬e` (when not) over `t`'s columns: every row
/// that satisfies it satisfies the result. `None`: unknown, every row. Negation is pushed down to
/// the atoms (De Morgan), and only *exact* atoms are negated: the negation of a widened atom (a
/// string's prefix key) would narrow, so it is unknown.
fn cover(
    e: &E,
    t: &LockTable,
    alias: Option<&str>,
    positive: bool,
    depth: usize,
) -> Option<Predicate> {
    if depth > MAX_DEPTH {
        return None;
    }
    let d = depth + 1;
    // `parts` joined by AND (`all`) or OR, covering each part with the same polarity: unknown
    // conjuncts are dropped, an unknown disjunct makes the whole unknown.
    let join = |parts: [&E; 2], all: bool| -> Option<Predicate> {
        let covers = parts.map(|x| cover(x, t, alias, positive, d));
        if all {
            Some(conjunction(covers.into_iter().flatten().collect()))
        } else {
            Some(disjunction(covers.into_iter().collect::<Option<Vec<_>>>()?))
        }
    };
    // An exact predicate under the polarity; a widened one only when positive.
    let polar = |p: Predicate, exact: bool| -> Option<Predicate> {
        match (positive, exact) {
            (true, _) => Some(p),
            (false, true) => Some(p.negate()),
            (false, false) => None,
        }
    };
    match e {
        E::Nested(x) => cover(x, t, alias, positive, d),
        // ¬(a ∧ b) = ¬a ∨ ¬b, ¬(a ∨ b) = ¬a ∧ ¬b.
        E::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => join([left, right], positive),
        E::BinaryOp {
            left,
            op: ast::BinaryOperator::Or,
            right,
        } => join([left, right], !positive),
        E::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => cover(expr, t, alias, !positive, d),
        E::BinaryOp { left, op, right } => {
            let op = match op {
                ast::BinaryOperator::Eq => Op::Eq,
                ast::BinaryOperator::NotEq => Op::Ne,
                ast::BinaryOperator::Lt => Op::Lt,
                ast::BinaryOperator::LtEq => Op::Le,
                ast::BinaryOperator::Gt => Op::Gt,
                ast::BinaryOperator::GtEq => Op::Ge,
                _ => return None,
            };
            let (p, exact) = if let Some(c) = column_ref(left, t, alias) {
                literal_atom(t, c, op, right)?
            } else {
                let c = column_ref(right, t, alias)?;
                literal_atom(t, c, op.flipped(), left)?
            };
            polar(p, exact)
        }
        E::InList {
            expr,
            list,
            negated,
        } => {
            let c = column_ref(expr, t, alias)?;
            let atoms = list
                .iter()
                .map(|x| literal_atom(t, c, Op::Eq, x))
                .collect::<Option<Vec<_>>>()?;
            let exact = atoms.iter().all(|a| a.1);
            let p = disjunction(atoms.into_iter().map(|a| a.0).collect());
            if *negated {
                (if positive { Some(p.negate()) } else { Some(p) }).filter(|_| exact || !positive)
            } else {
                polar(p, exact)
            }
        }
        E::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let c = column_ref(expr, t, alias)?;
            let (lo, lo_exact) = literal_atom(t, c, Op::Ge, low)?;
            let (hi, hi_exact) = literal_atom(t, c, Op::Le, high)?;
            let p = conjunction(vec![lo, hi]);
            let exact = lo_exact && hi_exact;
            if *negated {
                (if positive { Some(p.negate()) } else { Some(p) }).filter(|_| exact || !positive)
            } else {
                polar(p, exact)
            }
        }
        // A bare boolean column: `WHERE on_call`.
        E::Identifier(_) | E::CompoundIdentifier(_) => {
            let c = column_ref(e, t, alias)?;
            if t.columns[c as usize].1 != ColumnKind::Bool {
                return None;
            }
            polar(Expr::eq(c, 1), true)
        }
        _ => None,
    }
}

/// The literal `e` as a number or string, through unary minus and parentheses.
enum Lit<'a> {
    Number(&'a str, bool),
    Text(&'a str),
    Bool(bool),
}

fn literal(e: &E) -> Option<Lit<'_>> {
    match e {
        E::Nested(x) => literal(x),
        E::Value(v) => match &v.value {
            ast::Value::Number(n, _) => Some(Lit::Number(n, false)),
            ast::Value::SingleQuotedString(s) => Some(Lit::Text(s)),
            ast::Value::Boolean(b) => Some(Lit::Bool(*b)),
            _ => None,
        },
        E::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match literal(expr)? {
            Lit::Number(n, neg) => Some(Lit::Number(n, !neg)),
            _ => None,
        },
        _ => None,
    }
}

/// `column op literal` encoded for the column's type, and whether the encoding is exact (its
/// negation is then the negated comparison); `None` when the literal is not of the column's type.
pub(super) fn literal_atom(t: &LockTable, c: ColumnId, op: Op, e: &E) -> Option<(Predicate, bool)> {
    let kind = t.columns.get(c as usize)?.1;
    match (kind, literal(e)?) {
        (ColumnKind::Int, Lit::Number(n, neg)) => {
            let v: i64 = n.parse().ok()?;
            Some((
                Expr::atom(c, op, if neg { v.checked_neg()? } else { v }),
                true,
            ))
        }
        (ColumnKind::Float, Lit::Number(n, neg)) => {
            let v: f64 = n.parse().ok()?;
            Some((
                Expr::atom(c, op, float_key(if neg { -v } else { v }).ok()?),
                true,
            ))
        }
        (ColumnKind::Bool, Lit::Bool(b)) => Some((Expr::atom(c, op, i64::from(b)), true)),
        (ColumnKind::Text, Lit::Text(s)) => {
            let folded = s.trim_end_matches(' ');
            if op != Op::Eq || !folded.is_ascii() {
                return Some((Expr::True, false));
            }
            Some((
                Expr::atom(c, Op::Eq, string_key(&folded.to_ascii_lowercase())),
                false,
            ))
        }
        _ => None,
    }
}
