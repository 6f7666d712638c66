//! What a SQL statement touches, as DIBS predicate locks (§3.3 of Gaffney, Claus, Patel 2021): the
//! relation, the kind of statement, a predicate over the relation's columns and the columns it reads
//! and writes. The lock layer in front of a real engine ([`ordo_predicate::LockManager`]) takes these
//! before it sends the statement, whatever engine runs it.
//!
//! ```text
//! SELECT .. FROM t WHERE p          → (t, Select, p, read = columns named, write = ∅)
//! UPDATE t SET c = e WHERE p        → (t, Update, p, read = columns of e, write = {c})
//! INSERT INTO t VALUES (v0, v1, ..) → (t, Insert, c0 = v0 ∧ c1 = v1 ∧ .., every column)
//! DELETE FROM t WHERE p             → (t, Delete, p, every column)
//! ```
//!
//! **Never a missed conflict.** A predicate is translated atom by atom: `column op literal` (either
//! side), `IN (..)`, `BETWEEN`, `AND`, `OR`, `NOT`, a bare boolean column, with `NOT` pushed down to
//! the atoms first. Anything else is *unknown* and widens: an unknown conjunct is dropped (the
//! conjunction of the rest covers more rows), an unknown disjunct makes the whole predicate `TRUE`
//! (every row of the relation); a widened atom (a string's key) is unknown under a `NOT`, whose
//! negation would narrow it. `tests/lock_cover.rs` (in `ordo-backends`) checks the result against
//! the rows SQLite finds with random WHERE clauses. Columns are read the same way: a `*`, or an expression the walker does not know,
//! reads every column. Statements over several tables (joins, subqueries, `INSERT .. SELECT`) lock
//! every table they name with `TRUE` over every column.
//!
//! **Literals** are encoded by the column's declared type, as [`ordo_predicate::predicate`]
//! describes: integers as themselves, floats by `float_key`, booleans as 0 and 1. Strings lock by
//! their first 8 bytes, case-folded and with trailing blanks trimmed, and only for `=`: MariaDB's
//! default collation compares `'Alice' = 'alice  '` as equal, so a finer key could miss a conflict;
//! `<`, `>` and non-ASCII strings lock the whole column range. A literal of another type than the
//! column's (or `NULL`, or a parameter) is unknown.
//!
//! The [`Schema`] learns tables from `CREATE TABLE` (column names and types, a one-column primary
//! key as the filter column of §2.2.3) and forgets them on `DROP TABLE`.

use crate::expr::{column_name, object_name};
use ordo_predicate::predicate::{float_key, string_key, ColumnId, Op};
use ordo_predicate::{ColumnSet, Expr, Predicate, RelationSpec, StatementKind};
use sqlparser::ast::{self, DataType as D, Expr as E};

/// Buckets per relation (the public artifact's N).
pub const BUCKETS: u32 = 1024;

/// How literals compared with a column are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    Int,
    Float,
    Text,
    Bool,
    /// A type the lock layer does not encode (dates, decimals): every atom on it is unknown.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockTable {
    pub name: String,
    pub columns: Vec<(String, ColumnKind)>,
    /// A one-column primary key: the filter column.
    pub key: Option<ColumnId>,
}

impl LockTable {
    fn column(&self, name: &str) -> Option<ColumnId> {
        self.columns
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| i as ColumnId)
    }

    fn all(&self) -> ColumnSet {
        ColumnSet::all(self.columns.len() as u16)
    }
}

/// A statement's one table: its relation id, definition and alias.
type Single<'s, 'a> = (u32, &'s LockTable, Option<&'a str>);

/// The tables the lock layer knows; a table's position is its relation id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schema {
    pub tables: Vec<LockTable>,
}

/// One lock a statement takes.
#[derive(Debug, Clone, PartialEq)]
pub struct LockRequest {
    pub relation: ordo_predicate::RelationId,
    pub kind: StatementKind,
    pub predicate: Predicate,
    pub read: ColumnSet,
    pub write: ColumnSet,
}

