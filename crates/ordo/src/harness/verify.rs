//! Verification runs: a fixed number of transactions with history recording on, then the checker.

use super::workload::Workload;
use crate::check::{self, History, Report};
use crate::protocols::{vll::VllConfig, Protocol};
use crate::txn::{Abort, AbortReason, RequestSource, Ticket};
use std::time::Instant;

/// How to run a verification.
#[derive(Clone, Debug)]
pub struct VerifyConfig {
    pub threads: usize,
    /// Transactions to run to completion, in total (split evenly among threads).
    pub txns: u64,
    pub seed: u64,
    /// Knobs of the VLL family (ignored by the other protocols).
    pub vll: VllConfig,
}

/// A checked run.
pub struct Verified {
    pub history: History,
    pub report: Report,
    /// The workload's own invariant check on the final state.
    pub invariants: Result<(), String>,
}

/// Runs `cfg.txns` transactions of `workload` under `P` with recording on and checks the history.
pub fn run<P: Protocol, W: Workload>(workload: &W, cfg: &VerifyConfig) -> Result<Verified, String> {
    let (protocol, _) = super::bench::open::<P, W>(workload, cfg.threads, cfg.vll)?;
    let per_thread = cfg.txns.div_ceil(cfg.threads.max(1) as u64);
    let mut txns = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|t| {
                let protocol = &protocol;
                s.spawn(move || {
                    let mut worker = protocol.worker(t as u32, true);
                    let mut source = CountedSource {
                        workload,
                        gen: workload.generator(t as u32, cfg.seed),
                        left: per_thread,
                        seed: cfg.seed.wrapping_add(t as u64 + 1),
                    };
                    protocol.run_worker(&mut worker, &mut source);
                    P::recorder(&mut worker).take()
                })
            })
            .collect();
        for h in handles {
            txns.extend(h.join().expect("worker thread panicked"));
        }
    });
    let history = History { txns };
    let report = check::check(&history);
    let invariants = workload.check(protocol.db());
    Ok(Verified {
        history,
        report,
        invariants,
    })
}

/// Hands out a fixed number of the workload's transactions.
struct CountedSource<'a, W: Workload> {
    workload: &'a W,
    gen: W::Gen,
    left: u64,
    seed: u64,
}

impl<W: Workload> RequestSource for CountedSource<'_, W> {
    type Program = W::Program;
    fn program(&self) -> W::Program {
        self.workload.program()
    }
    fn next(&mut self, program: &mut W::Program) -> Option<Ticket> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.workload.next(&mut self.gen, program);
        Some(Ticket {
            started: Instant::now(),
            tag: 0,
        })
    }
    fn aborted(&mut self, _: AbortReason) {}
    fn finished(&mut self, _: Ticket, _: Result<(), Abort>) {}
    fn seed(&self) -> u64 {
        self.seed
    }
}
