//! The benchmark driver: closed-loop workers, each with its own connection, running a workload's
//! client transactions for a warm-up and a measured interval, under one of two modes:
//!
//! * **DIBS** ([`Mode::Dibs`]): every statement takes its predicate lock first (serializable), the
//!   engine runs at its weak level ([`Backend::weak_level`]), locks are released after the
//!   engine's commit returned. With **transaction merging** (§4.4, `merge > 1`) a worker runs up
//!   to `merge` client transactions inside one engine transaction — a savepoint around each, so
//!   that one that rolls itself back undoes only its own work — commits the group when it is full
//!   (counting every member, or only writers: [`MergeCount`]) or older than the timeout, and only
//!   then acknowledges its clients (counts them, measures their latency from their first start)
//!   and releases the group's locks.
//! * **Native** ([`Mode::Native`]): no layer; the engine's own isolation level.
//!
//! A retryable abort (DIBS's lock timeout, the engine's deadlock, serialization failure or busy
//! timeout) rolls back and runs the same client transaction again; in a merged group it rolls
//! back the whole engine transaction (its locks must go to break the wait), and every member runs
//! again in a new group — nothing was acknowledged, so nothing acknowledged is lost. Each member
//! made to run again counts as one abort.
//!
//! A writer never joins a group of readers: SQLite would have to upgrade the group's read
//! snapshot, which fails once another writer committed; the readers are committed first (no
//! sync: nothing was written) and the writer opens a new group with `BEGIN IMMEDIATE`.

use crate::conn::{Backend, Intent, Level};
use crate::error::{Error, Result, Retry};
use crate::session::{Dibs, Seen, Session};
use crate::workloads::{lock_specs, SqlWorkload};
use hdrhistogram::Histogram;
use ordo_predicate::{Config, Isolation, LockManager, Optimizations};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Which client transactions count toward a merged group's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MergeCount {
    /// Every member: the paper's "several transactions".
    #[default]
    All,
    /// Only those that write: readers ride along uncounted. The engine syncs once per group
    /// that wrote, so with few writers (TATP: 20%) a group of G members holds about 0.2·G
    /// writers, and counting writers is what makes each sync cover G of them.
    Writers,
}

impl MergeCount {
    pub fn name(self) -> &'static str {
        match self {
            MergeCount::All => "all",
            MergeCount::Writers => "writers",
        }
    }
}

/// How transactions are isolated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// DIBS over the engine's weak level; `merge` client transactions per engine transaction
    /// (1: individual commit; `count` says which count), a group committed when older than
    /// `merge_timeout`.
    Dibs {
        merge: usize,
        merge_timeout: Duration,
        count: MergeCount,
    },
    /// The engine's own isolation at this level, no layer in front.
    Native(Level),
}

/// One run's settings.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub threads: usize,
    pub warmup: Duration,
    pub duration: Duration,
    pub seed: u64,
    pub mode: Mode,
    /// DIBS's lock wait timeout (plus up to as much jitter): the paper's deadlock handling.
    pub lock_timeout: Duration,
    pub optimizations: Optimizations,
}

/// What a run measured (acknowledged client transactions only, within the measured interval).
#[derive(Debug, Clone)]
pub struct RunStats {
    pub committed: u64,
    /// Client transactions that rolled themselves back (TATP's failing lookups).
    pub rolled_back: u64,
    /// Retryable aborts, by [`Retry::index`].
    pub aborts: [u64; 4],
    pub elapsed: Duration,
    /// Latency of acknowledged transactions, in nanoseconds: first start to acknowledgment.
    pub latency: Histogram<u64>,
    /// Engine transactions committed (groups when merging).
    pub engine_commits: u64,
    /// File syncs during the measured interval, when the backend counts them.
    pub syncs: Option<u64>,
}

impl RunStats {
    fn new() -> Self {
        RunStats {
            committed: 0,
            rolled_back: 0,
            aborts: [0; 4],
            elapsed: Duration::ZERO,
            latency: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            engine_commits: 0,
            syncs: None,
        }
    }

    fn add(&mut self, o: &RunStats) {
        self.committed += o.committed;
        self.rolled_back += o.rolled_back;
        for (a, b) in self.aborts.iter_mut().zip(o.aborts) {
            *a += b;
        }
        self.engine_commits += o.engine_commits;
        self.latency.add(&o.latency).expect("same bounds");
    }

