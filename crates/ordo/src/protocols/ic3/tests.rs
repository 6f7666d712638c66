//! `ic3` and `ic3-comm`: checked contended histories (also with every piece claiming to commute,
//! which it does not); interactive transactions beside the worker loop; exact schedules — a
//! dependency holds a transaction's conflicting piece back until the piece it depends on is done,
//! a cascading abort leaves no trace and the retry commits, commuting pieces wait for each other
//! under `ic3` and not under `ic3-comm`; a piece that strays outside its declaration aborts with
//! `Validation`; a range too wide to lock runs alone; nothing is left on any access list.

use super::{Comm, Ic3, Plain, Variant};
use crate::harness::{verify, VerifyConfig, Workload};
use crate::protocols::kit::testkit::{
    checked_history, contended, interactive_alongside_worker_loop, MixProgram, Mixed, A, B, T,
};
use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::{Column, ColumnSet, ColumnType, Database, LoadError, Schema, TableSpec};
use crate::txn::{Abort, AbortReason, Access, Program, Tx, TxResult};
use parking_lot::Mutex;
use std::sync::mpsc;
use std::time::Duration;

macro_rules! for_both {
    ($($name:ident => $body:ident;)*) => {
        mod plain { $(#[test] fn $name() { super::$body::<super::Plain>(); })* }
        mod comm { $(#[test] fn $name() { super::$body::<super::Comm>(); })* }
    };
}

for_both! {
    contended_histories_have_no_cycles => contended_histories_have_no_cycles;
    interactive_transactions_alongside_the_worker_loop => interactive_alongside;
    a_dependency_holds_the_conflicting_piece_back => a_dependency_holds_the_conflicting_piece_back;
    a_cascading_abort_leaves_no_trace_and_the_retry_commits => a_cascading_abort;
    a_stray_access_aborts_with_validation_and_undoes => a_stray_access_aborts;
    a_wide_range_runs_alone => a_wide_range_runs_alone;
}

/// The second table of [`two_tables`].
const U: u32 = 1;

/// Whether no access list holds anything and every piece lock is free.
fn nothing_held<V: Variant>(p: &Ic3<V>) -> bool {
    p.db().tables().iter().all(|t| {
        (0..t.key_count() as u64 * 2 + 64).all(|k| {
            t.lookup(k).is_none_or(|rid| {
                let m = t.meta(rid);
                m.lock.is_free() && m.list.lock().is_empty()
            })
        })
    })
}

fn contended_histories_have_no_cycles<V: Variant>() {
    checked_history::<Ic3<V>>();
}

fn interactive_alongside<V: Variant>() {
    interactive_alongside_worker_loop::<Ic3<V>>();
}

/// A [`MixProgram`] whose every piece claims its writes commute (they do not: `b ← 3b + tag`).
#[derive(Clone, Debug, Default)]
struct Liar(MixProgram);

impl Program for Liar {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn pieces(&self) -> usize {
        self.0.pieces()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        self.0.declare(piece, out)
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        self.0.depends_on(piece, out)
    }
    fn commutes(&self, _piece: usize) -> bool {
        true
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        self.0.run_piece(piece, tx)
    }
}

/// [`contended`], every piece a [`Liar`].
struct Lying(Mixed);

impl Workload for Lying {
    type Program = Liar;
    type Gen = <Mixed as Workload>::Gen;
    fn name(&self) -> &'static str {
        "lying"
    }
    fn params(&self) -> serde_json::Value {
        self.0.params()
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        self.0.load(db)
    }
    fn generator(&self, thread: u32, seed: u64) -> Self::Gen {
        self.0.generator(thread, seed)
    }
    fn program(&self) -> Liar {
        Liar::default()
    }
    fn next(&self, g: &mut Self::Gen, p: &mut Liar) {
        self.0.next(g, &mut p.0)
    }
}

/// A wrong promise of commutativity costs `ic3-comm` aborts, never serializability: commuting
/// writers still commit in their order of access.
#[test]
fn a_wrong_commutativity_promise_stays_serializable() {
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(4),
        txns: 10_000,
        seed: 5,
        prefetch: true,
    };
    let v = verify::run::<Ic3<Comm>, Lying>(&Lying(contended()), &cfg).unwrap();
    assert_eq!(v.report.committed, 10_000);
    assert!(v.report.anomalies.is_empty(), "{}", v.report);
    assert!(v.report.edges > 10_000, "too few dependencies");
}

/// Two tables `kv` (`T`) and `kv2` (`U`) of 16 rows `k → (a = k, b = 0)`.
fn two_tables() -> Database<super::PipeRecord> {
    let mut db = Database::new();
    for name in ["kv", "kv2"] {
        let schema = Schema::new(vec![
            Column::new("a", ColumnType::Int),
            Column::new("b", ColumnType::Int),
        ])
        .unwrap();
        let t = db
            .create_table(TableSpec::new(name, schema).ordered(4))
            .unwrap();
        let mut scratch = Vec::new();
        for k in 0..16u64 {
            db.table(t)
                .load(k, &mut scratch, |r| {
                    r.set_int(A, k as i64);
                    r.set_int(B, 0);
                    Ok(())
                })
                .unwrap();
        }
    }
    db
}

/// One step of a [`Scripted`] program.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// `b += 1` of `(table, key)`.
    Inc(u32, u64),
    /// Read `b` of `(table, key)` into the log.
    Read(u32, u64),
}

/// A program of one-step pieces that logs each piece as it runs; piece `gate` (if any) first
/// tells `entered` it is in, then waits for `go`; `fail` makes that gated piece abort afterwards.
struct Scripted {
    name: &'static str,
    steps: Vec<Step>,
    commutes: bool,
    gate: Option<(usize, mpsc::Sender<()>, mpsc::Receiver<()>)>,
    fail: bool,
    log: &'static Mutex<Vec<String>>,
}

impl Program for Scripted {
    fn name(&self) -> &'static str {
        self.name
    }
    fn pieces(&self) -> usize {
        self.steps.len()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        out.push(match self.steps[piece] {
            Step::Inc(t, k) => Access::update(t, k, ColumnSet::ALL, ColumnSet::ALL),
            Step::Read(t, k) => Access::read(t, k, ColumnSet::ALL),
        });
    }
    fn depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn commutes(&self, _piece: usize) -> bool {
        self.commutes
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        let gated = matches!(&self.gate, Some((g, _, _)) if *g == piece);
        if gated {
            let (_, entered, go) = self.gate.as_ref().unwrap();
            entered.send(()).unwrap();
            go.recv().unwrap();
        }
        match self.steps[piece] {
            Step::Inc(t, k) => {
                tx.update(t, k, ColumnSet::ALL, |r| r.set_int(B, r.int(B) + 1))?;
            }
            Step::Read(t, k) => {
                let b = tx.get(t, k, ColumnSet::ALL)?.unwrap().int(B);
                self.log.lock().push(format!("{} read {b}", self.name));
            }
        }
        self.log.lock().push(format!("{}.{piece}", self.name));
        if gated && self.fail {
            return Err(Abort::user("the script aborts here"));
        }
        Ok(())
    }
}

