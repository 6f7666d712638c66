//! Executing DML and queries on one transaction: INSERT, UPDATE, DELETE and SELECT (with
//! aggregates, GROUP BY, ORDER BY, LIMIT and FOR UPDATE), single-table except a SELECT's inner join
//! of two tables.
//!
//! Every statement reads through an access path ([`crate::access`]) and writes through the
//! protocol's [`Tx`], maintaining secondary indexes ([`crate::index`]) in the same transaction.
//! Subqueries are queries of the same transaction, run once per statement while it compiles.

use crate::access::{self, Row};
use crate::catalog::{Catalog, TableDef};
use crate::error::{SqlError, SqlResult};
use crate::expr::{self, Agg, AggFn, Env, Expr, Scope};
use crate::index;
use crate::key;
use crate::tuples;
use crate::unique;
use crate::value::Datum;
use ordo::storage::ColumnSet;
use ordo::txn::Tx;
use sqlparser::ast;
use std::cmp::Ordering;
use std::sync::atomic::Ordering as AtomicOrdering;

/// A query's result.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ResultSet {
    pub columns: Vec<String>,
    #[serde(serialize_with = "ser_rows")]
    pub rows: Vec<Vec<Datum>>,
}

fn ser_rows<S: serde::Serializer>(rows: &[Vec<Datum>], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(rows.len()))?;
    for r in rows {
        let v: Vec<serde_json::Value> = r
            .iter()
            .map(|d| match d {
                Datum::Null => serde_json::Value::Null,
                Datum::Int(v) => (*v).into(),
                Datum::Float(v) => (*v).into(),
                Datum::Text(t) => t.clone().into(),
                Datum::Bool(b) => (*b).into(),
                d @ (Datum::Date(_) | Datum::Timestamp(_) | Datum::TimestampTz(_)) => {
                    d.to_string().into()
                }
            })
            .collect();
        seq.serialize_element(&v)?;
    }
    seq.end()
}

/// What a statement returns.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    Rows(ResultSet),
    /// A command tag (`INSERT 0 2`, `BEGIN`).
    Command(String),
}

fn table<'c>(cat: &'c Catalog, name: &ast::ObjectName) -> SqlResult<&'c TableDef> {
    let n = expr::object_name(name)?;
    cat.table(&n).ok_or_else(|| SqlError::undefined_table(&n))
}

fn from_single(from: &[ast::TableWithJoins]) -> SqlResult<Option<&ast::ObjectName>> {
    match from {
        [] => Ok(None),
        [t] if t.joins.is_empty() => match &t.relation {
            ast::TableFactor::Table {
                name, args: None, ..
            } => Ok(Some(name)),
            other => Err(SqlError::unsupported(format!("FROM {other}"))),
        },
        _ => Err(SqlError::unsupported("joins (statements are single-table)")),
    }
}

/// Runs one DML or query statement on `tx`.
pub fn execute<T: Tx>(
    tx: &mut T,
    cat: &Catalog,
    stmt: &ast::Statement,
    params: &[Datum],
) -> SqlResult<Output> {
    match stmt {
        ast::Statement::Query(q) => select(tx, cat, q, params).map(Output::Rows),
        ast::Statement::Insert(ins) => insert(tx, cat, ins, params),
        ast::Statement::Update {
            table: t,
            assignments,
            from: None,
            selection,
            returning: None,
            or: None,
            limit: None,
        } => {
            let name = from_single(std::slice::from_ref(t))?
                .ok_or_else(|| SqlError::syntax("UPDATE needs a table"))?;
            update(
                tx,
                cat,
                table(cat, name)?,
                assignments,
                selection.as_ref(),
                params,
            )
        }
        ast::Statement::Delete(d) if d.using.is_none() && d.returning.is_none() => {
            let from = match &d.from {
                ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
            };
            let name =
                from_single(from)?.ok_or_else(|| SqlError::syntax("DELETE needs a table"))?;
            delete(tx, cat, table(cat, name)?, d.selection.as_ref(), params)
        }
        other => Err(SqlError::unsupported(format!(
            "statement {}",
            first_words(&other.to_string())
        ))),
    }
}

/// The command a statement that writes is reported as in a read-only transaction's error
/// (`INSERT`, `SELECT FOR UPDATE`); `None` for a statement that only reads.
pub fn write_command(stmt: &ast::Statement) -> Option<&'static str> {
    match stmt {
        ast::Statement::Insert(_) => Some("INSERT"),
        ast::Statement::Update { .. } => Some("UPDATE"),
        ast::Statement::Delete(_) => Some("DELETE"),
        ast::Statement::Query(q) => q.locks.first().map(|l| match l.lock_type {
            ast::LockType::Update => "SELECT FOR UPDATE",
            ast::LockType::Share => "SELECT FOR SHARE",
        }),
        _ => None,
    }
}

