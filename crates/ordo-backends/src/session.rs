//! A worker's connection with DIBS in front of it: each statement first takes its predicate lock
//! (§3.1: "for each request get its locks from the PLM, block if needed, execute it"), then runs on
//! the engine. Without a lock manager (the engine's native isolation) statements run directly.
//! Locks are released by the worker only after the engine's `COMMIT` or `ROLLBACK` returned
//! ([`Session::release`]): strict two-phase locking over predicates.

use crate::conn::{Conn, Stmt, Value};
use crate::error::{Error, Result, Retry};
use crate::workloads::StmtDef;
use ordo_predicate::{LockManager, Txn};

/// DIBS's part of a session: the shared lock manager and this worker's lock context.
pub struct Dibs<'a> {
    pub plm: &'a LockManager,
    pub txn: Txn,
}

/// What a recording session's transaction saw and wrote, from the client's side: the version ids
/// stored in the rows (the id of the attempt that wrote each value; 0 for the loader's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Item `item` read, holding the version `version` wrote.
    Read { item: (u32, u64), version: u64 },
    /// Item `item` written, replacing the version `prev` wrote (as this transaction read it).
    Write { item: (u32, u64), prev: u64 },
}

pub struct Session<'a> {
    pub conn: Box<dyn Conn>,
    dibs: Option<Dibs<'a>>,
    stmts: &'a [StmtDef],
    rows: Vec<Vec<Value>>,
    lock_args: Vec<i64>,
    /// The running attempt's id (nonzero while recording) and what it saw.
    attempt: u64,
    seen: Vec<Seen>,
}

impl<'a> Session<'a> {
    pub fn new(conn: Box<dyn Conn>, dibs: Option<Dibs<'a>>, stmts: &'a [StmtDef]) -> Self {
        Session {
            conn,
            dibs,
            stmts,
            rows: Vec::new(),
            lock_args: Vec::new(),
            attempt: 0,
            seen: Vec::new(),
        }
    }

    /// Starts recording attempt `id` (nonzero): what it sees goes to [`Session::take_seen`].
    pub fn begin_attempt(&mut self, id: u64) {
        self.attempt = id;
        self.seen.clear();
    }

    /// The running attempt's id: the version id its writes store (0 when not recording).
    pub fn attempt(&self) -> u64 {
        self.attempt
    }

    /// Notes an event of the running attempt (when recording).
    pub fn record(&mut self, e: Seen) {
        if self.attempt != 0 {
            self.seen.push(e);
        }
    }

    /// What the running attempt saw and wrote.
    pub fn take_seen(&mut self) -> Vec<Seen> {
        std::mem::take(&mut self.seen)
    }

    /// Whether statements take predicate locks.
    pub fn locking(&self) -> bool {
        self.dibs.is_some()
    }

    /// Predicate locks held now.
    pub fn held(&self) -> usize {
        self.dibs.as_ref().map_or(0, |d| d.txn.held())
    }

    fn lock(&mut self, id: usize, params: &[Value]) -> Result<()> {
        let Some(d) = self.dibs.as_mut() else {
            return Ok(());
        };
        let def = &self.stmts[id];
        self.lock_args.clear();
        for &p in &def.lock_params {
            // Integers are the predicate's values; a string is its order-preserving key, coarser
            // than the string (a shared 8-byte prefix is one value), never finer.
            let v = match params.get(p) {
                Some(Value::Int(i)) => *i,
                Some(Value::Text(t)) => ordo_predicate::predicate::string_key(t),
                _ => {
                    return Err(Error::Input(format!(
                        "statement {}: parameter {p} binds its predicate and must be given",
                        def.name
                    )))
                }
            };
            self.lock_args.push(v);
        }
        match d
            .plm
            .acquire_prepared(&mut d.txn, id as u32, &self.lock_args)
        {
            Ok(()) => Ok(()),
            Err(ordo_predicate::Error::Timeout) => Err(Error::Retry {
                backend: "dibs",
                why: Retry::LockTimeout,
                detail: format!("waiting to lock for {}", def.name),
            }),
            Err(e) => Err(Error::Input(format!("statement {}: {e}", def.name))),
        }
    }

    fn stmt(&self, id: usize) -> Stmt<'a> {
        Stmt {
            id,
            sql: &self.stmts[id].sql,
        }
    }

    /// Locks and runs query `id`; returns its rows.
    pub fn query(&mut self, id: usize, params: &[Value]) -> Result<&[Vec<Value>]> {
        self.lock(id, params)?;
        let stmt = self.stmt(id);
        self.conn.query(&stmt, params, &mut self.rows)?;
        Ok(&self.rows)
    }

    /// Locks and runs statement `id`; returns the rows it changed.
    pub fn execute(&mut self, id: usize, params: &[Value]) -> Result<u64> {
        self.lock(id, params)?;
        let stmt = self.stmt(id);
        self.conn.execute(&stmt, params)
    }

    /// Releases every predicate lock (after the engine's commit or rollback returned).
    pub fn release(&mut self) {
        if let Some(d) = self.dibs.as_mut() {
            d.plm.release(&mut d.txn);
        }
    }
}
