//! Running a spec: each permutation on a fresh engine, one session thread per spec session, with
//! PostgreSQL isolationtester's semantics (`src/test/isolation/isolationtester.c`,
//! `run_permutation` and `try_complete_step`).
//!
//! **Steps and waits.** The runner sends a step's SQL to its session and then waits until the system
//! is *settled*: every session is idle or blocked inside the protocol, and every blocked one has
//! reported at least [`SETTLE_ROUNDS`] wait rounds since anything last completed. Blocking is read
//! from each session's [`WaitObserver`](ordo::txn::wait::WaitObserver), which the protocol itself sets
//! around its lock waits; the rounds requirement means a waiter has re-examined its lock (and, under
//! `2pl-detect`, searched for deadlocks several times) after the last change, so a step reported as
//! `<waiting ...>` really is blocked and not merely slow. No decision depends on elapsed time, so the
//! same spec gives the same output on every run. Lock waits are given an hour before the protocol
//! gives up ([`ordo::protocols::ProtocolConfig::lock_wait_timeout`]).
//!
//! As in isolationtester, a blocked step stays pending (`step s1a: ... <waiting ...>`) while the
//! other sessions' steps run; when a later step unblocks it, it is printed as
//! `step s1a: <... completed>` with its results, after the step that unblocked it.
//!
//! **A step due from a blocked session.** isolationtester then waits for the blocked step to
//! complete, and after `PGISOLATIONTIMEOUT` (300 s) cancels it (`isolationtester: canceling step
//! s1a after 300 seconds`): the step fails with `canceling statement due to user request` (57014),
//! which aborts its transaction as any error does, and the session's next step runs (in the failed
//! transaction block: `25P02` until `COMMIT`/`ROLLBACK`). Here the system is settled when the step
//! is due, so the blocked step cannot complete before its session's next step: the runner cancels it
//! at once (through the protocol, [`WaitObserver::cancel`](ordo::txn::wait::WaitObserver::cancel))
//! and says so in a line of its own. Steps still blocked when the permutation ends are cancelled
//! the same way, in the order they began waiting, as isolationtester's final wait does. The runner
//! never ends or starts a transaction itself. Should a protocol ignore the cancel, the run stops
//! with [`RunError::MutuallyBlocked`] (isolationtester: `failed to complete permutation due to
//! mutually-blocking steps`, exit 1).
//!
//! **Setup.** A failing `setup` block (or a session's `setup`) stops the run with
//! [`RunError::SetupFailed`], as isolationtester exits on `setup failed: ...`; the permutations
//! that ran before it are kept in the error for the caller to print.
//!
//! **History.** Sessions record their histories; after setup the engine is checkpointed so every row
//! is version 0, and at the end of a permutation Ordo's serializability checker reads the sessions'
//! histories: the summary line tells whether the committed transactions were serializable.

use super::isolation;
use super::parse::Spec;
use crate::exec::Output;
use crate::format;
use crate::session::{self, AnyEngine, Reply, Session, StmtResult, TxnEnd};
use ordo::check::{self, History};
use ordo::protocols::{ProtocolConfig, UnknownProtocol};
use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;

/// Wait rounds a blocked session must report after the last change to count as settled.
pub const SETTLE_ROUNDS: u64 = 64;

/// How to run a spec.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The protocol; `None`: from the isolation levels the spec names ([`isolation`]).
    pub protocol: Option<String>,
}

/// One printed event of a permutation.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StepEvent {
    pub step: String,
    pub session: String,
    /// Blocked when issued.
    pub waiting: bool,
    /// Completed after having waited.
    pub completed_late: bool,
    /// The runner cancelled this (blocked) step: the line saying so; no results.
    pub canceling: Option<String>,
    pub results: Vec<StmtResult>,
}

/// The outcome of one permutation.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PermutationResult {
    pub steps: Vec<String>,
    pub events: Vec<StepEvent>,
    pub notes: Vec<String>,
    /// Per session: how each of its transactions ended.
    pub sessions: Vec<(String, Vec<TxnEnd>)>,
    /// The checker's verdict on the sessions' history.
    pub serializable: bool,
    pub anomalies: String,
    /// A runner that judges something else than a history (the backends' outcome check) says
    /// so here; the summary prints it instead of the history verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

/// A whole run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SpecResult {
    pub protocol: String,
    pub note: Option<String>,
    pub sessions: usize,
    pub permutations: Vec<PermutationResult>,
}

