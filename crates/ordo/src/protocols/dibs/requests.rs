//! From Ordo's requests to the predicate lock manager's: relations, columns, keys and the five
//! request templates of every table.
//!
//! | Ordo | predicate lock (relation = the table) | template |
//! |------|----------------------------------------|----------|
//! | `get(t, k, cols)` | `Select  c0 = $1`, reads `cols` | [`GET`] |
//! | `update(t, k, cols, f)` | `Update  c0 = $1`, reads and writes `cols` | [`UPDATE`] |
//! | `insert(t, k, f)` | `Insert  c0 = $1`, writes every column | [`INSERT`] |
//! | `delete(t, k)` | `Delete  c0 = $1`, writes every column | [`DELETE`] |
//! | `scan(t, lo, hi, cols, f)` | `Select  c0 BETWEEN $1 AND $2`, reads `cols` | [`SCAN`] |
//!
//! **Columns.** Predicate column 0 is the key; schema column `i` is predicate column `i + 1`. A
//! `ColumnSet` holds 64 columns and so does a relation of the lock manager, so schema columns 62
//! and 63 (tables that wide are rare: none of Ordo's workloads has one) share predicate column 63 —
//! coarser, never finer: two accesses that touch either conflict as if they touched both.
//!
//! **Keys** are `u64`, predicate values `i64`: [`key`] flips the top bit, `(k ^ 1 << 63) as i64`, a
//! bijection that keeps the order, so `BETWEEN lo AND hi` over keys is `BETWEEN key(lo) AND key(hi)`
//! over values. The filter column of §2.2.3 is column 0: a point request is filed in bucket
//! `key(k) mod N`, a scan in all N.
//!
//! **Templates are declared over every column** (a select reads all, the others read and write all):
//! Ordo's programs name their columns at run time, so each request narrows its template's sets to
//! the columns it touches ([`ordo_predicate::LockManager::acquire_prepared_with`]); the conflict
//! graph's edges, derived with the wide sets, stay valid for the narrow ones, and the column rule
//! (§2.2.4) runs on the narrow sets. That leans on the [`crate::txn::Tx`] contract that `update`'s
//! closure writes only columns of the set it names (the paper's requirement that the engine writes
//! only declared columns); `DibsTx` checks it in debug builds.

use crate::storage::{ColumnSet, Database};
use ordo_predicate::{
    ColumnSet as PredColumns, Expr, Prepared, RelationSpec, StatementKind, Template, TemplateId,
    Value,
};

/// Buckets per relation when column filtering is on (the public artifact's N).
pub const BUCKETS: u32 = 1024;

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

/// Schema columns `cols` (clamped to the table's) as predicate columns (see the module docs).
#[inline]
pub fn columns(cols: ColumnSet) -> PredColumns {
    const LOW: u64 = (1 << 62) - 1;
    let high = if cols.0 & !LOW != 0 { 1 << 63 } else { 0 };
    PredColumns(((cols.0 & LOW) << 1) | high)
}

/// The relations of `db` as the lock manager sees them: one per table, keyed by column 0.
pub fn relations<M: Default + Send + Sync>(db: &Database<M>) -> Vec<RelationSpec> {
    db.tables()
        .iter()
        .map(|t| {
            let width = (t.schema().len() + 1).min(64) as u16;
            RelationSpec::new(t.name(), width, Some(0), BUCKETS)
        })
        .collect()
}

/// The five templates of every table of `db`, in [`template`] order.
pub fn templates<M: Default + Send + Sync>(db: &Database<M>) -> Vec<Template> {
    let eq: Prepared = Expr::eq(0, Value::Param(0));
    let range: Prepared = Expr::between(0, Value::Param(0), Value::Param(1));
    let mut out = Vec::with_capacity(db.tables().len() * PER_TABLE as usize);
    for (r, t) in db.tables().iter().enumerate() {
        let all = PredColumns::all((t.schema().len() + 1).min(64) as u16);
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

    #[test]
    fn columns_shift_past_the_key_and_the_widest_share_one() {
        assert_eq!(columns(ColumnSet::NONE), PredColumns::NONE);
        assert_eq!(columns(ColumnSet::one(0)), PredColumns::of(&[1]));
        assert_eq!(columns(ColumnSet::of(&[2, 5])), PredColumns::of(&[3, 6]));
        assert_eq!(columns(ColumnSet::one(61)), PredColumns::of(&[62]));
        assert_eq!(columns(ColumnSet::one(62)), PredColumns::of(&[63]));
        assert_eq!(columns(ColumnSet::one(63)), PredColumns::of(&[63]));
        assert_eq!(columns(ColumnSet::ALL).0, !1);
    }
}
