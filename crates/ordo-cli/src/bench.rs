//! `ordo bench`: throughput, aborts and latency per (protocol, threads), as a table and as JSON.
//!
//! A workload option given as a list (`--theta 0,0.6,0.9`) sweeps it: every point × protocol ×
//! threads runs, and each JSON row records its point as `"sweep": {"param": "theta", "value": 0.9}`
//! (`null` without a sweep), which `ordo report` uses as the x axis.

use crate::declared::Declared;
use crate::opts;
use crate::{Error, Result};
use clap::Args;
use ordo::harness::{bench, BenchConfig, RunResult};
use ordo::options::SweepPoint;
use ordo::protocols::{self, Isolation, Protocol, ProtocolConfig, ProtocolVisitor};
use ordo::txn::AbortReason;
use ordo_workloads::{catalog, Purpose, WorkloadVisitor};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Workload (see `ordo list`).
    #[arg(short = 'w', long = "workload", default_value = "ycsb")]
    pub workload: String,
    /// Protocols, comma-separated (default: all; see `ordo list`).
    #[arg(short = 'p', long)]
    pub protocols: Option<String>,
    /// Thread counts, comma-separated.
    #[arg(short = 't', long, default_value = "1,2")]
    pub threads: String,
    /// Measured seconds per run.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Warm-up seconds before each measured interval.
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Repetitions of each run; the median (by throughput) is reported.
    #[arg(long, default_value_t = 1)]
    pub reps: usize,
    /// Seed of the request generators.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Also write the results as a JSON array to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// No live progress line.
    #[arg(long)]
    pub quiet: bool,
    /// Do not prefetch each transaction's declared records before running it (as testbeds such as
    /// DBx1000 do not); applies to every protocol alike (VLL's point-lock protocols prefetch while
    /// planning).
    #[arg(long = "no-prefetch")]
    pub no_prefetch: bool,
    /// Pin worker thread t to the t-th CPU this process may use (round robin beyond them), as
    /// DBx1000 does; Linux only. Threads a protocol starts itself (Calvin's sequencer and lock
    /// manager) stay unpinned.
    #[arg(long)]
    pub pin: bool,
    /// Real engines behind DIBS (`--backend`).
    #[command(flatten)]
    pub backend: crate::backend::BackendArgs,
    /// The workload options and protocol knobs (from their declarations).
    #[command(flatten)]
    pub declared: Declared,
}

struct Runner<'a, W> {
    workload: &'a W,
    cfg: &'a BenchConfig,
}

impl<W: ordo::harness::Workload> ProtocolVisitor for Runner<'_, W> {
    type Output = ordo::Result<RunResult>;
    fn visit<P: Protocol>(self) -> Self::Output {
        bench::run::<P, W>(self.workload, self.cfg)
    }
}

pub fn seconds(name: &str, v: f64, min: f64) -> Result<Duration> {
    if v.is_finite() && v >= min && v <= 86_400.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(Error::InvalidInput(format!(
            "--{name} must be a number of seconds from {min} to 86400, got {v}"
        )))
    }
}

/// Where a benchmark's table goes, and who hears how many runs it makes and when each ends:
/// standard output for `ordo bench` ([`Stdout`]), a progress bar for `ordo reproduce`.
pub trait Sink {
    /// `runs` more (protocol, threads, point, repetition) runs will be made.
    fn planned(&mut self, _runs: u64) {}
    /// One line of the table.
    fn line(&mut self, text: &str);
    /// One run ended.
    fn finished(&mut self) {}
}

/// The table on standard output.
pub struct Stdout;

