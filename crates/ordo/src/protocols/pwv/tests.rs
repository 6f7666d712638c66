//! PWV's own invariants (the conformance suite and the workloads' checked runs hold it to the rest):
//! every batch equals the serial run of its committed transactions in batch order, reads included,
//! on 1 to 4 workers and with coarse units alike; aborted transactions leave no trace and never run
//! past their commit point; a reader waits for a writer's commit decision (constraint 1a), but not
//! for the rest of a writer past its commit point (early write visibility); no piece runs before its
//! data parents; a stale reconnaissance is retried in the next batch; contended histories check.

use super::graph::GKey;
use super::*;
use crate::check::TxnId;
use crate::protocols::kit::exec::{Cover, ExecState, ExecTx};
use crate::protocols::kit::testkit::{
    checked_history, fresh_db, interactive_alongside_worker_loop, Mixed, A, B, T,
};
use crate::storage::ColumnSet;
use crate::txn::{run_pieces, AbortReason, Access, ConflictUnits, Tx};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the jobs of one test saw, by tag: the reads of each attempt `(attempt id, piece, key, b)`.
type Log = Arc<Mutex<HashMap<i64, Vec<(TxnId, usize, u64, i64)>>>>;

/// A test transaction: pieces of reads and read-modify-writes (`b ← 3b + tag`, `a ← a + tag`,
/// order-sensitive), optional data edges, a commit point, and a data-dependent abort.
#[derive(Clone, Debug, Default)]
struct Job {
    tag: i64,
    /// Per piece: the keys it touches, and whether it writes each.
    pieces: Vec<Vec<(u64, bool)>>,
    /// Per piece: the earlier pieces it needs (none by default).
    deps: Vec<Vec<usize>>,
    commit_point: Option<usize>,
    /// This piece aborts when the sum of the `b`s it read is a multiple of 3.
    abort_at: Option<usize>,
    /// Group keys into units of 4 (fine) or 8 (coarse) in table `T`.
    units: bool,
    /// Sleep this long at the end of piece `.0`.
    nap: Option<(usize, Duration)>,
    /// Raise this flag when piece `.0` ends.
    flag: Option<(usize, Arc<AtomicBool>)>,
    /// Assert, when piece `.0` reads, that the flag is `.2` (raised or not).
    expect: Option<(usize, Arc<AtomicBool>, bool)>,
    log: Option<Log>,
    /// Pieces run in the current attempt (a bit each) and that attempt's id.
    ran: u64,
    attempt: TxnId,
}

fn units4(table: u32, key: u64, coarse: bool) -> Option<u64> {
    (table == T).then_some(if coarse { key / 8 } else { key / 4 })
}

impl Program for Job {
    fn name(&self) -> &'static str {
        "Job"
    }
    fn pieces(&self) -> usize {
        self.pieces.len()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        for &(k, w) in &self.pieces[piece] {
            out.push(if w {
                Access::update(T, k, ColumnSet::ALL, ColumnSet::ALL)
            } else {
                Access::read(T, k, ColumnSet::ALL)
            });
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if let Some(d) = self.deps.get(piece) {
            out.extend(d);
        }
    }
    /// Its keys are its inputs: no reconnaissance.
    fn declaration_depends_on(&self, _: usize, _: &mut Vec<usize>) {}
    fn commit_point(&self) -> Option<usize> {
        self.commit_point
    }
    fn conflict_units(&self) -> Option<ConflictUnits> {
        self.units.then_some(units4 as ConflictUnits)
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        let real = tx.id() != 0; // not the planner's reconnaissance
        if real {
            if tx.id() != self.attempt {
                self.attempt = tx.id();
                self.ran = 0;
            }
            for &p in self.deps.get(piece).map_or(&[][..], |d| &d[..]) {
                assert!(
                    self.ran & (1 << p) != 0,
                    "piece {piece} ran before its parent {p}"
                );
            }
        }
        let mut sum = 0i64;
        for &(k, w) in &self.pieces[piece].clone() {
            let tag = self.tag;
            let b = if w {
                tx.update(T, k, ColumnSet::ALL, |r| {
                    let b = r.int(B);
                    r.set_int(B, b.wrapping_mul(3).wrapping_add(tag));
                    r.set_int(A, r.int(A).wrapping_add(tag));
                    b
                })?
            } else {
                tx.get(T, k, ColumnSet::ALL)?.map(|r| r.int(B))
            }
            .expect("every key is loaded");
            sum = sum.wrapping_add(b);
            if real {
                if let Some((p, flag, raised)) = &self.expect {
                    if *p == piece {
                        assert_eq!(
                            flag.load(Ordering::SeqCst),
                            *raised,
                            "job {tag} piece {piece}"
                        );
                    }
                }
                if let Some(log) = &self.log {
                    log.lock()
                        .entry(tag)
                        .or_default()
                        .push((tx.id(), piece, k, b));
                }
            }
        }
        if real {
            if let Some((p, d)) = self.nap {
                if p == piece {
                    std::thread::sleep(d);
                }
            }
            if let Some((p, flag)) = &self.flag {
                if *p == piece {
                    flag.store(true, Ordering::SeqCst);
                }
            }
            self.ran |= 1 << piece;
        }
        if self.abort_at == Some(piece) && sum.rem_euclid(3) == 0 {
            return Err(Abort::user("the job's data says abort"));
        }
        Ok(())
    }
}

