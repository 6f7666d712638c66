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
//! * `2pl-lock-table` — the thread-safe traditional 2PL lock manager of `2pl-table`
//!   (`twopl::lock_table::LockTable`: hash to a bucket, take its latch, find or make the lock head,
//!   queue a request; release walks the transaction's lock list and unlocks each, granting waiters);
//!   the transaction's lock list is the one 2PL keeps (`twopl::lockset::LockSet`). Paper: 21.07 µs.
//!   Twice: with the protocol's default 4096 buckets (cache-resident) and with 65,536 (not).
//! * `2pl-lock-word` — Ordo's `2pl-nowait` lock: one word beside each record, one CAS to take it,
//!   plus the same lock list.
//!
//! Run: `cargo bench -p ordo --bench lock_manager`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ordo::protocols::deterministic::calvin_vll::ArrayedVll;
use ordo::protocols::kit::counters::{Colocated, CounterStore, VllCounters};
use ordo::protocols::kit::lock_manager::HashLockManager;
use ordo::protocols::kit::lock_request::{LockRequest, Mode};
use ordo::protocols::kit::lock_table::{LockTable, Outcome, DEFAULT_BUCKETS};
use ordo::protocols::kit::scheduler::Scheduler;
use ordo::protocols::twopl::lock::CountLock;
use ordo::protocols::twopl::lockset::{Held, LockSet};
use ordo::protocols::twopl::Mode as LockMode;
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
                    t.push(LockRequest::new(0, key, key, Mode::Exclusive));
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

/// The traditional thread-safe lock table, used by one thread: each transaction requests its 10 X
/// locks (recording them in its lock list) and releases them by walking the list.
fn lock_table(c: &mut Criterion, buckets: usize) {
    let txns = transactions();
    let table = LockTable::new(buckets);
    let mut list = LockSet::default();
    let mut i = 0;
    let name = format!("2pl-lock-table/{buckets} buckets: request+release 10 locks");
    c.bench_function(&name, |b| {
        b.iter(|| {
            for l in &txns[i % TXNS] {
                let got = table.lock(0, l.table, l.rid, LockMode::Exclusive, false);
                assert_eq!(got, Outcome::Granted);
                list.push(Held {
                    table: l.table,
                    rid: l.rid,
                    mode: LockMode::Exclusive,
                });
            }
            for h in list.iter() {
                table.unlock(0, h.table, h.rid);
            }
            list.clear();
            i += 1;
        })
    });
}

/// A database of `KEYS` one-column rows with protocol state `M`, and the transactions with each
/// key's row slot resolved.
fn loaded<M: Default + Send + Sync + 'static>() -> (Database<M>, Vec<Vec<LockRequest>>) {
    let txns = transactions();
    let mut db: Database<M> = Database::new();
    let schema = Schema::new(vec![Column::new("v", ColumnType::Int)]).unwrap();
    let t = db
        .create_table(TableSpec::new("t", schema).capacity(KEYS as usize))
        .unwrap();
    let mut scratch = Vec::new();
    for k in 0..KEYS {
        db.table(t).load(k, &mut scratch, |_| Ok(())).unwrap();
    }
    let txns = txns
        .into_iter()
        .map(|v| {
            v.into_iter()
                .map(|l| {
                    LockRequest::new(l.table, l.key, db.table(t).lookup(l.key).unwrap(), l.mode)
                })
                .collect()
        })
        .collect();
    (db, txns)
}

/// Ordo's lock-word 2PL: one CAS on the word beside each record, the same lock list.
fn lock_word(c: &mut Criterion) {
    let (db, txns) = loaded::<CountLock>();
    let mut list = LockSet::default();
    let mut i = 0;
    c.bench_function("2pl-lock-word/request+release 10 locks", |b| {
        b.iter(|| {
            for l in &txns[i % TXNS] {
                assert!(db
                    .table(l.table)
                    .meta(l.rid)
                    .try_acquire(LockMode::Exclusive));
                list.push(Held {
                    table: l.table,
                    rid: l.rid,
                    mode: LockMode::Exclusive,
                });
            }
            for h in list.iter() {
                db.table(h.table).meta(h.rid).release(h.mode);
            }
            list.clear();
            i += 1;
        })
    });
}

fn colocated(c: &mut Criterion) {
    let (db, txns) = loaded::<VllCounters>();
    // As VLL plans them: each request remembers where its record's counters are.
    let txns: Vec<Vec<LockRequest>> = txns
        .into_iter()
        .map(|v| {
            v.into_iter()
                // SAFETY: the counters of the request's own record in `db`, which outlives `txns`.
                .map(|l| unsafe { l.with_meta(db.table(l.table).meta(l.rid)) })
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
    lock_table(c, DEFAULT_BUCKETS);
    lock_table(c, 1 << 16);
    lock_word(c);
}

criterion_group!(lock_manager, benches);
criterion_main!(lock_manager);
