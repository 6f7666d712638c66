//! The ordered index's cost per row of a scan, in isolation: walk every entry of a 100,000-row
//! table (SubscriberScan's whole-table predicate scans, DIBS §4.1), and a short range of 10 keys
//! (YCSB's and TPC-C's scans), reading one column of each row. One thread, no protocol.
//!
//! Run: `cargo bench -p ordo --bench scan`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ordo::storage::{Column, ColumnSet, ColumnType, Database, Schema, TableSpec};
use std::hint::black_box;

const ROWS: u64 = 100_000;

fn scans(c: &mut Criterion) {
    let mut db: Database<()> = Database::new();
    let schema = Schema::new(vec![Column::new("x", ColumnType::Int)]).unwrap();
    let id = db
        .create_table(
            TableSpec::new("t", schema)
                .ordered(0)
                .capacity(ROWS as usize),
        )
        .unwrap();
    let t = db.table(id);
    // Keys inserted out of order, as a loaded table's often are.
    for i in 0..ROWS {
        let k = (i * 7_919) % ROWS;
        let (rid, _) = t.get_or_create(k);
        t.write_from(rid, ColumnSet::one(0), &[k]);
    }
    let mut buf = vec![0u64; 1];
    let mut g = c.benchmark_group("scan");
    g.throughput(Throughput::Elements(ROWS));
    g.bench_function("whole table, per row", |b| {
        b.iter(|| {
            let mut sum = 0u64;
            for (_, rid) in t.range(0, u64::MAX) {
                t.read_into(rid, ColumnSet::one(0), &mut buf);
                sum = sum.wrapping_add(buf[0]);
            }
            black_box(sum)
        })
    });
    g.throughput(Throughput::Elements(10));
    let mut lo = 0u64;
    g.bench_function("10 keys", |b| {
        b.iter(|| {
            lo = (lo + 7_919) % (ROWS - 10);
            let mut sum = 0u64;
            for (_, rid) in t.range(lo, lo + 9) {
                t.read_into(rid, ColumnSet::one(0), &mut buf);
                sum = sum.wrapping_add(buf[0]);
            }
            black_box(sum)
        })
    });
    g.bench_function("first key at or after", |b| {
        b.iter(|| {
            lo = (lo + 7_919) % ROWS;
            black_box(t.range(lo, u64::MAX).next())
        })
    });
    g.finish();
}

criterion_group!(benches, scans);
criterion_main!(benches);
