//! Verdicts: a check's rule applied to measured series, never typed in by hand.
//!
//! A check names a series (`of`, optionally over `to`), a metric, the x values it looks at and a
//! rule such as `>= 0.9`. Its measured value is the metric (or the ratio) at those x values — with
//! `at = "each"`, the worst of them against the rule — or, with a `trend`, the factor by which it
//! moved in the stated direction from the first x to the last, every step going that way or
//! staying within [`STEP_TOLERANCE`]. The verdict is *reproduced* when the `reproduced` rule holds,
//! *shape only* when only the weaker `shape` rule does, else *not reproduced*.

use serde::Deserialize;
use std::fmt;

/// `OP NUMBER`, or `between LOW and HIGH` (both included).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub struct Rule {
    pub op: Op,
    pub bound: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    AtLeast,
    AtMost,
    Above,
    Below,
    /// From `bound` up to this, both included: "comparable", "about 10% below".
    Between(f64),
}

impl TryFrom<String> for Rule {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let t = s.trim();
        if let Some(r) = t.strip_prefix("between ") {
            let bad = || format!("a range is `between LOW and HIGH` with LOW <= HIGH, got `{s}`");
            let (lo, hi) = r.split_once(" and ").ok_or_else(bad)?;
            return match (lo.trim().parse::<f64>(), hi.trim().parse::<f64>()) {
                (Ok(lo), Ok(hi)) if lo.is_finite() && hi.is_finite() && lo <= hi => Ok(Rule {
                    op: Op::Between(hi),
                    bound: lo,
                }),
                _ => Err(bad()),
            };
        }
        let (op, rest) = if let Some(r) = t.strip_prefix(">=") {
            (Op::AtLeast, r)
        } else if let Some(r) = t.strip_prefix("<=") {
            (Op::AtMost, r)
        } else if let Some(r) = t.strip_prefix('>') {
            (Op::Above, r)
        } else if let Some(r) = t.strip_prefix('<') {
            (Op::Below, r)
        } else {
            return Err(format!(
                "a rule is `OP NUMBER` with OP one of >= <= > <, got `{s}`"
            ));
        };
        match rest.trim().parse::<f64>() {
            Ok(bound) if bound.is_finite() => Ok(Rule { op, bound }),
            _ => Err(format!("a rule is `OP NUMBER`, got `{s}`")),
        }
    }
}

impl Rule {
    pub fn holds(&self, v: f64) -> bool {
        match self.op {
            Op::AtLeast => v >= self.bound,
            Op::AtMost => v <= self.bound,
            Op::Above => v > self.bound,
            Op::Below => v < self.bound,
            Op::Between(hi) => v >= self.bound && v <= hi,
        }
    }

    /// How far `v` is from meeting the rule (0 when it does): what "the worst point" and "the
    /// best point" rank by.
    fn miss(&self, v: f64) -> f64 {
        match self.op {
            Op::AtLeast | Op::Above => self.bound - v,
            Op::AtMost | Op::Below => v - self.bound,
            // Inside the range, nearer an end is worse.
            Op::Between(hi) => {
                let mid = (self.bound + hi) / 2.0;
                (v - mid).abs() - (hi - mid)
            }
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            Op::AtLeast => ">=",
            Op::AtMost => "<=",
            Op::Above => ">",
            Op::Below => "<",
            Op::Between(hi) => return write!(f, "between {} and {hi}", self.bound),
        };
        write!(f, "{op} {}", self.bound)
    }
}

/// What a check measures of a series.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub enum Metric {
    /// Committed transactions per second.
    #[default]
    Throughput,
    /// Aborts per commit, every reason.
    Aborts,
    /// Aborts of one reason per commit (`aborts:unsafe`).
    AbortsOf(String),
}

impl TryFrom<String> for Metric {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "throughput" => Ok(Metric::Throughput),
            "aborts" => Ok(Metric::Aborts),
            _ => match s.strip_prefix("aborts:") {
                Some(r) if !r.is_empty() => Ok(Metric::AbortsOf(r.to_string())),
                _ => Err(format!(
                    "a metric is throughput, aborts or aborts:REASON, got `{s}`"
                )),
            },
        }
    }
}

/// Which x values a check looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub enum At {
    #[default]
    Each,
    /// The x where the value comes nearest to meeting the rule: "up to 41%", "at its peak".
    Best,
    First,
    Last,
    X(f64),
}

impl TryFrom<String> for At {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "each" => Ok(At::Each),
            "best" => Ok(At::Best),
            "first" => Ok(At::First),
            "last" => Ok(At::Last),
            x => match x.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(At::X(v)),
                _ => Err(format!(
                    "`at` is each, best, first, last or an x value, got `{s}`"
                )),
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Trend {
    Falls,
    Rises,
}

/// How far a step of a trend may go the wrong way and still count as going the stated way.
pub const STEP_TOLERANCE: f64 = 0.10;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    NotReproduced,
    ShapeOnly,
    Reproduced,
}

