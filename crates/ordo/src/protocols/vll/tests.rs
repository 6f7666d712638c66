//! VLL's tests: the paper's schedules on the partition, the main loop under contention with the
//! checker, dependent transactions, interactive transactions, and the conformance contract.

use super::partition::{Busy, CopyPool, Partition, ScaPass};
use super::scheme::PointLocks;
use super::*;
use crate::check::{check, History};
use crate::protocols::conformance::{self, open_small, small_db, A, B, KV};
use crate::protocols::kit::counters::Counters;
use crate::protocols::kit::lock_request::{LockRequest, Mode};
use crate::protocols::kit::txn_queue::TxnState;
use crate::protocols::kit::{counters, sca};
use crate::storage::{ColumnSet, RowId};
use crate::txn::{Abort, AbortReason, Access, Ticket, Tx};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};

type Points = PointLocks<Colocated>;

fn w(table: u32, key: u64) -> LockRequest {
    // Any distinct slot: the counters are read back through `rid`.
    LockRequest::new(table, key, key + 1, Mode::Exclusive)
}

/// A database with slots 1..=4 in table 0 (keys 0..=3), for direct partition tests.
fn slots_db() -> Database<counters::VllCounters> {
    let db = small_db::<counters::VllCounters>();
    for k in 0..4 {
        db.table(KV).get_or_create(1000 + k);
    }
    db
}

fn cx(db: &Database<counters::VllCounters>, rid: RowId) -> u32 {
    db.table(KV).meta(rid).get().cx
}

/// §2.5: A(x), B(y), C(x, z), D(z), all writes. Exact counter states; basic VLL cannot run C until it
/// is the front; SCA returns C (not D) once A has finished.
#[test]
fn section_2_5_trace_with_exact_counters() {
    for with_sca in [false, true] {
        let db = slots_db();
        let part = Partition::<Points>::new(with_sca);
        let (x, y, z) = (0, 1, 2);
        let (la, lb, lc, ld) = ([w(KV, x)], [w(KV, y)], [w(KV, x), w(KV, z)], [w(KV, z)]);
        let (sa, ba) = part.begin_transaction(&db, 0, &la, false);
        let (sb, bb) = part.begin_transaction(&db, 0, &lb, false);
        let (sc, bc) = part.begin_transaction(&db, 1, &lc, false);
        let (sd, bd) = part.begin_transaction(&db, 1, &ld, false);
        assert_eq!(
            (ba, bb, bc, bd),
            (false, false, true, true),
            "A, B free; C, D blocked"
        );
        assert_eq!(
            (cx(&db, x + 1), cx(&db, y + 1), cx(&db, z + 1)),
            (2, 1, 2),
            "x: Cx=2, y: Cx=1, z: Cx=2"
        );
        assert_eq!(part.blocked(), 2);
        part.finish_transaction(&db, sa, &la);
        assert_eq!(
            (cx(&db, x + 1), cx(&db, y + 1), cx(&db, z + 1)),
            (1, 1, 2),
            "after A: x: Cx=1"
        );
        assert_eq!(
            part.front(),
            sb,
            "B is the front: C is not (basic VLL must wait)"
        );
        if with_sca {
            assert_eq!(
                part.with_locks(|_| part.try_sca(1)),
                Err(Busy),
                "an SCA attempt while someone holds the critical section does not run"
            );
            assert!(
                part.snapshot().contains(&(sc, TxnState::Blocked)),
                "and claims nothing"
            );
            assert_eq!(
                part.try_sca(0),
                Ok(ScaPass {
                    found: None,
                    passed_over: true
                }),
                "worker 0 owns no blocked transaction: it passes over C, which it may not run"
            );
            assert!(part.snapshot().contains(&(sc, TxnState::Blocked)));
            assert_eq!(part.sca(1), Some(sc), "SCA finds C, not D");
            assert_eq!(part.sca(1), None, "D conflicts with C, which is older");
            part.finish_transaction(&db, sc, &lc);
            part.finish_transaction(&db, sb, &lb);
            assert_eq!(part.front(), sd);
            assert!(part.claim(sd));
        } else {
            assert_eq!(part.sca(1), None, "no SCA in basic VLL");
            part.finish_transaction(&db, sb, &lb);
            assert_eq!(part.front(), sc, "now C is the front");
            assert!(part.claim(sc) && !part.claim(sc), "claimed exactly once");
            assert_ne!(part.front(), sd);
            part.finish_transaction(&db, sc, &lc);
            assert_eq!(part.front(), sd);
            assert!(part.claim(sd));
        }
        part.finish_transaction(&db, sd, &ld);
        for rid in 1..=3 {
            assert_eq!(
                db.table(KV).meta(rid).get(),
                Counters::default(),
                "back to zero"
            );
        }
        assert!(part.snapshot().is_empty());
    }
}

/// Two blocked writers on one key: counters alone never show either as the sole requester (C_X stays
/// 2), but the head rule runs them one after the other.
#[test]
fn two_blocked_writers_resolve_through_the_head_rule() {
    let db = slots_db();
    let part = Partition::<Points>::new(false);
    let (la, lb, lc) = ([w(KV, 0)], [w(KV, 0)], [w(KV, 0)]);
    let (sa, _) = part.begin_transaction(&db, 0, &la, false);
    let (sb, bb) = part.begin_transaction(&db, 0, &lb, false);
    let (sc, bc) = part.begin_transaction(&db, 0, &lc, false);
    assert!(bb && bc);
    part.finish_transaction(&db, sa, &la);
    let c = db.table(KV).meta(1).get();
    assert_eq!(c.cx, 2);
    assert!(
        !c.sole(Mode::Exclusive),
        "counter-only unblocking would strand both"
    );
    assert_eq!(part.front(), sb);
    assert!(part.claim(sb));
    assert_ne!(part.front(), sc, "C is not the front yet");
    assert_eq!(
        part.snapshot(),
        vec![(sb, TxnState::Running), (sc, TxnState::Blocked)]
    );
    part.finish_transaction(&db, sb, &lb);
    assert_eq!(part.front(), sc);
    assert!(part.claim(sc));
    part.finish_transaction(&db, sc, &lc);
    assert!(db.table(KV).meta(1).get().is_zero());
}

