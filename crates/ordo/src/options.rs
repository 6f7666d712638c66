//! Options declared beside what they configure: a protocol's knobs and a workload's parameters.
//!
//! A protocol or a workload lists its options as [`OptionSpec`]s next to its own code; everything
//! generic — the command line's flags and help, the check of each value, a sweep over a list, the JSON
//! `params` a result records, `ordo list` — is derived from those declarations, so adding a knob or a
//! workload parameter touches one place.
//!
//! ```text
//!   OptionSpec { name: "vll-batch", kind: Int { min: 1, max: 1024 }, default: Some("4"), … }
//!        │  declared by the protocol (ProtocolInfo::knobs) or the workload (its catalogue entry)
//!        ▼
//!   --vll-batch 8   ──parse──▶  Settings { "vll-batch" → [Int(8)] }  ──▶ ProtocolConfig::knobs
//!   --theta 0,0.9   ──parse──▶  Settings { "theta" → [Float(0), Float(0.9)] } ──sweep──▶ two points
//! ```
//!
//! Values are checked against their [`ValueKind`] when parsed (a number in range, one value unless the
//! option sweeps); rules that involve several options (`--hot-rows` with `--hot-per-txn`) are the
//! declaring code's to check when it builds itself from [`Settings`].

use std::fmt;

/// The values an option takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueKind {
    /// Present or not (`--rmw`).
    Flag,
    /// A whole number in `min..=max`.
    Int { min: u64, max: u64 },
    /// A finite number in `min..=max`.
    Float { min: f64, max: f64 },
    /// Text the declaring code parses itself (`--mix no=45,p=43,…`).
    Text,
    /// One of a fixed list of names (`--dibs-opt grouping`), checked when parsed; read as text.
    Choice(&'static [&'static str]),
}

/// What the kind takes, in words: `a whole number from 1 to 1024`, `a number of at least 0`
/// (a range open above, up to `u64::MAX` or infinity, says so).
impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ValueKind::Flag => write!(f, "no value"),
            ValueKind::Text => write!(f, "text"),
            ValueKind::Choice(names) => write!(f, "one of {}", names.join(", ")),
            ValueKind::Int { min, max: u64::MAX } => write!(f, "a whole number of at least {min}"),
            ValueKind::Int { min, max } => write!(f, "a whole number from {min} to {max}"),
            ValueKind::Float { min, max } if max == f64::INFINITY => {
                write!(f, "a number of at least {min}")
            }
            ValueKind::Float { min, max } => write!(f, "a number from {min} to {max}"),
        }
    }
}

/// One option: its flag name (without `--`), what it takes and what it means.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptionSpec {
    /// The flag, without the dashes (`theta` is `--theta`).
    pub name: &'static str,
    /// The value's placeholder in the help (`N`, `BITS`, `MICROS`).
    pub value_name: &'static str,
    /// One or two sentences of help, starting with who reads it (`YCSB: …`, `vll, vll-sca: …`).
    pub help: &'static str,
    pub kind: ValueKind,
    /// Whether a comma-separated list is a sweep (`ordo bench` runs one point per value).
    pub sweep: bool,
    /// The value when the option is not given, as it would be typed. Protocol knobs have one; a
    /// workload's parameters usually have none, since their defaults depend on what the workload
    /// is built for (a benchmark or a small, contended verification run).
    pub default: Option<&'static str>,
}

impl OptionSpec {
    /// An option taking one value of `kind`, with no default and no sweep.
    pub const fn new(
        name: &'static str,
        value_name: &'static str,
        kind: ValueKind,
        help: &'static str,
    ) -> Self {
        OptionSpec {
            name,
            value_name,
            help,
            kind,
            sweep: false,
            default: None,
        }
    }

    /// A flag (present or not).
    pub const fn flag(name: &'static str, help: &'static str) -> Self {
        OptionSpec::new(name, "", ValueKind::Flag, help)
    }