/// Hands out its jobs in order and counts what happened to them.
struct Jobs {
    jobs: Vec<Job>,
    next: usize,
    committed: Vec<i64>,
    aborted_for_good: Vec<i64>,
    retried: Vec<AbortReason>,
}

impl Jobs {
    fn new(jobs: Vec<Job>) -> Self {
        Jobs {
            jobs,
            next: 0,
            committed: Vec::new(),
            aborted_for_good: Vec::new(),
            retried: Vec::new(),
        }
    }
}

impl RequestSource for Jobs {
    type Program = Job;
    fn program(&self) -> Job {
        Job::default()
    }
    fn next(&mut self, p: &mut Job) -> Option<Ticket> {
        let job = self.jobs.get(self.next)?;
        p.clone_from(job);
        self.next += 1;
        Some(Ticket::now(job.tag as u64))
    }
    fn aborted(&mut self, reason: AbortReason) {
        self.retried.push(reason);
    }
    fn finished(&mut self, t: Ticket, outcome: Result<(), Abort>) {
        match outcome {
            Ok(()) => self.committed.push(t.tag as i64),
            Err(_) => self.aborted_for_good.push(t.tag as i64),
        }
    }
    fn seed(&self) -> u64 {
        1
    }
}

/// The jobs' committed tags, what the table holds, and each committed job's reads.
#[derive(Debug, PartialEq)]
struct Outcome {
    committed: Vec<i64>,
    state: Vec<(u64, i64, i64)>,
    reads: HashMap<i64, Vec<(usize, u64, i64)>>,
}

/// The last attempt's reads of each committed job, in piece order.
fn reads_of(log: &Log, committed: &[i64]) -> HashMap<i64, Vec<(usize, u64, i64)>> {
    let log = log.lock();
    committed
        .iter()
        .map(|tag| {
            let all = &log[tag];
            let last = all.iter().map(|e| e.0).max().unwrap_or(0);
            let mut v: Vec<_> = all
                .iter()
                .filter(|e| e.0 == last)
                .map(|e| (e.1, e.2, e.3))
                .collect();
            v.sort();
            (*tag, v)
        })
        .collect()
}

/// Runs `jobs` in order, one after another, on the kit's executor with nothing else running.
fn serial(jobs: &[Job]) -> Outcome {
    let db: Database<()> = fresh_db();
    let ledger = IdLedger::new();
    let mut st = ExecState::new(ledger.lease(0), false);
    let log: Log = Arc::default();
    let mut committed = Vec::new();
    for job in jobs {
        let mut job = Job {
            log: Some(Arc::clone(&log)),
            expect: None,
            nap: None,
            flag: None,
            ..job.clone()
        };
        let mut tx = ExecTx::new(&db, &mut st, Cover::All);
        if run_pieces(&mut job, &mut tx).is_ok() {
            tx.commit().unwrap();
            committed.push(job.tag);
        }
    }
    committed.sort();
    Outcome {
        reads: reads_of(&log, &committed),
        committed,
        state: Mixed::dump(&db),
    }
}