/// The first two words of a statement (for "not supported" messages).
pub fn first_words(s: &str) -> String {
    s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

fn where_clause<'a>(
    def: &'a TableDef,
    sel: Option<&ast::Expr>,
    sub: &'a mut expr::Subqueries<'a>,
) -> SqlResult<Option<Expr>> {
    sel.map(|e| expr::compile(e, &mut Scope::with_sub(Some(def), sub)))
        .transpose()
}

/// Runs a subquery of a statement whose FROM is `outer`: through the protocol, in the statement's
/// transaction. Only uncorrelated subqueries run: one that names a column of the outer query's row
/// is refused (`0A000`) rather than reported as an unknown column.
fn subquery<T: Tx>(
    tx: &mut T,
    cat: &Catalog,
    q: &ast::Query,
    params: &[Datum],
    outer: Option<&TableDef>,
) -> SqlResult<(usize, Vec<Vec<Datum>>)> {
    match select(tx, cat, q, params) {
        Ok(rs) => Ok((rs.columns.len(), rs.rows)),
        Err(e) if outer.is_some_and(|o| names_outer(&e, o)) => Err(SqlError::unsupported(
            "correlated subqueries (a subquery naming a column of the outer query)",
        )),
        Err(e) => Err(e),
    }
}

/// Whether `e` is an unknown column or table that `outer` knows: a subquery's reference to the
/// outer query's row.
fn names_outer(e: &SqlError, outer: &TableDef) -> bool {
    let quoted = e.message.split('"').nth(1).unwrap_or_default();
    match e.code {
        "42703" => outer.column(quoted).is_some(),
        "42P01" => e.message.starts_with("missing FROM-clause") && quoted == outer.name,
        _ => false,
    }
}

/// The candidate rows of `def` that satisfy `cond`.
fn matching<T: Tx>(
    tx: &mut T,
    def: &TableDef,
    cond: Option<&Expr>,
    params: &[Datum],
) -> SqlResult<Vec<Row>> {
    let path = access::choose(def, cond, params);
    filter(access::fetch(tx, def, &path)?, cond, params)
}

/// The rows that satisfy `cond` (all of them without one).
fn filter(
    rows: impl IntoIterator<Item = Row>,
    cond: Option<&Expr>,
    params: &[Datum],
) -> SqlResult<Vec<Row>> {
    let rows = rows.into_iter();
    let mut out = Vec::with_capacity(rows.size_hint().0);
    for (k, r) in rows {
        let keep = match cond {
            Some(c) => c.test(&Env {
                row: &r,
                params,
                aggs: &[],
            })?,
            None => true,
        };
        if keep {
            out.push((k, r));
        }
    }
    Ok(out)
}

fn insert<T: Tx>(
    tx: &mut T,
    cat: &Catalog,
    ins: &ast::Insert,
    params: &[Datum],
) -> SqlResult<Output> {
    let ast::TableObject::TableName(name) = &ins.table else {
        return Err(SqlError::unsupported("INSERT into a table function"));
    };
    if ins.on.is_some() || ins.returning.is_some() {
        return Err(SqlError::unsupported("INSERT ... ON CONFLICT / RETURNING"));
    }
    let def = table(cat, name)?;
    let targets: Vec<usize> = if ins.columns.is_empty() {
        (0..def.columns.len()).collect()
    } else {
        ins.columns
            .iter()
            .map(|c| {
                let n = expr::column_name(c);
                def.column(&n).ok_or_else(|| SqlError::undefined_column(&n))
            })
            .collect::<SqlResult<_>>()?
    };
    let values = match ins.source.as_deref() {
        Some(q) => match &*q.body {
            ast::SetExpr::Values(v) => &v.rows,
            // INSERT … SELECT: the query reads through the protocol in this transaction.
            _ => {
                let rs = select(tx, cat, q, params)?;
                let mut n = 0;
                for r in rs.rows {
                    // Fewer columns than targets leave the rest NULL, as in PostgreSQL.
                    if r.len() > targets.len() {
                        return Err(SqlError::syntax(
                            "INSERT has more expressions than target columns",
                        ));
                    }
                    let mut row = defaults(def, &targets[..r.len()]);
                    for (v, &c) in r.into_iter().zip(&targets) {
                        row[c] = v.coerce(def.columns[c].ty, &def.columns[c].name)?;
                    }
                    insert_row(tx, def, row)?;
                    n += 1;
                }
                return Ok(Output::Command(format!("INSERT 0 {n}")));
            }
        },
        None => return Err(SqlError::unsupported("INSERT without VALUES or a query")),
    };
    let mut n = 0;
    for tuple in values {
        if tuple.len() != targets.len() {
            return Err(SqlError::syntax(
                "INSERT has more expressions than target columns or fewer",
            ));
        }
        let mut row = defaults(def, &targets);
        for (e, &c) in tuple.iter().zip(&targets) {
            let mut sub = |q: &ast::Query| subquery(tx, cat, q, params, None);
            let x = expr::compile(e, &mut Scope::with_sub(None, &mut sub))?;
            let v = x.eval(&Env {
                row: &[],
                params,
                aggs: &[],
            })?;
            row[c] = v.coerce(def.columns[c].ty, &def.columns[c].name)?;
        }
        insert_row(tx, def, row)?;
        n += 1;
    }
    Ok(Output::Command(format!("INSERT 0 {n}")))
}

