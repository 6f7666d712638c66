//! Model checks of the two lock words with loom: every interleaving (up to three preemptions) of
//! workers that take a record's lock, touch the record and release it. The record is a loom
//! `UnsafeCell`, so loom also reports any access of it that the lock's acquire and release
//! orderings fail to order after the previous holder's — a writer overlapping a reader or
//! another writer, or a holder that sees a stale row.
//!
//! Built only with `--cfg ordo_loom` (see `protocols/mvcc/state_loom.rs`):
//!
//! ```text
//! RUSTFLAGS="--cfg ordo_loom" cargo test -p ordo --lib --release loom
//! ```

use super::*;
use loom::cell::UnsafeCell;
use loom::sync::Arc;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

/// A record guarded by a lock word `L`.
struct Guarded<L> {
    lock: L,
    row: UnsafeCell<u64>,
}

/// What one worker does once it holds the lock in `mode`: a reader reads the row, a writer
/// increments it (both through the cell, so loom checks the accesses are ordered).
fn touch<L>(g: &Guarded<L>, mode: Mode) {
    match mode {
        Mode::Shared => {
            g.row.with(|r| unsafe { std::ptr::read(r) });
        }
        Mode::Exclusive => g.row.with_mut(|r| unsafe { *r += 1 }),
    }
}

/// No-wait's word: two workers, each trying once (a refused request aborts, as under no-wait);
/// every pair of modes, and an upgrade. Whatever the interleaving, the accesses never race and the
/// row counts exactly the writes that got the lock.
#[test]
fn loom_count_lock_orders_every_holder_after_the_last() {
    use Mode::{Exclusive, Shared};
    for (a, b) in [
        (Exclusive, Exclusive),
        (Exclusive, Shared),
        (Shared, Shared),
    ] {
        model(move || {
            let g = Arc::new(Guarded {
                lock: CountLock::default(),
                row: UnsafeCell::new(0),
            });
            let worker = |g: Arc<Guarded<CountLock>>, mode: Mode| {
                move || {
                    if !g.lock.try_acquire(mode) {
                        return 0;
                    }
                    touch(&g, mode);
                    // A sole reader upgrades and writes too.
                    let wrote = match mode {
                        Exclusive => 1,
                        Shared if g.lock.try_upgrade() => {
                            touch(&g, Exclusive);
                            g.lock.release(Exclusive);
                            return 1;
                        }
                        Shared => 0,
                    };
                    g.lock.release(mode);
                    wrote
                }
            };
            let t = loom::thread::spawn(worker(g.clone(), a));
            let mine = worker(g.clone(), b)();
            let theirs = t.join().expect("no panic");
            assert_eq!(g.row.with(|r| unsafe { *r }), mine + theirs);
            assert_eq!(g.lock.word(), 0, "every hold released");
        });
    }
}

/// Wait-die's and detect's word, with worker bits: the same, including a shared holder's upgrade
/// while another worker races for the record.
#[test]
fn loom_owner_lock_orders_every_holder_after_the_last() {
    use Mode::{Exclusive, Shared};
    for (a, b) in [
        (Exclusive, Exclusive),
        (Exclusive, Shared),
        (Shared, Shared),
    ] {
        model(move || {
            let g = Arc::new(Guarded {
                lock: OwnerLock::default(),
                row: UnsafeCell::new(0),
            });
            let worker = |g: Arc<Guarded<OwnerLock>>, me: u64, mode: Mode| {
                move || {
                    if g.lock.try_acquire(me, mode).is_err() {
                        return 0;
                    }
                    touch(&g, mode);
                    let mut held = mode;
                    if mode == Shared && g.lock.try_acquire(me, Exclusive).is_ok() {
                        held = Exclusive;
                        touch(&g, Exclusive);
                    }
                    g.lock.release(me, held);
                    u64::from(held == Exclusive)
                }
            };
            let t = loom::thread::spawn(worker(g.clone(), 1 << 0, a));
            let mine = worker(g.clone(), 1 << 1, b)();
            let theirs = t.join().expect("no panic");
            assert_eq!(g.row.with(|r| unsafe { *r }), mine + theirs);
            assert_eq!(g.lock.word(), 0, "every hold released");
        });
    }
}
