//! Behaviour every protocol must show, written once and run against every registered protocol (the
//! tests at the end of this file iterate over the registry, so a protocol is held to all of it the
//! moment it is registered; a family's own tests add what is particular to it).
//!
//! `single_thread_semantics` pins down the [`Tx`] contract (reads see own writes, absent keys, inserts,
//! deletes, scans, column-level writes); `abort_undoes_writes` holds for every protocol except `nocc`;
//! `read_only_tables` pins down tables that are read-only once loaded (reads see the loaded rows, every
//! write is refused with `InvalidData` and changes nothing); `a_panicking_program_holds_nothing`
//! pins down what `Protocol::execute` leaves behind when a program panics (nothing held, writes undone);
//! `no_dirty_read` runs two interactive transactions at once, so it holds the protocols that run them
//! concurrently ([`crate::protocols::Interactive::Concurrent`]) and promise some isolation.
//! The multi-threaded checks live in `harness::verify` and the workload tests.

use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::{Column, ColumnSet, ColumnType, Database, Schema, TableId, TableSpec};
use crate::txn::{AbortReason, Tx};

/// Table 0 of [`small_db`]: ordered, columns `a: Int, b: Int, s: VarChar(16)`; keys 0, 10, 20, …, 90
/// with `a = key`, `b = 0`, `s = "k<key>"`.
pub const KV: TableId = 0;
pub const A: usize = 0;
pub const B: usize = 1;
pub const S: usize = 2;

/// A small database for protocol tests.
pub fn small_db<M: Default + Send + Sync>() -> Database<M> {
    let mut db = Database::new();
    let schema = Schema::new(vec![
        Column::new("a", ColumnType::Int),
        Column::new("b", ColumnType::Int),
        Column::new("s", ColumnType::VarChar(16)),
    ])
    .unwrap();
    let t = db
        .create_table(TableSpec::new("kv", schema).ordered(4))
        .unwrap();
    load_rows(&db, t, 0, "k");
    db
}

/// Loads keys 0, 10, …, 90 into table `t`: `a = key`, `b = b`, `s = "<prefix><key>"`.
fn load_rows<M: Default + Send + Sync>(db: &Database<M>, t: TableId, b: i64, prefix: &str) {
    let mut scratch = Vec::new();
    for k in (0..100).step_by(10) {
        db.table(t)
            .load(k, &mut scratch, |r| {
                r.set_int(A, k as i64);
                r.set_int(B, b);
                r.set_str(S, format!("{prefix}{k}").as_bytes())
            })
            .unwrap();
    }
}

/// Table 1 of [`read_only_db`]: read-only once loaded ([`TableSpec::read_only`]), ordered, with
/// [`KV`]'s columns; keys 0, 10, 20, …, 90 with `a = key`, `b = 1`, `s = "r<key>"`.
pub const RO: TableId = 1;

/// [`small_db`] plus the read-only table [`RO`].
pub fn read_only_db<M: Default + Send + Sync>() -> Database<M> {
    let mut db = small_db();
    let schema = db.table(KV).schema().clone();
    let t = db
        .create_table(TableSpec::new("ro", schema).ordered(4).read_only())
        .unwrap();
    assert_eq!(t, RO);
    load_rows(&db, t, 1, "r");
    db
}

/// Reads [`read_only_db`]'s read-only table through `tx` — a present key, an absent one, and a scan
/// of all of it — asserting what it finds (protocol tests then check that nothing was locked or
/// tracked).
pub fn read_the_read_only_table<T: Tx>(tx: &mut T) {
    assert_eq!(tx.get(RO, 10, ColumnSet::ALL).unwrap().unwrap().int(A), 10);
    assert!(tx.get(RO, 11, ColumnSet::ALL).unwrap().is_none());
    assert_eq!(scan_keys_of(tx, RO, 0, u64::MAX).len(), 10);
}

/// Opens protocol `P` on [`small_db`].
pub fn open_small<P: Protocol>() -> P {
    P::open(
        small_db(),
        &ProtocolConfig {
            threads: 2,
            ..ProtocolConfig::default()
        },
    )
}