    pub fn committed_per_sec(&self) -> f64 {
        self.committed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub fn aborts_per_commit(&self) -> f64 {
        self.aborts.iter().sum::<u64>() as f64 / self.committed.max(1) as f64
    }

    pub fn latency_us(&self, q: f64) -> f64 {
        self.latency.value_at_quantile(q / 100.0) as f64 / 1000.0
    }

    /// Syncs per acknowledged client transaction (committed or rolled back).
    pub fn syncs_per_txn(&self) -> Option<f64> {
        self.syncs
            .map(|s| s as f64 / (self.committed + self.rolled_back).max(1) as f64)
    }
}

/// Drops and creates `w`'s tables through a fresh connection of `backend` and loads them;
/// returns the seconds it took.
pub fn load<W: SqlWorkload>(backend: &dyn Backend, w: &W) -> Result<f64> {
    let start = Instant::now();
    let mut conn = backend.connect()?;
    for t in w.tables().iter().rev() {
        conn.batch(&format!("DROP TABLE IF EXISTS {}", t.name))?;
    }
    for t in w.tables() {
        for ddl in &t.ddl {
            conn.batch(ddl)?;
        }
    }
    w.load(conn.as_mut())?;
    backend.settle(conn.as_mut())?;
    Ok(start.elapsed().as_secs_f64())
}

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

/// Runs `w` on `backend` as `cfg` says (the tables must be loaded).
pub fn run<W: SqlWorkload>(backend: &dyn Backend, w: &W, cfg: &RunConfig) -> Result<RunStats> {
    if cfg.threads == 0 {
        return Err(Error::Input("at least one thread".into()));
    }
    let (level, plm) = setup(backend, w, cfg)?;
    // Connect every worker before the clock starts: a server that is not there fails here.
    let conns = (0..cfg.threads)
        .map(|_| backend.connect())
        .collect::<Result<Vec<_>>>()?;
    let phase = AtomicU8::new(WARMUP);
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, conn)| {
                let plm = plm.as_ref();
                let phase = &phase;
                scope.spawn(move || {
                    let dibs = plm.map(|plm| Dibs {
                        plm,
                        txn: plm.begin(Isolation::Serializable),
                    });
                    let mut worker = Worker {
                        w,
                        s: Session::new(conn, dibs, w.statements()),
                        level,
                        phase,
                        stats: RunStats::new(),
                        rng: SmallRng::seed_from_u64(
                            cfg.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                        ),
                        list: None,
                        ack: None,
                        ids: None,
                        attempts: Vec::new(),
                        session: i as u32,
                    };
                    let r = match cfg.mode {
                        Mode::Dibs {
                            merge,
                            merge_timeout,
                            count,
                        } if merge > 1 => worker.merged(merge, merge_timeout, count),
                        _ => worker.individual(),
                    };
                    // A worker that failed stops the others.
                    if r.is_err() {
                        phase.store(STOP, Ordering::Release);
                    }
                    r.map(|()| worker.stats)
                })
            })
            .collect();
        let sleep_unless_stopped = |d: Duration| {
            let end = Instant::now() + d;
            while Instant::now() < end && phase.load(Ordering::Acquire) != STOP {
                std::thread::sleep((end - Instant::now()).min(Duration::from_millis(20)));
            }
        };
        sleep_unless_stopped(cfg.warmup);
        let syncs0 = backend.syncs();
        let start = Instant::now();
        let _ = phase.compare_exchange(WARMUP, MEASURE, Ordering::AcqRel, Ordering::Acquire);
        sleep_unless_stopped(cfg.duration);
        phase.store(STOP, Ordering::Release);
        let elapsed = start.elapsed();
        let syncs = backend.syncs().zip(syncs0).map(|(b, a)| b - a);
        let mut total = RunStats::new();
        total.elapsed = elapsed;
        total.syncs = syncs;
        let mut first_error = None;
        for h in handles {
            match h.join().expect("worker thread panicked") {
                Ok(s) => total.add(&s),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(total),
        }
    })?;
    Ok(results)
}

