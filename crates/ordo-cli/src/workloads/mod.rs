//! The workloads the CLI can run: their names, options and defaults, one file per workload.
//!
//! Adding a workload: write `<name>.rs` with its clap `Args` struct and a `build`, then add it to
//! [`WORKLOADS`], [`WorkloadArgs`], [`Workload`] and the three matches below (`sweep` only if some
//! option takes a list).

use crate::UsageError;
use clap::Args;

pub mod ycsb;

/// Workloads: name, summary, source.
pub const WORKLOADS: &[(&str, &str, &str)] = &[(
    "ycsb",
    "key-value requests with Zipfian or hot-set skew",
    "Cooper et al. SoCC 2010; as configured in DBx1000, VLL, PWV, DIBS",
)];

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
}

/// A workload ready to run.
pub enum Workload {
    Ycsb(ordo_workloads::ycsb::Ycsb),
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
        }
    }
}

impl WorkloadArgs {
    /// Builds the chosen workload.
    pub fn build(&self, purpose: Purpose) -> Result<Workload, UsageError> {
        match self.workload.as_str() {
            "ycsb" => Ok(Workload::Ycsb(self.ycsb.build(purpose)?)),
            other => Err(UsageError(format!(
                "unknown workload `{other}` (known: {})",
                WORKLOADS.iter().map(|w| w.0).collect::<Vec<_>>().join(", ")
            ))),
        }
    }
}

/// One point of a parameter sweep: the swept option (its flag name, as `theta`) and its value here.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub param: String,
    pub value: f64,
}

impl SweepPoint {
    /// Reads a workload's point label, `"theta=0.9"`; `""` (no sweep) gives `None`.
    fn from_label(label: &str) -> Result<Option<SweepPoint>, UsageError> {
        if label.is_empty() {
            return Ok(None);
        }
        match label.split_once('=') {
            Some((param, value)) => match value.parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(Some(SweepPoint {
                    param: param.to_string(),
                    value,
                })),
                _ => Err(UsageError(format!("sweep value `{label}` is not a number"))),
            },
            None => Err(UsageError(format!(
                "sweep point `{label}` is not name=value"
            ))),
        }
    }
}

impl std::fmt::Display for SweepPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.param, self.value)
    }
}

impl WorkloadArgs {
    /// The points of a sweep over the one option given as a list (`--theta 0,0.9`), each with
    /// single-valued arguments; one point (`None`) when nothing is swept.
    pub fn sweep(&self) -> Result<Vec<(Option<SweepPoint>, WorkloadArgs)>, UsageError> {
        let labelled: Vec<(String, WorkloadArgs)> = match self.workload.as_str() {
            "ycsb" => self
                .ycsb
                .sweep()?
                .into_iter()
                .map(|(label, ycsb)| {
                    let mut one = self.clone();
                    one.ycsb = ycsb;
                    (label, one)
                })
                .collect(),
            // A workload with a `sweep` of its own gets an arm like ycsb's above, e.g. for a
            // `TpccArgs::sweep(&self) -> Vec<(String, TpccArgs)>` (labels "warehouses=4"):
            //     "tpcc" => self.tpcc.sweep().into_iter().map(|(label, tpcc)| {
            //         let mut one = self.clone(); one.tpcc = tpcc; (label, one) }).collect(),
            // A workload whose options take no lists is one point.
            _ => vec![(String::new(), self.clone())],
        };
        labelled
            .into_iter()
            .map(|(label, args)| Ok((SweepPoint::from_label(&label)?, args)))
            .collect()
    }
}