fn leak_log() -> &'static Mutex<Vec<String>> {
    Box::leak(Box::new(Mutex::new(Vec::new())))
}

/// `b` of `(table, key)`, read alone.
fn b_of<V: Variant>(p: &Ic3<V>, table: u32, key: u64) -> i64 {
    let mut w = p.worker(7, false);
    let mut tx = p.begin(&mut w);
    let b = tx.get(table, key, ColumnSet::ALL).unwrap().unwrap().int(B);
    tx.commit().unwrap();
    b
}

/// Runs `first` on a thread until its gated piece is entered, then `second` on another; after
/// `pause`, records what `second` logged so far, opens the gate and lets both end. Returns the
/// log as it stood then, the whole log, and the two outcomes.
#[allow(clippy::type_complexity)]
fn gated_pair<V: Variant>(
    p: &Ic3<V>,
    mut first: Scripted,
    mut second: Scripted,
    log: &'static Mutex<Vec<String>>,
    retry_second: bool,
) -> (Vec<String>, Vec<String>, TxResult<()>, Vec<TxResult<()>>) {
    let (entered_tx, entered) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    first.gate = Some((first.gate.take().unwrap().0, entered_tx, go_rx));
    std::thread::scope(|s| {
        let a = s.spawn(move || {
            let mut w = p.worker(0, true);
            p.execute(&mut w, &mut first)
        });
        entered
            .recv_timeout(Duration::from_secs(10))
            .expect("the first reaches its gate");
        let b = s.spawn(move || {
            let mut w = p.worker(1, true);
            let mut outcomes = vec![p.execute(&mut w, &mut second)];
            while retry_second && outcomes.last().unwrap().is_err() {
                outcomes.push(p.execute(&mut w, &mut second));
            }
            outcomes
        });
        std::thread::sleep(Duration::from_millis(200));
        let then = log.lock().clone();
        go.send(()).unwrap();
        let ra = a.join().unwrap();
        let rb = b.join().unwrap();
        (then, log.lock().clone(), ra, rb)
    })
}

