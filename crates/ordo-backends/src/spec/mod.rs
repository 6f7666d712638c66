//! `ordo spec --backend`: PostgreSQL isolationtester specs run against a real engine, with DIBS in
//! front (the engine at its weak level) or with the engine's own isolation, so that what DIBS
//! prevents can be seen next to what the engine's level allows.
//!
//! The spec format, its permutations and the text output are those of the in-memory runner
//! ([`ordo_sql::spec`]); what differs is below the SQL:
//!
//! * **Sessions** ([`session`]) are threads with their own connection. `BEGIN`/`COMMIT`/`ROLLBACK`
//!   go through [`crate::Conn`], other statements as text; with DIBS each statement first takes the
//!   predicate locks [`ordo_sql::locks`] derives from its SQL, in a lock manager whose relations are
//!   the tables the spec's `setup` creates.
//! * **Blocking.** A step blocked on a DIBS lock is seen at once, from the wait's own rounds, as the
//!   in-memory runner sees a protocol's waits. A step blocked *inside the engine* cannot be seen
//!   from the client (isolationtester asks PostgreSQL's `pg_locks`; MariaDB and SQLite have no
//!   equivalent it could share), so a step that has not completed after [`SpecOptions::wait`] counts
//!   as waiting. A blocked step whose session's next step is due is cancelled when it waits on DIBS
//!   (`57014`, as isolationtester cancels); when it waits in the engine, the runner waits for the
//!   engine's own lock timeout (5 s on every backend here) to end it, and gives up after
//!   [`SpecOptions::patience`].
//! * **Verdict.** An engine keeps no history a client can read back, so the summary judges the
//!   *outcome* ([`replay`]): the committed transactions are replayed one at a time, in every order
//!   that keeps each session's order, until one gives the same statement results and the same final
//!   tables. None: no serial execution could have produced what the clients saw.
//! * **Setup and teardown** run on a control connection before and after every permutation; a spec
//!   without a `teardown` has the tables its setup created dropped. Leftovers of an interrupted run
//!   are dropped before the first permutation.

pub mod replay;
pub mod session;

use crate::conn::{Backend, Conn, Level};
use crate::error::Error;
use ordo_predicate::optimizations::Optimizations;
use ordo_predicate::waits_for::WaitsFor;
use ordo_predicate::LockManager;
use ordo_sql::locks::Schema;
use ordo_sql::session::TxnEnd;
use ordo_sql::spec::run::{PermutationResult, SpecResult, StepEvent, SETTLE_ROUNDS};
use ordo_sql::spec::Spec;
use replay::{TxnLog, Verdict};
use session::{Handle, Layer, Mode, Reply};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How to run a spec against an engine.
#[derive(Debug, Clone, Copy)]
pub struct SpecOptions {
    pub mode: Mode,
    /// A step not done after this long, and not waiting on DIBS, counts as waiting in the engine.
    pub wait: Duration,
    /// How long a step blocked in the engine may take to end by itself once its session's next
    /// step is due (or the permutation ends).
    pub patience: Duration,
}

impl Default for SpecOptions {
    fn default() -> Self {
        SpecOptions {
            mode: Mode::Dibs,
            wait: Duration::from_millis(300),
            patience: Duration::from_secs(20),
        }
    }
}

/// Why a spec could not be run, or stopped; one line each.
#[derive(Debug, thiserror::Error)]
pub enum SpecRunError {
    /// The engine cannot be reached, or refused something outside the spec's statements.
    #[error(transparent)]
    Backend(#[from] Error),
    /// The spec's setup could not be understood by the lock layer.
    #[error("{0}")]
    Schema(String),
    /// A `setup` block failed (isolationtester: `setup failed: ...`). `done` holds the
    /// permutations that ran before; `steps` names the one whose setup failed.
    #[error("{message}")]
    SetupFailed {
        message: String,
        steps: Vec<String>,
        done: Box<SpecResult>,
    },
    /// A step blocked in the engine did not end.
    #[error("failed to complete permutation: step {step} was still blocked in the engine after {secs} s")]
    Stuck { step: String, secs: u64 },
}

/// Why a permutation stopped short.
enum Stop {
    Setup(String),
    Stuck(String),
    Backend(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Backend(e)
    }
}

/// What ends a permutation: the spec's teardown, or dropping the tables its setup created.
pub struct Cleanup {
    sql: Vec<String>,
}

impl Cleanup {
    fn new(spec: &Spec, schema: &Schema) -> Self {
        let sql = match &spec.teardown {
            Some(b) => statements(&b.sql).unwrap_or_default(),
            None => schema
                .tables
                .iter()
                .rev()
                .map(|t| format!("DROP TABLE IF EXISTS {}", t.name))
                .collect(),
        };
        Cleanup { sql }
    }

