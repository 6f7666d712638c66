//! `ordo bench --backend sqlite|mariadb|postgres`: DIBS in front of a real engine, against the
//! engine's own isolation (issue 45; the paper's §4.4–§4.5). The workload (YCSB or TATP, written
//! as SQL in `ordo-backends`) is loaded through the engine, then every (merge group size,
//! protocol, threads) runs; the table and the JSON rows have the in-memory runs' shape, plus the
//! engine (`params.workload.backend`), the merge group size, file syncs per client transaction
//! (SQLite) and engine commits.
//!
//! Protocols: `dibs` (DIBS's predicate locks, serializable, over the engine's weak level: SQLite
//! as it is, MariaDB READ UNCOMMITTED, PostgreSQL READ COMMITTED), `native` (the engine's
//! SERIALIZABLE), `native-rr`, `native-rc`, `native-ru` (its weaker levels, where it has them).

use crate::bench::{BenchArgs, Sink};
use crate::{opts, Error, Result};
use clap::Args;
use ordo::options::{OptionSpec, Settings};
use ordo_backends::driver::{self, MergeCount, Mode, RunConfig, RunStats};
use ordo_backends::workloads::tatp::Tatp;
use ordo_backends::workloads::ycsb::{Ycsb, YcsbConfig};
use ordo_backends::workloads::SqlWorkload;
use ordo_backends::{Backend, Level, Retry};
use ordo_predicate::{Optimizations, Step};
use ordo_workloads::{tatp, ycsb};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// The backend options of `ordo bench`.
#[derive(Args, Debug, Default)]
pub struct BackendArgs {
    /// Run on a real engine instead of Ordo's store: sqlite (bundled, nothing to install),
    /// mariadb or postgres (start them with scripts/servers/<name>.sh start). Protocols: dibs,
    /// native (the engine's SERIALIZABLE), native-rr, native-rc, native-ru; workloads: ycsb, tatp.
    #[arg(long)]
    pub backend: Option<String>,
    /// The server's URL (mariadb, postgres). Default: $ORDO_MARIADB_URL or $ORDO_POSTGRES_URL, else
    /// the address scripts/servers/<name>.sh serves.
    #[arg(long, value_name = "URL")]
    pub backend_url: Option<String>,
    /// SQLite's database file, created anew (a file already there is replaced) and kept after the
    /// run (default: a new file in the temporary directory, removed after).
    #[arg(long, value_name = "FILE")]
    pub sqlite_path: Option<PathBuf>,
    /// Transaction merging (§4.4), with --backend: client transactions per engine transaction
    /// under dibs, comma-separated (each a line of its own; 1 = individual commit). The native
    /// protocols always commit individually (merging needs DIBS to isolate the merged ones).
    #[arg(long, value_name = "G")]
    pub merge: Option<String>,
    /// Transaction merging: commit a group that is older than this many microseconds even if
    /// it is not full.
    #[arg(long, value_name = "US", default_value_t = 1000)]
    pub merge_timeout_us: u64,
    /// Transaction merging: which client transactions count toward G — all (default) or writers
    /// (readers ride along uncounted; the engine syncs once per group that wrote).
    #[arg(long, value_name = "WHICH")]
    pub merge_count: Option<String>,
}

const PROTOCOLS: &[(&str, Option<Level>)] = &[
    ("dibs", None),
    ("native", Some(Level::Serializable)),
    ("native-rr", Some(Level::RepeatableRead)),
    ("native-rc", Some(Level::ReadCommitted)),
    ("native-ru", Some(Level::ReadUncommitted)),
];

const DEFAULT_MARIADB_URL: &str = "mysql://ordo:ordo@127.0.0.1:33306/ordo";
const DEFAULT_POSTGRES_URL: &str = "postgres://ordo:ordo@127.0.0.1:35432/ordo";

