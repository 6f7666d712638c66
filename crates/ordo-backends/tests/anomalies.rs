//! The classic anomalies, as exact schedules, on each engine at the weak level DIBS runs it at
//! (MariaDB READ UNCOMMITTED, PostgreSQL READ COMMITTED: [`Backend::weak_level`]), twice:
//!
//! * **without DIBS** (statements sent straight to the engine): the anomaly that level allows is
//!   observed — the engine alone at that level does not prevent it;
//! * **with DIBS** (every statement takes its predicate lock first, serializable): the anomaly
//!   does not happen. The conflicting step either waits in the lock manager until the other
//!   transaction committed (or rolled back) and released, or — when the two wait for each other —
//!   one of them gets DIBS's lock timeout ([`Retry::LockTimeout`]), rolls back, releases and runs
//!   again; the final state is then one a serial execution gives.
//!
//! | anomaly | schedule | without DIBS | with DIBS |
//! |---|---|---|---|
//! | lost update | r1(x) r2(x) w1(x) c1 w2(x) c2 | x ends +1 | deadlock in the lock manager, one aborts and is retried: x ends +2 |
//! | write skew | r1(x,y) r2(x,y) w1(x) w2(y) c1 c2 | x + y = 0 | as above: x + y = 1 |
//! | phantom | count1[10,20] i3(25) c3 i2(15) c2 count1[10,20] c1 | the counts differ | i2 waits for c1 (equal counts), i3 is not held up |
//! | dirty read | w1(x=99) r2(x) a1 c2 | MariaDB: r2 sees 99; PostgreSQL never shows it | r2 waits for a1 and sees the old value |
//!
//! SQLite gets only the DIBS half: it is serializable by itself (one writer at a time, readers on
//! a snapshot), so there is no weaker level whose anomalies DIBS would have to prevent; the DIBS
//! schedules still must block, abort and retry as on the servers, and end in serial states. The
//! transactions that read before they write begin DEFERRED (`Intent::Read`): begun IMMEDIATE, the
//! second would wait for the first in SQLite before DIBS saw either. One thing only SQLite adds:
//! a restarted write-skew transaction may read through a snapshot older than its DIBS lock (see
//! [`assert_dibs_aborts`]), and SQLite then refuses its write (`SQLITE_BUSY_SNAPSHOT`).
//!
//! How a schedule runs: each transaction is a thread with its own connection (and, with DIBS, its
//! own lock context), told step by step over a channel what to run next. The scheduler sends one
//! step and waits for it a while: a step that does not finish within that time is *blocked*, and
//! the scheduler goes on with the next step of the schedule (a later step of the same transaction
//! queues behind it). A step that fails with a retryable abort rolls its transaction back,
//! releases its locks, and runs the whole transaction again at once on its own (DIBS's restart),
//! skipping what the schedule still had for it. Every wait is bounded: the scheduler's waits are
//! timed receives, the lock manager's waits end at its timeout, and the engines' own lock waits at
//! theirs (MariaDB's `innodb_lock_wait_timeout` is set to 5 s here, PostgreSQL's connections set
//! `lock_timeout` = 5 s). The schedules are chosen so that, without DIBS, no step waits for an
//! engine row lock (in the lost update the first writer commits before the second writes).
//!
//! The servers are found as `tests/common` says (`ORDO_MARIADB_URL`, `ORDO_POSTGRES_URL`; a
//! missing server skips its tests with one line unless `ORDO_REQUIRE_SERVERS=1`). Each test works
//! in a table of its own, `ordo_anom_<name>_<pid>`, and drops it. What each run observed is
//! printed (`cargo test --test anomalies -- --nocapture`).

mod common;

use ordo_backends::session::{Dibs, Session};
use ordo_backends::sqlite::Sqlite;
use ordo_backends::workloads::{lock_specs, StmtDef, TableDef};
use ordo_backends::{Backend, Conn, Error, Intent, Level, Result, Retry, Stmt, Value};
use ordo_predicate::StatementKind::{Insert, Select, Update};
use ordo_predicate::{Config, Isolation, LockManager, Optimizations};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the scheduler waits for a step that should run at once (it does, in milliseconds).
const RUNS: Duration = Duration::from_secs(5);
/// How long it waits, at most, for every step still running once the schedule was sent.
const DRAIN: Duration = Duration::from_secs(30);
/// Restarts of one transaction before the test gives up on it.
const MAX_ATTEMPTS: usize = 50;

/// Where DIBS makes a step wait for the other transaction's commit: the lock wait must outlast
/// the rest of the schedule, so the lock timeout is long, and a step counts as blocked after…
const WAIT_FOR_COMMIT: Config = Config {
    timeout: Duration::from_secs(2),
    jitter: Duration::ZERO,
};
/// …this long.
const BLOCKED_AFTER: Duration = Duration::from_millis(300);