fn scan_keys<T: Tx>(tx: &mut T, lo: u64, hi: u64) -> Vec<u64> {
    scan_keys_of(tx, KV, lo, hi)
}

fn scan_keys_of<T: Tx>(tx: &mut T, table: TableId, lo: u64, hi: u64) -> Vec<u64> {
    let mut keys = Vec::new();
    tx.scan(table, lo, hi, ColumnSet::one(A), |k, _| {
        keys.push(k);
        true
    })
    .unwrap();
    keys
}

/// The single-threaded contract of [`Tx`].
pub fn single_thread_semantics<P: Protocol>() {
    let p: P = open_small();
    let mut w = p.worker(0, false);

    // Reads, reads of own writes, column-level writes.
    let mut tx = p.begin(&mut w);
    let r = tx
        .get(KV, 20, ColumnSet::ALL)
        .unwrap()
        .expect("key 20 present");
    assert_eq!((r.int(A), r.int(B), r.str(S)), (20, 0, &b"k20"[..]));
    assert!(
        tx.get(KV, 21, ColumnSet::ALL).unwrap().is_none(),
        "key 21 absent"
    );
    let got = tx.update(KV, 20, ColumnSet::one(B), |r| {
        r.set_int(B, r.int(B) + 5);
        r.int(B)
    });
    assert_eq!(got.unwrap(), Some(5));
    assert_eq!(
        tx.update(KV, 21, ColumnSet::one(B), |_| ()).unwrap(),
        None,
        "update of an absent key"
    );
    let r = tx.get(KV, 20, ColumnSet::ALL).unwrap().unwrap();
    assert_eq!(
        (r.int(A), r.int(B), r.str(S)),
        (20, 5, &b"k20"[..]),
        "own write visible, other columns kept"
    );
    tx.insert(KV, 25, |r| {
        r.set_int(A, 25);
        r.set_str(S, b"new").unwrap();
    })
    .unwrap();
    assert_eq!(
        tx.get(KV, 25, ColumnSet::ALL).unwrap().unwrap().str(S),
        b"new"
    );
    assert!(tx.delete(KV, 30).unwrap());
    assert!(!tx.delete(KV, 31).unwrap(), "delete of an absent key");
    assert!(
        tx.get(KV, 30, ColumnSet::ALL).unwrap().is_none(),
        "own delete visible"
    );
    assert_eq!(
        scan_keys(&mut tx, 10, 40),
        vec![10, 20, 25, 40],
        "scan sees own insert, not own delete"
    );
    tx.commit().unwrap();

    // Committed state seen by a later transaction.
    let mut tx = p.begin(&mut w);
    assert_eq!(
        tx.get(KV, 20, ColumnSet::one(B)).unwrap().unwrap().int(B),
        5
    );
    assert_eq!(
        tx.get(KV, 25, ColumnSet::one(A)).unwrap().unwrap().int(A),
        25
    );
    assert!(tx.get(KV, 30, ColumnSet::ALL).unwrap().is_none());
    assert_eq!(
        scan_keys(&mut tx, 0, u64::MAX),
        vec![0, 10, 20, 25, 40, 50, 60, 70, 80, 90]
    );
    let mut firsts = Vec::new();
    tx.scan(KV, 0, 100, ColumnSet::one(A), |k, r| {
        firsts.push((k, r.int(A)));
        firsts.len() < 2
    })
    .unwrap();
    assert_eq!(
        firsts,
        vec![(0, 0), (10, 10)],
        "scan stops when the visitor says so"
    );
    let dup = tx.insert(KV, 40, |_| ()).unwrap_err();
    assert_eq!(dup.reason, AbortReason::DuplicateKey);
    drop(tx);

    // Re-insert of a deleted key, then delete of an inserted one.
    let mut tx = p.begin(&mut w);
    tx.insert(KV, 30, |r| r.set_int(A, 300)).unwrap();
    tx.commit().unwrap();
    let mut tx = p.begin(&mut w);
    assert_eq!(
        tx.get(KV, 30, ColumnSet::one(A)).unwrap().unwrap().int(A),
        300
    );
    assert!(tx.delete(KV, 25).unwrap());
    tx.commit().unwrap();
    let mut tx = p.begin(&mut w);
    assert!(tx.get(KV, 25, ColumnSet::ALL).unwrap().is_none());
    tx.commit().unwrap();
}