    /// Runs every statement, whatever fails (a table that is not there).
    pub fn run(&self, conn: &mut dyn Conn) {
        let _ = conn.rollback();
        for s in &self.sql {
            let _ = conn.simple(s);
        }
    }
}

/// The statements of a block, as the engine is sent them.
fn statements(sql: &str) -> Result<Vec<String>, String> {
    ordo_sql::session::parse(sql)
        .map(|v| v.iter().map(|s| s.to_string()).collect())
        .map_err(|e| e.message)
}

/// Runs a block on `conn`; the first error's message.
pub fn run_block(conn: &mut dyn Conn, sql: &str) -> Result<(), String> {
    for s in statements(sql)? {
        conn.simple(&s).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The tables the spec's setup creates, as the lock layer sees them.
fn learn(spec: &Spec) -> Result<Schema, SpecRunError> {
    let mut schema = Schema::default();
    for b in &spec.setup {
        let stmts =
            ordo_sql::session::parse(&b.sql).map_err(|e| SpecRunError::Schema(e.message))?;
        for s in &stmts {
            schema
                .observe(s)
                .map_err(|e| SpecRunError::Schema(e.to_string()))?;
        }
    }
    Ok(schema)
}

/// What the run is called in its output.
fn label(backend: &dyn Backend, mode: Mode) -> String {
    match mode {
        Mode::Dibs => format!(
            "dibs over {} {}",
            backend.name(),
            backend.weak_level().sql()
        ),
        Mode::Native(None) => format!("{} native (the levels the spec names)", backend.name()),
        Mode::Native(Some(l)) => format!("{} native {}", backend.name(), l.sql()),
    }
}

/// Runs every permutation of `spec` against `backend`.
pub fn run_spec(
    backend: Arc<dyn Backend>,
    spec: &Spec,
    opts: &SpecOptions,
) -> Result<SpecResult, SpecRunError> {
    let schema = learn(spec)?;
    let cleanup = Cleanup::new(spec, &schema);
    let mut control = backend.connect()?;
    cleanup.run(&mut *control);
    let mut res = SpecResult {
        protocol: label(&*backend, opts.mode),
        note: Some(
            "the verdict replays the committed transactions one at a time; \"serializable\": some serial order gives the same results and final tables"
                .into(),
        ),
        sessions: spec.sessions.len(),
        permutations: Vec::new(),
    };
    for perm in spec.permutations() {
        let run = Run {
            backend: &backend,
            spec,
            schema: &schema,
            cleanup: &cleanup,
            opts,
        };
        match run.permutation(&mut *control, &perm) {
            Ok(p) => res.permutations.push(p),
            Err(stop) => {
                cleanup.run(&mut *control);
                return Err(match stop {
                    Stop::Setup(message) => SpecRunError::SetupFailed {
                        message,
                        steps: perm.iter().map(|&p| spec.step(p).name.clone()).collect(),
                        done: Box::new(res),
                    },
                    Stop::Stuck(step) => SpecRunError::Stuck {
                        step,
                        secs: opts.patience.as_secs(),
                    },
                    Stop::Backend(e) => SpecRunError::Backend(e),
                });
            }
        }
    }
    Ok(res)
}

struct Run<'a> {
    backend: &'a Arc<dyn Backend>,
    spec: &'a Spec,
    schema: &'a Schema,
    cleanup: &'a Cleanup,
    opts: &'a SpecOptions,
}

impl Run<'_> {
    fn permutation(
        &self,
        control: &mut dyn Conn,
        perm: &[(usize, usize)],
    ) -> Result<PermutationResult, Stop> {
        for b in &self.spec.setup {
            run_block(control, &b.sql).map_err(|m| Stop::Setup(format!("setup failed: {m}")))?;
        }
        let layer = match self.opts.mode {
            Mode::Dibs => Some(Arc::new(Layer {
                plm: LockManager::new(
                    self.schema.relation_specs(),
                    Vec::new(),
                    Optimizations::full(),
                    Default::default(),
                )
                .map_err(|e| {
                    Error::Input(format!("the lock manager refused the spec's tables: {e}"))
                })?,
                schema: self.schema.clone(),
                waits: WaitsFor::default(),
            })),
            Mode::Native(_) => None,
        };
        let mut live = Vec::new();
        for i in 0..self.spec.sessions.len() {
            live.push(Live {
                handle: Handle::open(self.backend, layer.clone(), self.opts.mode, i)?,
                busy: None,
                ends: Vec::new(),
            });
        }
        let mut runner = Runner {
            spec: self.spec,
            opts: self.opts,
            live,
            waiting: Vec::new(),
            events: Vec::new(),
        };
        let ran = runner.sessions_setup().and_then(|()| {
            perm.iter()
                .try_for_each(|&step| runner.step(step))
                .and_then(|()| runner.finish())
        });
        if let Err(stop) = ran {
            for l in runner.live.drain(..) {
                if l.busy.is_some() {
                    l.handle.abandon();
                } else {
                    l.handle.finish();
                }
            }
            return Err(stop);
        }
        for (i, s) in self.spec.sessions.iter().enumerate() {
            if let Some(b) = &s.teardown {
                let r = runner.live[i].handle.execute(&b.sql);
                runner.live[i].ends.extend(r.ends);
            }
        }
        let mut txns: Vec<TxnLog> = Vec::new();
        let mut sessions = Vec::new();
        for (s, l) in self.spec.sessions.iter().zip(runner.live.drain(..)) {
            sessions.push((s.name.clone(), l.ends));
            txns.extend(l.handle.finish());
        }
        let final_state = replay::state(control, self.schema)?;
        self.cleanup.run(control);
        let verdict = replay::check(
            &**self.backend,
            control,
            self.spec,
            self.cleanup,
            self.schema,
            &txns,
            &final_state,
        )?;
        let name = |i: usize| {
            let t = &txns[i];
            let s = &self.spec.sessions[t.session].name;
            if txns.iter().filter(|u| u.session == t.session).count() > 1 {
                format!("{s}#{}", t.seq)
            } else {
                s.clone()
            }
        };
        let (serializable, outcome) = match &verdict {
            Verdict::Serial(order) if order.is_empty() => {
                (true, "outcome serializable: nothing committed".to_string())
            }
            Verdict::Serial(order) => (
                true,
                format!(
                    "outcome serializable: as {}",
                    order.iter().map(|&i| name(i)).collect::<Vec<_>>().join(" then ")
                ),
            ),
            Verdict::NotSerial { orders } => (
                false,
                format!(
                    "outcome NOT serializable: none of the {orders} serial orders of the {} committed transactions gives these results and tables",
                    txns.len()
                ),
            ),
            Verdict::TooMany(n) => (
                false,
                format!(
                    "outcome not checked: {n} committed transactions (at most {} are replayed in every order)",
                    replay::MAX_TXNS
                ),
            ),
        };
        Ok(PermutationResult {
            steps: perm
                .iter()
                .map(|&p| self.spec.step(p).name.clone())
                .collect(),
            events: runner.events,
            notes: Vec::new(),
            sessions,
            serializable,
            anomalies: String::new(),
            outcome: Some(outcome),
        })
    }
}

struct Live {
    handle: Handle,
    /// The step it is running, if busy.
    busy: Option<(usize, usize)>,
    ends: Vec<TxnEnd>,
}

struct Runner<'a> {
    spec: &'a Spec,
    opts: &'a SpecOptions,
    live: Vec<Live>,
    /// Blocked sessions, in the order their steps began waiting.
    waiting: Vec<usize>,
    events: Vec<StepEvent>,
}

