//! `calvin-vll` — the VLL paper's **deterministic VLL**: Calvin's pipeline with the lock-manager thread
//! running *arrayed* VLL and SCA instead of a hash table of lock queues.
//!
//! # Arrayed VLL (paper §2.1–2.3, §3.2)
//!
//! Each record has a pair of counters, `C_X` and `C_S`, kept in plain arrays indexed by row slot
//! ([`Arrayed`], from the `vll` module) rather than beside the record: the lock-manager thread never
//! touches records, so separate arrays keep its working set small and cache-resident — the paper's
//! "arrayed" variant. Workers resolve each key to its row slot while planning
//! ([`Scheduler::NEEDS_ROWS`]), so the lock-manager thread does no index lookups. The **TxnQueue**
//! ([`TxnQueue`], also from `vll`) holds the admitted, unfinished transactions in the global order.
//!
//! ```text
//!   paper (Fig. 1)                                  here (ArrayedVll)
//!   BeginTransaction: C_S++ / C_X++, Blocked if      request(): Arrayed::request on every lock,
//!     C_X>0 (read) or C_X>1 ∨ C_S>0 (write)            enqueue Free or Blocked; Free → ready now
//!   FinishTransaction: C_S-- / C_X--, dequeue        release(): Arrayed::release, TxnQueue::remove
//!   head of TxnQueue Blocked → it is safe, run it   release(): claim the head if Blocked → ready
//!   SCA (Fig. 4) when the CPU would idle             idle(): TxnQueue::sca until it finds nothing
//! ```
//!
//! Why the head is safe: a transaction younger than the head that conflicts with it saw the head's
//! counters when it entered, so it is Blocked; every older one has finished. SCA generalizes this: a
//! blocked transaction conflicting with no older unfinished transaction can run. Transactions enter
//! the queue in the global order and run only after every older conflicting one finished, so the result
//! equals the serial execution in sequence order, as with Calvin's lock manager.
//!
//! There is no admission limit ("TxnQueue full") here: a deterministic scheduler must admit every
//! sequenced transaction in order; the workers' in-flight windows bound the queue instead. SCA runs
//! when the lock-manager thread has no message to handle, something changed since the last scan, and
//! the queue is "full" in the paper's sense — at least half of the admitted transactions are blocked;
//! it frees every transaction Fig. 4 would find if called again after each find (the paper's SCA
//! returns one per call), in **one** pass over the queue ([`Sca::select_all`]: a claimed transaction
//! marks what it marked as a blocked candidate, so the scan just continues). Rescanning from the head
//! after each find made SCA the pipeline's bottleneck with many workers (16 workers, CI 0.01 on 2
//! vCPUs: 50 k → 180–260 k txn/s with one pass; `docs/results/deterministic.md`). Running it at every
//! free moment cost throughput (each scan walks the whole queue); running it only when everything was
//! blocked left blocked transactions waiting for the head for milliseconds.

use super::plan::{LockRequest, Mode};
use super::scheduler::{Scheduler, SeqSlab};
use super::{Deterministic, Flavor};
use crate::protocols::vll::counters::{Arrayed, CounterStore, Counters};
use crate::protocols::vll::sca::{lock_id, Sca};
use crate::protocols::vll::txn_queue::{Seq, TxnQueue, TxnState};
use crate::protocols::{Isolation, ProtocolInfo};
use crate::storage::{Database, RowId, TableId};

/// A transaction in the TxnQueue: its global sequence number and its locks.
struct Queued {
    seq: u64,
    locks: Vec<LockRequest>,
}

/// Arrayed VLL with SCA, run by the lock-manager thread.
pub struct ArrayedVll {
    counters: Arrayed,
    queue: TxnQueue<Queued>,
    /// Global sequence number → TxnQueue position.
    position: SeqSlab<Seq>,
    sca: Sca,
    /// Something changed since SCA last ran.
    dirty: bool,
    /// What the last SCA pass found (scratch, kept for its capacity).
    found: Vec<Seq>,
    /// [`CounterStore`] takes a database; [`Arrayed`] never reads it.
    no_db: Database<()>,
}

impl Default for ArrayedVll {
    fn default() -> Self {
        ArrayedVll {
            counters: Arrayed::default(),
            queue: TxnQueue::new(),
            position: SeqSlab::default(),
            sca: Sca::new(),
            dirty: false,
            found: Vec::new(),
            no_db: Database::new(),
        }
    }
}

impl ArrayedVll {
    /// `(C_X, C_S)` of row slot `rid` of `table` (tests).
    pub fn counters(&self, table: TableId, rid: RowId) -> Counters {
        CounterStore::<()>::counters(&self.counters, &self.no_db, table, rid)
    }

    /// Blocked transactions in the TxnQueue (tests).
    pub fn blocked(&self) -> usize {
        self.queue.blocked()
    }

    /// Runs SCA until it finds no more blocked transactions that conflict with no older one, claiming
    /// and pushing each it finds — in one pass over the TxnQueue ([`TxnQueue::sca_all`]), which finds
    /// what repeating Fig. 4's scan after each claim would.
    pub fn sca(&mut self, ready: &mut Vec<u64>) -> bool {
        self.dirty = false;
        if self.queue.blocked() == 0 {
            return false;
        }
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        self.queue.sca_all(
            &mut self.sca,
            |_| true,
            |t, mark| {
                for l in &t.locks {
                    mark(lock_id(l.table, l.key), l.mode == Mode::Exclusive);
                }
            },
            &mut found,
        );
        for &q in &found {
            let claimed = self.queue.claim(q);
            debug_assert!(claimed, "SCA returns blocked transactions");
            ready.push(self.queue.payload(q).expect("queued").seq);
        }
        let any = !found.is_empty();
        self.found = found;
        any
    }
}

