//! The workloads, written once as SQL: each is a schema, a batched loader, a generator of client
//! transactions, and the code of each transaction type as a sequence of statements. Every
//! statement carries its DIBS request template (§3.2): the relation, the kind of statement, the
//! parameterized predicate over the relation's columns, and the columns it reads and writes — the
//! same declaration a DIBS deployment in front of an unmodified engine would be given.

pub mod tatp;
pub mod versioned;
pub mod ycsb;

use crate::conn::{Conn, Value};
use crate::error::{Error, Result};
use crate::session::Session;
use ordo_predicate::{ColumnId, ColumnSet, Prepared, RelationSpec, StatementKind, Template};
use rand::rngs::SmallRng;

/// Buckets per relation for column filtering (the public artifact's N).
pub const BUCKETS: u32 = 1024;

/// A table: its DDL, and how the lock manager sees it (columns `0..width`, column 0 the key).
#[derive(Debug, Clone)]
pub struct TableDef {
    pub name: &'static str,
    /// `CREATE TABLE` text (portable across SQLite, MariaDB and PostgreSQL), then any indexes.
    pub ddl: Vec<String>,
    pub width: u16,
}

/// A statement and its DIBS request template.
#[derive(Debug, Clone)]
pub struct StmtDef {
    pub name: String,
    pub sql: String,
    pub relation: u32,
    pub kind: StatementKind,
    /// The predicate over the relation's columns (`c0 = $1 AND c3 > $2`), parameters `$1…`.
    pub predicate: String,
    pub read: Vec<ColumnId>,
    pub write: Vec<ColumnId>,
    /// The SQL parameters (indexes into the statement's parameter list) that are the predicate's
    /// `$1, $2, …`, in that order; each must be an integer.
    pub lock_params: Vec<usize>,
}

impl StmtDef {
    /// A statement: `sql`, with the request `kind` of `predicate` on `relation`.
    pub fn new(
        name: impl Into<String>,
        sql: impl Into<String>,
        relation: u32,
        kind: StatementKind,
        predicate: &str,
    ) -> Self {
        StmtDef {
            name: name.into(),
            sql: sql.into(),
            relation,
            kind,
            predicate: predicate.to_string(),
            read: Vec::new(),
            write: Vec::new(),
            lock_params: Vec::new(),
        }
    }

    pub fn reads(mut self, cols: &[ColumnId]) -> Self {
        self.read = cols.to_vec();
        self
    }

    pub fn writes(mut self, cols: &[ColumnId]) -> Self {
        self.write = cols.to_vec();
        self
    }

    /// Which SQL parameters bind the predicate's `$1, $2, …`.
    pub fn locking(mut self, params: &[usize]) -> Self {
        self.lock_params = params.to_vec();
        self
    }
}

/// One statement per column of `columns` to read it by key (`read c`, statement `i`), then one
/// per column to update it by key (`update c`, statement `columns.len() + i`): YCSB's requests, a
/// template per field, so that column-level conflicts apply. Column `i` of `columns` is predicate
/// column `i + 1` of relation 0, the key column 0.
pub fn field_statements(table: &str, key: &str, columns: &[String]) -> Vec<StmtDef> {
    let reads = columns.iter().zip(1..).map(|(c, id)| {
        StmtDef::new(
            format!("read {c}"),
            format!("SELECT {c} FROM {table} WHERE {key} = ?"),
            0,
            StatementKind::Select,
            "c0 = $1",
        )
        .reads(&[id])
        .locking(&[0])
    });
    let updates = columns.iter().zip(1..).map(|(c, id)| {
        StmtDef::new(
            format!("update {c}"),
            format!("UPDATE {table} SET {c} = ? WHERE {key} = ?"),
            0,
            StatementKind::Update,
            "c0 = $1",
        )
        .writes(&[id])
        .locking(&[1])
    });
    reads.chain(updates).collect()
}

/// The lock manager's view of a workload: its relations and one template per statement
/// (template id = statement index).
pub fn lock_specs(
    tables: &[TableDef],
    stmts: &[StmtDef],
) -> Result<(Vec<RelationSpec>, Vec<Template>)> {
    let relations = tables
        .iter()
        .map(|t| RelationSpec::new(t.name, t.width, Some(0), BUCKETS))
        .collect();
    let templates = stmts
        .iter()
        .map(|s| {
            Ok(Template {
                relation: s.relation,
                kind: s.kind,
                predicate: Prepared::parse(&s.predicate)
                    .map_err(|e| Error::Input(format!("statement {}: {e}", s.name)))?,
                read: ColumnSet::of(&s.read),
                write: ColumnSet::of(&s.write),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((relations, templates))
}

/// A workload written in SQL.
pub trait SqlWorkload: Sync {
    /// One client transaction: its type and parameters, drawn before it runs (so a retry or a
    /// merged group's replay runs the same transaction).
    type Txn: Send + Clone;

    fn name(&self) -> &'static str;
    /// The configuration, as a row's `params.workload`.
    fn params(&self) -> serde_json::Value;
    fn tables(&self) -> Vec<TableDef>;
    fn statements(&self) -> &[StmtDef];
    /// Fills the (freshly created) tables through `conn`, with batched inserts.
    fn load(&self, conn: &mut dyn Conn) -> Result<()>;
    /// The next client transaction of a worker.
    fn next(&self, rng: &mut SmallRng) -> Self::Txn;
    /// Whether `txn` may write (SQLite begins such a transaction `IMMEDIATE`; a merged group of
    /// readers is committed before a writer joins).
    fn writes(&self, txn: &Self::Txn) -> bool;
    /// The name of `txn`'s type.
    fn kind(&self, txn: &Self::Txn) -> &'static str;
    /// Runs `txn`'s statements through `s`. `Error::UserAbort` rolls it back by its own logic.
    fn run(&self, s: &mut Session<'_>, txn: &Self::Txn) -> Result<()>;
}

/// Inserts `rows` (each a list of SQL literals) into `table`, `per` rows a statement, in
/// transactions of at most 100 statements.
pub fn insert_batched(
    conn: &mut dyn Conn,
    table: &str,
    rows: impl Iterator<Item = Vec<Value>>,
    per: usize,
) -> Result<u64> {
    let mut sql = String::new();
    let mut in_stmt = 0;
    let mut stmts = 0;
    let mut total = 0;
    let flush = |conn: &mut dyn Conn, sql: &mut String| -> Result<()> {
        if !sql.is_empty() {
            conn.batch(sql)?;
            sql.clear();
        }
        Ok(())
    };
    conn.batch("BEGIN")?;
    for row in rows {
        if in_stmt == 0 {
            sql.push_str("INSERT INTO ");
            sql.push_str(table);
            sql.push_str(" VALUES ");
        } else {
            sql.push(',');
        }
        sql.push('(');
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&v.to_string());
        }
        sql.push(')');
        in_stmt += 1;
        total += 1;
        if in_stmt == per {
            flush(conn, &mut sql)?;
            in_stmt = 0;
            stmts += 1;
            if stmts % 100 == 0 {
                conn.batch("COMMIT")?;
                conn.batch("BEGIN")?;
            }
        }
    }
    flush(conn, &mut sql)?;
    conn.batch("COMMIT")?;
    Ok(total)
}
