//! Timestamps and the snapshot horizon: the "SI begin" and "SI commit" of Cahill's Figs 3.1–3.2.
//!
//! One global counter orders everything. `begin(T)` reads it as T's **snapshot** `T.begin`; a commit
//! takes `clock.fetch_add(1) + 1` as its **commit timestamp**, so a transaction sees exactly the versions
//! whose commit timestamp is `≤ T.begin` (its own writes aside).
//!
//! Every worker publishes the snapshot of its running transaction in a slot ([`SnapshotSlot`]). The
//! **horizon** is the oldest snapshot any running transaction may still read at:
//! `min(clock at the start of the computation, every published snapshot)`. Versions older than the newest
//! version committed at or before the horizon can be discarded, and a committed transaction whose commit
//! timestamp is `≤` the horizon overlaps no running transaction any more (Cahill §3.3: its record and SIREAD
//! locks may go).
//!
//! Publishing is race-free without a lock: `begin` stores a lower bound (the clock it just read) in its slot
//! and only then reads the clock again for the snapshot it uses, while the horizon reads the clock *before*
//! the slots. Either the horizon sees the slot, or the slot store came after the horizon's clock load and
//! the snapshot is at least that clock (all accesses `SeqCst`).
//!
//! ## The slot registry: append-only, read without writing
//!
//! Commits compute the horizon, so the registry of slots is read on every commit and written only when a
//! worker is created. It is an append-only linked list (a Treiber stack that is never popped): a new slot
//! is pushed at the head with a compare-and-swap and stays until the clock is dropped. Walking it writes
//! nothing shared (the `RwLock` it replaces made every commit write the lock word twice, a cache line
//! both cores wrote) and the `next` link sits on the slot's own line, which the walk loads anyway.
//!
//! A slot pushed after a horizon computation loaded the head is missed by it, which is safe for the same
//! reason as above: the push, and so the slot's first `begin`, come after the computation's clock load,
//! so that `begin` reads a clock at least as large (test
//! `registration_racing_with_the_horizon_never_lets_it_pass_a_snapshot`).
//!
//! A worker that ends gives its slot back ([`SlotLease`]), and the next registration takes a free
//! slot before it pushes a new one, so the registry — and the walk every commit makes — is as long
//! as the most workers that were ever alive at once, not as the number ever created (an embedder
//! opening and closing sessions all day would otherwise slow every commit down without bound). A
//! free slot is idle, and its next holder publishes snapshots exactly as a worker starting its next
//! transaction does.
//!
//! ## Who keeps the horizon
//!
//! Any horizon once computed stays a lower bound of every snapshot taken later (a new snapshot is at
//! least the clock the computation read), so a stale horizon is a safe one: it only keeps more. Each
//! worker therefore keeps the horizon its own last computation returned ([`Clock::refresh_horizon`] is
//! a pure read of shared state) instead of publishing it in a shared word that every commit wrote.

use crossbeam_utils::CachePadded;
use std::ops::Deref;
use std::ptr;
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicPtr, AtomicU64,
    Ordering::{Acquire, Relaxed, Release, SeqCst},
};
use std::sync::Arc;

/// No transaction running in a slot.
const IDLE: u64 = u64::MAX;

/// What a worker publishes, on its own cache line: its running transaction's snapshot, and the
/// registry link to the slot registered before it (set once, before the slot is published).
#[derive(Debug)]
pub struct Published {
    snapshot: AtomicU64,
    next: AtomicPtr<SnapshotSlot>,
    /// A worker holds the slot (written only when a worker takes or gives it back).
    taken: AtomicBool,
}

/// The published snapshot of one worker's running transaction, and the worker's count of the old
/// versions it added minus those it dropped (summed over workers for the GC statistics).
#[derive(Debug)]
pub struct SnapshotSlot(CachePadded<Published>, pub AtomicI64);

/// A worker's hold on its snapshot slot, given back when the worker ends (see the module doc).
#[derive(Debug)]
pub struct SlotLease(Arc<SnapshotSlot>);

impl Deref for SlotLease {
    type Target = SnapshotSlot;
    fn deref(&self) -> &SnapshotSlot {
        &self.0
    }
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        self.0 .0.snapshot.store(IDLE, Release);
        self.0 .0.taken.store(false, Release);
    }
}

/// The global clock and the registry of snapshot slots.
/// `now` (written by every commit) and `slots` (read by every commit, written at registration) live on
/// separate cache lines.
#[derive(Debug, Default)]
pub struct Clock {
    now: CachePadded<AtomicU64>,
    /// The most recently registered slot; each links to the one registered before it. Every slot is
    /// an `Arc` leaked into the list and taken back when the clock is dropped.
    slots: CachePadded<AtomicPtr<SnapshotSlot>>,
}