    /// The same option, whose comma-separated lists are sweeps.
    pub const fn sweeps(mut self) -> Self {
        self.sweep = true;
        self
    }

    /// The same option, with a default value (as typed on the command line).
    pub const fn default(mut self, value: &'static str) -> Self {
        self.default = Some(value);
        self
    }

    /// Parses `text` as this option's value(s): one value, or, for an option that sweeps, a
    /// comma-separated list of distinct values. A flag takes no text (`""`).
    pub fn parse(&self, text: &str) -> Result<Vec<Value>, OptionError> {
        if self.kind == ValueKind::Flag {
            return Ok(vec![Value::Flag]);
        }
        if !self.sweep || self.kind == ValueKind::Text {
            return Ok(vec![self.parse_one(text.trim())?]);
        }
        let mut values: Vec<Value> = Vec::new();
        for item in text.split(',') {
            let v = self.parse_one(item.trim())?;
            if values.contains(&v) {
                return Err(self.error(format!("lists {v} twice")));
            }
            values.push(v);
        }
        Ok(values)
    }

    fn parse_one(&self, text: &str) -> Result<Value, OptionError> {
        match self.kind {
            ValueKind::Flag => Ok(Value::Flag),
            ValueKind::Text => Ok(Value::Text(text.to_string())),
            ValueKind::Choice(names) if names.contains(&text) => Ok(Value::Text(text.to_string())),
            ValueKind::Choice(_) => Err(self.error(format!("takes {}, got `{text}`", self.kind))),
            ValueKind::Int { min, max } => match text.parse::<u64>() {
                Ok(v) if (min..=max).contains(&v) => Ok(Value::Int(v)),
                _ => Err(self.error(format!("takes {}, got `{text}`", self.kind))),
            },
            ValueKind::Float { min, max } => match text.parse::<f64>() {
                Ok(v) if v.is_finite() && (min..=max).contains(&v) => Ok(Value::Float(v)),
                _ => Err(self.error(format!("takes {}, got `{text}`", self.kind))),
            },
        }
    }

    /// An error about this option: `--name <why>`.
    pub fn error(&self, why: impl fmt::Display) -> OptionError {
        OptionError(format!("--{} {why}", self.name))
    }

    /// The default, parsed (a declaration whose default does not parse is a bug).
    fn default_value(&self) -> Option<Value> {
        self.default.map(|d| {
            self.parse_one(d)
                .unwrap_or_else(|e| panic!("the declared default of --{}: {e}", self.name))
        })
    }
}

/// One parsed value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Flag,
    Int(u64),
    Float(f64),
    Text(String),
}

impl Value {
    /// As JSON (`params`): a flag is `true`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Flag => serde_json::Value::Bool(true),
            Value::Int(v) => serde_json::json!(v),
            Value::Float(v) => serde_json::json!(v),
            Value::Text(s) => serde_json::json!(s),
        }
    }
}

impl Value {
    /// The value as a number; `None` for a flag or a text that is not a finite number (a choice
    /// of `0`, `1`, … or `raw` reads `2` as 2). What a sweep point records as its `"value"` (a
    /// whole number too, as a float).
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::Float(v) => Some(*v),
            Value::Text(t) => t.parse::<f64>().ok().filter(|v| v.is_finite()),
            Value::Flag => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Flag => write!(f, "true"),
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Text(s) => write!(f, "{s}"),
        }
    }
}

/// A value that is not what its option takes, or options that do not go together.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OptionError(pub String);

/// The options given, each with its value(s), in the order given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    given: Vec<(OptionSpec, Vec<Value>)>,
}

/// One point of a sweep: the swept option and its value there.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub param: &'static str,
    pub value: Value,
}

impl fmt::Display for SweepPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.param, self.value)
    }
}

impl Settings {
    /// No option given.
    pub fn new() -> Self {
        Settings::default()
    }

