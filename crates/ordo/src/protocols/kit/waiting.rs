//! Single-threaded VLL's **Waiting** state (the VLL paper, §2.3 and Fig. 3).
//!
//! A distributed transaction that holds its locks sends its local reads to the other partitions and
//! waits for theirs. Rather than sleep through that round trip — which is what makes H-Store's
//! partitions idle — the partition's thread puts the transaction aside and works on others; when the
//! remote reads arrive, resuming it is the main loop's *first* choice:
//!
//! ```text
//!   Fig. 3                                           here (`worker::run_worker`)
//!   BeginTransaction: distributed and Free           free in every partition it is queued in, and
//!     → Waiting, send local reads                      `Program::take_remote_wait` says how long its
//!   head of the TxnQueue, distributed → Waiting        remote reads take: `Waiting::set_aside`
//!   first choice: remote message for T received      `Waiting::due` at the top of every turn moves
//!     → Execute(T), FinishTransaction(T)               the transactions whose wait is over to the
//!                                                      runnable ones, which run before anything new
//!   nothing to do                                    sleep until the next notification or the
//!                                                      earliest end of a wait (`Waiting::next_due`)
//! ```
//!
//! Partitions share memory here, so the "message" is the end of a simulated network wait (the
//! workload's, e.g. `vll-micro --remote-wait`): its length comes from the program, and the program does
//! not sleep itself in the attempt that follows. A transaction keeps every lock it holds while it
//! waits, as in the paper: conflicting transactions stay blocked behind it, and SCA may find others.
//!
//! `nocc` parks transactions here too when they have remote reads to wait for: it is then the
//! paper's "no locking" baseline of Figs. 9–10, "the same system with all locking completely
//! removed" ([`crate::protocols::nocc`]).

use std::time::{Duration, Instant};

/// The transactions a worker has set aside: `(when its remote reads arrive, the transaction)` — a
/// slot number in the partitioned loop, the program itself in `nocc`'s.
#[derive(Debug)]
pub struct Waiting<T = usize> {
    list: Vec<(Instant, T)>,
}

impl<T> Default for Waiting<T> {
    fn default() -> Self {
        Waiting { list: Vec::new() }
    }
}

impl<T> Waiting<T> {
    /// Sets transaction `t` aside for `wait`.
    pub fn set_aside(&mut self, t: T, wait: Duration) {
        self.list.push((Instant::now() + wait, t));
    }

    /// Moves every transaction whose wait is over to `runnable`.
    pub fn due(&mut self, runnable: &mut Vec<T>) {
        if self.list.is_empty() {
            return;
        }
        let now = Instant::now();
        // Few entries (a worker's transactions in flight: about its throughput times the wait): a
        // scan, no heap.
        let mut i = 0;
        while i < self.list.len() {
            if self.list[i].0 <= now {
                runnable.push(self.list.swap_remove(i).1);
            } else {
                i += 1;
            }
        }
    }

    /// The earliest end of a wait, if any transaction waits.
    pub fn next_due(&self) -> Option<Instant> {
        self.list.iter().map(|&(at, _)| at).min()
    }

    /// How many transactions wait.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_transactions_whose_wait_is_over_become_runnable() {
        let mut w = Waiting::<usize>::default();
        assert!(w.next_due().is_none());
        w.set_aside(3, Duration::from_secs(3600));
        w.set_aside(5, Duration::ZERO);
        w.set_aside(4, Duration::ZERO);
        let mut runnable = vec![9];
        w.due(&mut runnable);
        runnable.sort_unstable();
        assert_eq!(runnable, [4, 5, 9]);
        assert!(w.next_due().unwrap() > Instant::now() + Duration::from_secs(3000));
        assert_eq!(w.len(), 1, "the one still waiting");
    }
}
