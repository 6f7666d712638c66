//! The engine: one protocol instance with its catalog, shared by every session.
//!
//! **DDL rebuilds the instance.** Ordo's storage creates tables with `&mut Database` before a protocol
//! opens (that keeps `db.table(id)` a plain slice index on every protocol's hot path), so this layer
//! does not add tables to a running protocol. A DDL statement instead builds the next *instance*: it
//! reads every row of the current one through a read-only transaction of the current protocol, creates
//! the new catalog's storage tables in a fresh [`Database`], loads the rows (recomputing every secondary
//! index), and opens a fresh protocol on it. Sessions notice the new generation at their next
//! transaction and take a new worker. DDL therefore needs every other session to be outside a
//! transaction (a *gate*: each transaction holds it shared, DDL takes it exclusively and fails rather
//! than wait); the isolation spec runner runs DDL only in setup and teardown, where that holds.
//!
//! The same rebuild, with the catalog unchanged, is a **checkpoint**: afterwards every row is a loaded
//! row (version 0), so a history recorded from then on is self-contained for the checker.

use crate::access::{self, Path, Row};
use crate::catalog::{Catalog, IndexDef, TableDef, UniqueDef, POSTING_MAX};
use crate::error::{SqlError, SqlResult};
use crate::value::Datum;
use ordo::protocols::{Protocol, ProtocolConfig};
use ordo::storage::{Column, ColumnType, Database, Schema, TableSpec};
use ordo::txn::Tx;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

/// Most sessions one engine serves at once (worker ids 0..MAX_SESSIONS).
pub const MAX_SESSIONS: usize = 16;

/// One protocol instance and the catalog whose tables it holds.
pub struct Instance<P: Protocol> {
    pub protocol: P,
    pub catalog: Catalog,
    /// Increases with every rebuild.
    pub generation: u64,
}

/// The engine shared by the sessions of one database.
pub struct Engine<P: Protocol> {
    current: Mutex<Arc<Instance<P>>>,
    /// Held shared by every running transaction, exclusively by DDL.
    pub(crate) gate: RwLock<()>,
    config: ProtocolConfig,
    recording: bool,
}

fn internal(e: impl std::fmt::Display) -> SqlError {
    SqlError::new("XX000", e.to_string())
}

impl<P: Protocol> Engine<P> {
    /// An empty database under protocol `P`; `recording` turns history recording on in every worker.
    pub fn new(config: ProtocolConfig, recording: bool) -> Self {
        let protocol = P::open(Database::new(), &config);
        Engine {
            current: Mutex::new(Arc::new(Instance {
                protocol,
                catalog: Catalog::default(),
                generation: 0,
            })),
            gate: RwLock::new(()),
            config,
            recording,
        }
    }

    pub fn recording(&self) -> bool {
        self.recording
    }

    /// The current instance.
    pub fn current(&self) -> Arc<Instance<P>> {
        self.current.lock().expect("engine lock").clone()
    }

    /// Replaces the instance by one holding the same rows under catalog `next` (see the module docs).
    /// `worker` must be a worker of the current instance.
    pub fn rebuild(&self, worker: &mut P::Worker, next: Catalog) -> SqlResult<()> {
        let Ok(_exclusive) = self.gate.try_write() else {
            return Err(SqlError::unsupported(
                "DDL while another session is inside a transaction (Ordo rebuilds the protocol instance on DDL)",
            ));
        };
        let cur = self.current();
        let built = build::<P>(&cur, worker, next, &self.config)?;
        *self.current.lock().expect("engine lock") = Arc::new(built);
        Ok(())
    }
}