impl Sink for Stdout {
    fn line(&mut self, text: &str) {
        println!("{text}");
    }
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    // Check the output file can be written before minutes of benchmarking.
    let json = args
        .json
        .as_deref()
        .map(crate::output::PendingFile::prepare)
        .transpose()?;
    let rows = measure(&args, &mut Stdout)?;
    if let Some(file) = json {
        let text = serde_json::to_string_pretty(&rows).expect("serializable results");
        file.finish(&(text + "\n"))?;
    }
    Ok(if broke_a_promise(&rows) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether a serializable protocol left the workload inconsistent (broke its promise).
pub fn broke_a_promise(rows: &[serde_json::Value]) -> bool {
    // A row whose consistency was not checked (`null`: a run on a real engine) breaks nothing.
    rows.iter().any(|r| {
        r["consistency"].is_string() && r["consistency"] != "ok" && r["isolation"] == "Serializable"
    })
}

/// What `args` asks for, checked before anything runs: the protocols (`nocc` first), the thread
/// counts, the durations, and the sweep's points (each workload configuration, not yet built).
pub struct Plan {
    pub protos: Vec<&'static protocols::ProtocolInfo>,
    pub threads: Vec<usize>,
    pub duration: Duration,
    pub warmup: Duration,
    pub workload: &'static catalog::Entry,
    pub points: Vec<(Option<SweepPoint>, ordo::options::Settings)>,
}

/// Checks `args` (a bad value is a one-line error) and says what it would run.
pub fn plan(args: &BenchArgs) -> Result<Plan> {
    crate::backend::check_unused(&args.backend)?;
    if args.backend.backend.is_some() {
        // A run on a real engine: its own protocols and checks (no protocol of Ordo's runs).
        let checked = crate::backend::check(args)?;
        return Ok(Plan {
            protos: Vec::new(),
            threads: checked.threads,
            duration: checked.duration,
            warmup: checked.warmup,
            workload: catalog::find(&args.workload)?,
            points: args.declared.workload.sweep()?,
        });
    }
    let all = protocols::names().join(",");
    let mut protos = opts::protocols(args.protocols.as_deref().unwrap_or(&all))?;
    // nocc first, so every other row can show its overhead against the ceiling; the rest keep their
    // order, so `-p nocc,vll,nocc,vll,…` interleaves them (each row is compared with the latest nocc
    // run before it: adjacent pairs, for machines whose speed drifts between runs).
    if let Some(i) = protos.iter().position(|p| p.name == "nocc") {
        protos[..=i].rotate_right(1);
    }
    let threads = opts::threads(&args.threads)?;
    let duration = seconds("seconds", args.seconds, 0.01)?;
    let warmup = seconds("warmup", args.warmup, 0.0)?;
    if args.reps == 0 || args.reps > 1000 {
        return Err(Error::InvalidInput(format!(
            "--reps must be from 1 to 1000, got {}",
            args.reps
        )));
    }
    let workload = catalog::find(&args.workload)?;
    let options = &args.declared.workload;
    workload.check(options)?;
    Ok(Plan {
        protos,
        threads,
        duration,
        warmup,
        workload,
        points: options.sweep()?,
    })
}

/// Runs every (point, protocol, threads) of `args`, writes the table to `sink`, and returns the
/// JSON rows (what `--json` writes).
pub fn measure(args: &BenchArgs, sink: &mut dyn Sink) -> Result<Vec<serde_json::Value>> {
    crate::backend::check_unused(&args.backend)?;
    if args.backend.backend.is_some() {
        return crate::backend::measure(args, sink);
    }
    let Plan {
        protos,
        threads,
        duration,
        warmup,
        workload,
        points,
    } = plan(args)?;
    let knobs = &args.declared.knobs;
    // Build every point first, so that a bad value fails before anything runs.
    let points = points
        .into_iter()
        .map(|(point, one)| Ok((point, workload.build(&one, Purpose::Bench)?)))
        .collect::<Result<Vec<_>>>()?;
    sink.planned((points.len() * protos.len() * threads.len() * args.reps) as u64);
    let mut rows = Vec::new();
    for (point, workload) in &points {
        rows.extend(workload.visit(AllRuns {
            args,
            point: point.as_ref(),
            protos: &protos,
            threads: &threads,
            duration,
            warmup,
            knobs,
            sink: &mut *sink,
        })?);
    }
    Ok(rows)
}

/// Every (protocol, threads) run of one workload (one point of a sweep).
struct AllRuns<'a> {
    args: &'a BenchArgs,
    point: Option<&'a SweepPoint>,
    protos: &'a [&'static protocols::ProtocolInfo],
    threads: &'a [usize],
    duration: Duration,
    warmup: Duration,
    knobs: &'a ordo::options::Settings,
    sink: &'a mut dyn Sink,
}

impl WorkloadVisitor for AllRuns<'_> {
    type Output = Result<Vec<serde_json::Value>>;
    fn visit<W: ordo::harness::Workload>(self, w: &W) -> Self::Output {
        run_all(w, self)
    }
}

