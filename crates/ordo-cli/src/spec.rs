//! `ordo spec FILE [--protocol P] [--json]`: run a PostgreSQL isolationtester spec (see
//! `ordo_sql::spec`). A malformed spec (or SQL that does not parse) is a usage error: `FILE:LINE:
//! message`, exit code 2. So is a failing `setup` block, which stops the run as isolationtester
//! does (`error: setup failed: MESSAGE (SQLSTATE)` after the output of the permutations before).

use crate::{Error, Result};
use clap::Args;
use ordo_sql::spec::{self, RunOptions};
use std::process::ExitCode;

#[derive(Args)]
pub struct SpecArgs {
    /// The spec file.
    pub file: String,
    /// Protocol to run every session on (default: from the isolation levels the spec names).
    #[arg(short, long)]
    pub protocol: Option<String>,
    /// Print machine-readable JSON instead of the isolationtester-like text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: SpecArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file).map_err(|source| Error::Read {
        file: args.file.clone(),
        source,
    })?;
    let parsed = spec::parse_spec(&args.file, &text)?;
    let res = match spec::run_spec(
        &parsed,
        &RunOptions {
            protocol: args.protocol,
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
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&res).expect("results serialize")
        );
    } else {
        print!("{}", spec::run::render_text(&parsed, &res));
    }
    Ok(ExitCode::SUCCESS)
}
