//! Verification runs: a fixed number of transactions with history recording on, then the checker.

use super::prefetch::Prefetch;
use super::workload::{Violation, Workload};
use crate::check::{self, Event, History, Report, TxnRecord};
use crate::protocols::{self, Protocol, ProtocolConfig, ProtocolVisitor, UnknownProtocol};
use crate::txn::{Abort, AbortReason, RequestSource, Ticket};

/// How to run a verification.
#[derive(Clone, Debug)]
pub struct VerifyConfig {
    /// What the protocol is opened with, its thread count the number of workers the run starts.
    pub protocol: ProtocolConfig,
    /// Transactions to run to completion, in total (split evenly among threads).
    pub txns: u64,
    pub seed: u64,
    /// Prefetch each transaction's declared records before it runs, as `ordo bench` does by
    /// default (VLL's point-lock protocols prefetch while they plan): the protocols then run the
    /// code paths they run in a benchmark.
    pub prefetch: bool,
}

/// A checked run.
pub struct Verified {
    pub history: History,
    pub report: Report,
    /// The workload's own invariant check on the final state.
    pub invariants: Result<(), Violation>,
}

/// The least memory a recorded history of `txns` transactions takes: each transaction's record
/// and one read and one write event (a real history, and the checker's graph over it, take more).
pub fn recording_floor(txns: u64) -> u64 {
    let per_txn = std::mem::size_of::<TxnRecord>() + 2 * std::mem::size_of::<Event>();
    txns.saturating_mul(per_txn as u64)
}

/// Refuses a run whose recording cannot fit in `memory` bytes (`None`: unknown, nothing refused).
fn check_recording(txns: u64, memory: Option<u64>) -> crate::Result<()> {
    let needs = recording_floor(txns);
    match memory {
        Some(memory) if needs > memory => Err(crate::Error::RecordingOverMemory {
            txns,
            needs,
            memory,
        }),
        _ => Ok(()),
    }
}

/// [`run`] under the protocol registered as `name` (for callers that pick protocols by name, as
/// the workloads' tests do); `Err` if no protocol has that name.
pub fn run_named<W: Workload>(
    name: &str,
    workload: &W,
    cfg: &VerifyConfig,
) -> Result<crate::Result<Verified>, UnknownProtocol> {
    struct Named<'a, W> {
        workload: &'a W,
        cfg: &'a VerifyConfig,
    }
    impl<W: Workload> ProtocolVisitor for Named<'_, W> {
        type Output = crate::Result<Verified>;
        fn visit<P: Protocol>(self) -> Self::Output {
            run::<P, W>(self.workload, self.cfg)
        }
    }
    protocols::with_protocol(name, Named { workload, cfg })
}

/// Runs `cfg.txns` transactions of `workload` under `P` with recording on and checks the history.
/// Refuses, before loading anything, a `cfg.txns` whose recording could not fit the machine.
pub fn run<P: Protocol, W: Workload>(workload: &W, cfg: &VerifyConfig) -> crate::Result<Verified> {
    check_recording(cfg.txns, super::memory::physical())?;
    let (protocol, _) = super::bench::open::<P, W>(workload, &cfg.protocol)?;
    let per_thread = cfg.txns.div_ceil(cfg.protocol.threads.max(1) as u64);
    let mut txns = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.protocol.threads)
            .map(|t| {
                let protocol = &protocol;
                s.spawn(move || {
                    let mut worker = protocol.worker(t as u32, true);
                    let mut source = CountedSource {
                        workload,
                        gen: workload.generator(t as u32, cfg.seed),
                        prefetch: Prefetch {
                            db: protocol.db(),
                            on: cfg.prefetch,
                        },
                        left: per_thread,
                        seed: cfg.seed.wrapping_add(t as u64 + 1),
                    };
                    protocol.run_worker(&mut worker, &mut source);
                    P::recorder(&mut worker).take()
                })
            })
            .collect();
        txns.extend(super::join::join_workers(handles).into_iter().flatten());
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

/// Hands out a fixed number of the workload's transactions, prefetching their records as the
/// benchmark's source does.
struct CountedSource<'a, W: Workload, M> {
    workload: &'a W,
    gen: W::Gen,
    prefetch: Prefetch<'a, M>,
    left: u64,
    seed: u64,
}

impl<W: Workload, M> CountedSource<'_, W, M> {
    fn draw(&mut self, program: &mut W::Program) -> Option<Ticket> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.workload.next(&mut self.gen, program);
        Some(Ticket::now(0))
    }
}

impl<W: Workload, M: Default + Send + Sync> RequestSource for CountedSource<'_, W, M> {
    type Program = W::Program;
    fn program(&self) -> W::Program {
        self.workload.program()
    }
    fn next(&mut self, program: &mut W::Program) -> Option<Ticket> {
        let drawn = self.draw(program);
        self.prefetch.next(drawn, program)
    }
    fn next_resolving(&mut self, program: &mut W::Program) -> Option<(Ticket, bool)> {
        let drawn = self.draw(program);
        self.prefetch.resolving(drawn)
    }
    fn aborted(&mut self, _: AbortReason) {}
    fn finished(&mut self, _: Ticket, _: Result<(), Abort>) {}
    fn seed(&self) -> u64 {
        self.seed
    }
}

#[cfg(test)]
mod tests {
    use super::super::prefetch::{assert_resolving_passes_prefetch_on, test_workload};
    use super::*;

    #[test]
    fn a_recording_past_the_memory_is_refused_before_it_runs() {
        assert!(check_recording(100_000, Some(1 << 30)).is_ok());
        assert!(
            check_recording(u64::MAX, None).is_ok(),
            "unknown memory: nothing refused"
        );
        let e = check_recording(u64::MAX, Some(24 << 30)).unwrap_err();
        assert!(
            matches!(e, crate::Error::RecordingOverMemory { txns: u64::MAX, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("--txns"), "{e}");
        // The floor grows with the count and never wraps.
        assert!(recording_floor(1_000) < recording_floor(1_000_000));
        assert_eq!(recording_floor(u64::MAX), u64::MAX);
    }

    /// The verification source prefetches as the benchmark's does: `next` and `next_resolving`
    /// hand out the same programs, `next_resolving` passes the prefetch setting on to the protocol,
    /// and both stop after the source's count.
    #[test]
    fn the_counted_source_passes_the_prefetch_setting_on() {
        let (workload, db) = test_workload();
        for prefetch in [false, true] {
            let source = || CountedSource {
                workload: &workload,
                gen: workload.generator(0, 7),
                prefetch: Prefetch {
                    db: &db,
                    on: prefetch,
                },
                left: 5,
                seed: 7,
            };
            let (mut plain, mut resolving) = (source(), source());
            let (mut a, mut b) =
                assert_resolving_passes_prefetch_on(&mut plain, &mut resolving, prefetch, 5);
            assert!(plain.next(&mut a).is_none());
            assert!(resolving.next_resolving(&mut b).is_none());
        }
    }
}
