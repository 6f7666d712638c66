//! `nocc` — no concurrency control at all.
//!
//! Reads and writes go straight to the shared rows: no locks, no validation, no undo. It measures the
//! throughput ceiling of the storage core and harness (every other protocol's overhead is reported
//! against it), and it is the checker's best source of real anomalies: lost updates (G-single), write
//! skew (G2-item), dirty reads of aborted writes (G1a) all occur under concurrency.
//!
//! Execution is the shared in-place executor ([`crate::protocols::inplace`]) with its undo log off and
//! nothing around it. Writes still swap the record's version word atomically, so the version order the
//! checker sees is exact even though nothing else is. Writes to read-only tables
//! ([`crate::storage::TableSpec::read_only`]) are refused, as in every protocol.

use crate::check::TxnId;
use crate::protocols::inplace::{InPlace, Install};
use crate::protocols::{Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::{ColumnSet, Database, RowMut, RowRef, TableId, ABSENT};
use crate::txn::{refuse_write, Abort, AbortReason, IdLedger, Recorder, Tx, TxResult, TxnIds};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The no-isolation protocol.
pub struct NoCC {
    db: Database<()>,
    ids: Arc<IdLedger>,
}

/// Per-thread state of [`NoCC`].
pub struct NoccWorker {
    ids: TxnIds,
    /// The shared in-place executor, with its undo log off.
    exec: InPlace,
}

/// A [`NoCC`] transaction.
pub struct NoccTx<'w> {
    db: &'w Database<()>,
    w: &'w mut NoccWorker,
    id: TxnId,
    done: bool,
}

impl Protocol for NoCC {
    type Meta = ();
    type Worker = NoccWorker;
    type Tx<'w> = NoccTx<'w>;

    const INFO: ProtocolInfo = ProtocolInfo {
        name: "nocc",
        summary: "no concurrency control: the throughput ceiling and a source of anomalies",
        paper: "baseline (DBx1000's NO CC mode)",
        isolation: Isolation::None,
    };

    fn open(db: Database<()>, _config: &ProtocolConfig) -> Self {
        NoCC {
            db,
            ids: IdLedger::new(),
        }
    }
    fn db(&self) -> &Database<()> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> NoccWorker {
        NoccWorker {
            ids: self.ids.lease(id),
            exec: InPlace::new(id, recording, false),
        }
    }
    fn recorder(w: &mut NoccWorker) -> &mut Recorder {
        &mut w.exec.rec
    }
    fn begin<'w>(&'w self, w: &'w mut NoccWorker) -> NoccTx<'w> {
        let id = w.ids.next_id();
        NoccTx {
            db: &self.db,
            w,
            id,
            done: false,
        }
    }
}

impl Tx for NoccTx<'_> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        let t = self.db.table(table);
        Ok(self.w.exec.get(t, key, None, cols))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        let t = self.db.table(table);
        refuse_write(t)?;
        let id = self.id;
        Ok(self
            .w
            .exec
            .update_key(t, key, None, cols, |_| Install::Swap(id), f))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        let t = self.db.table(table);
        refuse_write(t)?;
        let (rid, _) = t.get_or_create(key);
        if t.version(rid).load(Ordering::Acquire) & ABSENT == 0 {
            return Err(Abort::with_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            ));
        }
        self.w.exec.insert(t, key, rid, Install::Swap(self.id), f);
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let t = self.db.table(table);
        refuse_write(t)?;
        let Some(rid) = t.lookup(key) else {
            return Ok(false);
        };
        if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 {
            return Ok(false);
        }
        self.w
            .exec
            .delete(t, key, rid, Install::Swap(self.id | ABSENT));
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        self.w.exec.scan(self.db.table(table), lo, hi, cols, f);
        Ok(())
    }

    fn commit(mut self) -> TxResult<()> {
        self.done = true;
        self.w.exec.rec.finish(self.id, true);
        Ok(())
    }

    fn abort(self) {}
}

impl Drop for NoccTx<'_> {
    fn drop(&mut self) {
        if !self.done {
            // No undo: an aborted transaction's writes stay visible (that is the point of `nocc`).
            self.w.exec.rec.finish(self.id, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check, AnomalyKind, History};
    use crate::protocols::conformance::{open_small, B, KV};

    /// Two interleaved read-modify-writes of one key: the second overwrites the first (a lost update),
    /// and the checker names it G-single from the recorded history.
    #[test]
    fn interleaved_increments_lose_an_update_and_the_checker_sees_it() {
        let p: NoCC = open_small();
        let (mut w1, mut w2) = (p.worker(0, true), p.worker(1, true));
        let mut t1 = p.begin(&mut w1);
        let mut t2 = p.begin(&mut w2);
        let b1 = t1.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B);
        let b2 = t2.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B);
        t1.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, b1 + 1))
            .unwrap();
        t2.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, b2 + 1))
            .unwrap();
        t1.commit().unwrap();
        t2.commit().unwrap();
        let mut t3 = p.begin(&mut w1);
        assert_eq!(
            t3.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B),
            1,
            "one increment lost"
        );
        drop(t3);
        let mut txns = NoCC::recorder(&mut w1).take();
        txns.extend(NoCC::recorder(&mut w2).take());
        let report = check(&History { txns });
        assert!(report.has(AnomalyKind::GSingle), "{report}");
    }
}