/// Where the two transactions end up waiting for each other in the lock manager: a short timeout
/// (plus as much jitter, so one usually gives up first) breaks the deadlock. The scheduler sends
/// the second conflicting write well before the first one's timeout can pass.
const BREAK_DEADLOCK: Config = Config {
    timeout: Duration::from_millis(150),
    jitter: Duration::from_millis(150),
};
const DEADLOCK_BLOCKED_AFTER: Duration = Duration::from_millis(40);

// ---------------------------------------------------------------------------------------------
// Engines and tables.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Engine {
    Sqlite,
    Mariadb,
    Postgres,
}

/// A backend under test, with the temporary directory of a SQLite database.
struct Db {
    engine: Engine,
    backend: Arc<dyn Backend>,
    _dir: Option<tempfile::TempDir>,
}

impl Db {
    /// The engine's backend, or `None` (test skipped) when its server is down.
    fn open(engine: Engine) -> Option<Db> {
        let name = match engine {
            Engine::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                // A short busy timeout: no schedule here should ever wait for SQLite's write lock.
                let db = Sqlite::new(&dir.path().join("anomalies.db"))
                    .unwrap()
                    .busy_timeout(Duration::from_secs(1));
                return Some(Db {
                    engine,
                    backend: Arc::new(db),
                    _dir: Some(dir),
                });
            }
            Engine::Mariadb => "mariadb",
            Engine::Postgres => "postgres",
        };
        common::server(name).map(|backend| Db {
            engine,
            backend,
            _dir: None,
        })
    }

    fn name(&self) -> &'static str {
        self.backend.name()
    }

    /// A connection whose own lock waits are bounded (PostgreSQL's connections set
    /// `lock_timeout` themselves; MariaDB's default wait is 50 s).
    fn connect(&self) -> Box<dyn Conn> {
        let mut c = self.backend.connect().unwrap();
        if self.engine == Engine::Mariadb {
            c.batch("SET SESSION innodb_lock_wait_timeout = 5").unwrap();
        }
        c
    }
}

/// A test's table `(k, v)`, created afresh with `rows`, dropped when the test ends (even by a
/// panic).
struct Table<'a> {
    db: &'a Db,
    name: String,
}

impl<'a> Table<'a> {
    fn create(db: &'a Db, test: &str, rows: &[(i64, i64)]) -> Table<'a> {
        let name = format!("ordo_anom_{test}_{}", std::process::id());
        let mut c = db.connect();
        c.batch(&format!("DROP TABLE IF EXISTS {name}")).unwrap();
        c.batch(&format!(
            "CREATE TABLE {name} (k BIGINT PRIMARY KEY, v BIGINT)"
        ))
        .unwrap();
        let values: Vec<String> = rows.iter().map(|(k, v)| format!("({k}, {v})")).collect();
        c.batch(&format!(
            "INSERT INTO {name} (k, v) VALUES {}",
            values.join(", ")
        ))
        .unwrap();
        Table { db, name }
    }

    /// Every row, by key, read outside any transaction once the schedule is over.
    fn rows(&self) -> Vec<(i64, i64)> {
        let mut c = self.db.connect();
        let sql = format!("SELECT k, v FROM {} ORDER BY k", self.name);
        let mut out = Vec::new();
        c.query(&Stmt { id: 0, sql: &sql }, &[], &mut out).unwrap();
        out.iter()
            .map(|r| (r[0].int().unwrap(), r[1].int().unwrap()))
            .collect()
    }

    fn value(&self, k: i64) -> i64 {
        let rows = self.rows();
        rows.iter()
            .find(|r| r.0 == k)
            .unwrap_or_else(|| panic!("no row {k} in {rows:?}"))
            .1
    }

    /// The statements of every schedule, each with its DIBS request template: point statements
    /// lock `c0 = $1` (the key), the scan `c0 BETWEEN $1 AND $2`; column 0 is `k`, column 1 `v`.
    fn statements(&self) -> Vec<StmtDef> {
        let t = &self.name;
        vec![
            // READ: reads the key (its predicate) and v.
            StmtDef::new(
                "read",
                format!("SELECT v FROM {t} WHERE k = ?"),
                0,
                Select,
                "c0 = $1",
            )
            .reads(&[0, 1])
            .locking(&[0]),
            // WRITE: finds the row by its key, writes v only.
            StmtDef::new(
                "write",
                format!("UPDATE {t} SET v = ? WHERE k = ?"),
                0,
                Update,
                "c0 = $1",
            )
            .reads(&[0])
            .writes(&[1])
            .locking(&[1]),
            // COUNT: reads only the keys of the range (v is not looked at).
            StmtDef::new(
                "count",
                format!("SELECT COUNT(*) FROM {t} WHERE k BETWEEN ? AND ?"),
                0,
                Select,
                "c0 BETWEEN $1 AND $2",
            )
            .reads(&[0])
            .locking(&[0, 1]),
            // INSERT: writes a whole row (the lock manager makes an insert write every column).
            StmtDef::new(
                "insert",
                format!("INSERT INTO {t} (k, v) VALUES (?, ?)"),
                0,
                Insert,
                "c0 = $1",
            )
            .reads(&[0, 1])
            .writes(&[0, 1])
            .locking(&[0]),
        ]
    }
}

impl Drop for Table<'_> {
    fn drop(&mut self) {
        if let Ok(mut c) = self.db.backend.connect() {
            let _ = c.batch(&format!("DROP TABLE IF EXISTS {}", self.name));
        }
    }
}

