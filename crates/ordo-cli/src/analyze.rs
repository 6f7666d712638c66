//! `ordo analyze`: Callas's Runtime Pipelining analysis of a workload, as a user can read it —
//! per group, the ranks of the read-write tables (or columns), what is left unranked and why, the
//! table-dependency edges, and each transaction type's stages (Xie 2016, §4.4.1, §4.5.1).
//!
//! The analysis works from the programs' own declarations: `analyze` runs `--txns` transactions of
//! the workload on one worker under `callas` (which learns each type's shape as it goes) and
//! prints what the protocol planned — the same plans a benchmark run uses.

use crate::declared::Declared;
use crate::{Error, Result};
use clap::Args;
use ordo::protocols::callas::analysis::{GroupPlan, Node, Stage, WHOLE};
use ordo::protocols::callas::CallasRc;
use ordo::protocols::kit::pipeline::access_list::PipeRecord;
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
    let text = workload.visit(Analysis { args: &args })?;
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

fn analyze<W: ordo::harness::Workload>(w: &W, args: &AnalyzeArgs) -> Result<String> {
    let mut db: Database<PipeRecord> = Database::new();
    w.load(&mut db)
        .map_err(|e| Error::InvalidInput(format!("loading {}: {e}", w.name())))?;
    let config = ProtocolConfig {
        knobs: args.declared.knobs.clone(),
        ..ProtocolConfig::default()
    };
    let p = CallasRc::open(db, &config);
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
    let db = p.db();
    let name = |n: &Node| {
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
    };
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
