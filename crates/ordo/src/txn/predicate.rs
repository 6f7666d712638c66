//! Requests that name their rows by a **predicate over columns** rather than by keys: `byte2_1
//! BETWEEN 10 AND 25 OR byte2_1 BETWEEN 90 AND 105`, the shape of DIBS's SubscriberScan (§4.1) and
//! of a SQL `WHERE` clause on non-key columns.
//!
//! A [`Predicate`] is the predicate lock manager's own type (`ordo_predicate`), with its columns
//! numbered as in the table's [`crate::storage::Schema`], compared as integers: every column it
//! names must be an integer column of the table ([`check`]). [`crate::txn::Tx::scan_where`] and
//! [`crate::txn::Tx::update_where`] take one. By default a protocol runs them as a scan of the
//! whole table that keeps the rows satisfying the predicate — so each protocol protects them as it
//! protects a scan of every key (a range lock over all of them, a validated scan set, a snapshot),
//! never less. DIBS locks the predicate itself: a writer of a row outside it does not wait.

use crate::storage::{ColumnSet, ColumnType, RowRef, Schema};
pub use ordo_predicate::{Expr, Isolation, Op, Predicate};

/// The columns `pred` reads.
pub fn columns(pred: &Predicate) -> ColumnSet {
    ColumnSet(pred.columns())
}

/// Whether `row` satisfies `pred` (a [`check`]ed predicate: integer columns of the row's table).
#[inline]
pub fn satisfies(pred: &Predicate, row: &RowRef<'_>) -> bool {
    pred.eval_by(&|c| row.int(usize::from(c)))
}

/// Checks that `pred` is well formed and names only integer columns of `schema`; the error is one
/// line for the user.
pub fn check(pred: &Predicate, schema: &Schema) -> Result<(), String> {
    pred.validate(schema.len().min(64) as u16)
        .map_err(|e| e.to_string())?;
    for c in columns(pred).iter() {
        let col = &schema.columns()[c];
        if !matches!(col.ty, ColumnType::Int) {
            return Err(format!(
                "column {} ({}) is not an integer column: a predicate compares integers",
                c, col.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Column;

    fn schema() -> Schema {
        Schema::new(vec![
            Column::new("name", ColumnType::Char(8)),
            Column::new("a", ColumnType::Int),
            Column::new("b", ColumnType::Int),
        ])
        .unwrap()
    }

    #[test]
    fn integer_columns_of_the_table_only() {
        let s = schema();
        let ok = Expr::or(vec![Expr::between(1, 10, 20), Expr::atom(2, Op::Ne, 3)]);
        assert_eq!(check(&ok, &s), Ok(()));
        assert_eq!(columns(&ok), ColumnSet::of(&[1, 2]));
        let e = check(&Expr::eq(0, 1), &s).unwrap_err();
        assert!(e.contains("not an integer column"), "{e}");
        assert!(check(&Expr::eq(3, 1), &s).is_err(), "no column 3");
        assert!(check(&Expr::And(vec![]), &s).is_err(), "malformed");
    }
}
