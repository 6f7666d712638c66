//! `ordo` — run, compare and verify concurrency-control protocols.
//!
//! ```text
//! ordo list
//! ordo bench  -w ycsb -p 2pl-nowait,silo,nocc -t 1,2 --seconds 5 [workload options] [knobs] [--json FILE]
//! ordo verify -w ycsb -p silo -t 2 --txns 100000 [workload options] [knobs] [--history FILE]
//! ordo report results.json [more.json ...] -o DIR
//! ordo sql    [--protocol P] [-c SQL]
//! ordo spec   FILE [--protocol P] [--json] [--backend sqlite|mariadb|postgres]
//! ordo range-locks [--delay-us 100,500] [--shared-prefix 15,6] [--json FILE]
//! ordo reproduce [--list | NAME... | --all] [--quick] [--out DIR]
//! ```
//! The workload options and protocol knobs come from their declarations ([`declared`]). An error
//! (an unknown name, an invalid value, a file that cannot be written: [`error`]) prints one line
//! and exits with code 2.

mod analyze;
mod backend;
mod bench;
mod declared;
mod error;
mod list;
mod opts;
mod output;
mod range_locks;
mod report;
mod reproduce;
mod spec;
mod sql;
mod verify;

pub use error::{Error, Result};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ordo",
    version,
    about = "Concurrency-control protocols side by side, each run checked for serializability"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List protocols and workloads, with the papers they come from.
    List,
    /// Benchmark protocols on a workload: throughput, aborts, latency.
    Bench(bench::BenchArgs),
    /// Run a workload with history recording on and check the history for anomalies.
    Verify(verify::VerifyArgs),
    /// Draw figures (SVG) and an HTML page from `ordo bench --json` results.
    Report(report::ReportArgs),
    /// An SQL shell over one protocol (interactive, stdin, or -c).
    Sql(sql::SqlArgs),
    /// Run a PostgreSQL isolationtester spec against a protocol.
    Spec(spec::SpecArgs),
    /// Compare range lock managers in isolation: VLLR against a standard and a hierarchical one
    /// (the VLL paper's Fig. 14).
    RangeLocks(range_locks::RangeLocksArgs),
    /// Reproduce the papers' headline results: run, draw, and decide each against the paper.
    Reproduce(reproduce::ReproduceArgs),
    /// Callas's Runtime Pipelining analysis of a workload: ranks, groups, each type's stages.
    Analyze(analyze::AnalyzeArgs),
}

/// The width of the protocol-name column of `ordo list`, `bench` and `verify`: the longest name.
fn name_width() -> usize {
    ordo::protocols::names()
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(0)
}

/// Restores the default SIGPIPE action, so that `ordo bench | head` ends quietly when the reader
/// goes away, as Unix tools do, instead of panicking on the failed write (Rust ignores SIGPIPE).
fn quiet_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    quiet_broken_pipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            e.exit()
        }
        Err(e) => {
            // One line, as for every other usage error.
            eprintln!("error: {}", Error::from(e));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::List => {
            list::run();
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench(args) => bench::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Report(args) => report::run(args),
        Command::Sql(args) => sql::run(args),
        Command::Spec(args) => spec::run(args),
        Command::RangeLocks(args) => range_locks::run(args),
        Command::Reproduce(args) => reproduce::run(args),
        Command::Analyze(args) => analyze::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// clap's own checks of the command line: no two arguments of a command share a name (a
    /// workload option or knob named like one of `bench`'s flags would), and each is well formed.
    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