/// An aborted (or dropped) transaction leaves no trace (every protocol but `nocc`).
pub fn abort_undoes_writes<P: Protocol>() {
    let p: P = open_small();
    let mut w = p.worker(0, false);
    let mut tx = p.begin(&mut w);
    tx.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 99))
        .unwrap();
    tx.insert(KV, 15, |r| r.set_int(A, 15)).unwrap();
    assert!(tx.delete(KV, 20).unwrap());
    tx.abort();
    let mut tx = p.begin(&mut w);
    tx.update(KV, 40, ColumnSet::one(B), |r| r.set_int(B, 77))
        .unwrap();
    drop(tx);
    let mut tx = p.begin(&mut w);
    assert_eq!(
        tx.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B),
        0
    );
    assert!(tx.get(KV, 15, ColumnSet::ALL).unwrap().is_none());
    assert_eq!(
        tx.get(KV, 20, ColumnSet::one(A)).unwrap().unwrap().int(A),
        20
    );
    assert_eq!(
        tx.get(KV, 40, ColumnSet::one(B)).unwrap().unwrap().int(B),
        0
    );
    assert_eq!(scan_keys(&mut tx, 0, 50), vec![0, 10, 20, 30, 40, 50]);
    tx.commit().unwrap();
}

/// Two workers: a writer's uncommitted update is never seen by a reader that commits after reading it
/// (no dirty reads among committed transactions), for protocols that block or abort the reader.
pub fn no_dirty_read<P: Protocol>() {
    let p: P = open_small();
    let mut w1 = p.worker(0, false);
    let mut w2 = p.worker(1, false);
    let mut t1 = p.begin(&mut w1);
    t1.update(KV, 50, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    // A reader that does not block either aborts now, or reads the committed value and then fails to
    // commit or is serialized before t1. It must never commit having read 1.
    let mut t2 = p.begin(&mut w2);
    let seen = t2
        .get(KV, 50, ColumnSet::one(B))
        .map(|r| r.map(|r| r.int(B)));
    match seen {
        Ok(Some(v)) => {
            assert_eq!(v, 0, "read an uncommitted write");
            // A reader that saw the old value may commit (it serializes before t1).
            let _ = t2.commit();
        }
        Ok(None) => panic!("key 50 vanished"),
        Err(a) => assert!(a.is_retryable(), "a conflict abort, got {a}"),
    }
    t1.commit().unwrap();
}

/// Tables that are read-only once loaded ([`TableSpec::read_only`]): reads and scans see the loaded
/// rows; an update, insert or delete of one fails with `InvalidData` (even where the key is absent, or
/// present for an insert), creates no index entry and changes nothing; a normal table in the same
/// transaction is read and written as usual.
pub fn read_only_tables<P: Protocol>() {
    let p = P::open(
        read_only_db(),
        &ProtocolConfig {
            threads: 2,
            ..ProtocolConfig::default()
        },
    );
    let mut w = p.worker(0, false);
    let loaded = || (0..100).step_by(10).collect::<Vec<u64>>();

    // Reads of the read-only table beside a read-modify-write of a normal one.
    let mut tx = p.begin(&mut w);
    let r = tx
        .get(RO, 30, ColumnSet::ALL)
        .unwrap()
        .expect("key 30 present");
    assert_eq!((r.int(A), r.int(B), r.str(S)), (30, 1, &b"r30"[..]));
    assert!(tx.get(RO, 35, ColumnSet::ALL).unwrap().is_none(), "key 35");
    assert!(tx.get(RO, 1000, ColumnSet::ALL).unwrap().is_none());
    let mut rows = Vec::new();
    tx.scan(RO, 15, 60, ColumnSet::ALL, |k, r| {
        rows.push((k, r.int(A), r.int(B), r.str(S).to_vec()));
        true
    })
    .unwrap();
    let want: Vec<_> = (20..=60)
        .step_by(10)
        .map(|k| (k, k as i64, 1, format!("r{k}").into_bytes()))
        .collect();
    assert_eq!(rows, want, "scan of the read-only table");
    let mut firsts = Vec::new();
    tx.scan(RO, 0, u64::MAX, ColumnSet::one(A), |k, _| {
        firsts.push(k);
        firsts.len() < 3
    })
    .unwrap();
    assert_eq!(
        firsts,
        vec![0, 10, 20],
        "scan stops when the visitor says so"
    );
    let b = tx.get(RO, 40, ColumnSet::one(B)).unwrap().unwrap().int(B);
    let got = tx.update(KV, 40, ColumnSet::one(B), |r| {
        r.set_int(B, r.int(B) + b + 4);
        r.int(B)
    });
    assert_eq!(
        got.unwrap(),
        Some(5),
        "a normal table in the same transaction"
    );
    tx.insert(KV, 45, |r| r.set_int(A, 45)).unwrap();
    assert_eq!(scan_keys_of(&mut tx, RO, 0, 100), loaded());
    tx.commit().unwrap();

    // Every kind of write is refused, after a write of the normal table in the same transaction.
    let entries = p.db().table(RO).key_count();
    #[track_caller]
    fn refused<R: std::fmt::Debug>(r: crate::txn::TxResult<R>, what: &str) {
        match r {
            Err(a) => assert_eq!(a.reason, AbortReason::InvalidData, "{what}: {a}"),
            Ok(v) => panic!("{what} of the read-only table succeeded: Ok({v:?})"),
        }
    }
    let mut tx = p.begin(&mut w);
    tx.update(KV, 50, ColumnSet::one(B), |r| r.set_int(B, 9))
        .unwrap();
    refused(
        tx.update(RO, 20, ColumnSet::one(B), |r| r.set_int(B, 99)),
        "update",
    );
    drop(tx);
    let mut tx = p.begin(&mut w);
    refused(
        tx.update(RO, 25, ColumnSet::one(B), |_| ()),
        "update of an absent key",
    );
    drop(tx);
    let mut tx = p.begin(&mut w);
    tx.update(KV, 50, ColumnSet::one(B), |r| r.set_int(B, 9))
        .unwrap();
    refused(tx.insert(RO, 25, |r| r.set_int(A, 25)), "insert");
    drop(tx);
    let mut tx = p.begin(&mut w);
    refused(tx.insert(RO, 20, |_| ()), "insert of a present key");
    drop(tx);
    let mut tx = p.begin(&mut w);
    tx.update(KV, 50, ColumnSet::one(B), |r| r.set_int(B, 9))
        .unwrap();
    refused(tx.delete(RO, 20), "delete");
    drop(tx);
    let mut tx = p.begin(&mut w);
    refused(tx.delete(RO, 25), "delete of an absent key");
    drop(tx);
    assert_eq!(
        p.db().table(RO).key_count(),
        entries,
        "a refused write created an index entry"
    );

    // Nothing changed in the read-only table; the committed write of the normal one stays.
    let mut tx = p.begin(&mut w);
    let r = tx
        .get(RO, 20, ColumnSet::ALL)
        .unwrap()
        .expect("key 20 kept");
    assert_eq!((r.int(A), r.int(B), r.str(S)), (20, 1, &b"r20"[..]));
    assert!(
        tx.get(RO, 25, ColumnSet::ALL).unwrap().is_none(),
        "key 25 not inserted"
    );
    assert_eq!(scan_keys_of(&mut tx, RO, 0, u64::MAX), loaded());
    assert_eq!(
        tx.get(KV, 40, ColumnSet::one(B)).unwrap().unwrap().int(B),
        5
    );
    assert_eq!(
        tx.get(KV, 45, ColumnSet::one(A)).unwrap().unwrap().int(A),
        45
    );
    tx.commit().unwrap();
}

/// Transaction ids stay unique when a worker id is reused: a worker that ends (is dropped) and a new
/// worker with the same id must not hand out an id twice, or a recorded history would merge two
/// transactions into one (the protocol contract lets an embedder reuse ids of ended workers).
pub fn worker_ids_go_on_after_an_ended_worker<P: Protocol>() {
    let p: P = open_small();
    let mut seen = std::collections::HashSet::new();
    for session in 0..3 {
        // Worker 1 comes and goes; worker 0 stays (its ids must not collide either).
        let mut kept = p.worker(0, false);
        let mut w = p.worker(1, false);
        for i in 0..3u64 {
            for w in [&mut w, &mut kept] {
                let mut tx = p.begin(w);
                let id = tx.id();
                tx.update(KV, 10 * i, ColumnSet::one(B), |r| r.set_int(B, session))
                    .unwrap();
                tx.commit().unwrap();
                assert!(
                    seen.insert(id),
                    "{}: transaction id {id:#x} handed out twice (session {session})",
                    P::INFO.name
                );
            }
        }
    }
}

/// A program that sets `b` of each key in `keys` (absent ones are declared and locked, and found
/// missing) and then, with `fail`, panics as a user's program with a bug would: see
/// [`a_panicking_program_holds_nothing`].
struct WriteB {
    keys: &'static [u64],
    b: i64,
    fail: bool,
    /// What the write of the first key found there.
    before: Option<i64>,
}

impl crate::txn::Program for WriteB {
    fn name(&self) -> &'static str {
        "write-b"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn declare(&self, _: usize, out: &mut Vec<crate::txn::Access>) {
        let b = ColumnSet::one(B);
        for &k in self.keys {
            out.push(crate::txn::Access::update(KV, k, b, b));
        }
    }
    fn run_piece<T: Tx>(&mut self, _: usize, tx: &mut T) -> crate::txn::TxResult<()> {
        let b = self.b;
        for (i, &k) in self.keys.iter().enumerate() {
            let mut before = None;
            tx.update(KV, k, ColumnSet::one(B), |r| {
                before = Some(r.int(B));
                r.set_int(B, b)
            })?;
            if i == 0 {
                self.before = before;
            }
        }
        if self.fail {
            // `resume_unwind` unwinds like a panic without running the panic hook, so a passing
            // test prints nothing.
            std::panic::resume_unwind(Box::new("the program panicked"));
        }
        Ok(())
    }
}

/// A program that panics while it runs (`Protocol::execute`, the embedding path) holds nothing
/// afterwards: the panic reaches the caller, and another worker's transaction on the same keys then
/// runs and commits — instead of waiting forever for locks, a queue entry or a grant the unwound
/// thread never gave back. Where aborts undo writes (every protocol but `nocc`), it also reads the
/// value from before the panicking write. Run with one key (a local transaction where partitions
/// exist), with two keys in two partitions (a queued multi-partition one), and with a panic inside
/// an interactive transaction (`Protocol::begin`: its drop must release what it holds).
pub fn a_panicking_program_holds_nothing<P: Protocol>() {
    let p = std::sync::Arc::new(open_small::<P>());
    // Keys 30 (present, partition 0 of 2) and 35 (absent, partition 1).
    // Rounds 0 and 1 panic in a program, round 2 in an interactive transaction (`Protocol::begin`).
    for (round, keys) in [&[30u64][..], &[30, 35][..], &[30][..]]
        .into_iter()
        .enumerate()
    {
        let b = 1 + round as i64;
        let mut w = p.worker(0, false);
        let mut boom = WriteB {
            keys,
            b: 99,
            fail: true,
            before: None,
        };
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if round < 2 {
                p.execute(&mut w, &mut boom)
            } else {
                let mut tx = p.begin(&mut w);
                crate::txn::Program::run_piece(&mut boom, 0, &mut tx)
            }
        }));
        assert!(
            unwound.is_err(),
            "{}: the program's panic reaches the caller",
            P::INFO.name
        );
        drop(w);
        // On another thread, so that a protocol that kept something held fails the test (after a
        // timeout) rather than hanging it; that thread is then left blocked.
        let (done, finished) = std::sync::mpsc::channel();
        let q = std::sync::Arc::clone(&p);
        std::thread::spawn(move || {
            let mut w = q.worker(1, false);
            let mut next = WriteB {
                keys,
                b,
                fail: false,
                before: None,
            };
            let r = q.execute(&mut w, &mut next);
            let _ = done.send((r, next.before));
        });
        let (r, before) = finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| {
                panic!(
                    "{}: a transaction on the keys {keys:?} the panicking program held did not \
                     finish in 20 s",
                    P::INFO.name
                )
            });
        r.unwrap_or_else(|a| panic!("{}: after the panic: {a}", P::INFO.name));
        if P::INFO.isolation != crate::protocols::Isolation::None {
            assert_eq!(
                before,
                Some(b - 1),
                "{}: the panicking program's write was undone",
                P::INFO.name
            );
        }
        // The panicking worker's id is free again, and its thread can go on.
        let mut w = p.worker(0, false);
        let mut tx = p.begin(&mut w);
        assert_eq!(
            tx.get(KV, 30, ColumnSet::one(B)).unwrap().unwrap().int(B),
            b,
            "{}",
            P::INFO.name
        );
        tx.commit().unwrap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::{Interactive, Isolation, ProtocolInfo};

    /// Runs the generic check `$check::<P>()` for every registered protocol `P` whose info passes
    /// `$which`, each to its end; fails naming every protocol that failed (each failure's own message
    /// is printed as it happens). Returns how many protocols ran it.
    macro_rules! for_every_protocol {
        ($check:ident, $which:expr) => {{
            struct Check;
            impl crate::protocols::ProtocolVisitor for Check {
                type Output = ();
                fn visit<P: crate::protocols::Protocol>(self) {
                    $check::<P>();
                }
            }
            let which: fn(&ProtocolInfo) -> bool = $which;
            let chosen: Vec<&ProtocolInfo> = crate::protocols::all()
                .into_iter()
                .filter(|i| which(i))
                .collect();
            let failed: Vec<&str> = chosen
                .iter()
                .filter(|i| {
                    std::panic::catch_unwind(|| {
                        crate::protocols::with_protocol(i.name, Check).unwrap()
                    })
                    .is_err()
                })
                .map(|i| i.name)
                .collect();
            assert!(
                failed.is_empty(),
                "{} fails for {}",
                stringify!($check),
                failed.join(", ")
            );
            chosen.len()
        }};
    }

    #[test]
    fn every_protocol_meets_the_single_threaded_tx_contract() {
        let n = for_every_protocol!(single_thread_semantics, |_| true);
        assert_eq!(n, crate::protocols::names().len());
    }

    #[test]
    fn every_protocol_refuses_writes_to_read_only_tables() {
        for_every_protocol!(read_only_tables, |_| true);
    }

    #[test]
    fn every_protocol_that_promises_isolation_undoes_aborted_writes() {
        let n = for_every_protocol!(abort_undoes_writes, |i| i.isolation != Isolation::None);
        assert_eq!(n, crate::protocols::names().len() - 1, "all but nocc");
    }

    #[test]
    fn every_concurrent_protocol_hides_uncommitted_writes() {
        let n = for_every_protocol!(no_dirty_read, |i| i.interactive == Interactive::Concurrent
            && i.isolation != Isolation::None);
        assert!(
            n >= 9,
            "2PL, Silo and the multi-version protocols at least: {n}"
        );
    }

    #[test]
    fn every_protocol_keeps_ids_unique_when_worker_ids_are_reused() {
        for_every_protocol!(worker_ids_go_on_after_an_ended_worker, |_| true);
    }

    #[test]
    fn every_protocol_releases_what_a_panicking_program_held() {
        for_every_protocol!(a_panicking_program_holds_nothing, |_| true);
    }
}
