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
mod runner;
pub mod session;
pub mod waiter;

use crate::conn::{Backend, Conn, Level};
use crate::error::Error;
use ordo_predicate::optimizations::Optimizations;
use ordo_predicate::waits_for::WaitsFor;
use ordo_predicate::LockManager;
use ordo_sql::locks::Schema;
use ordo_sql::spec::run::{PermutationResult, SpecResult};
use ordo_sql::spec::Spec;
use replay::{TxnLog, Verdict};
use runner::{Live, Runner};
use session::{Handle, Layer, Mode};
use std::sync::Arc;
use std::time::Duration;

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