/// Runs `jobs` under PWV flavour `G` on `workers` threads with batches of `batch`: worker `i` gets
/// jobs `i, i + workers, …`, so with batches a multiple of the workers the batch order is the
/// list's.
fn run_pwv<G: Granularity>(jobs: &[Job], workers: usize, batch: usize) -> Outcome {
    let config = ProtocolConfig::with_threads(workers)
        .with_knob(&BATCH_KNOB, &batch.to_string())
        .unwrap();
    let p = Pwv::<G>::open(fresh_db(), &config);
    let log: Log = Arc::default();
    let mut committed: Vec<i64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let mine: Vec<Job> = jobs
                    .iter()
                    .skip(w)
                    .step_by(workers)
                    .map(|j| Job {
                        log: Some(Arc::clone(&log)),
                        ..j.clone()
                    })
                    .collect();
                let p = &p;
                s.spawn(move || {
                    let mut worker = p.worker(w as u32, false);
                    let mut src = Jobs::new(mine);
                    p.run_worker(&mut worker, &mut src);
                    assert!(src.retried.is_empty(), "{:?}", src.retried);
                    src.committed
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    committed.sort();
    Outcome {
        reads: reads_of(&log, &committed),
        committed,
        state: Mixed::dump(p.db()),
    }
}

/// Random jobs over `keys` keys of the test table: 1–5 pieces of 1–3 accesses, a third with a
/// commit point and a data-dependent abort before it, a third with data edges.
fn random_jobs(seed: u64, n: usize, keys: u64) -> Vec<Job> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let pieces: Vec<Vec<(u64, bool)>> = (0..rng.gen_range(1..=5))
                .map(|_| {
                    (0..rng.gen_range(1..=3))
                        .map(|_| (rng.gen_range(0..keys), rng.gen_bool(0.6)))
                        .collect()
                })
                .collect();
            let np = pieces.len();
            let mut job = Job {
                tag: i as i64 + 1,
                pieces,
                ..Job::default()
            };
            if np > 1 && rng.gen_bool(0.35) {
                let cp = rng.gen_range(0..np - 1);
                job.commit_point = Some(cp);
                job.abort_at = Some(rng.gen_range(0..=cp));
            }
            if rng.gen_bool(0.35) {
                job.deps = (0..np)
                    .map(|p| (0..p).filter(|_| rng.gen_bool(0.5)).collect())
                    .collect();
            }
            job
        })
        .collect()
}

#[test]
fn every_batch_equals_the_serial_run_in_batch_order_on_any_number_of_workers() {
    for seed in 0..4 {
        let jobs = random_jobs(seed, 240, 12);
        let expected = serial(&jobs);
        assert!(
            expected.committed.len() < jobs.len() && expected.committed.len() > jobs.len() / 2,
            "some jobs abort, most commit: {}",
            expected.committed.len()
        );
        for workers in 1..=4 {
            // One batch, then batches of 12 (a multiple of every worker count).
            for batch in [jobs.len(), 12] {
                let got = run_pwv::<Fine>(&jobs, workers, batch);
                assert_eq!(
                    got, expected,
                    "seed {seed}, {workers} workers, batches of {batch}"
                );
            }
        }
    }
}

#[test]
fn units_fine_and_coarse_give_the_serial_result() {
    let mut jobs = random_jobs(9, 240, 24);
    for j in &mut jobs {
        j.units = true;
    }
    let expected = serial(&jobs);
    for workers in [1, 2, 4] {
        assert_eq!(
            run_pwv::<Fine>(&jobs, workers, 24),
            expected,
            "pwv, {workers}"
        );
        assert_eq!(
            run_pwv::<Coarse>(&jobs, workers, 24),
            expected,
            "pwv-coarse, {workers}"
        );
    }
}

