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

pub struct Session<'a> {
    pub conn: Box<dyn Conn>,
    dibs: Option<Dibs<'a>>,
    stmts: &'a [StmtDef],
    rows: Vec<Vec<Value>>,
    lock_args: Vec<i64>,
}

impl<'a> Session<'a> {
    pub fn new(conn: Box<dyn Conn>, dibs: Option<Dibs<'a>>, stmts: &'a [StmtDef]) -> Self {
        Session {
            conn,
            dibs,
            stmts,
            rows: Vec::new(),
            lock_args: Vec::new(),
        }
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
