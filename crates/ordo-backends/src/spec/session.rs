//! One spec session: a thread with its own connection to the engine, running the SQL blocks the
//! runner sends, statement by statement, with or without DIBS in front.
//!
//! **Transaction control** is the session's, not the engine's text: `BEGIN [ISOLATION LEVEL x]`
//! becomes [`Conn::begin`] (so a spec written for PostgreSQL runs on MariaDB and SQLite too), and
//! `COMMIT` / `ROLLBACK` become [`Conn::commit`] / [`Conn::rollback`]. Every other statement goes to
//! the engine as text ([`Conn::simple`]).
//!
//! **With DIBS** ([`Mode::Dibs`]) the engine runs at its weak level and DIBS isolates: a statement
//! first takes the predicate locks [`ordo_sql::locks`] derives from it, at the isolation level the
//! spec's `BEGIN` names (serializable when it names none: §5.2's rules), then runs; the locks are
//! released after the engine's `COMMIT` or `ROLLBACK` returned. A statement outside `BEGIN` is a
//! transaction of its own. A lock wait reports its rounds to the runner and looks for waits-for
//! cycles ([`ordo_predicate::waits_for`]): the youngest transaction of a cycle gives up with
//! `40P01`, as PostgreSQL's deadlock detector would. Any error inside a transaction aborts it (the
//! session rolls the engine back and releases its locks), and statements up to its `COMMIT` or
//! `ROLLBACK` fail with `25P02`, as in PostgreSQL.
//!
//! **Natively** ([`Mode::Native`]) the engine's own isolation runs at the level the spec names (or
//! one forced for every `BEGIN`), and an error aborts the transaction only where the engine says so
//! ([`Backend::error_ends_transaction`]).
//!
//! Every transaction that commits is logged with what each statement returned, for the outcome
//! check ([`super::replay`]).

use super::replay::{Observed, TxnLog};
use super::waiter::{Observer, SpecWaiter};
use crate::conn::{Backend, Conn, Intent, Level};
use crate::error::{Error, Retry};
use ordo_predicate::waits_for::WaitsFor;
use ordo_predicate::{Isolation, LockManager, Txn};
use ordo_sql::error::SqlError;
use ordo_sql::exec::{Output, ResultSet};
use ordo_sql::locks::Schema;
use ordo_sql::session::{StmtResult, TxnEnd};
use ordo_sql::value::Datum;
use sqlparser::ast::{self, Statement, TransactionIsolationLevel as Tl};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Who isolates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// DIBS over the engine's weak level.
    Dibs,
    /// The engine's own isolation: the level each `BEGIN` names, or this one for all.
    Native(Option<Level>),
}

/// DIBS's part, shared by the sessions of one permutation.
pub struct Layer {
    pub plm: LockManager,
    pub schema: Schema,
    pub waits: WaitsFor,
}

/// What a session sends back for one block.
#[derive(Debug, Default)]
pub struct Reply {
    pub results: Vec<StmtResult>,
    pub ends: Vec<TxnEnd>,
}

enum Cmd {
    Run(String),
    /// Roll back whatever is open and hand over the committed transactions' log.
    Finish,
}

/// The runner's handle on a session thread.
pub struct Handle {
    tx: Sender<Cmd>,
    rx: Receiver<Reply>,
    logs: Receiver<Vec<TxnLog>>,
    pub observer: Arc<Observer>,
    thread: Option<JoinHandle<()>>,
}