/// A new row before the values of columns `given` are set: every other column what an omitted
/// column stores (a sequence's next value, its DEFAULT, or NULL).
fn defaults(def: &TableDef, given: &[usize]) -> Vec<Datum> {
    def.columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if given.contains(&i) {
                Datum::Null
            } else {
                c.omitted()
            }
        })
        .collect()
}

/// Inserts one coerced row and its index entries.
fn insert_row<T: Tx>(tx: &mut T, def: &TableDef, row: Vec<Datum>) -> SqlResult<()> {
    crate::value::check_row(def, &row)?;
    let key = if def.primary_key.is_empty() {
        def.next_row_id.fetch_add(1, AtomicOrdering::Relaxed)
    } else {
        let vals: Vec<Datum> = def.primary_key.iter().map(|&c| row[c].clone()).collect();
        key::primary(&def.name, &vals)?
    };
    let tuple = tuples::tuple(def, &row);
    if let Err(a) = tx.insert_described(def.storage, key, &tuple, |r| {
        for (c, d) in row.iter().enumerate() {
            d.write_as(r, c, def.columns[c].ty);
        }
    }) {
        let mut e = SqlError::from(a);
        if e.code == "23505" {
            let cols: Vec<&str> = def
                .primary_key
                .iter()
                .map(|&c| def.columns[c].name.as_str())
                .collect();
            let vals: Vec<String> = def
                .primary_key
                .iter()
                .map(|&c| row[c].to_string())
                .collect();
            e.message = format!(
                "duplicate key value violates unique constraint \"{}_pkey\": Key ({})=({}) already exists.",
                def.name,
                cols.join(", "),
                vals.join(", ")
            );
        }
        return Err(e);
    }
    for idx in &def.indexes {
        index::add(tx, idx, &row[idx.column], key)?;
    }
    for u in &def.uniques {
        unique::add(tx, def, u, &row)?;
    }
    Ok(())
}

fn update<T: Tx>(
    tx: &mut T,
    cat: &Catalog,
    def: &TableDef,
    assignments: &[ast::Assignment],
    sel: Option<&ast::Expr>,
    params: &[Datum],
) -> SqlResult<Output> {
    let mut sets = Vec::new();
    let mut sub = |q: &ast::Query| subquery(tx, cat, q, params, Some(def));
    for a in assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        let name = expr::object_name(n)?;
        let c = def
            .column(&name)
            .ok_or_else(|| SqlError::undefined_column(&name))?;
        if def.primary_key.contains(&c) {
            return Err(SqlError::unsupported(format!(
                "updating primary key column \"{name}\""
            )));
        }
        sets.push((
            c,
            expr::compile(&a.value, &mut Scope::with_sub(Some(def), &mut sub))?,
        ));
    }
    let cond = where_clause(def, sel, &mut sub)?;
    let rows = matching(tx, def, cond.as_ref(), params)?;
    let cols = ColumnSet::of(&sets.iter().map(|(c, _)| *c).collect::<Vec<_>>());
    for (key, old) in &rows {
        let mut new = old.clone();
        for (c, e) in &sets {
            let v = e.eval(&Env {
                row: old,
                params,
                aggs: &[],
            })?;
            new[*c] = v.coerce(def.columns[*c].ty, &def.columns[*c].name)?;
        }
        crate::value::check_row(def, &new)?;
        let images = tuples::images(def, old, &new);
        tx.update_described(def.storage, *key, &images, cols, |r| {
            for (c, _) in &sets {
                new[*c].write_as(r, *c, def.columns[*c].ty);
            }
        })?;
        for idx in &def.indexes {
            let (a, b) = (&old[idx.column], &new[idx.column]);
            if a != b {
                index::remove(tx, idx, a, *key)?;
                index::add(tx, idx, b, *key)?;
            }
        }
        // Checked row by row, as PostgreSQL's (non-deferrable) unique constraints are.
        for u in &def.uniques {
            if u.columns.iter().any(|&c| old[c] != new[c]) {
                unique::remove(tx, def, u, old)?;
                unique::add(tx, def, u, &new)?;
            }
        }
    }
    Ok(Output::Command(format!("UPDATE {}", rows.len())))
}

