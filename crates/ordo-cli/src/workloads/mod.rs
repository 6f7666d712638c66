//! The workloads the CLI can run: their names, options and defaults, one file per workload.
//!
//! Adding a workload: write `<name>.rs` with its clap `Args` struct and a `build`, then add it to
//! [`WORKLOADS`], [`WorkloadArgs`], [`Workload`] and the three matches below (`sweep` only if some
//! option takes a list).

use crate::UsageError;
use clap::Args;

pub mod sibench;
pub mod smallbank;
pub mod tatp;
pub mod tpcc;
pub mod vll_micro;
pub mod vll_range;
pub mod ycsb;

/// Workloads: name, summary, source.
pub const WORKLOADS: &[(&str, &str, &str)] = &[
    (
        "ycsb",
        "key-value requests with Zipfian or hot-set skew",
        "Cooper et al. SoCC 2010; as configured in DBx1000, VLL, PWV, DIBS",
    ),
    (
        "smallbank",
        "banking mix with SI write skew (WriteCheck pivot), hotspot option",
        "Alomari et al. ICDE 2008; Cahill thesis 2009 §5.1",
    ),
    (
        "sibench",
        "full-table min query vs single-row increments, I rows",
        "Cahill thesis 2009 §5.2",
    ),
    (
        "tatp",
        "telecom HLR: 7 transactions, 80/20 read/write, NURand subscribers",
        "Neuvonen et al. TATP 2009; as run in DIBS",
    ),
    (
        "vll-micro",
        "10 read-modify-writes per transaction, 1 hot + 9 cold; contention index = 1 / hot records",
        "Ren, Thomson, Abadi VLDB J. 2015 (VLL), section 3.1.2",
    ),
    (
        "vll-range",
        "one range of read-modify-writes per transaction, ends sharing --shared-prefix of 16 key bits",
        "Ren, Thomson, Abadi VLDB J. 2015 (VLL), section 3.4.2 (Fig. 15, VLLR vs VLL)",
    ),
    (
        "tpcc",
        "TPC-C: nine tables, five transactions (--warehouses, --tiny, --mix, --no-ytd)",
        "TPC-C rev. 5.11; mixes of VLL, PWV",
    ),
    (
        "tpcc++",
        "TPC-C plus Credit Check (mix NO 41, P 43, CC/D/OS/SL 4; --mix stock-level)",
        "Cahill, SSI thesis 2009 §5.3",
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
    pub smallbank: smallbank::SmallBankArgs,
    #[command(flatten)]
    pub sibench: sibench::SiBenchArgs,
    #[command(flatten)]
    pub tatp: tatp::TatpArgs,
    #[command(flatten)]
    pub vll_micro: vll_micro::VllMicroArgs,
    #[command(flatten)]
    pub vll_range: vll_range::VllRangeArgs,
    #[command(flatten)]
    pub tpcc: tpcc::TpccArgs,
}

/// A workload ready to run.
pub enum Workload {
    Ycsb(ordo_workloads::ycsb::Ycsb),
    SmallBank(ordo_workloads::smallbank::SmallBank),
    SiBench(ordo_workloads::sibench::SiBench),
    Tatp(ordo_workloads::tatp::Tatp),
    VllMicro(ordo_workloads::vll_micro::VllMicro),
    VllRange(ordo_workloads::vll_range::VllRange),
    Tpcc(ordo_workloads::tpcc::Tpcc),
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
            Workload::SmallBank(w) => v.visit(w),
            Workload::SiBench(w) => v.visit(w),
            Workload::Tatp(w) => v.visit(w),
            Workload::VllMicro(w) => v.visit(w),
            Workload::VllRange(w) => v.visit(w),
            Workload::Tpcc(w) => v.visit(w),
        }
    }
}

impl WorkloadArgs {
    /// Builds the chosen workload.
    pub fn build(&self, purpose: Purpose) -> Result<Workload, UsageError> {
        self.refuse_foreign_options()?;
        match self.workload.as_str() {
            "ycsb" => Ok(Workload::Ycsb(self.ycsb.build(purpose)?)),
            "smallbank" => Ok(Workload::SmallBank(self.smallbank.build(purpose)?)),
            "sibench" => Ok(Workload::SiBench(self.sibench.build(purpose)?)),
            "tatp" => Ok(Workload::Tatp(self.tatp.build(purpose)?)),
            "vll-micro" => Ok(Workload::VllMicro(self.vll_micro.build(purpose)?)),
            "vll-range" => Ok(Workload::VllRange(
                self.vll_range.build(purpose, self.vll_micro.long)?,
            )),
            "tpcc" => Ok(Workload::Tpcc(self.tpcc.build(purpose, false)?)),
            "tpcc++" => Ok(Workload::Tpcc(self.tpcc.build(purpose, true)?)),
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
            "tpcc" | "tpcc++" => self
                .tpcc
                .sweep()?
                .into_iter()
                .map(|(label, tpcc)| {
                    let mut one = self.clone();
                    one.tpcc = tpcc;
                    (label, one)
                })
                .collect(),
            "vll-micro" => self
                .vll_micro
                .sweep()?
                .into_iter()
                .map(|(label, vll_micro)| {
                    let mut one = self.clone();
                    one.vll_micro = vll_micro;
                    (label, one)
                })
                .collect(),
            "vll-range" => self
                .vll_range
                .sweep()?
                .into_iter()
                .map(|(label, vll_range)| {
                    let mut one = self.clone();
                    one.vll_range = vll_range;
                    (label, one)
                })
                .collect(),
            // A workload whose options take no lists is one point.
            _ => vec![(String::new(), self.clone())],
        };
        labelled
            .into_iter()
            .map(|(label, args)| Ok((SweepPoint::from_label(&label)?, args)))
            .collect()
    }
}

impl WorkloadArgs {
    /// An option that belongs to another workload than the chosen one is a mistake, not a no-op.
    fn refuse_foreign_options(&self) -> Result<(), UsageError> {
        let y = &self.ycsb;
        let ycsb = [
            (y.rows.is_some(), "--rows"),
            (y.ops.is_some(), "--ops"),
            (!y.read_ratio.is_empty(), "--read-ratio"),
            (!y.theta.is_empty(), "--theta"),
            (y.rmw, "--rmw"),
            (!y.hot_rows.is_empty(), "--hot-rows"),
            (y.hot_per_txn.is_some(), "--hot-per-txn"),
            (y.fields.is_some(), "--fields"),
            (y.field_len.is_some(), "--field-len"),
        ]
        .into_iter()
        .find_map(|(set, name)| set.then_some(name));
        let given = [
            ("ycsb", ycsb),
            ("smallbank", self.smallbank.given()),
            ("sibench", self.sibench.given()),
            ("tatp", self.tatp.given()),
            // -w vll-range shares --long with -w vll-micro.
            (
                "vll-micro",
                if self.workload == "vll-range" {
                    self.vll_micro.given_beyond_long()
                } else {
                    self.vll_micro.given()
                },
            ),
            ("vll-range", self.vll_range.given()),
            // -w tpcc and -w tpcc++ share their options.
            (
                if self.workload == "tpcc++" {
                    "tpcc++"
                } else {
                    "tpcc"
                },
                self.tpcc.given(),
            ),
        ];
        for (owner, option) in given {
            if let Some(option) = option {
                if owner != self.workload && WORKLOADS.iter().any(|w| w.0 == self.workload) {
                    return Err(UsageError(format!(
                        "{option} is an option of -w {owner}, not of -w {}",
                        self.workload
                    )));
                }
            }
        }
        Ok(())
    }
}
