//! SmallBank, SIBENCH, TATP, the VLL range micro-benchmark, the PWV write-visibility
//! micro-benchmark, Salt's and Callas's microbenchmarks and ticketing under every registered protocol,
//! contended and multi-threaded, with the history recorded and judged by the checker: serializable
//! protocols produce no anomaly and keep each workload's invariants; `nocc` breaks them (so the
//! checks can fail).

use ordo::check::AnomalyKind;
use ordo::harness::{verify, Verified, VerifyConfig, Workload};
use ordo::protocols::{self, Isolation, ProtocolConfig};
use ordo_workloads::callas_micro::{self, CallasMicro, CallasMicroConfig};
use ordo_workloads::pwv_micro::{PwvMicro, PwvMicroConfig};
use ordo_workloads::salt_micro::{SaltMicro, SaltMicroConfig, Variant};
use ordo_workloads::sibench::{SiBench, SiBenchConfig};
use ordo_workloads::smallbank::{SmallBank, SmallBankConfig};
use ordo_workloads::tatp::{Tatp, TatpConfig};
use ordo_workloads::ticketing::{Ticketing, TicketingConfig};
use ordo_workloads::vll_range::{VllRange, VllRangeConfig};

fn verify<W: Workload>(protocol: &str, w: &W, threads: usize, txns: u64, seed: u64) -> Verified {
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(threads),
        txns,
        seed,
        prefetch: true,
    };
    verify::run_named(protocol, w, &cfg)
        .unwrap()
        .expect("verification run")
}

/// Every serializable protocol, at 1, 2 and 4 threads (4 on a 2-core machine: preemption inside
/// transactions adds interleavings): no anomalies, invariants hold, everything committed.
fn serializable_everywhere<W: Workload>(w: &W, txns: u64, min_edges: usize) {
    for info in protocols::all()
        .into_iter()
        .filter(|p| p.isolation == Isolation::Serializable)
    {
        for threads in [1, 2, 4] {
            let v = verify(info.name, w, threads, txns, 17);
            let r = &v.report;
            assert!(
                r.is_serializable() && r.anomalies.is_empty(),
                "{} × {threads}: {r}",
                info.name
            );
            assert_eq!(
                v.invariants,
                Ok(()),
                "{} × {threads}: invariants",
                info.name
            );
            assert!(r.committed > 0, "{}: nothing committed", info.name);
            if threads > 1 {
                assert!(
                    r.edges >= min_edges,
                    "{}: only {} dependencies: too little contention to mean much",
                    info.name,
                    r.edges
                );
            }
        }
    }
}

/// How `nocc` broke the run, trying seeds until it does (a cycle or a failed invariant; the races are
/// short, so a run may get lucky, but not forty in a row).
fn nocc_breaks<W: Workload>(w: &W, txns: u64) -> Vec<String> {
    let cycles = [
        AnomalyKind::G0,
        AnomalyKind::G1c,
        AnomalyKind::GSingle,
        AnomalyKind::G2Item,
        AnomalyKind::G2,
    ];
    let mut seen = Vec::new();
    for seed in 0..40 {
        let v = verify("nocc", w, 8, txns, seed);
        if let Some(k) = cycles.iter().find(|k| v.report.has(**k)) {
            seen.push(format!("seed {seed}: {k:?}"));
        }
        if let Err(e) = v.invariants {
            seen.push(format!("seed {seed}: {e}"));
        }
        if !seen.is_empty() {
            break;
        }
    }
    seen
}

fn smallbank_hot() -> SmallBank {
    SmallBank::new(SmallBankConfig {
        customers: 50,
        hotspot_size: 5,
        hotspot_prob: 0.8,
    })
    .unwrap()
}

#[test]
fn smallbank_is_serializable_and_conserves_money_under_every_serializable_protocol() {
    serializable_everywhere(&smallbank_hot(), 20_000, 10_000);
}

#[test]
fn smallbank_under_nocc_loses_money_or_serializability() {
    let seen = nocc_breaks(&smallbank_hot(), 40_000);
    assert!(!seen.is_empty(), "nocc never broke SmallBank");
}

#[test]
fn sibench_is_serializable_and_counts_every_update_under_every_serializable_protocol() {
    for (items, queries) in [(10, 1), (100, 10)] {
        let w = SiBench::new(SiBenchConfig {
            items,
            queries,
            updates: 1,
        })
        .unwrap();
        serializable_everywhere(&w, 5_000, 1_000);
    }
}

#[test]
fn sibench_under_nocc_loses_updates_or_serializability() {
    let w = SiBench::new(SiBenchConfig {
        items: 10,
        queries: 1,
        updates: 1,
    })
    .unwrap();
    let seen = nocc_breaks(&w, 40_000);
    assert!(!seen.is_empty(), "nocc never broke sibench");
}

#[test]
fn tatp_is_serializable_and_keeps_its_integrity_under_every_serializable_protocol() {
    // 100 subscribers (NURand A = 7): UpdateLocation and the call-forwarding inserts and deletes meet
    // GetSubscriberData and GetNewDestination on the same few rows.
    let w = Tatp::new(TatpConfig { subscribers: 100 }).unwrap();
    serializable_everywhere(&w, 20_000, 2_000);
}

