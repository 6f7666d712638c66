//! The catalog: SQL tables, their columns, primary keys and secondary indexes, and how each maps to
//! storage tables.
//!
//! * Every SQL table is one **ordered** storage table of the same name whose key is the encoded primary
//!   key ([`crate::key::primary`]); a table without a primary key gets a hidden row id (a counter) as
//!   its key.
//! * Every secondary index `i` on column `c` is a storage table `index:i` keyed by the
//!   [`prefix`](crate::key::prefix) of `c`'s value; its one column is the **posting list** — the keys of
//!   the rows holding that value (up to [`POSTING_MAX`]). The executor maintains it inside the same
//!   transaction as the row, so the protocol sees index reads and writes like any other: a range scan
//!   of the index is a predicate read the protocol protects against phantoms.
//! * Every UNIQUE constraint `u` is a storage table `unique:u` keyed by a hash of its columns'
//!   values, maintained the same way ([`crate::unique`]).

use crate::value::SqlType;
use ordo::storage::TableId;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::Arc;

/// Most rows one index value may hold (the posting list is a `VarChar` of 8-byte keys).
pub const POSTING_MAX: usize = 255;

/// A column of a SQL table.
#[derive(Clone, Debug)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    /// `NOT NULL` (every primary-key column is): the column never holds NULL, so every value of
    /// its type may be stored (a nullable column reserves one for NULL, see [`crate::value`]).
    pub not_null: bool,
    /// `DEFAULT`: the value an INSERT that omits the column stores (a constant; NULL if none).
    pub default: Option<crate::value::Datum>,
    /// `SERIAL`/`BIGSERIAL`: the column's sequence, the next value it gives. Like PostgreSQL's, it
    /// is not transactional (a rolled-back insert still uses up its value) and is shared by every
    /// instance of the table.
    pub sequence: Option<Arc<AtomicI64>>,
}

impl ColumnDef {
    /// The value an INSERT that omits the column stores: the sequence's next value, the
    /// DEFAULT, or NULL.
    pub fn omitted(&self) -> crate::value::Datum {
        match &self.sequence {
            Some(s) => {
                crate::value::Datum::Int(s.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
            }
            None => self.default.clone().unwrap_or(crate::value::Datum::Null),
        }
    }
}

/// A secondary index.
#[derive(Clone, Debug)]
pub struct IndexDef {
    pub name: String,
    /// Indexed column position.
    pub column: usize,
    /// Its storage table (in the current protocol instance).
    pub storage: TableId,
}

impl IndexDef {
    pub fn storage_name(name: &str) -> String {
        format!("index:{name}")
    }
}

/// A UNIQUE constraint (or unique index): see [`crate::unique`].
#[derive(Clone, Debug)]
pub struct UniqueDef {
    /// PostgreSQL's name: `<table>_<columns>_key` unless named.
    pub name: String,
    /// Constrained column positions, in declaration order.
    pub columns: Vec<usize>,
    /// Its storage table (in the current protocol instance).
    pub storage: TableId,
}

impl UniqueDef {
    pub fn storage_name(name: &str) -> String {
        format!("unique:{name}")
    }
}

/// A SQL table.
#[derive(Clone, Debug)]
pub struct TableDef {
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Primary-key column positions, in key order; empty: a hidden row id.
    pub primary_key: Vec<usize>,
    pub indexes: Vec<IndexDef>,
    pub uniques: Vec<UniqueDef>,
    /// Its storage table (in the current protocol instance).
    pub storage: TableId,
    /// The next hidden row id (shared by every instance of the table).
    pub next_row_id: Arc<AtomicU64>,
}

impl TableDef {
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// Every SQL table.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub tables: Vec<TableDef>,
}

impl Catalog {
    pub fn table(&self, name: &str) -> Option<&TableDef> {
        self.tables.iter().find(|t| t.name == name)
    }
    /// The table holding index `name` (a secondary or unique index).
    pub fn index_owner(&self, name: &str) -> Option<usize> {
        self.tables.iter().position(|t| {
            t.indexes.iter().any(|i| i.name == name) || t.uniques.iter().any(|u| u.name == name)
        })
    }
    /// Whether `name` is taken by a table or an index.
    pub fn relation_exists(&self, name: &str) -> bool {
        self.table(name).is_some() || self.index_owner(name).is_some()
    }
}