/// Whether `args` has backend options without `--backend` (refused).
pub fn check_unused(args: &BackendArgs) -> Result<()> {
    if args.backend.is_none()
        && (args.backend_url.is_some()
            || args.sqlite_path.is_some()
            || args.merge.is_some()
            || args.merge_count.is_some())
    {
        return Err(Error::InvalidInput(
            "--backend-url, --sqlite-path, --merge and --merge-count need --backend".into(),
        ));
    }
    Ok(())
}

/// `--merge-count`: which client transactions count toward a merged group's size.
pub fn merge_count(args: &BackendArgs) -> Result<MergeCount> {
    match args.merge_count.as_deref() {
        None | Some("all") => Ok(MergeCount::All),
        Some("writers") => Ok(MergeCount::Writers),
        Some(other) => Err(Error::InvalidInput(format!(
            "--merge-count is all or writers, not `{other}`"
        ))),
    }
}

/// The engine `args` names, and a guard that removes a temporary SQLite file.
pub(crate) fn open(args: &BackendArgs, name: &str) -> Result<(Box<dyn Backend>, Option<TempFile>)> {
    let url = |var: &str, default: &str| {
        args.backend_url
            .clone()
            .or_else(|| std::env::var(var).ok())
            .unwrap_or_else(|| default.to_string())
    };
    if name != "sqlite" && args.sqlite_path.is_some() {
        return Err(Error::InvalidInput(
            "--sqlite-path is for --backend sqlite".into(),
        ));
    }
    match name {
        "sqlite" => {
            if args.backend_url.is_some() {
                return Err(Error::InvalidInput(
                    "--backend sqlite takes --sqlite-path, not --backend-url".into(),
                ));
            }
            let (path, temp) = match &args.sqlite_path {
                Some(p) => (p.clone(), None),
                None => {
                    let p = std::env::temp_dir()
                        .join(format!("ordo-bench-{}.sqlite", std::process::id()));
                    (p.clone(), Some(TempFile(p)))
                }
            };
            let db = ordo_backends::sqlite::Sqlite::new(&path)?;
            // A fresh database each time: the load creates the tables anew anyway.
            db.remove()?;
            Ok((Box::new(db), temp))
        }
        "mariadb" => Ok((
            Box::new(ordo_backends::mariadb::Mariadb::new(&url(
                "ORDO_MARIADB_URL",
                DEFAULT_MARIADB_URL,
            ))?),
            None,
        )),
        "postgres" => Ok((
            Box::new(ordo_backends::postgres::Postgres::new(&url(
                "ORDO_POSTGRES_URL",
                DEFAULT_POSTGRES_URL,
            ))?),
            None,
        )),
        other => Err(Error::InvalidInput(format!(
            "unknown backend `{other}` (sqlite, mariadb, postgres)"
        ))),
    }
}

/// Removes SQLite's temporary database files when the command ends.
pub(crate) struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Ok(db) = ordo_backends::sqlite::Sqlite::new(&self.0) {
            let _ = db.remove();
        }
    }
}

/// The workload options each backend workload reads.
fn allowed(workload: &str) -> Result<&'static [&'static OptionSpec]> {
    match workload {
        "ycsb" => Ok(&[
            &ycsb::options::ROWS,
            &ycsb::options::OPS,
            &ycsb::options::READ_RATIO,
            &ycsb::options::THETA,
            &ycsb::options::FIELDS,
            &ycsb::options::FIELD_LEN,
        ]),
        "tatp" => Ok(&[&tatp::options::SUBSCRIBERS]),
        other => Err(Error::InvalidInput(format!(
            "workload `{other}` does not run on a backend (ycsb, tatp)"
        ))),
    }
}

