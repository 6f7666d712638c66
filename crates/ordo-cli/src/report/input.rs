//! Reading `ordo bench --json` files: the fields a report needs, checked, with one-line errors that
//! name the file.

use crate::{Error, Result};
use serde::Deserialize;
use std::path::Path;

/// One benchmark result: one (protocol, threads, sweep point) run.
#[derive(Clone, Debug, Deserialize)]
pub struct Row {
    pub workload: String,
    pub protocol: String,
    pub threads: u64,
    pub committed_per_sec: f64,
    pub aborts_per_commit: f64,
    /// The swept parameter and its value at this point; absent (older files) or null: no sweep.
    #[serde(default)]
    pub sweep: Option<Sweep>,
    pub params: RunParams,
    #[serde(default)]
    pub machine: serde_json::Value,
    /// Committed transactions (absent in hand-made files).
    #[serde(default)]
    pub committed: u64,
    /// Aborts by reason (absent in hand-made files).
    #[serde(default)]
    pub aborts: serde_json::Map<String, serde_json::Value>,
    /// The `ordo reproduce` run that made it, by name (absent from `ordo bench` files).
    #[serde(default)]
    pub run: Option<String>,
    /// The file it came from (set after reading).
    #[serde(skip)]
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Sweep {
    pub param: String,
    pub value: f64,
}

/// How the run was made (`params` in the JSON).
#[derive(Clone, Debug, Deserialize)]
pub struct RunParams {
    /// The workload's own parameters.
    pub workload: serde_json::Value,
    pub seconds: f64,
    pub warmup: f64,
    pub reps: u64,
    pub seed: u64,
    #[serde(default)]
    pub prefetch: Option<bool>,
    /// The protocol's knobs, by name (`{"vll-batch": 4}`; absent in older files, see
    /// [`RunParams::knobs`]).
    #[serde(default)]
    pub knobs: Option<serde_json::Map<String, serde_json::Value>>,
    /// Older files recorded the VLL family's knobs for every protocol under these names.
    #[serde(default)]
    pub vll_batch: Option<u64>,
    #[serde(default)]
    pub vll_blocked_limit: Option<u64>,
    /// `--vll-sca-bits` (absent in files older still, which used the paper's 819,200).
    #[serde(default)]
    pub vll_sca_bits: Option<u64>,
    /// Workers pinned to CPUs (`--pin`; absent in older files, which did not pin).
    #[serde(default)]
    pub pin: Option<bool>,
    /// Client transactions per engine transaction (`--backend … --merge`; absent elsewhere).
    #[serde(default)]
    pub merge: Option<u64>,
}

impl RunParams {
    /// The knobs `protocol` ran with that differ from their declared defaults, by name (what sets
    /// two runs of one protocol apart; a knob at its default says nothing a reader must be told).
    /// A file from before knobs were recorded per protocol has the VLL knobs for every row; they
    /// count only where `protocol` reads them, so that old and new files agree.
    pub fn knobs(&self, protocol: &str) -> serde_json::Map<String, serde_json::Value> {
        let recorded = match &self.knobs {
            Some(k) => k.clone(),
            None => {
                let old = [
                    (
                        &ordo::protocols::vll::BLOCKED_LIMIT_KNOB,
                        self.vll_blocked_limit,
                    ),
                    (&ordo::protocols::vll::BATCH_KNOB, self.vll_batch),
                    (&ordo::protocols::vll::SCA_BITS_KNOB, self.vll_sca_bits),
                ];
                old.iter()
                    .filter_map(|(spec, v)| v.map(|v| (spec.name.to_string(), v.into())))
                    .collect()
            }
        };
        non_default(protocol, recorded)
    }
}

/// The knobs of `recorded` that `protocol` reads and that differ from their declared defaults.
pub fn non_default(
    protocol: &str,
    recorded: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    let declared = ordo::protocols::info(protocol).map_or(&[][..], |i| i.knobs);
    recorded
        .into_iter()
        .filter(|(name, value)| {
            declared.iter().any(|spec| {
                spec.name == name && ordo::options::Settings::new().to_json(&[spec])[name] != *value
            })
        })
        .collect()
}

/// Reads one file of rows; every error is one line naming the file.
pub fn read(path: &Path) -> Result<Vec<Row>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        file: name.clone(),
        source,
    })?;
    parse(&text, &name)
}

/// Parses and checks the JSON text of one file (`name` labels errors and rows).
pub fn parse(text: &str, name: &str) -> Result<Vec<Row>> {
    let invalid = |why: String| Error::InvalidData {
        file: name.to_string(),
        why,
    };
    let mut rows: Vec<Row> = serde_json::from_str(text).map_err(|e| {
        invalid(format!(
            "not an `ordo bench --json` file: {}",
            e.to_string().replace('\n', " ")
        ))
    })?;
    if rows.is_empty() {
        return Err(invalid("no benchmark results in it".into()));
    }
    for (i, r) in rows.iter_mut().enumerate() {
        let bad = |what: &str| invalid(format!("result {}: {what}", i + 1));
        if !(r.committed_per_sec.is_finite() && r.committed_per_sec >= 0.0) {
            return Err(bad("committed_per_sec is not a non-negative number"));
        }
        if !(r.aborts_per_commit.is_finite() && r.aborts_per_commit >= 0.0) {
            return Err(bad("aborts_per_commit is not a non-negative number"));
        }
        if r.protocol.is_empty() || r.workload.is_empty() {
            return Err(bad("empty protocol or workload name"));
        }
        if let Some(s) = &r.sweep {
            if s.param.is_empty() || !s.value.is_finite() {
                return Err(bad("sweep needs a parameter name and a finite value"));
            }
        }
        r.source = name.to_string();
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"{"workload": "ycsb", "protocol": "silo", "threads": 2,
        "committed_per_sec": 1000.0, "aborts_per_commit": 0.5,
        "sweep": {"param": "theta", "value": 0.9},
        "params": {"workload": {"theta": 0.9}, "seconds": 1.0, "warmup": 0.0, "reps": 1, "seed": 42},
        "machine": {"cores": 2}}"#;

    fn error(text: &str) -> String {
        match parse(text, "f.json") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{text} parsed"),
        }
    }

    #[test]
    fn reads_a_bench_row() {
        let rows = parse(&format!("[{ROW}]"), "f.json").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].protocol, "silo");
        assert_eq!(rows[0].sweep.as_ref().unwrap().value, 0.9);
        assert_eq!(rows[0].source, "f.json");
        // Files written before sweeps existed have no `sweep` field.
        let old = ROW.replace(r#""sweep": {"param": "theta", "value": 0.9},"#, "");
        assert!(parse(&format!("[{old}]"), "f.json").unwrap()[0]
            .sweep
            .is_none());
    }

    #[test]
    fn malformed_input_is_one_line_naming_the_file() {
        for text in [
            "",
            "{",
            "{}",
            "[]",
            "[1]",
            &format!("[{}]", ROW.replace("\"protocol\": \"silo\",", "")),
            &format!("[{}]", ROW.replace("1000.0", "-1.0")),
        ] {
            let e = error(text);
            assert!(e.starts_with("f.json: "), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        assert!(
            error(&format!("[{}]", ROW.replace("\"protocol\": \"silo\",", "")))
                .contains("protocol")
        );
    }
}
