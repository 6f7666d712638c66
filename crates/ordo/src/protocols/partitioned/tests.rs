//! Partitioned protocols: the Tx contract, and contended histories (single- and multi-partition mixes,
//! with data-dependent transactions) judged by the checker.

use super::*;
use crate::harness::Workload;
use crate::harness::{verify, VerifyConfig};
use crate::protocols::conformance;
use crate::protocols::deterministic::testkit::{MixProgram, Mixed};
use crate::protocols::{Protocol, ProtocolConfig};

#[test]
fn hstore_tx_contract() {
    conformance::single_thread_semantics::<HStore>();
    conformance::abort_undoes_writes::<HStore>();
}

#[test]
fn vll_partitioned_tx_contract() {
    conformance::single_thread_semantics::<VllPartitioned>();
    conformance::abort_undoes_writes::<VllPartitioned>();
}

fn checked<P: Protocol>(affine: Option<(u64, f64)>) {
    // 4 threads (so 4 partitions) on 2 cores: preemption mid-transaction adds interleavings.
    let w = Mixed {
        keys: 64,
        ops: 6,
        pointer_share: 0.1,
        affine,
    };
    let cfg = VerifyConfig {
        threads: 4,
        txns: 20_000,
        seed: 5,
    };
    let v = verify::run::<P, Mixed>(&w, &cfg).unwrap();
    let name = P::INFO.name;
    assert_eq!(v.report.committed, 20_000, "{name}");
    assert!(
        v.report.is_serializable(),
        "{name} {affine:?}: {}",
        v.report
    );
    assert!(
        v.report.anomalies.is_empty(),
        "{name} {affine:?}: {}",
        v.report
    );
    assert!(v.report.edges > 10_000, "{name}: too few dependencies");
}

#[test]
fn hstore_histories_have_no_cycles() {
    checked::<HStore>(None);
    checked::<HStore>(Some((4, 0.2)));
}

#[test]
fn vll_partitioned_histories_have_no_cycles() {
    checked::<VllPartitioned>(None);
    checked::<VllPartitioned>(Some((4, 0.2)));
}

fn mix(keys: &[u64]) -> MixProgram {
    MixProgram {
        keys: 64,
        ops: keys.iter().map(|&k| (k, true)).collect(),
        tag: 1,
        ..MixProgram::default()
    }
}

/// The property that separates VLL from H-Store: a queued multi-partition transaction holds only its
/// records, so a local transaction on other records of its partitions runs at once; one on its records
/// is queued and runs when the multi-partition transaction finishes (head rule).
#[test]
fn vll_partitioned_multi_partition_transactions_lock_records_not_partitions() {
    let p = VllPartitioned::open(
        fresh_db(),
        &ProtocolConfig {
            threads: 4,
            ..ProtocolConfig::default()
        },
    );
    let mut w = p.worker(0, false);
    // Keys 1 and 2 lie in partitions 1 and 2.
    let (mut mp, mut slot) = (mix(&[1, 2]), vll_partitioned::Slot::default());
    assert!(matches!(
        p.admit(&mut w, &mut slot, &mut mp, 7),
        vll_partitioned::Admitted::Queued { free: true }
    ));
    // Key 5 is in partition 1 too, but free: runs now, inside partition 1's critical section.
    p.execute(&mut w, &mut mix(&[5])).unwrap();
    // Key 1 is held by the multi-partition transaction: queued, blocked.
    let (mut local, mut lslot) = (mix(&[1, 9]), vll_partitioned::Slot::default());
    assert!(matches!(
        p.admit(&mut w, &mut lslot, &mut local, 8),
        vll_partitioned::Admitted::Queued { free: false }
    ));
    assert!(w.ready_rx.try_recv().is_err(), "still blocked");
    p.run(&mut w, &slot, &mut mp).unwrap();
    p.finish(&mut slot);
    assert_eq!(
        w.ready_rx.try_recv(),
        Ok(8),
        "unblocked at the head of partition 1"
    );
    p.run(&mut w, &lslot, &mut local).unwrap();
    p.finish(&mut lslot);
    let dump = Mixed::dump(p.db());
    // b ← 3b + 1: key 1 twice (4), keys 2, 5, 9 once (1).
    for (k, _, b) in dump {
        let want = match k {
            1 => 4,
            2 | 5 | 9 => 1,
            _ => 0,
        };
        assert_eq!(b, want, "key {k}");
    }
    for q in &p.parts {
        assert!(q.lock().queue.is_empty(), "every queue drained");
    }
}

fn fresh_db<M: Default + Send + Sync>() -> crate::storage::Database<M> {
    let mut db = crate::storage::Database::new();
    Mixed {
        keys: 64,
        ops: 1,
        pointer_share: 0.0,
        affine: None,
    }
    .load(&mut db)
    .unwrap();
    db
}

#[test]
fn hstore_interactive_transactions_alongside_the_worker_loop() {
    crate::protocols::deterministic::testkit::interactive_alongside_worker_loop::<HStore>();
}

#[test]
fn vll_partitioned_interactive_transactions_alongside_the_worker_loop() {
    crate::protocols::deterministic::testkit::interactive_alongside_worker_loop::<VllPartitioned>();
}