#[test]
fn an_aborted_transaction_leaves_no_trace_and_never_runs_past_its_commit_point() {
    // Key 0's b starts at 0 (a multiple of 3): job 1 aborts at piece 1, after piece 0 wrote keys 1
    // and 2 (undone) and before piece 2, past the commit point, would write key 3.
    let ran_past = Arc::new(AtomicBool::new(false));
    let aborting = Job {
        tag: 1,
        pieces: vec![
            vec![(1, true), (2, true)],
            vec![(0, false)],
            vec![(3, true)],
        ],
        commit_point: Some(1),
        abort_at: Some(1),
        flag: Some((2, Arc::clone(&ran_past))),
        ..Job::default()
    };
    // Aborts at piece 1 while piece 2, abortable too, is still to come: it is skipped.
    let twice = Job {
        tag: 2,
        pieces: vec![
            vec![(4, true)],
            vec![(0, false)],
            vec![(0, false)],
            vec![(5, true)],
        ],
        commit_point: Some(2),
        abort_at: Some(1),
        ..Job::default()
    };
    let reader = Job {
        tag: 3,
        pieces: vec![vec![
            (1, false),
            (2, false),
            (3, false),
            (4, false),
            (5, false),
        ]],
        ..Job::default()
    };
    let jobs = vec![aborting, twice, reader];
    let expected = serial(&jobs);
    assert_eq!(expected.committed, [3]);
    for workers in [1, 2] {
        let got = run_pwv::<Fine>(&jobs, workers, 3);
        assert_eq!(got, expected, "{workers} workers");
        assert!(
            !ran_past.load(Ordering::SeqCst),
            "a piece past the commit point ran"
        );
        // The reader saw the loaded values: nothing of the aborted writes.
        assert!(
            got.reads[&3].iter().all(|&(_, _, b)| b == 0),
            "{:?}",
            got.reads[&3]
        );
    }
}

/// Keys on two different partitions of two, so that their pieces run on different cores.
fn two_partitions() -> (u64, u64) {
    let a = (0..32)
        .find(|&k| GKey::record(T, k).partition(2) == 0)
        .unwrap();
    let b = (0..32)
        .find(|&k| GKey::record(T, k).partition(2) == 1)
        .unwrap();
    (a, b)
}

#[test]
fn a_write_past_the_commit_point_is_read_before_its_transaction_ends() {
    // Job 1 writes x (no commit point: certain to commit), then naps on y. Job 2 reads x: it may
    // read job 1's write at once, while job 1 still naps (early write visibility), and it does.
    let (x, y) = two_partitions();
    let done = Arc::new(AtomicBool::new(false));
    let writer = Job {
        tag: 1,
        pieces: vec![vec![(x, true)], vec![(y, true)]],
        deps: vec![vec![], vec![0]],
        nap: Some((1, Duration::from_millis(300))),
        flag: Some((1, Arc::clone(&done))),
        ..Job::default()
    };
    let reader = Job {
        tag: 2,
        pieces: vec![vec![(x, false)]],
        expect: Some((0, Arc::clone(&done), false)),
        ..Job::default()
    };
    let got = run_pwv::<Fine>(&[writer.clone(), reader.clone()], 2, 2);
    assert_eq!(got, serial(&[writer, reader]));
    assert_eq!(
        got.reads[&2],
        [(0, x, 1)],
        "the reader saw the writer's b = 3·0 + 1"
    );
}

#[test]
fn a_write_before_the_commit_point_is_read_only_after_the_decision() {
    // Job 1 writes x, then naps in its last abortable piece on y: job 2's read of x must wait for
    // the decision (constraint 1a), so it sees the flag the nap raises.
    let (x, y) = two_partitions();
    let decided = Arc::new(AtomicBool::new(false));
    let writer = Job {
        tag: 1,
        pieces: vec![vec![(x, true)], vec![(y, true)]],
        deps: vec![vec![], vec![0]],
        commit_point: Some(1),
        nap: Some((1, Duration::from_millis(200))),
        flag: Some((1, Arc::clone(&decided))),
        ..Job::default()
    };
    let reader = Job {
        tag: 2,
        pieces: vec![vec![(x, false)]],
        expect: Some((0, Arc::clone(&decided), true)),
        ..Job::default()
    };
    let got = run_pwv::<Fine>(&[writer.clone(), reader.clone()], 2, 2);
    assert_eq!(got, serial(&[writer, reader]));
}

