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
//!   SCA (Fig. 4) when the CPU would idle             idle(): TxnQueue::sca_all, when the queue is full
//!   TxnQueue full: admit nothing more                admits(): fewer than blocked_limit blocked
//! ```
//!
//! Why the head is safe: a transaction younger than the head that conflicts with it saw the head's
//! counters when it entered, so it is Blocked; every older one has finished. SCA generalizes this: a
//! blocked transaction conflicting with no older unfinished transaction can run. Transactions enter
//! the queue in the global order and run only after every older conflicting one finished, so the result
//! equals the serial execution in sequence order, as with Calvin's lock manager.
//!
//! **The TxnQueue is full** when `blocked_limit` transactions are blocked
//! ([`VllConfig::blocked_limit`](crate::protocols::vll::VllConfig::blocked_limit), default
//! [`DEFAULT_BLOCKED_LIMIT`], `--vll-blocked-limit`, as for `vll`): the lock-manager thread then
//! admits nothing more ([`Scheduler::admits`]) and keeps the sequenced transactions, in order, until
//! a grant leaves fewer blocked. Holding them back changes no outcome (they are admitted in the
//! global order all the same) but keeps the queue short: without it, every in-flight window's
//! transactions were admitted (128 with 2 workers, 1,024 with 16), at CI 0.1 98% of them blocked, and
//! each SCA pass walked them all — 22% of the run's CPU on 2 vCPUs, `calvin-vll` at 0.70× `calvin`;
//! with it 0.97× (`docs/results/deterministic.md`).
//!
//! **SCA runs as Fig. 4 is meant to**: when the CPU would idle (the lock-manager thread has no
//! message), the queue is full, and something changed since the last scan. A pass frees every
//! transaction Fig. 4 would find if called again after each find (the paper's SCA returns one per
//! call), in **one** walk of the queue ([`Sca::select_all`]: a claimed transaction marks what it
//! marked as a blocked candidate, so the scan just continues). Rescanning from the head after each
//! find made SCA the pipeline's bottleneck with many workers (16 workers, CI 0.01 on 2 vCPUs: 50 k →
//! 180–260 k txn/s with one pass).
//!
//! The counters of a large table miss the cache (they are indexed by row), so the lock-manager
//! thread prefetches the counters of the transaction a few places after the one it admits
//! ([`Scheduler::prefetch`]), and each record's C_X and C_S share one 8-byte entry ([`Arrayed`]).
//!
//! `ORDO_VLL_STATS=1` prints the lock-manager thread's counts when it ends (admitted, blocked, run by
//! the head rule, SCA passes, finds and queue entries walked).

use super::{Deterministic, Flavor};
use crate::protocols::kit::counters::{Arrayed, CounterStore, Counters};
use crate::protocols::kit::lock_request::LockRequest;
use crate::protocols::kit::queue_knobs::{
    VllConfig, BLOCKED_LIMIT_KNOB, DEFAULT_BLOCKED_LIMIT, SCA_BITS_KNOB,
};
use crate::protocols::kit::sca::{point_key, Sca};
use crate::protocols::kit::scheduler::{Scheduler, SeqSlab};
use crate::protocols::kit::txn_queue::{Seq, TxnQueue, TxnState};
use crate::protocols::{Interactive, Isolation, ProtocolConfig, ProtocolInfo};
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
    stats: Stats,
    /// The TxnQueue is full (admission stops, SCA may run) while this many are blocked.
    blocked_limit: usize,
}

/// What the lock-manager thread's VLL did (printed when it ends if `ORDO_VLL_STATS` is set).
#[derive(Debug, Default)]
struct Stats {
    admitted: u64,
    blocked: u64,
    head_grants: u64,
    sca_passes: u64,
    sca_finds: u64,
    /// Queue entries the passes walked.
    sca_walked: u64,
}

impl Drop for ArrayedVll {
    fn drop(&mut self) {
        if std::env::var_os("ORDO_VLL_STATS").is_some() {
            eprintln!("calvin-vll lock manager: {:?}", self.stats);
        }
    }
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
            stats: Stats::default(),
            blocked_limit: DEFAULT_BLOCKED_LIMIT,
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