/// The head rule with parked transactions: worker 1's blocked B, parked, reaches the front once A
/// finishes. A busy worker 0 (`only`) leaves it to worker 1 and takes nothing; worker 1, or an idle
/// worker 0, takes it — claimed with it, once: the entry is Running and nothing is left parked.
#[test]
fn a_busy_worker_leaves_another_workers_parked_front_and_an_idle_one_takes_it() {
    use super::partition::FrontTake;
    for taker in [Some(1), None] {
        let db = slots_db();
        let part = Partition::<Points>::new(false);
        let (la, lb) = ([w(KV, 0)], [w(KV, 0)]);
        let (sa, _) = part.begin_transaction(&db, 0, &la, false);
        let (sb, bb) = part.begin_transaction(&db, 1, &lb, false);
        assert!(bb);
        assert!(
            matches!(part.try_take_front::<&str>(None), Ok(FrontTake::Nothing)),
            "A runs"
        );
        part.park([(sb, Box::new("B") as super::partition::Parked)]);
        assert_eq!(part.parked(), 1);
        part.finish_transaction(&db, sa, &la);
        assert_eq!(part.front(), sb);
        assert!(matches!(
            part.try_take_front::<&str>(Some(0)),
            Ok(FrontTake::Foreign)
        ));
        assert!(
            matches!(part.try_take_front::<u64>(taker), Ok(FrontTake::Nothing)),
            "parked as another type"
        );
        match part.try_take_front::<&str>(taker) {
            Ok(FrontTake::Taken(b)) => assert_eq!(*b, "B"),
            _ => panic!("{taker:?} must take B"),
        }
        assert_eq!(part.parked(), 0);
        assert_eq!(part.snapshot(), vec![(sb, TxnState::Running)]);
        assert!(
            matches!(part.try_take_front::<&str>(None), Ok(FrontTake::Nothing)),
            "taken once"
        );
        part.finish_transaction(&db, sb, &lb);
        assert!(db.table(KV).meta(1).get().is_zero());
    }
}

/// The worker loop's SCA (`try_sca_parked`, with a worker's own bit arrays): a pass that finds
/// nothing makes passes not due for every worker until a transaction finishes; one that passed over
/// a runnable transaction not parked yet is due again once that one is parked; a worker's arrays
/// find what the partition's would (§2.5's C, never D) and are left clean for its next pass.
#[test]
fn a_dry_sca_pass_stands_for_every_worker_until_a_finish_or_a_passed_over_park() {
    use super::partition::Parked;
    let db = slots_db();
    let part = Partition::<Points>::new(true);
    let mut own = [part.worker_sca().unwrap(), part.worker_sca().unwrap()];
    assert!(Partition::<Points>::new(false).worker_sca().is_none());
    let (x, y, z) = (0, 1, 2);
    let (la, lb, lc, ld) = ([w(KV, x)], [w(KV, y)], [w(KV, x), w(KV, z)], [w(KV, z)]);
    let (sa, _) = part.begin_transaction(&db, 0, &la, false);
    let (sb, _) = part.begin_transaction(&db, 0, &lb, false);
    let (sc, _) = part.begin_transaction(&db, 1, &lc, false);
    let (sd, _) = part.begin_transaction(&db, 1, &ld, false);
    part.park([(sd, Box::new("D") as Parked)]);
    assert!(part.sca_due(), "no pass yet");
    // C conflicts with the running A; D with C.
    let (pass, taken) = part.try_sca_parked::<&str>(&mut own[0]).unwrap();
    assert_eq!((pass.found, taken), (None, None));
    assert!(
        !part.sca_due(),
        "dry for every worker, not only the one that scanned"
    );
    part.finish_transaction(&db, sa, &la);
    assert!(part.sca_due(), "a finish makes a pass due again");
    let (pass, taken) = part.try_sca_parked::<&str>(&mut own[1]).unwrap();
    assert_eq!(
        (pass.found, pass.passed_over, taken),
        (None, true, None),
        "C could run now but its worker has not parked it yet"
    );
    assert!(!part.sca_due());
    part.park([(sc, Box::new("C") as Parked)]);
    assert!(part.sca_due(), "parking the passed-over C makes a pass due");
    let (pass, taken) = part.try_sca_parked::<&str>(&mut own[0]).unwrap();
    assert_eq!((pass.found, taken.map(|t| *t)), (Some(sc), Some("C")));
    assert!(part.sca_due(), "a pass that took one may find another");
    let (pass, taken) = part.try_sca_parked::<&str>(&mut own[0]).unwrap();
    assert_eq!(
        (pass.found, pass.passed_over, taken),
        (None, false, None),
        "D conflicts with C, which is older and now running (arrays clean after the last pass)"
    );
    part.finish_transaction(&db, sc, &lc);
    part.finish_transaction(&db, sb, &lb);
    let (pass, taken) = part.try_sca_parked::<&str>(&mut own[1]).unwrap();
    assert_eq!((pass.found, taken.map(|t| *t)), (Some(sd), Some("D")));
    part.finish_transaction(&db, sd, &ld);
    assert!(part.snapshot().is_empty());
    assert_eq!(part.parked(), 0);
}

/// The size of SCA's bit arrays reaches the partition (`--vll-sca-bits`): with one bit every key
/// collides, so the running E(w) hides that the blocked C(x) could run — a false negative, never a
/// wrong find; with the paper's size SCA finds C.
#[test]
fn sca_bit_array_size_reaches_the_partition_and_collisions_only_hide_finds() {
    for (bits, finds) in [(sca::SCA_BITS, true), (1, false)] {
        let db = slots_db();
        let part = Partition::<Points>::with_sca(Some(bits));
        let (lx, lw) = ([w(KV, 0)], [w(KV, 1)]);
        let (sa, _) = part.begin_transaction(&db, 0, &lx, false);
        let (se, _) = part.begin_transaction(&db, 0, &lw, false);
        let (sc, bc) = part.begin_transaction(&db, 0, &lx, false);
        assert!(bc);
        part.finish_transaction(&db, sa, &lx);
        assert_eq!(part.sca(0), finds.then_some(sc), "{bits} bits");
        if !finds {
            part.finish_transaction(&db, se, &lw);
            assert_eq!(part.front(), sc);
            assert!(part.claim(sc));
            part.finish_transaction(&db, sc, &lx);
        } else {
            part.finish_transaction(&db, sc, &lx);
            part.finish_transaction(&db, se, &lw);
        }
        assert!(part.snapshot().is_empty());
    }
}

/// A read-modify-write and a duplicated key never block their own transaction.
#[test]
fn rmw_and_duplicate_keys_never_self_block() {
    let db = slots_db();
    let part = Partition::<Points>::new(false);
    let accesses = [
        Access::read(KV, 1000, ColumnSet::one(A)),
        Access::update(KV, 1000, ColumnSet::one(B), ColumnSet::one(B)),
        Access::read(KV, 1001, ColumnSet::one(A)),
        Access::read(KV, 1001, ColumnSet::one(B)),
    ];
    let mut locks = Vec::new();
    assert!(<Points as LockScheme>::plan(&db, &accesses, &mut locks, false).unwrap());
    assert_eq!(locks.len(), 2, "each key once");
    let (s, blocked) = part.begin_transaction(&db, 0, &locks, false);
    assert!(!blocked);
    let rid = db.table(KV).lookup(1000).unwrap();
    assert_eq!(
        db.table(KV).meta(rid).get(),
        Counters { cx: 1, cs: 0 },
        "RMW counted once, as a write"
    );
    part.finish_transaction(&db, s, &locks);
    assert!(db.table(KV).meta(rid).get().is_zero());
}

// ---------------------------------------------------------------------------------------------------
// Programs and a request source for the worker loop.

