//! What the layer needs of an engine: connections that run parameterized statements inside
//! transactions at a chosen isolation level, with savepoints. Each backend implements [`Backend`]
//! and [`Conn`]; nothing above this file knows which engine it talks to.

use crate::error::Result;
use std::fmt;

/// A value sent to or read from the engine. The workloads use integers and short ASCII strings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
}

impl Value {
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Text(s) => write!(f, "'{}'", s.replace('\'', "''")),
        }
    }
}

/// An SQL isolation level, as the engine names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Level {
    pub fn sql(self) -> &'static str {
        match self {
            Level::ReadUncommitted => "READ UNCOMMITTED",
            Level::ReadCommitted => "READ COMMITTED",
            Level::RepeatableRead => "REPEATABLE READ",
            Level::Serializable => "SERIALIZABLE",
        }
    }

    /// The short name used in protocol names (`native-rc`).
    pub fn short(self) -> &'static str {
        match self {
            Level::ReadUncommitted => "ru",
            Level::ReadCommitted => "rc",
            Level::RepeatableRead => "rr",
            Level::Serializable => "ser",
        }
    }
}

/// Whether a transaction about to begin may write: SQLite begins a writer with `BEGIN IMMEDIATE`
/// (it takes the one write lock up front instead of failing to upgrade a read snapshot later);
/// the servers ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Read,
    Write,
}

/// A statement of a workload: its index in the workload's list (connections cache the prepared
/// form by it) and its text, with `?` placeholders (PostgreSQL's connection numbers them).
#[derive(Debug, Clone, Copy)]
pub struct Stmt<'a> {
    pub id: usize,
    pub sql: &'a str,
}

/// What one statement sent as text returned ([`Conn::simple`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The result's column names; empty for a statement that returns no rows.
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    /// Rows the statement changed (DML).
    pub changed: u64,
}

/// One connection, owned by one worker.
pub trait Conn: Send {
    /// Runs statements without parameters or results (DDL, literal batched inserts).
    fn batch(&mut self, sql: &str) -> Result<()>;
    /// Runs a query; its rows replace `out`'s contents.
    fn query(&mut self, stmt: &Stmt<'_>, params: &[Value], out: &mut Vec<Vec<Value>>)
        -> Result<()>;
    /// Runs one statement given as text, whatever it is, and returns its rows with their column
    /// names (the spec runner: ad hoc SQL, no prepared statement).
    fn simple(&mut self, sql: &str) -> Result<Outcome>;
    /// Runs a statement that returns no rows; returns the rows it changed.
    fn execute(&mut self, stmt: &Stmt<'_>, params: &[Value]) -> Result<u64>;
    /// Begins a transaction at `level`.
    fn begin(&mut self, level: Level, intent: Intent) -> Result<()>;
    fn commit(&mut self) -> Result<()>;
    fn rollback(&mut self) -> Result<()>;
    fn savepoint(&mut self, name: &str) -> Result<()> {
        self.batch(&format!("SAVEPOINT {name}"))
    }
    fn rollback_to(&mut self, name: &str) -> Result<()> {
        self.batch(&format!("ROLLBACK TO SAVEPOINT {name}"))
    }
    fn release(&mut self, name: &str) -> Result<()> {
        self.batch(&format!("RELEASE SAVEPOINT {name}"))
    }
}

/// An engine: how to connect, which isolation levels it has, and what DIBS runs over.
pub trait Backend: Send + Sync {
    /// `sqlite`, `mariadb`, `postgres`.
    fn name(&self) -> &'static str;
    fn connect(&self) -> Result<Box<dyn Conn>>;
    /// The levels the engine offers (the `native-…` baselines).
    fn levels(&self) -> &'static [Level];
    /// The level DIBS runs the engine at: the weakest that still keeps each statement's own reads
    /// and writes whole (§4.5: MySQL's read uncommitted).
    fn weak_level(&self) -> Level;
    /// Calls to sync a file to disk so far (SQLite's counting VFS), when the backend counts them.
    fn syncs(&self) -> Option<u64> {
        None
    }
    /// Makes a freshly loaded database ready to measure (SQLite: checkpoint the load out of the
    /// WAL, so that the first run does not pay for it; PostgreSQL: `VACUUM ANALYZE`).
    fn settle(&self, conn: &mut dyn Conn) -> Result<()> {
        let _ = conn;
        Ok(())
    }
    /// Whether the error `e`, raised by a statement inside a transaction, has ended that
    /// transaction in the engine (PostgreSQL: every error; MariaDB: a deadlock, which rolls the
    /// transaction back; otherwise only the statement failed).
    fn error_ends_transaction(&self, e: &crate::error::Error) -> bool {
        e.retry() == Some(crate::error::Retry::Deadlock)
    }
    /// What a row records about the engine (version, settings).
    fn describe(&self) -> serde_json::Value;
}
