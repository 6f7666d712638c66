//! Reading a run's final state outside any transaction, for invariant checks (after all workers
//! stopped). Reads the row images in the table as they are; takes no locks.

use ordo::storage::{ColumnSet, Database, RowRef, TableId, ABSENT};
use std::sync::atomic::Ordering;

/// Reads the record `key` of `table` (every column) and passes it to `f`; `None` if absent.
pub fn with_row<M: Default + Send + Sync, R>(
    db: &Database<M>,
    table: TableId,
    key: u64,
    buf: &mut Vec<u64>,
    f: impl FnOnce(RowRef<'_>) -> R,
) -> Option<R> {
    let t = db.table(table);
    let rid = t.lookup(key)?;
    if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 {
        return None;
    }
    buf.clear();
    buf.resize(t.schema().row_words(), 0);
    t.read_into(rid, ColumnSet::ALL, buf);
    Some(f(RowRef::new(t.schema(), buf)))
}

/// The integer column `col` of record `key`, if present.
pub fn int<M: Default + Send + Sync>(
    db: &Database<M>,
    table: TableId,
    key: u64,
    col: usize,
    buf: &mut Vec<u64>,
) -> Option<i64> {
    with_row(db, table, key, buf, |r| r.int(col))
}

/// Overwrites the integer column `col` of present record `key` (tests corrupt a database with it).
pub fn set_int<M: Default + Send + Sync>(
    db: &Database<M>,
    table: TableId,
    key: u64,
    col: usize,
    v: i64,
) -> bool {
    let t = db.table(table);
    let Some(rid) = t.lookup(key) else {
        return false;
    };
    let mut buf = vec![0u64; t.schema().row_words()];
    t.read_into(rid, ColumnSet::ALL, &mut buf);
    let mut row = ordo::storage::RowMut::new(t.schema(), &mut buf);
    row.set_int(col, v);
    t.write_from(rid, ColumnSet::one(col), &buf);
    true
}