/// The test transactions.
#[derive(Clone, Debug, Default)]
enum Op {
    #[default]
    Nop,
    /// Moves 1 from `from` to `to` (column B) and reads `also`.
    Transfer { from: u64, to: u64, also: u64 },
    /// Table 1: inserts `key` into the range [0, 100) and increments the count row.
    Insert { key: u64 },
    /// Table 1: counts the present keys of [0, 100) and compares with the count row.
    Count,
    /// Adds 1 to `key` (column B), after failing `fails` times with a retryable abort (as a stale
    /// reconnaissance does), before writing anything.
    Retry { key: u64, fails: u32 },
    /// Reads column B of all ten keys of `KV` (ten shared locks; never conflicts with itself).
    ReadAll,
}

/// Table 1 of the test database: an ordered table whose row `COUNT` counts the keys below 100.
const R: u32 = 1;
const COUNT: u64 = 1_000;

static PHANTOMS: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Debug, Default)]
struct TestProgram {
    op: Op,
    seen: i64,
}

impl Program for TestProgram {
    fn name(&self) -> &'static str {
        "test"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn depends_on(&self, _: usize, _: &mut Vec<usize>) {}
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        let b = ColumnSet::one(B);
        match self.op {
            Op::Nop => {}
            Op::Transfer { from, to, also } => {
                out.push(Access::update(KV, from, b, b));
                out.push(Access::update(KV, to, b, b));
                out.push(Access::read(KV, also, b));
            }
            Op::Insert { key } => {
                out.push(Access::insert(R, key));
                out.push(Access::update(
                    R,
                    COUNT,
                    ColumnSet::one(A),
                    ColumnSet::one(A),
                ));
            }
            Op::Count => {
                out.push(Access::scan(R, 0, 99, ColumnSet::one(A)));
                out.push(Access::read(R, COUNT, ColumnSet::one(A)));
            }
            Op::Retry { key, .. } => out.push(Access::update(KV, key, b, b)),
            Op::ReadAll => out.extend((0..100).step_by(10).map(|k| Access::read(KV, k, b))),
        }
    }
    fn run_piece<T: Tx>(&mut self, _: usize, tx: &mut T) -> TxResult<()> {
        let b = ColumnSet::one(B);
        match self.op {
            Op::Nop => {}
            Op::Transfer { from, to, also } => {
                tx.update(KV, from, b, |r| r.set_int(B, r.int(B) - 1))?;
                tx.update(KV, to, b, |r| r.set_int(B, r.int(B) + 1))?;
                self.seen = tx.get(KV, also, b)?.map_or(0, |r| r.int(B));
            }
            Op::Insert { key } => {
                tx.insert(R, key, |r| r.set_int(A, 1))?;
                tx.update(R, COUNT, ColumnSet::one(A), |r| r.set_int(A, r.int(A) + 1))?;
            }
            Op::Count => {
                let mut n = 0;
                tx.scan(R, 0, 99, ColumnSet::one(A), |_, _| {
                    n += 1;
                    true
                })?;
                let c = tx.get(R, COUNT, ColumnSet::one(A))?.map_or(0, |r| r.int(A));
                if n != c {
                    PHANTOMS.fetch_add(1, Ordering::Relaxed);
                }
            }
            Op::Retry { key, ref mut fails } => {
                if *fails > 0 {
                    *fails -= 1;
                    return Err(Abort::new(AbortReason::Validation));
                }
                tx.update(KV, key, b, |r| r.set_int(B, r.int(B) + 1))?;
            }
            Op::ReadAll => {
                for k in (0..100).step_by(10) {
                    self.seen += tx.get(KV, k, b)?.map_or(0, |r| r.int(B));
                }
            }
        }
        Ok(())
    }
}

/// The test database: [`small_db`] plus table `R` (ordered) with the count row.
fn test_db<M: Default + Send + Sync>() -> Database<M> {
    use crate::storage::{Column, ColumnType, Schema, TableSpec};
    let mut db = small_db::<M>();
    let schema = Schema::new(vec![
        Column::new("a", ColumnType::Int),
        Column::new("b", ColumnType::Int),
    ])
    .unwrap();
    let t = db
        .create_table(TableSpec::new("r", schema).ordered(2))
        .unwrap();
    db.table(t)
        .load(COUNT, &mut Vec::new(), |r| {
            r.set_int(A, 0);
            Ok(())
        })
        .unwrap();
    db
}

/// Hands out `left` random transactions and counts outcomes.
struct Source {
    left: u64,
    rng: SmallRng,
    committed: u64,
    retried: u64,
    inserts: bool,
}

impl RequestSource for Source {
    type Program = TestProgram;
    fn program(&self) -> TestProgram {
        TestProgram::default()
    }
    fn next(&mut self, p: &mut TestProgram) -> Option<Ticket> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let r = &mut self.rng;
        p.op = if self.inserts && r.gen_bool(0.3) {
            if r.gen_bool(0.5) {
                Op::Insert {
                    key: r.gen_range(0..100),
                }
            } else {
                Op::Count
            }
        } else {
            // Ten keys: heavily contended.
            let from = r.gen_range(0..10) * 10;
            let to = (from + r.gen_range(1..10) * 10) % 100;
            Op::Transfer {
                from,
                to,
                also: r.gen_range(0..10) * 10,
            }
        };
        Some(Ticket::now(0))
    }
    fn aborted(&mut self, _: AbortReason) {
        self.retried += 1;
    }
    fn finished(&mut self, _: Ticket, outcome: Result<(), Abort>) {
        match outcome {
            Ok(()) => self.committed += 1,
            Err(a) if a.reason == AbortReason::DuplicateKey => {}
            Err(a) => panic!("unexpected abort {a}"),
        }
    }
    fn seed(&self) -> u64 {
        0
    }
}

/// How a contended run's threads submit their transactions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Drive {
    /// Each thread runs the main loop over its request source (the benchmark's way).
    Loop,
    /// Each thread hands one transaction at a time to `Protocol::execute` (an embedding
    /// application's way), which waits for the head or for SCA while blocked.
    Execute,
}

