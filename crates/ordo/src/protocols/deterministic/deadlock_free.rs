//! `2pl-deadlock-free` — the VLL paper's **deadlock-free 2PL** (Ren, Thomson, Abadi 2015, §3.2 and
//! Fig. 8): "a deadlock-free variant of 2PL in which a transaction places all of its lock requests in
//! a single atomic step (where the data that must be locked are determined in an identical way as
//! VLL) … it uses a traditional lock management data structure."
//!
//! # The idea
//!
//! Deadlock needs a cycle of waits, and a cycle needs two transactions each holding something the
//! other requests *later*. If every transaction requests all of its locks at once, in one critical
//! section, then the requests of any two transactions are ordered (whoever entered the section
//! first), every lock queue grants in that order, and nobody ever waits for a transaction that
//! entered after it: no cycle, no deadlock, no deadlock detector. What it keeps from 2PL is the lock
//! manager: a hash table of per-key request queues, whose hashing, queue appends and
//! grant-on-release walks happen *inside* that one critical section — which is why the paper found
//! it "extremely poor" on short transactions: "this critical section becomes such a bottleneck".
//! VLL makes the same atomic step with two counters per record instead.
//!
//! ```text
//!   paper                                         here
//!   read/write sets determined as VLL's (§2.4)     deterministic::plan: declared accesses, a
//!                                                  reconnaissance pass for dependent transactions
//!   <critical section>                             Latched::submit: the latch, then
//!     request every lock in the lock table           Admission::order → HashLockManager::request
//!   </critical section>                              (each key's FIFO queue; granted or waiting)
//!   wait until every lock is granted              the worker waits on its ready queue
//!   execute                                        exec::ExecTx, covered by the locks
//!   <critical section> release, grant the next    Latched::release → HashLockManager::release,
//!   requests in each queue </critical section>      which tells the transactions now ready
//! ```
//!
//! It is Calvin's lock manager without Calvin's sequencer and lock-manager threads: the order is
//! the order in which workers win the latch, not a sequencer's, and each worker does the lock
//! manager's work itself. So the code is the deterministic pipeline's
//! ([`crate::protocols::deterministic`]: the same planning, [`HashLockManager`], admission, execution
//! and barrier for interactive transactions) with a different [`Pipeline`]: [`Latched`]. A worker runs
//! one transaction at a time and waits for its grant, as a 2PL worker waits for a lock; a
//! reconnaissance that went stale aborts the attempt, which is retried after a backoff.
//!
//! The latch is VLL's spinning latch ([`crate::protocols::kit::latch`]), so that `vll` and this
//! protocol differ only in what their critical sections do. The notifications a release produces are
//! sent after the latch is released.

use super::engine::{Admission, Ready, Request};
use super::{Deterministic, Pipeline};
use crate::protocols::kit::latch::Latch;
use crate::protocols::kit::lock_manager::HashLockManager;
use crate::protocols::{Interactive, Isolation, ProtocolConfig, ProtocolInfo};
use std::sync::mpsc::Sender;

/// The VLL paper's deadlock-free 2PL: all locks at once, in a latched hash-table lock manager.
pub type DeadlockFree2pl = Deterministic<HashLockManager, Latched>;

/// Where the paper's deadlock-free 2PL comes from.
pub const PAPER: &str =
    "Ren, Thomson, Abadi, VLL (VLDB J. 2015) §3.2, Fig. 8 (deadlock-free 2PL); Gray & Reuter 1993 (lock manager)";

/// The lock manager behind one latch, driven by the workers themselves: every request and release
/// is one critical section (see the module docs).
pub struct Latched {
    inner: Latch<Ordered>,
}

/// What the latch guards: the order so far and the lock manager's admission.
struct Ordered {
    /// The last order position handed out.
    last: u64,
    admission: Admission<HashLockManager>,
}

/// Notifications produced inside a critical section, sent after it.
#[derive(Default)]
struct Outbox(Vec<(Sender<Ready>, Ready)>);

impl Outbox {
    fn collect(&mut self) -> impl FnMut(&Sender<Ready>, Ready) + '_ {
        |to, r| self.0.push((to.clone(), r))
    }
    fn send(self) {
        for (to, r) in self.0 {
            // A worker that stopped listening has nothing left to run.
            let _ = to.send(r);
        }
    }
}

impl Pipeline<HashLockManager> for Latched {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "2pl-deadlock-free",
        summary: "deadlock-free 2PL: all locks requested at once in one critical section, over a \
                  traditional hash-table lock manager (the VLL paper's Fig. 8 baseline)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[],
    };
    const WINDOW: usize = 1;

    fn start(_name: &str, config: &ProtocolConfig) -> Self {
        Latched {
            inner: Latch::new(Ordered {
                last: 0,
                admission: Admission::new(config),
            }),
        }
    }

    fn submit(&self, request: Request) {
        let mut out = Outbox::default();
        {
            let mut g = self.inner.lock();
            g.last += 1;
            let seq = g.last;
            g.admission.order(seq, request, &mut out.collect());
        }
        out.send();
    }

    fn release(&self, seq: u64) {
        let mut out = Outbox::default();
        self.inner.lock().admission.release(seq, &mut out.collect());
        out.send();
    }
}
