//! `-w ycsb`: its options and their defaults.
//!
//! `--theta`, `--hot-rows` and `--read-ratio` take comma-separated lists in `ordo bench`, which then
//! sweeps that one parameter ([`YcsbArgs::sweep`]); everywhere else each takes one value.

use super::Purpose;
use crate::UsageError;
use clap::Args;
use ordo_workloads::ycsb::{HotSet, Ycsb, YcsbConfig};

/// YCSB options.
#[derive(Args, Debug, Clone, Default)]
pub struct YcsbArgs {
    /// YCSB: number of rows.
    #[arg(long)]
    pub rows: Option<u64>,
    /// YCSB: requests per transaction.
    #[arg(long)]
    pub ops: Option<usize>,
    /// YCSB: fraction of requests that are reads, in [0, 1] (bench: a list sweeps it).
    #[arg(
        long = "read-ratio",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub read_ratio: Vec<f64>,
    /// YCSB: Zipfian skew θ (0 = uniform; 0.99 and above are very hot; bench: a list sweeps it,
    /// e.g. 0,0.6,0.9,0.99).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub theta: Vec<f64>,
    /// YCSB: updates read-modify-write their field instead of overwriting it.
    #[arg(long)]
    pub rmw: bool,
    /// YCSB: hot-set mode — the number of hot rows (keys 0..H; bench: a list sweeps it).
    #[arg(long = "hot-rows", requires = "hot_per_txn", value_delimiter = ',')]
    pub hot_rows: Vec<u64>,
    /// YCSB: hot-set mode — hot keys per transaction.
    #[arg(long = "hot-per-txn", requires = "hot_rows")]
    pub hot_per_txn: Option<usize>,
    /// YCSB: columns per row.
    #[arg(long)]
    pub fields: Option<usize>,
    /// YCSB: bytes per column.
    #[arg(long = "field-len")]
    pub field_len: Option<u16>,
}

/// Defaults: the papers' configuration for benchmarks; a small, contended table for verification.
fn defaults(purpose: Purpose) -> YcsbConfig {
    match purpose {
        Purpose::Bench => YcsbConfig::default(),
        Purpose::Verify => YcsbConfig {
            rows: 1_000,
            ops: 8,
            read_ratio: 0.5,
            theta: 0.9,
            rmw: true,
            ..YcsbConfig::default()
        },
    }
}

/// One value of a list option, or an error naming the option if it lists several.
fn single<T: Copy>(flag: &str, values: &[T]) -> Result<Option<T>, UsageError> {
    match values {
        [] => Ok(None),
        [v] => Ok(Some(*v)),
        _ => Err(UsageError(format!(
            "--{flag} takes one value here (only `ordo bench` sweeps a list), got {}",
            values.len()
        ))),
    }
}

