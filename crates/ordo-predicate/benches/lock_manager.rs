//! The predicate lock manager's own cost, in isolation (issue 44's "lock-manager cost per request").
//!
//! * `acquire_release/{naive,filter,full}/{1,2}t` — one transaction after another, each one
//!   prepared point lock on TATP's Subscriber (`s_id = $1`, keys uniform over 1,000,000; reads and
//!   `vlr_location` updates alternate) acquired and released: ns per acquire + release pair. With 2
//!   threads both run at once and the time is each thread's (wall time / its pairs), so perfect
//!   scaling shows the 1-thread number. `naive` is Algorithm 1 alone (one active set for the whole
//!   database, prepared requests bound and converted to DNF); `filter` is the cumulative step with
//!   grouping, prepared predicates and 1,024 buckets; `full` adds column-level conflicts and k.
//! * `subscriber_scan/{naive,optimized}/{1..8}` — the DNF blow-up of the paper's SubscriberScan
//!   (§4.1): a scan predicate of 1–8 conjuncts, conjunct i `byte2_i BETWEEN a AND a+15 OR byte2_i
//!   BETWEEN b AND b+15` with a, b uniform in [0, 240], compiled (ToDNF, or conjuncts) and tested
//!   against one write lock of the same shape: what one acquisition pays per lock in its snapshot.
//!   `naive` converts both to full DNF (2^c terms each, 4^c term pairs); `optimized` groups
//!   conjuncts by column (c groups of 4 terms).
//!
//! Run: `cargo bench -p ordo-predicate --bench lock_manager`.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ordo_predicate::conflict_graph::ConflictGraph;
use ordo_predicate::dnf::Solver;
use ordo_predicate::lock::{ConflictRule, Lock};
use ordo_predicate::{
    ColumnSet, Config, Expr, Isolation, LockManager, Optimizations, Predicate, Prepared,
    RelationSpec, StatementKind, Step, Template,
};

/// TATP Subscriber: s_id, sub_nbr, bit_1..10, hex_1..10, byte2_1..10, msc_location, vlr_location.
const WIDTH: u16 = 34;
const BYTE2: u16 = 22;
const VLR: u16 = 33;
const KEYS: u64 = 1_000_000;

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn manager(opts: Optimizations) -> LockManager {
    let key = Prepared::parse("c0 = $1").unwrap();
    let templates = vec![
        Template {
            relation: 0,
            kind: StatementKind::Select,
            predicate: key.clone(),
            read: ColumnSet::all(WIDTH),
            write: ColumnSet::NONE,
        },
        Template {
            relation: 0,
            kind: StatementKind::Update,
            predicate: key,
            read: ColumnSet::NONE,
            write: ColumnSet::of(&[VLR]),
        },
    ];
    let relations = vec![RelationSpec::new("subscriber", WIDTH, Some(0), 1024)];
    LockManager::new(relations, templates, opts, Config::default()).unwrap()
}

/// Each of `threads` threads runs `iters` acquire + release pairs; the slowest thread's time.
fn run(plm: &Arc<LockManager>, threads: usize, iters: u64) -> Duration {
    let barrier = Barrier::new(threads);
    thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (plm, barrier) = (plm.clone(), &barrier);
                s.spawn(move || {
                    let mut tx = plm.begin(Isolation::Serializable);
                    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1);
                    barrier.wait();
                    let start = Instant::now();
                    for i in 0..iters {
                        let key = (xorshift(&mut x) % KEYS) as i64;
                        plm.acquire_prepared(&mut tx, (i & 1) as u32, &[key])
                            .expect("no deadlock with one lock");
                        plm.release(&mut tx);
                    }
                    start.elapsed()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .max()
            .unwrap()
    })
}

fn acquire_release(c: &mut Criterion) {
    let mut g = c.benchmark_group("acquire_release");
    for (name, opts) in [
        ("naive", Optimizations::naive()),
        ("filter", Optimizations::cumulative(Step::Filter)),
        ("full", Optimizations::full()),
    ] {
        let plm = Arc::new(manager(opts));
        for threads in [1, 2] {
            g.bench_function(BenchmarkId::new(name, format!("{threads}t")), |b| {
                b.iter_custom(|iters| run(&plm, threads, iters))
            });
        }
    }
    g.finish();
}

/// A SubscriberScan predicate of `conjuncts` conjuncts.
fn scan(conjuncts: u16, x: &mut u64) -> Predicate {
    Expr::and(
        (0..conjuncts)
            .map(|i| {
                let (a, b) = ((xorshift(x) % 241) as i64, (xorshift(x) % 241) as i64);
                Expr::or(vec![
                    Expr::between(BYTE2 + i, a, a + 15),
                    Expr::between(BYTE2 + i, b, b + 15),
                ])
            })
            .collect(),
    )
}

fn subscriber_scan(c: &mut Criterion) {
    let mut g = c.benchmark_group("subscriber_scan");
    g.sample_size(10);
    let byte2 = ColumnSet(((1u64 << 10) - 1) << BYTE2);
    for (name, opts) in [
        ("naive", Optimizations::naive()),
        ("optimized", Optimizations::full()),
    ] {
        let rule = ConflictRule::new(opts, ConflictGraph::default());
        for conjuncts in 1..=8u16 {
            let mut x = 0x2545_F491_4F6C_DD1Du64;
            let mut solver = Solver::default();
            let reads: Vec<Predicate> = (0..64).map(|_| scan(conjuncts, &mut x)).collect();
            let writes: Vec<Lock> = (0..64)
                .map(|_| {
                    let p = scan(conjuncts, &mut x);
                    Lock::ad_hoc(
                        2,
                        0,
                        StatementKind::Update,
                        rule.compile(&p, &mut solver),
                        byte2,
                        byte2,
                    )
                })
                .collect();
            let mut i = 0;
            g.bench_function(BenchmarkId::new(name, conjuncts), |b| {
                b.iter(|| {
                    i = (i + 1) % 64;
                    let form = rule.compile(&reads[i], &mut solver);
                    let lock =
                        Lock::ad_hoc(1, 0, StatementKind::Select, form, byte2, ColumnSet::NONE);
                    rule.conflict(&lock, &writes[(i * 7) % 64], &mut solver)
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, acquire_release, subscriber_scan);
criterion_main!(benches);