/// Runs `threads` workers of flavor `F` over contended transfers (and inserts/scans), submitted as
/// `drive` says, then checks the history, the invariants, and that every counter and the queue are
/// back to zero.
fn contended_run<F: Flavor>(
    drive: Drive,
    threads: u32,
    per_thread: u64,
    limit: usize,
    batch: usize,
    inserts: bool,
) where
    Vll<F>: Protocol<Meta = <F::Scheme as LockScheme>::Meta>,
{
    PHANTOMS.store(0, Ordering::Relaxed);
    let p = Vll::<F>::with_config(
        test_db(),
        &VllConfig {
            blocked_limit: limit,
            max_batch: batch,
            ..VllConfig::default()
        },
    );
    let mut txns = Vec::new();
    let mut committed = 0;
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let p = &p;
                s.spawn(move || {
                    let mut wk = p.worker(t, true);
                    let mut src = Source {
                        left: per_thread,
                        rng: SmallRng::seed_from_u64(t as u64 * 7 + 1),
                        committed: 0,
                        retried: 0,
                        inserts,
                    };
                    match drive {
                        Drive::Loop => p.run_worker(&mut wk, &mut src),
                        Drive::Execute => {
                            let mut prog = src.program();
                            while let Some(ticket) = src.next(&mut prog) {
                                loop {
                                    match p.execute(&mut wk, &mut prog) {
                                        Err(a) if a.is_retryable() => src.aborted(a.reason),
                                        r => break src.finished(ticket, r),
                                    }
                                }
                            }
                        }
                    }
                    (Vll::<F>::recorder(&mut wk).take(), src.committed)
                })
            })
            .collect();
        for h in hs {
            let (t, c) = h.join().unwrap();
            txns.extend(t);
            committed += c;
        }
    });
    let name = F::INFO.name;
    assert!(committed > 0);
    let report = check(&History { txns });
    assert!(
        report.is_serializable() && report.anomalies.is_empty(),
        "{name}: {report}"
    );
    assert!(
        report.edges > 1000,
        "{name}: too few dependencies to mean much"
    );
    assert_eq!(
        PHANTOMS.load(Ordering::Relaxed),
        0,
        "{name}: a scan saw a phantom"
    );
    assert!(
        p.partition_state().snapshot().is_empty(),
        "{name}: queue drained"
    );
    // Sum of B over the ten keys is conserved.
    let mut wk = p.worker(99, false);
    let mut tx = p.begin(&mut wk);
    let mut sum = 0;
    tx.scan(KV, 0, 100, ColumnSet::one(B), |_, r| {
        sum += r.int(B);
        true
    })
    .unwrap();
    tx.commit().unwrap();
    assert_eq!(sum, 0, "{name}: transfers conserve the total");
}

fn colocated_zero<F: Flavor<Scheme = Points>>(p: &Vll<F>) {
    for t in 0..p.db().tables().len() {
        let tab = p.db().table(t as u32);
        for k in tab.present_keys() {
            let rid = tab.lookup(k).unwrap();
            assert!(
                tab.meta(rid).get().is_zero(),
                "counters of key {k} not back to zero"
            );
        }
    }
}

#[test]
fn contended_runs_are_serializable_under_every_flavor() {
    // 4 threads on a 2-core machine: preemption mid-transaction adds interleavings.
    // Batches of 1 are Fig. 1's one-at-a-time admission; larger ones admit several per section.
    contended_run::<Basic>(Drive::Loop, 4, 3_000, 4, 1, true);
    contended_run::<Basic>(Drive::Loop, 4, 3_000, 4, 8, true);
    contended_run::<WithSca>(Drive::Loop, 4, 3_000, 2, 4, true);
    contended_run::<WithSca>(Drive::Loop, 3, 3_000, 16, 1, false);
    contended_run::<ArrayedCounters>(Drive::Loop, 4, 2_000, 4, 4, true);
    contended_run::<Ranges>(Drive::Loop, 4, 2_000, 4, 4, true);
    contended_run::<RangesSca>(Drive::Loop, 4, 2_000, 2, 4, true);
    contended_run::<RangesSca>(Drive::Loop, 3, 2_000, 16, 1, false);
}

/// Transactions handed one at a time to `execute` by more threads than cores: a blocked one waits
/// for the head or (with SCA, whose threshold of 1 makes it run at every block) is picked by its own
/// thread's SCA pass — never twice, never another thread's.
#[test]
fn one_at_a_time_callers_are_serializable_under_every_flavor() {
    contended_run::<Basic>(Drive::Execute, 4, 2_000, 1, 1, true);
    contended_run::<WithSca>(Drive::Execute, 4, 2_000, 1, 1, true);
    contended_run::<WithSca>(Drive::Execute, 3, 2_000, 2, 1, false);
    contended_run::<Ranges>(Drive::Execute, 3, 1_000, 1, 1, true);
    contended_run::<RangesSca>(Drive::Execute, 3, 1_000, 1, 1, true);
}

fn run_threads<F: Flavor>(p: &Vll<F>, threads: u32, per_thread: u64) {
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let mut wk = p.worker(t, false);
                let mut src = Source {
                    left: per_thread,
                    rng: SmallRng::seed_from_u64(t as u64),
                    committed: 0,
                    retried: 0,
                    inserts: true,
                };
                p.run_worker(&mut wk, &mut src);
            });
        }
    });
    assert!(p.partition_state().snapshot().is_empty(), "queue drained");
}

#[test]
fn counters_return_to_zero_after_a_run() {
    let cfg = VllConfig {
        blocked_limit: 3,
        max_batch: 4,
        ..VllConfig::default()
    };
    let p = Vll::<Basic>::with_config(test_db(), &cfg);
    run_threads(&p, 3, 2_000);
    colocated_zero(&p);
    assert!(
        prefix_counters_drain::<Ranges>(&cfg),
        "every VLLR prefix counter back to zero"
    );
    assert!(
        prefix_counters_drain::<RangesSca>(&cfg),
        "every VLLR prefix counter back to zero (SCA)"
    );
}

/// Whether every prefix counter of a VLLR flavour is back to zero after a contended run.
fn prefix_counters_drain<F: Flavor<Scheme = vllr::PrefixLocks>>(cfg: &VllConfig) -> bool {
    let p = Vll::<F>::with_config(test_db(), cfg);
    run_threads(&p, 3, 1_000);
    p.partition_state().with_locks(|t| t.is_empty())
}

// ---------------------------------------------------------------------------------------------------
// Admission batching.

#[test]
fn a_batch_doubles_while_nothing_blocks_and_falls_back_to_one() {
    let b = worker::Batching { max: 8 };
    let mut sizes = vec![1];
    for _ in 0..5 {
        sizes.push(b.next(*sizes.last().unwrap(), false));
    }
    assert_eq!(sizes, [1, 2, 4, 8, 8, 8]);
    assert_eq!(b.next(8, true), 1, "any block: one at a time again");
    assert_eq!(worker::Batching { max: 1 }.next(1, false), 1);
}

/// Several `BeginTransaction`s in one section behave as if admitted one after another: a request that
/// conflicts with an earlier one of its own batch is blocked behind it, and reaches the front once it
/// has finished (in a section that also begins the next batch).
#[test]
fn a_batch_admits_in_order_and_blocks_behind_its_own_members() {
    let db = slots_db();
    let part = Partition::<Points>::new(false);
    let (x, y) = (0, 1);
    let (la, lb, lc) = ([w(KV, x)], [w(KV, y)], [w(KV, x), w(KV, y)]);
    let mut out = Vec::new();
    part.finish_and_begin(
        &db,
        [],
        0,
        [
            (&la[..], false, Vec::new()),
            (&lb[..], false, Vec::new()),
            (&lc[..], false, Vec::new()),
        ],
        &mut out,
        &mut CopyPool::default(),
    );
    let blocked: Vec<bool> = out.iter().map(|o| o.1).collect();
    assert_eq!(
        blocked,
        [false, false, true],
        "C conflicts with A and B of its batch"
    );
    assert!(
        out[0].0 < out[1].0 && out[1].0 < out[2].0,
        "queue order is request order"
    );
    assert_eq!((cx(&db, x + 1), cx(&db, y + 1)), (2, 2));
    let ld = [w(KV, 3)];
    let mut next = Vec::new();
    part.finish_and_begin(
        &db,
        [(out[0].0, &la[..]), (out[1].0, &lb[..])],
        0,
        [(&ld[..], false, Vec::new())],
        &mut next,
        &mut CopyPool::default(),
    );
    assert!(!next[0].1, "D touches neither x nor y");
    assert_eq!(
        part.front(),
        out[2].0,
        "C is the front once A and B finished"
    );
    assert!(part.claim(out[2].0));
    part.finish_transaction(&db, out[2].0, &lc);
    part.finish_transaction(&db, next[0].0, &ld);
    assert_eq!((cx(&db, x + 1), cx(&db, y + 1), cx(&db, 4)), (0, 0, 0));
    assert!(part.snapshot().is_empty());
}