/// T1 updates x then (gated) y; T2 updates x then z. T2 depends on T1 (it overwrote T1's x), and
/// its piece on z conflicts with T1's on y (same table): it waits until T1's piece is done,
/// though it needs none of T1's locks — and commits after T1.
fn a_dependency_holds_the_conflicting_piece_back<V: Variant>() {
    let p = Ic3::<V>::open(two_tables(), &ProtocolConfig::with_threads(2));
    let log = leak_log();
    let t1 = Scripted {
        name: "T1",
        steps: vec![Step::Inc(T, 1), Step::Inc(T, 2)],
        commutes: false,
        gate: Some((1, mpsc::channel().0, mpsc::channel().1)),
        fail: false,
        log,
    };
    let t2 = Scripted {
        name: "T2",
        steps: vec![Step::Inc(T, 1), Step::Inc(T, 3)],
        commutes: false,
        gate: None,
        fail: false,
        log,
    };
    let (then, all, r1, r2) = gated_pair(&p, t1, t2, log, false);
    r1.unwrap();
    assert!(r2.iter().all(|r| r.is_ok()));
    assert!(
        !then.iter().any(|e| e == "T2.1"),
        "T2's conflicting piece ran while T1's was unfinished: {then:?}"
    );
    let pos = |e: &str| all.iter().position(|x| x == e).unwrap();
    assert!(pos("T1.1") < pos("T2.1"), "{all:?}");
    assert_eq!(b_of(&p, T, 1), 2);
    assert!(nothing_held(&p));
}

