//! # DIBS in front of real engines
//!
//! *Database Isolation By Scheduling* (Gaffney, Claus, Patel, PVLDB 14(9), 2021) argues that
//! isolation can be a layer of its own, in front of an engine that is not modified (§4.4–§4.5).
//! This crate is that layer over three real engines, and the benchmark that measures it against
//! each engine's own isolation:
//!
//! ```text
//!   worker ──► Session ──(1) predicate lock of the statement (ordo-predicate's LockManager)
//!                      ──(2) the statement, over the worker's own connection ──► SQLite / MariaDB / PostgreSQL
//!          … COMMIT returns ──(3) release every lock of the transaction (strict 2PL)
//! ```
//!
//! | paper | here |
//! |-------|------|
//! | §3.2 request templates: relation, read and write columns, parameterized predicate | [`workloads::StmtDef`], one per statement; template id = statement index |
//! | §3.1 the worker: lock, execute, roll back and restart on a timeout, commit, release | [`session::Session`], [`driver`] |
//! | §4.4 transaction merging on SQLite: delay the commit until several client transactions ran or a timeout, a savepoint after each, clients told after the outer commit | [`driver`]'s merged loop ([`driver::Mode::Dibs`] with `merge > 1`) |
//! | Fig. 5b: `fdatasync` calls per client transaction | [`sqlite::vfs`], a pass-through VFS that counts `xSync` |
//! | §4.5 DIBS (serializable) over MySQL READ UNCOMMITTED against MySQL SERIALIZABLE | [`mariadb`] ([`Backend::weak_level`]: READ UNCOMMITTED) |
//! | (not in the paper) PostgreSQL, whose SERIALIZABLE is Cahill's SSI | [`postgres`] (DIBS over READ COMMITTED) |
//! | (not in the paper) histories recorded from the client side, checked by Ordo's checker | [`driver::record`], [`workloads::versioned`], [`history`] |
//! | (not in the paper) isolationtester specs against the engine, with DIBS locks derived from each statement's SQL, judged by replaying the committed transactions serially | [`spec`] |
//!
//! The engines: [`sqlite`] (rusqlite's bundled SQLite, WAL, `synchronous=FULL`), [`mariadb`] and
//! [`postgres`] (servers started by the project's `scripts/servers/*.sh`). What the layer needs
//! of an engine is [`conn::Conn`] and [`conn::Backend`]. The workloads ([`workloads`]: YCSB and
//! TATP) are written once as SQL that all three accept.
//!
//! Each engine must keep a statement's own reads and writes of single values whole (§5.1); DIBS
//! does the rest. On MariaDB and PostgreSQL the engine still takes its row locks for writes, so a
//! transaction can wait inside the engine for another that waits on DIBS: such a cross-layer wait
//! is broken by DIBS's lock timeout (the paper's deadlock handling, `--dibs-timeout-ms`) or the
//! engine's own lock timeout, both retryable aborts ([`Retry`]).

pub mod conn;
pub mod driver;
pub mod error;
pub mod history;
pub mod mariadb;
mod net;
pub mod postgres;
pub mod session;
pub mod spec;
pub mod sqlite;
pub mod workloads;

pub use conn::{Backend, Conn, Intent, Level, Stmt, Value};
pub use error::{Error, Result, Retry};
