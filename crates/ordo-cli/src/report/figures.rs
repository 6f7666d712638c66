//! Grouping results into figures: one figure per workload configuration and x axis, one line per
//! protocol, as in the papers' plots.
//!
//! Rows without a sweep put their thread counts on the x axis; rows of a sweep put the swept
//! parameter there (one figure per thread count). Everything else — the workload's other
//! parameters, seconds, warm-up, repetitions, seed, prefetching, pinning, protocol knobs,
//! machine — must be equal for two rows to share a figure, and is shown beside it.

use super::input::Row;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// What the x axis shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Axis {
    Threads,
    /// A swept workload parameter, by its option name (`theta`, `hot-rows`, `warehouses`).
    Param(String),
}

impl Axis {
    /// The option name, as in file names.
    pub fn name(&self) -> &str {
        match self {
            Axis::Threads => "threads",
            Axis::Param(p) => p,
        }
    }

    /// The axis caption.
    pub fn label(&self) -> String {
        match self.name() {
            "threads" => "worker threads".into(),
            "theta" => "Zipfian skew θ".into(),
            "hot-rows" => "hot rows".into(),
            "read-ratio" => "fraction of reads".into(),
            "warehouses" => "warehouses".into(),
            "ci" => "contention index".into(),
            "base-ified" => "transaction types BASE-ified".into(),
            "multi-partition" => "% multi-partition transactions".into(),
            "shared-prefix" => "bits shared by a range's ends".into(),
            "delayed" => "fraction of transactions delayed".into(),
            other => other.replace(['-', '_'], " "),
        }
    }
}

/// One measured point of a line; several rows at the same point (from several files) are averaged.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub committed_per_sec: f64,
    pub aborts_per_commit: f64,
    /// How many rows were averaged.
    pub rows: usize,
}

/// One protocol's line.
#[derive(Clone, Debug)]
pub struct Line {
    pub protocol: String,
    /// Sorted by x.
    pub points: Vec<Point>,
}

/// One figure: what was fixed, and a line per protocol.
#[derive(Clone, Debug)]
pub struct Figure {
    pub workload: String,
    pub axis: Axis,
    /// Parameters shared by every point, as (name, value) in name order: the workload's own
    /// (prefixed `workload.`), then the run's.
    pub fixed: Vec<(String, String)>,
    /// Lines in the order their protocols first appear in the input.
    pub lines: Vec<Line>,
    /// The files its rows came from.
    pub sources: Vec<String>,
    /// Throughput is shown as a multiple of this protocol's at the same x ([`relative_to`]).
    pub relative: Option<String>,
}

