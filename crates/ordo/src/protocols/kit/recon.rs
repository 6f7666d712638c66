//! The reconnaissance transaction: what planning runs a program's pieces on to learn what later
//! pieces will touch (VLL paper §2.4 "dependent transactions", Calvin's OLLP).
//!
//! A protocol that must know a transaction's whole access set before it runs (the VLL family,
//! Calvin, H-Store, the partitioned engines) cannot take it from a declaration that depends on data
//! — TPC-C Payment by customer last name, any secondary-index lookup. [`super::plan::Planner`] then
//! runs the pieces such a declaration depends on against a [`ReconTx`]:
//!
//! * **reads** see the latest installed values, at no isolation (nothing is locked, nothing
//!   recorded for the checker);
//! * **writes go to a private overlay** that the same transaction's later reads see, and are thrown
//!   away at the end.
//!
//! Why writes are visible to later pieces rather than discarded: reconnaissance must predict what the
//! real execution will declare, and the real execution sees its own writes. A piece that bumps a
//! counter and a later piece that declares a key computed from it (TPC-C New-Order reads and
//! increments `d_next_o_id`, then inserts order `d_next_o_id`) would otherwise be planned from a value
//! the real run never sees, and fail validation every time. (Before the kit, the deterministic
//! engines discarded writes and VLL kept them in an overlay; the overlay is the faithful one.)
//!
//! The prediction can still go stale — another transaction changes what was read before this one
//! runs. The real execution checks every operation against the locks taken; an operation outside
//! them aborts the transaction with [`AbortReason::Validation`](crate::txn::AbortReason::Validation),
//! and it is planned again.
//!
//! Scans read the table's present keys; the overlay's inserts and deletes are not merged into them
//! (a difference shows up as an undeclared access in the real run). The overlay keeps its buffers
//! across transactions ([`Overlay`]), so a reconnaissance allocates nothing once warm.

use crate::check::TxnId;
use crate::storage::{ColumnSet, Database, RowMut, RowRef, TableId, ABSENT};
use crate::txn::{Tx, TxResult};
use std::sync::atomic::Ordering;

/// Private writes of a reconnaissance run, reused across runs: for each (table, key) written, its row
/// image (an offset into `words`) or `None` once deleted.
#[derive(Debug, Default)]
pub struct Overlay {
    entries: Vec<((TableId, u64), Option<usize>)>,
    words: Vec<u64>,
    /// The row buffer reads return.
    buf: Vec<u64>,
}

impl Overlay {
    fn clear(&mut self) {
        self.entries.clear();
        self.words.clear();
    }

    fn find(&self, table: TableId, key: u64) -> Option<Option<usize>> {
        self.entries
            .iter()
            .find(|(k, _)| *k == (table, key))
            .map(|&(_, img)| img)
    }

    /// Records `buf` as the image of (table, key).
    fn put(&mut self, table: TableId, key: u64) {
        let offset = match self.find(table, key) {
            Some(Some(off)) => off,
            _ => {
                let off = self.words.len();
                self.words.resize(off + self.buf.len(), 0);
                off
            }
        };
        self.words[offset..offset + self.buf.len()].copy_from_slice(&self.buf);
        self.set(table, key, Some(offset));
    }

    fn set(&mut self, table: TableId, key: u64, img: Option<usize>) {
        match self.entries.iter_mut().find(|(k, _)| *k == (table, key)) {
            Some(e) => e.1 = img,
            None => self.entries.push(((table, key), img)),
        }
    }
}

/// The reconnaissance transaction (see the module docs).
pub struct ReconTx<'a, M> {
    db: &'a Database<M>,
    overlay: &'a mut Overlay,
}

impl<'a, M: Default + Send + Sync> ReconTx<'a, M> {
    /// A reconnaissance run over `db`, its overlay (emptied) in `overlay`.
    pub fn new(db: &'a Database<M>, overlay: &'a mut Overlay) -> Self {
        overlay.clear();
        ReconTx { db, overlay }
    }