/// Why a spec could not be run, or stopped; one line each.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// `--protocol` names no protocol.
    #[error(transparent)]
    UnknownProtocol(#[from] UnknownProtocol),
    /// More sessions than an engine serves beside the setup session.
    #[error("a spec may have at most {0} sessions")]
    TooManySessions(usize),
    /// The protocol cannot overlap interactive sessions (see [`isolation::refusal`]).
    #[error("{0}")]
    NotConcurrent(String),
    /// A `setup` block failed (isolationtester: `setup failed: ...`, exit 1). `done` holds the
    /// permutations that ran before; `steps` names the one whose setup failed.
    #[error("{message}")]
    SetupFailed {
        message: String,
        steps: Vec<String>,
        done: Box<SpecResult>,
    },
    /// A blocked step did not end when cancelled (a protocol whose wait ignores the cancel).
    #[error(
        "failed to complete permutation due to mutually-blocking steps: step {step} ignored its cancel under `{protocol}`"
    )]
    MutuallyBlocked { step: String, protocol: String },
}

/// Chooses the protocol and runs every permutation.
pub fn run_spec(spec: &Spec, opts: &RunOptions) -> Result<SpecResult, RunError> {
    let (protocol, note) = match &opts.protocol {
        Some(p) => {
            ordo::protocols::info(p).ok_or_else(|| UnknownProtocol(p.clone()))?;
            (p.clone(), None)
        }
        None => {
            let (p, note) = isolation::protocol_for(isolation::level_in(&spec.all_sql()));
            (p.to_string(), note)
        }
    };
    if let Some(why) = isolation::refusal(&protocol, ordo::protocols::Interactive::Concurrent) {
        return Err(RunError::NotConcurrent(why));
    }
    if spec.sessions.len() + 1 > crate::engine::MAX_SESSIONS {
        return Err(RunError::TooManySessions(crate::engine::MAX_SESSIONS - 1));
    }
    let mut res = SpecResult {
        protocol,
        note,
        sessions: spec.sessions.len(),
        permutations: Vec::new(),
    };
    for perm in spec.permutations() {
        match run_permutation(spec, &res.protocol, &perm) {
            Ok(p) => res.permutations.push(p),
            Err(Stop::Setup(message)) => {
                return Err(RunError::SetupFailed {
                    message,
                    steps: perm.iter().map(|&p| spec.step(p).name.clone()).collect(),
                    done: Box::new(res),
                })
            }
            Err(Stop::Stuck(step)) => {
                return Err(RunError::MutuallyBlocked {
                    step,
                    protocol: res.protocol,
                })
            }
        }
    }
    Ok(res)
}

/// Why a permutation stopped short.
enum Stop {
    /// A setup block failed: the message.
    Setup(String),
    /// A cancelled step that did not end: its name.
    Stuck(String),
}

struct Live {
    session: Session,
    /// The step it is running, if busy.
    busy: Option<(usize, usize)>,
    ends: Vec<TxnEnd>,
}

struct Runner<'a> {
    spec: &'a Spec,
    live: Vec<Live>,
    /// Blocked sessions, in the order their steps began waiting (isolationtester's `waiting[]`).
    waiting: Vec<usize>,
    events: Vec<StepEvent>,
}