/// Runs the client transactions of `txns`, in order, on one connection of `backend` under `mode`
/// (the tables must be loaded), telling `ack` of each as it is acknowledged: after its engine
/// transaction's commit returned (`true`), or after it rolled itself back (`false`). What tests
/// and the crash check use to see exactly what was acknowledged, and when.
pub fn run_listed<W: SqlWorkload>(
    backend: &dyn Backend,
    w: &W,
    mode: Mode,
    lock_timeout: Duration,
    txns: Vec<W::Txn>,
    ack: &mut dyn FnMut(&W::Txn, bool),
) -> Result<RunStats> {
    let cfg = RunConfig {
        threads: 1,
        warmup: Duration::ZERO,
        duration: Duration::ZERO,
        seed: 0,
        mode,
        lock_timeout,
        optimizations: Optimizations::full(),
    };
    let (level, plm) = setup(backend, w, &cfg)?;
    let phase = AtomicU8::new(MEASURE);
    let start = Instant::now();
    let syncs0 = backend.syncs();
    let mut worker = Worker {
        w,
        s: Session::new(
            backend.connect()?,
            plm.as_ref().map(|plm| Dibs {
                plm,
                txn: plm.begin(Isolation::Serializable),
            }),
            w.statements(),
        ),
        level,
        phase: &phase,
        stats: RunStats::new(),
        rng: SmallRng::seed_from_u64(0),
        list: Some(txns.into_iter()),
        ack: Some(ack),
        ids: None,
        attempts: Vec::new(),
        session: 0,
    };
    match mode {
        Mode::Dibs {
            merge,
            merge_timeout,
            count,
        } if merge > 1 => worker.merged(merge, merge_timeout, count)?,
        _ => worker.individual()?,
    }
    let mut stats = worker.stats;
    stats.elapsed = start.elapsed();
    stats.syncs = backend.syncs().zip(syncs0).map(|(b, a)| b - a);
    Ok(stats)
}