/// With SCA, a batch's queue entries carry the copies of their lock lists made from the worker's
/// pool before the section, SCA reads those copies, and the section that finishes a transaction
/// hands its copy back to the pool.
#[test]
fn sca_reads_the_copies_made_before_the_section_and_finishing_returns_them_to_the_pool() {
    let db = slots_db();
    let part = Partition::<Points>::new(true);
    let x = 0;
    let (la, lb) = ([w(KV, x)], [w(KV, x)]);
    let mut pool = CopyPool::default();
    let copies = [pool.copy(true, &la), pool.copy(true, &lb)];
    assert_eq!(copies[1], lb, "a copy is the lock list");
    assert!(pool.copy(false, &la).is_empty(), "no copy without SCA");
    let mut out = Vec::new();
    let [ca, cb] = copies;
    part.finish_and_begin(
        &db,
        [],
        0,
        [(&la[..], false, ca), (&lb[..], false, cb)],
        &mut out,
        &mut pool,
    );
    assert_eq!((out[0].1, out[1].1), (false, true), "B waits for A on x");
    assert_eq!(
        part.sca(0),
        None,
        "SCA sees B's copy conflict with the running A"
    );
    assert_eq!(pool.len(), 0);
    part.finish_and_begin(
        &db,
        [(out[0].0, &la[..])],
        0,
        [],
        &mut Vec::new(),
        &mut pool,
    );
    assert_eq!(pool.len(), 1, "A's copy came back");
    assert_eq!(
        part.sca(0),
        Some(out[1].0),
        "B conflicts with nobody older now"
    );
    part.finish_and_begin(
        &db,
        [(out[1].0, &lb[..])],
        0,
        [],
        &mut Vec::new(),
        &mut pool,
    );
    assert_eq!(pool.len(), 2);
    assert_eq!(cx(&db, x + 1), 0);
    assert!(part.snapshot().is_empty());
}

#[test]
fn the_main_loop_admits_a_batch_per_section_only_while_nothing_blocks() {
    for max_batch in [1, 4] {
        let p = Vll::<Basic>::with_config(
            test_db(),
            &VllConfig {
                blocked_limit: 16,
                max_batch,
                ..VllConfig::default()
            },
        );
        let mut wk = p.worker(0, false);
        // Transactions that touch nothing never conflict.
        let mut src = Script {
            ops: vec![Op::Nop; 1_000].into(),
            committed: 0,
            retried: 0,
        };
        p.run_worker(&mut wk, &mut src);
        let st = p.loop_stats();
        assert_eq!((src.committed, st.begun, st.blocked), (1_000, 1_000, 0));
        // Batches of 1, 2, then 4 from there on.
        let expected = if max_batch == 1 {
            1_000
        } else {
            2 + 997 / 4 + 1
        };
        assert_eq!(st.admissions, expected, "batch of at most {max_batch}");
    }
    // Ten shared locks each: the batch grows 1, 2, 4, 8, but a batch of 8 may hold 64 lock requests
    // and seven members hold 70, so it stops at seven; at the default of 4 the budget is 32, and
    // four members (40) are the most.
    assert_eq!(
        worker::Batching {
            max: DEFAULT_MAX_BATCH
        }
        .lock_budget(),
        32
    );
    let p = Vll::<Basic>::with_config(
        test_db(),
        &VllConfig {
            blocked_limit: 16,
            max_batch: 8,
            ..VllConfig::default()
        },
    );
    let mut src = Script {
        ops: vec![Op::ReadAll; 100].into(),
        committed: 0,
        retried: 0,
    };
    p.run_worker(&mut p.worker(0, false), &mut src);
    let st = p.loop_stats();
    assert_eq!((src.committed, st.blocked), (100, 0));
    assert_eq!(
        st.admissions,
        3 + 93_u64.div_ceil(7),
        "batches 1, 2, 4, then 7s"
    );
    // Contended transfers on one worker: batch members block behind each other, the batch falls back
    // to one, and everything still runs, in order, to a drained queue with zeroed counters.
    let p = Vll::<Basic>::with_config(
        test_db(),
        &VllConfig {
            blocked_limit: 16,
            max_batch: 8,
            ..VllConfig::default()
        },
    );
    run_threads(&p, 1, 3_000);
    colocated_zero(&p);
    let st = p.loop_stats();
    assert!(
        st.blocked > 0,
        "some batch member blocked behind another: {st:?}"
    );
    assert!(
        st.admissions < st.begun,
        "some batches had more than one: {st:?}"
    );
    assert_eq!(
        st.by_head, st.blocked,
        "every blocked one ran by the head rule"
    );
}

/// Hands out a fixed list of transactions, in order.
struct Script {
    ops: std::collections::VecDeque<Op>,
    committed: u64,
    retried: u64,
}

impl RequestSource for Script {
    type Program = TestProgram;
    fn program(&self) -> TestProgram {
        TestProgram::default()
    }
    fn next(&mut self, p: &mut TestProgram) -> Option<Ticket> {
        p.op = self.ops.pop_front()?;
        Some(Ticket::now(0))
    }
    fn aborted(&mut self, _: AbortReason) {
        self.retried += 1;
    }
    fn finished(&mut self, _: Ticket, outcome: Result<(), Abort>) {
        outcome.expect("commits");
        self.committed += 1;
    }
    fn seed(&self) -> u64 {
        0
    }
}