impl Handle {
    /// Connects and starts the thread; `index` names the session in the logs.
    pub fn open(
        backend: &Arc<dyn Backend>,
        layer: Option<Arc<Layer>>,
        mode: Mode,
        index: usize,
    ) -> Result<Handle, Error> {
        let conn = backend.connect()?;
        let (tx, crx) = channel();
        let (rtx, rx) = channel();
        let (ltx, logs) = channel();
        let observer = Arc::new(Observer::default());
        let mut state = State {
            conn,
            backend: backend.clone(),
            layer,
            mode,
            index,
            observer: observer.clone(),
            txn: None,
            dibs: None,
            committed: Vec::new(),
            seq: 0,
        };
        let thread = std::thread::Builder::new()
            .name(format!("spec-session-{index}"))
            .spawn(move || {
                while let Ok(cmd) = crx.recv() {
                    match cmd {
                        Cmd::Run(sql) => {
                            if rtx.send(state.block(&sql)).is_err() {
                                return;
                            }
                        }
                        Cmd::Finish => {
                            state.abandon();
                            let _ = ltx.send(std::mem::take(&mut state.committed));
                            return;
                        }
                    }
                }
            })
            .map_err(|e| Error::Input(format!("cannot start a session thread: {e}")))?;
        Ok(Handle {
            tx,
            rx,
            logs,
            observer,
            thread: Some(thread),
        })
    }

    pub fn send(&self, sql: &str) {
        let _ = self.tx.send(Cmd::Run(sql.to_string()));
    }

    /// The reply to the block sent, if it is done. A thread that is gone (it panicked) ends the
    /// step with an error saying so.
    pub fn try_reply(&self) -> Option<Reply> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Reply {
                results: vec![StmtResult {
                    sql: String::new(),
                    result: Err(sql_error("XX000", "the session's thread ended")),
                }],
                ends: Vec::new(),
            }),
        }
    }

    /// Runs a block and waits for its reply.
    pub fn execute(&self, sql: &str) -> Reply {
        self.send(sql);
        self.rx.recv().unwrap_or_default()
    }

    /// Ends the session (rolling back what is open) and returns its committed transactions.
    pub fn finish(mut self) -> Vec<TxnLog> {
        let _ = self.tx.send(Cmd::Finish);
        let logs = self.logs.recv().unwrap_or_default();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        logs
    }

    /// Leaves a thread that is stuck in the engine behind (it ends when its connection does).
    pub fn abandon(mut self) {
        self.thread.take();
    }
}

/// The open transaction.
struct Open {
    /// An error aborted it: statements fail until COMMIT or ROLLBACK.
    failed: bool,
    log: Vec<(String, Observed)>,
}

struct State {
    conn: Box<dyn Conn>,
    backend: Arc<dyn Backend>,
    layer: Option<Arc<Layer>>,
    mode: Mode,
    index: usize,
    observer: Arc<Observer>,
    txn: Option<Open>,
    /// DIBS's lock context of the open transaction.
    dibs: Option<(Txn, u64)>,
    committed: Vec<TxnLog>,
    seq: usize,
}

fn sql_error(code: &'static str, message: impl Into<String>) -> SqlError {
    SqlError::new(code, message)
}

/// An engine error as a SQL error: the SQLSTATE of its kind, the engine's own words.
fn engine_error(e: &Error) -> SqlError {
    let code = match e.retry() {
        Some(Retry::Deadlock) => "40P01",
        Some(Retry::Serialization) => "40001",
        Some(Retry::Busy) => "55P03",
        Some(Retry::LockTimeout) => "55P03",
        None => match e {
            Error::Unavailable { .. } => "08006",
            _ => "XX000",
        },
    };
    sql_error(code, e.to_string())
}

fn isolation(level: Option<&Tl>) -> Option<Level> {
    Some(match level? {
        Tl::ReadUncommitted => Level::ReadUncommitted,
        Tl::ReadCommitted => Level::ReadCommitted,
        Tl::RepeatableRead | Tl::Snapshot => Level::RepeatableRead,
        Tl::Serializable => Level::Serializable,
    })
}

fn dibs_isolation(level: Option<Level>) -> Isolation {
    match level {
        Some(Level::ReadUncommitted) => Isolation::ReadUncommitted,
        Some(Level::ReadCommitted) => Isolation::ReadCommitted,
        Some(Level::RepeatableRead) => Isolation::RepeatableRead,
        Some(Level::Serializable) | None => Isolation::Serializable,
    }
}

fn rows(o: &crate::conn::Outcome) -> ResultSet {
    ResultSet {
        columns: o.columns.clone(),
        rows: o
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| match v {
                        crate::conn::Value::Null => Datum::Null,
                        crate::conn::Value::Int(i) => Datum::Int(*i),
                        crate::conn::Value::Text(s) => Datum::Text(s.clone()),
                    })
                    .collect()
            })
            .collect(),
    }
}