/// Runs, prints a table, and returns the JSON rows.
fn run_all<W: ordo::harness::Workload>(w: &W, runs: AllRuns<'_>) -> Result<Vec<serde_json::Value>> {
    let AllRuns {
        args,
        point,
        protos,
        threads,
        duration,
        warmup,
        knobs,
        sink,
    } = runs;
    let machine = crate::output::machine();
    match point {
        Some(p) => sink.line(&format!(
            "workload {} {}  [sweep {p}]",
            w.name(),
            w.params()
        )),
        None => sink.line(&format!("workload {} {}", w.name(), w.params())),
    }
    let sweep = point.map(|p| json!({"param": p.param, "value": p.value.number()}));
    let nw = crate::name_width();
    sink.line(&format!(
        "{:<nw$} {:>3} {:>12} {:>9} {:>9} {:>9} {:>8}  aborts by reason",
        "protocol", "thr", "txn/s", "abort/c", "p50 us", "p99 us", "vs nocc"
    ));
    let mut rows = Vec::new();
    let mut nocc: Vec<(usize, f64)> = Vec::new();
    for info in protos {
        for &t in threads {
            let cfg = BenchConfig {
                protocol: ProtocolConfig {
                    threads: t,
                    knobs: knobs.clone(),
                    ..ProtocolConfig::default()
                },
                warmup,
                duration,
                seed: args.seed,
                progress: !args.quiet,
                prefetch: !args.no_prefetch,
                pin: args.pin,
            };
            let mut reps = Vec::with_capacity(args.reps);
            for _ in 0..args.reps {
                let r = protocols::with_protocol(
                    info.name,
                    Runner {
                        workload: w,
                        cfg: &cfg,
                    },
                )
                .expect("validated protocol name")?;
                sink.finished();
                reps.push(r);
            }
            reps.sort_by(|a, b| a.committed_per_sec().total_cmp(&b.committed_per_sec()));
            let tputs: Vec<f64> = reps.iter().map(|r| r.committed_per_sec()).collect();
            let r = &reps[reps.len() / 2];
            if info.name == "nocc" {
                nocc.push((t, r.committed_per_sec()));
            }
            let vs = nocc
                .iter()
                .rev()
                .find(|(nt, _)| *nt == t)
                .filter(|_| info.name != "nocc")
                .map(|(_, n)| r.committed_per_sec() / n);
            let reasons: Vec<String> = AbortReason::ALL
                .iter()
                .filter(|a| r.aborts[a.index()] > 0)
                .map(|a| format!("{}={}", a.name(), r.aborts[a.index()]))
                .collect();
            sink.line(&format!(
                "{:<nw$} {:>3} {:>12.0} {:>9.4} {:>9.1} {:>9.1} {:>8}  {}",
                info.name,
                t,
                r.committed_per_sec(),
                r.aborts_per_commit(),
                r.latency_us(50.0),
                r.latency_us(99.0),
                vs.map(|v| format!("{:.2}x", v)).unwrap_or_default(),
                reasons.join(" ")
            ));
            // The consistency check runs after every repetition; report the first failure.
            let broken = reps.iter().find_map(|r| r.invariants.as_ref().err());
            if let Some(e) = broken {
                // Only a serializable protocol promises the workload's invariants (and fails the run).
                let why = match info.isolation {
                    Isolation::Serializable => "a serializable protocol broke an invariant",
                    Isolation::SnapshotIsolation => {
                        "allowed: snapshot isolation is not serializable"
                    }
                    Isolation::ReadCommitted => "allowed: read committed is not serializable",
                    Isolation::None => "expected: this protocol promises no isolation",
                };
                sink.line(&format!("    consistency check failed ({why}): {e}"));
            }
            let aborts: serde_json::Map<String, serde_json::Value> = AbortReason::ALL
                .iter()
                .map(|a| (a.name().to_string(), json!(r.aborts[a.index()])))
                .collect();
            rows.push(json!({
                "workload": w.name(),
                "protocol": info.name,
                "isolation": info.isolation,
                "threads": t,
                "committed_per_sec": r.committed_per_sec(),
                "aborts_per_commit": r.aborts_per_commit(),
                "latency_p50_us": r.latency_us(50.0),
                "latency_p99_us": r.latency_us(99.0),
                "latency_p999_us": r.latency_us(99.9),
                "committed": r.committed,
                "rolled_back": r.rolled_back,
                "aborts": aborts,
                "elapsed_secs": r.elapsed.as_secs_f64(),
                "load_secs": r.load_secs,
                "consistency": broken.map_or("ok".to_string(), |e| e.to_string()),
                "relative_to_nocc": vs,
                "reps_committed_per_sec": tputs,
                "sweep": sweep,
                "params": {
                    "workload": w.params(),
                    "threads": t,
                    "seconds": duration.as_secs_f64(),
                    "warmup": warmup.as_secs_f64(),
                    "reps": args.reps,
                    "seed": args.seed,
                    "prefetch": !args.no_prefetch,
                    "pin": args.pin,
                    "knobs": knobs.to_json(info.knobs),
                },
                "machine": machine,
            }));
        }
    }
    Ok(rows)
}
