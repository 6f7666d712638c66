//! `ordo analyze`: Callas's Runtime Pipelining analysis of a workload, as a user can read it —
//! per group, the ranks of the read-write tables (or columns), what is left unranked and why, the
//! table-dependency edges, and each transaction type's stages (Xie 2016, §4.4.1, §4.5.1).
//!
//! The analysis works from the programs' own declarations: `analyze` runs `--txns` transactions of
//! the workload on one worker under `callas` (which learns each type's shape as it goes) and
//! prints what the protocol planned — the same plans a benchmark run uses.
//!
//! `--propose-groups` runs Callas's grouping heuristic instead (§4.5.2; `ordo::protocols::callas::
//! grouping`): it profiles the workload under `acid-2pl` at one worker and at `--threads`
//! (`--profile-txns` each, with the knobs given — `--op-delay-us`, `--commit-delay-us`), marks the
//! writers whose latency grew out of proportion, measures their groupings under `callas`, and prints
//! the per-type numbers, the groupings tried and the proposal (`proposed: --callas-groups …`).
//!
//! `--chopping sc` prints classic transaction chopping by SC-cycle analysis instead (Shasha et al.
//! 1995; the kit's `chopping`): over the whole workload as `sc-chopping` plans it, or, with
//! `--callas-groups`, within each group as `callas --callas-chopping sc` does — per type its chops
//! (rollback-safe, in the order they run), its finest chopping before rollback safety where that
//! differs, and what each piece has a C-edge with (`T'`: another instance of T).

use crate::declared::Declared;
use crate::{Error, Result};
use clap::Args;
use ordo::protocols::callas::analysis::{GroupPlan, Node, Stage, WHOLE};
use ordo::protocols::callas::grouping::{self, ProfileConfig};
use ordo::protocols::callas::{CallasRc, CHOPPING_KNOB, GROUPS_KNOB};
use ordo::protocols::kit::chopping::Chopping;
use ordo::protocols::kit::pipeline::access_list::PipeRecord;
use ordo::protocols::sc_chopping::ScChoppingRc;
use ordo::protocols::{Protocol, ProtocolConfig};
use ordo::storage::{Database, TableId};
use ordo::txn::AbortReason;
use ordo_workloads::{catalog, Purpose, WorkloadVisitor};
use std::fmt::Write;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// Workload (see `ordo list`).
    #[arg(short = 'w', long = "workload", default_value = "tpcc")]
    pub workload: String,
    /// Transactions to learn the shapes from.
    #[arg(long, default_value_t = 2_000)]
    pub txns: u64,
    /// Seed of the request generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Print the table-dependency edges too.
    #[arg(long)]
    pub edges: bool,
    /// Which chopping: Callas's Runtime Pipelining (`rp`) or classic SC-cycle chopping (`sc`:
    /// the whole workload, or each of `--callas-groups`).
    #[arg(long, default_value = "rp", value_parser = ["rp", "sc"])]
    pub chopping: String,
    /// Propose `--callas-groups` by profiling (the thesis's heuristic, §4.5.2) instead.
    #[arg(long)]
    pub propose_groups: bool,
    /// With `--propose-groups`: workers at high load.
    #[arg(long, default_value_t = 16)]
    pub threads: usize,
    /// With `--propose-groups`: transactions per worker in each profiling run.
    #[arg(long, default_value_t = 100)]
    pub profile_txns: u64,
    /// The workload options and protocol knobs (`--callas-groups`, `--callas-analysis`,
    /// `--callas-no-opt` shape the analysis).
    #[command(flatten)]
    pub declared: Declared,
}

pub fn run(args: AnalyzeArgs) -> Result<ExitCode> {
    if args.txns == 0 {
        return Err(Error::InvalidInput("--txns must be at least 1".into()));
    }
    let workload =
        catalog::find(&args.workload)?.build(&args.declared.workload, Purpose::Verify)?;
    let text = if args.propose_groups {
        if args.threads == 0 || args.profile_txns == 0 {
            return Err(Error::InvalidInput(
                "--threads and --profile-txns must be at least 1".into(),
            ));
        }
        workload.visit(Propose { args: &args })?
    } else {
        workload.visit(Analysis { args: &args })?
    };
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

struct Analysis<'a> {
    args: &'a AnalyzeArgs,
}