/// A batch [A, B] where A and B write the same key and A fails once: A runs (free) and is
/// resubmitted as A' while the batch is still being filed; A' blocks behind B, which blocked behind
/// A. B is older than A' and must still be run by the head rule (filed by age, not by arrival: filed
/// A' first, the worker waited for A' to become the front while the front was B, forever).
#[test]
fn a_resubmitted_batch_member_does_not_hide_an_older_blocked_one() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let p = Vll::<Basic>::with_config(
            test_db(),
            &VllConfig {
                blocked_limit: 16,
                max_batch: 4,
                ..VllConfig::default()
            },
        );
        // Three no-ops grow the batch to 4 (sizes 1, 2), then the four of interest share one.
        let mut ops: std::collections::VecDeque<Op> = [Op::Nop, Op::Nop, Op::Nop].into();
        ops.extend([
            Op::Retry { key: 10, fails: 1 },
            Op::Retry { key: 10, fails: 0 },
            Op::Nop,
            Op::Retry { key: 20, fails: 0 },
        ]);
        let mut src = Script {
            ops,
            committed: 0,
            retried: 0,
        };
        let mut wk = p.worker(0, false);
        p.run_worker(&mut wk, &mut src);
        let st = p.loop_stats();
        tx.send((src.committed, src.retried, st)).unwrap();
    });
    let (committed, retried, st) = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the worker finished (no transaction left unrun at the queue's front)");
    assert_eq!((committed, retried), (7, 1), "{st:?}");
    assert_eq!(st.blocked, 2, "B behind A, A' behind B: {st:?}");
}

// ---------------------------------------------------------------------------------------------------
// Dependent transactions.

/// Piece 0 reads an "index" row (key 0, column A) naming the key to update; piece 1 updates that key.
/// On its first reconnaissance, `hook` runs (a concurrent writer that changes the index).
struct Dependent {
    target: u64,
    hook: Option<Box<dyn FnOnce() + Send>>,
}

impl Program for Dependent {
    fn name(&self) -> &'static str {
        "dependent"
    }
    fn pieces(&self) -> usize {
        2
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        match piece {
            0 => out.push(Access::read(KV, 0, ColumnSet::one(A))),
            _ => out.push(Access::update(
                KV,
                self.target,
                ColumnSet::one(B),
                ColumnSet::one(B),
            )),
        }
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        match piece {
            0 => {
                self.target = tx.get(KV, 0, ColumnSet::one(A))?.unwrap().int(A) as u64;
                if tx.id() == 0 {
                    // Reconnaissance (ReconTx has id 0): let the concurrent writer in, once.
                    if let Some(h) = self.hook.take() {
                        h();
                    }
                }
            }
            _ => {
                tx.update(KV, self.target, ColumnSet::one(B), |r| {
                    r.set_int(B, r.int(B) + 1)
                })?;
            }
        }
        Ok(())
    }
}

struct OneShot {
    program: Option<Dependent>,
    retried: Vec<AbortReason>,
    done: bool,
}

impl RequestSource for OneShot {
    type Program = Dependent;
    fn program(&self) -> Dependent {
        Dependent {
            target: 0,
            hook: None,
        }
    }
    fn next(&mut self, p: &mut Dependent) -> Option<Ticket> {
        *p = self.program.take()?;
        Some(Ticket::now(0))
    }
    fn aborted(&mut self, r: AbortReason) {
        self.retried.push(r);
    }
    fn finished(&mut self, _: Ticket, outcome: Result<(), Abort>) {
        outcome.unwrap();
        self.done = true;
    }
    fn seed(&self) -> u64 {
        0
    }
}

/// Hands out `left` dependent transactions (no hook: their reconnaissance stays right).
struct Dependents {
    left: u64,
    committed: u64,
}

impl RequestSource for Dependents {
    type Program = Dependent;
    fn program(&self) -> Dependent {
        Dependent {
            target: 0,
            hook: None,
        }
    }
    fn next(&mut self, _: &mut Dependent) -> Option<Ticket> {
        self.left = self.left.checked_sub(1)?;
        Some(Ticket::now(0))
    }
    fn aborted(&mut self, r: AbortReason) {
        panic!("nothing changes the index here, yet {r:?}");
    }
    fn finished(&mut self, _: Ticket, outcome: Result<(), Abort>) {
        outcome.unwrap();
        self.committed += 1;
    }
    fn seed(&self) -> u64 {
        0
    }
}

/// Dependent transactions are not batched: each one's reconnaissance would go stale while it waits
/// for the members drawn before it.
#[test]
fn dependent_transactions_are_admitted_one_per_section() {
    let p = Vll::<Basic>::with_config(
        test_db(),
        &VllConfig {
            blocked_limit: 16,
            max_batch: 8,
            ..VllConfig::default()
        },
    );
    let mut src = Dependents {
        left: 200,
        committed: 0,
    };
    p.run_worker(&mut p.worker(0, false), &mut src);
    let st = p.loop_stats();
    assert_eq!((src.committed, st.begun, st.admissions), (200, 200, 200));
}

/// Sets the index row (key 0, column A) to `to` in a transaction of its own.
struct SetIndex(u64);
impl Program for SetIndex {
    fn name(&self) -> &'static str {
        "set-index"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn depends_on(&self, _: usize, _: &mut Vec<usize>) {}
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        out.push(Access::update(KV, 0, ColumnSet::one(A), ColumnSet::one(A)));
    }
    fn run_piece<T: Tx>(&mut self, _: usize, tx: &mut T) -> TxResult<()> {
        let to = self.0 as i64;
        tx.update(KV, 0, ColumnSet::one(A), |r| r.set_int(A, to))?;
        Ok(())
    }
}

#[test]
fn stale_reconnaissance_aborts_and_resubmits_as_a_new_transaction() {
    let p: std::sync::Arc<Vll<Basic>> = std::sync::Arc::new(open_small());
    // The index names key 20.
    p.execute(&mut p.worker(5, false), &mut SetIndex(20))
        .unwrap();
    let pr = p.clone();
    let hook = Box::new(move || {
        // A concurrent writer repoints the index to key 40 between reconnaissance and locking.
        pr.execute(&mut pr.worker(6, false), &mut SetIndex(40))
            .unwrap();
    });
    let mut src = OneShot {
        program: Some(Dependent {
            target: 0,
            hook: Some(hook),
        }),
        retried: Vec::new(),
        done: false,
    };
    let mut wk = p.worker(0, true);
    p.run_worker(&mut wk, &mut src);
    assert!(src.done);
    assert_eq!(
        src.retried,
        [AbortReason::Validation],
        "one abort, then a resubmission"
    );
    let hist = Vll::<Basic>::recorder(&mut wk).take();
    assert_eq!(
        hist.len(),
        2,
        "two transactions: the aborted one and the resubmitted one"
    );
    assert!(!hist[0].committed && hist[1].committed);
    assert_ne!(hist[0].id, hist[1].id, "resubmitted as a new transaction");
    let st = p.loop_stats();
    assert_eq!(st.stale, 1);
    assert_eq!(
        st.limit,
        DEFAULT_BLOCKED_LIMIT / 2,
        "a stale reconnaissance halves the worker's blocked threshold (one completion since: no \
         growth yet)"
    );
    let mut tx = p.begin(&mut wk);
    let b =
        |tx: &mut VllTx<'_, Points>, k| tx.get(KV, k, ColumnSet::one(B)).unwrap().unwrap().int(B);
    assert_eq!(
        (b(&mut tx, 20), b(&mut tx, 40)),
        (0, 1),
        "the key the index names now was updated"
    );
    tx.commit().unwrap();
    colocated_zero(&p);
}

// ---------------------------------------------------------------------------------------------------
// Interactive transactions and the conformance contract.