fn build<P: Protocol>(
    cur: &Instance<P>,
    worker: &mut P::Worker,
    mut cat: Catalog,
    config: &ProtocolConfig,
) -> SqlResult<Instance<P>> {
    // 1. Read the rows of every table that stays, through the current protocol. A column the
    //    table did not have (ALTER TABLE … ADD) gets its DEFAULT, or NULL.
    let mut data: Vec<Vec<Row>> = Vec::new();
    {
        let mut tx = cur.protocol.begin(worker);
        for t in &cat.tables {
            let Some(old) = cur.catalog.table(&t.name) else {
                data.push(Vec::new());
                continue;
            };
            let from: Vec<Option<usize>> = t.columns.iter().map(|c| old.column(&c.name)).collect();
            let mut rows = access::fetch(&mut tx, old, &Path::Full)?;
            if from.iter().enumerate().any(|(i, f)| *f != Some(i))
                || t.columns.len() != old.columns.len()
            {
                for (_, r) in rows.iter_mut() {
                    *r = from
                        .iter()
                        .zip(&t.columns)
                        .map(|(f, c)| match f {
                            Some(i) => r[*i].clone(),
                            None => c.omitted(),
                        })
                        .collect();
                }
            }
            for (_, r) in &rows {
                if let Some(c) = t
                    .columns
                    .iter()
                    .zip(r)
                    .find_map(|(c, d)| (c.not_null && *d == Datum::Null).then_some(c))
                {
                    return Err(SqlError::new(
                        "23502",
                        format!(
                            "column \"{}\" of relation \"{}\" contains null values",
                            c.name, t.name
                        ),
                    ));
                }
            }
            data.push(rows);
        }
        tx.commit()?;
    }
    // 2. Create the storage tables.
    let mut db = Database::<P::Meta>::new();
    for t in cat.tables.iter_mut() {
        let cols = t
            .columns
            .iter()
            .map(|c| Column::new(c.name.clone(), c.ty.storage()))
            .collect();
        let schema = Schema::new(cols).map_err(internal)?;
        t.storage = db
            .create_table(TableSpec::new(t.name.clone(), schema).ordered(0))
            .map_err(internal)?;
        for idx in t.indexes.iter_mut() {
            let schema = Schema::new(vec![Column::new(
                "rows",
                ColumnType::VarChar((POSTING_MAX * 8) as u16),
            )])
            .map_err(internal)?;
            idx.storage = db
                .create_table(TableSpec::new(IndexDef::storage_name(&idx.name), schema).ordered(0))
                .map_err(internal)?;
        }
        for u in t.uniques.iter_mut() {
            let types: Vec<_> = u.columns.iter().map(|&c| t.columns[c].ty).collect();
            let len = crate::unique::entry_len(&types) as u16;
            let schema = Schema::new(vec![Column::new("entry", ColumnType::VarChar(len))])
                .map_err(internal)?;
            u.storage = db
                .create_table(TableSpec::new(UniqueDef::storage_name(&u.name), schema).ordered(0))
                .map_err(internal)?;
        }
    }
    // 3. Load rows and index postings.
    let mut scratch = Vec::new();
    for (t, rows) in cat.tables.iter().zip(&data) {
        load_table(&db, t, rows, &mut scratch)?;
    }
    let generation = cur.generation + 1;
    Ok(Instance {
        protocol: P::open(db, config),
        catalog: cat,
        generation,
    })
}

fn load_table<M: Default + Send + Sync>(
    db: &Database<M>,
    t: &TableDef,
    rows: &[Row],
    scratch: &mut Vec<u64>,
) -> SqlResult<()> {
    let table = db.table(t.storage);
    for (k, r) in rows {
        table
            .load(*k, scratch, |rm| {
                for (c, d) in r.iter().enumerate() {
                    d.write_as(rm, c, t.columns[c].ty);
                }
                Ok(())
            })
            .map_err(internal)?;
    }
    for idx in &t.indexes {
        let mut postings: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for (k, r) in rows {
            let list = postings
                .entry(crate::key::prefix(&r[idx.column]))
                .or_default();
            list.extend_from_slice(&k.to_le_bytes());
            if list.len() / 8 > POSTING_MAX {
                return Err(SqlError::unsupported(format!(
                    "more than {POSTING_MAX} rows with one value in index \"{}\"",
                    idx.name
                )));
            }
        }
        let it = db.table(idx.storage);
        for (k, list) in postings {
            it.load(k, scratch, |rm| rm.set_str(0, &list))
                .map_err(internal)?;
        }
    }
    // Unique entries: a duplicate among the rows is PostgreSQL's error for a unique index built
    // on them.
    for u in &t.uniques {
        let mut entries: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for (_, r) in rows {
            let Some(e) = crate::unique::encode(t, u, r) else {
                continue;
            };
            let k = crate::unique::key(&e);
            if let Some(held) = entries.insert(k, e.clone()) {
                if held == e {
                    let vals: Vec<String> = u.columns.iter().map(|&c| r[c].to_string()).collect();
                    let cols: Vec<&str> = u
                        .columns
                        .iter()
                        .map(|&c| t.columns[c].name.as_str())
                        .collect();
                    return Err(SqlError::new(
                        "23505",
                        format!(
                            "could not create unique index \"{}\": Key ({})=({}) is duplicated.",
                            u.name,
                            cols.join(", "),
                            vals.join(", ")
                        ),
                    ));
                }
                return Err(SqlError::unsupported(format!(
                    "two different values with one hash in unique constraint \"{}\"",
                    u.name
                )));
            }
        }
        let ut = db.table(u.storage);
        for (k, e) in entries {
            ut.load(k, scratch, |rm| rm.set_str(0, &e))
                .map_err(internal)?;
        }
    }
    Ok(())
}

/// Evaluates constant expressions (EXECUTE arguments).
pub fn constant(e: &sqlparser::ast::Expr) -> SqlResult<Datum> {
    let x = crate::expr::compile(e, &mut crate::expr::Scope::plain(None))?;
    x.eval(&crate::expr::Env {
        row: &[],
        params: &[],
        aggs: &[],
    })
}
