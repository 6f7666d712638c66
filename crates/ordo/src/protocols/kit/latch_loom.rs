//! Model checks of the partition's spinning latch with loom: every interleaving (up to three
//! preemptions) of holders that take the latch — by `acquire`, whose contended path waits on reads
//! and backs off after a lost race, or by `try_lock_once`, which reads before it writes — touch the
//! guarded value and release it. The value is a loom `UnsafeCell`, so loom reports any access that
//! the latch's `Acquire` and `Release` fail to order after the previous holder's (a holder that
//! could see a stale value), and the `holders` word catches two holders at once. Weakening either
//! ordering to `Relaxed` makes every model here fail (loom: concurrent write accesses to the cell).
//!
//! Built only with `--cfg ordo_loom` (see `protocols/mvcc/state_loom.rs`):
//!
//! ```text
//! CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 RUSTFLAGS="--cfg ordo_loom" CARGO_TARGET_DIR=target/loom \
//!   cargo test -p ordo --lib --release loom
//! ```

use super::*;
use crate::loom_model as model;
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;

/// A value behind the latch, as the partition's `Inner` is.
struct Guarded {
    latch: RawSpinLatch,
    value: UnsafeCell<u64>,
    /// How many hold the latch right now (checked by every holder).
    holders: AtomicUsize,
}

impl Guarded {
    fn new() -> Arc<Self> {
        Arc::new(Guarded {
            latch: RawSpinLatch::new(),
            value: UnsafeCell::new(0),
            holders: AtomicUsize::new(0),
        })
    }

    /// The critical section: alone, a plain read-modify-write of the value.
    fn section(&self) {
        assert_eq!(
            self.holders.fetch_add(1, Ordering::Relaxed),
            0,
            "two holders at once"
        );
        self.value.with_mut(|v| unsafe { *v += 1 });
        self.holders.fetch_sub(1, Ordering::Relaxed);
    }

    fn hold(&self) {
        self.latch.acquire();
        self.section();
        self.latch.release();
    }

    /// One `try_lock_once`; returns whether it held the latch.
    fn try_hold(&self) -> bool {
        let held = self.latch.try_lock_once();
        if held {
            self.section();
            self.latch.release();
        }
        held
    }

    fn value(&self) -> u64 {
        self.value.with(|v| unsafe { *v })
    }
}

/// `holders` threads (this one and `holders - 1` spawned) each hold the latch once through
/// `acquire`; returns the guarded value once all have.
fn holders(holders: usize) -> Arc<Guarded> {
    let g = Guarded::new();
    let others: Vec<_> = (1..holders)
        .map(|_| {
            let other = g.clone();
            loom::thread::spawn(move || other.hold())
        })
        .collect();
    g.hold();
    for t in others {
        t.join().expect("no panic");
    }
    g
}

/// Two holders through `acquire`: both sections run, one after the other, each seeing the other's
/// write; the latch ends free.
#[test]
fn loom_two_holders_exclude_each_other_and_see_each_others_writes() {
    model(|| {
        let g = holders(2);
        assert_eq!(g.value(), 2);
        assert!(g.latch.try_lock_once(), "the latch ends free");
    });
}

/// Three holders, so that a waiter can lose the race to another waiter (the contended path's
/// `spin` after a failed `try_acquire`). Two waiters that spin while the holder is preempted make
/// long paths, so this model allows more branches per path than loom's default and one
/// preemption (a lost race needs one: between a waiter's read of a free latch and its CAS; with two,
/// the model runs for many minutes).
#[test]
fn loom_three_holders_lose_no_update() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.max_branches = 100_000;
    b.check(|| assert_eq!(holders(3).value(), 3));
}

/// `try_lock_once` against a holder: it either fails (the latch was visibly held, or the race was
/// lost) or holds the latch alone and sees whatever the other holder wrote before it released.
#[test]
fn loom_try_lock_holds_alone_or_fails() {
    model(|| {
        let g = Guarded::new();
        let other = g.clone();
        let t = loom::thread::spawn(move || other.hold());
        let held = g.try_hold();
        t.join().expect("no panic");
        assert_eq!(g.value(), 1 + held as u64);
    });
}
