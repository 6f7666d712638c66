//! What a SQL statement touches, as DIBS predicate locks (§3.3 of Gaffney, Claus, Patel 2021): the
//! relation, the kind of statement, a predicate over the relation's columns and the columns it reads
//! and writes. The lock layer in front of a real engine ([`ordo_predicate::LockManager`]) takes these
//! before it sends the statement, whatever engine runs it.
//!
//! ```text
//! SELECT .. FROM t WHERE p          → (t, Select, p, read = columns named, write = ∅)
//! UPDATE t SET c = e WHERE p        → (t, Update, p freed of c, read = columns of e, write = {c})
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

mod columns;
mod cover;
#[cfg(test)]
mod tests;

use crate::expr::{column_name, object_name};
use columns::{columns, items, where_columns};
use cover::{conjunction, disjunction, literal_atom, where_predicate};
use ordo_predicate::predicate::{ColumnId, Op};
use ordo_predicate::{ColumnSet, Expr, Predicate, RelationSpec, StatementKind};
use sqlparser::ast::{self, DataType as D};

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
    /// The column sets of UNIQUE constraints and unique indexes.
    pub uniques: Vec<Vec<ColumnId>>,
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

/// The unique checks of an UPDATE that writes `write`: for each UNIQUE column set it writes, an
/// insert of the new values (their literals where the SET names them, any value where it does
/// not), so two statements making one value conflict as their checks do in the engine. An
/// INSERT's own predicate already pins every value it writes.
fn unique_checks(
    t: &LockTable,
    rel: u32,
    assignments: &[ast::Assignment],
    write: ColumnSet,
) -> Vec<LockRequest> {
    t.uniques
        .iter()
        .filter(|u| u.iter().any(|&c| write.0 & (1 << c) != 0))
        .map(|u| {
            let atoms = assignments
                .iter()
                .filter_map(|a| {
                    let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                        return None;
                    };
                    let c = t.column(&column_name(n.0.last()?.as_ident()?))?;
                    if !u.contains(&c) {
                        return None;
                    }
                    literal_atom(t, c, Op::Eq, &a.value).map(|x| x.0)
                })
                .collect();
            let cols = ColumnSet::of(u);
            LockRequest {
                relation: rel,
                kind: StatementKind::Insert,
                predicate: conjunction(atoms),
                read: cols,
                write: cols,
            }
        })
        .collect()
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
        D::Custom(n, args)
            if args.is_empty()
                && object_name(n).is_ok_and(|n| {
                    matches!(
                        n.as_str(),
                        "serial" | "serial4" | "bigserial" | "serial8" | "smallserial" | "serial2"
                    )
                }) =>
        {
            ColumnKind::Int
        }
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
    /// removes it, `ALTER TABLE … ADD COLUMN` and `CREATE UNIQUE INDEX` extend it. Other statements are ignored. A table wider than 64 columns is refused.
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
                let position = |n: &str| {
                    columns
                        .iter()
                        .position(|(c, _)| c == n)
                        .map(|i| i as ColumnId)
                };
                let mut uniques: Vec<Vec<ColumnId>> = Vec::new();
                for c in &ct.columns {
                    let unique = c.options.iter().any(|o| {
                        matches!(
                            o.option,
                            ast::ColumnOption::Unique {
                                is_primary: false,
                                ..
                            }
                        )
                    });
                    if let (true, Some(i)) = (unique, position(&column_name(&c.name))) {
                        uniques.push(vec![i]);
                    }
                }
                for tc in &ct.constraints {
                    if let ast::TableConstraint::Unique { columns: cols, .. } = tc {
                        uniques.extend(
                            cols.iter()
                                .map(|ic| position(&ic.column.expr.to_string().to_lowercase()))
                                .collect::<Option<Vec<_>>>(),
                        );
                    }
                }
                self.tables.retain(|t| t.name != name);
                self.tables.push(LockTable {
                    name,
                    columns,
                    key,
                    uniques,
                });
            }
            ast::Statement::AlterTable {
                name, operations, ..
            } => {
                let Ok(name) = object_name(name) else {
                    return Ok(());
                };
                let Some(t) = self.tables.iter_mut().find(|t| t.name == name) else {
                    return Ok(());
                };
                for op in operations {
                    if let ast::AlterTableOperation::AddColumn { column_def: c, .. } = op {
                        let n = column_name(&c.name);
                        if t.column(&n).is_some() {
                            continue;
                        }
                        if t.columns.len() >= 64 {
                            return Err(LockError(format!(
                                "locks tables of at most 64 columns; \"{name}\" would have more"
                            )));
                        }
                        t.columns.push((n, kind_of(&c.data_type)));
                        let unique = c.options.iter().any(|o| {
                            matches!(
                                o.option,
                                ast::ColumnOption::Unique {
                                    is_primary: false,
                                    ..
                                }
                            )
                        });
                        if unique {
                            t.uniques.push(vec![(t.columns.len() - 1) as ColumnId]);
                        }
                    }
                }
            }
            ast::Statement::CreateIndex(ci) if ci.unique => {
                let Ok(name) = object_name(&ci.table_name) else {
                    return Ok(());
                };
                if let Some(t) = self.tables.iter_mut().find(|t| t.name == name) {
                    let cols: Option<Vec<ColumnId>> = ci
                        .columns
                        .iter()
                        .map(|ic| t.column(&ic.column.expr.to_string().to_lowercase()))
                        .collect();
                    t.uniques.extend(cols);
                }
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
                // Over its written columns the predicate is freed: the rows it leaves may enter
                // another lock's predicate on them (`SET c = 15 WHERE c = 3` against a reader of
                // `c BETWEEN 10 AND 20`).
                let mut out = vec![LockRequest {
                    relation: rel,
                    kind: StatementKind::Update,
                    predicate: where_predicate(selection.as_ref(), t, alias).freed(write.0),
                    read: read.union(where_columns(selection.as_ref(), t, alias)),
                    write,
                }];
                out.extend(unique_checks(t, rel, assignments, write));
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