impl Drop for Clock {
    fn drop(&mut self) {
        let mut p = *self.slots.get_mut();
        while !p.is_null() {
            // SAFETY: every pointer in the list came from `Arc::into_raw` in `register` and is taken
            // back exactly once, here (`&mut self`: nobody walks the list any more).
            let slot = unsafe { Arc::from_raw(p) };
            p = slot.0.next.load(SeqCst);
        }
    }
}

impl Clock {
    /// A slot for a new worker: a free one from the registry if there is one, else a new one pushed
    /// at its head.
    pub fn register(&self) -> SlotLease {
        let mut p = self.slots.load(SeqCst);
        while !p.is_null() {
            // SAFETY: as in `each_slot`.
            let slot = unsafe { &*p };
            if !slot.0.taken.load(Relaxed)
                && slot
                    .0
                    .taken
                    .compare_exchange(false, true, Acquire, Relaxed)
                    .is_ok()
            {
                // SAFETY: `p` came from `Arc::into_raw` below, and the registry keeps that count
                // until the clock is dropped; the lease takes one more.
                return SlotLease(unsafe {
                    Arc::increment_strong_count(p);
                    Arc::from_raw(p)
                });
            }
            p = slot.0.next.load(SeqCst);
        }
        let slot = Arc::new(SnapshotSlot(
            CachePadded::new(Published {
                snapshot: AtomicU64::new(IDLE),
                next: AtomicPtr::new(ptr::null_mut()),
                taken: AtomicBool::new(true),
            }),
            AtomicI64::new(0),
        ));
        let raw = Arc::into_raw(slot.clone()).cast_mut();
        let mut head = self.slots.load(SeqCst);
        loop {
            slot.0.next.store(head, SeqCst);
            match self.slots.compare_exchange_weak(head, raw, SeqCst, SeqCst) {
                Ok(_) => return SlotLease(slot),
                Err(h) => head = h,
            }
        }
    }

    /// Slots in the registry (the most workers alive at once so far).
    pub fn slots(&self) -> usize {
        let mut n = 0;
        self.each_slot(|_| n += 1);
        n
    }

    /// Every registered slot, newest first.
    #[inline]
    fn each_slot(&self, mut f: impl FnMut(&SnapshotSlot)) {
        let mut p = self.slots.load(SeqCst);
        while !p.is_null() {
            // SAFETY: slots in the list are kept alive by it until the clock is dropped, and a slot's
            // `next` was set before the compare-and-swap that published the slot.
            let slot = unsafe { &*p };
            f(slot);
            p = slot.0.next.load(SeqCst);
        }
    }

    /// SI begin: publishes and returns a snapshot timestamp.
    ///
    /// Only the first store must be `SeqCst` (ordered before the second clock load, see the module
    /// doc); the second only raises the published value to one at least as large, which a horizon
    /// may see or not.
    pub fn begin(&self, slot: &SnapshotSlot) -> u64 {
        slot.0.snapshot.store(self.now.load(SeqCst), SeqCst);
        let s = self.now.load(SeqCst);
        slot.0.snapshot.store(s, Release);
        s
    }

    /// A fresh snapshot for one statement of a read-committed transaction (the slot keeps the first one,
    /// which is older, so the horizon stays safe).
    pub fn statement(&self) -> u64 {
        self.now.load(SeqCst)
    }

    /// The worker's transaction ended: it reads no more versions at its snapshot. A `Release` store
    /// (a horizon computation that sees `IDLE` also sees every read before it), not a `SeqCst` one,
    /// which on the commit path waited for every earlier store.
    pub fn end(&self, slot: &SnapshotSlot) {
        slot.0.snapshot.store(IDLE, Release);
    }

    /// A new commit timestamp, larger than every snapshot taken so far.
    pub fn commit_ts(&self) -> u64 {
        self.now.fetch_add(1, SeqCst) + 1
    }

    /// Live old versions, summed over the workers' counts.
    pub fn versions(&self) -> i64 {
        let mut n = 0;
        self.each_slot(|s| n += s.1.load(Relaxed));
        n
    }

    /// The current clock value (the latest commit timestamp handed out).
    pub fn now(&self) -> u64 {
        self.now.load(SeqCst)
    }

