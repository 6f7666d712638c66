//! `2pl-deadlock-free`: the Tx contract, checked contended histories, the paper's point (requests
//! in opposite orders never deadlock, so nothing aborts), and the latched pipeline's exact grants.

use super::deadlock_free::*;
use super::engine::{Ready, Request};
use super::Pipeline;
use crate::harness::Workload;
use crate::protocols::kit::lock_request::{LockRequest, Mode};
use crate::protocols::kit::testkit::{
    checked_history, interactive_alongside_worker_loop, recon_mismatch_aborts_and_releases,
    Counted, Mixed,
};
use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::Database;
use std::sync::mpsc::{self, Receiver, TryRecvError};

#[test]
fn contended_histories_have_no_cycles() {
    checked_history::<DeadlockFree2pl>();
}

#[test]
fn reconnaissance_mismatch_aborts_cleanly() {
    recon_mismatch_aborts_and_releases::<DeadlockFree2pl>();
}

#[test]
fn interactive_barriers_alongside_the_worker_loop() {
    interactive_alongside_worker_loop::<DeadlockFree2pl>();
}

/// Each of `threads` workers runs `per_thread` transactions of `w` through `P`'s worker loop;
/// returns how many attempts aborted and were retried.
fn retried_attempts<P: Protocol>(w: &Mixed, threads: u32, per_thread: u64) -> u64 {
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = P::open(db, &ProtocolConfig::default());
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let p = &p;
                s.spawn(move || {
                    let mut worker = p.worker(t, false);
                    let mut src = Counted {
                        workload: w,
                        gen: w.generator(t, 11),
                        left: per_thread,
                        aborts: 0,
                    };
                    p.run_worker(&mut worker, &mut src);
                    src.aborts
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// The paper's reason for the variant: transactions that update the same few hot records in
/// opposite orders deadlock under 2PL that locks as it goes (`2pl-detect` must break such a cycle
/// with exactly one victim: the twopl suite's `deadlock_cycle`), and never under 2PL
/// that requests every lock at once. The deadlock-free variant cannot be stopped half-way (a
/// transaction holds all its locks or none), so it runs the pattern many times over on 8 hot keys
/// and must retry no attempt at all.
#[test]
fn hot_records_in_opposite_orders_never_deadlock_the_deadlock_free_variant() {
    let hot = Mixed {
        keys: 8,
        ops: 4,
        pointer_share: 0.0,
        affine: None,
    };
    assert_eq!(retried_attempts::<DeadlockFree2pl>(&hot, 4, 3_000), 0);
}

fn x(key: u64) -> LockRequest {
    LockRequest::new(0, key, 0, Mode::Exclusive)
}

fn s(key: u64) -> LockRequest {
    LockRequest::new(0, key, 0, Mode::Shared)
}

/// Submits `locks` as a transaction of its own and returns where its grant will be told.
fn submit(lm: &Latched, locks: Vec<LockRequest>) -> Receiver<Ready> {
    let (tx, rx) = mpsc::channel();
    lm.submit(Request {
        locks,
        barrier: false,
        notify: tx,
        tag: 0,
    });
    rx
}

fn granted(rx: &Receiver<Ready>) -> Option<u64> {
    match rx.try_recv() {
        Ok(r) => Some(r.seq),
        Err(TryRecvError::Empty) => None,
        Err(TryRecvError::Disconnected) => panic!("notification channel dropped"),
    }
}

/// The exact grants of one schedule: the order of the critical sections is the order of the
/// grants on every key, shared requests share, and a waiting writer is not overtaken by later
/// readers.
#[test]
fn grants_follow_the_order_of_the_critical_sections() {
    let lm = Latched::start("test", &ProtocolConfig::default());
    // T1 locks 1 then 2; T2 asks for 2 then 1 (2PL's deadlock pair): it waits for T1, whole.
    let t1 = submit(&lm, vec![x(1), x(2)]);
    let t2 = submit(&lm, vec![x(2), x(1)]);
    let t3 = submit(&lm, vec![s(5)]);
    let t4 = submit(&lm, vec![s(5)]);
    let t5 = submit(&lm, vec![x(5)]);
    let t6 = submit(&lm, vec![s(5)]);
    assert_eq!(granted(&t1), Some(1));
    assert_eq!(granted(&t2), None, "T2 waits for T1 on both keys");
    assert_eq!(granted(&t3), Some(3), "a free key");
    assert_eq!(granted(&t4), Some(4), "shared with T3");
    assert_eq!(granted(&t5), None, "X behind two S");
    assert_eq!(granted(&t6), None, "S behind a waiting X");
    lm.release(1);
    assert_eq!(granted(&t2), Some(2), "told once T1 released");
    lm.release(3);
    assert_eq!(granted(&t5), None, "T4 still holds S");
    lm.release(4);
    assert_eq!(granted(&t5), Some(5));
    assert_eq!(granted(&t6), None);
    lm.release(5);
    assert_eq!(granted(&t6), Some(6));
    lm.release(2);
    lm.release(6);
    // Everything released: a new transaction on every key is granted at once.
    let t7 = submit(&lm, vec![x(1), x(2), x(5)]);
    assert_eq!(granted(&t7), Some(7));
}
