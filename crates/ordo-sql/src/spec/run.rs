//! Running a spec: each permutation on a fresh engine, one session thread per spec session.
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
//! A step whose session is still blocked from an earlier step cannot run (isolationtester would wait
//! for it): the runner then rolls back the idle sessions so the blocked one can finish, and says so.
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
}

/// A whole run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SpecResult {
    pub protocol: String,
    pub note: Option<String>,
    pub sessions: usize,
    pub permutations: Vec<PermutationResult>,
}

/// Why a spec could not be run (before its first permutation); one line each.
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
    let mut permutations = Vec::new();
    for perm in spec.permutations() {
        permutations.push(run_permutation(spec, &protocol, &perm));
    }
    Ok(SpecResult {
        protocol,
        note,
        sessions: spec.sessions.len(),
        permutations,
    })
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
    events: Vec<StepEvent>,
    notes: Vec<String>,
}

impl Runner<'_> {
    /// Waits until every session is idle or settled in a wait; returns the replies that came in, by
    /// session.
    fn settle(&mut self) -> Vec<(usize, (usize, usize), Reply)> {
        let mut done = Vec::new();
        let snapshot = |live: &[Live]| -> Vec<u64> {
            live.iter().map(|l| l.session.observer().rounds()).collect()
        };
        let mut base = snapshot(&self.live);
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
        done.sort_by_key(|d| d.0);
        done
    }

    fn record(&mut self, done: Vec<(usize, (usize, usize), Reply)>, late: bool) {
        for (s, step, r) in done {
            self.events.push(StepEvent {
                step: self.spec.step(step).name.clone(),
                session: self.spec.sessions[s].name.clone(),
                waiting: false,
                completed_late: late,
                results: r.results,
            });
        }
    }

    /// Rolls back every idle session so blocked ones can finish.
    fn unblock(&mut self, why: &str) {
        self.notes.push(why.to_string());
        self.events.push(StepEvent {
            step: String::new(),
            session: String::new(),
            waiting: false,
            completed_late: false,
            results: vec![StmtResult {
                sql: format!("-- {why}"),
                result: Ok(Output::Command("NOTE".into())),
            }],
        });
        let idle: Vec<usize> = (0..self.live.len())
            .filter(|&i| self.live[i].busy.is_none())
            .collect();
        for i in idle {
            let r = self.live[i].session.execute("ROLLBACK");
            self.live[i].ends.extend(r.ends);
        }
        loop {
            let done = self.settle();
            let progressed = !done.is_empty();
            self.record(done, true);
            if !progressed || self.live.iter().all(|l| l.busy.is_none()) {
                break;
            }
        }
    }

    fn step(&mut self, step: (usize, usize)) {
        let s = step.0;
        if self.live[s].busy.is_some() {
            let name = &self.spec.sessions[s].name;
            self.unblock(&format!(
                "session {name} is still blocked when its next step is due: rolling back the idle sessions"
            ));
        }
        self.live[s].session.send(&self.spec.step(step).sql.sql);
        self.live[s].busy = Some(step);
        let mut done = self.settle();
        let mine = done.iter().position(|d| d.0 == s);
        match mine {
            Some(i) => {
                let d = done.remove(i);
                self.record(vec![d], false);
            }
            None => self.events.push(StepEvent {
                step: self.spec.step(step).name.clone(),
                session: self.spec.sessions[s].name.clone(),
                waiting: true,
                completed_late: false,
                results: Vec::new(),
            }),
        }
        self.record(done, true);
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

fn run_permutation(spec: &Spec, protocol: &str, perm: &[(usize, usize)]) -> PermutationResult {
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
        run_block(&control, &b.sql, "setup", &mut notes);
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
        events: Vec::new(),
        notes,
    };
    for (i, s) in spec.sessions.iter().enumerate() {
        if let Some(b) = &s.setup {
            let r = runner.live[i].session.execute(&b.sql);
            runner.live[i].ends.extend(r.ends.iter().cloned());
            for res in r.results {
                if let Err(e) = res.result {
                    runner
                        .notes
                        .push(format!("setup of {} failed: {}", s.name, e.message));
                }
            }
        }
    }
    for &step in perm {
        runner.step(step);
    }
    if runner.live.iter().any(|l| l.busy.is_some()) {
        runner.unblock("sessions are still blocked at the end of the permutation: rolling back the idle sessions");
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
        run_block(&control, &b.sql, "teardown", &mut runner.notes);
    }
    PermutationResult {
        steps: perm.iter().map(|&p| spec.step(p).name.clone()).collect(),
        events: runner.events,
        notes: runner.notes,
        sessions,
        serializable: report.is_serializable(),
        anomalies: if report.is_serializable() {
            String::new()
        } else {
            report.summary()
        },
    }
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
            if ev.step.is_empty() {
                for r in &ev.results {
                    let _ = writeln!(out, "{}", r.sql);
                }
                continue;
            }
            if ev.completed_late {
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
            if !n.starts_with("session") && !n.starts_with("sessions") {
                let _ = writeln!(out, "note: {n}");
            }
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
        let verdict = if p.serializable {
            "history serializable".to_string()
        } else {
            format!("history NOT serializable: {}", p.anomalies)
        };
        let _ = writeln!(out, "summary: {}; {verdict}", sessions.join("; "));
    }
    out
}
