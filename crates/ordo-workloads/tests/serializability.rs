//! Every registered protocol, under contended multi-threaded YCSB with recording on, judged by the
//! checker: protocols that promise serializability produce no anomaly at all; `nocc` produces real ones.

use ordo::check::AnomalyKind;
use ordo::harness::{verify, VerifyConfig};
use ordo::protocols::{self, Isolation, ProtocolConfig};
use ordo_workloads::ycsb::{CommitPoint, Ycsb, YcsbConfig};

/// Hot: 200 rows, θ = 0.9, half the requests read-modify-writes, 8 per transaction.
fn contended() -> Ycsb {
    Ycsb::new(YcsbConfig {
        rows: 200,
        ops: 8,
        read_ratio: 0.5,
        theta: 0.9,
        rmw: true,
        fields: 2,
        field_len: 16,
        hot: None,
        commit_point: None,
        partitioning: None,
    })
    .unwrap()
}

#[test]
fn serializable_protocols_produce_no_cycles_over_100k_contended_transactions() {
    let w = contended();
    // 4 threads on a 2-core machine: preemption in the middle of transactions adds interleavings.
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(4),
        txns: 100_000,
        seed: 7,
        prefetch: true,
    };
    let serializable: Vec<_> = protocols::all()
        .into_iter()
        .filter(|p| p.isolation == Isolation::Serializable)
        .collect();
    for info in &serializable {
        let v = verify::run_named(info.name, &w, &cfg)
            .unwrap()
            .expect("verification run");
        assert!(
            v.report.committed >= 100_000,
            "{}: only {} committed",
            info.name,
            v.report.committed
        );
        assert!(v.report.is_serializable(), "{}: {}", info.name, v.report);
        assert!(v.report.anomalies.is_empty(), "{}: {}", info.name, v.report);
        assert!(
            v.report.edges > 100_000,
            "{}: the history has too few dependencies to mean much",
            info.name
        );
    }
}

/// With an abort check after 4 writes that aborts a fifth of the transactions (`--commit-point 4
/// --abort-ratio 0.2`): no anomaly — no read of an aborted write — and every protocol aborts the
/// same transactions, the ones drawn with the flag.
#[test]
fn serializable_protocols_abort_the_same_transactions_at_a_commit_point() {
    let w = Ycsb::new(YcsbConfig {
        commit_point: Some(CommitPoint {
            after_writes: 4,
            abort_ratio: 0.2,
        }),
        ..contended().config().clone()
    })
    .unwrap();
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(4),
        txns: 20_000,
        seed: 5,
        prefetch: true,
    };
    let mut committed = None;
    for info in protocols::all()
        .into_iter()
        .filter(|p| p.isolation == Isolation::Serializable)
    {
        let v = verify::run_named(info.name, &w, &cfg)
            .unwrap()
            .expect("verification run");
        assert!(v.report.is_serializable(), "{}: {}", info.name, v.report);
        assert!(v.report.anomalies.is_empty(), "{}: {}", info.name, v.report);
        let c = v.report.committed;
        assert!(
            (15_000..17_000).contains(&c),
            "{}: {c} committed",
            info.name
        );
        assert_eq!(*committed.get_or_insert(c), c, "{}", info.name);
    }
}

#[test]
fn nocc_histories_show_cycles() {
    let w = contended();
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(4),
        txns: 40_000,
        seed: 11,
        prefetch: true,
    };
    let v = verify::run_named("nocc", &w, &cfg)
        .unwrap()
        .expect("verification run");
    assert!(
        !v.report.is_serializable(),
        "nocc under contention should not be serializable: {}",
        v.report
    );
    // The checker names one class per strongly connected component (the most severe: G0 before G1c
    // before G-single before G2-item); racing blind installs give write cycles first.
    let cycles = [
        AnomalyKind::G0,
        AnomalyKind::G1c,
        AnomalyKind::GSingle,
        AnomalyKind::G2Item,
        AnomalyKind::G2,
    ];
    assert!(
        cycles.iter().any(|k| v.report.has(*k)),
        "expected dependency cycles: {}",
        v.report
    );
}
