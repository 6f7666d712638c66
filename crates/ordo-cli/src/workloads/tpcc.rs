//! `-w tpcc` (and `-w tpcc++`): TPC-C / TPC-C++ options and their defaults.

use super::Purpose;
use crate::UsageError;
use clap::Args;
use ordo_workloads::tpcc::mix::Mix;
use ordo_workloads::tpcc::{Tpcc, TpccConfig};

/// TPC-C options.
#[derive(Args, Debug, Clone, Default)]
pub struct TpccArgs {
    /// TPC-C: number of warehouses; a comma-separated list is a sweep (one run per value).
    #[arg(long, value_delimiter = ',')]
    pub warehouses: Vec<u32>,
    /// TPC-C: tiny scale (customers per district / 30, items / 100, as in Cahill's SSI thesis).
    #[arg(long)]
    pub tiny: bool,
    /// TPC-C: transaction mix — standard, vll, new-order-payment (pwv), tpcc++, stock-level, or a custom
    /// no=45,p=43,os=4,d=4,sl=4,cc=0 in percent summing to 100.
    #[arg(long)]
    pub mix: Option<String>,
    /// TPC-C: Payment skips the w_ytd / d_ytd updates (SSI thesis option).
    #[arg(long = "no-ytd")]
    pub no_ytd: bool,
}

/// Defaults: one full-size warehouse for benchmarks; one tiny warehouse (every transaction of a district
/// meets at the same rows) for verification. `-w tpcc++` defaults to the TPC-C++ mix.
fn defaults(purpose: Purpose, plus_plus: bool) -> TpccConfig {
    let mix = if plus_plus {
        Mix::parse("tpcc++").expect("named mix")
    } else {
        Mix::STANDARD
    };
    match purpose {
        Purpose::Bench => TpccConfig {
            mix,
            ..TpccConfig::default()
        },
        Purpose::Verify => TpccConfig {
            warehouses: 1,
            tiny: true,
            mix,
            no_ytd: false,
        },
    }
}

impl TpccArgs {
    /// One run per `--warehouses` value: (label, the arguments with that single value). One entry with
    /// an empty label when no list was given. A value listed twice is an error.
    pub fn sweep(&self) -> Result<Vec<(String, TpccArgs)>, UsageError> {
        if self.warehouses.len() <= 1 {
            return Ok(vec![(String::new(), self.clone())]);
        }
        for (i, w) in self.warehouses.iter().enumerate() {
            if self.warehouses[..i].contains(w) {
                return Err(UsageError(format!("--warehouses lists {w} twice")));
            }
        }
        Ok(self
            .warehouses
            .iter()
            .map(|&w| {
                (
                    format!("warehouses={w}"),
                    TpccArgs {
                        warehouses: vec![w],
                        ..self.clone()
                    },
                )
            })
            .collect())
    }

    /// The first TPC-C option given, if any (for refusing it under another workload).
    pub fn given(&self) -> Option<&'static str> {
        [
            (!self.warehouses.is_empty(), "--warehouses"),
            (self.tiny, "--tiny"),
            (self.mix.is_some(), "--mix"),
            (self.no_ytd, "--no-ytd"),
        ]
        .into_iter()
        .find_map(|(set, name)| set.then_some(name))
    }

    /// Builds the workload (`plus_plus`: chosen as `-w tpcc++`).
    pub fn build(&self, purpose: Purpose, plus_plus: bool) -> Result<Tpcc, UsageError> {
        let d = defaults(purpose, plus_plus);
        let warehouses = match self.warehouses.as_slice() {
            [] => d.warehouses,
            [w] => *w,
            _ => {
                return Err(UsageError(
                    "several --warehouses values form a sweep, which this command runs one at a time: give one value"
                        .into(),
                ))
            }
        };
        let mix = match &self.mix {
            Some(m) => Mix::parse(m).map_err(|e| UsageError(format!("--mix: {e}")))?,
            None => d.mix,
        };
        Tpcc::new(TpccConfig {
            warehouses,
            tiny: self.tiny || d.tiny,
            mix,
            no_ytd: self.no_ytd || d.no_ytd,
        })
        .map_err(|e| UsageError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warehouse_list_is_a_sweep() {
        let args = TpccArgs {
            warehouses: vec![1, 4],
            tiny: true,
            ..TpccArgs::default()
        };
        let runs = args.sweep().unwrap_or_else(|e| panic!("{}", e.0));
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].0, "warehouses=4");
        assert_eq!(runs[1].1.warehouses, vec![4]);
        assert!(runs[1].1.tiny);
        let w = runs[1]
            .1
            .build(Purpose::Bench, false)
            .unwrap_or_else(|e| panic!("{}", e.0));
        assert_eq!(w.config().warehouses, 4);
        assert!(args.build(Purpose::Bench, false).is_err());
        assert_eq!(TpccArgs::default().sweep().map(|s| s.len()).ok(), Some(1));
        let twice = TpccArgs {
            warehouses: vec![2, 1, 2],
            ..TpccArgs::default()
        };
        assert!(twice.sweep().is_err_and(|e| e.0.contains("twice")));
    }

    #[test]
    fn verify_defaults_are_small_and_tpccpp_has_its_mix() {
        let w = TpccArgs::default()
            .build(Purpose::Verify, true)
            .unwrap_or_else(|e| panic!("{}", e.0));
        assert!(w.config().tiny);
        assert_eq!(w.config().warehouses, 1);
        assert_eq!(w.config().mix, Mix::parse("tpcc++").unwrap());
    }
}
