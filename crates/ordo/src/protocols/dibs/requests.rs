//! From Ordo's requests to the predicate lock manager's: relations, columns, keys and the five
//! request templates of every table.
//!
//! | Ordo | predicate lock (relation = the table) | template |
//! |------|----------------------------------------|----------|
//! | `get(t, k, cols)` | `Select  c0 = $1` | [`GET`] |
//! | `update(t, k, cols, f)` | `Update  c0 = $1` | [`UPDATE`] |
//! | `insert(t, k, f)` | `Insert  c0 = $1` | [`INSERT`] |
//! | `delete(t, k)` | `Delete  c0 = $1` | [`DELETE`] |
//! | `scan(t, lo, hi, cols, f)` | `Select  c0 BETWEEN $1 AND $2` | [`SCAN`] |
//!
//! **Keys** are `u64`, predicate values `i64`: [`key`] flips the top bit, `(k ^ 1 << 63) as i64`, a
//! bijection that keeps the order, so `BETWEEN lo AND hi` over keys is `BETWEEN key(lo) AND key(hi)`
//! over values. The filter column of §2.2.3 is column 0: a point request is filed in bucket
//! `key(k) mod N`, a scan in all N.
//!
//! **Columns: whole rows.** Predicate column 0 is the key, schema column `i` is predicate column
//! `i + 1` (a relation has at most 64 columns, so schema columns 62 and 63 share column 63 —
//! coarser, never finer). Every request locks every column of the rows it names: a select reads
//! them all, an update reads and writes them all. Column-level conflicts (§2.2.4) would let two
//! transactions write different columns of one row, or read one column while another is written,
//! at once — and Ordo's store keeps **one version word per row**: the writer's id that the checker
//! reads the version order from, and that a rollback restores. With the column rule a rollback
//! restored the word over a concurrent writer's and the checker saw version forks (`ordo verify -w
//! ycsb --theta 0.9`: G0, G1a, G1c), so on this store the rule never fires: `--dibs-opt full` is
//! `filter` plus the threshold k. The lock manager keeps per-request column sets
//! ([`ordo_predicate::LockManager::acquire_prepared_with`]) for executors with column versions.

use crate::storage::{Database, Table};
use ordo_predicate::{
    ColumnSet as PredColumns, Expr, Predicate, Prepared, RelationSpec, StatementKind, Template,
    TemplateId, Value,
};

/// Templates per table, and the offset of each in a table's block.
pub const PER_TABLE: u32 = 5;
pub const GET: u32 = 0;
pub const UPDATE: u32 = 1;
pub const INSERT: u32 = 2;
pub const DELETE: u32 = 3;
pub const SCAN: u32 = 4;

/// The template of request `what` ([`GET`] … [`SCAN`]) on `table`.
#[inline]
pub fn template(table: u32, what: u32) -> TemplateId {
    table * PER_TABLE + what
}

/// A key as a predicate value: order-preserving (`u64` order is `i64` order of the result).
#[inline]
pub fn key(k: u64) -> i64 {
    (k ^ (1 << 63)) as i64
}

/// Predicate column of schema column `c` (column 0 is the key).
#[inline]
fn column(c: u16) -> u16 {
    (c + 1).min(63)
}

/// `pred` over schema columns as a predicate over the lock manager's columns (each one up).
pub fn shift(pred: &Predicate) -> Predicate {
    match pred {
        Expr::True => Expr::True,
        Expr::False => Expr::False,
        Expr::Atom(a) => Expr::atom(column(a.column), a.op, a.value),
        Expr::And(ps) => Expr::And(ps.iter().map(shift).collect()),
        Expr::Or(ps) => Expr::Or(ps.iter().map(shift).collect()),
    }
}

/// The columns of table `t`'s relation: the key, then the schema's (at most 64).
fn width<M: Default + Send + Sync>(t: &Table<M>) -> u16 {
    (t.schema().len() + 1).min(64) as u16
}

/// Every predicate column of table `t`'s relation (whole rows: see the module doc).
pub fn all_columns<M: Default + Send + Sync>(t: &Table<M>) -> PredColumns {
    PredColumns::all(width(t))
}

/// The relations of `db` as the lock manager sees them: one per table, keyed by column 0, with
/// `buckets` buckets each when column filtering is on (`--dibs-buckets`).
pub fn relations<M: Default + Send + Sync>(db: &Database<M>, buckets: u32) -> Vec<RelationSpec> {
    db.tables()
        .iter()
        .map(|t| RelationSpec::new(t.name(), width(t), Some(0), buckets))
        .collect()
}

/// The five templates of every table of `db`, in [`template`] order.
pub fn templates<M: Default + Send + Sync>(db: &Database<M>) -> Vec<Template> {
    let eq: Prepared = Expr::eq(0, Value::Param(0));
    let range: Prepared = Expr::between(0, Value::Param(0), Value::Param(1));
    let mut out = Vec::with_capacity(db.tables().len() * PER_TABLE as usize);
    for (r, t) in db.tables().iter().enumerate() {
        let all = all_columns(t);
        let one = |kind, predicate: &Prepared, write| Template {
            relation: r as u32,
            kind,
            predicate: predicate.clone(),
            read: all,
            write,
        };
        out.push(one(StatementKind::Select, &eq, PredColumns::NONE));
        out.push(one(StatementKind::Update, &eq, all));
        out.push(one(StatementKind::Insert, &eq, all));
        out.push(one(StatementKind::Delete, &eq, all));
        out.push(one(StatementKind::Select, &range, PredColumns::NONE));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order() {
        let ks = [
            0,
            1,
            1 << 62,
            (1 << 63) - 1,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ];
        for w in ks.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{} < {}", w[0], w[1]);
        }
        assert_eq!(key(0), i64::MIN);
        assert_eq!(key(u64::MAX), i64::MAX);
    }
}
