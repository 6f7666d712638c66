//! `ordo spec FILE [--protocol P] [--json]`: run a PostgreSQL isolationtester spec (see
//! `ordo_sql::spec`). A malformed spec (or SQL that does not parse) is a usage error: `FILE:LINE:
//! message`, exit code 2. So is a failing `setup` block, which stops the run as isolationtester
//! does (`error: setup failed: MESSAGE (SQLSTATE)` after the output of the permutations before).
//!
//! `ordo spec FILE --backend sqlite|mariadb|postgres [--protocol dibs|native|native-LEVEL]` runs it
//! against a real engine instead (`ordo_backends::spec`): `dibs` (the default) puts DIBS's
//! predicate locks in front of the engine's weak level, `native` runs the engine's own isolation
//! at the levels the spec names, `native-ser`, `native-rr`, `native-rc`, `native-ru` at that level
//! for every transaction. A server that cannot be reached is one line naming its start script
//! (exit code 2).

use crate::backend::BackendArgs;
use crate::{Error, Result};
use clap::Args;
use ordo_backends::spec::session::Mode;
use ordo_backends::spec::{self as backend_spec, SpecOptions, SpecRunError};
use ordo_sql::spec::{self, RunOptions, Spec};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct SpecArgs {
    /// The spec file.
    pub file: String,
    /// Protocol to run every session on (default: from the isolation levels the spec names).
    /// With --backend: dibs (default), native, native-ser, native-rr, native-rc, native-ru.
    #[arg(short, long)]
    pub protocol: Option<String>,
    /// Print machine-readable JSON instead of the isolationtester-like text.
    #[arg(long)]
    pub json: bool,
    /// Run against a real engine: sqlite (bundled), mariadb or postgres (start them with
    /// scripts/servers/<name>.sh start).
    #[arg(long)]
    pub backend: Option<String>,
    /// The server's URL (mariadb, postgres). Default: $ORDO_MARIADB_URL or $ORDO_POSTGRES_URL, else
    /// the address scripts/servers/<name>.sh serves.
    #[arg(long, value_name = "URL")]
    pub backend_url: Option<String>,
    /// SQLite's database file, replaced if there (default: a temporary file, removed after).
    #[arg(long, value_name = "FILE")]
    pub sqlite_path: Option<PathBuf>,
    /// With --backend: milliseconds after which a step that has not completed counts as blocked in
    /// the engine (a wait on DIBS is seen at once).
    #[arg(long, value_name = "MS", default_value_t = 300)]
    pub wait_ms: u64,
}

/// The mode `--protocol` names under `--backend`.
fn mode(protocol: Option<&str>) -> Result<Mode> {
    match protocol.unwrap_or("dibs") {
        "dibs" => Ok(Mode::Dibs),
        "native" => Ok(Mode::Native(None)),
        p => p
            .strip_prefix("native-")
            .and_then(backend_spec::level_named)
            .map(|l| Mode::Native(Some(l)))
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "--backend runs --protocol dibs, native, native-ser, native-rr, native-rc or native-ru, not `{p}`"
                ))
            }),
    }
}

pub fn run(args: SpecArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file).map_err(|source| Error::Read {
        file: args.file.clone(),
        source,
    })?;
    let parsed = spec::parse_spec(&args.file, &text)?;
    if args.backend.is_some() {
        return run_backend(&args, &parsed);
    }
    if args.backend_url.is_some() || args.sqlite_path.is_some() {
        return Err(Error::InvalidInput(
            "--backend-url and --sqlite-path need --backend".into(),
        ));
    }
    let res = match spec::run_spec(
        &parsed,
        &RunOptions {
            protocol: args.protocol.clone(),
        },
    ) {
        Ok(res) => res,
        Err(e) => {
            // isolationtester prints what ran before a setup failed, then stops.
            if let (spec::RunError::SetupFailed { steps, done, .. }, false) = (&e, args.json) {
                print!("{}", spec::run::render_setup_failure(&parsed, done, steps));
            }
            return Err(e.into());
        }
    };
    print_result(&args, &parsed, &res);
    Ok(ExitCode::SUCCESS)
}

fn print_result(args: &SpecArgs, parsed: &Spec, res: &spec::run::SpecResult) {
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(res).expect("results serialize")
        );
    } else {
        print!("{}", spec::run::render_text(parsed, res));
    }
}

fn run_backend(args: &SpecArgs, parsed: &Spec) -> Result<ExitCode> {
    let mode = mode(args.protocol.as_deref())?;
    let name = args.backend.clone().unwrap_or_default();
    let (backend, _temp) = crate::backend::open(
        &BackendArgs {
            backend: args.backend.clone(),
            backend_url: args.backend_url.clone(),
            sqlite_path: args.sqlite_path.clone(),
            ..BackendArgs::default()
        },
        &name,
    )?;
    let opts = SpecOptions {
        mode,
        wait: std::time::Duration::from_millis(args.wait_ms.max(1)),
        ..SpecOptions::default()
    };
    match backend_spec::run_spec(Arc::from(backend), parsed, &opts) {
        Ok(res) => {
            print_result(args, parsed, &res);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            if let (SpecRunError::SetupFailed { steps, done, .. }, false) = (&e, args.json) {
                print!("{}", spec::run::render_setup_failure(parsed, done, steps));
            }
            Err(e.into())
        }
    }
}
