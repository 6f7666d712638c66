//! The workloads the CLI can run: their names, options and defaults, one file per workload.
//!
//! Adding a workload: write `<name>.rs` with its clap `Args` struct and a `build`, then add it to
//! [`WORKLOADS`], [`WorkloadArgs`], [`Workload`] and the two matches below.

use crate::UsageError;
use clap::Args;

pub mod vll_micro;
pub mod ycsb;

/// Workloads: name, summary, source.
pub const WORKLOADS: &[(&str, &str, &str)] = &[
    (
        "ycsb",
        "key-value requests with Zipfian or hot-set skew",
        "Cooper et al. SoCC 2010; as configured in DBx1000, VLL, PWV, DIBS",
    ),
    (
        "vll-micro",
        "10 read-modify-writes per transaction, 1 hot + 9 cold; contention index = 1 / hot records",
        "Ren, Thomson, Abadi VLDB J. 2015 (VLL), section 3.1.2",
    ),
];

/// What the workload is built for: each workload picks its own defaults for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// `ordo bench`: the papers' configurations.
    Bench,
    /// `ordo verify`: small and contended, so that a recorded run finds anomalies fast.
    Verify,
}

/// The workload name and its parameters. Unset values take the workload's defaults.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Workload (see `ordo list`).
    #[arg(short = 'w', long = "workload", default_value = "ycsb")]
    pub workload: String,
    #[command(flatten)]
    pub ycsb: ycsb::YcsbArgs,
    #[command(flatten)]
    pub vll_micro: vll_micro::VllMicroArgs,
}

/// A workload ready to run.
pub enum Workload {
    Ycsb(ordo_workloads::ycsb::Ycsb),
    VllMicro(ordo_workloads::vll_micro::VllMicro),
}

/// Something to do with whichever workload was chosen (see [`Workload::visit`]).
pub trait WorkloadVisitor {
    type Output;
    fn visit<W: ordo::harness::Workload>(self, workload: &W) -> Self::Output;
}

impl Workload {
    /// Calls `v` with the concrete workload.
    pub fn visit<V: WorkloadVisitor>(&self, v: V) -> V::Output {
        match self {
            Workload::Ycsb(w) => v.visit(w),
            Workload::VllMicro(w) => v.visit(w),
        }
    }
}

impl WorkloadArgs {
    /// Builds the chosen workload.
    pub fn build(&self, purpose: Purpose) -> Result<Workload, UsageError> {
        match self.workload.as_str() {
            "ycsb" => Ok(Workload::Ycsb(self.ycsb.build(purpose)?)),
            "vll-micro" => Ok(Workload::VllMicro(self.vll_micro.build(purpose)?)),
            other => Err(UsageError(format!(
                "unknown workload `{other}` (known: {})",
                WORKLOADS.iter().map(|w| w.0).collect::<Vec<_>>().join(", ")
            ))),
        }
    }
}
