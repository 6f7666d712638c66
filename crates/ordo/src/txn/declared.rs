//! Checking that programs do what they declare.
//!
//! VLL locks exactly the declared keys, PWV orders pieces by their declared conflicts and DIBS locks the
//! declared predicates: a piece that touches something it did not declare would silently break them.
//! [`run_checked`] runs a program piece by piece through [`Declared`], a [`Tx`] wrapper that compares
//! every operation with the current piece's declarations and records each mismatch. Workload tests run
//! every transaction type through it.

use super::api::Tx;
use super::error::TxResult;
use super::program::{Access, AccessKind, Program, Target};
use crate::check::TxnId;
use crate::storage::{ColumnSet, RowMut, RowRef, TableId};

/// A [`Tx`] that checks each operation against the current piece's declared accesses.
pub struct Declared<T> {
    inner: T,
    piece: usize,
    declared: Vec<Access>,
    /// Operations no declaration covered, as messages.
    pub violations: Vec<String>,
}

impl<T: Tx> Declared<T> {
    pub fn new(inner: T) -> Self {
        Declared {
            inner,
            piece: 0,
            declared: Vec::new(),
            violations: Vec::new(),
        }
    }

    fn allow(
        &mut self,
        op: &str,
        table: TableId,
        key: Option<u64>,
        range: Option<(u64, u64)>,
        ok: impl Fn(&Access) -> bool,
    ) {
        let covered = self.declared.iter().any(|a| {
            a.table == table
                && ok(a)
                && match (key, range, a.target) {
                    (Some(k), _, _) => a.covers(table, k),
                    (None, Some((lo, hi)), Target::Range { lo: dl, hi: dh }) => {
                        dl <= lo && hi <= dh
                    }
                    _ => false,
                }
        });
        if !covered {
            self.violations.push(format!(
                "piece {}: {op} on table {table} {} not declared (declared: {:?})",
                self.piece,
                key.map(|k| format!("key {k}"))
                    .unwrap_or_else(|| format!("range {range:?}")),
                self.declared
            ));
        }
    }
}

fn reads(a: &Access, cols: ColumnSet) -> bool {
    // Reading more columns than declared is a violation; ALL is clamped by the table, so compare masks.
    a.read == ColumnSet::ALL || cols.0 & !a.read.0 == 0 || a.kind == AccessKind::Insert
}

impl<T: Tx> Tx for Declared<T> {
    fn id(&self) -> TxnId {
        self.inner.id()
    }
    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        self.allow("get", table, Some(key), None, |a| {
            reads(a, cols) || a.kind == AccessKind::Update
        });
        self.inner.get(table, key, cols)
    }
    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        let mut written = ColumnSet::NONE;
        let r = self.inner.update(table, key, cols, |row| {
            let r = f(row);
            written = row.written();
            r
        })?;
        self.allow("update", table, Some(key), None, |a| {
            matches!(a.kind, AccessKind::Update | AccessKind::Insert) && written.0 & !a.write.0 == 0
        });
        Ok(r)
    }
    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        self.allow("insert", table, Some(key), None, |a| {
            a.kind == AccessKind::Insert
        });
        self.inner.insert(table, key, f)
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.allow("delete", table, Some(key), None, |a| {
            a.kind == AccessKind::Delete
        });
        self.inner.delete(table, key)
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        self.allow("scan", table, None, Some((lo, hi)), |a| {
            a.kind == AccessKind::Scan && reads(a, cols)
        });
        self.inner.scan(table, lo, hi, cols, f)
    }
    fn commit(self) -> TxResult<()> {
        self.inner.commit()
    }
    fn abort(self) {
        self.inner.abort()
    }
}

/// Runs `program` in `tx` piece by piece, checking every operation against the piece's declarations,
/// then commits. Returns the violations (empty when the program keeps its word) or the abort.
pub fn run_checked<P: Program, T: Tx>(program: &mut P, tx: T) -> TxResult<Vec<String>> {
    let mut d = Declared::new(tx);
    for i in 0..program.pieces() {
        d.piece = i;
        d.declared.clear();
        program.declare(i, &mut d.declared);
        program.run_piece(i, &mut d)?;
    }
    let violations = std::mem::take(&mut d.violations);
    d.commit()?;
    Ok(violations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::conformance::{open_small, A, B, KV};
    use crate::protocols::nocc::NoCC;
    use crate::protocols::Protocol;

    /// A program whose second piece writes a column it did not declare.
    struct Sloppy;
    impl Program for Sloppy {
        fn name(&self) -> &'static str {
            "sloppy"
        }
        fn pieces(&self) -> usize {
            3
        }
        fn declare(&self, piece: usize, out: &mut Vec<Access>) {
            match piece {
                0 => out.push(Access::read(KV, 10, ColumnSet::one(A))),
                1 => out.push(Access::update(KV, 20, ColumnSet::one(A), ColumnSet::one(A))),
                _ => out.push(Access::scan(KV, 0, 50, ColumnSet::one(A))),
            }
        }
        fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
            match piece {
                0 => {
                    tx.get(KV, 10, ColumnSet::one(A))?;
                }
                1 => {
                    tx.update(KV, 20, ColumnSet::one(B), |r| r.set_int(B, 1))?;
                }
                _ => tx.scan(KV, 0, 60, ColumnSet::one(A), |_, _| true)?,
            }
            Ok(())
        }
    }

    #[test]
    fn undeclared_columns_and_ranges_are_reported() {
        let p: NoCC = open_small();
        let mut w = p.worker(0, false);
        let v = run_checked(&mut Sloppy, p.begin(&mut w)).unwrap();
        assert_eq!(v.len(), 2, "{v:#?}");
        assert!(v[0].starts_with("piece 1: update"), "{}", v[0]);
        assert!(v[1].starts_with("piece 2: scan"), "{}", v[1]);
    }
}