impl Runner<'_> {
    fn sessions_setup(&mut self) -> Result<(), Stop> {
        for (i, s) in self.spec.sessions.iter().enumerate() {
            if let Some(b) = &s.setup {
                let r = self.live[i].handle.execute(&b.sql);
                if let Some(e) = r.results.iter().find_map(|x| x.result.as_ref().err()) {
                    return Err(Stop::Setup(format!(
                        "setup of session {} failed: {} ({})",
                        s.name, e.message, e.code
                    )));
                }
                self.live[i].ends.extend(r.ends);
            }
        }
        Ok(())
    }

    /// Waits until every session is idle, settled in a DIBS wait, or has been busy for
    /// [`SpecOptions::wait`] since anything last completed; returns the replies that came in.
    fn settle(&mut self) -> Vec<(usize, (usize, usize), Reply)> {
        let mut done = Vec::new();
        let snapshot = |live: &[Live]| -> Vec<u64> {
            live.iter().map(|l| l.handle.observer.rounds()).collect()
        };
        let mut base = snapshot(&self.live);
        let mut since = Instant::now();
        loop {
            let mut progressed = false;
            for (i, l) in self.live.iter_mut().enumerate() {
                if let Some(step) = l.busy {
                    if let Some(r) = l.handle.try_reply() {
                        l.busy = None;
                        l.ends.extend(r.ends.iter().cloned());
                        done.push((i, step, r));
                        progressed = true;
                    }
                }
            }
            if progressed {
                base = snapshot(&self.live);
                since = Instant::now();
                continue;
            }
            let engine_wait = since.elapsed() >= self.opts.wait;
            let settled = self.live.iter().enumerate().all(|(i, l)| {
                let o = &l.handle.observer;
                l.busy.is_none()
                    || engine_wait
                    || (o.is_waiting() && o.rounds() >= base[i] + SETTLE_ROUNDS)
            });
            if settled {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let order = |s: usize| {
            self.waiting
                .iter()
                .position(|&w| w == s)
                .unwrap_or(usize::MAX)
        };
        done.sort_by_key(|d| (order(d.0), d.0));
        done
    }

    fn event(&self, step: (usize, usize)) -> StepEvent {
        StepEvent {
            step: self.spec.step(step).name.clone(),
            session: self.spec.sessions[step.0].name.clone(),
            waiting: false,
            completed_late: false,
            canceling: None,
            results: Vec::new(),
        }
    }

    fn record(&mut self, done: Vec<(usize, (usize, usize), Reply)>, late: bool) {
        for (s, step, r) in done {
            self.waiting.retain(|&w| w != s);
            self.events.push(StepEvent {
                completed_late: late,
                results: r.results,
                ..self.event(step)
            });
        }
    }

    /// Ends session `s`'s blocked step: a DIBS wait is cancelled; a wait in the engine is given
    /// [`SpecOptions::patience`] to end by itself.
    fn unblock(&mut self, s: usize, why: &str) -> Result<(), Stop> {
        let Some(step) = self.live[s].busy else {
            return Ok(());
        };
        let name = self.spec.step(step).name.clone();
        if self.live[s].handle.observer.is_waiting() {
            self.events.push(StepEvent {
                canceling: Some(format!("canceling step {name}: {why}")),
                ..self.event(step)
            });
            self.live[s].handle.observer.cancel();
        }
        let deadline = Instant::now() + self.opts.patience;
        loop {
            let done = self.settle();
            self.record(done, true);
            if self.live[s].busy.is_none() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Stop::Stuck(name));
            }
            if self.live[s].handle.observer.is_waiting() {
                // Still on DIBS after the cancel (a new wait of the same statement): cancel again.
                self.live[s].handle.observer.cancel();
            }
        }
    }

    fn step(&mut self, step: (usize, usize)) -> Result<(), Stop> {
        let s = step.0;
        if self.live[s].busy.is_some() {
            let name = &self.spec.sessions[s].name;
            let why = format!("session {name}'s next step is due and nothing can unblock it");
            self.unblock(s, &why)?;
        }
        self.live[s].handle.send(&self.spec.step(step).sql.sql);
        self.live[s].busy = Some(step);
        let mut done = self.settle();
        match done.iter().position(|d| d.0 == s) {
            Some(i) => {
                let d = done.remove(i);
                self.record(vec![d], false);
            }
            None => {
                self.waiting.push(s);
                self.events.push(StepEvent {
                    waiting: true,
                    ..self.event(step)
                });
            }
        }
        self.record(done, true);
        Ok(())
    }

    /// isolationtester's final wait: each step still blocked ends, in the order they began
    /// waiting.
    fn finish(&mut self) -> Result<(), Stop> {
        while let Some(&s) = self.waiting.first() {
            self.unblock(s, "the permutation has ended and nothing can unblock it")?;
        }
        Ok(())
    }
}

/// The spec runner's level names (`native-rc`), for the CLI.
pub fn level_named(short: &str) -> Option<Level> {
    [
        Level::ReadUncommitted,
        Level::ReadCommitted,
        Level::RepeatableRead,
        Level::Serializable,
    ]
    .into_iter()
    .find(|l| l.short() == short)
}