const READ: usize = 0;
const WRITE: usize = 1;
const COUNT: usize = 2;
const INSERT: usize = 3;

fn lock_manager(stmts: &[StmtDef], config: Config) -> LockManager {
    let table = TableDef {
        name: "ordo_anom",
        ddl: Vec::new(),
        width: 2,
    };
    let (relations, templates) = lock_specs(&[table], stmts).unwrap();
    LockManager::new(relations, templates, Optimizations::full(), config).unwrap()
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

/// Runs query `id` through `s`; its one row's one integer.
fn one(s: &mut Session<'_>, id: usize, params: &[Value]) -> Result<i64> {
    match s.query(id, params)? {
        [row] => row[0]
            .int()
            .ok_or_else(|| Error::Input(format!("not an integer: {row:?}"))),
        rows => Err(Error::Input(format!("expected one row, got {rows:?}"))),
    }
}

// ---------------------------------------------------------------------------------------------
// Transactions and schedules.

/// A step's work: statements through the session, the values it read pushed onto `seen`.
type Work = dyn Fn(&mut Session<'_>, &mut Vec<i64>) -> Result<()> + Sync;

enum Step {
    Run(&'static str, Box<Work>),
    Commit,
    Rollback,
}

impl Step {
    fn run(
        label: &'static str,
        f: impl Fn(&mut Session<'_>, &mut Vec<i64>) -> Result<()> + Sync + 'static,
    ) -> Step {
        Step::Run(label, Box::new(f))
    }

    fn label(&self) -> &'static str {
        match self {
            Step::Run(l, _) => l,
            Step::Commit => "commit",
            Step::Rollback => "rollback",
        }
    }

    /// Runs the step (a commit or a rollback ends the engine transaction; the caller releases).
    fn exec(&self, s: &mut Session<'_>, seen: &mut Vec<i64>) -> Result<()> {
        match self {
            Step::Run(_, f) => f(s, seen),
            Step::Commit => s.conn.commit(),
            Step::Rollback => s.conn.rollback(),
        }
    }
}

/// A transaction: its steps, the last a commit or a rollback.
struct Txn {
    name: &'static str,
    /// SQLite: `Read` begins DEFERRED (the lock is taken at the first write), `Write` IMMEDIATE.
    /// The servers ignore it.
    intent: Intent,
    steps: Vec<Step>,
}

/// How long the scheduler waits for a step before it counts as blocked.
#[derive(Clone, Copy)]
enum Wait {
    /// It must run at once.
    Runs,
    /// DIBS may hold it up.
    MayBlock,
}

/// `(transaction, step, wait)`.
type Schedule = [(usize, usize, Wait)];

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Ok,
    /// The transaction had already ended (restarted and finished on its own).
    Skipped,
    /// A retryable abort; the transaction was then rolled back, restarted and run to its end.
    Aborted(Retry),
    Failed(String),
}

/// A step's end, told the scheduler.
struct Done {
    txn: usize,
    step: usize,
    outcome: Outcome,
    /// When its work ended (for a commit or rollback: before the locks were released).
    at: Duration,
}

/// What happened to one transaction.
#[derive(Debug, Default)]
struct TxnReport {
    /// Retryable aborts, in order; each was followed by a restart.
    aborts: Vec<Retry>,
    /// The engine's or the lock manager's message of each abort.
    errors: Vec<String>,
    /// What the attempt that ended read, in order.
    seen: Vec<i64>,
    /// Whether it ended with its own commit or rollback (after restarts or not).
    finished: bool,
    failure: Option<String>,
}

struct StepReport {
    txn: usize,
    step: usize,
    label: String,
    blocked: bool,
    outcome: Outcome,
    at: Duration,
}

/// What a schedule did.
struct Run {
    steps: Vec<StepReport>,
    txns: Vec<TxnReport>,
}

impl Run {
    fn step(&self, txn: usize, step: usize) -> &StepReport {
        self.steps
            .iter()
            .find(|s| s.txn == txn && s.step == step)
            .expect("a scheduled step")
    }

    fn aborts(&self) -> Vec<Retry> {
        self.txns.iter().flat_map(|t| t.aborts.clone()).collect()
    }

    fn blocked(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter(|s| s.blocked)
            .map(|s| s.label.as_str())
            .collect()
    }

    /// One line: which steps were held up, which transactions aborted and how they ended.
    fn describe(&self, txns: &[Txn]) -> String {
        let mut s = String::new();
        let blocked = self.blocked();
        if blocked.is_empty() {
            s.push_str("nothing blocked");
        } else {
            let _ = write!(s, "blocked: {}", blocked.join(", "));
        }
        let mut aborted = false;
        for (t, r) in txns.iter().zip(&self.txns) {
            if !r.aborts.is_empty() {
                aborted = true;
                // DIBS's own timeouts by name; an engine's abort with its message.
                let why: Vec<String> = r
                    .aborts
                    .iter()
                    .zip(&r.errors)
                    .map(|(w, e)| match w {
                        Retry::LockTimeout => w.name().to_owned(),
                        _ => format!("{}: {e}", w.name()),
                    })
                    .collect();
                let _ = write!(
                    s,
                    "; {} aborted ({}) and was retried{}",
                    t.name,
                    why.join(", "),
                    if r.finished { " to its end" } else { "" }
                );
            }
        }
        if !aborted {
            s.push_str("; no aborts");
        }
        s
    }

    /// Every transaction ran to its own end, without an error that is not a retryable abort.
    fn assert_finished(&self, txns: &[Txn]) {
        for (t, r) in txns.iter().zip(&self.txns) {
            assert!(r.failure.is_none(), "{}: {:?}", t.name, r.failure);
            assert!(r.finished, "{} did not finish: {r:?}", t.name);
        }
        for s in &self.steps {
            assert!(
                !matches!(s.outcome, Outcome::Failed(_)),
                "{}: {:?}",
                s.label,
                s.outcome
            );
        }
    }

    /// Without DIBS: nothing waited, nothing aborted.
    fn assert_undisturbed(&self, txns: &[Txn]) {
        self.assert_finished(txns);
        assert!(self.blocked().is_empty(), "blocked: {:?}", self.blocked());
        assert!(self.aborts().is_empty(), "aborts: {:?}", self.aborts());
        for s in &self.steps {
            assert_eq!(s.outcome, Outcome::Ok, "{}", s.label);
        }
    }
}

/// One transaction's thread: runs the steps it is sent, in order; after a retryable abort it
/// rolls back, releases, and runs the whole transaction again until it ends (or fails for
/// another reason), answering the steps the schedule still sends with `Skipped`.
fn worker(
    index: usize,
    txn: &Txn,
    mut s: Session<'_>,
    level: Level,
    steps: mpsc::Receiver<usize>,
    done: mpsc::Sender<Done>,
    start: Instant,
) -> TxnReport {
    let mut report = TxnReport::default();
    let mut seen = Vec::new();
    let mut open = false;
    let mut ended = false;
    while let Ok(step) = steps.recv() {
        let outcome = if ended {
            Outcome::Skipped
        } else {
            let r = if open {
                Ok(())
            } else {
                open = true;
                s.conn.begin(level, txn.intent)
            }
            .and_then(|()| txn.steps[step].exec(&mut s, &mut seen));
            match r {
                Ok(()) => {
                    if matches!(txn.steps[step], Step::Commit | Step::Rollback) {
                        // Strict 2PL: the locks go only once the engine's commit returned.
                        let at = start.elapsed();
                        s.release();
                        ended = true;
                        report.finished = true;
                        report.seen = seen.clone();
                        let _ = done.send(Done {
                            txn: index,
                            step,
                            outcome: Outcome::Ok,
                            at,
                        });
                        continue;
                    }
                    Outcome::Ok
                }
                Err(e) => {
                    let _ = s.conn.rollback();
                    s.release();
                    ended = true;
                    match e.retry() {
                        Some(why) => {
                            report.aborts.push(why);
                            report.errors.push(e.to_string());
                            restart(txn, &mut s, level, &mut report);
                            Outcome::Aborted(why)
                        }
                        None => {
                            report.failure = Some(e.to_string());
                            Outcome::Failed(e.to_string())
                        }
                    }
                }
            }
        };
        let _ = done.send(Done {
            txn: index,
            step,
            outcome,
            at: start.elapsed(),
        });
    }
    if open && !ended {
        // The schedule stopped early (a failed test): leave nothing open.
        let _ = s.conn.rollback();
        s.release();
    }
    report
}

/// DIBS's restart: the whole transaction again, from its first step, until it ends.
fn restart(txn: &Txn, s: &mut Session<'_>, level: Level, report: &mut TxnReport) {
    for _ in 0..MAX_ATTEMPTS {
        let mut seen = Vec::new();
        let r = s.conn.begin(level, txn.intent).and_then(|()| {
            txn.steps
                .iter()
                .try_for_each(|step| step.exec(s, &mut seen))
        });
        match r {
            Ok(()) => {
                s.release();
                report.finished = true;
                report.seen = seen;
                return;
            }
            Err(e) => {
                let _ = s.conn.rollback();
                s.release();
                match e.retry() {
                    Some(why) => {
                        report.aborts.push(why);
                        report.errors.push(e.to_string());
                    }
                    None => {
                        report.failure = Some(e.to_string());
                        return;
                    }
                }
            }
        }
    }
    report.failure = Some(format!("still aborting after {MAX_ATTEMPTS} attempts"));
}

/// Runs `schedule` over `txns` on `db` at the engine's weak level; with a lock manager when
/// `dibs` gives its configuration (a step that may block counts as blocked after `blocked_after`).
fn run(
    db: &Db,
    stmts: &[StmtDef],
    txns: &[Txn],
    schedule: &Schedule,
    dibs: Option<(Config, Duration)>,
) -> Run {
    let level = db.backend.weak_level();
    let plm = dibs.map(|(config, _)| lock_manager(stmts, config));
    let conns: Vec<Box<dyn Conn>> = txns.iter().map(|_| db.connect()).collect();
    let start = Instant::now();
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        let mut senders = Vec::new();
        let mut handles = Vec::new();
        for (i, (txn, conn)) in txns.iter().zip(conns).enumerate() {
            let (tx, rx) = mpsc::channel::<usize>();
            senders.push(tx);
            let done = done_tx.clone();
            let plm = plm.as_ref();
            handles.push(scope.spawn(move || {
                let dibs = plm.map(|plm| Dibs {
                    plm,
                    txn: plm.begin(Isolation::Serializable),
                });
                worker(
                    i,
                    txn,
                    Session::new(conn, dibs, stmts),
                    level,
                    rx,
                    done,
                    start,
                )
            }));
        }
        drop(done_tx);
        let mut ends: HashMap<(usize, usize), Done> = HashMap::new();
        let mut blocked = Vec::new();
        for &(t, step, wait) in schedule {
            senders[t].send(step).unwrap();
            let patience = match (wait, dibs) {
                (Wait::MayBlock, Some((_, after))) => after,
                _ => RUNS,
            };
            let deadline = Instant::now() + patience;
            while !ends.contains_key(&(t, step)) {
                match done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(d) => {
                        ends.insert((d.txn, d.step), d);
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        blocked.push((t, step));
                        break;
                    }
                    Err(RecvTimeoutError::Disconnected) => panic!("a worker died"),
                }
            }
        }
        // Whatever is still queued runs; then the workers end.
        drop(senders);
        let deadline = Instant::now() + DRAIN;
        while ends.len() < schedule.len() {
            match done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(d) => {
                    ends.insert((d.txn, d.step), d);
                }
                Err(e) => panic!(
                    "steps did not finish ({e:?}): {} of {}",
                    ends.len(),
                    schedule.len()
                ),
            }
        }
        let reports: Vec<TxnReport> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let steps = schedule
            .iter()
            .map(|&(t, step, _)| {
                let d = &ends[&(t, step)];
                StepReport {
                    txn: t,
                    step,
                    label: format!("{} {}", txns[t].name, txns[t].steps[step].label()),
                    blocked: blocked.contains(&(t, step)),
                    outcome: d.outcome.clone(),
                    at: d.at,
                }
            })
            .collect();
        Run {
            steps,
            txns: reports,
        }
    })
}