impl Verdict {
    pub fn text(&self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::ShapeOnly => "shape only",
            Verdict::NotReproduced => "not reproduced",
        }
    }
}

/// A check's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The value the rule was applied to; `None` when no point was measured.
    pub value: Option<f64>,
    /// Every value it looked at, as (x, value) (for a trend: the series itself).
    pub points: Vec<(f64, f64)>,
    /// Why a trend that met its factor was not counted as reproduced, or why nothing was measured.
    pub note: Option<String>,
    pub verdict: Verdict,
}

/// Applies a check to a series already reduced to (x, value) points, sorted by x.
pub fn decide(
    series: &[(f64, f64)],
    at: At,
    trend: Option<Trend>,
    reproduced: &Rule,
    shape: Option<&Rule>,
) -> Outcome {
    let nothing = |why: &str| Outcome {
        value: None,
        points: series.to_vec(),
        note: Some(why.to_string()),
        verdict: Verdict::NotReproduced,
    };
    if series.is_empty() {
        return nothing("no point was measured");
    }
    let grade = |v: f64, steady: bool| {
        if reproduced.holds(v) && steady {
            Verdict::Reproduced
        } else if shape.is_some_and(|s| s.holds(v)) || reproduced.holds(v) {
            Verdict::ShapeOnly
        } else {
            Verdict::NotReproduced
        }
    };
    if let Some(t) = trend {
        if series.len() < 2 {
            return nothing("a trend needs two points or more");
        }
        let (first, last) = (series[0].1, series[series.len() - 1].1);
        let factor = match t {
            Trend::Falls => first / last,
            Trend::Rises => last / first,
        };
        if !factor.is_finite() {
            return nothing("a trend's end point is zero");
        }
        let against = series.windows(2).find(|w| {
            let (a, b) = (w[0].1, w[1].1);
            match t {
                Trend::Falls => b > a * (1.0 + STEP_TOLERANCE),
                Trend::Rises => b < a * (1.0 - STEP_TOLERANCE),
            }
        });
        let verdict = grade(factor, against.is_none());
        let note = against.filter(|_| reproduced.holds(factor)).map(|w| {
            format!(
                "the step from x = {} to {} goes the other way by more than {:.0}%",
                w[0].0,
                w[1].0,
                STEP_TOLERANCE * 100.0
            )
        });
        return Outcome {
            value: Some(factor),
            points: series.to_vec(),
            note,
            verdict,
        };
    }
    let looked: Vec<(f64, f64)> = match at {
        At::Each | At::Best => series.to_vec(),
        At::First => vec![series[0]],
        At::Last => vec![series[series.len() - 1]],
        At::X(x) => series
            .iter()
            .filter(|(px, _)| (px - x).abs() <= 1e-9 * x.abs().max(1.0))
            .copied()
            .collect(),
    };
    // The worst point against the rule (the best with `at = "best"`); a NaN counts as worst.
    let rank = |v: f64| {
        if v.is_nan() {
            f64::INFINITY
        } else {
            reproduced.miss(v)
        }
    };
    let worst = looked.iter().map(|p| p.1).reduce(|a, b| {
        let take_b = if at == At::Best {
            rank(b) < rank(a)
        } else {
            rank(b) > rank(a)
        };
        if take_b {
            b
        } else {
            a
        }
    });
    match worst {
        None => nothing("the run measured no point at that x"),
        Some(v) if !v.is_finite() => nothing("a ratio's denominator is zero"),
        Some(v) => Outcome {
            value: Some(v),
            points: looked,
            note: None,
            verdict: grade(v, true),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(s: &str) -> Rule {
        Rule::try_from(s.to_string()).unwrap()
    }

    #[test]
    fn rules_parse_and_refuse_what_is_not_one() {
        assert_eq!(
            rule(">= 0.9"),
            Rule {
                op: Op::AtLeast,
                bound: 0.9
            }
        );
        assert_eq!(rule("<2").op, Op::Below);
        assert_eq!(
            rule("between 0.9 and 1.1"),
            Rule {
                op: Op::Between(1.1),
                bound: 0.9
            }
        );
        assert_eq!(
            rule("between 0.9 and 1.1").to_string(),
            "between 0.9 and 1.1"
        );
        for bad in [
            "0.9",
            "=> 1",
            ">= x",
            ">= inf",
            "",
            "between 1",
            "between 2 and 1",
        ] {
            assert!(Rule::try_from(bad.to_string()).is_err(), "{bad}");
        }
        assert!(At::try_from("middle".to_string()).is_err());
        assert_eq!(At::try_from("0.01".to_string()), Ok(At::X(0.01)));
        assert_eq!(
            Metric::try_from("aborts:unsafe".to_string()),
            Ok(Metric::AbortsOf("unsafe".into()))
        );
        assert!(Metric::try_from("latency".to_string()).is_err());
    }

    #[test]
    fn a_level_check_takes_the_worst_point() {
        let ratios = [(1.0, 0.95), (2.0, 0.91), (4.0, 0.97)];
        let o = decide(
            &ratios,
            At::Each,
            None,
            &rule(">= 0.9"),
            Some(&rule(">= 0.8")),
        );
        assert_eq!(o.value, Some(0.91));
        assert_eq!(o.verdict, Verdict::Reproduced);
        // One point below the bar: shape only, decided by that point.
        let ratios = [(1.0, 0.95), (2.0, 0.85)];
        let o = decide(
            &ratios,
            At::Each,
            None,
            &rule(">= 0.9"),
            Some(&rule(">= 0.8")),
        );
        assert_eq!((o.value, o.verdict), (Some(0.85), Verdict::ShapeOnly));
        let o = decide(&ratios, At::Each, None, &rule(">= 0.9"), None);
        assert_eq!(o.verdict, Verdict::NotReproduced);
        // An upper bound takes the largest.
        let aborts = [(1.0, 0.001), (2.0, 0.03)];
        let o = decide(&aborts, At::Each, None, &rule("<= 0.02"), None);
        assert_eq!((o.value, o.verdict), (Some(0.03), Verdict::NotReproduced));
        // One x only.
        let o = decide(&aborts, At::X(1.0), None, &rule("<= 0.02"), None);
        assert_eq!((o.value, o.verdict), (Some(0.001), Verdict::Reproduced));
        let o = decide(&aborts, At::X(8.0), None, &rule("<= 0.02"), None);
        assert_eq!((o.value, o.verdict), (None, Verdict::NotReproduced));
        let o = decide(&aborts, At::Last, None, &rule("<= 0.02"), None);
        assert_eq!(o.value, Some(0.03));
        // "Up to 41%": the best point decides.
        let gains = [(0.01, 1.1), (0.1, 1.45), (1.0, 1.0)];
        let o = decide(&gains, At::Best, None, &rule(">= 1.41"), None);
        assert_eq!((o.value, o.verdict), (Some(1.45), Verdict::Reproduced));
        // A range: every point inside, the one nearest an end reported; one outside fails.
        let ratios = [(1.0, 0.95), (2.0, 1.08)];
        let o = decide(&ratios, At::Each, None, &rule("between 0.9 and 1.1"), None);
        assert_eq!((o.value, o.verdict), (Some(1.08), Verdict::Reproduced));
        let ratios = [(1.0, 0.95), (2.0, 1.2), (4.0, 0.85)];
        let o = decide(&ratios, At::Each, None, &rule("between 0.9 and 1.1"), None);
        assert_eq!((o.value, o.verdict), (Some(1.2), Verdict::NotReproduced));
    }

    #[test]
    fn a_trend_that_reproduces_and_ones_that_do_not() {
        // Locking falls ~6x as the hot record moves earlier: 6.0 / 1.0 = 6.
        let falling = [(0.0, 6.0), (1.0, 4.1), (2.0, 2.0), (3.0, 1.0)];
        let o = decide(
            &falling,
            At::Each,
            Some(Trend::Falls),
            &rule(">= 3"),
            Some(&rule("> 1")),
        );
        assert_eq!((o.value, o.verdict), (Some(6.0), Verdict::Reproduced));
        // The same factor with a step the wrong way: only the shape.
        let bumpy = [(0.0, 6.0), (1.0, 2.0), (2.0, 4.0), (3.0, 1.0)];
        let o = decide(
            &bumpy,
            At::Each,
            Some(Trend::Falls),
            &rule(">= 3"),
            Some(&rule("> 1")),
        );
        assert_eq!(o.verdict, Verdict::ShapeOnly);
        assert!(o.note.unwrap().contains("x = 1 to 2"));
        // Falls, but by less than the paper's factor: shape only; rising instead: not reproduced.
        let gentle = [(0.0, 2.0), (1.0, 1.0)];
        let o = decide(
            &gentle,
            At::Each,
            Some(Trend::Falls),
            &rule(">= 3"),
            Some(&rule("> 1")),
        );
        assert_eq!((o.value, o.verdict), (Some(2.0), Verdict::ShapeOnly));
        let o = decide(
            &gentle,
            At::Each,
            Some(Trend::Rises),
            &rule(">= 3"),
            Some(&rule("> 1")),
        );
        assert_eq!((o.value, o.verdict), (Some(0.5), Verdict::NotReproduced));
        // A step within the tolerance still counts as going the stated way.
        let flat_step = [(0.0, 3.0), (1.0, 3.2), (2.0, 1.0)];
        let o = decide(
            &flat_step,
            At::Each,
            Some(Trend::Falls),
            &rule(">= 3"),
            None,
        );
        assert_eq!(o.verdict, Verdict::Reproduced);
        let one = [(0.0, 3.0)];
        assert_eq!(
            decide(&one, At::Each, Some(Trend::Falls), &rule(">= 3"), None).verdict,
            Verdict::NotReproduced
        );
    }
}