    /// Whether the TxnQueue is full: as many transactions blocked as the threshold allows.
    fn full(&self) -> bool {
        self.queue.blocked() >= self.blocked_limit
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
                    let (id, kind) = point_key(l);
                    mark(id, kind);
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
        self.stats.sca_passes += 1;
        self.stats.sca_finds += found.len() as u64;
        self.stats.sca_walked += self.queue.len() as u64;
        self.found = found;
        any
    }
}

impl Scheduler for ArrayedVll {
    const NEEDS_ROWS: bool = true;

    /// `--vll-blocked-limit` and `--vll-sca-bits`, as for `vll-sca`.
    fn configure(&mut self, config: &ProtocolConfig) {
        let knobs = VllConfig::of(config);
        self.blocked_limit = knobs.blocked_limit.max(1);
        self.sca = Sca::with_bits(knobs.sca_bits);
    }

    fn prefetch(&self, locks: &[LockRequest]) {
        for l in locks {
            self.counters.prefetch(l);
        }
    }

    fn request(&mut self, seq: u64, locks: Vec<LockRequest>, _ready: &mut Vec<u64>) -> bool {
        let mut free = true;
        for l in &locks {
            free &= self.counters.request(&self.no_db, l);
        }
        let q = self.queue.enqueue(Queued { seq, locks }, !free);
        self.position.insert(seq, q);
        self.dirty |= !free;
        self.stats.admitted += 1;
        self.stats.blocked += !free as u64;
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
                self.stats.head_grants += 1;
                ready.push(self.queue.payload(head).expect("queued").seq);
            }
        }
    }

    /// SCA only when the CPU would idle (the lock-manager thread has no message), the TxnQueue is
    /// full (admission has stopped) and something changed since the last scan.
    fn idle(&mut self, ready: &mut Vec<u64>) -> bool {
        self.dirty && self.full() && self.sca(ready)
    }

    fn admits(&self) -> bool {
        !self.full()
    }
}

impl Flavor for ArrayedVll {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "calvin-vll",
        summary: "deterministic VLL: Calvin's sequencer with arrayed VLL counters + SCA in the lock-manager thread",
        paper: "Ren, Thomson, Abadi, VLL (VLDB J. 2015) §2.1-2.4, §3.2 (deterministic VLL)",
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&BLOCKED_LIMIT_KNOB, &SCA_BITS_KNOB],
    };
}

/// Deterministic VLL: the Calvin pipeline with [`ArrayedVll`] as its lock manager.
pub type CalvinVll = Deterministic<ArrayedVll>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::kit::lock_request::Mode;

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

    /// The TxnQueue is full once `blocked_limit` transactions are blocked: admission stops and SCA
    /// may run (only then, and only after a change); a grant that leaves fewer blocked reopens it.
    #[test]
    fn a_full_queue_stops_admission_and_lets_sca_run() {
        let mut v = ArrayedVll::default();
        v.configure(
            &ProtocolConfig::default()
                .with_knob(&BLOCKED_LIMIT_KNOB, "2")
                .unwrap(),
        );
        let mut ready = Vec::new();
        assert!(v.request(1, vec![x(1)], &mut ready), "A free");
        assert!(v.request(2, vec![x(2)], &mut ready), "B free");
        assert!(!v.request(3, vec![x(1)], &mut ready), "C waits for A");
        assert!(v.admits(), "one blocked: not full");
        assert!(!v.idle(&mut ready), "no SCA while the queue is not full");
        assert!(!v.request(4, vec![x(2)], &mut ready), "D waits for B");
        assert!(!v.admits(), "two blocked: full");
        assert!(!v.idle(&mut ready), "full, but C and D still conflict");
        assert!(
            !v.idle(&mut ready) && ready.is_empty(),
            "nothing changed since that pass: no rescan"
        );
        v.release(2, &mut ready);
        assert!(ready.is_empty(), "A is the head; D is not");
        assert!(v.idle(&mut ready), "full and changed: SCA finds D");
        assert_eq!(ready, vec![4]);
        assert!(v.admits(), "one blocked again");
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