impl YcsbArgs {
    /// The points of a sweep: one `("theta=0.9", args with that one value)` per listed value of the
    /// one option given as a list, in the order given; one `("", self)` when no option is a list.
    /// Each point still has to pass [`YcsbArgs::build`].
    pub fn sweep(&self) -> Result<Vec<(String, YcsbArgs)>, UsageError> {
        let lists: Vec<&'static str> = [
            ("theta", self.theta.len()),
            ("hot-rows", self.hot_rows.len()),
            ("read-ratio", self.read_ratio.len()),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 1)
        .map(|(flag, _)| flag)
        .collect();
        match lists.as_slice() {
            [] => Ok(vec![(String::new(), self.clone())]),
            [flag] => {
                let values: Vec<String> = match *flag {
                    "theta" => self.theta.iter().map(f64::to_string).collect(),
                    "hot-rows" => self.hot_rows.iter().map(u64::to_string).collect(),
                    _ => self.read_ratio.iter().map(f64::to_string).collect(),
                };
                for (i, v) in values.iter().enumerate() {
                    if values[..i].contains(v) {
                        return Err(UsageError(format!("--{flag} lists {v} twice")));
                    }
                }
                Ok((0..values.len())
                    .map(|i| {
                        let mut one = self.clone();
                        match *flag {
                            "theta" => one.theta = vec![self.theta[i]],
                            "hot-rows" => one.hot_rows = vec![self.hot_rows[i]],
                            _ => one.read_ratio = vec![self.read_ratio[i]],
                        }
                        (format!("{flag}={}", values[i]), one)
                    })
                    .collect())
            }
            many => Err(UsageError(format!(
                "a sweep varies one option at a time, but --{} each list several values",
                many.join(" and --")
            ))),
        }
    }

    /// Builds the workload; every option must have one value (see [`YcsbArgs::sweep`]).
    pub fn build(&self, purpose: Purpose) -> Result<Ycsb, UsageError> {
        let defaults = defaults(purpose);
        let theta = single("theta", &self.theta)?;
        let hot_rows = single("hot-rows", &self.hot_rows)?;
        let read_ratio = single("read-ratio", &self.read_ratio)?;
        if hot_rows.is_some() && theta.is_some() {
            return Err(UsageError(
                "--theta and --hot-rows are alternative key distributions: give one".into(),
            ));
        }
        let cfg = YcsbConfig {
            rows: self.rows.unwrap_or(defaults.rows),
            fields: self.fields.unwrap_or(defaults.fields),
            field_len: self.field_len.unwrap_or(defaults.field_len),
            ops: self.ops.unwrap_or(defaults.ops),
            read_ratio: read_ratio.unwrap_or(defaults.read_ratio),
            theta: theta.unwrap_or(defaults.theta),
            rmw: self.rmw || defaults.rmw,
            hot: match (hot_rows, self.hot_per_txn) {
                (Some(rows), Some(per_txn)) => Some(HotSet { rows, per_txn }),
                _ => defaults.hot,
            },
        };
        Ycsb::new(cfg).map_err(|e| UsageError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        ycsb: YcsbArgs,
    }

    fn args(list: &[&str]) -> YcsbArgs {
        Cli::try_parse_from(std::iter::once("t").chain(list.iter().copied()))
            .expect("parses")
            .ycsb
    }

    fn error(a: &YcsbArgs) -> String {
        match a.sweep() {
            Err(UsageError(msg)) => msg,
            Ok(points) => panic!("expected an error, got {} points", points.len()),
        }
    }

    #[test]
    fn a_list_sweeps_its_option_in_order() {
        let points = args(&["--theta", "0,0.6,0.99", "--rows", "100"])
            .sweep()
            .unwrap();
        let labels: Vec<&str> = points.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["theta=0", "theta=0.6", "theta=0.99"]);
        for ((_, one), theta) in points.iter().zip([0.0, 0.6, 0.99]) {
            assert_eq!(one.theta, [theta]);
            assert_eq!(one.rows, Some(100), "other options are kept");
            let w = one.build(Purpose::Bench).unwrap();
            assert_eq!(w.config().theta, theta);
        }
    }

    #[test]
    fn hot_rows_and_read_ratio_sweep_too() {
        let points = args(&[
            "--hot-rows",
            "10,100",
            "--hot-per-txn",
            "2",
            "--rows",
            "1000",
        ])
        .sweep()
        .unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(points[1].0, "hot-rows=100");
        let hot = points[1].1.build(Purpose::Bench).unwrap().config().hot;
        assert_eq!(
            hot,
            Some(HotSet {
                rows: 100,
                per_txn: 2
            })
        );
        let points = args(&["--read-ratio", "0.5,1", "--theta", "0.9"])
            .sweep()
            .unwrap();
        assert_eq!(points[0].0, "read-ratio=0.5");
        assert_eq!(points[1].1.read_ratio, [1.0]);
        assert_eq!(points[1].1.theta, [0.9], "a single value is not swept");
    }

    #[test]
    fn no_list_is_one_unlabelled_point() {
        let points = args(&["--theta", "0.9"]).sweep().unwrap();
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].0, "");
        assert_eq!(points[0].1.theta, [0.9]);
    }

    #[test]
    fn sweeping_two_options_or_repeating_a_value_is_an_error() {
        let e = error(&args(&["--theta", "0,0.9", "--read-ratio", "0.5,1"]));
        assert!(
            e.contains("one option at a time") && e.contains("--theta"),
            "{e}"
        );
        let e = error(&args(&["--theta", "0.9,0.9"]));
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn build_takes_one_value_per_option() {
        let Err(UsageError(e)) = args(&["--theta", "0,0.9"]).build(Purpose::Verify) else {
            panic!("a list must not build");
        };
        assert!(e.contains("--theta") && e.contains("one value"), "{e}");
        // Each point is still validated.
        let points = args(&["--theta", "0.5,-1"]).sweep().unwrap();
        assert!(points[1].1.build(Purpose::Bench).is_err());
    }
}
