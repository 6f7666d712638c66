//! The catalogue of the papers' results: one TOML file per paper under `crates/ordo-cli/catalogue/`
//! (its README states the format), compiled in by `build.rs`, parsed and checked here.
//!
//! Checking an entry means: its runs are `ordo bench` command lines that parse (every option and
//! knob declared, every protocol and workload registered, the options the workload's own), and
//! every series its checks name is one of its runs' lines.

use super::rule::{At, Metric, Rule, Trend};
use crate::bench::BenchArgs;
use crate::{Error, Result};
use clap::Parser;
use serde::Deserialize;

mod files {
    include!(concat!(env!("OUT_DIR"), "/catalogue_files.rs"));
}

/// One paper's file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperFile {
    pub paper: Paper,
    #[serde(rename = "entry")]
    pub entries: Vec<Entry>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// Every entry's name starts with `<id>-`; `ordo reproduce <id>` runs them all.
    pub id: String,
    pub title: String,
    pub authors: String,
    pub venue: String,
    /// The paper's text under `shared/papers/`.
    #[serde(default)]
    pub text: Option<String>,
}

/// One headline result.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub name: String,
    pub figure: String,
    pub title: String,
    pub claim: String,
    /// Fewer cores than this and the entry is not run here (it says `needs` instead).
    #[serde(default = "one")]
    pub min_cores: usize,
    #[serde(default)]
    pub needs: Option<String>,
    #[serde(rename = "run")]
    pub runs: Vec<Run>,
    #[serde(rename = "check")]
    pub checks: Vec<Check>,
    /// Set when read: the paper's id.
    #[serde(skip)]
    pub paper: String,
}

fn one() -> usize {
    1
}

/// One `ordo bench` invocation.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    #[serde(default)]
    pub name: String,
    pub workload: String,
    pub protocols: Vec<String>,
    pub threads: Vec<usize>,
    #[serde(default = "default_seconds")]
    pub seconds: f64,
    #[serde(default = "default_warmup")]
    pub warmup: f64,
    #[serde(default = "one")]
    pub reps: usize,
    /// Seconds to load the workload's tables, which every (protocol, threads, point) run does
    /// afresh: only for the time estimate (TATP's million subscribers take seconds).
    #[serde(default = "default_load")]
    pub load: f64,
    /// Workload options and protocol knobs, as `ordo bench` flags without the dashes.
    #[serde(default)]
    pub options: toml::Table,
    /// What `--quick` merges over `options`.
    #[serde(default)]
    pub quick: toml::Table,
}

fn default_seconds() -> f64 {
    1.0
}

fn default_warmup() -> f64 {
    0.3
}

fn default_load() -> f64 {
    0.3
}

/// `--quick`: every run this short, with no warm-up and one repetition.
pub const QUICK_SECONDS: f64 = 0.05;

/// One claim, decided by a rule over the measured rows.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub claim: String,
    /// The paper's number or shape, as it states it.
    pub paper: String,
    pub of: String,
    #[serde(default)]
    pub to: Option<String>,
    #[serde(default)]
    pub metric: Metric,
    #[serde(default)]
    pub at: At,
    #[serde(default)]
    pub trend: Option<Trend>,
    #[serde(default)]
    pub run: Option<String>,
    pub reproduced: Rule,
    #[serde(default)]
    pub shape: Option<Rule>,
}

