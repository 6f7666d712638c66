//! What ends a command with an error, and the exit code each kind of error gives.
//!
//! Every command returns [`Result`]; `main` prints an error as one line, `error: <message>`, and
//! exits with [`Error::exit_code`]. The other crates' errors convert into it with `?`: a workload
//! that cannot be built ([`ordo_workloads::Error`]), a run that cannot be made ([`ordo::Error`]), a
//! value a declaration refuses ([`OptionError`]), a malformed spec. Every kind exits with 2 today,
//! the code of a usage error: all of them are something the command was asked that cannot be done
//! as asked (exit code 1 is a command's verdict, such as a broken promise, not an error).

use ordo::options::OptionError;
use ordo::protocols::UnknownProtocol;
use plotters::drawing::DrawingAreaErrorKind;
use std::io;
use std::path::PathBuf;

/// Why a command failed (see the module docs).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument the command refuses: an unknown name, a value out of range, arguments that do
    /// not go together.
    #[error("{0}")]
    InvalidInput(String),
    /// A workload option or protocol knob its declaration refuses.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// A protocol name that names none.
    #[error(transparent)]
    UnknownProtocol(#[from] UnknownProtocol),
    /// A workload that cannot be built as asked.
    #[error(transparent)]
    Workload(#[from] ordo_workloads::Error),
    /// A run that cannot be made: more threads than the protocol runs, tables beyond this
    /// machine's memory, workers that cannot be pinned.
    #[error(transparent)]
    Run(#[from] ordo::Error),
    /// A real engine that cannot be reached or refused the work (`--backend`).
    #[error(transparent)]
    Backend(#[from] ordo_backends::Error),
    /// A malformed isolation spec (`FILE:LINE: message`).
    #[error(transparent)]
    Spec(#[from] ordo_sql::spec::SpecError),
    /// A spec that cannot be run as asked.
    #[error(transparent)]
    SpecRun(#[from] ordo_sql::spec::RunError),
    /// A spec that cannot be run against a real engine (`ordo spec --backend`).
    #[error(transparent)]
    BackendSpec(#[from] ordo_backends::spec::SpecRunError),
    /// An input file that cannot be read.
    #[error("{file}: {source}")]
    Read { file: String, source: io::Error },
    /// Standard input that cannot be read.
    #[error("reading stdin: {0}")]
    Stdin(io::Error),
    /// An input file that is not what the command reads (`ordo report`'s results).
    #[error("{file}: {why}")]
    InvalidData { file: String, why: String },
    /// An output file that cannot be written, found before the command runs.
    #[error("cannot write {}: {why}", path.display())]
    CannotWrite { path: PathBuf, why: String },
    /// Writing an output file failed.
    #[error("writing {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    /// An output directory that cannot be created.
    #[error("creating {}: {source}", path.display())]
    CreateDir { path: PathBuf, source: io::Error },
    /// A figure that cannot be drawn.
    #[error("drawing {figure}: {source}")]
    Draw {
        figure: String,
        source: DrawingAreaErrorKind<io::Error>,
    },
}

/// A command line clap refuses, as one line (clap adds a usage block and a tip): its first, without
/// the `error: ` that `main` prints itself.
impl From<clap::Error> for Error {
    fn from(e: clap::Error) -> Self {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("invalid arguments");
        Error::InvalidInput(first.trim_start_matches("error: ").to_string())
    }
}

impl Error {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            // What the user asked for, on the command line or in a file they named.
            Error::InvalidInput(_)
            | Error::Option(_)
            | Error::UnknownProtocol(_)
            | Error::Workload(_)
            | Error::Run(_)
            | Error::Backend(_)
            | Error::Spec(_)
            | Error::SpecRun(_)
            | Error::BackendSpec(_)
            | Error::Read { .. }
            | Error::Stdin(_)
            | Error::InvalidData { .. } => 2,
            // Results that cannot be written where the command was told to write them.
            Error::CannotWrite { .. }
            | Error::Write { .. }
            | Error::CreateDir { .. }
            | Error::Draw { .. } => 2,
        }
    }
}

/// A command's result.
pub type Result<T> = std::result::Result<T, Error>;