fn delete<T: Tx>(
    tx: &mut T,
    cat: &Catalog,
    def: &TableDef,
    sel: Option<&ast::Expr>,
    params: &[Datum],
) -> SqlResult<Output> {
    let mut sub = |q: &ast::Query| subquery(tx, cat, q, params, Some(def));
    let cond = where_clause(def, sel, &mut sub)?;
    let rows = matching(tx, def, cond.as_ref(), params)?;
    for (key, old) in &rows {
        tx.delete_described(def.storage, *key, &tuples::tuple(def, old))?;
        for idx in &def.indexes {
            index::remove(tx, idx, &old[idx.column], *key)?;
        }
        for u in &def.uniques {
            unique::remove(tx, def, u, old)?;
        }
    }
    Ok(Output::Command(format!("DELETE {}", rows.len())))
}

/// An inner join of two tables: the tables, and the scope its expressions compile against (their
/// columns side by side, named `qualifier.column`, see [`expr::is_join`]).
struct Join<'c, 'q> {
    left: &'c TableDef,
    right: &'c TableDef,
    scope: TableDef,
    on: Option<&'q ast::Expr>,
}

/// `FROM a [AS x] [INNER] JOIN b [AS y] ON …` or `FROM a, b`; `None` for any other FROM.
fn join_from<'c, 'q>(
    cat: &'c Catalog,
    from: &'q [ast::TableWithJoins],
) -> SqlResult<Option<Join<'c, 'q>>> {
    let plain = |f: &ast::TableFactor| -> SqlResult<(&'c TableDef, String)> {
        match f {
            ast::TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let t = table(cat, name)?;
                let q = match alias {
                    Some(a) if a.columns.is_empty() => expr::column_name(&a.name),
                    Some(_) => return Err(SqlError::unsupported("column aliases in a join")),
                    None => t.name.clone(),
                };
                Ok((t, q))
            }
            other => Err(SqlError::unsupported(format!("FROM {other} in a join"))),
        }
    };
    let (l, r, on) = match from {
        [] => return Ok(None),
        [a, b] if a.joins.is_empty() && b.joins.is_empty() => (&a.relation, &b.relation, None),
        [a] => match a.joins.as_slice() {
            [] => return Ok(None),
            [j] => match &j.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => match c {
                    ast::JoinConstraint::On(e) => (&a.relation, &j.relation, Some(e)),
                    _ => return Err(SqlError::unsupported("joins other than JOIN … ON")),
                },
                ast::JoinOperator::CrossJoin(ast::JoinConstraint::None) => {
                    (&a.relation, &j.relation, None)
                }
                _ => {
                    return Err(SqlError::unsupported(
                        "outer and other joins (only inner joins)",
                    ))
                }
            },
            _ => return Err(SqlError::unsupported("joins of more than two tables")),
        },
        _ => return Err(SqlError::unsupported("joins of more than two tables")),
    };
    let ((left, lq), (right, rq)) = (plain(l)?, plain(r)?);
    if lq == rq {
        return Err(SqlError::new(
            "42712",
            format!("table name \"{lq}\" specified more than once"),
        ));
    }
    let mut columns = Vec::new();
    for (t, q) in [(left, &lq), (right, &rq)] {
        for c in &t.columns {
            let mut c = c.clone();
            c.name = format!("{q}.{}", c.name);
            columns.push(c);
        }
    }
    let scope = TableDef {
        name: String::new(),
        columns,
        primary_key: Vec::new(),
        indexes: Vec::new(),
        uniques: Vec::new(),
        storage: 0,
        next_row_id: std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0)),
    };
    Ok(Some(Join {
        left,
        right,
        scope,
        on,
    }))
}

/// The joined rows satisfying `cond` (over the join's scope), each read through the protocol: the
/// left table by the access path of the conditions on it alone, then for each of its rows the
/// right table by the path of `cond` with the left row's values in place (a join on the right
/// table's key is a point read per row); where that path would scan the whole right table, it is
/// scanned once instead.
fn join_rows<T: Tx>(
    tx: &mut T,
    j: &Join<'_, '_>,
    cond: Option<&Expr>,
    params: &[Datum],
) -> SqlResult<Vec<Row>> {
    let n = j.left.columns.len();
    let left_only: Vec<Expr> = cond
        .map(|c| c.conjuncts())
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            let mut only = true;
            e.map_cols(&mut |i| {
                only &= i < n;
                Expr::Col(i)
            });
            only
        })
        .cloned()
        .collect();
    let left_cond = left_only
        .into_iter()
        .reduce(|a, b| Expr::Bin(expr::Op::And, Box::new(a), Box::new(b)));
    let lefts = matching(tx, j.left, left_cond.as_ref(), params)?;
    let mut whole: Option<Vec<Row>> = None;
    let mut out = Vec::new();
    for (_, l) in lefts {
        let bound = cond.map(|c| {
            c.map_cols(&mut |i| {
                if i < n {
                    Expr::Const(l[i].clone())
                } else {
                    Expr::Col(i - n)
                }
            })
        });
        let rights = match access::choose(j.right, bound.as_ref(), params) {
            access::Path::Full | access::Path::Where(_) => {
                if whole.is_none() {
                    whole = Some(matching(tx, j.right, None, params)?);
                }
                let mut keep = Vec::new();
                for (k, r) in whole.as_ref().expect("fetched") {
                    let ok = match &bound {
                        Some(b) => b.test(&Env {
                            row: r,
                            params,
                            aggs: &[],
                        })?,
                        None => true,
                    };
                    if ok {
                        keep.push((*k, r.clone()));
                    }
                }
                keep
            }
            _ => matching(tx, j.right, bound.as_ref(), params)?,
        };
        for (_, r) in rights {
            let mut row = l.clone();
            row.extend(r);
            out.push((0, row));
        }
    }
    Ok(out)
}