impl Scheduler for ArrayedVll {
    const NEEDS_ROWS: bool = true;

    fn request(&mut self, seq: u64, locks: Vec<LockRequest>, _ready: &mut Vec<u64>) -> bool {
        let mut free = true;
        for l in &locks {
            free &= self.counters.request(&self.no_db, l);
        }
        let q = self.queue.enqueue(Queued { seq, locks }, !free);
        self.position.insert(seq, q);
        self.dirty |= !free;
        free
    }

    fn release(&mut self, seq: u64, ready: &mut Vec<u64>) {
        let Some(q) = self.position.remove(seq) else {
            return;
        };
        let t = self
            .queue
            .remove(q)
            .expect("a released transaction is queued");
        for l in &t.locks {
            self.counters.release(&self.no_db, l);
        }
        self.dirty = true;
        // The head of the TxnQueue conflicts with nobody older: if it is blocked, it may run.
        if let Some(head) = self.queue.front() {
            if self.queue.state(head) == Some(TxnState::Blocked) && self.queue.claim(head) {
                ready.push(self.queue.payload(head).expect("queued").seq);
            }
        }
    }

    /// SCA only when the TxnQueue is "full" of blocked transactions: something changed since the
    /// last scan, and at least half of the admitted transactions are blocked.
    fn idle(&mut self, ready: &mut Vec<u64>) -> bool {
        let blocked = self.queue.blocked();
        self.dirty && blocked > 0 && 2 * blocked >= self.queue.len() && self.sca(ready)
    }
}

impl Flavor for ArrayedVll {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "calvin-vll",
        summary: "deterministic VLL: Calvin's sequencer with arrayed VLL counters + SCA in the lock-manager thread",
        paper: "Ren, Thomson, Abadi, VLL (VLDB J. 2015) §2.1-2.4, §3.2 (deterministic VLL)",
        isolation: Isolation::Serializable,
    };
}

/// Deterministic VLL: the Calvin pipeline with [`ArrayedVll`] as its lock manager.
pub type CalvinVll = Deterministic<ArrayedVll>;

#[cfg(test)]
mod tests {
    use super::*;

    fn x(key: u64) -> LockRequest {
        LockRequest::new(0, key, key, Mode::Exclusive)
    }
    fn s(key: u64) -> LockRequest {
        LockRequest::new(0, key, key, Mode::Shared)
    }
    fn c(cx: u32, cs: u32) -> Counters {
        Counters { cx, cs }
    }

    /// The paper's §2.5 trace: A(x), B(y), C(x, z), D(z). C is blocked by A; D by C (z). Basic VLL runs
    /// C only when it reaches the head; SCA finds C after A finishes... and not D, which is behind C.
    #[test]
    fn section_2_5_trace_with_counters_head_rule_and_sca() {
        let (kx, ky, kz) = (1, 2, 3);
        let mut v = ArrayedVll::default();
        let mut ready = Vec::new();
        assert!(v.request(1, vec![x(kx)], &mut ready), "A free");
        assert!(v.request(2, vec![x(ky)], &mut ready), "B free");
        assert!(
            !v.request(3, vec![x(kx), x(kz)], &mut ready),
            "C blocked on x"
        );
        assert!(!v.request(4, vec![x(kz)], &mut ready), "D blocked on z");
        assert_eq!(v.counters(0, kx), c(2, 0));
        assert_eq!(v.counters(0, kz), c(2, 0));
        assert_eq!(v.blocked(), 2);
        assert!(
            !v.sca(&mut ready) && ready.is_empty(),
            "C still conflicts with A"
        );
        v.release(1, &mut ready);
        assert!(
            ready.is_empty(),
            "B is the head and runs already; C is not the head"
        );
        assert!(v.sca(&mut ready));
        assert_eq!(ready, vec![3], "SCA returns C, not D");
        ready.clear();
        v.release(3, &mut ready);
        assert!(ready.is_empty(), "B is still the head");
        v.release(2, &mut ready);
        assert_eq!(ready, vec![4], "D at the head");
        ready.clear();
        v.release(4, &mut ready);
        for k in [kx, ky, kz] {
            assert_eq!(v.counters(0, k), c(0, 0), "counters back to zero");
        }
    }

    #[test]
    fn shared_locks_coexist_and_a_writer_waits_for_readers() {
        let mut v = ArrayedVll::default();
        let mut ready = Vec::new();
        assert!(v.request(1, vec![s(7)], &mut ready));
        assert!(v.request(2, vec![s(7)], &mut ready));
        assert!(!v.request(3, vec![x(7)], &mut ready));
        assert!(
            !v.request(4, vec![s(7)], &mut ready),
            "a reader behind a writer waits"
        );
        v.release(2, &mut ready);
        assert!(!v.sca(&mut ready), "T1 still reads");
        v.release(1, &mut ready);
        assert_eq!(ready, vec![3], "the writer is the head");
        ready.clear();
        v.release(3, &mut ready);
        assert_eq!(ready, vec![4]);
    }

    /// Sequence numbers with gaps (barriers and the other scheduler's numbers are not queued here).
    #[test]
    fn sparse_sequence_numbers_map_to_queue_positions() {
        let mut v = ArrayedVll::default();
        let mut ready = Vec::new();
        assert!(v.request(10, vec![x(1)], &mut ready));
        assert!(!v.request(15, vec![x(1)], &mut ready));
        v.release(10, &mut ready);
        assert_eq!(ready, vec![15]);
    }
}
