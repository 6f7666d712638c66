//! `ordo reproduce`: the papers' headline results, one command each, the paper's number beside ours.
//!
//! ```text
//! ordo reproduce --list                      the catalogue: paper, figure, claim, how long
//! ordo reproduce vll-fig8-short [--quick]    one result (or `vll`: every result of a paper)
//! ordo reproduce --all --out DIR             everything, with one HTML page
//! ```
//! The [`catalogue`] holds each result as the paper states it, the `ordo bench` runs that measure
//! it, and the rules that decide it. Each result's runs go through `ordo bench` itself
//! ([`crate::bench::measure`]); their rows are written to `DIR/<result>/results.json`, drawn by
//! `ordo report` into `DIR/<result>/`, and decided by the rules ([`series`], [`rule`]) into
//! `DIR/<result>/verdict.json`; `DIR/index.html` and `DIR/summary.md` gather every result run.
//! An entry that needs more cores than this machine has is not run, and says what it would take.

mod catalogue;
mod page;
mod rule;
mod series;

use crate::bench::{self, Sink};
use crate::report::{self, input};
use crate::{Error, Result};
use catalogue::Entry;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rule::{Outcome, Verdict};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Results to reproduce, or papers (every result of each); see `--list`.
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// List the catalogue: each result's paper, figure, claim and how long it takes.
    #[arg(long, conflicts_with_all = ["all", "names"])]
    pub list: bool,
    /// Reproduce every result of the catalogue.
    #[arg(long, conflicts_with = "names")]
    pub all: bool,
    /// Short runs (0.05 s, smaller tables, fewer points): a smoke test, not a measurement.
    #[arg(long)]
    pub quick: bool,
    /// Directory for the results, figures, verdicts and the page (created if missing; default: a
    /// new directory under the system's temporary directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// What one entry came to.
pub struct EntryResult<'a> {
    pub entry: &'a Entry,
    /// `None`: not run here (too few cores).
    pub checks: Option<Vec<Outcome>>,
    pub verdict: Option<Verdict>,
    /// The `ordo bench` command of each run.
    pub commands: Vec<String>,
    /// The figures drawn: (SVG file, title), relative to the entry's directory.
    pub figures: Vec<(String, String)>,
    pub seconds: f64,
    /// A serializable protocol left the workload inconsistent in one of its runs.
    pub broken: bool,
}

/// The machine, as the verdicts name it.
pub struct Machine {
    pub cores: usize,
    pub cpu: String,
}

impl Machine {
    fn here() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, m)| m.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu,
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "{} core{}, {}, {}",
            self.cores,
            if self.cores == 1 { "" } else { "s" },
            self.cpu,
            std::env::consts::OS
        )
    }
}