impl Runner<'_> {
    /// Waits until every session is idle or settled in a wait; returns the replies that came in, by
    /// session, in the order their steps began waiting.
    fn settle(&mut self) -> Vec<(usize, (usize, usize), Reply)> {
        let mut done = Vec::new();
        let snapshot = |live: &[Live]| -> Vec<u64> {
            live.iter().map(|l| l.session.observer().rounds()).collect()
        };
        let mut base = snapshot(&self.live);
        // Per session, the rounds it had reported when this settle first saw it waiting.
        let mut began: Vec<Option<u64>> = vec![None; self.live.len()];
        let mut was_unready = false;
        loop {
            let mut progressed = false;
            for (i, l) in self.live.iter_mut().enumerate() {
                if let Some(step) = l.busy {
                    if let Some(r) = l.session.try_reply() {
                        l.busy = None;
                        l.ends.extend(r.ends.iter().cloned());
                        done.push((i, step, r));
                        progressed = true;
                    }
                }
            }
            if progressed {
                base = snapshot(&self.live);
                continue;
            }
            // A wait that began since the base is a change too: the others' rounds count only from
            // the first poll at which every waiter has reported two rounds in its wait (the
            // protocol examines its lock, and publishes what it waits for, between the first two).
            // Otherwise a waiter that ran its rounds before another closed a cycle with it would
            // count as settled without having searched for that cycle.
            let mut unready = false;
            for (i, l) in self.live.iter().enumerate() {
                let o = l.session.observer();
                let waiting = l.busy.is_some() && o.is_waiting();
                match (waiting, began[i]) {
                    (true, None) => {
                        began[i] = Some(o.rounds());
                        unready = true;
                    }
                    (true, Some(b)) => unready |= o.rounds() < b + 2,
                    (false, _) => began[i] = None,
                }
            }
            if unready || was_unready {
                base = snapshot(&self.live);
            }
            was_unready = unready;
            let settled = self.live.iter().enumerate().all(|(i, l)| {
                let o = l.session.observer();
                l.busy.is_none() || (o.is_waiting() && o.rounds() >= base[i] + SETTLE_ROUNDS)
            });
            if settled {
                break;
            }
            // A polling tick, not a timing decision: only replies and wait states decide.
            std::thread::sleep(Duration::from_micros(50));
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

    /// Records completed steps; `late`: they had been waiting.
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

    /// Cancels session `s`'s blocked step (see the module docs) and records what completes.
    fn cancel(&mut self, s: usize, why: &str) -> Result<(), Stop> {
        let Some(step) = self.live[s].busy else {
            return Ok(());
        };
        let name = self.spec.step(step).name.clone();
        self.events.push(StepEvent {
            canceling: Some(format!("canceling step {name}: {why}")),
            ..self.event(step)
        });
        self.live[s].session.observer().cancel();
        loop {
            let done = self.settle();
            let progressed = !done.is_empty();
            self.record(done, true);
            if self.live[s].busy.is_none() {
                return Ok(());
            }
            if !progressed {
                return Err(Stop::Stuck(name));
            }
        }
    }

    fn step(&mut self, step: (usize, usize)) -> Result<(), Stop> {
        let s = step.0;
        if self.live[s].busy.is_some() {
            let name = &self.spec.sessions[s].name;
            let why = format!("session {name}'s next step is due and nothing can unblock it");
            self.cancel(s, &why)?;
        }
        self.live[s].session.send(&self.spec.step(step).sql.sql);
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

    /// isolationtester's final wait: each step still blocked, in the order they began waiting, is
    /// cancelled.
    fn finish(&mut self) -> Result<(), Stop> {
        while let Some(&s) = self.waiting.first() {
            self.cancel(s, "the permutation has ended and nothing can unblock it")?;
        }
        Ok(())
    }
}

/// Runs a setup block; the first error, as isolationtester reports it.
fn setup_block(session: &Session, sql: &str, what: &str) -> Result<Vec<TxnEnd>, Stop> {
    let r = session.execute(sql);
    match r.results.iter().find_map(|x| x.result.as_ref().err()) {
        Some(e) => Err(Stop::Setup(format!(
            "{what} failed: {} ({})",
            e.message, e.code
        ))),
        None => Ok(r.ends),
    }
}

fn run_block(session: &Session, sql: &str, what: &str, notes: &mut Vec<String>) {
    let r = session.execute(sql);
    for res in r.results {
        if let Err(e) = res.result {
            notes.push(format!("{what} failed: {} ({})", e.message, e.code));
        }
    }
}

fn run_permutation(
    spec: &Spec,
    protocol: &str,
    perm: &[(usize, usize)],
) -> Result<PermutationResult, Stop> {
    let config = ProtocolConfig {
        threads: crate::engine::MAX_SESSIONS,
        lock_wait_timeout: Duration::from_secs(3600),
        ..ProtocolConfig::default()
    };
    let engine: Arc<dyn AnyEngine> =
        session::open(protocol, config, true).expect("protocol checked by run_spec");
    let control = engine.clone().session(0);
    let mut notes = Vec::new();
    for b in &spec.setup {
        setup_block(&control, &b.sql, "setup")?;
    }
    // Checkpoint: every row becomes version 0, so the sessions' history stands on its own.
    checkpoint(&control, &mut notes);
    let live: Vec<Live> = (0..spec.sessions.len())
        .map(|i| Live {
            session: engine.clone().session(i as u32 + 1),
            busy: None,
            ends: Vec::new(),
        })
        .collect();
    let mut runner = Runner {
        spec,
        live,
        waiting: Vec::new(),
        events: Vec::new(),
    };
    for (i, s) in spec.sessions.iter().enumerate() {
        if let Some(b) = &s.setup {
            let what = format!("setup of session {}", s.name);
            let ends = setup_block(&runner.live[i].session, &b.sql, &what)?;
            runner.live[i].ends.extend(ends);
        }
    }
    let ran = perm
        .iter()
        .try_for_each(|&step| runner.step(step))
        .and_then(|()| runner.finish());
    if let Err(stop) = ran {
        // Sessions stuck in a wait cannot be joined: leave them (and their engine) behind.
        std::mem::forget(std::mem::take(&mut runner.live));
        std::mem::forget(control);
        std::mem::forget(engine);
        return Err(stop);
    }
    // Session teardowns, then histories.
    for (i, s) in spec.sessions.iter().enumerate() {
        if let Some(b) = &s.teardown {
            let r = runner.live[i].session.execute(&b.sql);
            runner.live[i].ends.extend(r.ends);
        }
    }
    let mut txns = Vec::new();
    for l in &runner.live {
        // A session left inside a transaction block ends it first (as a disconnect would).
        l.session.execute("ROLLBACK");
        l.session.send_history();
        txns.extend(l.session.reply().history);
    }
    let report = check::check(&History { txns });
    let sessions = spec
        .sessions
        .iter()
        .zip(&runner.live)
        .map(|(s, l)| (s.name.clone(), l.ends.clone()))
        .collect();
    drop(std::mem::take(&mut runner.live));
    if let Some(b) = &spec.teardown {
        run_block(&control, &b.sql, "teardown", &mut notes);
    }
    Ok(PermutationResult {
        steps: perm.iter().map(|&p| spec.step(p).name.clone()).collect(),
        events: runner.events,
        notes,
        sessions,
        serializable: report.is_serializable(),
        anomalies: if report.is_serializable() {
            String::new()
        } else {
            report.summary()
        },
        outcome: None,
    })
}

/// Rebuilds the engine with its catalog unchanged (see [`crate::engine`]).
fn checkpoint(control: &Session, notes: &mut Vec<String>) {
    if let Err(e) = control.checkpoint() {
        notes.push(format!("checkpoint failed: {}", e.message));
    }
}

fn end_text(e: &TxnEnd) -> String {
    match e {
        TxnEnd::Committed => "committed".into(),
        TxnEnd::RolledBack => "rolled back".into(),
        TxnEnd::Aborted(err) => format!("aborted {}", err.code),
    }
}

fn results_text(out: &mut String, results: &[StmtResult]) {
    for r in results {
        match &r.result {
            Ok(Output::Rows(rs)) => out.push_str(&format::table(rs)),
            Ok(Output::Command(_)) => {}
            Err(e) => {
                let _ = writeln!(out, "ERROR:  {}", e.message);
            }
        }
    }
}

/// The text report, close to isolationtester's expected-output files.
pub fn render_text(spec: &Spec, res: &SpecResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Parsed test spec with {} sessions", res.sessions);
    let _ = writeln!(out, "protocol: {}", res.protocol);
    if let Some(n) = &res.note {
        let _ = writeln!(out, "note: {n}");
    }
    for p in &res.permutations {
        let _ = writeln!(out, "\nstarting permutation: {}", p.steps.join(" "));
        for ev in &p.events {
            if let Some(line) = &ev.canceling {
                let _ = writeln!(out, "{line}");
            } else if ev.completed_late {
                let _ = writeln!(out, "step {}: <... completed>", ev.step);
            } else {
                let sql = spec
                    .sessions
                    .iter()
                    .flat_map(|s| &s.steps)
                    .find(|s| s.name == ev.step)
                    .map(|s| s.sql.sql.trim().to_string())
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "step {}: {}{}",
                    ev.step,
                    sql,
                    if ev.waiting { " <waiting ...>" } else { "" }
                );
            }
            results_text(&mut out, &ev.results);
        }
        for n in &p.notes {
            let _ = writeln!(out, "note: {n}");
        }
        let sessions: Vec<String> = p
            .sessions
            .iter()
            .map(|(n, ends)| {
                let e: Vec<String> = ends.iter().map(end_text).collect();
                format!(
                    "{n} {}",
                    if e.is_empty() {
                        "-".to_string()
                    } else {
                        e.join(",")
                    }
                )
            })
            .collect();
        let verdict = if let Some(o) = &p.outcome {
            o.clone()
        } else if p.serializable {
            "history serializable".to_string()
        } else {
            format!("history NOT serializable: {}", p.anomalies)
        };
        let _ = writeln!(out, "summary: {}; {verdict}", sessions.join("; "));
    }
    out
}

/// What a run printed before its setup failed: the permutations before, then the failing one's
/// header (isolationtester prints it before running the setup).
pub fn render_setup_failure(spec: &Spec, done: &SpecResult, steps: &[String]) -> String {
    let mut out = render_text(spec, done);
    let _ = writeln!(out, "\nstarting permutation: {}", steps.join(" "));
    out
}