/// 256 records, ranges of up to 16 (8 on average) inside 16-key blocks: ranges overlap often, and
/// partly (the case where a range lock manager would split), under the protocols that lock ranges
/// as prefixes (`vllr`), record by record (`vll`, Calvin) or not at all (OCC, MVCC).
fn vll_range_small() -> VllRange {
    VllRange::new(VllRangeConfig {
        key_bits: 8,
        shared_prefix: 4,
        long: false,
    })
    .unwrap()
}

#[test]
fn vll_range_is_serializable_and_keeps_its_sum_under_every_serializable_protocol() {
    serializable_everywhere(&vll_range_small(), 3_000, 1_000);
}

#[test]
fn vll_range_under_nocc_loses_updates_or_serializability() {
    let seen = nocc_breaks(&vll_range_small(), 20_000);
    assert!(!seen.is_empty(), "nocc never broke vll-range");
}

/// 1,000 records, every transaction's hot update first (`--hot-position 9`, the longest write
/// visibility delay) or elsewhere: every pair of transactions meets at the hot record, and the
/// cold ones meet too.
fn pwv_micro_small(hot_position: u32) -> PwvMicro {
    PwvMicro::new(PwvMicroConfig {
        records: 1_000,
        hot_position,
    })
    .unwrap()
}

#[test]
fn pwv_micro_is_serializable_and_its_hot_record_counts_every_commit_under_every_serializable_protocol(
) {
    serializable_everywhere(&pwv_micro_small(9), 4_000, 3_000);
}

#[test]
fn pwv_micro_under_nocc_loses_updates_or_serializability() {
    let seen = nocc_breaks(&pwv_micro_small(9), 20_000);
    assert!(!seen.is_empty(), "nocc never broke pwv-micro");
}

/// Salt's contention-ratio microbenchmark on 20 rows (every transaction updates 5 of them) and
/// ticketing with 500 seats a category (it sells out mid-run): BASE-ified programs, which every
/// protocol but `salt`/`salt-local` runs as ACID.
fn salt_micro_small() -> SaltMicro {
    SaltMicro::new(SaltMicroConfig {
        variant: Variant::Ratio,
        rows: 20,
        ..SaltMicroConfig::default()
    })
    .unwrap()
}

fn ticketing_small() -> Ticketing {
    Ticketing::new(TicketingConfig { seats: 500 }).unwrap()
}

#[test]
fn salt_micro_and_ticketing_are_serializable_and_keep_their_invariants_under_every_serializable_protocol(
) {
    serializable_everywhere(&salt_micro_small(), 2_000, 1_000);
    serializable_everywhere(&ticketing_small(), 2_000, 500);
}

/// `salt`, `salt-local` and `acid-2pl` at `--salt-level ser`: the history of ACID transactions and
/// alkaline subtransactions is serializable and the invariants hold, on both BASE-ified workloads.
#[test]
fn salt_micro_and_ticketing_under_the_salt_protocols_at_serializable() {
    fn at_ser<W: Workload>(w: &W) {
        for name in ["salt", "salt-local", "acid-2pl"] {
            let cfg = VerifyConfig {
                protocol: ProtocolConfig {
                    lock_wait_timeout: std::time::Duration::from_millis(5),
                    ..ProtocolConfig::with_threads(4)
                }
                .with_knob(&ordo::protocols::salt::LEVEL_KNOB, "ser")
                .unwrap(),
                txns: 2_000,
                seed: 17,
                prefetch: true,
            };
            let v = verify::run_named(name, w, &cfg)
                .unwrap()
                .expect("verification run");
            assert!(v.report.anomalies.is_empty(), "{name}: {}", v.report);
            assert_eq!(v.invariants, Ok(()), "{name}: invariants");
        }
    }
    at_ser(&salt_micro_small());
    at_ser(&ticketing_small());
}

/// Callas's microbenchmarks, contended: `contention` on 2 shared rows (T1 and T2 meet on them, and
/// each type on its own 10 rows) and `rollback` with 20% of the Checks rolled back by their own
/// logic after updating a[i] and b[i] (the commit point is c[i]'s piece).
fn callas_micro_small(
    variant: callas_micro::Variant,
    shared_rows: u64,
    rollback_pct: f64,
) -> CallasMicro {
    CallasMicro::new(CallasMicroConfig {
        shared_rows,
        rollback_pct,
        ..callas_micro::options::defaults(variant, ordo_workloads::Purpose::Verify)
    })
    .unwrap()
}

#[test]
fn callas_micro_is_serializable_and_keeps_its_invariants_under_every_serializable_protocol() {
    use callas_micro::Variant;
    serializable_everywhere(
        &callas_micro_small(Variant::Contention, 2, 0.0),
        2_000,
        1_000,
    );
    serializable_everywhere(
        &callas_micro_small(Variant::Rollback, 10, 20.0),
        2_000,
        1_000,
    );
}