/// `conformance::no_dirty_read` opens two interactive transactions on one thread, which VLL cannot do
/// (the second waits for the first, which runs alone). The same promise, adapted: a program that reads
/// a record an interactive transaction has written waits until that transaction ends and then reads
/// the committed value.
#[test]
fn no_dirty_read_a_reader_waits_for_the_interactive_writer() {
    let p: Vll<Basic> = open_small();
    let mut w1 = p.worker(0, false);
    let mut t1 = p.begin(&mut w1);
    t1.update(KV, 50, ColumnSet::one(B), |r| r.set_int(B, 1))
        .unwrap();
    let obs = crate::txn::wait::WaitObserver::new();
    std::thread::scope(|s| {
        let (p, o) = (&p, obs.clone());
        let reader = s.spawn(move || {
            crate::txn::wait::observe(Some(o));
            let mut prog = TestProgram {
                op: Op::Transfer {
                    from: 10,
                    to: 20,
                    also: 50,
                },
                seen: -1,
            };
            p.execute(&mut p.worker(1, false), &mut prog).unwrap();
            prog.seen
        });
        while !obs.is_waiting() {
            std::thread::yield_now();
        }
        t1.commit().unwrap();
        assert_eq!(
            reader.join().unwrap(),
            1,
            "read the committed value, after the writer ended"
        );
    });
}

/// A program that writes and then aborts by its own logic (it has a commit point): the undo log puts
/// the old value back.
struct WriteThenAbort;
impl Program for WriteThenAbort {
    fn name(&self) -> &'static str {
        "write-then-abort"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn depends_on(&self, _: usize, _: &mut Vec<usize>) {}
    fn commit_point(&self) -> Option<usize> {
        Some(0)
    }
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        out.push(Access::update(KV, 10, ColumnSet::one(B), ColumnSet::one(B)));
    }
    fn run_piece<T: Tx>(&mut self, _: usize, tx: &mut T) -> TxResult<()> {
        tx.update(KV, 10, ColumnSet::one(B), |r| r.set_int(B, 42))?;
        Err(Abort::user("changed my mind"))
    }
}

#[test]
fn an_own_logic_abort_after_writing_is_undone() {
    let p: Vll<Basic> = open_small();
    let mut wk = p.worker(0, false);
    let a = p.execute(&mut wk, &mut WriteThenAbort).unwrap_err();
    assert_eq!(a.reason, AbortReason::User);
    let mut tx = p.begin(&mut wk);
    assert_eq!(
        tx.get(KV, 10, ColumnSet::one(B)).unwrap().unwrap().int(B),
        0
    );
    tx.commit().unwrap();
    colocated_zero(&p);
}

/// A read of a deleted record observes the deleter's version (not the initial one), so the checker
/// orders the reader after the delete.
#[test]
fn reading_a_tombstone_records_the_deleter() {
    use crate::check::Event;
    let p: Vll<Basic> = open_small();
    let mut wk = p.worker(0, true);
    let mut t1 = p.begin(&mut wk);
    let deleter = t1.id();
    assert!(t1.delete(KV, 30).unwrap());
    t1.commit().unwrap();
    let mut prog = TestProgram {
        op: Op::Transfer {
            from: 10,
            to: 20,
            also: 30,
        },
        seen: -1,
    };
    p.execute(&mut wk, &mut prog).unwrap();
    assert_eq!(prog.seen, 0, "the deleted record reads as absent");
    let hist = Vll::<Basic>::recorder(&mut wk).take();
    let read = hist[1]
        .events
        .iter()
        .find_map(|e| match e {
            Event::Read { item, version } if item.key == 30 => Some(*version),
            _ => None,
        })
        .expect("the read of key 30 is recorded");
    assert_eq!(read, deleter);
}

/// Declares `declared` (update if the flag is set, else read) and runs `run` (update if set, else
/// get), in those orders.
struct Ordered {
    declared: Vec<(u64, bool)>,
    run: Vec<(u64, bool)>,
}
impl Program for Ordered {
    fn name(&self) -> &'static str {
        "ordered"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn depends_on(&self, _: usize, _: &mut Vec<usize>) {}
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        let b = ColumnSet::one(B);
        for &(k, write) in &self.declared {
            out.push(if write {
                Access::update(KV, k, b, b)
            } else {
                Access::read(KV, k, b)
            });
        }
    }
    fn run_piece<T: Tx>(&mut self, _: usize, tx: &mut T) -> TxResult<()> {
        let b = ColumnSet::one(B);
        for &(k, write) in &self.run {
            if write {
                tx.update(KV, k, b, |r| r.set_int(B, r.int(B) + 1))?;
            } else {
                tx.get(KV, k, b)?;
            }
        }
        Ok(())
    }
}

/// Prefetching while planning (which the benchmark harness leaves to the point schemes,
/// `RequestSource::next_resolving`) changes no request: the same keys, modes and slots in the same
/// order, reads of a read-only table still unlocked, a new key given one slot.
#[test]
fn planning_with_prefetch_plans_the_same_requests() {
    let db = conformance::read_only_db::<counters::VllCounters>();
    let b = ColumnSet::one(B);
    let accesses = [
        Access::read(KV, 10, b),
        Access::update(KV, 20, b, b),
        Access::read(KV, 10, b),
        Access::update(KV, 5, b, b), // not loaded: planning creates its slot
        Access::read(conformance::RO, 30, b), // read-only table
        Access::scan(KV, 40, 43, b),
        Access::update(KV, 41, b, b),
    ];
    let plan = |prefetch| {
        let mut locks = Vec::new();
        assert!(<Points as LockScheme>::plan(&db, &accesses, &mut locks, prefetch).unwrap());
        locks
    };
    let with = plan(true);
    let without = plan(false);
    assert_eq!(format!("{with:?}"), format!("{without:?}"));
    let keys: Vec<_> = with.iter().map(|l| (l.table, l.key, l.mode)).collect();
    let (s, x) = (Mode::Shared, Mode::Exclusive);
    let want = [(10, s), (20, x), (5, x), (40, s), (41, x), (42, s), (43, s)];
    assert_eq!(keys, want.map(|(k, m)| (KV, k, m)));
}

