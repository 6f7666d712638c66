//! A small SQL front for Ordo, and a runner for PostgreSQL isolationtester specs.
//!
//! SQL text is parsed by `sqlparser` (PostgreSQL dialect) and executed, statement by statement, on one
//! transaction of Ordo's interactive [`Tx`](ordo::txn::Tx) API — so the same SQL runs under every
//! interactive protocol, and every read the SQL makes is a protocol read:
//!
//! ```text
//! session (thread) ── parse ── classify ─┬─ BEGIN/COMMIT/ROLLBACK: the transaction state machine
//!                                        ├─ DDL: new catalog → engine rebuilds the protocol instance
//!                                        └─ DML/SELECT: exec → access path → Tx get/scan/update/insert/delete
//! ```
//!
//! | module        | what it does                                                              |
//! |---------------|---------------------------------------------------------------------------|
//! | [`value`]     | SQL types and values, and how they sit in 64-bit-word rows                 |
//! | [`datetime`]  | DATE / TIMESTAMP / TIMESTAMPTZ: ISO input, civil calendar, psql's output    |
//! | [`key`]       | order-preserving encodings of values into `u64` keys                       |
//! | [`catalog`]   | SQL tables, primary keys and indexes → storage tables                      |
//! | [`ddl`]       | CREATE TABLE / CREATE INDEX / ALTER TABLE ADD / DROP → the next catalog     |
//! | [`engine`]    | one protocol instance + catalog; DDL rebuilds it                           |
//! | [`expr`]      | expressions compiled against a table, evaluated on rows                    |
//! | [`access`]    | WHERE → point reads, key-range scans, index-range scans or full scans      |
//! | [`index`]     | secondary-index posting lists, maintained inside the statement's transaction |
//! | [`unique`]    | UNIQUE constraints: hashed entries, maintained inside the statement's transaction |
//! | [`locks`]     | what a statement touches, as DIBS predicate lock requests                  |
//! | [`exec`]      | INSERT, UPDATE, DELETE, SELECT (aggregates, GROUP BY, ORDER BY, LIMIT, FOR UPDATE, two-table inner joins, subqueries) |
//! | [`session`]   | a session thread: PostgreSQL transaction semantics, PREPARE/EXECUTE        |
//! | [`error`]     | errors with SQLSTATE, from protocol aborts too                             |
//! | [`format`](mod@format) | result tables as psql and isolationtester print them                       |
//! | [`spec`]      | isolationtester specs: parser, permutations, runner                        |
//!
//! ```
//! use ordo_sql::session;
//! let engine = session::open("2pl-detect", Default::default(), false).unwrap();
//! let s = engine.session(0);
//! s.execute("CREATE TABLE t (k INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 10)");
//! let reply = s.execute("SELECT v + 1 AS w FROM t WHERE k = 1");
//! assert!(matches!(&reply.results[0].result, Ok(ordo_sql::exec::Output::Rows(r)) if r.rows.len() == 1));
//! ```
pub mod access;
pub mod catalog;
pub mod datetime;
pub mod ddl;
pub mod engine;
pub mod error;
pub mod exec;
pub mod expr;
pub mod format;
pub mod index;
pub mod key;
pub mod locks;
pub mod session;
pub mod spec;
pub mod tuples;
pub mod unique;
pub mod value;
