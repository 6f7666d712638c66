//! The options `bench` and `verify` take from their declarations: every workload's options
//! ([`ordo_workloads::catalog::options`]) and every protocol's knobs ([`ordo::protocols::ProtocolInfo::knobs`]),
//! made into clap arguments when the command line is built.
//!
//! ```text
//!   OptionSpec { name: "theta", kind: Float { min: 0, max: ∞ }, sweep, help, … }
//!        │  augment_args: one Arg each (--theta <θ>, its help, under "Workload options")
//!        ▼
//!   ordo bench --theta 0,0.9 --vll-batch 8
//!        │  from_arg_matches: OptionSpec::parse, a refused value is the spec's one-line error
//!        ▼
//!   Declared { workload: Settings { theta → [0, 0.9] }, knobs: Settings { vll-batch → [8] } }
//! ```
//!
//! Which options belong to the chosen workload is the catalogue's to say when it builds it; a knob
//! goes to every protocol, and those that do not read it ignore it.

use clap::builder::{Arg, ArgAction, Command};
use clap::error::ErrorKind;
use clap::ArgMatches;
use ordo::options::{OptionSpec, Settings, ValueKind};

/// The workload options and protocol knobs given, parsed and checked against their declarations.
#[derive(Clone, Debug, Default)]
pub struct Declared {
    /// The workload options given (checked against the chosen workload when it is built).
    pub workload: Settings,
    /// The protocol knobs given (each protocol reads its own).
    pub knobs: Settings,
}

const WORKLOAD_HEADING: &str = "Workload options (see `ordo list`)";
const KNOB_HEADING: &str = "Protocol knobs (each read by the protocols named)";

/// Every protocol's knobs, each once (by name, in listing order).
pub fn knobs() -> Vec<&'static OptionSpec> {
    let mut all: Vec<&'static OptionSpec> = Vec::new();
    for spec in ordo::protocols::all()
        .into_iter()
        .flat_map(|p| p.knobs.iter().copied())
    {
        if !all.iter().any(|o| o.name == spec.name) {
            all.push(spec);
        }
    }
    all
}

/// The command-line arguments: the workloads' options, then the knobs no workload declares.
fn arguments() -> Vec<(&'static OptionSpec, &'static str)> {
    let mut args: Vec<(&'static OptionSpec, &'static str)> = ordo_workloads::catalog::options()
        .into_iter()
        .map(|spec| (spec, WORKLOAD_HEADING))
        .collect();
    for spec in knobs() {
        if !args.iter().any(|(o, _)| o.name == spec.name) {
            args.push((spec, KNOB_HEADING));
        }
    }
    args
}

/// The help of `spec`: its own, what it takes, whether a list sweeps it, its default.
fn help(spec: &OptionSpec) -> String {
    let mut text = spec.help.to_string();
    if matches!(
        spec.kind,
        ValueKind::Int { .. } | ValueKind::Float { .. } | ValueKind::Choice(_)
    ) {
        text += &format!(" Takes {}.", spec.kind);
    }
    if spec.sweep {
        text += " A comma-separated list is a sweep: `ordo bench` runs each value.";
    }
    if let Some(d) = spec.default {
        text += &format!(" [default: {d}]");
    }
    text
}

/// Whether repeating the option adds values (`--theta 0 --theta 0.9` is the list `0,0.9`, as
/// before these options were declared), rather than being an error.
fn appends(spec: &OptionSpec) -> bool {
    spec.sweep && spec.kind != ValueKind::Text
}

/// `spec` as a clap argument.
fn argument(spec: &'static OptionSpec, heading: &'static str) -> Arg {
    let arg = Arg::new(spec.name)
        .long(spec.name)
        .help(help(spec))
        .help_heading(heading);
    match spec.kind {
        ValueKind::Flag => arg.action(ArgAction::SetTrue),
        _ => arg
            .value_name(spec.value_name)
            .action(if appends(spec) {
                ArgAction::Append
            } else {
                ArgAction::Set
            })
            // `-1` is a value for the declaration to refuse with its own message, not a flag.
            .allow_negative_numbers(true),
    }
}