/// Most rows a `generate_series` may make (they are held in memory).
pub const SERIES_MAX: i64 = 1_000_000;

/// `FROM generate_series(a, b [, step]) [AS] g[(c)]`, or `SELECT generate_series(a, b [, step])`
/// with no FROM: a one-column integer table (named `g`, column `c`, both `generate_series` if
/// unnamed), its rows, and whether it came from the select list. The series reads no storage.
fn generate_series(
    s: &ast::Select,
    params: &[Datum],
) -> SqlResult<Option<(TableDef, Vec<Row>, bool)>> {
    let is_series =
        |n: &ast::ObjectName| expr::object_name(n).is_ok_and(|n| n == "generate_series");
    let (args, name, column, in_list): (Vec<&ast::Expr>, String, String, bool) =
        match (s.from.as_slice(), s.projection.as_slice()) {
            ([t], _) if t.joins.is_empty() => match &t.relation {
                ast::TableFactor::Table {
                    name,
                    args: Some(a),
                    alias,
                    ..
                } if is_series(name) => {
                    let args = a
                        .args
                        .iter()
                        .map(|x| match x {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
                            _ => Err(SqlError::unsupported("arguments of generate_series()")),
                        })
                        .collect::<SqlResult<_>>()?;
                    let t = alias
                        .as_ref()
                        .map_or("generate_series".into(), |a| expr::column_name(&a.name));
                    let c = alias
                        .as_ref()
                        .and_then(|a| a.columns.first())
                        .map_or(t.clone(), |c| expr::column_name(&c.name));
                    (args, t, c, false)
                }
                _ => return Ok(None),
            },
            ([], [item]) => {
                let (e, alias) = match item {
                    ast::SelectItem::UnnamedExpr(e) => (e, None),
                    ast::SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias)),
                    _ => return Ok(None),
                };
                let ast::Expr::Function(f) = e else {
                    return Ok(None);
                };
                if !is_series(&f.name) {
                    return Ok(None);
                }
                let ast::FunctionArguments::List(l) = &f.args else {
                    return Err(SqlError::unsupported("this form of generate_series()"));
                };
                let args = l
                    .args
                    .iter()
                    .map(|x| match x {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
                        _ => Err(SqlError::unsupported("arguments of generate_series()")),
                    })
                    .collect::<SqlResult<_>>()?;
                let c = alias.map_or("generate_series".into(), expr::column_name);
                (args, "generate_series".into(), c, true)
            }
            _ => return Ok(None),
        };
    let vals: Vec<i64> = args
        .iter()
        .map(|e| {
            match expr::compile(e, &mut Scope::plain(None))?.eval(&Env {
                row: &[],
                params,
                aggs: &[],
            })? {
                Datum::Int(v) => Ok(v),
                d => Err(SqlError::unsupported(format!(
                    "generate_series over {}",
                    d.type_name()
                ))),
            }
        })
        .collect::<SqlResult<_>>()?;
    let (lo, hi, step) = match vals[..] {
        [a, b] => (a, b, 1),
        [a, b, c] => (a, b, c),
        _ => {
            return Err(SqlError::unsupported(
                "generate_series() without 2 or 3 arguments",
            ))
        }
    };
    if step == 0 {
        return Err(SqlError::new("22023", "step size cannot equal zero"));
    }
    let count = if (step > 0 && lo > hi) || (step < 0 && lo < hi) {
        0
    } else {
        (i128::from(hi) - i128::from(lo)) / i128::from(step) + 1
    };
    if count > i128::from(SERIES_MAX) {
        return Err(SqlError::unsupported(format!(
            "generate_series of more than {SERIES_MAX} rows"
        )));
    }
    let rows = (0..count as i64)
        .map(|i| (i as u64, vec![Datum::Int(lo + i * step)]))
        .collect();
    let def = TableDef {
        name,
        columns: vec![crate::catalog::ColumnDef {
            name: column,
            ty: crate::value::SqlType::Int,
            not_null: true,
            default: None,
            sequence: None,
        }],
        primary_key: Vec::new(),
        indexes: Vec::new(),
        uniques: Vec::new(),
        storage: 0,
        next_row_id: std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0)),
    };
    Ok(Some((def, rows, in_list)))
}