    /// Loads the current image of (table, key) into the buffer — the overlay's, else columns `cols`
    /// of the table's row — and says whether the record is present.
    fn load(&mut self, table: TableId, key: u64, cols: ColumnSet) -> bool {
        let t = self.db.table(table);
        let o = &mut *self.overlay;
        o.buf.clear();
        o.buf.resize(t.schema().row_words(), 0);
        match o.find(table, key) {
            Some(Some(off)) => {
                let n = o.buf.len();
                o.buf.copy_from_slice(&o.words[off..off + n]);
                return true;
            }
            Some(None) => return false,
            None => {}
        }
        let Some(rid) = t.lookup(key) else {
            return false;
        };
        if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 {
            return false;
        }
        t.read_into(rid, cols, &mut o.buf);
        true
    }
}

impl<M: Default + Send + Sync> Tx for ReconTx<'_, M> {
    fn id(&self) -> TxnId {
        0
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        if !self.load(table, key, cols) {
            return Ok(None);
        }
        Ok(Some(RowRef::new(
            self.db.table(table).schema(),
            &self.overlay.buf,
        )))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        _: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        // The whole image: the overlay keeps rows, which later reads of any column may see.
        let all = self.db.table(table).schema().all();
        if !self.load(table, key, all) {
            return Ok(None);
        }
        let schema = self.db.table(table).schema();
        let r = f(&mut RowMut::new(schema, &mut self.overlay.buf));
        self.overlay.put(table, key);
        Ok(Some(r))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        let schema = self.db.table(table).schema();
        let o = &mut *self.overlay;
        o.buf.clear();
        o.buf.resize(schema.row_words(), 0);
        f(&mut RowMut::new(schema, &mut o.buf));
        o.put(table, key);
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let present = self.load(table, key, ColumnSet::NONE);
        self.overlay.set(table, key, None);
        Ok(present)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        mut f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        let t = self.db.table(table);
        if !t.is_ordered() || lo > hi {
            return Ok(());
        }
        let buf = &mut self.overlay.buf;
        buf.clear();
        buf.resize(t.schema().row_words(), 0);
        for (key, rid) in t.range(lo, hi) {
            if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 {
                continue;
            }
            t.read_into(rid, cols, buf);
            if !f(key, RowRef::new(t.schema(), buf)) {
                break;
            }
        }
        Ok(())
    }

    fn commit(self) -> TxResult<()> {
        Ok(())
    }

    fn abort(self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::conformance::{small_db, A, B, KV};

    /// A later read sees an earlier write of the same reconnaissance, the table never does; a
    /// delete hides the row; an insert is readable; nothing outlives the run.
    #[test]
    fn writes_are_private_and_visible_to_later_reads() {
        let db: Database<()> = small_db();
        let before = |key| {
            let mut o = Overlay::default();
            let mut tx = ReconTx::new(&db, &mut o);
            tx.get(KV, key, ColumnSet::ALL)
                .unwrap()
                .map(|r| (r.int(A), r.int(B)))
        };
        let (a10, b10) = before(10).expect("key 10 is loaded");
        let mut overlay = Overlay::default();
        {
            let mut tx = ReconTx::new(&db, &mut overlay);
            tx.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, r.int(B) + 5))
                .unwrap();
            let r = tx.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap();
            assert_eq!(
                (r.int(A), r.int(B)),
                (a10, b10 + 5),
                "its own write, whole row"
            );
            tx.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, r.int(B) + 1))
                .unwrap();
            assert_eq!(
                tx.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B),
                b10 + 6,
                "a second write replaces the first"
            );
            assert!(tx.delete(KV, 10).unwrap());
            assert!(tx.get(KV, 10, ColumnSet::ALL).unwrap().is_none());
            assert!(tx.update(KV, 10, ColumnSet::ALL, |_| ()).unwrap().is_none());
            tx.insert(KV, 999_999, |r| r.set_int(B, 7)).unwrap();
            assert_eq!(
                tx.get(KV, 999_999, ColumnSet::ALL).unwrap().unwrap().int(B),
                7
            );
        }
        assert_eq!(before(10), Some((a10, b10)), "the table is untouched");
        assert_eq!(before(999_999), None);
        let mut tx = ReconTx::new(&db, &mut overlay);
        assert_eq!(
            tx.get(KV, 10, ColumnSet::ALL).unwrap().map(|r| r.int(B)),
            Some(b10),
            "a new run starts with an empty overlay"
        );
    }
}