pub fn run(args: ReproduceArgs) -> Result<ExitCode> {
    let papers = catalogue::load()?;
    for e in papers.iter().flat_map(|p| &p.entries) {
        e.validate()?;
    }
    if args.list {
        list(&papers, args.quick);
        return Ok(ExitCode::SUCCESS);
    }
    let mut entries: Vec<&Entry> = Vec::new();
    if args.all {
        entries.extend(papers.iter().flat_map(|p| &p.entries));
    } else if args.names.is_empty() {
        return Err(Error::InvalidInput(
            "name a result or a paper, or give --all or --list (see `ordo reproduce --list`)"
                .into(),
        ));
    }
    for name in &args.names {
        for e in catalogue::select(&papers, name)? {
            if !entries.iter().any(|x| std::ptr::eq(*x, e)) {
                entries.push(e);
            }
        }
    }
    let out = match &args.out {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("ordo-reproduce-{}", std::process::id())),
    };
    std::fs::create_dir_all(&out).map_err(|source| Error::CreateDir {
        path: out.clone(),
        source,
    })?;
    let machine = Machine::here();
    println!("machine: {}", machine.describe());
    let mut results = Vec::new();
    for e in entries {
        results.push(reproduce(e, &out, &machine, args.quick)?);
    }
    let title = if args.quick {
        "Ordo: the papers' results (quick runs: a smoke test, not a measurement)"
    } else {
        "Ordo: the papers' results"
    };
    write(
        &out.join("index.html"),
        &page::html(title, &papers, &results, &machine),
    )?;
    write(
        &out.join("summary.md"),
        &page::markdown(&papers, &results, &machine),
    )?;
    println!("\n{}", page::tally(&results));
    println!("all results: {}", out.join("index.html").display());
    Ok(if results.iter().any(|r| r.broken) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn list(papers: &[catalogue::PaperFile], quick: bool) {
    let width = papers
        .iter()
        .flat_map(|p| &p.entries)
        .map(|e| e.name.len())
        .max()
        .unwrap_or(0);
    let mut total = 0.0;
    for p in papers {
        println!(
            "{}: {} ({}; {})",
            p.paper.id, p.paper.title, p.paper.authors, p.paper.venue
        );
        if let Some(text) = &p.paper.text {
            println!("  the paper: shared/papers/{text}");
        }
        for e in &p.entries {
            let secs = e.estimate(quick);
            total += secs;
            let cores = if e.min_cores > 1 {
                format!(", needs {} cores", e.min_cores)
            } else {
                String::new()
            };
            println!(
                "  {:<width$}  {}  [about {}{cores}]",
                e.name,
                e.figure,
                duration(secs)
            );
            println!("  {:<width$}  {}", "", e.claim);
        }
        println!();
    }
    println!(
        "all of it: about {}{}; run one with `ordo reproduce NAME`, a paper's with \
         `ordo reproduce PAPER`, everything with `ordo reproduce --all --out DIR`",
        duration(total),
        if quick { " with --quick" } else { "" }
    );
}

fn duration(secs: f64) -> String {
    if secs < 90.0 {
        format!("{:.0} s", secs.max(1.0))
    } else {
        format!("{:.0} min", secs / 60.0)
    }
}

/// The table's lines into a progress bar (and kept for `bench.txt`).
struct Progress {
    bar: ProgressBar,
    lines: Vec<String>,
}

impl Sink for Progress {
    fn planned(&mut self, runs: u64) {
        self.bar.inc_length(runs);
    }
    fn line(&mut self, text: &str) {
        self.lines.push(text.to_string());
    }
    fn finished(&mut self) {
        self.bar.inc(1);
    }
}

/// Runs one entry (unless it needs more cores), writes its files, prints its table.
fn reproduce<'a>(
    e: &'a Entry,
    out: &Path,
    machine: &Machine,
    quick: bool,
) -> Result<EntryResult<'a>> {
    println!("\n{}  {} — {}", e.name, e.figure, e.title);
    println!("  claim: {}", e.claim);
    let commands: Vec<String> = e.runs.iter().map(|r| r.command(quick)).collect();
    if machine.cores < e.min_cores {
        println!(
            "  not run: needs {} cores, this machine has {}. {}",
            e.min_cores,
            machine.cores,
            e.needs.as_deref().unwrap_or("")
        );
        return Ok(EntryResult {
            entry: e,
            checks: None,
            verdict: None,
            commands,
            figures: Vec::new(),
            seconds: 0.0,
            broken: false,
        });
    }
    let dir = out.join(&e.name);
    let started = Instant::now();
    let bar = ProgressBar::new(0).with_prefix(e.name.clone());
    bar.set_style(
        ProgressStyle::with_template(
            "  {prefix} [{bar:30}] {pos}/{len} runs, {elapsed} (about {eta} left)",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    let mut sink = Progress {
        bar,
        lines: Vec::new(),
    };
    let mut rows = Vec::new();
    for (run, command) in e.runs.iter().zip(&commands) {
        println!("  run {}: {command}", run.name);
        let args = run.bench_args(quick)?;
        sink.lines.push(format!("$ {command}"));
        for mut row in bench::measure(&args, &mut sink)? {
            row["run"] = run.name.clone().into();
            row["entry"] = e.name.clone().into();
            rows.push(row);
        }
    }
    sink.bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let broken = bench::broke_a_promise(&rows);
    std::fs::create_dir_all(&dir).map_err(|source| Error::CreateDir {
        path: dir.clone(),
        source,
    })?;
    let text = serde_json::to_string_pretty(&rows).expect("serializable results") + "\n";
    let json = dir.join("results.json");
    write(&json, &text)?;
    write(&dir.join("bench.txt"), &(sink.lines.join("\n") + "\n"))?;
    let parsed = input::parse(&text, &json.display().to_string())?;
    let drawn = report::draw(&parsed, &dir, None)?;
    let outcomes: Vec<Outcome> = e
        .checks
        .iter()
        .map(|c| series::outcome(c, &parsed))
        .collect();
    let verdict = outcomes.iter().map(|o| o.verdict).min();
    print_checks(e, &outcomes);
    if broken {
        println!("  a serializable protocol broke the workload's consistency check: see bench.txt");
    }
    println!(
        "  verdict: {}   ({:.0} s; figures: {})",
        verdict.map_or("-", |v| v.text()),
        seconds,
        drawn.index.display()
    );
    let result = EntryResult {
        entry: e,
        checks: Some(outcomes),
        verdict,
        commands,
        figures: drawn.files,
        seconds,
        broken,
    };
    write(
        &dir.join("verdict.json"),
        &(serde_json::to_string_pretty(&page::verdict_json(&result, machine))
            .expect("serializable verdict")
            + "\n"),
    )?;
    Ok(result)
}

/// A measured value, with as many digits as it needs.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{:.0}", v)
    } else if a >= 10.0 {
        format!("{:.1}", v)
    } else if a >= 0.01 || a == 0.0 {
        format!("{:.3}", v)
    } else {
        format!("{:.2e}", v)
    }
}

/// What a check measured, as the tables show it.
pub fn measured(o: &Outcome) -> String {
    match o.value {
        Some(v) => number(v),
        None => "-".into(),
    }
}

fn print_checks(e: &Entry, outcomes: &[Outcome]) {
    let cw = e
        .checks
        .iter()
        .map(|c| c.claim.chars().count())
        .max()
        .unwrap_or(5)
        .min(60);
    let pw = e
        .checks
        .iter()
        .map(|c| c.paper.chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 28);
    println!(
        "  {:<cw$}  {:<pw$}  {:>9}  {:<9}  verdict",
        "check", "paper", "ours", "rule"
    );
    for (c, o) in e.checks.iter().zip(outcomes) {
        let what = match (&c.to, c.trend) {
            (_, Some(_)) => "factor",
            (Some(_), None) => "ratio",
            (None, None) => "value",
        };
        println!(
            "  {:<cw$}  {:<pw$}  {:>9}  {:<9}  {}{}",
            clip(&c.claim, cw),
            clip(&c.paper, pw),
            measured(o),
            c.reproduced.to_string(),
            o.verdict.text(),
            o.note
                .as_ref()
                .map_or(String::new(), |n| format!(" ({what}: {n})")),
        );
    }
}

fn clip(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })
}