/// Refuses a workload option given that `workload` on a backend does not read.
fn check_options(workload: &str, given: &Settings) -> Result<()> {
    let allowed = allowed(workload)?;
    for (spec, _) in given.given() {
        if !allowed.iter().any(|a| a.name == spec.name) {
            return Err(Error::InvalidInput(format!(
                "--{} is not an option of {workload} on a backend (it takes {})",
                spec.name,
                allowed
                    .iter()
                    .map(|a| format!("--{}", a.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

fn ycsb_of(s: &Settings) -> Result<Ycsb> {
    let d = YcsbConfig::default();
    Ok(Ycsb::new(YcsbConfig {
        rows: s.int(&ycsb::options::ROWS)?.unwrap_or(d.rows),
        fields: s.int_as(&ycsb::options::FIELDS)?.unwrap_or(d.fields),
        field_len: s.int_as(&ycsb::options::FIELD_LEN)?.unwrap_or(d.field_len),
        ops: s.int_as(&ycsb::options::OPS)?.unwrap_or(d.ops),
        read_ratio: s.float(&ycsb::options::READ_RATIO)?.unwrap_or(d.read_ratio),
        theta: s.float(&ycsb::options::THETA)?.unwrap_or(d.theta),
    })?)
}

/// The protocols of comma-separated `list` that run on a backend, with the engine level of each
/// (`None`: DIBS over the engine's weak level).
fn protocols(list: &str) -> Result<Vec<(&'static str, Option<Level>)>> {
    opts::split(list)
        .into_iter()
        .map(|p| {
            PROTOCOLS.iter().find(|(n, _)| *n == p).copied().ok_or_else(|| {
                Error::InvalidInput(format!(
                    "protocol `{p}` does not run on a backend (dibs, native, native-rr, native-rc, native-ru)"
                ))
            })
        })
        .collect()
}

/// What `ordo bench --backend …` asks for, checked before anything connects.
pub struct Checked {
    pub protocols: Vec<(&'static str, Option<Level>)>,
    pub merges: Vec<usize>,
    pub threads: Vec<usize>,
    pub duration: Duration,
    pub warmup: Duration,
    lock_timeout: Duration,
    optimizations: Optimizations,
    count: MergeCount,
}

impl Checked {
    /// The names of the lines the rows make, as `ordo report` names them (`dibs merge=8`).
    pub fn series(&self) -> Vec<String> {
        let mut names = Vec::new();
        for (i, &g) in self.merges.iter().enumerate() {
            for &(p, level) in &self.protocols {
                let name = match (level, g) {
                    (None, 1) => p.to_string(),
                    (None, g) => format!("{p} merge={g}"),
                    (Some(_), _) if i == 0 => p.to_string(),
                    _ => continue,
                };
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }
}

/// Checks the arguments of a run on a backend (a bad one is a one-line error).
pub fn check(args: &BenchArgs) -> Result<Checked> {
    let b = &args.backend;
    let protocols = protocols(args.protocols.as_deref().unwrap_or("dibs,native"))?;
    let merges = match &b.merge {
        None => vec![1],
        Some(list) => opts::split(list)
            .into_iter()
            .map(|g| match g.parse::<usize>() {
                Ok(n) if (1..=10_000).contains(&n) => Ok(n),
                _ => Err(Error::InvalidInput(format!(
                    "invalid --merge `{g}`: expected group sizes from 1 to 10000"
                ))),
            })
            .collect::<Result<Vec<_>>>()?,
    };
    let threads = opts::threads(&args.threads)?;
    let duration = crate::bench::seconds("seconds", args.seconds, 0.01)?;
    let warmup = crate::bench::seconds("warmup", args.warmup, 0.0)?;
    if args.reps != 1 {
        return Err(Error::InvalidInput(
            "--reps is not supported with --backend yet".into(),
        ));
    }
    check_options(&args.workload, &args.declared.workload)?;
    let knobs = &args.declared.knobs;
    let lock_timeout = Duration::from_millis(
        knobs
            .int(&ordo::protocols::dibs::TIMEOUT_KNOB)?
            .unwrap_or(10),
    );
    let step = knobs
        .text(&ordo::protocols::dibs::OPT_KNOB)?
        .unwrap_or_default();
    let optimizations = Optimizations::cumulative(
        Step::ALL
            .into_iter()
            .find(|s| s.name() == step)
            .unwrap_or(Step::Full),
    );
    Ok(Checked {
        protocols,
        merges,
        threads,
        duration,
        warmup,
        lock_timeout,
        optimizations,
        count: merge_count(b)?,
    })
}

/// Runs `ordo bench --backend …`; returns the JSON rows.
pub fn measure(args: &BenchArgs, sink: &mut dyn Sink) -> Result<Vec<serde_json::Value>> {
    let b = &args.backend;
    let name = b.backend.as_deref().expect("called with --backend");
    let Checked {
        protocols,
        merges,
        threads,
        duration,
        warmup,
        lock_timeout,
        optimizations,
        count,
    } = check(args)?;
    let (backend, _temp) = open(b, name)?;
    let mut rows = Vec::new();
    let plan = Plan {
        args,
        backend: backend.as_ref(),
        protocols: &protocols,
        merges: &merges,
        threads: &threads,
        duration,
        warmup,
        lock_timeout,
        optimizations,
        count,
        runs: std::cell::Cell::new(0),
    };
    for (point, settings) in args.declared.workload.sweep()? {
        let sweep = point
            .as_ref()
            .map(|p| json!({"param": p.param, "value": p.value.number()}));
        match args.workload.as_str() {
            "ycsb" => rows.extend(plan.run(&ycsb_of(&settings)?, sweep, sink)?),
            _ => {
                let subscribers = settings
                    .int(&tatp::options::SUBSCRIBERS)?
                    .unwrap_or(100_000);
                rows.extend(plan.run(&Tatp::new(subscribers)?, sweep, sink)?)
            }
        }
    }
    Ok(rows)
}

struct Plan<'a> {
    args: &'a BenchArgs,
    backend: &'a dyn Backend,
    protocols: &'a [(&'static str, Option<Level>)],
    merges: &'a [usize],
    threads: &'a [usize],
    duration: Duration,
    warmup: Duration,
    lock_timeout: Duration,
    optimizations: Optimizations,
    count: MergeCount,
    /// Runs made so far on the loaded database.
    runs: std::cell::Cell<u64>,
}

impl Plan<'_> {
    /// The seed of the next run: `--seed` plus the runs made before it. The database is loaded
    /// once and kept across runs, so a run replaying the last one's requests would write the
    /// values already there — which SQLite notices: it leaves an identical row's page clean, and
    /// a commit with no dirty page neither writes nor syncs the WAL.
    fn seed(&self) -> u64 {
        let n = self.runs.get();
        self.runs.set(n + 1);
        self.args.seed.wrapping_add(n)
    }

    fn run<W: SqlWorkload>(
        &self,
        w: &W,
        sweep: Option<serde_json::Value>,
        sink: &mut dyn Sink,
    ) -> Result<Vec<serde_json::Value>> {
        let backend = self.backend;
        let mut params = w.params();
        params["backend"] = json!(backend.name());
        sink.line(&format!(
            "workload {} on {}: loading {}",
            w.name(),
            backend.name(),
            w.params()
        ));
        let load_secs = driver::load(backend, w)?;
        sink.line(&format!(
            "{:<14} {:>3} {:>10} {:>9} {:>9} {:>9} {:>9}  aborts by reason",
            "protocol", "thr", "txn/s", "abort/c", "p50 us", "p99 us", "sync/txn"
        ));
        let mut rows = Vec::new();
        for (i, &merge) in self.merges.iter().enumerate() {
            for &(protocol, level) in self.protocols {
                // Merging needs DIBS to isolate the merged transactions (§4.4): the engine's
                // own levels run once, with individual commit.
                if level.is_some() && i > 0 {
                    continue;
                }
                let merge = if level.is_some() { 1 } else { merge };
                for &t in self.threads {
                    let mode = match level {
                        None => Mode::Dibs {
                            merge,
                            merge_timeout: Duration::from_micros(
                                self.args.backend.merge_timeout_us,
                            ),
                            count: self.count,
                        },
                        Some(l) => Mode::Native(l),
                    };
                    let cfg = RunConfig {
                        threads: t,
                        warmup: self.warmup,
                        duration: self.duration,
                        seed: self.seed(),
                        mode,
                        lock_timeout: self.lock_timeout,
                        optimizations: self.optimizations,
                    };
                    let r = driver::run(backend, w, &cfg)?;
                    let seed = cfg.seed;
                    let label = if merge > 1 {
                        format!("{protocol} G={merge}")
                    } else {
                        protocol.to_string()
                    };
                    sink.line(&format!(
                        "{:<14} {:>3} {:>10.0} {:>9.4} {:>9.1} {:>9.1} {:>9}  {}",
                        label,
                        t,
                        r.committed_per_sec(),
                        r.aborts_per_commit(),
                        r.latency_us(50.0),
                        r.latency_us(99.0),
                        r.syncs_per_txn().map_or("-".into(), |s| format!("{s:.3}")),
                        reasons(&r)
                    ));
                    sink.finished();
                    rows.push(self.row(
                        w,
                        &params,
                        protocol,
                        level,
                        merge,
                        t,
                        &r,
                        load_secs,
                        sweep.clone(),
                        seed,
                    ));
                }
            }
        }
        Ok(rows)
    }

    #[allow(clippy::too_many_arguments)]
    fn row<W: SqlWorkload>(
        &self,
        w: &W,
        params: &serde_json::Value,
        protocol: &str,
        level: Option<Level>,
        merge: usize,
        threads: usize,
        r: &RunStats,
        load_secs: f64,
        sweep: Option<serde_json::Value>,
        seed: u64,
    ) -> serde_json::Value {
        let aborts: serde_json::Map<String, serde_json::Value> = Retry::ALL
            .iter()
            .map(|a| (a.name().to_string(), json!(r.aborts[a.index()])))
            .collect();
        let engine_level = level.unwrap_or(self.backend.weak_level());
        json!({
            "workload": w.name(),
            "protocol": protocol,
            "isolation": if protocol == "dibs" || level == Some(Level::Serializable) { "Serializable" } else { engine_level.sql() },
            "threads": threads,
            "committed_per_sec": r.committed_per_sec(),
            "aborts_per_commit": r.aborts_per_commit(),
            "latency_p50_us": r.latency_us(50.0),
            "latency_p99_us": r.latency_us(99.0),
            "latency_p999_us": r.latency_us(99.9),
            "committed": r.committed,
            "rolled_back": r.rolled_back,
            "aborts": aborts,
            "elapsed_secs": r.elapsed.as_secs_f64(),
            "load_secs": load_secs,
            // Not checked: a real engine's state is not Ordo's to inspect (`ordo verify
            // --backend` checks histories instead).
            "consistency": null,
            "relative_to_nocc": null,
            "reps_committed_per_sec": [r.committed_per_sec()],
            "sweep": sweep,
            "backend": {
                "engine": self.backend.describe(),
                "level": engine_level.sql(),
                "merge": merge,
                "merge_timeout_us": self.args.backend.merge_timeout_us,
                "merge_count": self.count.name(),
                "run_seed": seed,
                "engine_commits": r.engine_commits,
                "syncs": r.syncs,
                "syncs_per_txn": r.syncs_per_txn(),
            },
            "params": {
                "workload": params,
                "threads": threads,
                "seconds": self.duration.as_secs_f64(),
                "warmup": self.warmup.as_secs_f64(),
                "reps": 1,
                // The base seed, so that `ordo report` draws the runs of one invocation in one
                // figure; the run's own seed (base plus the runs before it) is `backend.run_seed`.
                "seed": self.args.seed,
                "merge": merge,
                "knobs": if protocol == "dibs" {
                    json!({"dibs-timeout-ms": self.lock_timeout.as_millis() as u64, "dibs-opt": step_name(self.optimizations)})
                } else {
                    json!({})
                },
            },
            "machine": crate::output::machine(),
        })
    }
}

fn step_name(o: Optimizations) -> &'static str {
    Step::ALL
        .into_iter()
        .find(|s| Optimizations::cumulative(*s) == o)
        .map_or("custom", |s| s.name())
}

fn reasons(r: &RunStats) -> String {
    Retry::ALL
        .iter()
        .filter(|a| r.aborts[a.index()] > 0)
        .map(|a| format!("{}={}", a.name(), r.aborts[a.index()]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `ordo verify --backend …`: each protocol runs `--txns` client transactions of a versioned
/// YCSB (each field holds the id of the attempt that wrote it; `--rows` 8, `--fields` 1, `--ops`
/// 4, `--read-ratio` 0.5, `--theta` 0 unless given: small and contended) on the engine, records
/// every attempt's reads and writes from the client side, and runs Ordo's checker on the history.
/// `dibs` and `native` promise serializability (exit code 1 if a history breaks it); the weaker
/// levels promise nothing here and show what they allow.
pub fn verify(args: &crate::verify::VerifyArgs) -> Result<std::process::ExitCode> {
    let b = &args.backend;
    let name = b.backend.as_deref().expect("called with --backend");
    if b.merge.as_deref().is_some_and(|m| m != "1") {
        return Err(Error::InvalidInput(
            "ordo verify --backend records individual commits only (no --merge)".into(),
        ));
    }
    if args.workload != "ycsb" {
        return Err(Error::InvalidInput(
            "ordo verify --backend runs a versioned ycsb only (-w ycsb)".into(),
        ));
    }
    let protocols = protocols(&args.protocols)?;
    let threads = opts::threads(&args.threads)?;
    if threads.len() != 1 {
        return Err(Error::InvalidInput("verify takes one thread count".into()));
    }
    let s = &args.declared.workload;
    check_options("ycsb", s)?;
    let w = ordo_backends::workloads::versioned::Versioned::new(
        s.int(&ycsb::options::ROWS)?.unwrap_or(8),
        s.int_as(&ycsb::options::FIELDS)?.unwrap_or(1),
        s.int_as(&ycsb::options::OPS)?.unwrap_or(4),
        1.0 - s.float(&ycsb::options::READ_RATIO)?.unwrap_or(0.5),
        s.float(&ycsb::options::THETA)?.unwrap_or(0.0),
    )?;
    let per_thread = usize::try_from(args.txns.div_ceil(threads[0] as u64).max(1))
        .map_err(|_| Error::InvalidInput("--txns too large".into()))?;
    let lock_timeout = Duration::from_millis(
        args.declared
            .knobs
            .int(&ordo::protocols::dibs::TIMEOUT_KNOB)?
            .unwrap_or(10),
    );
    let (backend, _temp) = open(b, name)?;
    let mut failed = false;
    for (protocol, level) in protocols {
        let mode = match level {
            None => Mode::Dibs {
                merge: 1,
                merge_timeout: Duration::ZERO,
                count: MergeCount::All,
            },
            Some(l) => Mode::Native(l),
        };
        driver::load(backend.as_ref(), &w)?;
        let attempts = driver::record(
            backend.as_ref(),
            &w,
            mode,
            threads[0],
            per_thread,
            lock_timeout,
            args.seed,
        )?;
        let history = ordo_backends::history::history(&attempts);
        let report = ordo::check::check(&history);
        let promise = match level {
            None | Some(Level::Serializable) => ordo::protocols::Isolation::Serializable,
            Some(_) => ordo::protocols::Isolation::None,
        };
        let bad = crate::verify::breaks(promise, &report);
        failed |= bad;
        let level = level.unwrap_or(backend.weak_level());
        println!(
            "{protocol:<10} on {name} {:<16} {}  => {}",
            level.sql(),
            report.summary(),
            if bad {
                "VIOLATED"
            } else if promise == ordo::protocols::Isolation::Serializable {
                "ok"
            } else {
                "(promises nothing here)"
            }
        );
        for a in report.anomalies.iter().take(5) {
            println!("    {}", a.description);
        }
        if report.anomalies.len() > 5 {
            println!("    … {} more", report.anomalies.len() - 5);
        }
    }
    Ok(if failed {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    })
}