/// Execution tries the next declared lock first (`LockScheme::covers`) and searches otherwise: access
/// order does not matter, and a write under a read lock is refused by both paths.
#[test]
fn locks_are_found_in_any_order_and_a_read_lock_never_covers_a_write() {
    let db = slots_db();
    let b = ColumnSet::one(B);
    let accesses = [Access::read(KV, 1000, b), Access::update(KV, 1001, b, b)];
    let mut locks = Vec::new();
    assert!(<Points as LockScheme>::plan(&db, &accesses, &mut locks, false).unwrap());
    let rid = |k| db.table(KV).lookup(k).unwrap();
    assert_eq!(
        Points::covers(&locks[0], KV, 1000, false),
        Some(Some(rid(1000)))
    );
    assert_eq!(Points::covers(&locks[0], KV, 1000, true), None);
    assert_eq!(Points::allows(&locks, KV, 1000, true), None);
    assert_eq!(
        Points::allows(&locks, KV, 1000, false),
        Some((0, Some(rid(1000))))
    );
    assert_eq!(
        Points::covers(&locks[0], KV, 1001, true),
        None,
        "not the next one"
    );
    assert_eq!(
        Points::allows(&locks, KV, 1001, true),
        Some((1, Some(rid(1001))))
    );

    let p: Vll<Basic> = open_small();
    let mut wk = p.worker(0, false);
    let mut reversed = Ordered {
        declared: vec![(10, true), (20, true), (30, false)],
        run: vec![(30, false), (20, true), (10, true), (20, true)],
    };
    p.execute(&mut wk, &mut reversed).unwrap();
    let mut under_read = Ordered {
        declared: vec![(50, false), (60, true)],
        run: vec![(50, true)],
    };
    let a = p.execute(&mut wk, &mut under_read).unwrap_err();
    assert_eq!(a.reason, AbortReason::Validation);
    let mut tx = p.begin(&mut wk);
    let get = |tx: &mut VllTx<'_, Points>, k| tx.get(KV, k, b).unwrap().unwrap().int(B);
    assert_eq!(
        (get(&mut tx, 10), get(&mut tx, 20), get(&mut tx, 50)),
        (1, 2, 0)
    );
    tx.commit().unwrap();
    colocated_zero(&p);
}

// ---------------------------------------------------------------------------------------------------
// Any worker runs a parked blocked transaction.

/// Writes `keys`, then runs `hook` (once) inside its piece.
#[derive(Default)]
struct Hooked {
    keys: Vec<u64>,
    hook: Option<Box<dyn FnOnce() + Send>>,
}

impl Program for Hooked {
    fn name(&self) -> &'static str {
        "hooked"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn depends_on(&self, _: usize, _: &mut Vec<usize>) {}
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        let b = ColumnSet::one(B);
        out.extend(self.keys.iter().map(|&k| Access::update(KV, k, b, b)));
    }
    fn run_piece<T: Tx>(&mut self, _: usize, tx: &mut T) -> TxResult<()> {
        for &k in &self.keys {
            tx.update(KV, k, ColumnSet::one(B), |r| r.set_int(B, r.int(B) + 1))?;
        }
        if let Some(h) = self.hook.take() {
            h();
        }
        Ok(())
    }
}

/// Hands out its programs in order.
struct Hooks(std::collections::VecDeque<Hooked>);

impl RequestSource for Hooks {
    type Program = Hooked;
    fn program(&self) -> Hooked {
        Hooked::default()
    }
    fn next(&mut self, p: &mut Hooked) -> Option<Ticket> {
        *p = self.0.pop_front()?;
        Some(Ticket::now(0))
    }
    fn aborted(&mut self, r: AbortReason) {
        panic!("nothing aborts here: {r:?}");
    }
    fn finished(&mut self, _: Ticket, outcome: Result<(), Abort>) {
        outcome.expect("commits");
    }
    fn seed(&self) -> u64 {
        0
    }
}

/// Fig. 4 as the paper runs it: the worker that would idle runs the transaction SCA finds, whoever
/// admitted it. Worker 1 runs A (writes x) until worker 0 has admitted, in one batch, B (y) and
/// C (x, z): B is free, C blocked behind A and parked. Worker 0 then runs B, which waits until C
/// has run. Once A is done, the front is B — running — and only SCA can find C, which conflicts
/// with nothing older; worker 0 is inside B, so worker 1 must run C. (Before parking, a blocked
/// transaction could run only on the worker that admitted it, and this deadlocked.)
#[test]
fn an_idle_worker_runs_the_transaction_sca_finds_whoever_admitted_it() {
    use std::sync::mpsc::channel;
    use std::time::Duration;
    let wait = Duration::from_secs(20);
    let (x, y, z, w) = (10, 20, 30, 40);
    let p = std::sync::Arc::new(Vll::<WithSca>::with_config(
        test_db(),
        &VllConfig {
            blocked_limit: 1,
            max_batch: 2,
            ..VllConfig::default()
        },
    ));
    let (a_running, a_running_rx) = channel();
    let (go, go_rx) = channel::<()>();
    let (c_ran, c_ran_rx) = channel();
    let (c_done, c_done_rx) = channel::<()>();
    let worker = |id: u32, programs: Vec<Hooked>| {
        let p = p.clone();
        std::thread::spawn(move || {
            p.run_worker(&mut p.worker(id, false), &mut Hooks(programs.into()));
            std::thread::current().id()
        })
    };
    let one = worker(
        1,
        vec![Hooked {
            keys: vec![x],
            hook: Some(Box::new(move || {
                a_running.send(()).unwrap();
                go_rx.recv_timeout(wait).expect("B started");
            })),
        }],
    );
    a_running_rx.recv_timeout(wait).expect("A runs");
    // The first transaction grows worker 0's batch to two: B and C share one section.
    let zero = worker(
        0,
        vec![
            Hooked {
                keys: vec![w],
                hook: None,
            },
            Hooked {
                keys: vec![y],
                hook: Some(Box::new(move || {
                    go.send(()).unwrap();
                    c_done_rx
                        .recv_timeout(wait)
                        .expect("C ran while this worker was inside B");
                })),
            },
            Hooked {
                keys: vec![x, z],
                hook: Some(Box::new(move || {
                    c_ran.send(std::thread::current().id()).unwrap();
                    c_done.send(()).unwrap();
                })),
            },
        ],
    );
    let ran_on = c_ran_rx.recv_timeout(wait).expect("C ran");
    let (one, zero) = (one.join().unwrap(), zero.join().unwrap());
    assert_eq!(ran_on, one, "worker 1 ran C, which worker 0 admitted");
    assert_ne!(ran_on, zero);
    let st = p.loop_stats();
    assert_eq!((st.blocked, st.sca_found, st.by_head), (1, 1, 0), "{st:?}");
    colocated_zero(&p);
    let mut wk = p.worker(2, false);
    let mut tx = p.begin(&mut wk);
    for (k, n) in [(x, 2), (y, 1), (z, 1), (w, 1)] {
        let v = tx.get(KV, k, ColumnSet::one(B)).unwrap().unwrap().int(B);
        assert_eq!(v, n, "key {k} written {n} times");
    }
    tx.commit().unwrap();
}

/// The knobs' declared defaults are the constants the code documents, and a given value reaches
/// the configuration.
#[test]
fn knob_defaults_match_the_documented_constants() {
    let d = VllConfig::default();
    assert_eq!(
        (d.blocked_limit, d.max_batch, d.sca_bits),
        (DEFAULT_BLOCKED_LIMIT, DEFAULT_MAX_BATCH, sca::SCA_BITS)
    );
    let given = ProtocolConfig::default()
        .with_knob(&BATCH_KNOB, "7")
        .unwrap();
    assert_eq!(VllConfig::of(&given).max_batch, 7);
    assert!(ProtocolConfig::default()
        .with_knob(&BATCH_KNOB, "0")
        .is_err());
}