impl LockRequest {
    pub fn request(&self) -> ordo_predicate::Request<'_> {
        ordo_predicate::Request {
            relation: self.relation,
            kind: self.kind,
            predicate: &self.predicate,
            read: self.read,
            write: self.write,
        }
    }
}

/// Why a statement cannot be locked: it names a table the schema does not know, or one too wide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the lock layer {0}")]
pub struct LockError(String);

fn kind_of(t: &D) -> ColumnKind {
    match t {
        D::Int(_)
        | D::Integer(_)
        | D::BigInt(_)
        | D::SmallInt(_)
        | D::TinyInt(_)
        | D::MediumInt(_)
        | D::Int2(_)
        | D::Int4(_)
        | D::Int8(_) => ColumnKind::Int,
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real | D::Float4 | D::Float8 => {
            ColumnKind::Float
        }
        D::Text | D::Varchar(_) | D::Char(_) | D::Character(_) | D::CharacterVarying(_) => {
            ColumnKind::Text
        }
        D::Bool | D::Boolean => ColumnKind::Bool,
        _ => ColumnKind::Other,
    }
}

impl Schema {
    pub fn table(&self, name: &str) -> Option<(u32, &LockTable)> {
        self.tables
            .iter()
            .enumerate()
            .find(|(_, t)| t.name == name)
            .map(|(i, t)| (i as u32, t))
    }

    /// The lock manager's relations.
    pub fn relation_specs(&self) -> Vec<RelationSpec> {
        self.tables
            .iter()
            .map(|t| RelationSpec::new(&t.name, t.columns.len().max(1) as u16, t.key, BUCKETS))
            .collect()
    }