impl State {
    fn block(&mut self, sql: &str) -> Reply {
        let mut reply = Reply::default();
        let stmts = match ordo_sql::session::parse(sql) {
            Ok(s) => s,
            Err(e) => {
                reply.results.push(StmtResult {
                    sql: sql.to_string(),
                    result: Err(e),
                });
                return reply;
            }
        };
        for stmt in &stmts {
            let text = stmt.to_string();
            let result = self.statement(stmt, &text, &mut reply.ends);
            reply.results.push(StmtResult { sql: text, result });
        }
        reply
    }

    fn statement(
        &mut self,
        stmt: &Statement,
        text: &str,
        ends: &mut Vec<TxnEnd>,
    ) -> Result<Output, SqlError> {
        match stmt {
            Statement::StartTransaction { modes, .. } => {
                let level = modes.iter().find_map(|m| match m {
                    ast::TransactionMode::IsolationLevel(l) => Some(l),
                    _ => None,
                });
                self.begin(isolation(level))
            }
            Statement::Commit { .. } => self.commit(ends),
            Statement::Rollback {
                savepoint: None, ..
            } => self.rollback(ends),
            _ => self.run(stmt, text, ends),
        }
    }

    fn begin(&mut self, level: Option<Level>) -> Result<Output, SqlError> {
        if self.txn.is_some() {
            // PostgreSQL: a WARNING, and the transaction goes on.
            return Ok(Output::Command("BEGIN".into()));
        }
        let engine_level = match self.mode {
            Mode::Dibs => self.backend.weak_level(),
            Mode::Native(Some(l)) => l,
            Mode::Native(None) => level.unwrap_or(Level::ReadCommitted),
        };
        // A deferred begin: SQLite takes its write lock at the first write, so that two spec
        // sessions can both be inside a transaction.
        self.conn
            .begin(engine_level, Intent::Read)
            .map_err(|e| engine_error(&e))?;
        if let Some(layer) = &self.layer {
            let txn = layer.plm.begin(dibs_isolation(level));
            self.dibs = Some((txn, layer.waits.session_age()));
        }
        self.txn = Some(Open {
            failed: false,
            log: Vec::new(),
        });
        Ok(Output::Command("BEGIN".into()))
    }

    /// Releases DIBS's locks (after the engine's COMMIT or ROLLBACK returned).
    fn release(&mut self) {
        if let (Some(layer), Some((mut txn, _))) = (&self.layer, self.dibs.take()) {
            layer.plm.release(&mut txn);
        }
    }

    fn commit(&mut self, ends: &mut Vec<TxnEnd>) -> Result<Output, SqlError> {
        let Some(open) = self.txn.take() else {
            return Ok(Output::Command("COMMIT".into()));
        };
        if open.failed {
            let _ = self.conn.rollback();
            self.release();
            return Ok(Output::Command("ROLLBACK".into()));
        }
        let r = self.conn.commit();
        self.release();
        match r {
            Ok(()) => {
                self.log(open.log);
                ends.push(TxnEnd::Committed);
                Ok(Output::Command("COMMIT".into()))
            }
            Err(e) => {
                let _ = self.conn.rollback();
                let err = engine_error(&e);
                ends.push(TxnEnd::Aborted(err.clone()));
                Err(err)
            }
        }
    }

    fn rollback(&mut self, ends: &mut Vec<TxnEnd>) -> Result<Output, SqlError> {
        if let Some(open) = self.txn.take() {
            let r = self.conn.rollback();
            self.release();
            if !open.failed {
                ends.push(TxnEnd::RolledBack);
            }
            r.map_err(|e| engine_error(&e))?;
        }
        Ok(Output::Command("ROLLBACK".into()))
    }

    fn log(&mut self, stmts: Vec<(String, Observed)>) {
        self.seq += 1;
        self.committed.push(TxnLog {
            session: self.index,
            seq: self.seq,
            stmts,
        });
    }

