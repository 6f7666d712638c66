//! `2pl-table-detect`: strict 2PL over the **traditional lock manager** ([`crate::protocols::kit::lock_table`]) that
//! **waits** on a conflict and breaks deadlocks found in a **waits-for graph** — the "standard 2PL" of
//! the VLL paper's Fig. 8 (Ren, Thomson, Abadi 2015, §3.2: "a 'traditional' implementation that
//! detects deadlocks and aborts deadlocked transactions", over "a hash table that maps each lockable
//! record's primary key to a linked list of lock requests").
//!
//! Everything but where the lock lives is `2pl-detect`'s ([`super::detect`]): a conflicting request
//! stays queued in the record's lock head, the waiter publishes the owners it waits for in its slot of
//! the waits-for graph ([`LockTable::blockers`]: the conflicting holders, and the conflicting
//! requests queued ahead of it, since the queue is FIFO), searches for a cycle through itself right
//! away and then every few rounds, and the youngest member of a cycle withdraws its request
//! ([`LockTable::withdraw`]) and aborts ([`AbortReason::Deadlock`]). The grant itself is made by the
//! releaser, in the lock table; the waiter polls for it with exponential backoff. As in `2pl-detect`,
//! a wait longer than the configured lock-wait timeout aborts too (a safety net: a cycle is always
//! found before it).
//!
//! Two conversions on one record (both read it, both want to write) are a deadlock the table refuses
//! at the second request ([`crate::protocols::kit::lock_table::Outcome::Conflict`]): that requester aborts at once.

use super::detect::find_victim;
use super::lock::Mode;
use super::wait::{Local, Registry};
use super::{Policy, Record};
use crate::protocols::kit::lock_table::{LockTable, Outcome, Owner, Poll};
use crate::protocols::{Interactive, Isolation, ProtocolConfig, ProtocolInfo};
use crate::txn::AbortReason;
use crossbeam_utils::Backoff;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Waiting in the lock table, with deadlock detection.
pub struct TableDetect;

/// The lock table and the waits-for graph (with the transactions' timestamps).
pub struct TableAndGraph {
    table: LockTable,
    graph: Registry,
}

/// Wait rounds between two cycle searches of one waiter (as `2pl-detect`).
const SEARCH_EVERY: u32 = 8;

impl TableDetect {
    /// Waits for `l`'s queued request on `(t, rid)` in `mode`: granted → `Ok`; the victim of a cycle
    /// or timed out → withdrawn, `Err(Deadlock)`.
    #[cold]
    fn wait(s: &TableAndGraph, l: &Local, (t, rid): Record, mode: Mode) -> Result<(), AbortReason> {
        let owner = l.worker as Owner;
        let slot = s.graph.slot(l.worker);
        let waiting = crate::txn::wait::blocked();
        let backoff = Backoff::new();
        let start = Instant::now();
        let mut published = 0u64;
        let mut round = 0u32;
        let out = loop {
            // One look under the bucket's latch: granted, or whom it still waits for.
            let blockers = match s.table.poll(owner, t, rid, mode) {
                Poll::Granted => break Ok(()),
                Poll::Waiting(blockers) => blockers,
            };
            if blockers != published {
                // SeqCst store, then SeqCst loads in the search: of two waiters that close a cycle
                // at the same time, at least one sees the other's edge.
                slot.waits_for.store(blockers, Ordering::SeqCst);
                published = blockers;
            }
            let victim = round.is_multiple_of(SEARCH_EVERY)
                && find_victim(&s.graph, l.worker) == Some(l.worker);
            // A cancel (the spec runner's, as isolationtester's) gives up as the timeout does.
            let timed_out = waiting.canceled()
                || (round.is_multiple_of(16) && start.elapsed() > s.graph.timeout());
            if victim || timed_out {
                // Granted meanwhile: the lock is held after all.
                break if s.table.withdraw(owner, t, rid) {
                    Err(AbortReason::Deadlock)
                } else {
                    Ok(())
                };
            }
            backoff.snooze();
            waiting.round();
            round = round.wrapping_add(1);
        };
        if published != 0 {
            slot.waits_for.store(0, Ordering::SeqCst);
        }
        out
    }
}

impl Policy for TableDetect {
    /// Nothing beside the record: the lock lives in the table.
    type Lock = ();
    type Shared = TableAndGraph;
    type Local = Local;

    const INFO: ProtocolInfo = ProtocolInfo {
        name: "2pl-table-detect",
        summary: "strict 2PL over a traditional lock manager (latched hash table of lock heads and \
                  request queues) that waits and breaks deadlocks found in a waits-for graph (the VLL \
                  paper's standard 2PL)",
        paper: "Gray & Reuter 1993 (lock manager); Ren, Thomson, Abadi, VLDB J. 2015 (VLL's 2PL baseline, Fig. 8)",
        isolation: Isolation::Serializable,
        interactive: Interactive::Concurrent,
        knobs: super::KNOBS,
    };
    /// Workers are bits of the waits-for graph's and the owner sets' 63-bit words.
    const MAX_WORKERS: usize = super::lock::MAX_OWNER_WORKERS as usize;

    fn shared(config: &ProtocolConfig) -> TableAndGraph {
        TableAndGraph {
            table: LockTable::default(),
            graph: Registry::new(config.lock_wait_timeout),
        }
    }
    fn local(shared: &TableAndGraph, worker: u32) -> Local {
        shared.graph.local(worker)
    }
    #[inline]
    fn begin(shared: &TableAndGraph, local: &mut Local) {
        shared.graph.begin(local);
    }
    #[inline]
    fn end(shared: &TableAndGraph, local: &mut Local, retry: bool) {
        shared.graph.end(local, retry);
    }

    #[inline]
    fn acquire(
        s: &TableAndGraph,
        l: &mut Local,
        _: &(),
        at: Record,
        mode: Mode,
    ) -> Result<(), AbortReason> {
        match s.table.lock(l.worker as Owner, at.0, at.1, mode, true) {
            Outcome::Granted => Ok(()),
            Outcome::Waiting => Self::wait(s, l, at, mode),
            // A second conversion on one record: the two would wait for each other.
            Outcome::Conflict => Err(AbortReason::Deadlock),
        }
    }

    #[inline]
    fn release(s: &TableAndGraph, l: &Local, _: &(), (t, rid): Record, _: Mode) {
        s.table.unlock(l.worker as Owner, t, rid);
    }
}