/// The engine's level for `cfg.mode`, and DIBS's lock manager over `w`'s statements.
fn setup<W: SqlWorkload>(
    backend: &dyn Backend,
    w: &W,
    cfg: &RunConfig,
) -> Result<(Level, Option<LockManager>)> {
    let level = match cfg.mode {
        Mode::Dibs { merge, .. } => {
            if merge == 0 {
                return Err(Error::Input("--merge must be at least 1".into()));
            }
            backend.weak_level()
        }
        Mode::Native(l) => {
            if !backend.levels().contains(&l) {
                return Err(Error::Input(format!(
                    "{} has no {} level (it offers {})",
                    backend.name(),
                    l.sql(),
                    backend
                        .levels()
                        .iter()
                        .map(|l| l.sql())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            l
        }
    };
    let plm = match cfg.mode {
        Mode::Dibs { .. } => {
            let (relations, templates) = lock_specs(&w.tables(), w.statements())?;
            let config = Config {
                timeout: cfg.lock_timeout,
                jitter: cfg.lock_timeout,
            };
            Some(
                LockManager::new(relations, templates, cfg.optimizations, config).map_err(|e| {
                    Error::Input(format!("the lock manager refused the workload: {e}"))
                })?,
            )
        }
        Mode::Native(_) => None,
    };
    Ok((level, plm))
}

/// Runs `per_thread` client transactions of `w` on each of `threads` workers under `mode`,
/// recording every attempt — what it read and wrote, by the version ids the workload stores in
/// its rows ([`crate::workloads::versioned`]), and whether it committed — for a serializability
/// checker. Individual commit only. The tables must be loaded.
pub fn record<W: SqlWorkload>(
    backend: &dyn Backend,
    w: &W,
    mode: Mode,
    threads: usize,
    per_thread: usize,
    lock_timeout: Duration,
    seed: u64,
) -> Result<Vec<Attempt>> {
    if matches!(mode, Mode::Dibs { merge, .. } if merge > 1) {
        return Err(Error::Input(
            "recording a history runs individual commit only (merge 1)".into(),
        ));
    }
    let cfg = RunConfig {
        threads,
        warmup: Duration::ZERO,
        duration: Duration::ZERO,
        seed,
        mode,
        lock_timeout,
        optimizations: Optimizations::full(),
    };
    let (level, plm) = setup(backend, w, &cfg)?;
    let conns = (0..threads)
        .map(|_| backend.connect())
        .collect::<Result<Vec<_>>>()?;
    let ids = AtomicU64::new(1);
    let phase = AtomicU8::new(MEASURE);
    std::thread::scope(|scope| {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(i, conn)| {
                let (plm, ids, phase) = (plm.as_ref(), &ids, &phase);
                scope.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(
                        seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    );
                    let list: Vec<W::Txn> = (0..per_thread).map(|_| w.next(&mut rng)).collect();
                    let mut worker = Worker {
                        w,
                        s: Session::new(
                            conn,
                            plm.map(|plm| Dibs {
                                plm,
                                txn: plm.begin(Isolation::Serializable),
                            }),
                            w.statements(),
                        ),
                        level,
                        phase,
                        stats: RunStats::new(),
                        rng,
                        list: Some(list.into_iter()),
                        ack: None,
                        ids: Some(ids),
                        attempts: Vec::new(),
                        session: i as u32,
                    };
                    worker.individual().map(|()| worker.attempts)
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            all.extend(h.join().expect("worker thread panicked")?);
        }
        Ok(all)
    })
}

/// Told of each acknowledged client transaction (`true`: committed).
type Ack<'a, T> = &'a mut dyn FnMut(&T, bool);

struct Worker<'a, W: SqlWorkload> {
    w: &'a W,
    s: Session<'a>,
    level: Level,
    phase: &'a AtomicU8,
    stats: RunStats,
    rng: SmallRng,
    /// A fixed list of client transactions to run instead of the generator's ([`run_listed`]).
    list: Option<std::vec::IntoIter<W::Txn>>,
    /// Told of each client transaction when it is acknowledged (`true`: committed).
    ack: Option<Ack<'a, W::Txn>>,
    /// When recording a history ([`record`]): the source of attempt ids, and the attempts made.
    ids: Option<&'a AtomicU64>,
    attempts: Vec<Attempt>,
    session: u32,
}

/// One attempt at a client transaction, as [`record`] saw it from the client.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// The worker that made it.
    pub session: u32,
    /// Its id: the version id its writes stored (unique, nonzero).
    pub id: u64,
    /// Whether the engine's commit returned (else it was rolled back).
    pub committed: bool,
    pub events: Vec<Seen>,
}

/// A member of a merged group: the client transaction, when it first started, and whether it
/// rolled itself back (to its savepoint).
struct Member<T> {
    txn: T,
    start: Instant,
    user_aborted: bool,
}

impl<W: SqlWorkload> Worker<'_, W> {
    fn measuring(&self) -> bool {
        self.phase.load(Ordering::Acquire) == MEASURE
    }

    fn stopped(&self) -> bool {
        self.phase.load(Ordering::Acquire) == STOP
    }

    /// The next client transaction: the list's, or the generator's until the run stops.
    fn next_txn(&mut self) -> Option<W::Txn> {
        if let Some(list) = &mut self.list {
            return list.next();
        }
        if self.stopped() {
            return None;
        }
        Some(self.w.next(&mut self.rng))
    }

    fn acknowledge(&mut self, txn: &W::Txn, start: Instant, user_aborted: bool) {
        if let Some(ack) = self.ack.as_mut() {
            ack(txn, !user_aborted);
        }
        if self.measuring() {
            if user_aborted {
                self.stats.rolled_back += 1;
            } else {
                self.stats.committed += 1;
            }
            let ns = start.elapsed().as_nanos().clamp(1, 3_600_000_000_000) as u64;
            self.stats.latency.saturating_record(ns);
        }
    }

    fn abort(&mut self, why: Retry, n: u64) {
        if self.measuring() {
            self.stats.aborts[why.index()] += n;
        }
    }

    fn intent(&self, txn: &W::Txn) -> Intent {
        if self.w.writes(txn) {
            Intent::Write
        } else {
            Intent::Read
        }
    }

    /// Rolls the engine transaction back and releases the locks after an error `e`; returns `e`
    /// (or the rollback's own error when `e` was a retryable one).
    fn undo(&mut self, e: Error) -> Error {
        let rb = self.s.conn.rollback();
        self.s.release();
        match (e.retry(), rb) {
            (Some(_), Err(rb)) => rb,
            _ => e,
        }
    }

    /// Files the attempt that just ended, when recording.
    fn end_attempt(&mut self, committed: bool) {
        if self.ids.is_some() {
            self.attempts.push(Attempt {
                session: self.session,
                id: self.s.attempt(),
                committed,
                events: self.s.take_seen(),
            });
        }
    }

    /// One engine transaction per client transaction.
    fn individual(&mut self) -> Result<()> {
        while let Some(txn) = self.next_txn() {
            let start = Instant::now();
            let intent = self.intent(&txn);
            loop {
                if let Some(ids) = self.ids {
                    self.s.begin_attempt(ids.fetch_add(1, Ordering::Relaxed));
                }
                let r = self
                    .s
                    .conn
                    .begin(self.level, intent)
                    .and_then(|()| self.w.run(&mut self.s, &txn))
                    .and_then(|()| self.s.conn.commit());
                match r {
                    Ok(()) => {
                        self.s.release();
                        self.end_attempt(true);
                        self.stats.engine_commits += 1;
                        self.acknowledge(&txn, start, false);
                        break;
                    }
                    Err(e) => match self.undo(e) {
                        Error::UserAbort(_) => {
                            self.end_attempt(false);
                            self.acknowledge(&txn, start, true);
                            break;
                        }
                        Error::Retry { why, .. } => {
                            self.end_attempt(false);
                            self.abort(why, 1);
                            if self.stopped() {
                                break;
                            }
                        }
                        e => return Err(e),
                    },
                }
            }
        }
        Ok(())
    }

    /// Transaction merging (§4.4): up to `size` client transactions (of those `count` counts)
    /// per engine transaction.
    fn merged(&mut self, size: usize, timeout: Duration, count: MergeCount) -> Result<()> {
        let mut group: Vec<Member<W::Txn>> = Vec::with_capacity(size);
        // Members of the open group that count toward `size`.
        let mut counted = 0;
        let mut redo: VecDeque<Member<W::Txn>> = VecDeque::new();
        // The open engine transaction: its intent and when it began.
        let mut open: Option<(Intent, Instant)> = None;
        loop {
            let next = match redo.pop_front() {
                Some(m) => Some(m),
                None => self.next_txn().map(|txn| Member {
                    txn,
                    start: Instant::now(),
                    user_aborted: false,
                }),
            };
            let Some(mut m) = next else {
                // No more transactions: commit what ran (a failed commit sends it to `redo`).
                if open.is_some() {
                    counted = 0;
                    self.commit_group(&mut group, &mut redo, &mut open)?;
                }
                if redo.is_empty() {
                    return Ok(());
                }
                continue;
            };
            m.user_aborted = false;
            let intent = self.intent(&m.txn);
            if intent == Intent::Write && matches!(open, Some((Intent::Read, _))) {
                counted = 0;
                self.commit_group(&mut group, &mut redo, &mut open)?;
                if !redo.is_empty() {
                    redo.push_back(m);
                    continue;
                }
            }
            let r = match open {
                Some(_) => Ok(()),
                None => self.s.conn.begin(self.level, intent).map(|()| {
                    open = Some((intent, Instant::now()));
                }),
            }
            .and_then(|()| self.s.conn.savepoint("client"))
            .and_then(|()| match self.w.run(&mut self.s, &m.txn) {
                Err(Error::UserAbort(_)) => {
                    m.user_aborted = true;
                    self.s.conn.rollback_to("client")
                }
                other => other,
            })
            .and_then(|()| self.s.conn.release("client"));
            match r {
                Ok(()) => {
                    if count == MergeCount::All || intent == Intent::Write {
                        counted += 1;
                    }
                    group.push(m);
                }
                Err(e) => {
                    open = None;
                    counted = 0;
                    match self.undo(e) {
                        Error::Retry { why, .. } => {
                            self.abort(why, group.len() as u64 + 1);
                            redo.extend(group.drain(..));
                            redo.push_back(m);
                            continue;
                        }
                        e => return Err(e),
                    }
                }
            }
            let full = counted >= size;
            let old = open.is_some_and(|(_, t)| t.elapsed() >= timeout);
            if full || old || self.stopped() {
                counted = 0;
                self.commit_group(&mut group, &mut redo, &mut open)?;
            }
        }
    }

    /// Commits the open engine transaction, then acknowledges its members and releases its locks;
    /// a retryable failure of the commit sends them all to `redo`.
    fn commit_group(
        &mut self,
        group: &mut Vec<Member<W::Txn>>,
        redo: &mut VecDeque<Member<W::Txn>>,
        open: &mut Option<(Intent, Instant)>,
    ) -> Result<()> {
        *open = None;
        match self.s.conn.commit() {
            Ok(()) => {
                self.s.release();
                self.stats.engine_commits += 1;
                for m in std::mem::take(group) {
                    self.acknowledge(&m.txn, m.start, m.user_aborted);
                }
                Ok(())
            }
            Err(e) => match self.undo(e) {
                Error::Retry { why, .. } => {
                    self.abort(why, group.len() as u64);
                    redo.extend(group.drain(..));
                    Ok(())
                }
                e => Err(e),
            },
        }
    }
}