/// PostgreSQL's name for an unaliased output column.
fn output_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(id) => expr::column_name(id),
        ast::Expr::CompoundIdentifier(ids) => ids.last().map(expr::column_name).unwrap_or_default(),
        ast::Expr::Function(f) => f.name.to_string().to_lowercase(),
        ast::Expr::Nested(x) => output_name(x),
        // PostgreSQL names a cast column after the type (`'…'::date` is `date`).
        ast::Expr::Cast {
            expr, data_type, ..
        } => match output_name(expr).as_str() {
            "?column?" => type_column_name(data_type),
            n => n.to_string(),
        },
        ast::Expr::TypedString(ts) => type_column_name(&ts.data_type),
        // A scalar subquery is named after its one output column, as in PostgreSQL.
        ast::Expr::Subquery(q) => match &*q.body {
            ast::SetExpr::Select(s) => match s.projection.first() {
                Some(ast::SelectItem::UnnamedExpr(e)) => output_name(e),
                Some(ast::SelectItem::ExprWithAlias { alias, .. }) => expr::column_name(alias),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        ast::Expr::Exists { .. } => "exists".into(),
        _ => "?column?".into(),
    }
}

/// PostgreSQL's internal name of a type, which names a cast's output column.
fn type_column_name(t: &ast::DataType) -> String {
    match crate::ddl::sql_type(t) {
        Ok(crate::value::SqlType::Int) => match t {
            ast::DataType::BigInt(_) | ast::DataType::Int8(_) => "int8",
            ast::DataType::SmallInt(_) => "int2",
            _ => "int4",
        }
        .into(),
        Ok(crate::value::SqlType::Float) => "float8".into(),
        Ok(crate::value::SqlType::Bool) => "bool".into(),
        Ok(crate::value::SqlType::Date) => "date".into(),
        Ok(crate::value::SqlType::Timestamp) => "timestamp".into(),
        Ok(crate::value::SqlType::TimestampTz) => "timestamptz".into(),
        Ok(crate::value::SqlType::Text(_)) => match t {
            ast::DataType::Text => "text",
            ast::DataType::Char(_) | ast::DataType::Character(_) => "bpchar",
            _ => "varchar",
        }
        .into(),
        Err(_) => "?column?".into(),
    }
}

/// Per-group aggregate state.
fn fold(agg: &Agg, rows: &[&Vec<Datum>], params: &[Datum]) -> SqlResult<Datum> {
    let mut acc = Datum::Null;
    let mut count = 0i64;
    for r in rows {
        let v = match &agg.arg {
            Some(e) => e.eval(&Env {
                row: r,
                params,
                aggs: &[],
            })?,
            None => Datum::Int(1),
        };
        if v == Datum::Null {
            continue;
        }
        count += 1;
        acc = match (agg.func, acc) {
            (AggFn::Sum, Datum::Null) => v,
            (AggFn::Sum, a) => match (a, v) {
                (Datum::Int(x), Datum::Int(y)) => Datum::Int(
                    x.checked_add(y)
                        .ok_or_else(|| SqlError::new("22003", "bigint out of range"))?,
                ),
                (Datum::Int(x), Datum::Float(y)) | (Datum::Float(y), Datum::Int(x)) => {
                    Datum::Float(x as f64 + y)
                }
                (Datum::Float(x), Datum::Float(y)) => Datum::Float(x + y),
                (_, v) => {
                    return Err(SqlError::mismatch(format!(
                        "function sum({}) does not exist",
                        v.type_name()
                    )))
                }
            },
            (AggFn::Min, Datum::Null) | (AggFn::Max, Datum::Null) => v,
            (AggFn::Min, a) => {
                if v.sort_cmp(&a) == Ordering::Less {
                    v
                } else {
                    a
                }
            }
            (AggFn::Max, a) => {
                if v.sort_cmp(&a) == Ordering::Greater {
                    v
                } else {
                    a
                }
            }
            (AggFn::Count | AggFn::CountStar, _) => Datum::Null,
        };
    }
    Ok(match agg.func {
        AggFn::Count | AggFn::CountStar => Datum::Int(count),
        _ => acc,
    })
}

fn const_int(e: &ast::Expr, params: &[Datum], what: &str) -> SqlResult<i64> {
    let x = expr::compile(e, &mut Scope::plain(None))?;
    match x.eval(&Env {
        row: &[],
        params,
        aggs: &[],
    })? {
        Datum::Int(n) if n >= 0 => Ok(n),
        d => Err(SqlError::mismatch(format!(
            "{what} must be a non-negative integer, not {d}"
        ))),
    }
}

