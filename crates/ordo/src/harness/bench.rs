//! Closed-loop benchmark runs: warm-up, a measured interval, counts and latencies.
//!
//! Each worker thread hands the protocol a [`RequestSource`] and lets it run its own loop
//! ([`Protocol::run_worker`]; by default: draw a program, run it to commit, retrying concurrency aborts
//! with randomized backoff). Latency runs from hand-out to commit, retries included (with `prefetch`,
//! the prefetch of its declared records too). Only transactions that start and complete inside the
//! measured interval count.

use super::prefetch::Prefetch;
use super::workload::{Violation, Workload};
use crate::error::Error;
use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::{CreateTableError, Database, LoadError};
use crate::txn::{Abort, AbortReason, RequestSource, Ticket};
use hdrhistogram::Histogram;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// How to run one benchmark.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// What the protocol is opened with, its thread count the number of workers the run starts.
    pub protocol: ProtocolConfig,
    pub warmup: Duration,
    pub duration: Duration,
    pub seed: u64,
    /// Print a live progress line on stderr (when it is a terminal).
    pub progress: bool,
    /// Prefetch each program's declared records before executing it (see
    /// [`crate::txn::prefetch_declared`]; a protocol that collects the accesses itself while planning
    /// does it there, see [`RequestSource::next_resolving`]); off reproduces testbeds that do not
    /// (DBx1000).
    pub prefetch: bool,
    /// Pin worker `t` to the `t`-th CPU this process may use ([`super::affinity`]); off leaves
    /// placement to the kernel.
    pub pin: bool,
}

/// What one run measured.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub threads: usize,
    /// Measured interval.
    pub elapsed: Duration,
    /// Transactions committed in the interval.
    pub committed: u64,
    /// Concurrency aborts (each retried), by reason ([`AbortReason::index`]).
    pub aborts: [u64; AbortReason::ALL.len()],
    /// Transactions that ended in a non-retryable abort (their own logic: user abort, duplicate key).
    pub rolled_back: u64,
    /// Latency of committed transactions, in nanoseconds.
    pub latency: Histogram<u64>,
    /// Seconds spent loading the database.
    pub load_secs: f64,
    /// The workload's consistency check on the final state ([`Workload::check`]).
    pub invariants: Result<(), Violation>,
}

impl RunResult {
    pub fn committed_per_sec(&self) -> f64 {
        self.committed as f64 / self.elapsed.as_secs_f64()
    }
    /// Retryable aborts in the interval.
    pub fn total_aborts(&self) -> u64 {
        AbortReason::ALL
            .iter()
            .filter(|r| r.is_retryable())
            .map(|r| self.aborts[r.index()])
            .sum()
    }
    pub fn aborts_per_commit(&self) -> f64 {
        if self.committed == 0 {
            0.0
        } else {
            self.total_aborts() as f64 / self.committed as f64
        }
    }
    /// Latency percentile `q` (0–100) in microseconds.
    pub fn latency_us(&self, q: f64) -> f64 {
        self.latency.value_at_quantile(q / 100.0) as f64 / 1000.0
    }
}

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

#[repr(align(128))]
struct Padded(AtomicU64);

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("histogram bounds")
}

/// Loads `workload` into a fresh database for protocol `P`, faults in the rest of each table's
/// declared capacity ([`Database::prefault`]) and opens the protocol with `config` (for
/// `config.threads` workers). A workload whose tables cannot fit the machine's
/// memory is refused before it loads (see [`super::memory`]), and so are more threads than the
/// protocol can run ([`Protocol::MAX_WORKERS`]).
pub fn open<P: Protocol, W: Workload>(
    workload: &W,
    config: &ProtocolConfig,
) -> crate::Result<(P, f64)> {
    let threads = config.threads;
    if threads > P::MAX_WORKERS {
        return Err(Error::TooManyThreads {
            protocol: P::INFO.name,
            max: P::MAX_WORKERS,
            asked: threads,
        });
    }
    let start = Instant::now();
    let mut db = Database::<P::Meta>::new();
    db.set_memory_limit(super::memory::physical());
    workload.load(&mut db).map_err(|source| match source {
        LoadError::Create(CreateTableError::OverMemory { .. }) => Error::OverMemory {
            workload: workload.name(),
            source,
        },
        source => Error::Load {
            workload: workload.name(),
            source,
        },
    })?;
    // Part of the load, as sizing a buffer pool is: the rows still to come up to each table's
    // declared capacity get their memory now, not inside measured transactions.
    db.prefault();
    let load_secs = start.elapsed().as_secs_f64();
    Ok((P::open(db, config), load_secs))
}