    /// Learns from DDL: `CREATE TABLE` adds a table (replacing one of the same name), `DROP TABLE`
    /// removes it. Other statements are ignored. A table wider than 64 columns is refused.
    pub fn observe(&mut self, stmt: &ast::Statement) -> Result<(), LockError> {
        match stmt {
            ast::Statement::CreateTable(ct) => {
                let name = object_name(&ct.name).map_err(|e| LockError(e.message))?;
                if ct.columns.len() > 64 {
                    return Err(LockError(format!(
                        "locks tables of at most 64 columns; \"{name}\" has {}",
                        ct.columns.len()
                    )));
                }
                let columns: Vec<(String, ColumnKind)> = ct
                    .columns
                    .iter()
                    .map(|c| (column_name(&c.name), kind_of(&c.data_type)))
                    .collect();
                let mut pk: Vec<usize> = ct
                    .columns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| {
                        c.options.iter().any(|o| {
                            matches!(
                                o.option,
                                ast::ColumnOption::Unique {
                                    is_primary: true,
                                    ..
                                }
                            )
                        })
                    })
                    .map(|(i, _)| i)
                    .collect();
                for tc in &ct.constraints {
                    if let ast::TableConstraint::PrimaryKey { columns: cols, .. } = tc {
                        for ic in cols {
                            let n = ic.column.expr.to_string().to_lowercase();
                            if let Some(i) = columns.iter().position(|(c, _)| *c == n) {
                                pk.push(i);
                            }
                        }
                    }
                }
                let key = match pk.as_slice() {
                    [k] => Some(*k as ColumnId),
                    _ => None,
                };
                self.tables.retain(|t| t.name != name);
                self.tables.push(LockTable { name, columns, key });
            }
            ast::Statement::Drop {
                object_type: ast::ObjectType::Table,
                names,
                ..
            } => {
                for n in names {
                    if let Ok(n) = object_name(n) {
                        self.tables.retain(|t| t.name != n);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The locks `stmt` takes; empty for statements that touch no table's rows (transaction
    /// control, `SET`, DDL).
    pub fn requests(&self, stmt: &ast::Statement) -> Result<Vec<LockRequest>, LockError> {
        match stmt {
            ast::Statement::Query(q) => self.query(q),
            ast::Statement::Insert(ins) => self.insert(ins),
            ast::Statement::Update {
                table,
                assignments,
                from,
                selection,
                returning,
                ..
            } => {
                let Some((rel, t, alias)) = self.single(std::slice::from_ref(table))? else {
                    return self.coarse_all(stmt, StatementKind::Update);
                };
                if from.is_some() {
                    return self.coarse_all(stmt, StatementKind::Update);
                }
                let mut write = ColumnSet::NONE;
                let mut read = ColumnSet::NONE;
                for a in assignments {
                    let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                        write = t.all();
                        continue;
                    };
                    let c =
                        n.0.last()
                            .and_then(|p| p.as_ident())
                            .and_then(|id| t.column(&column_name(id)));
                    write = match c {
                        Some(c) => write.union(ColumnSet::of(&[c])),
                        None => t.all(),
                    };
                    read = read.union(columns(&a.value, t, alias));
                }
                if let Some(r) = returning {
                    read = read.union(items(r, t, alias));
                }
                let mut out = vec![LockRequest {
                    relation: rel,
                    kind: StatementKind::Update,
                    predicate: where_predicate(selection.as_ref(), t, alias),
                    read: read.union(where_columns(selection.as_ref(), t, alias)),
                    write,
                }];
                out.extend(self.others(&stmt.to_string(), rel));
                Ok(out)
            }
            ast::Statement::Delete(d) => {
                let from = match &d.from {
                    ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
                };
                match self.single(from)? {
                    Some((rel, t, alias)) if d.using.is_none() => {
                        let mut out = vec![LockRequest {
                            relation: rel,
                            kind: StatementKind::Delete,
                            predicate: where_predicate(d.selection.as_ref(), t, alias),
                            read: t.all(),
                            write: t.all(),
                        }];
                        out.extend(self.others(&stmt.to_string(), rel));
                        Ok(out)
                    }
                    _ => self.coarse_all(stmt, StatementKind::Delete),
                }
            }
            _ => Ok(Vec::new()),
        }
    }

    fn lookup(&self, name: &ast::ObjectName) -> Result<(u32, &LockTable), LockError> {
        let n = object_name(name).map_err(|e| LockError(e.message))?;
        self.table(&n).ok_or_else(|| {
            LockError(format!(
                "does not know table \"{n}\" (not created by the spec's setup)"
            ))
        })
    }

    /// One plain table without joins: its relation, definition and alias.
    fn single<'s, 'a>(
        &'s self,
        from: &'a [ast::TableWithJoins],
    ) -> Result<Option<Single<'s, 'a>>, LockError> {
        match from {
            [t] if t.joins.is_empty() => match &t.relation {
                ast::TableFactor::Table {
                    name,
                    alias,
                    args: None,
                    ..
                } => {
                    let (rel, def) = self.lookup(name)?;
                    Ok(Some((
                        rel,
                        def,
                        alias.as_ref().map(|a| a.name.value.as_str()),
                    )))
                }
                _ => Ok(None),
            },
            _ => Ok(None),
        }
    }

    fn query(&self, q: &ast::Query) -> Result<Vec<LockRequest>, LockError> {
        let simple = q.with.is_none();
        if let (true, ast::SetExpr::Select(s)) = (simple, &*q.body) {
            if let Some((rel, t, alias)) = self.single(&s.from)? {
                let mut read = items(&s.projection, t, alias).union(where_columns(
                    s.selection.as_ref(),
                    t,
                    alias,
                ));
                if let ast::GroupByExpr::Expressions(es, _) = &s.group_by {
                    for e in es {
                        read = read.union(columns(e, t, alias));
                    }
                }
                if let Some(h) = &s.having {
                    read = read.union(columns(h, t, alias));
                }
                if let Some(ob) = &q.order_by {
                    match &ob.kind {
                        ast::OrderByKind::Expressions(es) => {
                            for e in es {
                                read = read.union(columns(&e.expr, t, alias));
                            }
                        }
                        ast::OrderByKind::All(_) => read = t.all(),
                    }
                }
                let mut out = vec![LockRequest {
                    relation: rel,
                    kind: StatementKind::Select,
                    predicate: where_predicate(s.selection.as_ref(), t, alias),
                    read,
                    write: ColumnSet::NONE,
                }];
                out.extend(self.others(&q.to_string(), rel));
                return Ok(out);
            }
        }
        // Joins, set operations, CTEs, `SELECT 1`: every table named, read whole.
        Ok(self.coarse_reads(&q.to_string()))
    }

    fn insert(&self, ins: &ast::Insert) -> Result<Vec<LockRequest>, LockError> {
        let ast::TableObject::TableName(name) = &ins.table else {
            return Err(LockError(
                "cannot lock an INSERT into a table function".into(),
            ));
        };
        let (rel, t) = self.lookup(name)?;
        let targets: Vec<Option<ColumnId>> = if ins.columns.is_empty() {
            (0..t.columns.len()).map(|c| Some(c as ColumnId)).collect()
        } else {
            ins.columns
                .iter()
                .map(|c| t.column(&column_name(c)))
                .collect()
        };
        let (predicate, mut more) = match ins.source.as_deref().map(|q| &*q.body) {
            Some(ast::SetExpr::Values(v)) => {
                let rows: Vec<Predicate> = v
                    .rows
                    .iter()
                    .map(|row| {
                        let atoms: Vec<Predicate> = row
                            .iter()
                            .zip(&targets)
                            .filter_map(|(e, c)| {
                                let c = (*c)?;
                                literal_atom(t, c, Op::Eq, e).map(|a| a.0)
                            })
                            .collect();
                        conjunction(atoms)
                    })
                    .collect();
                (disjunction(rows), self.others(&ins.to_string(), rel))
            }
            Some(_) => (Expr::True, self.others(&ins.to_string(), rel)),
            None => (Expr::True, Vec::new()),
        };
        let mut out = vec![LockRequest {
            relation: rel,
            kind: StatementKind::Insert,
            predicate,
            read: t.all(),
            write: t.all(),
        }];
        out.append(&mut more);
        Ok(out)
    }

    /// Every table whose name appears in `text` as a word, read whole: the coarse lock of a
    /// statement the translation does not follow (joins, subqueries, CTEs).
    fn coarse_reads(&self, text: &str) -> Vec<LockRequest> {
        self.named_in(text)
            .map(|(rel, t)| LockRequest {
                relation: rel,
                kind: StatementKind::Select,
                predicate: Expr::True,
                read: t.all(),
                write: ColumnSet::NONE,
            })
            .collect()
    }

    /// A write the translation does not follow: every table named, written whole.
    fn coarse_all(
        &self,
        stmt: &ast::Statement,
        kind: StatementKind,
    ) -> Result<Vec<LockRequest>, LockError> {
        Ok(self
            .named_in(&stmt.to_string())
            .map(|(rel, t)| LockRequest {
                relation: rel,
                kind,
                predicate: Expr::True,
                read: t.all(),
                write: t.all(),
            })
            .collect())
    }

    fn named_in<'s>(&'s self, text: &str) -> impl Iterator<Item = (u32, &'s LockTable)> + 's {
        let words: Vec<String> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(|w| w.to_lowercase())
            .collect();
        self.tables
            .iter()
            .enumerate()
            .filter(move |(_, t)| words.iter().any(|w| *w == t.name.to_lowercase()))
            .map(|(i, t)| (i as u32, t))
    }

    /// Read locks, whole, of every other table `text` names: the tables of subqueries anywhere
    /// in a statement over `main` (coarse; a column named like a table only adds a lock).
    fn others(&self, text: &str, main: u32) -> Vec<LockRequest> {
        let mut out = self.coarse_reads(text);
        out.retain(|r| r.relation != main);
        out
    }
}

/// The column an identifier names in `t` (under its name or `alias`).
fn column_ref(e: &E, t: &LockTable, alias: Option<&str>) -> Option<ColumnId> {
    match e {
        E::Identifier(id) => t.column(&column_name(id)),
        E::CompoundIdentifier(ids) if ids.len() == 2 => {
            let q = &ids[0].value;
            if q.eq_ignore_ascii_case(&t.name) || alias.is_some_and(|a| a.eq_ignore_ascii_case(q)) {
                t.column(&column_name(&ids[1]))
            } else {
                None
            }
        }
        E::Nested(inner) => column_ref(inner, t, alias),
        _ => None,
    }
}

/// The columns `e` reads; every column when it holds something the walker does not know.
fn columns(e: &E, t: &LockTable, alias: Option<&str>) -> ColumnSet {
    let mut set = ColumnSet::NONE;
    if collect(e, t, alias, &mut set) {
        set
    } else {
        t.all()
    }
}

/// Adds the columns of `e` to `set`; `false`: unknown (read every column).
fn collect(e: &E, t: &LockTable, alias: Option<&str>, set: &mut ColumnSet) -> bool {
    match e {
        E::Identifier(_) | E::CompoundIdentifier(_) => match column_ref(e, t, alias) {
            Some(c) => {
                *set = set.union(ColumnSet::of(&[c]));
                true
            }
            None => false,
        },
        E::Value(_) => true,
        E::Nested(x) | E::UnaryOp { expr: x, .. } | E::Cast { expr: x, .. } => {
            collect(x, t, alias, set)
        }
        E::IsNull(x) | E::IsNotNull(x) | E::IsTrue(x) | E::IsFalse(x) => collect(x, t, alias, set),
        E::BinaryOp { left, right, .. } => {
            collect(left, t, alias, set) && collect(right, t, alias, set)
        }
        E::Between {
            expr, low, high, ..
        } => {
            collect(expr, t, alias, set)
                && collect(low, t, alias, set)
                && collect(high, t, alias, set)
        }
        E::InList { expr, list, .. } => {
            collect(expr, t, alias, set) && list.iter().all(|x| collect(x, t, alias, set))
        }
        E::Function(f) => match &f.args {
            ast::FunctionArguments::None => true,
            ast::FunctionArguments::List(l) => l.args.iter().all(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                    collect(x, t, alias, set)
                }
                // count(*): the rows, not their columns.
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => true,
                _ => false,
            }),
            ast::FunctionArguments::Subquery(_) => false,
        },
        _ => false,
    }
}

fn items(projection: &[ast::SelectItem], t: &LockTable, alias: Option<&str>) -> ColumnSet {
    let mut set = ColumnSet::NONE;
    for item in projection {
        let known = match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                collect(e, t, alias, &mut set)
            }
            _ => false,
        };
        if !known {
            return t.all();
        }
    }
    set
}