fn select<T: Tx>(
    tx: &mut T,
    cat: &Catalog,
    q: &ast::Query,
    params: &[Datum],
) -> SqlResult<ResultSet> {
    let ast::SetExpr::Select(s) = &*q.body else {
        return Err(SqlError::unsupported(format!(
            "query {}",
            first_words(&q.body.to_string())
        )));
    };
    if q.with.is_some() || s.distinct.is_some() || s.having.is_some() || q.fetch.is_some() {
        return Err(SqlError::unsupported("WITH, DISTINCT, HAVING or FETCH"));
    }
    let (series_def, series, in_list) = match generate_series(s, params)? {
        Some((d, rows, in_list)) => (Some(d), Some(rows), in_list),
        None => (None, None, false),
    };
    let join = join_from(cat, &s.from)?;
    let def = match (&series_def, &join) {
        (Some(d), _) => Some(d),
        (None, Some(j)) => Some(&j.scope),
        (None, None) => from_single(&s.from)?.map(|n| table(cat, n)).transpose()?,
    };
    let mut aggs = Vec::new();
    let mut names = Vec::new();
    let mut items = Vec::new();
    // `SELECT generate_series(a, b)`: the series is the source, its one column the output.
    let projection: &[ast::SelectItem] = match &series_def {
        Some(d) if in_list => {
            names.push(d.columns[0].name.clone());
            items.push(Expr::Col(0));
            &[]
        }
        _ => &s.projection,
    };
    let mut sub = |q: &ast::Query| subquery(tx, cat, q, params, def);
    for item in projection {
        let mut scope = Scope {
            table: def,
            aggs: Some(&mut aggs),
            sub: Some(&mut sub),
        };
        match item {
            ast::SelectItem::Wildcard(_) => {
                let d = def.ok_or_else(|| SqlError::syntax("SELECT * with no tables specified"))?;
                for (i, c) in d.columns.iter().enumerate() {
                    // A join's columns are qualified; the output names are the columns'.
                    let n = match expr::is_join(d) {
                        true => c.name.split_once('.').map_or(&*c.name, |(_, n)| n),
                        false => &c.name,
                    };
                    names.push(n.to_string());
                    items.push(Expr::Col(i));
                }
            }
            ast::SelectItem::UnnamedExpr(e) => {
                names.push(output_name(e));
                items.push(expr::compile(e, &mut scope)?);
            }
            ast::SelectItem::ExprWithAlias { expr: e, alias } => {
                names.push(expr::column_name(alias));
                items.push(expr::compile(e, &mut scope)?);
            }
            other => return Err(SqlError::unsupported(format!("select item {other}"))),
        }
    }
    let group: Vec<Expr> = match &s.group_by {
        ast::GroupByExpr::Expressions(es, mods) if mods.is_empty() => es
            .iter()
            .map(|e| expr::compile(e, &mut Scope::with_sub(def, &mut sub)))
            .collect::<SqlResult<_>>()?,
        ast::GroupByExpr::Expressions(..) | ast::GroupByExpr::All(_) => {
            return Err(SqlError::unsupported("this GROUP BY"))
        }
    };
    // ORDER BY: an output column (by name or position) or an expression.
    enum Key {
        Out(usize),
        Expr(Expr),
    }
    let mut order = Vec::new();
    if let Some(ob) = &q.order_by {
        let ast::OrderByKind::Expressions(list) = &ob.kind else {
            return Err(SqlError::unsupported("ORDER BY ALL"));
        };
        for o in list {
            let k = match &o.expr {
                ast::Expr::Identifier(id) if names.contains(&expr::column_name(id)) => Key::Out(
                    names
                        .iter()
                        .position(|n| *n == expr::column_name(id))
                        .expect("contained"),
                ),
                ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                    let n = const_int(&o.expr, params, "ORDER BY position")? as usize;
                    if n == 0 || n > names.len() {
                        return Err(SqlError::new(
                            "42P10",
                            format!("ORDER BY position {n} is not in select list"),
                        ));
                    }
                    Key::Out(n - 1)
                }
                e => Key::Expr(expr::compile(
                    e,
                    &mut Scope {
                        table: def,
                        aggs: Some(&mut aggs),
                        sub: Some(&mut sub),
                    },
                )?),
            };
            let asc = o.options.asc != Some(false);
            // PostgreSQL: NULLS LAST ascending, NULLS FIRST descending, unless said.
            let nulls_first = o.options.nulls_first.unwrap_or(!asc);
            order.push((k, asc, nulls_first));
        }
    }
    let mut cond = s
        .selection
        .as_ref()
        .map(|e| expr::compile(e, &mut Scope::with_sub(def, &mut sub)))
        .transpose()?;
    if let Some(on) = join.as_ref().and_then(|j| j.on) {
        let on = expr::compile(on, &mut Scope::with_sub(def, &mut sub))?;
        cond = Some(match cond {
            Some(w) => Expr::Bin(expr::Op::And, Box::new(on), Box::new(w)),
            None => on,
        });
    }
    let rows: Vec<Row> = match (def, series) {
        (Some(_), Some(series)) => {
            if !q.locks.is_empty() {
                return Err(SqlError::unsupported("FOR UPDATE of generate_series"));
            }
            filter(series, cond.as_ref(), params)?
        }
        (Some(_), None) if join.is_some() => {
            if !q.locks.is_empty() {
                return Err(SqlError::unsupported("FOR UPDATE of a join"));
            }
            let j = join.as_ref().expect("checked");
            join_rows(tx, j, cond.as_ref(), params)?
        }
        (Some(d), None) => matching(tx, d, cond.as_ref(), params)?,
        (None, _) => {
            let keep = match &cond {
                Some(c) => c.test(&Env {
                    row: &[],
                    params,
                    aggs: &[],
                })?,
                None => true,
            };
            if keep {
                vec![(0, Vec::new())]
            } else {
                Vec::new()
            }
        }
    };
    if !q.locks.is_empty() {
        let d = def.ok_or_else(|| SqlError::syntax("FOR UPDATE needs a table"))?;
        // Take each selected row for writing: an update that changes no column.
        for (k, r) in &rows {
            tx.update_described(d.storage, *k, &tuples::tuple(d, r), ColumnSet::ALL, |_| ())?;
        }
    }
    // Groups: (representative row, member rows).
    let grouped = !aggs.is_empty() || !group.is_empty();
    let mut groups: Vec<(Vec<Datum>, Vec<&Vec<Datum>>)> = Vec::new();
    if grouped {
        let null_row: Vec<Datum> = def
            .map(|d| d.columns.iter().map(|_| Datum::Null).collect())
            .unwrap_or_default();
        let mut keys: Vec<Vec<Datum>> = Vec::new();
        for (_, r) in &rows {
            let env = Env {
                row: r,
                params,
                aggs: &[],
            };
            let k: Vec<Datum> = group
                .iter()
                .map(|g| g.eval(&env))
                .collect::<SqlResult<_>>()?;
            match keys.iter().position(|x| {
                x.iter()
                    .zip(&k)
                    .all(|(a, b)| a.sort_cmp(b) == Ordering::Equal)
            }) {
                Some(i) => groups[i].1.push(r),
                None => {
                    keys.push(k);
                    groups.push((r.clone(), vec![r]));
                }
            }
        }
        if groups.is_empty() && group.is_empty() {
            groups.push((null_row, Vec::new()));
        }
    }
    let mut out: Vec<(Vec<Datum>, Vec<Datum>)> = Vec::new();
    let mut emit = |row: &[Datum], agg_vals: &[Datum]| -> SqlResult<()> {
        let env = Env {
            row,
            params,
            aggs: agg_vals,
        };
        let vals: Vec<Datum> = items
            .iter()
            .map(|e| e.eval(&env))
            .collect::<SqlResult<_>>()?;
        let keys: Vec<Datum> = order
            .iter()
            .map(|(k, _, _)| match k {
                Key::Out(i) => Ok(vals[*i].clone()),
                Key::Expr(e) => e.eval(&env),
            })
            .collect::<SqlResult<_>>()?;
        out.push((keys, vals));
        Ok(())
    };
    if grouped {
        for (rep, members) in &groups {
            let vals: Vec<Datum> = aggs
                .iter()
                .map(|a| fold(a, members, params))
                .collect::<SqlResult<_>>()?;
            emit(rep, &vals)?;
        }
    } else {
        for (_, r) in &rows {
            emit(r, &[])?;
        }
    }
    if !order.is_empty() {
        out.sort_by(|a, b| {
            for (i, (_, asc, nulls_first)) in order.iter().enumerate() {
                let (x, y) = (&a.0[i], &b.0[i]);
                let o = match (x == &Datum::Null, y == &Datum::Null) {
                    (true, true) => Ordering::Equal,
                    (true, false) if *nulls_first => Ordering::Less,
                    (true, false) => Ordering::Greater,
                    (false, true) if *nulls_first => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    (false, false) if *asc => x.sort_cmp(y),
                    (false, false) => x.sort_cmp(y).reverse(),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    let mut rows: Vec<Vec<Datum>> = out.into_iter().map(|(_, v)| v).collect();
    if let Some(lc) = &q.limit_clause {
        let (limit, offset) = match lc {
            ast::LimitClause::LimitOffset { limit, offset, .. } => {
                (limit.as_ref(), offset.as_ref().map(|o| &o.value))
            }
            ast::LimitClause::OffsetCommaLimit { offset, limit } => (Some(limit), Some(offset)),
        };
        if let Some(o) = offset {
            let n = const_int(o, params, "OFFSET")? as usize;
            rows.drain(..n.min(rows.len()));
        }
        if let Some(l) = limit {
            rows.truncate(const_int(l, params, "LIMIT")? as usize);
        }
    }
    Ok(ResultSet {
        columns: names,
        rows,
    })
}