/// Flattens nested objects into dotted names: `{"hot": {"rows": 10}}` → `hot.rows = 10`.
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&name, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// Whether a flattened parameter name is the swept option (`hot.rows` is `--hot-rows`).
fn is_param(name: &str, option: &str) -> bool {
    let norm = |s: &str| s.replace(['.', '-'], "_");
    norm(name) == norm(option)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// A row's line: its protocol, and the knobs it ran with that differ from their defaults — so
/// one figure holds DIBS's ablation steps (`dibs dibs-opt=grouping`) or VLL's batch sizes side by
/// side, and never averages them together; on a real engine, the merge group size above 1
/// (`dibs merge=8`).
pub fn line_name(row: &Row) -> String {
    let name = series_name(&row.protocol, &row.params.knobs(&row.protocol));
    match row.params.merge {
        Some(g) if g > 1 => format!("{name} merge={g}"),
        _ => name,
    }
}

/// A line's name: the protocol, then ` knob=value` for each knob in `knobs` (those that differ
/// from their defaults).
pub fn series_name(protocol: &str, knobs: &serde_json::Map<String, Value>) -> String {
    let mut name = protocol.to_string();
    for (k, v) in knobs {
        name.push_str(&format!(" {k}={}", text(v)));
    }
    name
}

/// What a row's figure holds fixed.
fn fixed(row: &Row, axis: &Axis) -> Vec<(String, String)> {
    let mut workload = BTreeMap::new();
    flatten("", &row.params.workload, &mut workload);
    if let Axis::Param(p) = axis {
        workload.retain(|name, _| !is_param(name, p));
    }
    let mut fixed: Vec<(String, String)> = workload
        .iter()
        .map(|(k, v)| (format!("workload.{k}"), text(v)))
        .collect();
    if *axis != Axis::Threads {
        fixed.push(("threads".into(), row.threads.to_string()));
    }
    let p = &row.params;
    let run = json!({
        "seconds": p.seconds,
        "warmup": p.warmup,
        "reps": p.reps,
        "seed": p.seed,
        "prefetch": p.prefetch,
        "pin": p.pin.unwrap_or(false),
    });
    let mut rest = BTreeMap::new();
    flatten("", &run, &mut rest);
    let mut machine = BTreeMap::new();
    flatten("", &row.machine, &mut machine);
    fixed.extend(rest.iter().map(|(k, v)| (k.clone(), text(v))));
    fixed.extend(
        machine
            .iter()
            .map(|(k, v)| (format!("machine.{k}"), text(v))),
    );
    fixed
}

/// Groups rows (in input order) into figures (in order of first appearance).
pub fn group(rows: &[Row]) -> Vec<Figure> {
    let mut figures: Vec<Figure> = Vec::new();
    for row in rows {
        let (axis, x) = match &row.sweep {
            Some(s) => (Axis::Param(s.param.clone()), s.value),
            None => (Axis::Threads, row.threads as f64),
        };
        let fixed = fixed(row, &axis);
        let i = match figures
            .iter()
            .position(|f| f.workload == row.workload && f.axis == axis && f.fixed == fixed)
        {
            Some(i) => i,
            None => {
                figures.push(Figure {
                    workload: row.workload.clone(),
                    axis,
                    fixed,
                    lines: Vec::new(),
                    sources: Vec::new(),
                    relative: None,
                });
                figures.len() - 1
            }
        };
        let f = &mut figures[i];
        if !f.sources.contains(&row.source) {
            f.sources.push(row.source.clone());
        }
        let name = line_name(row);
        let l = match f.lines.iter().position(|l| l.protocol == name) {
            Some(l) => l,
            None => {
                f.lines.push(Line {
                    protocol: name,
                    points: Vec::new(),
                });
                f.lines.len() - 1
            }
        };
        // Sums for now; divided by `rows` below.
        let points = &mut f.lines[l].points;
        match points.iter_mut().find(|p| p.x == x) {
            Some(p) => {
                p.committed_per_sec += row.committed_per_sec;
                p.aborts_per_commit += row.aborts_per_commit;
                p.rows += 1;
            }
            None => points.push(Point {
                x,
                committed_per_sec: row.committed_per_sec,
                aborts_per_commit: row.aborts_per_commit,
                rows: 1,
            }),
        }
    }
    for line in figures.iter_mut().flat_map(|f| &mut f.lines) {
        line.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        for p in &mut line.points {
            p.committed_per_sec /= p.rows as f64;
            p.aborts_per_commit /= p.rows as f64;
        }
    }
    figures
}

/// Shows throughput as a multiple of protocol `base`'s at the same x, in every figure that has a line
/// for `base` (others stay absolute); a point where `base` has no throughput is dropped. Returns how
/// many figures changed. This is how the papers state overheads ("VLL: 10.2% below no locking"), and
/// the fair way to read a run on a machine whose speed drifts: every point divides by a run of the
/// same invocation.
pub fn relative_to(figures: &mut [Figure], base: &str) -> usize {
    let mut changed = 0;
    for f in figures.iter_mut() {
        let Some(b) = f.lines.iter().find(|l| l.protocol == base) else {
            continue;
        };
        let of_base: Vec<(f64, f64)> = b
            .points
            .iter()
            .map(|p| (p.x, p.committed_per_sec))
            .collect();
        for line in &mut f.lines {
            line.points
                .retain_mut(|p| match of_base.iter().find(|(x, _)| *x == p.x) {
                    Some(&(_, t)) if t > 0.0 => {
                        p.committed_per_sec /= t;
                        true
                    }
                    _ => false,
                });
        }
        f.relative = Some(base.to_string());
        changed += 1;
    }
    changed
}

/// Every protocol in the figures, in order of first appearance (so each keeps one colour).
pub fn protocols(figures: &[Figure]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for l in figures.iter().flat_map(|f| &f.lines) {
        if !all.contains(&l.protocol) {
            all.push(l.protocol.clone());
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::super::input::parse;
    use super::*;

    /// A bench row as JSON.
    fn row(protocol: &str, threads: u64, sweep: Option<(&str, f64)>, tput: f64) -> String {
        let (sweep, workload) = match sweep {
            Some(("hot-rows", v)) => (
                format!(r#"{{"param": "hot-rows", "value": {v}}}"#),
                format!(r#"{{"rows": 1000, "theta": 0.6, "hot": {{"rows": {v}, "per_txn": 1}}}}"#),
            ),
            Some((p, v)) => (
                format!(r#"{{"param": "{p}", "value": {v}}}"#),
                format!(r#"{{"rows": 1000, "{p}": {v}, "hot": null}}"#),
            ),
            None => (
                "null".into(),
                r#"{"rows": 1000, "theta": 0.6, "hot": null}"#.into(),
            ),
        };
        format!(
            r#"{{"workload": "ycsb", "protocol": "{protocol}", "threads": {threads},
              "committed_per_sec": {tput}, "aborts_per_commit": 0.25, "sweep": {sweep},
              "params": {{"workload": {workload}, "seconds": 1.0, "warmup": 0.0, "reps": 1,
                          "seed": 42, "prefetch": true}},
              "machine": {{"cores": 2}}}}"#
        )
    }

    fn rows(rows: &[String]) -> Vec<Row> {
        parse(&format!("[{}]", rows.join(",")), "r.json").unwrap()
    }

    #[test]
    fn thread_counts_make_one_figure_with_a_line_per_protocol() {
        let figs = group(&rows(&[
            row("silo", 2, None, 20.0),
            row("silo", 1, None, 10.0),
            row("nocc", 1, None, 30.0),
        ]));
        assert_eq!(figs.len(), 1);
        let f = &figs[0];
        assert_eq!(f.axis, Axis::Threads);
        assert_eq!(f.lines.len(), 2);
        assert_eq!(f.lines[0].protocol, "silo", "first appearance first");
        let xs: Vec<f64> = f.lines[0].points.iter().map(|p| p.x).collect();
        assert_eq!(xs, [1.0, 2.0], "sorted by x");
        assert_eq!(f.lines[0].points[1].committed_per_sec, 20.0);
        assert!(f.fixed.contains(&("workload.theta".into(), "0.6".into())));
        assert!(!f.fixed.iter().any(|(k, _)| k == "threads"));
        assert_eq!(f.sources, ["r.json"]);
    }

    #[test]
    fn a_sweep_puts_its_parameter_on_the_x_axis_per_thread_count() {
        let figs = group(&rows(&[
            row("silo", 1, Some(("theta", 0.0)), 10.0),
            row("silo", 1, Some(("theta", 0.9)), 5.0),
            row("silo", 2, Some(("theta", 0.0)), 20.0),
            row("silo", 2, Some(("theta", 0.9)), 8.0),
        ]));
        assert_eq!(figs.len(), 2, "one figure per thread count");
        for (f, t) in figs.iter().zip(["1", "2"]) {
            assert_eq!(f.axis, Axis::Param("theta".into()));
            assert!(f.fixed.contains(&("threads".into(), t.into())));
            assert!(!f.fixed.iter().any(|(k, _)| k == "workload.theta"));
            assert_eq!(f.lines[0].points.len(), 2);
        }
        // A nested parameter (`hot.rows`) is matched by its option name (`hot-rows`).
        let figs = group(&rows(&[
            row("nocc", 1, Some(("hot-rows", 10.0)), 1.0),
            row("nocc", 1, Some(("hot-rows", 100.0)), 1.0),
        ]));
        assert_eq!(figs.len(), 1);
        assert!(figs[0]
            .fixed
            .contains(&("workload.hot.per_txn".into(), "1".into())));
        assert!(!figs[0].fixed.iter().any(|(k, _)| k == "workload.hot.rows"));
    }

    #[test]
    fn relative_throughput_divides_by_the_base_at_each_point() {
        let mut other = row("silo", 1, None, 10.0);
        other = other.replace(r#""seconds": 1.0"#, r#""seconds": 2.0"#);
        let mut figs = group(&rows(&[
            row("nocc", 1, Some(("theta", 0.0)), 40.0),
            row("silo", 1, Some(("theta", 0.0)), 30.0),
            row("nocc", 1, Some(("theta", 0.9)), 20.0),
            row("silo", 1, Some(("theta", 0.9)), 5.0),
            row("silo", 1, Some(("theta", 0.5)), 7.0),
            other,
        ]));
        assert_eq!(figs.len(), 2);
        assert_eq!(
            relative_to(&mut figs, "nocc"),
            1,
            "the figure without nocc stays absolute"
        );
        let f = &figs[0];
        assert_eq!(f.relative.as_deref(), Some("nocc"));
        let silo: Vec<(f64, f64)> = f.lines[1]
            .points
            .iter()
            .map(|p| (p.x, p.committed_per_sec))
            .collect();
        assert_eq!(
            silo,
            [(0.0, 0.75), (0.9, 0.25)],
            "θ = 0.5 has no nocc run: dropped"
        );
        assert!(f.lines[0].points.iter().all(|p| p.committed_per_sec == 1.0));
        assert_eq!(
            f.lines[1].points[0].aborts_per_commit, 0.25,
            "aborts untouched"
        );
        assert_eq!(figs[1].relative, None);
        assert_eq!(figs[1].lines[0].points[0].committed_per_sec, 10.0);
        assert_eq!(relative_to(&mut figs, "2pl-nowait"), 0);
    }

    #[test]
    fn different_settings_make_different_figures_and_repeats_are_averaged() {
        let mut other = row("silo", 1, None, 10.0);
        other = other.replace(r#""seconds": 1.0"#, r#""seconds": 2.0"#);
        let figs = group(&rows(&[
            row("silo", 1, None, 10.0),
            row("silo", 1, None, 30.0),
            other,
        ]));
        assert_eq!(figs.len(), 2);
        let p = &figs[0].lines[0].points[0];
        assert_eq!((p.committed_per_sec, p.rows), (20.0, 2));
        assert_eq!(protocols(&figs), ["silo"]);
        // A protocol knob names a line of its own: VLL with batches of 1 and of 4 are two lines of
        // one figure, never averaged together.
        let knob = |b: u32| {
            row("vll", 1, None, 10.0).replace(
                r#""prefetch": true"#,
                &format!(r#""prefetch": true, "vll_batch": {b}"#),
            )
        };
        let figs = group(&rows(&[knob(1), knob(4), knob(4)]));
        assert_eq!(figs.len(), 1);
        let names: Vec<&str> = figs[0].lines.iter().map(|l| l.protocol.as_str()).collect();
        assert_eq!(names, ["vll vll-batch=1", "vll"]);
        assert_eq!(figs[0].lines[1].points[0].rows, 2);
        // So is pinning; a file from before `--pin` existed did not pin.
        let pin = |p: bool| {
            row("vll", 1, None, 10.0).replace(
                r#""prefetch": true"#,
                &format!(r#""prefetch": true, "pin": {p}"#),
            )
        };
        let figs = group(&rows(&[pin(true), pin(false), row("vll", 1, None, 30.0)]));
        assert_eq!(figs.len(), 2);
        assert_eq!(figs[1].lines[0].points[0].rows, 2);
    }
}
