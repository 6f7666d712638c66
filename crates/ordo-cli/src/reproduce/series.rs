//! From measured rows to a check's outcome: the rows of one series (a line of `ordo report`'s
//! figures), reduced to (x, metric) points — x is the sweep value, or the thread count where the
//! run sweeps nothing; rows at one x (interleaved repeats) are averaged — then divided by the
//! `to` series where the check compares two, and decided by [`rule::decide`].

use super::catalogue::Check;
use super::rule::{self, Metric, Outcome};
use crate::report::figures::line_name;
use crate::report::input::Row;

/// One series' points, sorted by x.
pub fn series(rows: &[Row], name: &str, metric: &Metric, run: Option<&str>) -> Vec<(f64, f64)> {
    let mut sums: Vec<(f64, f64, usize)> = Vec::new();
    for row in rows {
        if line_name(row) != name || run.is_some_and(|r| row.run.as_deref() != Some(r)) {
            continue;
        }
        let x = row.sweep.as_ref().map_or(row.threads as f64, |s| s.value);
        let v = match metric {
            Metric::Throughput => row.committed_per_sec,
            Metric::Aborts => row.aborts_per_commit,
            Metric::AbortsOf(reason) => {
                let n = row
                    .aborts
                    .get(reason)
                    .and_then(|v| v.as_f64())
                    .unwrap_or(0.0);
                if row.committed == 0 {
                    f64::NAN
                } else {
                    n / row.committed as f64
                }
            }
        };
        match sums.iter_mut().find(|(sx, _, _)| *sx == x) {
            Some(s) => {
                s.1 += v;
                s.2 += 1;
            }
            None => sums.push((x, v, 1)),
        }
    }
    let mut points: Vec<(f64, f64)> = sums
        .into_iter()
        .map(|(x, s, n)| (x, s / n as f64))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// `of / to` at every x both have.
fn ratio(of: &[(f64, f64)], to: &[(f64, f64)]) -> Vec<(f64, f64)> {
    of.iter()
        .filter_map(|&(x, a)| to.iter().find(|(tx, _)| *tx == x).map(|&(_, b)| (x, a / b)))
        .collect()
}

/// Decides `check` over `rows`.
pub fn outcome(check: &Check, rows: &[Row]) -> Outcome {
    let run = check.run.as_deref();
    let of = series(rows, &check.of, &check.metric, run);
    let points = match &check.to {
        Some(to) => ratio(&of, &series(rows, to, &check.metric, run)),
        None => of,
    };
    rule::decide(
        &points,
        check.at,
        check.trend,
        &check.reproduced,
        check.shape.as_ref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::catalogue;
    use crate::reproduce::rule::Verdict;

    /// A row of `protocol` at sweep value `ci`, with `knobs`.
    fn row(protocol: &str, ci: f64, tput: f64, knobs: &str) -> String {
        format!(
            r#"{{"workload": "vll-micro", "protocol": "{protocol}", "threads": 2,
              "committed_per_sec": {tput}, "aborts_per_commit": 0.0, "committed": 1000,
              "aborts": {{"deadlock": 10}}, "run": "short",
              "sweep": {{"param": "ci", "value": {ci}}},
              "params": {{"workload": {{"ci": {ci}}}, "knobs": {{{knobs}}},
                          "seconds": 1.0, "warmup": 0.0, "reps": 1, "seed": 42}}}}"#
        )
    }

    fn rows(rows: &[String]) -> Vec<Row> {
        crate::report::input::parse(&format!("[{}]", rows.join(",")), "r.json").unwrap()
    }

    fn check(toml_text: &str) -> Check {
        #[derive(serde::Deserialize)]
        struct One {
            check: Check,
        }
        toml::from_str::<One>(toml_text).unwrap().check
    }

    #[test]
    fn a_ratio_is_taken_per_x_and_repeats_are_averaged() {
        let r = rows(&[
            row("nocc", 0.01, 100.0, ""),
            row("vll", 0.01, 80.0, ""),
            row("nocc", 0.01, 100.0, ""),
            row("vll", 0.01, 100.0, ""),
            row("nocc", 0.1, 100.0, ""),
            row("vll", 0.1, 50.0, ""),
        ]);
        assert_eq!(
            series(&r, "vll", &Metric::Throughput, None),
            [(0.01, 90.0), (0.1, 50.0)]
        );
        let c = check(
            r#"[check]
            claim = "VLL within 15% of no locking at low contention"
            paper = "0.9x"
            of = "vll"
            to = "nocc"
            at = "0.01"
            reproduced = ">= 0.85""#,
        );
        let o = outcome(&c, &r);
        assert_eq!((o.value, o.verdict), (Some(0.9), Verdict::Reproduced));
        let c = check(
            r#"[check]
            claim = "VLL's overhead grows with contention"
            paper = "falls"
            of = "vll"
            to = "nocc"
            trend = "falls"
            reproduced = ">= 2"
            shape = "> 1""#,
        );
        let o = outcome(&c, &r);
        assert_eq!((o.value, o.verdict), (Some(1.8), Verdict::ShapeOnly));
        // A run name no row has: nothing measured.
        let mut c = c;
        c.run = Some("long".into());
        assert_eq!(outcome(&c, &r).verdict, Verdict::NotReproduced);
    }

    #[test]
    fn series_with_knobs_and_abort_reasons() {
        let r = rows(&[
            row("dibs", 1.0, 10.0, r#""dibs-opt": "naive""#),
            row("dibs", 1.0, 40.0, r#""dibs-opt": "full""#),
        ]);
        // The default knob adds nothing to the name; another value does.
        assert_eq!(series(&r, "dibs", &Metric::Throughput, None), [(1.0, 40.0)]);
        assert_eq!(
            series(&r, "dibs dibs-opt=naive", &Metric::Throughput, None),
            [(1.0, 10.0)]
        );
        assert_eq!(
            series(&r, "dibs", &Metric::AbortsOf("deadlock".into()), None),
            [(1.0, 0.01)]
        );
    }

    #[test]
    fn every_catalogue_entry_names_what_exists() {
        let papers = catalogue::load().unwrap();
        assert!(!papers.is_empty());
        for e in papers.iter().flat_map(|p| &p.entries) {
            e.validate().unwrap();
        }
    }
}
