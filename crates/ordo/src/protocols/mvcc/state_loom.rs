//! Model checks of the transaction-record protocol of `state` with loom: every interleaving (and
//! every outcome the memory model allows for its atomics) of an owner that finishes a
//! transaction, releases its record and reuses it for its next transaction, against another
//! transaction acting through a handle to the first one — the situation the `id` sequence lock
//! exists for.
//!
//! Built only with `--cfg ordo_loom` (the record's atomics and `conflicts` mutex are then loom's):
//!
//! ```text
//! CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 RUSTFLAGS="--cfg ordo_loom" CARGO_TARGET_DIR=target/loom \
//!   cargo test -p ordo --lib --release loom
//! ```
//!
//! (as `.ci/run` does: sixteen codegen units build the models in a fraction of the one-unit release
//! profile's time, and their own target directory keeps the normal build's artifacts).

use super::*;
use crate::loom_model as model;
use std::collections::VecDeque;

/// Transaction 1, in a record of a fresh pool (kept alive by the returned `Arc`), and a thread
/// running `other` with its handle.
fn transaction_one_and<R: Send + 'static>(
    other: impl FnOnce(Handle) -> R + Send + 'static,
) -> (Arc<Pool>, Handle, loom::thread::JoinHandle<R>) {
    let pool = Arc::new(Pool::default());
    let h = pool.record(&mut VecDeque::new(), 1).handle();
    (pool, h, loom::thread::spawn(move || other(h)))
}

/// The owner's next transaction, 2, in transaction 1's record once it is released.
fn reuse<'p>(pool: &'p Pool, first: &TxnShared) -> &'p TxnShared {
    let mut mine = VecDeque::from([first.handle()]);
    let second = pool.record(&mut mine, 2);
    assert!(std::ptr::eq(second, first), "the record is recycled");
    second
}

/// What another transaction may legitimately have read of transaction 1 (committed at 5 if
/// `committed`) through its handle: nothing (released), or a status transaction 1 really had, with
/// its commit timestamp whenever that status is `COMMITTED` — never transaction 2's (9) or the
/// reset record's. (Beside an earlier status the timestamp may already be 5: `Handle::state`.)
fn check_seen(seen: Option<(u8, u64)>, committed: bool) {
    let cts_so_far = |cts| cts == INFINITY || (committed && cts == 5);
    match seen {
        None => {}
        Some((ACTIVE | COMMITTING, cts)) => assert!(cts_so_far(cts), "{seen:?}"),
        Some((COMMITTED, cts)) => assert!(committed && cts == 5, "{seen:?}"),
        Some((DOOMED | ABORTED, cts)) => assert!(!committed && cts == INFINITY, "{seen:?}"),
        _ => panic!("no such state: {seen:?}"),
    }
}

/// Another transaction's markConflict dooms transaction 1 and pushes a conflict into it while
/// its owner commits it (or, doomed first, aborts it), releases the record under the `conflicts`
/// mutex ([`TxnShared::retire`]) and reuses it for transaction 2. The doom and the compare-and-swap
/// of the commit exclude each other, a conflict lands in transaction 1 or nowhere, and what the
/// other side reads is transaction 1's state or "released".
#[test]
fn loom_a_stale_handle_never_acts_on_the_next_transaction_in_the_record() {
    model(|| {
        let (pool, h, other) = transaction_one_and(|h| {
            h.doom();
            let pushed = h.with_conflicts(|c| c.ins.push(h)).is_some();
            (h.state(), pushed)
        });
        let first = h.rec();
        let committed = first.try_begin_commit();
        if committed {
            first.set_committed(5);
        } else {
            assert_eq!(first.status(), DOOMED, "only a doom stops the commit");
            first.set_status(ABORTED);
        }
        let ins_at_release = first.retire(|c| c.ins.len());
        let second = reuse(&pool, first);
        let h2 = second.handle();
        assert_eq!(second.status(), ACTIVE, "transaction 2 starts undoomed");
        second.set_committed(9);
        let (seen, pushed) = other.join().expect("no panic");
        assert_eq!(
            ins_at_release,
            usize::from(pushed),
            "a conflict landed in 1, if anywhere"
        );
        assert_eq!(h2.state(), Some((COMMITTED, 9)));
        assert_eq!(second.retire(|c| c.ins.len()), 0, "no conflict landed in 2");
        check_seen(seen, committed);
    });
}

/// The mutex-free release ([`TxnShared::retire_unshared`], which `si`, `rc` and
/// [`TxnShared::retire_settled`] use) against a reader through a stale handle: it reads
/// transaction 1's state or "released", never the reset record's or transaction 2's.
#[test]
fn loom_a_reader_through_a_stale_handle_never_sees_the_reused_record() {
    model(|| {
        let (pool, h, reader) = transaction_one_and(|h| (h.state(), h.state()));
        let first = h.rec();
        assert!(first.try_begin_commit());
        first.set_committed(5);
        assert!(first.retire_settled(), "nothing touched its lists");
        let second = reuse(&pool, first);
        second.set_committed(9);
        let (a, b) = reader.join().expect("no panic");
        check_seen(a, true);
        check_seen(b, true);
        assert!(
            !(a.is_none() && b.is_some()),
            "once released, always released"
        );
    });
}