/// The text given for `spec`, if it was given (`""` for a flag).
fn given(m: &ArgMatches, spec: &OptionSpec) -> Option<String> {
    match spec.kind {
        ValueKind::Flag => m.get_flag(spec.name).then(String::new),
        _ if appends(spec) => m
            .get_many::<String>(spec.name)
            .map(|v| v.cloned().collect::<Vec<_>>().join(",")),
        _ => m.get_one::<String>(spec.name).cloned(),
    }
}

impl clap::FromArgMatches for Declared {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut declared = Declared::default();
        declared.update_from_arg_matches(m)?;
        Ok(declared)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        let workload_options = ordo_workloads::catalog::options();
        let knobs = knobs();
        for (spec, _) in arguments() {
            let Some(text) = given(m, spec) else {
                continue;
            };
            // An option both a workload and a protocol declare (identically) goes to both.
            for (list, settings) in [
                (&workload_options, &mut self.workload),
                (&knobs, &mut self.knobs),
            ] {
                if list.iter().any(|o| o.name == spec.name) {
                    settings
                        .parse(spec, &text)
                        .map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, e))?;
                }
            }
        }
        Ok(())
    }
}

impl clap::Args for Declared {
    fn augment_args(cmd: Command) -> Command {
        arguments()
            .into_iter()
            .fold(cmd, |cmd, (spec, heading)| cmd.arg(argument(spec, heading)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        declared: Declared,
    }

    fn parse(args: &[&str]) -> Result<Declared, String> {
        Cli::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
            .map(|c| c.declared)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_option_declared_twice_is_declared_identically() {
        let all: Vec<&OptionSpec> = ordo_workloads::catalog::CATALOG
            .iter()
            .flat_map(|e| e.options.iter().copied())
            .chain(
                ordo::protocols::all()
                    .into_iter()
                    .flat_map(|p| p.knobs.iter().copied()),
            )
            .collect();
        for a in &all {
            for b in &all {
                if a.name == b.name {
                    assert_eq!(a, b, "--{} is declared twice, differently", a.name);
                }
            }
        }
        let mut names: Vec<&str> = arguments().iter().map(|(o, _)| o.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "each option is one argument");
        assert!(names.contains(&"long") && names.contains(&"vll-batch"));
    }

    #[test]
    fn values_are_parsed_into_workload_options_and_knobs() {
        let d = parse(&["--theta", "0,0.9", "--rmw", "--vll-batch", "8"]).unwrap();
        let given: Vec<&str> = d.workload.given().map(|(s, _)| s.name).collect();
        assert_eq!(given, ["theta", "rmw"]);
        assert_eq!(d.workload.sweep().unwrap().len(), 2);
        assert_eq!(d.knobs.int(&ordo::protocols::vll::BATCH_KNOB), Ok(Some(8)));
        // A repeated sweep option adds values, as a list does.
        let d = parse(&["--theta", "0", "--theta", "0.9"]).unwrap();
        assert_eq!(d.workload.sweep().unwrap().len(), 2);
    }

    #[test]
    fn a_refused_value_is_the_declaration_s_one_line() {
        let e = parse(&["--vll-batch", "0"]).unwrap_err();
        assert_eq!(
            e.lines().next().unwrap(),
            "error: --vll-batch takes a whole number from 1 to 1024, got `0`"
        );
        let e = parse(&["--theta", "-1"]).unwrap_err();
        assert!(
            e.contains("--theta takes a number of at least 0, got `-1`"),
            "{e}"
        );
        assert!(parse(&["--rows", "1", "--rows", "2"]).is_err(), "one value");
    }

    #[test]
    fn help_says_what_an_option_takes_and_its_default() {
        let batch = help(&ordo::protocols::vll::BATCH_KNOB);
        assert!(
            batch.ends_with("Takes a whole number from 1 to 1024. [default: 4]"),
            "{batch}"
        );
        let theta = arguments()
            .into_iter()
            .find(|(o, _)| o.name == "theta")
            .unwrap();
        assert!(help(theta.0).contains("list is a sweep"));
        assert_eq!(theta.1, WORKLOAD_HEADING);
    }
}
