//! Access paths: how a statement's WHERE clause turns into protocol reads.
//!
//! | WHERE shape                                   | access path           | protocol read            |
//! |-----------------------------------------------|-----------------------|--------------------------|
//! | `pk = v` (every key column), `pk IN (...)`    | [`Path::Points`]      | `get` per key            |
//! | `<`, `<=`, `>`, `>=`, `BETWEEN`, `=` on a one-column primary key | [`Path::Range`] | `scan` of the table range |
//! | the same on an indexed column                 | [`Path::Index`]       | `scan` of the index range, then `get` per row |
//! | anything else with integer comparisons        | [`Path::Where`]       | `scan_where` of their cover ([`crate::tuples::cover`]) |
//! | anything else                                 | [`Path::Full`]        | `scan` of the whole table |
//!
//! Scans are predicate reads: the protocol, not this layer, keeps phantoms out of them. A protocol
//! with predicate locks (DIBS) locks a [`Path::Where`]'s predicate itself, so a writer of rows
//! outside it runs alongside; every other protocol scans every key for it. The executor
//! always re-checks the whole WHERE clause on the rows a path returns, so a path only has to return a
//! superset (index keys of long strings are prefixes, see [`crate::key`]).

use crate::catalog::{IndexDef, TableDef};
use crate::error::SqlResult;
use crate::expr::{Env, Expr, Op};
use crate::key;
use crate::value::Datum;
use ordo::storage::ColumnSet;
use ordo::txn::predicate::Predicate;
use ordo::txn::Tx;

/// How to find the candidate rows.
#[derive(Debug)]
pub enum Path<'a> {
    Points(Vec<u64>),
    Range(u64, u64),
    Index(&'a IndexDef, u64, u64),
    /// Every row satisfying a predicate over integer columns (a cover of the WHERE clause).
    Where(Predicate),
    Full,
}

/// Bounds found for one column.
#[derive(Default)]
struct Bounds {
    eq: Option<Datum>,
    list: Option<Vec<Datum>>,
    lo: Option<(Datum, bool)>,
    hi: Option<(Datum, bool)>,
}

fn flip(op: Op) -> Op {
    match op {
        Op::Lt => Op::Gt,
        Op::Le => Op::Ge,
        Op::Gt => Op::Lt,
        Op::Ge => Op::Le,
        o => o,
    }
}

/// Collects the sargable terms of `cond` per column.
fn bounds(def: &TableDef, cond: &Expr, params: &[Datum]) -> Vec<Bounds> {
    let mut b: Vec<Bounds> = def.columns.iter().map(|_| Bounds::default()).collect();
    let env = Env {
        row: &[],
        params,
        aggs: &[],
    };
    let val = |e: &Expr| -> Option<Datum> {
        if !e.is_row_free() {
            return None;
        }
        e.eval(&env).ok().filter(|d| *d != Datum::Null)
    };
    for term in cond.conjuncts() {
        match term {
            Expr::Bin(op, l, r) => {
                let (c, op, v) = match (&**l, &**r) {
                    (Expr::Col(c), e) => (*c, *op, e),
                    (e, Expr::Col(c)) => (*c, flip(*op), e),
                    _ => continue,
                };
                let Some(v) = val(v) else { continue };
                match op {
                    Op::Eq => b[c].eq = Some(v),
                    Op::Gt => b[c].lo = Some((v, false)),
                    Op::Ge => b[c].lo = Some((v, true)),
                    Op::Lt => b[c].hi = Some((v, false)),
                    Op::Le => b[c].hi = Some((v, true)),
                    _ => {}
                }
            }
            Expr::Between {
                e,
                lo,
                hi,
                negated: false,
            } => {
                if let (Expr::Col(c), Some(l), Some(h)) = (&**e, val(lo), val(hi)) {
                    b[*c].lo = Some((l, true));
                    b[*c].hi = Some((h, true));
                }
            }
            Expr::InList {
                e,
                list,
                negated: false,
            } => {
                if let Expr::Col(c) = &**e {
                    let vals: Option<Vec<Datum>> = list.iter().map(val).collect();
                    b[*c].list = vals;
                }
            }
            _ => {}
        }
    }
    b
}

/// The inclusive key range of a column's bounds (a superset of the matching values' keys).
fn key_range(b: &Bounds) -> Option<(u64, u64)> {
    if let Some(v) = &b.eq {
        let k = key::prefix(v);
        return Some((k, k));
    }
    if let Some(list) = &b.list {
        let keys = list.iter().map(key::prefix);
        return Some((keys.clone().min()?, keys.max()?));
    }
    if b.lo.is_none() && b.hi.is_none() {
        return None;
    }
    let lo = match &b.lo {
        Some((v, incl)) => {
            let k = key::prefix(v);
            if !incl && key::prefix_is_exact(v) {
                k.saturating_add(1)
            } else {
                k
            }
        }
        None => 0,
    };
    let hi = match &b.hi {
        Some((v, incl)) => {
            let k = key::prefix(v);
            if !incl && key::prefix_is_exact(v) {
                k.saturating_sub(1)
            } else {
                k
            }
        }
        None => u64::MAX,
    };
    Some((lo, hi))
}

/// Whether `d` can be compared with values of column `c` by key (same kind of type).
fn same_kind(def: &TableDef, c: usize, d: &Datum) -> bool {
    use crate::value::SqlType as T;
    matches!(
        (def.columns[c].ty, d),
        (T::Int, Datum::Int(_))
            | (T::Float, Datum::Float(_))
            | (T::Text(_), Datum::Text(_))
            | (T::Bool, Datum::Bool(_))
            | (T::Date, Datum::Date(_))
            | (T::Timestamp, Datum::Timestamp(_))
            | (T::TimestampTz, Datum::TimestampTz(_))
    )
}