impl WorkloadVisitor for Analysis<'_> {
    type Output = Result<String>;
    fn visit<W: ordo::harness::Workload>(self, w: &W) -> Self::Output {
        analyze(w, self.args)
    }
}

struct Propose<'a> {
    args: &'a AnalyzeArgs,
}

impl WorkloadVisitor for Propose<'_> {
    type Output = Result<String>;
    fn visit<W: ordo::harness::Workload>(self, w: &W) -> Self::Output {
        let cfg = ProfileConfig {
            protocol: ProtocolConfig {
                knobs: self.args.declared.knobs.clone(),
                ..ProtocolConfig::default()
            },
            threads: self.args.threads,
            per_thread: self.args.profile_txns,
            seed: self.args.seed,
        };
        let p = grouping::propose(w, &cfg).map_err(Error::InvalidInput)?;
        Ok(format!(
            "Callas's grouping heuristic on {} ({} workers × {} transactions per run)\n{}",
            w.name(),
            self.args.threads,
            self.args.profile_txns,
            p.report()
        ))
    }
}

/// Runs `args.txns` transactions of `w` on one worker of `p` (which learns as it goes).
fn learn<P: Protocol, W: ordo::harness::Workload>(p: &P, w: &W, args: &AnalyzeArgs) {
    let mut worker = p.worker(0, false);
    let mut gen = w.generator(0, args.seed);
    let mut program = w.program();
    for _ in 0..args.txns {
        w.next(&mut gen, &mut program);
        // A retryable abort (one worker: none expected) is tried again a few times; the
        // program's own rollbacks count as runs (their shapes are learnt all the same).
        for _ in 0..8 {
            match p.execute(&mut worker, &mut program) {
                Err(a) if a.reason.is_retryable() && a.reason != AbortReason::User => continue,
                _ => break,
            }
        }
    }
}

/// The name of node `n` of `db`: `table` or `table.column`.
fn node_name<M: Default + Send + Sync>(db: &Database<M>, n: &Node) -> String {
    let t = &db.tables()[n.table as usize];
    if n.col == WHOLE {
        t.name().to_string()
    } else {
        let col = t
            .schema()
            .columns()
            .get(n.col as usize)
            .map_or_else(|| format!("#{}", n.col), |c| c.name.clone());
        format!("{}.{col}", t.name())
    }
}

fn load<M: Default + Send + Sync, W: ordo::harness::Workload>(w: &W) -> Result<Database<M>> {
    let mut db: Database<M> = Database::new();
    w.load(&mut db)
        .map_err(|e| Error::InvalidInput(format!("loading {}: {e}", w.name())))?;
    Ok(db)
}

fn analyze<W: ordo::harness::Workload>(w: &W, args: &AnalyzeArgs) -> Result<String> {
    let mut config = ProtocolConfig {
        knobs: args.declared.knobs.clone(),
        ..ProtocolConfig::default()
    };
    if args.chopping == "sc" {
        let mut out = String::new();
        if !args.declared.knobs.has(GROUPS_KNOB.name) {
            let p = ScChoppingRc::open(load(w)?, &config);
            learn(&p, w, args);
            let _ = writeln!(
                out,
                "SC-cycle chopping of {} over the whole workload ({} transactions learnt from)",
                w.name(),
                args.txns
            );
            let name = |n: &Node| node_name(p.db(), n);
            chopping(&mut out, &p.plans().chopping(), &name);
            return Ok(out);
        }
        config
            .knobs
            .parse(&CHOPPING_KNOB, "sc")
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        let p = CallasRc::open(load::<PipeRecord, W>(w)?, &config);
        learn(&p, w, args);
        let _ = writeln!(
            out,
            "SC-cycle chopping of {} within each group ({} transactions learnt from)",
            w.name(),
            args.txns
        );
        let name = |n: &Node| node_name(p.db(), n);
        for g in p.plans().groups() {
            let _ = writeln!(
                out,
                "\ngroup {} ({}): {}",
                g.group,
                if g.pipelined {
                    "chopped"
                } else {
                    "unchopped: each transaction one stage"
                },
                g.members.join(", ")
            );
            if let (true, Some(c)) = (g.pipelined, &g.chopping) {
                chopping(&mut out, c, &name);
            }
        }
        return Ok(out);
    }
    let p = CallasRc::open(load::<PipeRecord, W>(w)?, &config);
    learn(&p, w, args);
    let name = |n: &Node| node_name(p.db(), n);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Runtime Pipelining analysis of {} ({} transactions learnt from)",
        w.name(),
        args.txns
    );
    for g in p.plans().groups() {
        let _ = writeln!(
            out,
            "\ngroup {} ({}): {}",
            g.group,
            if g.pipelined {
                "pipelined"
            } else {
                "unpipelined: each transaction one stage"
            },
            g.members.join(", ")
        );
        if !g.pipelined {
            continue;
        }
        group(&mut out, &g.plan, &name, args.edges);
        for t in &g.plan.types {
            let _ = writeln!(out, "  {}: {}", t.name, stages_text(&t.stages));
            if t.safe != t.stages {
                let _ = writeln!(out, "    safe mode: {}", stages_text(&t.safe));
            }
        }
    }
    Ok(out)
}

