//! `DL_DETECT`: wait on any conflict, and find deadlocks in a **waits-for graph**.
//!
//! Each worker publishes, in its slot, the set of workers it is waiting for (a bitmap: the conflicting
//! holders of the lock it wants, see [`super::lock`]); the graph is the union of those sets. As in
//! DBx1000, a waiter searches for a cycle through itself right after it starts waiting and then
//! periodically while it waits (the holder set it waits for may change, and the other members of a cycle
//! may publish their edges after it looked).
//!
//! **The victim** of a cycle is its youngest member (largest timestamp). Every member of a cycle is
//! waiting and searching, and each one that finds the cycle computes the same victim, so exactly that one
//! aborts ([`AbortReason::Deadlock`]) and the others keep waiting. Progress: of all transactions on a
//! cycle, the globally youngest one finds a cycle through itself in which it is the youngest, and aborts.
//! Because a retried transaction keeps its timestamp ([`super::wait`]), it grows relatively older and is
//! eventually not the victim any more.
//!
//! The graph is read without a global latch, so a search may combine edges observed at slightly
//! different times and see a cycle that never existed all at once; that costs a needless abort, never
//! correctness. A search walks at most 63 nodes with a fixed-size stack: no allocation.
//!
//! ```text
//!   T1 (w0) holds A, wants B ──waits-for──▶ T2 (w1)
//!   T2 (w1) holds B, wants A ──waits-for──▶ T1 (w0)      cycle {w0, w1}: the younger of T1, T2 aborts
//! ```

use super::lock::{Mode, OwnerLock, MAX_OWNER_WORKERS};
use super::wait::{acquire_waiting, Local, Registry};
use super::{Policy, Record};
use crate::protocols::{Interactive, Isolation, ProtocolConfig, ProtocolInfo};
use crate::txn::AbortReason;
use std::sync::atomic::Ordering;

/// The deadlock-detection policy.
pub struct Detect;

/// How many wait rounds pass between two cycle searches of one waiter.
const SEARCH_EVERY: u32 = 8;

/// Searches the waits-for graph for a cycle through worker `me`. Returns the victim of the first cycle
/// found (its youngest member), or `None`.
pub fn find_victim(reg: &Registry, me: usize) -> Option<usize> {
    const N: usize = MAX_OWNER_WORKERS as usize;
    let mut path = [0usize; N];
    let mut pending = [0u64; N];
    let mut visited: u64 = 1 << me;
    path[0] = me;
    pending[0] = reg.slot(me).waits_for.load(Ordering::SeqCst);
    let mut depth = 1;
    while depth > 0 {
        let top = depth - 1;
        if pending[top] == 0 {
            depth -= 1;
            continue;
        }
        let next = pending[top].trailing_zeros() as usize;
        pending[top] &= pending[top] - 1;
        if next == me {
            // The path me → … → path[top] → me is a cycle.
            return path[..depth].iter().copied().max_by_key(|&w| reg.ts(w));
        }
        if next >= N || visited & (1 << next) != 0 {
            // Already explored from here without reaching `me` (or not a worker).
            continue;
        }
        visited |= 1 << next;
        path[depth] = next;
        pending[depth] = reg.slot(next).waits_for.load(Ordering::SeqCst);
        depth += 1;
    }
    None
}

impl Detect {
    fn acquire_inner(
        reg: &Registry,
        l: &mut Local,
        lock: &OwnerLock,
        mode: Mode,
    ) -> Result<(), AbortReason> {
        let slot = reg.slot(l.worker);
        let mut published = 0u64;
        let r = acquire_waiting(
            lock,
            l.bit,
            mode,
            reg.timeout(),
            AbortReason::Deadlock,
            |holders, round| {
                if holders != published {
                    // SeqCst store, then SeqCst loads in the search: of two waiters that close a cycle at
                    // the same time, at least one sees the other's edge.
                    slot.waits_for.store(holders, Ordering::SeqCst);
                    published = holders;
                }
                if round.is_multiple_of(SEARCH_EVERY)
                    && find_victim(reg, l.worker) == Some(l.worker)
                {
                    return Err(AbortReason::Deadlock);
                }
                Ok(())
            },
        );
        if published != 0 {
            slot.waits_for.store(0, Ordering::SeqCst);
        }
        r
    }
}

impl Policy for Detect {
    type Lock = OwnerLock;
    type Shared = Registry;
    type Local = Local;

    const INFO: ProtocolInfo = ProtocolInfo {
        name: "2pl-detect",
        summary: "strict two-phase locking, S/X row locks and next-key locks; wait, break deadlocks found in a waits-for graph",
        paper: super::PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::Concurrent,
        knobs: super::KNOBS,
    };
    /// Workers are bits of the waits-for graph's and the owner sets' 63-bit words.
    const MAX_WORKERS: usize = super::lock::MAX_OWNER_WORKERS as usize;

    fn shared(config: &ProtocolConfig) -> Registry {
        Registry::new(config.lock_wait_timeout)
    }
    fn local(shared: &Registry, worker: u32) -> Local {
        shared.local(worker)
    }
    #[inline]
    fn begin(shared: &Registry, local: &mut Local) {
        shared.begin(local);
    }
    #[inline]
    fn end(shared: &Registry, local: &mut Local, retry: bool) {
        shared.end(local, retry);
    }

    #[inline]
    fn acquire(
        reg: &Registry,
        l: &mut Local,
        lock: &OwnerLock,
        _: Record,
        mode: Mode,
    ) -> Result<(), AbortReason> {
        match lock.try_acquire(l.bit, mode) {
            Ok(()) => Ok(()),
            Err(_) => Self::acquire_inner(reg, l, lock, mode),
        }
    }

    #[inline]
    fn release(_: &Registry, l: &Local, lock: &OwnerLock, _: Record, mode: Mode) {
        lock.release(l.bit, mode);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(usize, usize)], ts: &[u64]) -> Registry {
        let reg = Registry::default();
        for (w, &t) in ts.iter().enumerate() {
            reg.slot(w).ts.store(t, Ordering::Relaxed);
        }
        for &(a, b) in edges {
            reg.slot(a).waits_for.fetch_or(1 << b, Ordering::Relaxed);
        }
        reg
    }

    #[test]
    fn finds_cycles_and_picks_the_youngest() {
        let reg = graph(&[(0, 1), (1, 0)], &[5, 9]);
        assert_eq!(find_victim(&reg, 0), Some(1));
        assert_eq!(find_victim(&reg, 1), Some(1));
        let reg = graph(&[(0, 1), (1, 2), (2, 0), (3, 0)], &[7, 3, 4, 99]);
        assert_eq!(
            find_victim(&reg, 2),
            Some(0),
            "3 waits for the cycle but is not on it"
        );
        assert_eq!(find_victim(&reg, 3), None, "no cycle through 3");
    }

    #[test]
    fn no_cycle_no_victim() {
        let reg = graph(&[(0, 1), (1, 2), (0, 2), (3, 2)], &[1, 2, 3, 4]);
        for w in 0..4 {
            assert_eq!(find_victim(&reg, w), None);
        }
    }
}