/// Chooses the access path for `cond` on `def`.
pub fn choose<'a>(def: &'a TableDef, cond: Option<&Expr>, params: &[Datum]) -> Path<'a> {
    let Some(cond) = cond else { return Path::Full };
    let mut b = bounds(def, cond, params);
    // A quoted literal compared with a date or timestamp column is one of its type (as the
    // comparison itself reads it); one that does not parse bounds nothing (the comparison fails).
    for (c, cb) in b.iter_mut().enumerate() {
        use crate::value::SqlType as T;
        let ty = def.columns[c].ty;
        if !matches!(ty, T::Date | T::Timestamp | T::TimestampTz) {
            continue;
        }
        let as_ty = |d: &mut Datum| {
            if let Datum::Text(s) = d {
                if let Ok(v) = Datum::Text(s.clone()).cast(ty) {
                    *d = v;
                }
            }
        };
        cb.eq.iter_mut().for_each(as_ty);
        cb.list.iter_mut().flatten().for_each(as_ty);
        cb.lo.iter_mut().for_each(|(d, _)| as_ty(d));
        cb.hi.iter_mut().for_each(|(d, _)| as_ty(d));
    }
    // Keep only values whose key order is the column's value order.
    for (c, cb) in b.iter_mut().enumerate() {
        if cb.eq.as_ref().is_some_and(|v| !same_kind(def, c, v)) {
            cb.eq = None;
        }
        if cb
            .list
            .as_ref()
            .is_some_and(|l| l.iter().any(|v| !same_kind(def, c, v)))
        {
            cb.list = None;
        }
        if cb.lo.as_ref().is_some_and(|(v, _)| !same_kind(def, c, v)) {
            cb.lo = None;
        }
        if cb.hi.as_ref().is_some_and(|(v, _)| !same_kind(def, c, v)) {
            cb.hi = None;
        }
    }
    let pk = &def.primary_key;
    if !pk.is_empty() && pk.iter().all(|&c| b[c].eq.is_some()) {
        let vals: Vec<Datum> = pk.iter().map(|&c| b[c].eq.clone().unwrap()).collect();
        // A value that cannot be a key matches no stored row.
        return Path::Points(key::primary(&def.name, &vals).into_iter().collect());
    }
    if let [c] = pk[..] {
        if let Some(list) = &b[c].list {
            let mut keys: Vec<u64> = list
                .iter()
                .filter_map(|v| key::primary(&def.name, std::slice::from_ref(v)).ok())
                .collect();
            keys.sort_unstable();
            keys.dedup();
            return Path::Points(keys);
        }
        if let Some((lo, hi)) = key_range(&b[c]) {
            return Path::Range(lo, hi);
        }
    }
    for idx in &def.indexes {
        if let Some((lo, hi)) = key_range(&b[idx.column]) {
            return Path::Index(idx, lo, hi);
        }
    }
    match crate::tuples::cover(def, cond, params) {
        Some(p) => Path::Where(p),
        None => Path::Full,
    }
}

/// A row read by a path: its storage key and its values.
pub type Row = (u64, Vec<Datum>);

/// Reads the row with storage key `key`.
pub fn get<T: Tx>(tx: &mut T, def: &TableDef, key: u64) -> SqlResult<Option<Vec<Datum>>> {
    Ok(tx
        .get(def.storage, key, ColumnSet::ALL)?
        .map(|r| decode(def, &r)))
}

fn decode(def: &TableDef, r: &ordo::storage::RowRef<'_>) -> Vec<Datum> {
    def.columns
        .iter()
        .enumerate()
        .map(|(i, c)| Datum::read(r, i, c.ty, !c.not_null))
        .collect()
}

/// Runs `path` through the protocol and returns the candidate rows, in key order.
pub fn fetch<T: Tx>(tx: &mut T, def: &TableDef, path: &Path<'_>) -> SqlResult<Vec<Row>> {
    let mut out = Vec::new();
    match path {
        Path::Points(keys) => {
            for &k in keys {
                if let Some(r) = get(tx, def, k)? {
                    out.push((k, r));
                }
            }
        }
        Path::Range(lo, hi) => scan(tx, def, *lo, *hi, &mut out)?,
        Path::Full => scan(tx, def, 0, u64::MAX, &mut out)?,
        Path::Where(p) => tx.scan_where(def.storage, p, ColumnSet::ALL, |k, r| {
            out.push((k, decode(def, &r)));
            true
        })?,
        Path::Index(idx, lo, hi) => {
            if lo > hi {
                return Ok(out);
            }
            let mut keys = Vec::new();
            tx.scan(idx.storage, *lo, *hi, ColumnSet::ALL, |_, r| {
                keys.extend(crate::index::postings(r.str(0)));
                true
            })?;
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                if let Some(r) = get(tx, def, k)? {
                    out.push((k, r));
                }
            }
        }
    }
    Ok(out)
}

fn scan<T: Tx>(tx: &mut T, def: &TableDef, lo: u64, hi: u64, out: &mut Vec<Row>) -> SqlResult<()> {
    if lo > hi {
        return Ok(());
    }
    tx.scan(def.storage, lo, hi, ColumnSet::ALL, |k, r| {
        out.push((k, decode(def, &r)));
        true
    })?;
    Ok(())
}