fn group(out: &mut String, plan: &GroupPlan, name: &dyn Fn(&Node) -> String, edges: bool) {
    let max = plan.ranks.values().copied().max();
    if let Some(max) = max {
        let _ = writeln!(out, "  ranks:");
        for r in 0..=max {
            let nodes: Vec<String> = plan
                .ranks
                .iter()
                .filter(|(_, &x)| x == r)
                .map(|(n, _)| name(n))
                .collect();
            let _ = writeln!(out, "    {r:>3}  {}", nodes.join(", "));
        }
    } else {
        let _ = writeln!(out, "  ranks: none (nothing the group writes conflicts)");
    }
    if !plan.unranked.is_empty() {
        // One line per table and reason: "warehouse.w_name, w_street_1 (read-only in the group)".
        let _ = writeln!(out, "  unranked:");
        let mut lines: Vec<(TableId, String, Vec<String>)> = Vec::new();
        for (n, why) in &plan.unranked {
            let full = name(n);
            let why = why.to_string();
            match lines.last_mut() {
                Some((t, w, cols)) if *t == n.table && *w == why => cols.push(
                    full.split_once('.')
                        .map_or(full.clone(), |(_, c)| c.to_string()),
                ),
                _ => lines.push((n.table, why, vec![full])),
            }
        }
        for (_, why, cols) in lines {
            let _ = writeln!(out, "         {} ({why})", cols.join(", "));
        }
    }
    if edges {
        let _ = writeln!(out, "  edges (rank(a) <= rank(b)):");
        for (a, b) in &plan.edges {
            let _ = writeln!(out, "         {} -> {}", name(a), name(b));
        }
    }
}

/// One SC-cycle chopping: exempt nodes, then per type its chops, its finest chopping where
/// rollback safety or dependencies made it coarser, and each piece's C-edges.
fn chopping(out: &mut String, c: &Chopping, name: &dyn Fn(&Node) -> String) {
    if !c.exempt.is_empty() {
        let nodes: Vec<String> = c
            .exempt
            .iter()
            .map(|(n, why)| format!("{} ({why})", name(n)))
            .collect();
        let _ = writeln!(out, "  no C-edge: {}", nodes.join(", "));
    }
    let list = |chops: &[Vec<usize>]| {
        chops
            .iter()
            .map(|c| {
                let ps: Vec<String> = c.iter().map(|p| p.to_string()).collect();
                format!("[{}]", ps.join(" "))
            })
            .collect::<Vec<_>>()
            .join(" | ")
    };
    for t in &c.types {
        let _ = writeln!(out, "  {}: {}", t.name, list(&t.chops));
        let mut finest = t.finest.clone();
        let mut chops = t.chops.clone();
        finest.sort();
        chops.sort();
        if finest != chops {
            let _ = writeln!(
                out,
                "    finest, before rollback safety: {}",
                list(&t.finest)
            );
        }
        for (p, with) in t.conflicts.iter().enumerate() {
            if !with.is_empty() {
                let _ = writeln!(out, "    piece {p} C-edges: {}", with.join(", "));
            }
        }
    }
}

fn stages_text(stages: &[Stage]) -> String {
    stages
        .iter()
        .map(|s| {
            let pieces: Vec<String> = s.pieces.iter().map(|p| p.to_string()).collect();
            match s.ranks {
                Some((lo, hi)) if lo == hi => format!("[{}] r{lo}", pieces.join(" ")),
                Some((lo, hi)) => format!("[{}] r{lo}-{hi}", pieces.join(" ")),
                None => format!("[{}]", pieces.join(" ")),
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}
