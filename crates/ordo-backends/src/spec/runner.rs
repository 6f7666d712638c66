//! Driving one permutation's steps through the sessions, with isolationtester's semantics: a step
//! is sent, the runner waits until every session is idle or blocked, a blocked step is printed as
//! `<waiting ...>` and later as `<... completed>`, and a blocked step whose session's next step is
//! due (or that outlives the permutation) is ended — cancelled when it waits on DIBS, given the
//! engine's own lock timeout when it waits in the engine (see [`super`]).

use super::session::{Handle, Reply};
use super::{SpecOptions, Stop};
use ordo_sql::session::TxnEnd;
use ordo_sql::spec::run::{StepEvent, SETTLE_ROUNDS};
use ordo_sql::spec::Spec;
use std::time::{Duration, Instant};

pub(super) struct Live {
    pub(super) handle: Handle,
    /// The step it is running, if busy.
    pub(super) busy: Option<(usize, usize)>,
    pub(super) ends: Vec<TxnEnd>,
}

pub(super) struct Runner<'a> {
    pub(super) spec: &'a Spec,
    pub(super) opts: &'a SpecOptions,
    pub(super) live: Vec<Live>,
    /// Blocked sessions, in the order their steps began waiting.
    pub(super) waiting: Vec<usize>,
    pub(super) events: Vec<StepEvent>,
}

impl Runner<'_> {
    pub(super) fn sessions_setup(&mut self) -> Result<(), Stop> {
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

    pub(super) fn step(&mut self, step: (usize, usize)) -> Result<(), Stop> {
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
    pub(super) fn finish(&mut self) -> Result<(), Stop> {
        while let Some(&s) = self.waiting.first() {
            self.unblock(s, "the permutation has ended and nothing can unblock it")?;
        }
        Ok(())
    }
}