/// Runs `workload` under protocol `P`.
pub fn run<P: Protocol, W: Workload>(workload: &W, cfg: &BenchConfig) -> crate::Result<RunResult> {
    let cpus = if cfg.pin {
        Some(super::affinity::allowed_cpus()?)
    } else {
        None
    };
    let (protocol, load_secs) = open::<P, W>(workload, &cfg.protocol)?;
    // The tickets' clock calibrates itself on first use (≈ 1 ms here, much longer under a
    // profiler): here, before the workers start, not inside a measured interval.
    crate::txn::source::clock();
    let phase = AtomicU8::new(WARMUP);
    let progress: Vec<Padded> = (0..cfg.protocol.threads)
        .map(|_| Padded(AtomicU64::new(0)))
        .collect();
    let (elapsed, results) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.protocol.threads)
            .map(|t| {
                let (protocol, phase, progress) = (&protocol, &phase, &progress[t].0);
                let cpu = cpus.as_deref().map(|c| super::affinity::cpu_for(c, t));
                s.spawn(move || {
                    // A worker that could not be pinned still runs (the others may wait for the
                    // transactions it admits); the run then fails with the reason.
                    let pinned = cpu.map_or(Ok(()), super::affinity::pin_current_thread);
                    (
                        pinned,
                        worker_loop(protocol, workload, t as u32, cfg, phase, progress),
                    )
                })
            })
            .collect();
        std::thread::sleep(cfg.warmup);
        phase.store(MEASURE, Ordering::Release);
        let start = Instant::now();
        let show = cfg.progress
            && std::io::stderr().is_terminal()
            && cfg.duration >= Duration::from_secs(2);
        while start.elapsed() < cfg.duration {
            let left = cfg.duration.saturating_sub(start.elapsed());
            std::thread::sleep(left.min(Duration::from_millis(500)));
            if show {
                let done: u64 = progress.iter().map(|p| p.0.load(Ordering::Relaxed)).sum();
                let secs = start.elapsed().as_secs_f64();
                eprint!(
                    "\r  {} t={} {:.1}/{:.0}s {:.0} txn/s   ",
                    P::INFO.name,
                    cfg.protocol.threads,
                    secs,
                    cfg.duration.as_secs_f64(),
                    done as f64 / secs
                );
                let _ = std::io::stderr().flush();
            }
        }
        phase.store(STOP, Ordering::Release);
        let elapsed = start.elapsed();
        if show {
            eprint!("\r{:60}\r", "");
        }
        (elapsed, super::join::join_workers(handles))
    });
    let mut out = RunResult {
        threads: cfg.protocol.threads,
        elapsed,
        committed: 0,
        aborts: [0; AbortReason::ALL.len()],
        rolled_back: 0,
        latency: new_histogram(),
        load_secs,
        // Every worker has returned: the database is quiescent.
        invariants: workload.check(protocol.db()),
    };
    for (pinned, r) in results {
        pinned?;
        out.committed += r.committed;
        out.rolled_back += r.rolled_back;
        for (a, b) in out.aborts.iter_mut().zip(r.aborts) {
            *a += b;
        }
        out.latency.add(&r.latency).expect("histogram add");
    }
    Ok(out)
}

struct WorkerResult {
    committed: u64,
    rolled_back: u64,
    aborts: [u64; AbortReason::ALL.len()],
    latency: Histogram<u64>,
}

/// A benchmark worker's [`RequestSource`]: draws programs from the workload's generator until the
/// run stops, and counts only what happens inside the measured interval.
struct BenchSource<'a, W: Workload, M> {
    workload: &'a W,
    gen: W::Gen,
    prefetch: Prefetch<'a, M>,
    phase: &'a AtomicU8,
    progress: &'a AtomicU64,
    seed: u64,
    r: WorkerResult,
}

impl<W: Workload, M> BenchSource<'_, W, M> {
    /// Fills `program` with the generator's next transaction and stamps it, unless the run is over.
    #[inline]
    fn draw(&mut self, program: &mut W::Program) -> Option<Ticket> {
        let ph = self.phase.load(Ordering::Acquire);
        if ph == STOP {
            return None;
        }
        self.workload.next(&mut self.gen, program);
        Some(Ticket::now(ph as u64))
    }
}