impl Run {
    /// The `ordo bench` arguments (without `ordo`): `quick` shortens the run and merges `quick`
    /// over `options`.
    pub fn argv(&self, quick: bool) -> Vec<String> {
        let (seconds, warmup, reps) = if quick {
            (QUICK_SECONDS, 0.0, 1)
        } else {
            (self.seconds, self.warmup, self.reps)
        };
        let mut argv: Vec<String> = [
            "bench",
            "-w",
            &self.workload,
            "-p",
            &self.protocols.join(","),
            "-t",
            &join(&self.threads),
            "--seconds",
            &seconds.to_string(),
            "--warmup",
            &warmup.to_string(),
            "--reps",
            &reps.to_string(),
            "--quiet",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut options = self.options.clone();
        if quick {
            for (k, v) in &self.quick {
                options.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in &options {
            match v {
                toml::Value::Boolean(false) => {}
                toml::Value::Boolean(true) => argv.push(format!("--{k}")),
                other => {
                    argv.push(format!("--{k}"));
                    argv.push(value_text(other));
                }
            }
        }
        argv
    }

    /// The command line, as a user would type it.
    pub fn command(&self, quick: bool) -> String {
        let argv = self.argv(quick);
        let quoted: Vec<String> = argv
            .iter()
            .map(|a| {
                if a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.,=/".contains(c))
                {
                    a.clone()
                } else {
                    format!("'{a}'")
                }
            })
            .collect();
        format!("ordo {}", quoted.join(" "))
    }

    /// The run's `ordo bench` arguments, parsed as `ordo bench` parses them.
    pub fn bench_args(&self, quick: bool) -> Result<BenchArgs> {
        Ok(BenchLine::try_parse_from(self.argv(quick))?.bench)
    }

    /// How many (point, protocol, threads, repetition) runs it makes.
    pub fn runs(&self, quick: bool) -> usize {
        let points = self
            .bench_args(quick)
            .ok()
            .and_then(|a| crate::bench::plan(&a).ok())
            .map_or(1, |p| p.points.len());
        points * self.protocols.len() * self.threads.len() * if quick { 1 } else { self.reps }
    }

    /// About how long it takes, in seconds.
    pub fn estimate(&self, quick: bool) -> f64 {
        // `--quick` runs load small tables.
        let (s, w, load) = if quick {
            (QUICK_SECONDS, 0.0, self.load.min(0.1))
        } else {
            (self.seconds, self.warmup, self.load)
        };
        self.runs(quick) as f64 * (s + w + load)
    }

    /// The names of the lines its rows make (as `ordo report` names them).
    fn series(&self) -> Result<Vec<String>> {
        let args = self.bench_args(false)?;
        if args.backend.backend.is_some() {
            return Ok(crate::backend::check(&args)?.series());
        }
        self.protocols
            .iter()
            .map(|p| {
                let info = ordo::protocols::info(p)
                    .ok_or_else(|| ordo::protocols::UnknownProtocol(p.into()))?;
                let knobs = match args.declared.knobs.to_json(info.knobs) {
                    serde_json::Value::Object(m) => m,
                    _ => serde_json::Map::new(),
                };
                Ok(crate::report::figures::series_name(
                    p,
                    &crate::report::input::non_default(p, knobs),
                ))
            })
            .collect()
    }
}

/// `ordo bench`'s arguments alone, to parse a run's command line.
#[derive(Parser)]
#[command(name = "ordo")]
struct BenchLine {
    #[command(flatten)]
    bench: BenchArgs,
}

fn join(v: &[usize]) -> String {
    v.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(","),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        // Not an option's value: left for `ordo bench` to refuse.
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Table(_) => "{table}".into(),
    }
}

impl Entry {
    /// About how long the whole entry takes, in seconds.
    pub fn estimate(&self, quick: bool) -> f64 {
        self.runs.iter().map(|r| r.estimate(quick)).sum()
    }

    /// Checks the entry against the registries (see the module docs); the error names the entry.
    pub fn validate(&self) -> Result<()> {
        let bad =
            |why: String| Error::InvalidInput(format!("catalogue entry `{}`: {why}", self.name));
        if !self.name.starts_with(&format!("{}-", self.paper))
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(bad(format!(
                "the name must be `{}-…` in lower case, digits and '-'",
                self.paper
            )));
        }
        if self.runs.is_empty() || self.checks.is_empty() {
            return Err(bad("needs at least one run and one check".into()));
        }
        if self.min_cores > 1 && self.needs.is_none() {
            return Err(bad("min_cores without `needs` (what it would take)".into()));
        }
        let mut series: Vec<(String, Vec<String>)> = Vec::new();
        for run in &self.runs {
            for quick in [false, true] {
                let plan = run
                    .bench_args(quick)
                    .and_then(|args| crate::bench::plan(&args))
                    .map_err(|e| bad(format!("run `{}`: {e}", run.name)))?;
                // A check's x is the sweep value, or the thread count where nothing is swept.
                if plan.points.len() > 1 && plan.threads.len() > 1 {
                    return Err(bad(format!(
                        "run `{}` sweeps an option over several thread counts: give each thread \
                         count its own run",
                        run.name
                    )));
                }
            }
            series.push((
                run.name.clone(),
                run.series()
                    .map_err(|e| bad(format!("run `{}`: {e}", run.name)))?,
            ));
        }
        for (i, run) in self.runs.iter().enumerate() {
            if self.runs[..i].iter().any(|r| r.name == run.name) {
                return Err(bad(format!("two runs are named `{}`", run.name)));
            }
        }
        for check in &self.checks {
            let of_run: Vec<&String> = series
                .iter()
                .filter(|(run, _)| check.run.as_ref().is_none_or(|r| r == run))
                .flat_map(|(_, s)| s)
                .collect();
            if let Some(r) = &check.run {
                if !self.runs.iter().any(|run| &run.name == r) {
                    return Err(bad(format!(
                        "check `{}`: no run is named `{r}`",
                        check.claim
                    )));
                }
            }
            for name in std::iter::once(&check.of).chain(&check.to) {
                if !of_run.contains(&name) {
                    return Err(bad(format!(
                        "check `{}`: no run makes the series `{name}` (they make: {})",
                        check.claim,
                        dedup(&of_run).join(", ")
                    )));
                }
            }
            if let Metric::AbortsOf(reason) = &check.metric {
                if !ordo::txn::AbortReason::ALL
                    .iter()
                    .any(|a| a.name() == reason)
                {
                    return Err(bad(format!(
                        "check `{}`: no abort reason is named `{reason}`",
                        check.claim
                    )));
                }
            }
        }
        Ok(())
    }
}

fn dedup(v: &[&String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in v {
        if !out.contains(s) {
            out.push((*s).clone());
        }
    }
    out
}

/// Parses one file's text; `file` labels errors. Runs without a name get `run1`, `run2`, ….
pub fn parse(text: &str, file: &str) -> Result<PaperFile> {
    let mut paper: PaperFile = toml::from_str(text).map_err(|e| Error::InvalidData {
        file: file.to_string(),
        why: e.to_string().replace('\n', " "),
    })?;
    for entry in &mut paper.entries {
        entry.paper = paper.paper.id.clone();
        for (i, run) in entry.runs.iter_mut().enumerate() {
            if run.name.is_empty() {
                run.name = format!("run{}", i + 1);
            }
        }
    }
    Ok(paper)
}

/// The compiled-in catalogue, in file order.
pub fn load() -> Result<Vec<PaperFile>> {
    let papers = files::FILES
        .iter()
        .map(|(name, text)| parse(text, name))
        .collect::<Result<Vec<_>>>()?;
    let mut names: Vec<&str> = Vec::new();
    for e in papers.iter().flat_map(|p| &p.entries) {
        if names.contains(&e.name.as_str()) {
            return Err(Error::InvalidInput(format!(
                "catalogue: two entries are named `{}`",
                e.name
            )));
        }
        names.push(&e.name);
    }
    Ok(papers)
}

/// The entries `name` selects: one by its name, or every entry of the paper it names. An unknown
/// name is an error listing the nearest names.
pub fn select<'a>(papers: &'a [PaperFile], name: &str) -> Result<Vec<&'a Entry>> {
    if let Some(p) = papers.iter().find(|p| p.paper.id == name) {
        return Ok(p.entries.iter().collect());
    }
    if let Some(e) = papers
        .iter()
        .flat_map(|p| &p.entries)
        .find(|e| e.name == name)
    {
        return Ok(vec![e]);
    }
    let mut candidates: Vec<(f64, &str)> = papers
        .iter()
        .flat_map(|p| {
            std::iter::once(p.paper.id.as_str()).chain(p.entries.iter().map(|e| e.name.as_str()))
        })
        .map(|c| {
            let score = if c.contains(name) || name.contains(c) {
                1.0
            } else {
                strsim::jaro_winkler(name, c)
            };
            (score, c)
        })
        .collect();
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let near: Vec<&str> = candidates
        .iter()
        .filter(|(s, _)| *s >= 0.7)
        .take(4)
        .map(|(_, c)| *c)
        .collect();
    let hint = if near.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", near.join(", "))
    };
    Err(Error::InvalidInput(format!(
        "no result or paper is named `{name}`{hint} (see `ordo reproduce --list`)"
    )))
}