    /// Records `spec` with `values` (replacing an earlier value of the same option).
    pub fn set(&mut self, spec: &OptionSpec, values: Vec<Value>) {
        match self.given.iter_mut().find(|(s, _)| s.name == spec.name) {
            Some(e) => e.1 = values,
            None => self.given.push((*spec, values)),
        }
    }

    /// [`OptionSpec::parse`]s `text` and records it.
    pub fn parse(&mut self, spec: &OptionSpec, text: &str) -> Result<(), OptionError> {
        let values = spec.parse(text)?;
        self.set(spec, values);
        Ok(())
    }

    /// With `spec` set to `text` (tests and callers that build settings by hand).
    pub fn with(mut self, spec: &OptionSpec, text: &str) -> Result<Self, OptionError> {
        self.parse(spec, text)?;
        Ok(self)
    }

    /// The options given, in order.
    pub fn given(&self) -> impl Iterator<Item = (&OptionSpec, &[Value])> {
        self.given.iter().map(|(s, v)| (s, v.as_slice()))
    }

    /// Whether `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.given.iter().any(|(s, _)| s.name == name)
    }

    /// The one value given for `spec`, or its default; `None` if neither. A list (several values) is
    /// an error here: only a sweep runs one.
    pub fn value(&self, spec: &OptionSpec) -> Result<Option<Value>, OptionError> {
        match self.given.iter().find(|(s, _)| s.name == spec.name) {
            None => Ok(spec.default_value()),
            Some((_, values)) => match values.as_slice() {
                [v] => Ok(Some(v.clone())),
                many => Err(spec.error(format!(
                    "lists {} values: a run takes one (a list describes a sweep, which `ordo bench` runs)",
                    many.len()
                ))),
            },
        }
    }

    /// Whether the flag `spec` was given.
    pub fn flag(&self, spec: &OptionSpec) -> bool {
        self.has(spec.name)
    }

    /// The whole number given for `spec` (or its default).
    pub fn int(&self, spec: &OptionSpec) -> Result<Option<u64>, OptionError> {
        Ok(match self.value(spec)? {
            Some(Value::Int(v)) => Some(v),
            None => None,
            Some(other) => return Err(spec.error(format!("is not a whole number: {other}"))),
        })
    }

    /// The whole number given for `spec` (or its default), as a `T` such as `usize` or `u16` (a
    /// declaration's range should fit `T`; a value that does not is an error all the same).
    pub fn int_as<T: TryFrom<u64>>(&self, spec: &OptionSpec) -> Result<Option<T>, OptionError> {
        self.int(spec)?
            .map(|v| T::try_from(v).map_err(|_| spec.error(format!("{v} is out of range"))))
            .transpose()
    }

    /// The number given for `spec` (or its default); a whole number reads as one too.
    pub fn float(&self, spec: &OptionSpec) -> Result<Option<f64>, OptionError> {
        Ok(match self.value(spec)? {
            Some(Value::Float(v)) => Some(v),
            Some(Value::Int(v)) => Some(v as f64),
            None => None,
            Some(other) => return Err(spec.error(format!("is not a number: {other}"))),
        })
    }

    /// The text given for `spec` (or its default).
    pub fn text(&self, spec: &OptionSpec) -> Result<Option<String>, OptionError> {
        Ok(self.value(spec)?.map(|v| v.to_string()))
    }

    /// The whole number of a knob with a declared default (given or not, it has a value).
    pub fn int_or_default(&self, spec: &OptionSpec) -> Result<u64, OptionError> {
        self.int(spec)?
            .ok_or_else(|| spec.error("has no value and no default"))
    }

    /// The points of a sweep over the one option given as a list, each with that option's one value
    /// and every other option as given; one point (`None`) when no option lists several values.
    pub fn sweep(&self) -> Result<Vec<(Option<SweepPoint>, Settings)>, OptionError> {
        let lists: Vec<&(OptionSpec, Vec<Value>)> =
            self.given.iter().filter(|(_, v)| v.len() > 1).collect();
        match lists.as_slice() {
            [] => Ok(vec![(None, self.clone())]),
            [(spec, values)] => Ok(values
                .iter()
                .map(|v| {
                    let mut one = self.clone();
                    one.set(spec, vec![v.clone()]);
                    let point = SweepPoint {
                        param: spec.name,
                        value: v.clone(),
                    };
                    (Some(point), one)
                })
                .collect()),
            many => Err(OptionError(format!(
                "a sweep varies one option at a time, but --{} each list several values",
                many.iter()
                    .map(|(s, _)| s.name)
                    .collect::<Vec<_>>()
                    .join(" and --")
            ))),
        }
    }

    /// `specs` with their values here (given, else default; options with neither left out), as a
    /// JSON object keyed by option name: what a result records of how it was configured.
    pub fn to_json(&self, specs: &[&OptionSpec]) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        for spec in specs {
            let value = match self.given.iter().find(|(s, _)| s.name == spec.name) {
                Some((_, values)) if values.len() == 1 => Some(values[0].to_json()),
                Some((_, values)) => Some(serde_json::Value::Array(
                    values.iter().map(Value::to_json).collect(),
                )),
                None => spec.default_value().map(|v| v.to_json()),
            };
            if let Some(v) = value {
                map.insert(spec.name.to_string(), v);
            }
        }
        serde_json::Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THETA: OptionSpec = OptionSpec::new(
        "theta",
        "θ",
        ValueKind::Float {
            min: 0.0,
            max: 10.0,
        },
        "skew",
    )
    .sweeps();
    const ROWS: OptionSpec =
        OptionSpec::new("rows", "N", ValueKind::Int { min: 1, max: 1000 }, "rows");
    const BATCH: OptionSpec =
        OptionSpec::new("batch", "N", ValueKind::Int { min: 1, max: 64 }, "batch").default("4");
    const RMW: OptionSpec = OptionSpec::flag("rmw", "read-modify-write");
    const MIX: OptionSpec = OptionSpec::new("mix", "MIX", ValueKind::Text, "mix").sweeps();

    #[test]
    fn values_are_checked_against_their_kind() {
        assert_eq!(ROWS.parse("10"), Ok(vec![Value::Int(10)]));
        for bad in ["0", "1001", "-1", "x", "1.5", ""] {
            let e = ROWS.parse(bad).unwrap_err().0;
            assert!(
                e.starts_with("--rows takes a whole number from 1 to 1000"),
                "{e}"
            );
        }
        assert_eq!(THETA.parse("0.9"), Ok(vec![Value::Float(0.9)]));
        for bad in ["nan", "inf", "-0.1", "11", "a"] {
            assert!(THETA.parse(bad).is_err(), "{bad}");
        }
        assert!(
            ROWS.parse("1,2").is_err(),
            "an option that does not sweep takes one value"
        );
        assert_eq!(
            MIX.parse("no=50,p=50"),
            Ok(vec![Value::Text("no=50,p=50".into())]),
            "text keeps its commas"
        );
        assert_eq!(RMW.parse(""), Ok(vec![Value::Flag]));
        // A range open above says so instead of naming u64::MAX or infinity.
        let open = OptionSpec::new(
            "n",
            "N",
            ValueKind::Int {
                min: 1,
                max: u64::MAX,
            },
            "n",
        );
        assert_eq!(
            open.parse("0").unwrap_err().0,
            "--n takes a whole number of at least 1, got `0`"
        );
        let skew = OptionSpec::new(
            "skew",
            "S",
            ValueKind::Float {
                min: 0.0,
                max: f64::INFINITY,
            },
            "skew",
        );
        assert_eq!(
            skew.parse("-1").unwrap_err().0,
            "--skew takes a number of at least 0, got `-1`"
        );
        assert!(skew.parse("inf").is_err(), "values are finite");
        assert_eq!(Value::Int(4).number(), Some(4.0));
        assert_eq!(Value::Text("a".into()).number(), None);
        assert_eq!(Value::Text("2".into()).number(), Some(2.0));
        assert_eq!(Value::Text("inf".into()).number(), None);
    }

    #[test]
    fn a_choice_takes_one_of_its_names() {
        const STEP: OptionSpec =
            OptionSpec::new("step", "STEP", ValueKind::Choice(&["a", "b"]), "step").default("b");
        assert_eq!(STEP.parse(" a ").unwrap(), vec![Value::Text("a".into())]);
        assert_eq!(
            STEP.parse("c").unwrap_err().0,
            "--step takes one of a, b, got `c`"
        );
        assert_eq!(Settings::new().text(&STEP), Ok(Some("b".into())));
    }

    #[test]
    fn a_list_sweeps_its_option_in_order_keeping_the_others() {
        let s = Settings::new()
            .with(&THETA, "0, 0.6,0.99")
            .unwrap()
            .with(&ROWS, "100")
            .unwrap();
        let points = s.sweep().unwrap();
        let labels: Vec<String> = points
            .iter()
            .map(|(p, _)| p.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(labels, ["theta=0", "theta=0.6", "theta=0.99"]);
        for ((_, one), theta) in points.iter().zip([0.0, 0.6, 0.99]) {
            assert_eq!(one.float(&THETA), Ok(Some(theta)));
            assert_eq!(one.int(&ROWS), Ok(Some(100)));
        }
        assert!(
            s.float(&THETA)
                .unwrap_err()
                .0
                .contains("a list describes a sweep"),
            "a list is not one run"
        );
        let one = Settings::new().with(&THETA, "0.9").unwrap();
        assert_eq!(one.sweep().unwrap(), vec![(None, one.clone())]);
    }

    #[test]
    fn sweeping_two_options_or_repeating_a_value_is_an_error() {
        let two = Settings::new()
            .with(&THETA, "0,1")
            .unwrap()
            .with(&MIX, "a")
            .unwrap();
        assert_eq!(two.sweep().unwrap().len(), 2, "text is one value");
        let mut both = two.clone();
        both.set(&ROWS, vec![Value::Int(1), Value::Int(2)]);
        let e = both.sweep().unwrap_err().0;
        assert!(
            e.contains("one option at a time") && e.contains("--theta and --rows"),
            "{e}"
        );
        let e = THETA.parse("0.9,0.9").unwrap_err().0;
        assert_eq!(e, "--theta lists 0.9 twice");
    }

    #[test]
    fn defaults_fill_in_and_are_recorded() {
        let none = Settings::new();
        assert_eq!(none.int(&BATCH), Ok(Some(4)));
        assert_eq!(none.int_or_default(&BATCH), Ok(4));
        assert_eq!(none.int(&ROWS), Ok(None));
        assert_eq!(none.int_as::<u8>(&BATCH), Ok(Some(4u8)));
        let big = Settings::new().with(&ROWS, "1000").unwrap();
        assert!(big
            .int_as::<u8>(&ROWS)
            .unwrap_err()
            .0
            .contains("out of range"));
        assert!(none.int_or_default(&ROWS).is_err());
        assert!(!none.flag(&RMW));
        let given = Settings::new()
            .with(&BATCH, "8")
            .unwrap()
            .with(&RMW, "")
            .unwrap();
        assert_eq!(given.int(&BATCH), Ok(Some(8)));
        assert!(given.flag(&RMW));
        assert_eq!(
            given.to_json(&[&BATCH, &ROWS, &RMW]),
            serde_json::json!({"batch": 8, "rmw": true})
        );
        assert_eq!(none.to_json(&[&BATCH]), serde_json::json!({"batch": 4}));
    }
}