    /// Computes the horizon: no running transaction reads at a snapshot older than it, and no later one
    /// will (the caller keeps it; see the module doc). Writes nothing shared.
    pub fn refresh_horizon(&self) -> u64 {
        let mut h = self.now.load(SeqCst);
        self.each_slot(|s| h = h.min(s.0.snapshot.load(SeqCst)));
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn horizon_is_the_oldest_running_snapshot() {
        let c = Clock::default();
        let (a, b) = (c.register(), c.register());
        let sa = c.begin(&a);
        c.commit_ts();
        c.commit_ts();
        let sb = c.begin(&b);
        assert_eq!((sa, sb), (0, 2));
        assert_eq!(c.refresh_horizon(), 0);
        c.end(&a);
        assert_eq!(c.refresh_horizon(), 2);
        c.end(&b);
        c.commit_ts();
        assert_eq!(c.refresh_horizon(), 3);
    }

    /// Runs `body` while one thread commits and another computes horizons, the highest of which
    /// it keeps in `highest` (both stop when `body` returns or panics, so a failed assertion fails
    /// the test instead of hanging it).
    fn amid_commits_and_horizons<R>(c: &Clock, highest: &AtomicU64, body: impl FnOnce() -> R) -> R {
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, SeqCst);
            }
        }
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(SeqCst) {
                    c.commit_ts();
                }
            });
            s.spawn(|| {
                while !stop.load(SeqCst) {
                    highest.fetch_max(c.refresh_horizon(), SeqCst);
                }
            });
            let _stop = Stop(&stop);
            body()
        })
    }

    /// Workers register (and begin at once) while another thread computes horizons and a third
    /// commits: no horizon read while a transaction runs may exceed its snapshot, whether the
    /// computation saw the new slot or not.
    #[test]
    fn registration_racing_with_the_horizon_never_lets_it_pass_a_snapshot() {
        let c = Clock::default();
        let highest = AtomicU64::new(0);
        let registered = amid_commits_and_horizons(&c, &highest, || {
            let mut slots = Vec::new();
            // At least 1 000 registrations, and on until the horizon has moved past 1 000 (no
            // assumption about when the other two threads get to run).
            while slots.len() < 1_000 || highest.load(SeqCst) < 1_000 {
                let slot = c.register();
                let snap = c.begin(&slot);
                let h = highest.load(SeqCst);
                assert!(h <= snap, "horizon {h} passed a running snapshot {snap}");
                std::thread::yield_now();
                let h = highest.load(SeqCst);
                assert!(h <= snap, "horizon {h} passed a running snapshot {snap}");
                c.end(&slot);
                slots.push(slot);
            }
            slots.len()
        });
        assert_eq!(
            c.slots(),
            registered,
            "every registered slot is in the registry"
        );
    }

    /// Two threads open and close workers as fast as they can (each worker one transaction) while
    /// a third commits and a fourth computes horizons: a reused slot is published exactly like a
    /// new one, so no horizon passes a running snapshot, and the registry stays as small as the
    /// workers alive at once (a loose bound: a registration that meets the other thread's worker
    /// moving between slots may push one more).
    #[test]
    fn reused_slots_never_let_the_horizon_pass_a_snapshot() {
        let c = Clock::default();
        let highest = AtomicU64::new(0);
        amid_commits_and_horizons(&c, &highest, || {
            let churn = || {
                let mut n = 0;
                while n < 2_000 || highest.load(SeqCst) < 1_000 {
                    let slot = c.register();
                    let snap = c.begin(&slot);
                    std::thread::yield_now();
                    let h = highest.load(SeqCst);
                    assert!(h <= snap, "horizon {h} passed a running snapshot {snap}");
                    n += 1;
                }
            };
            std::thread::scope(|s| {
                s.spawn(churn);
                churn();
            });
        });
        assert!(
            c.slots() <= 8,
            "{} slots for 2 workers at a time",
            c.slots()
        );
    }

    /// A worker that ends gives its slot back and the next registration takes it: the registry
    /// every commit walks grows with the most workers alive at once, not with every worker created.
    #[test]
    fn slots_of_ended_workers_are_reused() {
        let c = Clock::default();
        let kept = c.register();
        for _ in 0..100 {
            let a = c.register();
            let b = c.register();
            c.begin(&a);
            c.begin(&b);
            drop(a); // ends with its snapshot still published: giving the slot back clears it
            c.end(&b);
        }
        assert_eq!(c.slots(), 3);
        c.begin(&kept);
        c.commit_ts();
        let s = c.begin(&c.register());
        assert_eq!(
            c.refresh_horizon(),
            0,
            "the kept slot's snapshot still holds it"
        );
        c.end(&kept);
        assert_eq!(
            c.refresh_horizon(),
            c.now(),
            "a given-back slot holds nothing: {s}"
        );
    }
}
