//! Locking CPU cost per transaction, in isolation (the VLL paper's Fig. 16): one thread requests and
//! releases the locks of 10-key transactions on each lock manager, with no contention and no
//! execution, so only the lock manager's own work is timed.
//!
//! * `hash-table` — Calvin's / traditional lock manager: hash table of per-key request queues
//!   (`deterministic::lock_manager::HashLockManager`); paper: 20.18 µs (Calvin), 21.07 µs (2PL).
//! * `arrayed-vll` — deterministic VLL: arrayed counters + TxnQueue (`calvin_vll::ArrayedVll`).
//! * `colocated-vll-counters` — VLL's counters beside the records (`vll::counters::Colocated`),
//!   request + release only, no TxnQueue; paper: 1.83 µs multi-threaded VLL (with its latch),
//!   0.69 µs single-threaded VLL.
//!
//! Run: `cargo bench -p ordo --bench lock_manager`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ordo::protocols::deterministic::calvin_vll::ArrayedVll;
use ordo::protocols::deterministic::lock_manager::HashLockManager;
use ordo::protocols::deterministic::plan::{LockRequest, Mode};
use ordo::protocols::deterministic::scheduler::Scheduler;
use ordo::protocols::vll::counters::{Colocated, CounterStore, VllCounters};
use ordo::storage::{Column, ColumnType, Database, Schema, TableSpec};

const KEYS: u64 = 1_000_000;
const TXNS: usize = 4096;
const PER_TXN: usize = 10;

/// `TXNS` transactions of 10 distinct exclusive locks each, keys spread over `KEYS` (rid = key).
fn transactions() -> Vec<Vec<LockRequest>> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % KEYS
    };
    (0..TXNS)
        .map(|_| {
            let mut t: Vec<LockRequest> = Vec::new();
            while t.len() < PER_TXN {
                let key = next();
                if t.iter().all(|l| l.key != key) {
                    t.push(LockRequest {
                        table: 0,
                        key,
                        rid: key,
                        mode: Mode::Exclusive,
                    });
                }
            }
            t.sort_unstable_by_key(|l| l.key);
            t
        })
        .collect()
}

fn scheduler<S: Scheduler>(c: &mut Criterion, name: &str) {
    let txns = transactions();
    let mut s = S::default();
    let mut ready = Vec::new();
    // Warm the structures (arrays grown, queues allocated) once.
    for (i, t) in txns.iter().enumerate() {
        s.request(i as u64, t.clone(), &mut ready);
        s.release(i as u64, &mut ready);
    }
    let seq = std::cell::Cell::new(TXNS as u64);
    c.bench_function(&format!("{name}/request+release 10 locks"), |b| {
        b.iter_batched(
            || txns[seq.get() as usize % TXNS].clone(),
            |locks| {
                let n = seq.get();
                assert!(s.request(n, locks, &mut ready));
                s.release(n, &mut ready);
                seq.set(n + 1);
            },
            BatchSize::SmallInput,
        )
    });
}

/// Steady state: 64 transactions in flight (each iteration requests one and releases the oldest), so
/// the lock table holds ~640 keys as in a running pipeline rather than just one transaction's.
fn scheduler_in_flight<S: Scheduler>(c: &mut Criterion, name: &str) {
    const IN_FLIGHT: u64 = 64;
    let txns = transactions();
    let mut s = S::default();
    let mut ready = Vec::new();
    for i in 0..IN_FLIGHT {
        s.request(i, txns[i as usize].clone(), &mut ready);
    }
    let seq = std::cell::Cell::new(IN_FLIGHT);
    c.bench_function(
        &format!("{name}/64 in flight: request+release 10 locks"),
        |b| {
            b.iter_batched(
                || txns[seq.get() as usize % TXNS].clone(),
                |locks| {
                    let n = seq.get();
                    s.request(n, locks, &mut ready);
                    s.release(n - IN_FLIGHT, &mut ready);
                    ready.clear();
                    seq.set(n + 1);
                },
                BatchSize::SmallInput,
            )
        },
    );
}

fn colocated(c: &mut Criterion) {
    let txns = transactions();
    let mut db: Database<VllCounters> = Database::new();
    let schema = Schema::new(vec![Column::new("v", ColumnType::Int)]).unwrap();
    let t = db
        .create_table(TableSpec::new("t", schema).capacity(KEYS as usize))
        .unwrap();
    let mut scratch = Vec::new();
    for k in 0..KEYS {
        db.table(t).load(k, &mut scratch, |_| Ok(())).unwrap();
    }
    // Keys were loaded in order: resolve each key's row slot.
    let txns: Vec<Vec<LockRequest>> = txns
        .into_iter()
        .map(|v| {
            v.into_iter()
                .map(|l| LockRequest {
                    rid: db.table(t).lookup(l.key).unwrap(),
                    ..l
                })
                .collect()
        })
        .collect();
    let mut store = Colocated;
    let mut i = 0;
    c.bench_function("colocated-vll-counters/request+release 10 locks", |b| {
        b.iter(|| {
            let locks = &txns[i % TXNS];
            let mut free = true;
            for l in locks {
                free &= store.request(&db, l);
            }
            assert!(free);
            for l in locks {
                store.release(&db, l);
            }
            i += 1;
        })
    });
}

fn benches(c: &mut Criterion) {
    scheduler::<HashLockManager>(c, "hash-table");
    scheduler::<ArrayedVll>(c, "arrayed-vll");
    scheduler_in_flight::<HashLockManager>(c, "hash-table");
    scheduler_in_flight::<ArrayedVll>(c, "arrayed-vll");
    colocated(c);
}

criterion_group!(lock_manager, benches);
criterion_main!(lock_manager);