/// T1 updates x, then (gated) a record of another table, and aborts there. T2 reads x — T1's
/// uncommitted write, since T1's unfinished piece conflicts with none of T2's — then updates w,
/// and waits at commit for T1. T1 aborts, so T2 aborts (`Cascade`), leaving no trace; its retry
/// reads the old x and commits.
fn a_cascading_abort<V: Variant>() {
    let p = Ic3::<V>::open(two_tables(), &ProtocolConfig::with_threads(2));
    let log = leak_log();
    let t1 = Scripted {
        name: "T1",
        steps: vec![Step::Inc(T, 1), Step::Inc(U, 1)],
        commutes: false,
        gate: Some((1, mpsc::channel().0, mpsc::channel().1)),
        fail: true,
        log,
    };
    let t2 = Scripted {
        name: "T2",
        steps: vec![Step::Read(T, 1), Step::Inc(T, 5)],
        commutes: false,
        gate: None,
        fail: false,
        log,
    };
    let (then, all, r1, r2) = gated_pair(&p, t1, t2, log, true);
    assert_eq!(r1.unwrap_err().reason, AbortReason::User);
    assert_eq!(r2.len(), 2, "one cascading abort, then a commit: {r2:?}");
    assert_eq!(r2[0].as_ref().unwrap_err().reason, AbortReason::Cascade);
    assert!(r2[1].is_ok());
    assert!(
        then.contains(&"T2 read 1".to_string()) && then.contains(&"T2.1".to_string()),
        "T2 saw T1's write and ran on: {then:?}"
    );
    assert_eq!(all.last().unwrap(), "T2.1");
    assert!(all.contains(&"T2 read 0".to_string()), "{all:?}");
    assert_eq!(b_of(&p, T, 1), 0, "T1's write was undone");
    assert_eq!(b_of(&p, U, 1), 0);
    assert_eq!(b_of(&p, T, 5), 1, "T2's first attempt left no trace");
    assert!(nothing_held(&p));
}

/// T1 increments x, then (gated) y; T2 increments x, then z — all commuting increments. Under
/// `ic3`, T2 may not touch x until T1's conflicting piece on y is done; under `ic3-comm` its
/// pieces run at once (its commit still follows T1's).
fn commuting_pieces<V: Variant>() -> (Vec<String>, Vec<String>) {
    let p = Ic3::<V>::open(two_tables(), &ProtocolConfig::with_threads(2));
    let log = leak_log();
    let t1 = Scripted {
        name: "T1",
        steps: vec![Step::Inc(T, 1), Step::Inc(T, 2)],
        commutes: true,
        gate: Some((1, mpsc::channel().0, mpsc::channel().1)),
        fail: false,
        log,
    };
    let t2 = Scripted {
        name: "T2",
        steps: vec![Step::Inc(T, 1), Step::Inc(T, 3)],
        commutes: true,
        gate: None,
        fail: false,
        log,
    };
    let (then, all, r1, r2) = gated_pair(&p, t1, t2, log, false);
    r1.unwrap();
    assert!(r2.iter().all(|r| r.is_ok()));
    assert_eq!(b_of(&p, T, 1), 2);
    assert!(nothing_held(&p));
    (then, all)
}

#[test]
fn commuting_pieces_wait_for_each_other_under_ic3_only() {
    let (then, _) = commuting_pieces::<Plain>();
    assert!(!then.iter().any(|e| e.starts_with("T2")), "ic3: {then:?}");
    let (then, all) = commuting_pieces::<Comm>();
    assert!(
        then.contains(&"T2.0".to_string()) && then.contains(&"T2.1".to_string()),
        "ic3-comm: {then:?}"
    );
    assert!(all.iter().position(|e| e == "T2.1") < all.iter().position(|e| e == "T1.1"));
}

/// Writes key 1, then touches key 9, which its piece did not declare.
struct Stray;

impl Program for Stray {
    fn name(&self) -> &'static str {
        "Stray"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn declare(&self, _piece: usize, out: &mut Vec<Access>) {
        out.push(Access::update(T, 1, ColumnSet::ALL, ColumnSet::ALL));
    }
    fn run_piece<X: Tx>(&mut self, _piece: usize, tx: &mut X) -> TxResult<()> {
        tx.update(T, 1, ColumnSet::ALL, |r| r.set_int(B, 7))?;
        tx.update(T, 9, ColumnSet::ALL, |r| r.set_int(B, 7))?;
        Ok(())
    }
}

fn a_stray_access_aborts<V: Variant>() {
    let p = Ic3::<V>::open(two_tables(), &ProtocolConfig::default());
    let mut w = p.worker(0, false);
    let e = p.execute(&mut w, &mut Stray).unwrap_err();
    assert_eq!(e.reason, AbortReason::Validation, "{e}");
    assert_eq!(
        b_of(&p, T, 1),
        0,
        "the write before the stray access was undone"
    );
    assert!(nothing_held(&p));
}

