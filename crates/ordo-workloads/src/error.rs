//! Why a workload could not be built: one enum for every workload's configuration errors, and
//! [`Result`] over it.
//!
//! A workload checks its parameters when it is built (`Ycsb::new`, …, and from command-line
//! settings, [`crate::catalog`]); what it refuses names the option at fault, as the user typed it
//! (`--rows must be at least 1`). Every message is one line, for the command line to print as it is.
//! A run's broken invariant is not one of these: it is an [`ordo::harness::Violation`], a result of
//! the run.

use crate::tpcc::mix::MixError;
use ordo::options::OptionError;

/// A workload configuration that cannot run (see the module docs).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// An option's value the workload cannot run with, alone or beside the others' values:
    /// `--ops (20) cannot exceed --rows (10): a transaction's keys are distinct`.
    #[error("--{option} {why}")]
    Invalid { option: &'static str, why: String },
    /// Values each acceptable that together leave the workload nothing it can run, no one option
    /// at fault: `not enough cold rows: …`.
    #[error("{0}")]
    Unrunnable(String),
    /// A `--mix` that does not parse.
    #[error("--mix: {0}")]
    Mix(#[from] MixError),
    /// A value the option's declaration refuses (its kind or range), a list where a run takes one
    /// value, two options swept at once, or options that go only together given apart.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// An option of another workload than the one chosen (a mistake, not a no-op).
    #[error("--{option} is an option of -w {owner}, not of -w {workload}")]
    Foreign {
        option: &'static str,
        owner: &'static str,
        workload: &'static str,
    },
    /// An option no workload declares.
    #[error("--{option} is not an option of -w {workload}")]
    NotAnOption {
        option: &'static str,
        workload: &'static str,
    },
    /// No workload has that name.
    #[error("unknown workload `{0}` (known: {known})", known = crate::catalog::names().join(", "))]
    UnknownWorkload(String),
}

impl Error {
    /// `--option why`.
    pub fn invalid(option: &'static str, why: impl Into<String>) -> Self {
        Error::Invalid {
            option,
            why: why.into(),
        }
    }
}

/// A workload result.
pub type Result<T> = std::result::Result<T, Error>;