    /// Ends the open transaction as aborted by `err`: the engine rolls back, DIBS releases.
    fn abort(&mut self, err: &SqlError, ends: &mut Vec<TxnEnd>) {
        let _ = self.conn.rollback();
        self.release();
        if let Some(open) = &mut self.txn {
            open.failed = true;
        }
        ends.push(TxnEnd::Aborted(err.clone()));
    }

    /// Takes the statement's DIBS locks.
    fn lock(&mut self, stmt: &Statement) -> Result<(), SqlError> {
        let Some(layer) = self.layer.clone() else {
            return Ok(());
        };
        let requests = layer
            .schema
            .requests(stmt)
            .map_err(|e| sql_error("0A000", e.to_string()))?;
        let (txn, age) = self.dibs.as_mut().expect("a DIBS transaction is open");
        for req in &requests {
            let mut waiter = SpecWaiter {
                waits: &layer.waits,
                me: txn.id(),
                age: *age,
                observer: &self.observer,
                victim: false,
                canceled: false,
                waited: false,
            };
            match layer.plm.acquire_with(txn, req.request(), &mut waiter) {
                Ok(()) => {}
                Err(_) if waiter.victim => {
                    return Err(sql_error(
                        "40P01",
                        "deadlock detected (DIBS: the youngest transaction of a waits-for cycle)",
                    ))
                }
                Err(_) if waiter.canceled => {
                    return Err(sql_error(
                        "57014",
                        "canceling statement due to user request",
                    ))
                }
                Err(e) => return Err(sql_error("55P03", format!("DIBS: {e}"))),
            }
        }
        Ok(())
    }

    fn run(
        &mut self,
        stmt: &Statement,
        text: &str,
        ends: &mut Vec<TxnEnd>,
    ) -> Result<Output, SqlError> {
        if self.txn.as_ref().is_some_and(|t| t.failed) {
            return Err(sql_error(
                "25P02",
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let single = self.txn.is_none();
        if single && self.layer.is_some() {
            // A statement of its own: a DIBS transaction around it, the engine's autocommit.
            let layer = self.layer.clone().expect("checked");
            self.dibs = Some((
                layer.plm.begin(Isolation::Serializable),
                layer.waits.session_age(),
            ));
        }
        let locked = self.lock(stmt);
        let result = match locked {
            Ok(()) => self
                .conn
                .simple(text)
                .map_err(|e| (engine_error(&e), Some(e))),
            Err(e) => Err((e, None)),
        };
        if let (Some(layer), Some((txn, _))) = (&self.layer, &mut self.dibs) {
            // Read committed: read locks end with the statement (§5.2).
            layer.plm.end_statement(txn);
        }
        match result {
            Ok(o) => {
                let observed = Observed::of(&o);
                if single {
                    self.release();
                    self.log(vec![(text.to_string(), observed)]);
                    ends.push(TxnEnd::Committed);
                } else if let Some(open) = &mut self.txn {
                    open.log.push((text.to_string(), observed));
                }
                Ok(if o.columns.is_empty() {
                    Output::Command(format!("{} {}", first_word(text), o.changed))
                } else {
                    Output::Rows(rows(&o))
                })
            }
            Err((err, engine)) => {
                if single {
                    self.release();
                    ends.push(TxnEnd::Aborted(err.clone()));
                } else {
                    let ends_txn = match (&self.mode, &engine) {
                        (Mode::Dibs, _) | (_, None) => true,
                        (Mode::Native(_), Some(e)) => self.backend.error_ends_transaction(e),
                    };
                    if ends_txn {
                        self.abort(&err, ends);
                    } else if let Some(open) = &mut self.txn {
                        open.log.push((text.to_string(), Observed::Error));
                    }
                }
                Err(err)
            }
        }
    }

    /// The session ends: an open transaction is rolled back, as a disconnect would.
    fn abandon(&mut self) {
        if self.txn.take().is_some() {
            let _ = self.conn.rollback();
            self.release();
        }
    }
}

fn first_word(sql: &str) -> String {
    sql.split_whitespace()
        .next()
        .unwrap_or_default()
        .to_uppercase()
}