impl<W: Workload, M: Default + Send + Sync> RequestSource for BenchSource<'_, W, M> {
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

    fn aborted(&mut self, reason: AbortReason) {
        if self.phase.load(Ordering::Acquire) == MEASURE {
            self.r.aborts[reason.index()] += 1;
        }
    }

    fn finished(&mut self, ticket: Ticket, outcome: Result<(), Abort>) {
        // Count only transactions that started and finished inside the measured interval.
        if ticket.tag != MEASURE as u64 || self.phase.load(Ordering::Acquire) != MEASURE {
            return;
        }
        match outcome {
            Ok(()) => {
                self.r.committed += 1;
                let ns = ticket.elapsed_ns();
                let _ = self.r.latency.record(ns.max(1));
                self.progress.store(self.r.committed, Ordering::Relaxed);
            }
            Err(_) => self.r.rolled_back += 1,
        }
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn over(&self) -> bool {
        self.phase.load(Ordering::Acquire) == STOP
    }
}

fn worker_loop<P: Protocol, W: Workload>(
    protocol: &P,
    workload: &W,
    thread: u32,
    cfg: &BenchConfig,
    phase: &AtomicU8,
    progress: &AtomicU64,
) -> WorkerResult {
    let mut worker = protocol.worker(thread, false);
    let mut source = BenchSource {
        workload,
        gen: workload.generator(thread, cfg.seed),
        prefetch: Prefetch {
            db: protocol.db(),
            on: cfg.prefetch,
        },
        phase,
        progress,
        seed: cfg.seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        r: WorkerResult {
            committed: 0,
            rolled_back: 0,
            aborts: [0; AbortReason::ALL.len()],
            latency: new_histogram(),
        },
    };
    protocol.run_worker(&mut worker, &mut source);
    source.r
}

#[cfg(test)]
mod tests {
    use super::super::prefetch::{assert_resolving_passes_prefetch_on, test_workload};
    use super::*;

    /// `next` and `next_resolving` hand out the same stream of programs; `next_resolving` passes
    /// the prefetch setting on to the protocol (which then prefetches while it plans) instead of
    /// acting on it; both stop with the run.
    #[test]
    fn next_resolving_leaves_the_prefetch_to_the_protocol() {
        let (workload, db) = test_workload();
        let phase = AtomicU8::new(MEASURE);
        let progress = AtomicU64::new(0);
        for prefetch in [false, true] {
            let source = |seed| BenchSource {
                workload: &workload,
                gen: workload.generator(0, seed),
                prefetch: Prefetch {
                    db: &db,
                    on: prefetch,
                },
                phase: &phase,
                progress: &progress,
                seed,
                r: WorkerResult {
                    committed: 0,
                    rolled_back: 0,
                    aborts: [0; AbortReason::ALL.len()],
                    latency: new_histogram(),
                },
            };
            let (mut plain, mut resolving) = (source(7), source(7));
            let (mut a, mut b) =
                assert_resolving_passes_prefetch_on(&mut plain, &mut resolving, prefetch, 5);
            phase.store(STOP, Ordering::Release);
            assert!(plain.next(&mut a).is_none());
            assert!(resolving.next_resolving(&mut b).is_none());
            phase.store(MEASURE, Ordering::Release);
        }
    }

    /// More threads than a protocol can name are a one-line error before anything is loaded,
    /// not a worker's panic mid-run.
    #[test]
    fn more_threads_than_a_protocol_runs_are_refused() {
        use crate::protocols::nocc::NoCC;
        use crate::protocols::twopl::{Detect, TableDetect, TwoPl, WaitDie};
        let (workload, _) = test_workload();
        let threads = ProtocolConfig::with_threads;
        let e = open::<TwoPl<Detect>, _>(&workload, &threads(64))
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "2pl-detect runs at most 63 worker threads, not 64"
        );
        assert!(open::<TwoPl<WaitDie>, _>(&workload, &threads(64)).is_err());
        assert!(open::<TwoPl<TableDetect>, _>(&workload, &threads(64)).is_err());
        assert!(open::<TwoPl<Detect>, _>(&workload, &threads(63)).is_ok());
        assert!(open::<NoCC, _>(&workload, &threads(1024)).is_ok());
    }
}
