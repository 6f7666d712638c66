//! Deterministic protocols: the Tx contract, checked contended histories, determinism across thread
//! counts, and reconnaissance mismatches.

use super::*;
use crate::harness::{verify, VerifyConfig};
use crate::protocols::kit::lock_manager;
use crate::protocols::kit::queue_knobs::{BLOCKED_LIMIT_KNOB, DEFAULT_BLOCKED_LIMIT};
use crate::protocols::kit::testkit::{
    checked_history, contended, fresh_db, recon_mismatch_aborts_and_releases, serial, MixProgram,
    Mixed,
};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::HashMap;

#[test]
fn calvin_contended_histories_have_no_cycles() {
    checked_history::<Calvin>();
}

#[test]
fn calvin_vll_contended_histories_have_no_cycles() {
    checked_history::<CalvinVll>();
}

/// A fixed list of order-sensitive programs. No data-dependent ones: a reconnaissance mismatch is
/// resubmitted and takes a new place in the order (in Calvin, a new input), so the order would no longer
/// be the list's.
fn fixed_list(n: usize) -> Vec<MixProgram> {
    let w = Mixed {
        keys: 32,
        ops: 5,
        pointer_share: 0.0,
        affine: None,
    };
    let mut rng = SmallRng::seed_from_u64(42);
    (0..n)
        .map(|_| {
            let mut p = MixProgram::default();
            w.random_program(&mut rng, 0, &mut p);
            p
        })
        .collect()
}

/// Feeds `programs` to the sequencer in list order from one client, and lets `executors` threads
/// execute them (program `i` goes to executor `i % executors`), with `blocked_limit` as the VLL
/// family's blocked threshold. Returns the final state.
fn run_in_order<S: Flavor>(
    programs: &[MixProgram],
    executors: usize,
    blocked_limit: usize,
) -> Vec<(u64, i64, i64)> {
    let p = Deterministic::<S>::open(
        fresh_db(),
        &ProtocolConfig::with_threads(executors)
            .with_knob(&BLOCKED_LIMIT_KNOB, &blocked_limit.to_string())
            .unwrap(),
    );
    let workers: Vec<DetWorker> = (0..executors).map(|e| p.worker(e as u32, false)).collect();
    let notify: Vec<_> = workers.iter().map(|w| w.ready_tx.clone()).collect();
    type Planned = (u64, MixProgram, Vec<LockRequest>, Vec<Access>);
    let (to_exec, from_client): (Vec<_>, Vec<_>) =
        (0..executors).map(|_| mpsc::channel::<Planned>()).unzip();
    std::thread::scope(|s| {
        for (e, (mut w, rx)) in workers.into_iter().zip(from_client).enumerate() {
            let p = &p;
            let mine = programs.len() / executors + usize::from(e < programs.len() % executors);
            s.spawn(move || {
                let mut held: HashMap<u64, Planned> = HashMap::new();
                for _ in 0..mine {
                    let ready = Deterministic::<S>::next_ready(&w);
                    while !held.contains_key(&ready.tag) {
                        let planned = rx.recv().unwrap();
                        held.insert(planned.0, planned);
                    }
                    let (_, mut prog, locks, acc) = held.remove(&ready.tag).unwrap();
                    p.run_granted(&mut w, &mut prog, ready.seq, &locks, &acc, false)
                        .unwrap();
                }
            });
        }
        let mut planner = Planner::default();
        for (i, prog) in programs.iter().enumerate() {
            let e = i % executors;
            let mut prog = prog.clone();
            let (mut acc, mut locks) = (Vec::new(), Vec::new());
            planner.plan(&mut prog, p.db(), &mut acc, false);
            assert!(!locks_of(p.db(), &acc, S::NEEDS_ROWS, &mut locks).unwrap());
            to_exec[e]
                .send((i as u64, prog, locks.clone(), acc))
                .unwrap();
            p.engine().submit(Request {
                locks,
                barrier: false,
                notify: notify[e].clone(),
                tag: i as u64,
            });
        }
    });
    Mixed::dump(p.db())
}

fn deterministic_across_runs_and_threads<S: Flavor>() {
    let programs = fixed_list(3000);
    let expected = serial(&programs);
    assert_ne!(
        expected,
        serial(&programs[1..]),
        "the programs are order-sensitive enough to mean something"
    );
    for executors in [1, 2, 4, 1, 3] {
        assert_eq!(
            run_in_order::<S>(&programs, executors, DEFAULT_BLOCKED_LIMIT),
            expected,
            "{} with {executors} executors differs from the serial order",
            S::INFO.name
        );
    }
}

#[test]
fn calvin_final_state_is_the_serial_state_of_the_input_order() {
    deterministic_across_runs_and_threads::<lock_manager::HashLockManager>();
}

#[test]
fn calvin_vll_final_state_is_the_serial_state_of_the_input_order() {
    deterministic_across_runs_and_threads::<calvin_vll::ArrayedVll>();
}

/// `calvin-vll` holds ordered transactions back while its TxnQueue is full: whatever the threshold
/// (1 blocked transaction, a few, or never full), every transaction is admitted in the end and the
/// result is the serial order's.
#[test]
fn calvin_vll_admission_threshold_changes_nothing_but_timing() {
    let programs = fixed_list(2000);
    let expected = serial(&programs);
    for blocked_limit in [1, 2, 4096] {
        for executors in [1, 3] {
            assert_eq!(
                run_in_order::<calvin_vll::ArrayedVll>(&programs, executors, blocked_limit),
                expected,
                "blocked limit {blocked_limit}, {executors} executors"
            );
        }
    }
}

#[test]
fn calvin_reconnaissance_mismatch_aborts_cleanly() {
    recon_mismatch_aborts_and_releases::<Calvin>();
}

#[test]
fn calvin_vll_reconnaissance_mismatch_aborts_cleanly() {
    recon_mismatch_aborts_and_releases::<CalvinVll>();
}

/// The pipeline threads are joined when the protocol is dropped, also right after a busy run.
#[test]
fn dropping_the_protocol_joins_its_threads() {
    for _ in 0..20 {
        let v = verify::run::<Calvin, Mixed>(
            &contended(),
            &VerifyConfig {
                protocol: ProtocolConfig::with_threads(3),
                txns: 300,
                seed: 9,
                prefetch: true,
            },
        )
        .unwrap();
        assert_eq!(v.report.committed, 300);
    }
}

#[test]
fn calvin_interactive_barriers_alongside_the_pipeline() {
    crate::protocols::kit::testkit::interactive_alongside_worker_loop::<Calvin>();
}

#[test]
fn calvin_vll_interactive_barriers_alongside_the_pipeline() {
    crate::protocols::kit::testkit::interactive_alongside_worker_loop::<CalvinVll>();
}

/// The in-flight window starts at its maximum and stale reconnaissance takes it down to the floor
/// (the policy itself is tested in `protocols::aimd`).
#[test]
fn the_in_flight_window_runs_between_its_floor_and_its_maximum() {
    use super::{new_window, MIN_WINDOW, WINDOW};
    let mut w = new_window();
    assert_eq!(w.size(), WINDOW);
    for _ in 0..10 {
        w.stale();
    }
    assert_eq!(w.size(), MIN_WINDOW);
}