/// Scans all of `kv2`'s key space (too wide to lock key by key), then updates key 0 of `kv`.
struct Wide;

impl Program for Wide {
    fn name(&self) -> &'static str {
        "Wide"
    }
    fn pieces(&self) -> usize {
        2
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        out.push(if piece == 0 {
            Access::scan(U, 0, u64::MAX >> 1, ColumnSet::ALL)
        } else {
            Access::update(T, 0, ColumnSet::ALL, ColumnSet::ALL)
        });
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        if piece == 0 {
            let mut n = 0;
            tx.scan(U, 0, u64::MAX >> 1, ColumnSet::ALL, |_, _| {
                n += 1;
                true
            })?;
            assert_eq!(n, 16);
        } else {
            tx.update(T, 0, ColumnSet::ALL, |r| r.set_int(B, r.int(B) + 1))?;
        }
        Ok(())
    }
}

fn a_wide_range_runs_alone<V: Variant>() {
    let p = Ic3::<V>::open(two_tables(), &ProtocolConfig::default());
    let mut w = p.worker(0, true);
    p.execute(&mut w, &mut Wide).unwrap();
    assert_eq!(b_of(&p, T, 0), 1);
    assert!(nothing_held(&p));
    // It took no piece locks and left no entries: it ran alone.
    assert!(p.board().state(w.run.id) == crate::protocols::kit::pipeline::board::State::Gone);
}

/// A [`MixProgram`] with a last piece that aborts (by the program's logic) when told to.
#[derive(Clone, Debug, Default)]
struct Quitter(MixProgram, bool);

impl Program for Quitter {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn pieces(&self) -> usize {
        self.0.pieces() + 1
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        if piece < self.0.pieces() {
            self.0.declare(piece, out)
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if piece < self.0.pieces() {
            self.0.depends_on(piece, out)
        }
    }
    /// (A wrong promise too, for `ic3-comm`.)
    fn commutes(&self, _piece: usize) -> bool {
        true
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        if piece < self.0.pieces() {
            self.0.run_piece(piece, tx)
        } else if self.1 {
            Err(Abort::user("quits"))
        } else {
            Ok(())
        }
    }
}

struct Quitting(Mixed);

impl Workload for Quitting {
    type Program = Quitter;
    type Gen = <Mixed as Workload>::Gen;
    fn name(&self) -> &'static str {
        "quitting"
    }
    fn params(&self) -> serde_json::Value {
        self.0.params()
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        self.0.load(db)
    }
    fn generator(&self, thread: u32, seed: u64) -> Self::Gen {
        self.0.generator(thread, seed)
    }
    fn program(&self) -> Quitter {
        Quitter::default()
    }
    fn next(&self, g: &mut Self::Gen, p: &mut Quitter) {
        self.0.next(g, &mut p.0);
        p.1 = p.0.tag % 10 == 0;
    }
}

/// Contended histories where a tenth of the transactions abort at their end, after their writes
/// were seen and overwritten: every dependent aborts with them, and each record is undone in order
/// (the executor asserts, in debug builds, that an undo never overwrites a later write).
#[test]
fn aborts_at_the_end_cascade_and_undo_in_order() {
    for seed in 0..4 {
        let cfg = VerifyConfig {
            protocol: ProtocolConfig::with_threads(4),
            txns: 10_000,
            seed,
            prefetch: true,
        };
        let v = verify::run::<Ic3<Plain>, Quitting>(&Quitting(contended()), &cfg).unwrap();
        assert!(v.report.anomalies.is_empty(), "{}", v.report);
        let v = verify::run::<Ic3<Comm>, Quitting>(&Quitting(contended()), &cfg).unwrap();
        assert!(v.report.anomalies.is_empty(), "{}", v.report);
    }
}