/// A program whose piece 1 updates key 10 or key 20 depending on how often piece 0 ran: the
/// reconnaissance sees one, the run the other.
#[derive(Default)]
struct Fickle {
    runs: u32,
    target: u64,
}

impl Program for Fickle {
    fn name(&self) -> &'static str {
        "Fickle"
    }
    fn pieces(&self) -> usize {
        2
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let k = if piece == 0 { 0 } else { self.target };
        out.push(Access::update(T, k, ColumnSet::ALL, ColumnSet::ALL));
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        out.extend(0..piece);
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        if piece == 0 {
            self.runs += 1;
            // Only the first real run (the program's second run of piece 0) strays.
            self.target = if self.runs == 2 { 20 } else { 10 };
        }
        let k = if piece == 0 { 0 } else { self.target };
        tx.update(T, k, ColumnSet::ALL, |r| r.set_int(B, r.int(B) + 1))?;
        Ok(())
    }
}

/// Hands out one Fickle program and counts its retries.
struct OneFickle {
    given: bool,
    retried: Vec<AbortReason>,
    outcome: Option<Result<(), Abort>>,
}

impl RequestSource for OneFickle {
    type Program = Fickle;
    fn program(&self) -> Fickle {
        Fickle::default()
    }
    fn next(&mut self, p: &mut Fickle) -> Option<Ticket> {
        if std::mem::replace(&mut self.given, true) {
            return None;
        }
        *p = Fickle::default();
        Some(Ticket::now(0))
    }
    fn aborted(&mut self, reason: AbortReason) {
        self.retried.push(reason);
    }
    fn finished(&mut self, _: Ticket, outcome: Result<(), Abort>) {
        self.outcome = Some(outcome);
    }
    fn seed(&self) -> u64 {
        1
    }
}

#[test]
fn a_stale_reconnaissance_aborts_undoes_and_runs_again_in_the_next_batch() {
    let p = Pwv::<Fine>::open(fresh_db(), &ProtocolConfig::default());
    let mut w = p.worker(0, true);
    let mut src = OneFickle {
        given: false,
        retried: Vec::new(),
        outcome: None,
    };
    p.run_worker(&mut w, &mut src);
    assert_eq!(
        src.retried,
        [AbortReason::Validation],
        "the first attempt strays"
    );
    assert!(matches!(src.outcome, Some(Ok(()))));
    let mut tx = p.begin(&mut w);
    let b = |tx: &mut HoldingTx<'_, (), Between<'_>>, k| {
        tx.get(T, k, ColumnSet::ALL).unwrap().unwrap().int(B)
    };
    // Attempt 1 (undone): key 0 and key 20 (its reconnaissance saw 10). Attempt 2: key 0 and, as
    // its reconnaissance saw, key 10.
    assert_eq!((b(&mut tx, 0), b(&mut tx, 10), b(&mut tx, 20)), (1, 1, 0));
    tx.commit().unwrap();
    let report = crate::check::check(&crate::check::History {
        txns: Pwv::<Fine>::recorder(&mut w).take(),
    });
    assert_eq!(
        report.committed, 2,
        "the retry and the interactive check: {report}"
    );
    assert!(
        report.is_serializable() && report.anomalies.is_empty(),
        "{report}"
    );
}

#[test]
fn contended_histories_check_and_interactive_transactions_wait_between_batches() {
    checked_history::<Pwv<Fine>>();
    checked_history::<Pwv<Coarse>>();
    interactive_alongside_worker_loop::<Pwv<Fine>>();
}

#[test]
fn the_batch_knob_is_read_and_checked() {
    let p = Pwv::<Fine>::open(
        fresh_db(),
        &ProtocolConfig::default()
            .with_knob(&BATCH_KNOB, "5000")
            .unwrap(),
    );
    assert_eq!(p.batch, 5000);
    assert_eq!(
        Pwv::<Coarse>::open(fresh_db(), &ProtocolConfig::default()).batch,
        10_000
    );
    assert!(ProtocolConfig::default()
        .with_knob(&BATCH_KNOB, "0")
        .is_err());
}