/// Prints what a run observed (shown with `--nocapture`).
fn observed(db: &Db, anomaly: &str, dibs: bool, what: &str, run: &Run, txns: &[Txn]) {
    let how = if dibs {
        "with DIBS".to_owned()
    } else {
        format!("{} without DIBS", db.backend.weak_level().sql())
    };
    eprintln!(
        "[{}] {anomaly}, {how}: {what}; {}",
        db.name(),
        run.describe(txns)
    );
}

/// The deadlock was broken by DIBS's lock timeout. On SQLite a restart may also meet SQLite's
/// own refusal to let a transaction write on a stale snapshot (`SQLITE_BUSY_SNAPSHOT`, a
/// [`Retry::Busy`]): a DEFERRED transaction's snapshot is taken at its first read, and a later
/// read whose DIBS lock was granted only after another transaction's commit still reads that
/// snapshot; its write is then refused, and it runs again.
fn assert_dibs_aborts(db: &Db, run: &Run) {
    let aborts = run.aborts();
    assert!(
        aborts.contains(&Retry::LockTimeout),
        "the deadlock was not broken by DIBS's lock timeout: {aborts:?}"
    );
    let engine_may = |w: Retry| db.engine == Engine::Sqlite && w == Retry::Busy;
    assert!(
        aborts
            .iter()
            .all(|&w| w == Retry::LockTimeout || engine_may(w)),
        "aborts other than DIBS's lock timeout: {aborts:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// 1. Lost update: r1(x) r2(x) w1(x = r1 + 1) c1 w2(x = r2 + 1) c2.

fn lost_update_txns() -> Vec<Txn> {
    let txn = |name| Txn {
        name,
        // SQLite: DEFERRED, so that both can read before either writes (IMMEDIATE would make
        // the second wait for the first in SQLite before DIBS saw anything).
        intent: Intent::Read,
        steps: vec![
            Step::run("reads x", |s, seen| {
                seen.push(one(s, READ, &[int(1)])?);
                Ok(())
            }),
            Step::run("writes x", |s, seen| {
                s.execute(WRITE, &[int(seen[0] + 1), int(1)]).map(drop)
            }),
            Step::Commit,
        ],
    };
    vec![txn("T1"), txn("T2")]
}

fn lost_update(engine: Engine) {
    let Some(db) = Db::open(engine) else { return };
    let txns = lost_update_txns();
    use Wait::*;
    let schedule = [
        (0, 0, Runs),
        (1, 0, Runs),
        (0, 1, MayBlock),
        (0, 2, MayBlock),
        (1, 1, MayBlock),
        (1, 2, MayBlock),
    ];
    if engine != Engine::Sqlite {
        let t = Table::create(&db, "lost_update", &[(1, 0)]);
        let r = run(&db, &t.statements(), &txns, &schedule, None);
        r.assert_undisturbed(&txns);
        let x = t.value(1);
        observed(
            &db,
            "lost update",
            false,
            &format!("x = {x} from 0, both committed"),
            &r,
            &txns,
        );
        assert_eq!(r.txns[0].seen, [0]);
        assert_eq!(r.txns[1].seen, [0]);
        assert_eq!(x, 1, "the lost update should happen without DIBS");
    }
    let t = Table::create(&db, "lost_update", &[(1, 0)]);
    let dibs = Some((BREAK_DEADLOCK, DEADLOCK_BLOCKED_AFTER));
    let r = run(&db, &t.statements(), &txns, &schedule, dibs);
    r.assert_finished(&txns);
    let x = t.value(1);
    observed(
        &db,
        "lost update",
        true,
        &format!("x = {x} from 0"),
        &r,
        &txns,
    );
    // Both wrote x after holding a read lock on it that the other's write conflicts with: they
    // wait for each other, and only an abort gets either one through.
    assert_dibs_aborts(&db, &r);
    assert_eq!(x, 2, "no lost update with DIBS");
    let mut seen: Vec<i64> = r.txns.iter().flat_map(|t| t.seen.clone()).collect();
    seen.sort_unstable();
    assert_eq!(seen, [0, 1], "a serial order: one read 0, the other 1");
}

#[test]
fn mariadb_lost_update() {
    lost_update(Engine::Mariadb);
}

#[test]
fn postgres_lost_update() {
    lost_update(Engine::Postgres);
}

#[test]
fn sqlite_lost_update() {
    lost_update(Engine::Sqlite);
}

// ---------------------------------------------------------------------------------------------
// 2. Write skew: x = y = 1 and the constraint x + y ≥ 1. Each reads both; T1 sets x = 0 and T2
//    sets y = 0 when they saw x + y ≥ 2.

fn write_skew_txns() -> Vec<Txn> {
    let txn = |name, key: i64| Txn {
        name,
        intent: Intent::Read,
        steps: vec![
            Step::run("reads x", |s, seen| {
                seen.push(one(s, READ, &[int(1)])?);
                Ok(())
            }),
            Step::run("reads y", |s, seen| {
                seen.push(one(s, READ, &[int(2)])?);
                Ok(())
            }),
            Step::run(
                if key == 1 { "sets x = 0" } else { "sets y = 0" },
                move |s, seen| {
                    if seen[0] + seen[1] >= 2 {
                        s.execute(WRITE, &[int(0), int(key)])?;
                    }
                    Ok(())
                },
            ),
            Step::Commit,
        ],
    };
    vec![txn("T1", 1), txn("T2", 2)]
}

fn write_skew(engine: Engine) {
    let Some(db) = Db::open(engine) else { return };
    let txns = write_skew_txns();
    use Wait::*;
    let schedule = [
        (0, 0, Runs),
        (0, 1, Runs),
        (1, 0, Runs),
        (1, 1, Runs),
        (0, 2, MayBlock),
        (1, 2, MayBlock),
        (0, 3, MayBlock),
        (1, 3, MayBlock),
    ];
    let rows = [(1, 1), (2, 1)];
    if engine != Engine::Sqlite {
        let t = Table::create(&db, "write_skew", &rows);
        let r = run(&db, &t.statements(), &txns, &schedule, None);
        r.assert_undisturbed(&txns);
        let (x, y) = (t.value(1), t.value(2));
        let what = format!("x = {x}, y = {y}: x + y = {} < 1, both committed", x + y);
        observed(&db, "write skew", false, &what, &r, &txns);
        assert_eq!(r.txns[0].seen, [1, 1]);
        assert_eq!(r.txns[1].seen, [1, 1]);
        assert_eq!((x, y), (0, 0), "the write skew should happen without DIBS");
    }
    let t = Table::create(&db, "write_skew", &rows);
    let dibs = Some((BREAK_DEADLOCK, DEADLOCK_BLOCKED_AFTER));
    let r = run(&db, &t.statements(), &txns, &schedule, dibs);
    r.assert_finished(&txns);
    let (x, y) = (t.value(1), t.value(2));
    let what = format!("x = {x}, y = {y}: x + y = {}", x + y);
    observed(&db, "write skew", true, &what, &r, &txns);
    assert_dibs_aborts(&db, &r);
    assert_eq!(x + y, 1, "the constraint holds with DIBS");
    // Serial: the first saw both on, the second (after the first's commit) one of them off.
    let mut sums: Vec<i64> = r.txns.iter().map(|t| t.seen.iter().sum()).collect();
    sums.sort_unstable();
    assert_eq!(sums, [1, 2], "{:?}", r.txns);
}

#[test]
fn mariadb_write_skew() {
    write_skew(Engine::Mariadb);
}

#[test]
fn postgres_write_skew() {
    write_skew(Engine::Postgres);
}

#[test]
fn sqlite_write_skew() {
    write_skew(Engine::Sqlite);
}

// ---------------------------------------------------------------------------------------------
// 3. Phantom: T1 counts k BETWEEN 10 AND 20, T3 inserts k = 25 (outside) and commits, T2 inserts
//    k = 15 (inside) and commits, T1 counts again and commits.

fn phantom_txns() -> Vec<Txn> {
    let count = |s: &mut Session<'_>, seen: &mut Vec<i64>| -> Result<()> {
        seen.push(one(s, COUNT, &[int(10), int(20)])?);
        Ok(())
    };
    let insert = |name, label, k: i64| Txn {
        name,
        intent: Intent::Write,
        steps: vec![
            Step::run(label, move |s, _| {
                s.execute(INSERT, &[int(k), int(0)]).map(drop)
            }),
            Step::Commit,
        ],
    };
    vec![
        Txn {
            name: "T1",
            intent: Intent::Read,
            steps: vec![
                Step::run("counts [10, 20]", count),
                Step::run("counts [10, 20] again", count),
                Step::Commit,
            ],
        },
        insert("T2", "inserts k = 15", 15),
        insert("T3", "inserts k = 25", 25),
    ]
}

fn phantom(engine: Engine) {
    let Some(db) = Db::open(engine) else { return };
    let txns = phantom_txns();
    use Wait::*;
    let schedule = [
        (0, 0, Runs),
        // Outside T1's range: must not wait for T1 (no false conflict).
        (2, 0, Runs),
        (2, 1, Runs),
        // Inside it: waits until T1 committed.
        (1, 0, MayBlock),
        (1, 1, MayBlock),
        (0, 1, Runs),
        (0, 2, Runs),
    ];
    let rows = [(10, 0), (12, 0), (20, 0), (30, 0)];
    if engine != Engine::Sqlite {
        let t = Table::create(&db, "phantom", &rows);
        let r = run(&db, &t.statements(), &txns, &schedule, None);
        r.assert_undisturbed(&txns);
        let c = &r.txns[0].seen;
        let what = format!("T1 counted {} then {}", c[0], c[1]);
        observed(&db, "phantom", false, &what, &r, &txns);
        assert_eq!(c, &[3, 4], "the phantom should appear without DIBS");
    }
    let t = Table::create(&db, "phantom", &rows);
    let r = run(
        &db,
        &t.statements(),
        &txns,
        &schedule,
        Some((WAIT_FOR_COMMIT, BLOCKED_AFTER)),
    );
    r.assert_finished(&txns);
    let c = &r.txns[0].seen;
    let what = format!("T1 counted {} then {}", c[0], c[1]);
    observed(&db, "phantom", true, &what, &r, &txns);
    assert!(r.aborts().is_empty(), "{:?}", r.aborts());
    assert_eq!(c, &[3, 3], "no phantom with DIBS");
    let t1_commit = r.step(0, 2);
    let inside = r.step(1, 0);
    let outside = r.step(2, 0);
    assert!(inside.blocked, "the insert of k = 15 should wait for T1");
    assert_eq!(inside.outcome, Outcome::Ok);
    assert!(
        inside.at > t1_commit.at,
        "k = 15 inserted before T1's commit"
    );
    assert!(
        !outside.blocked,
        "the insert of k = 25 waited (a false conflict)"
    );
    assert_eq!(outside.outcome, Outcome::Ok);
    assert!(outside.at < t1_commit.at);
    assert!(!r.step(2, 1).blocked);
    let keys: Vec<i64> = t.rows().iter().map(|r| r.0).collect();
    assert_eq!(keys, [10, 12, 15, 20, 25, 30]);
}

#[test]
fn mariadb_phantom() {
    phantom(Engine::Mariadb);
}

#[test]
fn postgres_phantom() {
    phantom(Engine::Postgres);
}

#[test]
fn sqlite_phantom() {
    phantom(Engine::Sqlite);
}

// ---------------------------------------------------------------------------------------------
// 4. Dirty read: T1 sets x = 99 and does not commit; T2 reads x; T1 rolls back; T2 commits.
//    MariaDB's READ UNCOMMITTED shows the dirty value; PostgreSQL runs READ UNCOMMITTED as READ
//    COMMITTED and never shows one (checked too).

fn dirty_read_txns() -> Vec<Txn> {
    vec![
        Txn {
            name: "T1",
            intent: Intent::Write,
            steps: vec![
                Step::run("sets x = 99", |s, _| {
                    s.execute(WRITE, &[int(99), int(1)]).map(drop)
                }),
                Step::Rollback,
            ],
        },
        Txn {
            name: "T2",
            intent: Intent::Read,
            steps: vec![
                Step::run("reads x", |s, seen| {
                    seen.push(one(s, READ, &[int(1)])?);
                    Ok(())
                }),
                Step::Commit,
            ],
        },
    ]
}

fn dirty_read(engine: Engine) {
    let Some(db) = Db::open(engine) else { return };
    let txns = dirty_read_txns();
    use Wait::*;
    let schedule = [(0, 0, Runs), (1, 0, MayBlock), (0, 1, Runs), (1, 1, Runs)];
    if engine != Engine::Sqlite {
        let t = Table::create(&db, "dirty_read", &[(1, 1)]);
        let r = run(&db, &t.statements(), &txns, &schedule, None);
        r.assert_undisturbed(&txns);
        let seen = r.txns[1].seen[0];
        let what = format!("T2 read x = {seen} while T1's uncommitted x = 99 stood (x was 1)");
        observed(&db, "dirty read", false, &what, &r, &txns);
        match engine {
            Engine::Mariadb => assert_eq!(seen, 99, "the dirty read should happen without DIBS"),
            _ => assert_eq!(seen, 1, "PostgreSQL never reads uncommitted data"),
        }
        assert_eq!(t.value(1), 1);
    }
    let t = Table::create(&db, "dirty_read", &[(1, 1)]);
    let r = run(
        &db,
        &t.statements(),
        &txns,
        &schedule,
        Some((WAIT_FOR_COMMIT, BLOCKED_AFTER)),
    );
    r.assert_finished(&txns);
    let seen = r.txns[1].seen[0];
    observed(
        &db,
        "dirty read",
        true,
        &format!("T2 read x = {seen}"),
        &r,
        &txns,
    );
    assert!(r.aborts().is_empty(), "{:?}", r.aborts());
    assert_eq!(seen, 1, "no dirty read with DIBS");
    let read = r.step(1, 0);
    assert!(read.blocked, "T2's read should wait for T1's rollback");
    assert!(read.at > r.step(0, 1).at, "T2 read before T1 rolled back");
    assert_eq!(t.value(1), 1);
}

#[test]
fn mariadb_dirty_read() {
    dirty_read(Engine::Mariadb);
}

#[test]
fn postgres_dirty_read() {
    dirty_read(Engine::Postgres);
}

#[test]
fn sqlite_dirty_read() {
    dirty_read(Engine::Sqlite);
}
