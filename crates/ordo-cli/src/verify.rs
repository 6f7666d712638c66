//! `ordo verify`: run with history recording on, check the history, report anomalies.

use crate::declared::Declared;
use crate::opts;
use crate::{Error, Result};
use clap::Args;
use ordo::check::AnomalyKind;
use ordo::harness::{verify, Verified, VerifyConfig};
use ordo::protocols::{self, Isolation, Protocol, ProtocolConfig, ProtocolVisitor};
use ordo_workloads::{catalog, Purpose, WorkloadVisitor};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Workload (see `ordo list`).
    #[arg(short = 'w', long = "workload", default_value = "ycsb")]
    pub workload: String,
    /// Protocols to verify, comma-separated.
    #[arg(short = 'p', long)]
    pub protocols: String,
    /// Worker threads.
    #[arg(short = 't', long, default_value = "2")]
    pub threads: String,
    /// Transactions to run (in total).
    #[arg(long, default_value_t = 100_000)]
    pub txns: u64,
    /// Seed of the request generators.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Write each recorded history's committed transactions to FILE.PROTOCOL.json, in the JSON
    /// layout dbcop 0.2.0 reads (`dbcop verify --input-dir DIR --consistency serializable`).
    #[arg(long)]
    pub history: Option<PathBuf>,
    /// Do not prefetch each transaction's declared records before running it (`ordo bench`'s
    /// `--no-prefetch`): by default verification runs the protocols' benchmark code paths.
    #[arg(long = "no-prefetch")]
    pub no_prefetch: bool,
    /// The workload options and protocol knobs (from their declarations).
    /// Real engines behind DIBS (`--backend`): the history is recorded from the client side.
    #[command(flatten)]
    pub backend: crate::backend::BackendArgs,
    #[command(flatten)]
    pub declared: Declared,
}

struct Runner<'a, W> {
    workload: &'a W,
    cfg: &'a VerifyConfig,
}

impl<W: ordo::harness::Workload> ProtocolVisitor for Runner<'_, W> {
    type Output = ordo::Result<Verified>;
    fn visit<P: Protocol>(self) -> Self::Output {
        verify::run::<P, W>(self.workload, self.cfg)
    }
}

/// Whether `report` breaks what `isolation` promises.
fn violates(isolation: Isolation, v: &Verified) -> bool {
    breaks(isolation, &v.report) || (isolation == Isolation::Serializable && v.invariants.is_err())
}

/// Whether a checked history breaks what `isolation` promises.
pub fn breaks(isolation: Isolation, r: &ordo::check::Report) -> bool {
    match isolation {
        Isolation::Serializable => !r.is_serializable(),
        Isolation::SnapshotIsolation => [
            AnomalyKind::G0,
            AnomalyKind::G1a,
            AnomalyKind::G1c,
            AnomalyKind::GSingle,
        ]
        .iter()
        .any(|k| r.has(*k)),
        Isolation::ReadCommitted => [AnomalyKind::G0, AnomalyKind::G1a, AnomalyKind::G1c]
            .iter()
            .any(|k| r.has(*k)),
        Isolation::None => false,
    }
}

pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    crate::backend::check_unused(&args.backend)?;
    if args.backend.backend.is_some() {
        return crate::backend::verify(&args);
    }
    let protos = opts::protocols(&args.protocols)?;
    let threads = opts::threads(&args.threads)?;
    if threads.len() != 1 {
        return Err(Error::InvalidInput("verify takes one thread count".into()));
    }
    if args.txns == 0 {
        return Err(Error::InvalidInput("--txns must be at least 1".into()));
    }
    let workload =
        catalog::find(&args.workload)?.build(&args.declared.workload, Purpose::Verify)?;
    let cfg = VerifyConfig {
        protocol: ProtocolConfig {
            threads: threads[0],
            knobs: args.declared.knobs.clone(),
            ..ProtocolConfig::default()
        },
        txns: args.txns,
        seed: args.seed,
        prefetch: !args.no_prefetch,
    };
    workload.visit(Verifications {
        args: &args,
        protos: &protos,
        cfg: &cfg,
    })
}

/// Verifies every chosen protocol on one workload.
struct Verifications<'a> {
    args: &'a VerifyArgs,
    protos: &'a [&'static protocols::ProtocolInfo],
    cfg: &'a VerifyConfig,
}

impl WorkloadVisitor for Verifications<'_> {
    type Output = Result<ExitCode>;
    fn visit<W: ordo::harness::Workload>(self, w: &W) -> Self::Output {
        verify_all(w, self)
    }
}

fn verify_all<W: ordo::harness::Workload>(w: &W, v: Verifications<'_>) -> Result<ExitCode> {
    let Verifications { args, protos, cfg } = v;
    let mut failed = false;
    let nw = crate::name_width();
    // Every history file is checked writable before the first run.
    let mut histories = Vec::new();
    for &info in protos {
        histories.push(match &args.history {
            Some(base) => Some(crate::output::PendingFile::prepare(&PathBuf::from(
                format!("{}.{}.json", base.display(), info.name),
            ))?),
            None => None,
        });
    }
    for (&info, history) in protos.iter().zip(histories) {
        let v = protocols::with_protocol(info.name, Runner { workload: w, cfg })
            .expect("validated protocol name")?;
        let bad = violates(info.isolation, &v);
        failed |= bad;
        println!(
            "{:<nw$} promises {:<18} {}  => {}",
            info.name,
            format!("{:?}", info.isolation),
            v.report.summary(),
            if bad { "VIOLATED" } else { "ok" }
        );
        for a in v.report.anomalies.iter().take(5) {
            println!("    {}", a.description);
        }
        if v.report.anomalies.len() > 5 {
            println!("    … {} more", v.report.anomalies.len() - 5);
        }
        if let Err(e) = &v.invariants {
            println!("    invariant violated: {e}");
        }
        if let Some(file) = history {
            let text = serde_json::to_string(&ordo::check::dbcop::to_dbcop_json(&v.history))
                .expect("json");
            let path = file.path().to_path_buf();
            file.finish(&text)?;
            println!("    history written to {}", path.display());
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
