//! Model checks of the two lock words with loom: every interleaving (up to three preemptions) of
//! workers that take a record's lock, touch the record and release it. The record is a loom
//! `UnsafeCell`, so loom also reports any access of it that the lock's acquire and release
//! orderings fail to order after the previous holder's — a writer overlapping a reader or
//! another writer, or a holder that sees a stale row.
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
use loom::sync::Arc;

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

/// Two workers on one record guarded by an `L`, for every pair of modes: worker `1 << i` runs
/// `hold(record, 1 << i, mode)`, which takes the lock (or gives up), touches the row, releases, and
/// returns how many writes it made. Whatever the interleaving, the accesses never race, the row
/// counts exactly those writes, and the lock word (`word`) ends free.
fn two_workers<L: Default + Send + Sync + 'static>(
    hold: fn(&Guarded<L>, u64, Mode) -> u64,
    word: fn(&L) -> u64,
) {
    use Mode::{Exclusive, Shared};
    for (a, b) in [
        (Exclusive, Exclusive),
        (Exclusive, Shared),
        (Shared, Shared),
    ] {
        model(move || {
            let g = Arc::new(Guarded {
                lock: L::default(),
                row: UnsafeCell::new(0),
            });
            let other = g.clone();
            let t = loom::thread::spawn(move || hold(&other, 1 << 0, a));
            let mine = hold(&g, 1 << 1, b);
            let theirs = t.join().expect("no panic");
            assert_eq!(g.row.with(|r| unsafe { *r }), mine + theirs);
            assert_eq!(word(&g.lock), 0, "every hold released");
        });
    }
}

/// No-wait's word: each worker tries once (a refused request aborts, as under no-wait), and a sole
/// reader upgrades and writes too.
#[test]
fn loom_count_lock_orders_every_holder_after_the_last() {
    two_workers::<CountLock>(
        |g, _, mode| {
            if !g.lock.try_acquire(mode) {
                return 0;
            }
            touch(g, mode);
            let wrote = match mode {
                Mode::Exclusive => 1,
                Mode::Shared if g.lock.try_upgrade() => {
                    touch(g, Mode::Exclusive);
                    g.lock.release(Mode::Exclusive);
                    return 1;
                }
                Mode::Shared => 0,
            };
            g.lock.release(mode);
            wrote
        },
        CountLock::word,
    );
}

/// Wait-die's and detect's word, with worker bits: the same, including a shared holder's upgrade
/// while the other worker races for the record.
#[test]
fn loom_owner_lock_orders_every_holder_after_the_last() {
    two_workers::<OwnerLock>(
        |g, me, mode| {
            if g.lock.try_acquire(me, mode).is_err() {
                return 0;
            }
            touch(g, mode);
            let mut held = mode;
            if mode == Mode::Shared && g.lock.try_acquire(me, Mode::Exclusive).is_ok() {
                held = Mode::Exclusive;
                touch(g, Mode::Exclusive);
            }
            g.lock.release(me, held);
            u64::from(held == Mode::Exclusive)
        },
        OwnerLock::word,
    );
}
