//! `nocc` — no concurrency control at all.
//!
//! Reads and writes go straight to the shared rows: no locks, no validation, no undo. It measures the
//! throughput ceiling of the storage core and harness (every other protocol's overhead is reported
//! against it), and it is the checker's best source of real anomalies: lost updates (G-single), write
//! skew (G2-item), dirty reads of aborted writes (G1a) all occur under concurrency.
//!
//! Execution is the shared in-place executor ([`crate::protocols::kit::inplace`]) with its undo log off and
//! nothing around it. Writes still swap the record's version word atomically, so the version order the
//! checker sees is exact even though nothing else is. Writes to read-only tables
//! ([`crate::storage::TableSpec::read_only`]) are refused, as in every protocol.
//!
//! **Remote reads.** In a simulated partition-per-core deployment (`vll-micro --remote-wait`) a
//! multi-partition transaction waits for its remote reads. The VLL paper's "no locking" baseline of
//! Figs. 9–10 is "the same system with all locking completely removed", and its system's thread works
//! on other transactions during such a wait. So does this worker loop: once a transaction has a remote
//! wait to take over ([`Program::take_remote_wait`]), it sets it aside in the Waiting state
//! ([`crate::protocols::kit::waiting`]) and keeps starting new ones, resuming each as its
//! wait ends (first choice, as in Fig. 3). Nothing blocks under `nocc`, so nothing limits admission
//! but [`MAX_WAITING`], a memory guard. Without remote waits the loop is the default one.

use crate::check::TxnId;
use crate::protocols::kit::inplace::{InPlace, Install};
use crate::protocols::kit::waiting::Waiting;
use crate::protocols::{
    execute_retrying, Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo,
};
use crate::storage::{ColumnSet, Database, RowMut, RowRef, TableId, ABSENT};
use crate::txn::{
    refuse_write, Abort, AbortReason, Backoff, IdLedger, Program, Recorder, RequestSource,
    RetryPolicy, Ticket, Tx, TxResult, TxnIds,
};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most transactions a worker keeps Waiting for remote reads (a bound on memory, not a rule: with
/// a 100 µs wait a worker holds about its throughput × 100 µs, a few dozen).
pub const MAX_WAITING: usize = 1024;

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
        interactive: Interactive::Concurrent,
        knobs: &[],
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

    /// The default loop until a transaction has remote reads to wait for, then `run_parking`
    /// (see the module docs).
    fn run_worker<R: RequestSource>(&self, w: &mut NoccWorker, requests: &mut R) {
        let mut backoff = Backoff::new(RetryPolicy::default(), requests.seed());
        let mut program = requests.program();
        while let Some(ticket) = requests.next(&mut program) {
            if let Some(wait) = program.take_remote_wait() {
                return self.run_parking(w, requests, &mut backoff, (program, ticket), wait);
            }
            let outcome = execute_retrying(self, w, &mut program, requests, &mut backoff);
            requests.finished(ticket, outcome);
        }
    }
}

impl NoCC {
    /// The worker loop with the Waiting state, from the transaction `first` on, which waits `wait`:
    /// a transaction whose remote reads have arrived runs first; otherwise a new one is drawn and run
    /// at once, or set aside if it has remote reads to wait for; with nothing to run, the worker
    /// sleeps until the earliest wait ends.
    fn run_parking<R: RequestSource>(
        &self,
        w: &mut NoccWorker,
        requests: &mut R,
        backoff: &mut Backoff,
        first: (R::Program, Ticket),
        wait: Duration,
    ) {
        let mut waiting = Waiting::default();
        waiting.set_aside(first, wait);
        let mut runnable: Vec<(R::Program, Ticket)> = Vec::new();
        let mut spare: Vec<R::Program> = Vec::new();
        let mut exhausted = false;
        loop {
            waiting.due(&mut runnable);
            let (mut program, ticket) = if let Some(t) = runnable.pop() {
                t
            } else if !exhausted && waiting.len() < MAX_WAITING {
                let mut program = spare.pop().unwrap_or_else(|| requests.program());
                let Some(ticket) = requests.next(&mut program) else {
                    exhausted = true;
                    continue;
                };
                if let Some(wait) = program.take_remote_wait() {
                    waiting.set_aside((program, ticket), wait);
                    continue;
                }
                (program, ticket)
            } else if let Some(at) = waiting.next_due() {
                std::thread::sleep(at.saturating_duration_since(Instant::now()));
                continue;
            } else {
                return;
            };
            let outcome = execute_retrying(self, w, &mut program, requests, backoff);
            requests.finished(ticket, outcome);
            spare.push(program);
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
    use crate::harness::{verify, VerifyConfig};
    use crate::protocols::conformance::{open_small, B, KV};
    use crate::protocols::kit::testkit::{contended, mix, run_script_source, MixProgram, Mixed};

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

    /// `nocc` with remote waits is the paper's "no locking" line of Figs. 9–10 — the same system with its
    /// locking removed: it sets a waiting transaction aside and runs everything drawn after it at once,
    /// the one on the same key included (nothing orders them), and keeps admitting while transactions
    /// wait.
    #[test]
    fn nocc_sets_transactions_that_wait_for_remote_reads_aside() {
        use std::time::Duration;
        let waits = |ms| crate::txn::RemoteWait::new(Some(Duration::from_millis(ms)));
        let script = vec![
            MixProgram {
                remote: waits(250),
                ..mix(&[1, 2])
            },
            mix(&[4]),
            mix(&[6]),
            mix(&[1, 8]),
            mix(&[10]),
        ];
        let (src, dump) = run_script_source::<NoCC>(script);
        assert_eq!(
            src.finished,
            [1, 2, 3, 4, 0],
            "everything ran during the wait"
        );
        let key1 = dump.iter().find(|r| r.0 == 1).expect("key 1").1;
        assert_eq!(key1, 1 + 2, "both writers of key 1 ran");
        let n = 40;
        let waiting: Vec<MixProgram> = (0..n)
            .map(|i| MixProgram {
                remote: waits(300),
                ..mix(&[2 * i, 2 * i + 1])
            })
            .collect();
        let (src, _) = run_script_source::<NoCC>(waiting);
        assert_eq!(src.finished.len(), n as usize);
        assert_eq!(src.most_in_flight, n as usize, "all of them waited at once");
    }

    /// The checker does see cycles in the kit's contended test workload (the one the deterministic and
    /// partitioned suites check their protocols on) when there is no concurrency control (retrying with
    /// new seeds until the threads really interleave: on a saturated machine one run may not).
    #[test]
    fn the_workload_exposes_anomalies_without_concurrency_control() {
        let found = (0..20).any(|seed| {
            let cfg = VerifyConfig {
                protocol: ProtocolConfig::with_threads(4),
                txns: 20_000,
                seed,
                prefetch: true,
            };
            let v = verify::run::<NoCC, Mixed>(&contended(), &cfg).unwrap();
            v.report.has(AnomalyKind::GSingle) || !v.report.is_serializable()
        });
        assert!(found, "no anomaly in 20 runs without concurrency control");
    }
}