fn where_columns(selection: Option<&E>, t: &LockTable, alias: Option<&str>) -> ColumnSet {
    selection.map_or(ColumnSet::NONE, |e| columns(e, t, alias))
}

/// The lock predicate of a WHERE clause: `TRUE` without one.
fn where_predicate(selection: Option<&E>, t: &LockTable, alias: Option<&str>) -> Predicate {
    selection
        .and_then(|e| cover(e, t, alias, true, 0))
        .unwrap_or(Expr::True)
}

fn conjunction(mut parts: Vec<Predicate>) -> Predicate {
    match parts.len() {
        0 => Expr::True,
        1 => parts.pop().expect("one part"),
        _ => Expr::and(parts),
    }
}

fn disjunction(mut parts: Vec<Predicate>) -> Predicate {
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
                literal_atom(t, c, flip(op), left)?
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

/// `a op b` ⇔ `b flip(op) a`.
fn flip(op: Op) -> Op {
    match op {
        Op::Lt => Op::Gt,
        Op::Le => Op::Ge,
        Op::Gt => Op::Lt,
        Op::Ge => Op::Le,
        other => other,
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
fn literal_atom(t: &LockTable, c: ColumnId, op: Op, e: &E) -> Option<(Predicate, bool)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::parse;

    fn schema() -> Schema {
        let mut s = Schema::default();
        for st in parse(
            "CREATE TABLE doctors (name VARCHAR(16) PRIMARY KEY, on_call BOOLEAN);
             CREATE TABLE shifts (id INT PRIMARY KEY, day INT, pay FLOAT);
             CREATE TABLE kv (k INT, v INT, PRIMARY KEY (k))",
        )
        .unwrap()
        {
            s.observe(&st).unwrap();
        }
        s
    }

    fn locks(sql: &str) -> Vec<LockRequest> {
        schema().requests(&parse(sql).unwrap()[0]).unwrap()
    }

    fn one(sql: &str) -> LockRequest {
        let mut l = locks(sql);
        assert_eq!(l.len(), 1, "{sql}: {l:?}");
        l.pop().unwrap()
    }

    #[test]
    fn learns_tables_and_their_filter_columns() {
        let s = schema();
        assert_eq!(s.tables.len(), 3);
        assert_eq!(s.tables[0].key, Some(0));
        assert_eq!(s.tables[1].columns[2].1, ColumnKind::Float);
        assert_eq!(s.tables[2].key, Some(0), "table-level PRIMARY KEY");
        let mut s = s;
        s.observe(&parse("DROP TABLE shifts").unwrap()[0]).unwrap();
        assert!(s.table("shifts").is_none());
        assert_eq!(s.table("kv").unwrap().0, 1, "relation ids are positions");
    }

    #[test]
    fn a_select_locks_its_where_and_the_columns_it_names() {
        let l = one("SELECT count(*) FROM shifts WHERE day BETWEEN 7 AND 9");
        assert_eq!(l.relation, 1);
        assert_eq!(l.kind, StatementKind::Select);
        assert_eq!(
            l.predicate,
            Expr::and(vec![Expr::atom(1, Op::Ge, 7), Expr::atom(1, Op::Le, 9)])
        );
        assert_eq!(l.read, ColumnSet::of(&[1]));
        let l = one("SELECT pay FROM shifts s WHERE s.id = 3 OR 4 = id");
        assert_eq!(l.predicate, Expr::or(vec![Expr::eq(0, 3), Expr::eq(0, 4)]));
        assert_eq!(l.read, ColumnSet::of(&[0, 2]));
        assert_eq!(one("SELECT * FROM shifts").read, ColumnSet::all(3));
        assert_eq!(one("SELECT * FROM shifts").predicate, Expr::True);
        assert_eq!(
            one("SELECT id FROM shifts WHERE -5 < day").predicate,
            Expr::atom(1, Op::Gt, -5)
        );
    }

    #[test]
    fn strings_lock_by_a_folded_prefix_and_only_for_equality() {
        let a = one("SELECT on_call FROM doctors WHERE name = 'Alice  '").predicate;
        let b = one("SELECT on_call FROM doctors WHERE name = 'alice'").predicate;
        assert_eq!(a, b, "MariaDB's collation says they are equal");
        assert_eq!(
            one("SELECT on_call FROM doctors WHERE name < 'b'").predicate,
            Expr::True
        );
        let l =
            one("SELECT count(*) FROM doctors WHERE name IN ('alice', 'bob') AND on_call = true");
        assert_eq!(
            l.predicate,
            Expr::and(vec![
                Expr::or(vec![
                    Expr::eq(0, string_key("alice")),
                    Expr::eq(0, string_key("bob"))
                ]),
                Expr::eq(1, 1)
            ])
        );
        // An insert of the row locks the same key.
        let i = one("INSERT INTO doctors VALUES ('ALICE', false)");
        assert_eq!(
            i.predicate,
            Expr::and(vec![Expr::eq(0, string_key("alice")), Expr::eq(1, 0)])
        );
    }

    #[test]
    fn unknown_parts_widen_never_narrow() {
        // An unknown conjunct is dropped; an unknown disjunct makes the whole TRUE.
        assert_eq!(
            one("SELECT id FROM shifts WHERE day = 7 AND id % 2 = 0").predicate,
            Expr::eq(1, 7)
        );
        assert_eq!(
            one("SELECT id FROM shifts WHERE day = 7 OR id % 2 = 0").predicate,
            Expr::True
        );
        assert_eq!(
            one("SELECT id FROM shifts WHERE NOT (id % 2 = 0)").predicate,
            Expr::True
        );
        assert_eq!(
            one("SELECT id FROM shifts WHERE day = 7.5").predicate,
            Expr::True,
            "float vs int column"
        );
        assert_eq!(
            one("SELECT id FROM shifts WHERE day IS NULL").predicate,
            Expr::True
        );
        assert_eq!(
            one("SELECT id FROM shifts WHERE day NOT BETWEEN 1 AND 2").predicate,
            Expr::or(vec![Expr::atom(1, Op::Lt, 1), Expr::atom(1, Op::Gt, 2)])
        );
        // Unknown projections read every column.
        assert_eq!(
            one("SELECT day + (SELECT 1) FROM shifts").read,
            ColumnSet::all(3)
        );
    }

    #[test]
    fn writes_lock_what_they_write() {
        let u = one("UPDATE doctors SET on_call = false WHERE name = 'bob'");
        assert_eq!(u.kind, StatementKind::Update);
        assert_eq!(u.write, ColumnSet::of(&[1]));
        assert_eq!(u.predicate, Expr::eq(0, string_key("bob")));
        let u = one("UPDATE kv SET v = v + 1 WHERE k = 1");
        assert_eq!(
            (u.read, u.write),
            (ColumnSet::of(&[0, 1]), ColumnSet::of(&[1]))
        );
        let d = one("DELETE FROM shifts WHERE day = 7");
        assert_eq!(
            (d.kind, d.write),
            (StatementKind::Delete, ColumnSet::all(3))
        );
        let i = one("INSERT INTO shifts (id, day) VALUES (10, 7), (11, 8)");
        assert_eq!(
            i.predicate,
            Expr::or(vec![
                Expr::and(vec![Expr::eq(0, 10), Expr::eq(1, 7)]),
                Expr::and(vec![Expr::eq(0, 11), Expr::eq(1, 8)])
            ])
        );
    }

    #[test]
    fn statements_over_several_tables_lock_them_whole() {
        let l = locks("SELECT * FROM shifts JOIN kv ON shifts.id = kv.k");
        assert_eq!(l.len(), 2);
        assert!(l
            .iter()
            .all(|r| r.predicate == Expr::True && r.kind == StatementKind::Select));
        let l = locks("UPDATE kv SET v = 1 WHERE k IN (SELECT id FROM shifts)");
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].predicate, Expr::True, "IN (subquery) is unknown");
        assert_eq!((l[1].relation, l[1].kind), (1, StatementKind::Select));
        let l = locks("INSERT INTO kv SELECT id, day FROM shifts");
        assert_eq!(l.len(), 2);
        assert!(locks("SELECT 1").is_empty());
        assert!(locks("BEGIN").is_empty());
    }

    #[test]
    fn an_unknown_table_is_an_error_not_a_missing_lock() {
        let e = schema()
            .requests(&parse("SELECT * FROM nope").unwrap()[0])
            .unwrap_err();
        assert!(e.to_string().contains("\"nope\""), "{e}");
    }
}
