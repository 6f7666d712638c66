//! # DIBS's predicate lock manager
//!
//! *Database Isolation By Scheduling* (Gaffney, Claus, Patel, PVLDB 14(9), 2021) isolates
//! transactions in a layer in front of the engine: a request runs only once no running request of
//! another transaction can conflict with it, whatever the database holds — so the engine below needs
//! no locks or versions of its own. The mechanism is **predicate locking**: a request locks the
//! *logical* set of tuples its predicate describes (`x BETWEEN 10 AND 20`), including tuples that do
//! not exist yet, so phantoms are impossible. This crate is that layer's lock manager. It knows
//! relations, column ids and integers, nothing about storage: Ordo's store, SQLite, MariaDB or
//! PostgreSQL can sit behind it.
//!
//! ## Naive predicate locking (§2.1) — [`lock`], [`dnf`], [`manager`]
//! A lock is `(R, P, a)`; two conflict iff same relation, one writes, and `P ∧ P'` is satisfiable.
//! Satisfiability is SAT in general: the naive way converts to DNF ([`dnf::to_dnf`]) and looks for a
//! term without a contradiction ([`dnf::Solver`]: intervals and `≠` sets per column, exact over
//! integers). **Algorithm 1** ([`LockManager::acquire`]): `L_DNF ← ToDNF(L)`; `S' ← FetchInsert(S,
//! L_DNF)` — snapshot the active set and insert, under its mutex ([`buckets::Bucket::fetch_insert`]);
//! then wait for each conflicting lock of `S'` until it is released. A newcomer waits only for locks
//! that were there when it arrived.
//!
//! ## The optimizations (§2.2), each a switch of [`Optimizations`]
//! | § | optimization | file |
//! |---|---|---|
//! | 2.2.1 | conjunct grouping: union-find over columns, DNF per group | [`grouping`] |
//! | 2.2.2 | prepared predicates: an offline conflict graph whose edges carry conflict predicates over both parameter vectors | [`prepared`], [`conflict_graph`] |
//! | 2.2.3 | column filtering: N buckets per relation keyed by an equality on the filter column; scans go to all | [`buckets`] |
//! | 2.2.4 | column-level conflicts (`R∩W'`, `W∩R'`, `W∩W'`) | [`lock::access_conflict`] |
//! | 2.2.4 | the DNF blow-up threshold k ([`dnf::term_count`] first; past k, "conflict") | [`lock::ConflictRule`] |
//!
//! [`Optimizations::cumulative`] gives the paper's ablation of Fig. 3: naive → grouping →
//! prepared → filter → full.
//!
//! ## The worker's side (§3.1) and isolation levels (§5.2)
//! A worker takes a [`Txn`] ([`LockManager::begin`]), acquires each request's lock before running it
//! ([`LockManager::acquire`] or [`LockManager::acquire_prepared`]), and after the engine's commit
//! returns calls [`LockManager::release`] (strict 2PL). A wait that outlives the timeout plus jitter
//! returns [`Error::Timeout`]: roll back, `release`, restart. Weaker isolation levels are a policy of
//! the manager ([`isolation`]): no read locks (read uncommitted), read locks released at statement
//! end ([`LockManager::end_statement`], read committed), inserts and deletes passing range read locks
//! (repeatable read).
//!
//! ## Predicates
//! [`Predicate`]: `column op scalar` atoms (`<, ≤, >, ≥, =, ≠`) over `i64` under ∧ / ∨, BETWEEN as a
//! conjunction, `NOT` pushed to the atoms; text form [`Predicate::parse`] (`a = 1 OR b BETWEEN 2 AND
//! 5`), prepared form with `$1, $2, …` ([`predicate::Prepared`]). Floats and strings map onto `i64` by
//! order-preserving encodings that are exact (floats) or coarser (strings), never finer — see
//! [`predicate`]. Malformed input is an [`Error`], never a panic, and no shortcut ever answers "no
//! conflict" when there may be one.
//!
//! ```
//! use ordo_predicate::{ColumnSet, Isolation, LockManager, Optimizations, Predicate, RelationSpec, Request, StatementKind};
//!
//! let plm = LockManager::new(vec![RelationSpec::new("t", 2, Some(0), 16)], vec![], Optimizations::full(), Default::default()).unwrap();
//! let scan = Predicate::parse("b BETWEEN 10 AND 20").unwrap();
//! let mut reader = plm.begin(Isolation::Serializable);
//! plm.acquire(&mut reader, Request { relation: 0, kind: StatementKind::Select, predicate: &scan, read: ColumnSet::of(&[0, 1]), write: ColumnSet::NONE }).unwrap();
//! // An insert of (k = 7, b = 25) does not conflict, and is granted at once.
//! let row = ordo_predicate::lock::row_predicate(&[7, 25]);
//! let mut writer = plm.begin(Isolation::Serializable);
//! plm.acquire(&mut writer, Request { relation: 0, kind: StatementKind::Insert, predicate: &row, read: ColumnSet::NONE, write: ColumnSet::NONE }).unwrap();
//! plm.release(&mut writer);
//! plm.release(&mut reader);
//! ```

pub mod buckets;
pub mod conflict_graph;
pub mod dnf;
pub mod error;
pub mod grouping;
pub mod isolation;
pub mod lock;
pub mod manager;
pub mod optimizations;
pub mod predicate;
pub mod prepared;
pub mod waits_for;

pub use error::Error;
pub use isolation::Isolation;
pub use lock::{ColumnSet, RelationId, StatementKind};
pub use manager::{Config, LockManager, RelationSpec, Request, Txn, Waiter};
pub use optimizations::{Optimizations, Step};
pub use predicate::{ColumnId, Expr, Op, Predicate, Prepared, Value};
pub use prepared::{Template, TemplateId};
