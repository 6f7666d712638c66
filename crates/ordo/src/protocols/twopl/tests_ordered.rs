//! `2pl-ordered` and `locking-coarse`: checked contended histories; the point of ordered locking
//! (opposite program orders wait, never deadlock, nothing retries); a stale reconnaissance aborts
//! with `Validation` and releases everything; a range too wide to lock runs alone under the barrier,
//! and narrow ranges are phantom-safe key by key; units serialize `locking-coarse` (and
//! `2pl-ordered` when named at the fine grain); and the lock set's order and deduplication.

use super::lock_order::LockSet;
use super::ordered::{Coarse, Fine, Grain, LockingCoarse, Ordered, Ordered2pl};
use super::stripes::Stripes;
use crate::harness::Workload;
use crate::protocols::kit::exec::UnitLock;
use crate::protocols::kit::plan::{Mode, MAX_RANGE_KEYS};
use crate::protocols::kit::testkit::{
    checked_history, fresh_db, interactive_alongside_worker_loop,
    recon_mismatch_aborts_and_releases, Counted, Mixed, B, T,
};
use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::ColumnSet;
use crate::txn::{AbortReason, Access, ConflictUnits, Program, Tx, TxResult};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

macro_rules! for_both {
    ($($name:ident => $body:ident;)*) => {
        mod ordered_tests { $(#[test] fn $name() { super::$body::<super::Fine>(); })* }
        mod coarse_tests { $(#[test] fn $name() { super::$body::<super::Coarse>(); })* }
    };
}

for_both! {
    contended_histories_have_no_cycles => contended_histories_have_no_cycles;
    reconnaissance_mismatch_aborts_and_releases => reconnaissance_mismatch_aborts_and_releases;
    interactive_transactions_alongside_the_worker_loop => interactive_alongside;
    hot_records_in_opposite_orders_never_retry => hot_records_in_opposite_orders_never_retry;
    opposite_program_orders_wait_instead_of_deadlocking => opposite_program_orders_wait;
    a_wide_range_runs_alone_under_the_barrier => a_wide_range_runs_alone;
    narrow_and_wide_scans_see_no_phantoms => narrow_and_wide_scans_see_no_phantoms;
    each_piece_takes_its_prefix_of_the_order => each_piece_takes_its_prefix;
    a_piece_strays_past_its_prefix_and_aborts => a_piece_strays_past_its_prefix;
}

fn contended_histories_have_no_cycles<G: Grain>() {
    checked_history::<Ordered<G>>();
}

fn interactive_alongside<G: Grain>() {
    interactive_alongside_worker_loop::<Ordered<G>>();
}

/// Every record lock, stripe and the barrier are free.
fn nothing_held<G: Grain>(p: &Ordered<G>) -> bool {
    let t = p.db().table(T);
    let records = (0..64u64).all(|k| t.lookup(k).is_none_or(|rid| t.meta(rid).is_free()));
    records && p.stripes().all_free() && p.barrier().is_free()
}

fn reconnaissance_mismatch_aborts_and_releases<G: Grain>() {
    recon_mismatch_aborts_and_releases::<Ordered<G>>();
    // The testkit's check takes the barrier exclusive afterwards, which does not look at record
    // locks: look at them too.
    let p = Ordered::<G>::open(fresh_db(), &ProtocolConfig::default());
    let mut w = p.worker(0, false);
    let mut stale = Gated::new(&[0]);
    stale.stray = Some(20);
    let e = p.execute(&mut w, &mut stale).unwrap_err();
    assert_eq!(e.reason, AbortReason::Validation, "{e}");
    assert!(nothing_held(&p), "a lock was left behind");
    assert_eq!(
        b_of(&p, 0),
        0,
        "the write before the stray access was undone"
    );
}

/// The `b` of key `key` (an interactive transaction).
fn b_of<P: Protocol>(p: &P, key: u64) -> i64 {
    let mut w = p.worker(7, false);
    let mut tx = p.begin(&mut w);
    let b = tx
        .get(T, key, ColumnSet::ALL)
        .unwrap()
        .map_or(-1, |r| r.int(B));
    tx.commit().unwrap();
    b
}

/// Transactions that update the same 8 hot records in opposite orders on 4 threads: locking as
/// they go they would deadlock (the twopl suite's `deadlock_cycle`); ordered, they wait, and not a
/// single attempt is retried.
fn hot_records_in_opposite_orders_never_retry<G: Grain>() {
    let hot = Mixed {
        keys: 8,
        ops: 4,
        pointer_share: 0.0,
        affine: None,
    };
    let mut db = crate::storage::Database::new();
    hot.load(&mut db).unwrap();
    let p = Ordered::<G>::open(db, &ProtocolConfig::with_threads(4));
    let retried: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u32)
            .map(|t| {
                let (p, hot) = (&p, &hot);
                s.spawn(move || {
                    let mut worker = p.worker(t, false);
                    let mut src = Counted {
                        workload: hot,
                        gen: hot.generator(t, 11),
                        left: 3_000,
                        aborts: 0,
                    };
                    p.run_worker(&mut worker, &mut src);
                    src.aborts
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(retried, 0);
    assert!(nothing_held(&p));
}

/// Updates `keys` in the order given, in one piece, grouping keys by `units`; with a gate, it says
/// so on `held` after its first update (holding all its locks) and waits for `go` before going on.
struct Gated {
    keys: Vec<u64>,
    units: Option<ConflictUnits>,
    gate: Option<(Sender<()>, Receiver<()>)>,
    /// Also scan `.0..=.1` first (declared), summing `b` into `sum`.
    scan: Option<(u64, u64)>,
    /// Touch this key too, undeclared (in the real run only): a stale plan.
    stray: Option<u64>,
    /// The `b` each update found.
    seen: Vec<i64>,
    sum: i64,
}

impl Gated {
    fn new(keys: &[u64]) -> Self {
        Gated {
            keys: keys.to_vec(),
            units: None,
            gate: None,
            scan: None,
            stray: None,
            seen: Vec::new(),
            sum: 0,
        }
    }
}

impl Program for Gated {
    fn name(&self) -> &'static str {
        "Gated"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        if let Some((lo, hi)) = self.scan {
            out.push(Access::scan(T, lo, hi, ColumnSet::ALL));
        }
        for &k in &self.keys {
            out.push(Access::update(T, k, ColumnSet::ALL, ColumnSet::ALL));
        }
    }
    fn conflict_units(&self) -> Option<ConflictUnits> {
        self.units
    }
    fn run_piece<X: Tx>(&mut self, _: usize, tx: &mut X) -> TxResult<()> {
        self.seen.clear();
        self.sum = 0;
        if let Some((lo, hi)) = self.scan {
            let mut sum = 0;
            tx.scan(T, lo, hi, ColumnSet::ALL, |_, r| {
                sum += r.int(B);
                true
            })?;
            self.sum = sum;
        }
        for (i, &k) in self.keys.clone().iter().enumerate() {
            let b = tx.update(T, k, ColumnSet::ALL, |r| {
                let b = r.int(B);
                r.set_int(B, b + 1);
                b
            })?;
            self.seen.push(b.expect("a loaded key"));
            if i == 0 && tx.id() != 0 {
                if let Some((held, go)) = &self.gate {
                    held.send(()).unwrap();
                    go.recv().unwrap();
                }
            }
        }
        if let Some(k) = self.stray.filter(|_| tx.id() != 0) {
            tx.update(T, k, ColumnSet::ALL, |r| r.set_int(B, 99))?;
        }
        Ok(())
    }
}

/// A test program that can stop at a gate: it says so on the first channel and waits on the
/// second before going on.
trait Gate: Program + Send {
    fn set_gate(&mut self, held: Sender<()>, go: Receiver<()>);
}

impl Gate for Gated {
    fn set_gate(&mut self, held: Sender<()>, go: Receiver<()>) {
        self.gate = Some((held, go));
    }
}

impl Gate for Stepped {
    fn set_gate(&mut self, held: Sender<()>, go: Receiver<()>) {
        self.gate = Some((held, go));
    }
}

/// Runs `first` (gated) on one thread until it reaches its gate, then `second` on another, and
/// says whether `second` waited for `first` (it did not finish while `first` was held at its gate,
/// 150 ms) — also checking that both commit, and returning `second` for a look at what it saw.
fn second_waits_for_first<P: Protocol, G1: Gate, G2: Program + Send>(
    p: &P,
    mut first: G1,
    mut second: G2,
) -> (bool, G2) {
    let (held_tx, held) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    first.set_gate(held_tx, go_rx);
    let waited = std::thread::scope(|s| {
        let a = s.spawn(|| {
            let mut w = p.worker(0, false);
            p.execute(&mut w, &mut first).expect("the first commits");
        });
        held.recv().unwrap();
        let (done_tx, done_rx) = mpsc::channel();
        let second = &mut second;
        let b = s.spawn(move || {
            let mut w = p.worker(1, false);
            p.execute(&mut w, second).expect("the second commits");
            done_tx.send(()).unwrap();
        });
        let waited = done_rx.recv_timeout(Duration::from_millis(150)).is_err();
        go.send(()).unwrap();
        a.join().unwrap();
        b.join().unwrap();
        waited
    });
    (waited, second)
}

/// T1 updates 1 then 2, T2 updates 2 then 1. T1, gated after its first update, already holds key
/// 2's lock (its one piece needs both), so T2 waits at the first lock in the order, key
/// 1, holding nothing — not at key 2 holding key 1's, which is how locking as you go deadlocks.
/// Both commit, T2 after T1.
fn opposite_program_orders_wait<G: Grain>() {
    let p = Ordered::<G>::open(fresh_db(), &ProtocolConfig::with_threads(2));
    let (waited, t2) = second_waits_for_first(&p, Gated::new(&[1, 2]), Gated::new(&[2, 1]));
    assert!(waited, "T2 ran while T1 held its locks");
    assert_eq!(t2.seen, vec![1, 1], "T2 saw both of T1's writes");
    assert!(nothing_held(&p));
}

/// Updates one key per piece, in the order given; with a gate, it says so on `held` after its
/// first piece and waits for `go` before the next. `stray`: its first piece also updates that key,
/// which a later piece declared (a program that broke the one-piece-one-declaration contract).
struct Stepped {
    keys: Vec<u64>,
    gate: Option<(Sender<()>, Receiver<()>)>,
    stray: Option<u64>,
}

impl Stepped {
    fn new(keys: &[u64]) -> Self {
        Stepped {
            keys: keys.to_vec(),
            gate: None,
            stray: None,
        }
    }
}

impl Program for Stepped {
    fn name(&self) -> &'static str {
        "Stepped"
    }
    fn pieces(&self) -> usize {
        self.keys.len()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        out.push(Access::update(
            T,
            self.keys[piece],
            ColumnSet::ALL,
            ColumnSet::ALL,
        ));
    }
    /// Every key is an input: no reconnaissance pass.
    fn declaration_depends_on(&self, _: usize, _: &mut Vec<usize>) {}
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        tx.update(T, self.keys[piece], ColumnSet::ALL, |r| {
            r.set_int(B, r.int(B) + 1)
        })?;
        if piece == 0 && tx.id() != 0 {
            if let Some(k) = self.stray {
                tx.update(T, k, ColumnSet::ALL, |r| r.set_int(B, r.int(B) + 1))?;
            }
            if let Some((held, go)) = &self.gate {
                held.send(()).unwrap();
                go.recv().unwrap();
            }
        }
        Ok(())
    }
}

/// The paper's Locking takes a record's lock just before updating it (§2.3), which is what Fig. 1
/// measures. T1 updates 1 then 9, one piece each, up the order: held after its first piece, it
/// holds key 1 only, so T2 on key 9 runs at once, and T2 on key 1 waits. T1 updating 9 then 1 (down
/// the order) needs key 1 before key 9, so its first piece already holds both.
fn each_piece_takes_its_prefix<G: Grain>() {
    let p = Ordered::<G>::open(fresh_db(), &ProtocolConfig::with_threads(2));
    assert!(
        !second_waits_for_first(&p, Stepped::new(&[1, 9]), Stepped::new(&[9])).0,
        "T1's first piece held key 9's lock before its second piece needed it"
    );
    assert!(second_waits_for_first(&p, Stepped::new(&[1, 9]), Stepped::new(&[1])).0);
    assert!(
        second_waits_for_first(&p, Stepped::new(&[9, 1]), Stepped::new(&[1])).0,
        "a piece down the order takes the locks before its own"
    );
    assert_eq!(b_of(&p, 1), 5);
    assert_eq!(b_of(&p, 9), 4);
    assert!(nothing_held(&p));
}

/// A piece that touches a key a *later* piece declared would run without that key's lock: its
/// cover is only what is held by then, so the touch aborts with `Validation` and releases all.
fn a_piece_strays_past_its_prefix<G: Grain>() {
    let p = Ordered::<G>::open(fresh_db(), &ProtocolConfig::default());
    let mut t = Stepped::new(&[1, 9]);
    t.stray = Some(9);
    let mut w = p.worker(0, false);
    let err = p.execute(&mut w, &mut t).unwrap_err();
    assert_eq!(err.reason, AbortReason::Validation, "{err}");
    assert_eq!(b_of(&p, 1), 0, "rolled back");
    assert!(nothing_held(&p));
}

/// A scan of the whole table cannot be locked key by key: it waits for a transaction holding
/// locks, then runs alone — and a point transaction waits for it in turn.
fn a_wide_range_runs_alone<G: Grain>() {
    let p = Ordered::<G>::open(fresh_db(), &ProtocolConfig::with_threads(2));
    let mut wide = Gated::new(&[0]);
    wide.scan = Some((0, u64::MAX));
    let (waited, wide) = second_waits_for_first(&p, Gated::new(&[5]), wide);
    assert!(waited, "the wide scan ran beside a lock holder");
    assert_eq!(wide.sum, 1, "it saw the holder's write");
    let mut wide = Gated::new(&[0]);
    wide.scan = Some((0, u64::MAX));
    let (waited, point) = second_waits_for_first(&p, wide, Gated::new(&[9]));
    assert!(waited, "a point transaction ran beside the wide scan");
    assert_eq!(point.seen, vec![0]);
    assert!(nothing_held(&p));
}

/// Toggles key `k` (in 32..64: inserted with `b = 1` and key 0's `b` lowered by one, or deleted and
/// key 0's `b` raised back), so that the sum of `b` over every row stays 0; or sums every row over
/// a range, narrow (`0..=63`, locked key by key, present or absent) or wide (the whole table: the
/// barrier), and checks the sum. A scan that missed an insert but saw its change to key 0 (a
/// phantom) would see -1.
enum Phantom {
    Toggle(u64),
    Sum { hi: u64 },
}

impl Program for Phantom {
    fn name(&self) -> &'static str {
        "Phantom"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        match *self {
            Phantom::Toggle(k) => {
                out.push(Access::update(T, 0, ColumnSet::ALL, ColumnSet::ALL));
                out.push(Access::insert(T, k));
            }
            Phantom::Sum { hi } => out.push(Access::scan(T, 0, hi, ColumnSet::ALL)),
        }
    }
    fn run_piece<X: Tx>(&mut self, _: usize, tx: &mut X) -> TxResult<()> {
        match *self {
            Phantom::Toggle(k) => {
                let delta = if tx.delete(T, k)? {
                    1
                } else {
                    tx.insert(T, k, |r| r.set_int(B, 1))?;
                    -1
                };
                tx.update(T, 0, ColumnSet::ALL, |r| r.set_int(B, r.int(B) + delta))?;
            }
            Phantom::Sum { hi } => {
                let mut sum = 0;
                tx.scan(T, 0, hi, ColumnSet::ALL, |_, r| {
                    sum += r.int(B);
                    true
                })?;
                assert_eq!(sum, 0, "a scan of 0..={hi} saw a phantom");
            }
        }
        Ok(())
    }
}

/// 4 threads toggle keys 32..64 into and out of existence while others sum every row over a narrow
/// range (locked key by key) and the whole table (the barrier): every sum is 0, and the recorded
/// history (predicate reads included) is serializable.
fn narrow_and_wide_scans_see_no_phantoms<G: Grain>() {
    const { assert!(64 < MAX_RANGE_KEYS) };
    let p = Ordered::<G>::open(fresh_db(), &ProtocolConfig::with_threads(4));
    let next = AtomicU64::new(0);
    let txns = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u32)
            .map(|t| {
                let (p, next) = (&p, &next);
                s.spawn(move || {
                    let mut w = p.worker(t, true);
                    for i in 0..600u64 {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        let mut prog = match (t as u64 + i) % 6 {
                            0 => Phantom::Sum { hi: 63 },
                            1 if i % 4 == 1 => Phantom::Sum { hi: u64::MAX },
                            _ => Phantom::Toggle(32 + n * 7 % 32),
                        };
                        loop {
                            match p.execute(&mut w, &mut prog) {
                                Ok(()) => break,
                                Err(a) if a.is_retryable() => continue,
                                Err(a) => panic!("{a}"),
                            }
                        }
                    }
                    Ordered::<G>::recorder(&mut w).take()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let report = crate::check::check(&crate::check::History { txns });
    assert_eq!(report.committed, 2_400);
    assert!(report.is_serializable(), "{report}");
    assert!(report.anomalies.is_empty(), "{report}");
    assert!(nothing_held(&p));
}

/// Keys of `T` in units of 16, at the coarse grain only (as TPC-C's Stock by warehouse).
fn coarse16(table: u32, key: u64, coarse: bool) -> Option<u64> {
    (table == T && coarse).then_some(key / 16)
}

/// Keys of `T` in units of 16 at both grains (as TPC-C's district-keyed tables).
fn both16(table: u32, key: u64, _coarse: bool) -> Option<u64> {
    (table == T).then_some(key / 16)
}

fn in_units(keys: &[u64], units: ConflictUnits) -> Gated {
    let mut g = Gated::new(keys);
    g.units = Some(units);
    g
}

/// Two transactions on different keys of one coarse unit: `locking-coarse` serializes them (the
/// second waits for the first's unit lock), `2pl-ordered` runs them side by side; keys of different
/// units never wait.
#[test]
fn locking_coarse_serializes_keys_of_one_unit_where_2pl_ordered_does_not() {
    let coarse = LockingCoarse::open(fresh_db(), &ProtocolConfig::with_threads(2));
    let fine = Ordered2pl::open(fresh_db(), &ProtocolConfig::with_threads(2));
    let (one, two) = (in_units(&[1], coarse16), in_units(&[2], coarse16));
    assert!(second_waits_for_first(&coarse, one, two).0);
    let (one, two) = (in_units(&[1], coarse16), in_units(&[2], coarse16));
    assert!(!second_waits_for_first(&fine, one, two).0);
    // Different coarse units (0 and 1): no wait under either.
    assert!(
        !second_waits_for_first(&coarse, in_units(&[1], coarse16), in_units(&[17], coarse16)).0
    );
    assert!(nothing_held(&coarse) && nothing_held(&fine));
}

/// Units a program names at the fine grain are honoured by `2pl-ordered` too (as PWV does).
#[test]
fn two_pl_ordered_honours_fine_units() {
    let fine = Ordered2pl::open(fresh_db(), &ProtocolConfig::with_threads(2));
    assert!(second_waits_for_first(&fine, in_units(&[1], both16), in_units(&[2], both16)).0);
    assert!(!second_waits_for_first(&fine, in_units(&[1], both16), in_units(&[20], both16)).0);
    assert!(nothing_held(&fine));
}

/// Under a unit lock the program may touch any key of the unit, declared or not (the unit holds
/// them all); a key of another unit is outside the cover: `Validation`.
#[test]
fn a_unit_covers_its_undeclared_keys() {
    let p = LockingCoarse::open(fresh_db(), &ProtocolConfig::default());
    let mut w = p.worker(0, false);
    let mut inside = in_units(&[1], coarse16);
    inside.stray = Some(9);
    p.execute(&mut w, &mut inside)
        .expect("key 9 is in key 1's unit");
    assert_eq!(b_of(&p, 9), 99);
    let mut outside = in_units(&[1], coarse16);
    outside.stray = Some(20);
    let e = p.execute(&mut w, &mut outside).unwrap_err();
    assert_eq!(e.reason, AbortReason::Validation);
    assert_eq!(b_of(&p, 20), 0);
    assert!(nothing_held(&p));
}

fn build(
    accesses: &[Access],
    units: Option<ConflictUnits>,
    coarse: bool,
    stripes: &Stripes,
) -> (LockSet, bool) {
    let db = fresh_db::<()>();
    let mut set = LockSet::default();
    let wide = set.build(&db, accesses, units, coarse, stripes).unwrap();
    (set, wide)
}

/// Records come out sorted by (table, key), each once in its strongest mode, absent keys included;
/// ranges key by key, or one unit when both ends share it; too wide a range says so.
#[test]
fn lock_sets_are_sorted_deduplicated_and_strongest() {
    let all = ColumnSet::ALL;
    let accesses = [
        Access::read(T, 9, all),
        Access::update(T, 3, all, all),
        Access::read(T, 3, all),
        Access::scan(T, 7, 10, all),
        Access::insert(T, 40), // absent: its slot is created
    ];
    let stripes = Stripes::default();
    let (set, wide) = build(&accesses, None, false, &stripes);
    assert!(!wide);
    let got: Vec<_> = set.records.iter().map(|l| (l.key, l.mode)).collect();
    use Mode::{Exclusive as X, Shared as S};
    assert_eq!(got, vec![(3, X), (7, S), (8, S), (9, S), (10, S), (40, X)]);
    assert!(set.units.is_empty() && set.stripes.is_empty());

    // With units: keys 3 and 9 are unit 0, 40 unit 2; the scan 7..=10 lies in unit 0.
    let (set, _) = build(&accesses, Some(both16 as ConflictUnits), false, &stripes);
    assert!(set.records.is_empty());
    assert_eq!(
        set.units,
        vec![
            UnitLock {
                table: T,
                unit: 0,
                mode: X
            },
            UnitLock {
                table: T,
                unit: 2,
                mode: X
            }
        ]
    );
    assert_eq!(set.stripes.len(), 2);
    assert!(set.stripes.windows(2).all(|w| w[0].0 < w[1].0));
    // A range across units, narrow: each unit it touches.
    let (set, _) = build(
        &[Access::scan(T, 10, 40, all)],
        Some(both16 as ConflictUnits),
        false,
        &stripes,
    );
    let units: Vec<_> = set.units.iter().map(|u| (u.unit, u.mode)).collect();
    assert_eq!(units, vec![(0, S), (1, S), (2, S)]);
    // Only at the coarse grain: the fine set locks records.
    let (set, _) = build(&accesses, Some(coarse16 as ConflictUnits), false, &stripes);
    assert_eq!(set.records.len(), 6);

    // Too wide, without units or across them; one unit's worth of a wide range is fine.
    let wide_scan = [Access::scan(T, 0, MAX_RANGE_KEYS, all)];
    assert!(build(&wide_scan, None, false, &stripes).1);
    assert!(build(&wide_scan, Some(both16 as ConflictUnits), false, &stripes).1);
    let in_one: ConflictUnits = |_, _, _| Some(0);
    assert!(!build(&wide_scan, Some(in_one), false, &stripes).1);
}

/// Two units that share a stripe take it once, in the stronger mode: a transaction never waits
/// for itself.
#[test]
fn units_sharing_a_stripe_take_it_once() {
    let one = Stripes::new(1);
    let all = ColumnSet::ALL;
    let accesses = [Access::read(T, 1, all), Access::update(T, 20, all, all)];
    let (set, _) = build(&accesses, Some(both16 as ConflictUnits), false, &one);
    assert_eq!(set.units.len(), 2);
    assert_eq!(set.stripes, vec![(0, Mode::Exclusive)]);
    let db = fresh_db();
    let held = set.acquire(&db, &one);
    assert!(!one.all_free());
    drop(held);
    assert!(one.all_free());
}
