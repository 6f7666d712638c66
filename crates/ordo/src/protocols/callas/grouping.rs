//! The grouping heuristic (§4.5.2): propose `--callas-groups` for a workload by profiling it
//! (`ordo analyze -w W --propose-groups`).
//!
//! The thesis: "To identify sources of contention, we use as a hint the latency of individual
//! operations. As the load on the system grows, the latency of highly contending operations tends
//! to increase disproportionately. The corresponding transactions are then our primary candidates
//! for optimization. If there are only few such transactions, our tool enumerates all possible
//! groupings; otherwise, it focuses on those that hold locks on contended items for long
//! intervals." Its tool iterates — run, profile, propose, chop, measure — until an iteration brings
//! no improvement. Here, in one bounded pass:
//!
//! 1. **Profile** ([`profile`]): the workload under the ACID baseline `acid-2pl` (with the knobs
//!    given: `--op-delay-us`, `--commit-delay-us`), a fixed number of transactions at low load (one
//!    worker) and at high load (`threads` workers); per transaction type its mean latency (retries
//!    included), its retries per commit, and whether it writes.
//! 2. **Candidates** ([`candidates`]): the types whose latency grew out of proportion — by at
//!    least [`DISPROPORTION`] times the growth of the least contended types (the lower quartile of
//!    every type's growth: what the load alone does) — among those that write (a
//!    read-only type at read committed holds no lock past its read: it waits on contended items but
//!    holds none for long) and ran at least [`MIN_SAMPLES`] times at both loads.
//! 3. **Groupings** ([`propose`]): with at most [`ENUMERATED`] candidates, every partition of them
//!    into groups (the rest of the types in the unpipelined group) runs under `callas` at high load,
//!    and the one of highest throughput wins (within [`TIE`] of the best: the one with fewer groups,
//!    then the earlier); with more, the [`ENUMERATED`] that held locks longest (mean latency at low
//!    load × growth) are enumerated, the others each in a group of its own. No candidate: every type
//!    in one group (`all`).
//!
//! Deterministic in what it picks as candidates up to timing noise; the measured step picks among
//! groupings by throughput, which is noisy when they are close.

use crate::harness::bench::open;
use crate::harness::Workload;
use crate::protocols::{with_protocol, Protocol, ProtocolConfig, ProtocolVisitor};
use crate::txn::{Access, Program};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// A type is a candidate when its latency grew at least this many times the base growth.
pub const DISPROPORTION: f64 = 2.0;
/// Runs a type needs at each load to be judged.
pub const MIN_SAMPLES: u64 = 5;
/// Candidates whose groupings are all tried (Bell(3) = 5 groupings).
pub const ENUMERATED: usize = 3;
/// Throughputs within this fraction of the best count as ties.
pub const TIE: f64 = 0.03;

/// One transaction type's numbers in one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeStats {
    pub committed: u64,
    /// Retryable aborts (each retried).
    pub retries: u64,
    /// Sum of committed latencies (retries included).
    pub latency: Duration,
    /// Some declared access of it writes.
    pub writes: bool,
}

impl TypeStats {
    /// Mean latency in microseconds.
    pub fn mean_us(&self) -> f64 {
        if self.committed == 0 {
            0.0
        } else {
            self.latency.as_secs_f64() * 1e6 / self.committed as f64
        }
    }
}

/// One run: per type, and the whole run's throughput.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub types: BTreeMap<&'static str, TypeStats>,
    pub elapsed: Duration,
}

impl Run {
    pub fn committed(&self) -> u64 {
        self.types.values().map(|t| t.committed).sum()
    }
    pub fn per_sec(&self) -> f64 {
        self.committed() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// How the profile runs.
#[derive(Clone, Debug)]
pub struct ProfileConfig {
    /// The knobs (and lock-wait timeout) every run opens its protocol with.
    pub protocol: ProtocolConfig,
    /// Workers at high load.
    pub threads: usize,
    /// Transactions per worker at high load; the low-load run has one worker doing as many as the
    /// high-load run's workers together, capped at 4× this.
    pub per_thread: u64,
    pub seed: u64,
}

/// Runs `per_thread` transactions on each of `threads` workers of `name`, per type.
pub fn measure<W: Workload>(
    name: &str,
    w: &W,
    cfg: &ProtocolConfig,
    threads: usize,
    per_thread: u64,
    seed: u64,
) -> Result<Run, String> {
    struct V<'a, W> {
        w: &'a W,
        cfg: ProtocolConfig,
        per_thread: u64,
        seed: u64,
    }
    impl<W: Workload> ProtocolVisitor for V<'_, W> {
        type Output = Result<Run, String>;
        fn visit<P: Protocol>(self) -> Self::Output {
            let (p, _) = open::<P, W>(self.w, &self.cfg).map_err(|e| e.to_string())?;
            let start = Instant::now();
            let mut run = Run::default();
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..self.cfg.threads)
                    .map(|t| {
                        let p = &p;
                        let w = self.w;
                        let (n, seed) = (self.per_thread, self.seed);
                        s.spawn(move || one_worker(p, w, t as u32, n, seed))
                    })
                    .collect();
                for h in handles {
                    for (k, v) in h.join().expect("a profiling worker panicked") {
                        let e = run.types.entry(k).or_default();
                        e.committed += v.committed;
                        e.retries += v.retries;
                        e.latency += v.latency;
                        e.writes |= v.writes;
                    }
                }
            });
            run.elapsed = start.elapsed();
            Ok(run)
        }
    }
    let cfg = ProtocolConfig {
        threads,
        ..cfg.clone()
    };
    with_protocol(
        name,
        V {
            w,
            cfg,
            per_thread,
            seed,
        },
    )
    .map_err(|e| e.to_string())?
}

fn one_worker<P: Protocol, W: Workload>(
    p: &P,
    w: &W,
    t: u32,
    n: u64,
    seed: u64,
) -> BTreeMap<&'static str, TypeStats> {
    let mut out: BTreeMap<&'static str, TypeStats> = BTreeMap::new();
    let mut worker = p.worker(t, false);
    let mut gen = w.generator(t, seed);
    let mut program = w.program();
    let mut decl: Vec<Access> = Vec::new();
    for i in 0..n {
        w.next(&mut gen, &mut program);
        let start = Instant::now();
        let mut retries = 0;
        let ok = loop {
            match p.execute(&mut worker, &mut program) {
                Ok(()) => break true,
                Err(a) if a.is_retryable() && retries < 1_000 => {
                    retries += 1;
                    // A short randomized backoff, as the benchmark's loop does.
                    let us = 10 + (i.wrapping_mul(2654435761) ^ retries) % (20 * retries.min(50));
                    std::thread::sleep(Duration::from_micros(us));
                }
                Err(_) => break false,
            }
        };
        let e = out.entry(program.name()).or_default();
        e.retries += retries;
        if ok {
            e.committed += 1;
            e.latency += start.elapsed();
        }
        if !e.writes {
            for piece in 0..program.pieces() {
                decl.clear();
                program.declare(piece, &mut decl);
                e.writes |= decl.iter().any(Access::is_write);
            }
        }
    }
    out
}

/// One type's profile: its numbers at low and high load.
#[derive(Clone, Debug)]
pub struct TypeProfile {
    pub name: &'static str,
    pub low: TypeStats,
    pub high: TypeStats,
}

impl TypeProfile {
    /// Mean latency at high load over mean latency at low load.
    pub fn growth(&self) -> f64 {
        let low = self.low.mean_us();
        if low <= 0.0 {
            0.0
        } else {
            self.high.mean_us() / low
        }
    }
    /// Retries per commit at high load.
    pub fn retry_rate(&self) -> f64 {
        self.high.retries as f64 / self.high.committed.max(1) as f64
    }
    fn judged(&self) -> bool {
        self.low.committed >= MIN_SAMPLES && self.high.committed >= MIN_SAMPLES
    }
}

/// Step 1: the profile of every type (see the module docs).
pub fn profile<W: Workload>(w: &W, cfg: &ProfileConfig) -> Result<Vec<TypeProfile>, String> {
    let total = cfg.per_thread * cfg.threads as u64;
    let low = measure(
        "acid-2pl",
        w,
        &cfg.protocol,
        1,
        total.min(4 * cfg.per_thread),
        cfg.seed,
    )?;
    let high = measure(
        "acid-2pl",
        w,
        &cfg.protocol,
        cfg.threads,
        cfg.per_thread,
        cfg.seed,
    )?;
    let mut names: Vec<&'static str> = low.types.keys().chain(high.types.keys()).copied().collect();
    names.sort();
    names.dedup();
    Ok(names
        .into_iter()
        .map(|name| {
            let mut low = low.types.get(name).cloned().unwrap_or_default();
            let high = high.types.get(name).cloned().unwrap_or_default();
            low.writes |= high.writes;
            TypeProfile {
                name,
                high: TypeStats {
                    writes: low.writes,
                    ..high
                },
                low,
            }
        })
        .collect())
}

/// The growth load alone causes: the lower quartile of the judged types' growth.
pub fn base_growth(types: &[TypeProfile]) -> f64 {
    let mut g: Vec<f64> = types
        .iter()
        .filter(|t| t.judged())
        .map(TypeProfile::growth)
        .collect();
    if g.is_empty() {
        return 0.0;
    }
    g.sort_by(f64::total_cmp);
    g[g.len() / 4]
}

/// Step 2: the types whose latency grew out of proportion and that write, by growth, highest
/// first.
pub fn candidates(types: &[TypeProfile]) -> Vec<&'static str> {
    let base = base_growth(types);
    let mut c: Vec<&TypeProfile> = types
        .iter()
        .filter(|t| t.judged() && t.low.writes && t.growth() >= DISPROPORTION * base)
        .collect();
    c.sort_by(|a, b| b.growth().total_cmp(&a.growth()));
    c.into_iter().map(|t| t.name).collect()
}

/// Every partition of `items` into groups, fewer groups first (each group in `items`' order).
pub fn partitions(items: &[&'static str]) -> Vec<Vec<Vec<&'static str>>> {
    fn go(
        items: &[&'static str],
        i: usize,
        cur: &mut Vec<Vec<&'static str>>,
        out: &mut Vec<Vec<Vec<&'static str>>>,
    ) {
        if i == items.len() {
            out.push(cur.clone());
            return;
        }
        for g in 0..cur.len() {
            cur[g].push(items[i]);
            go(items, i + 1, cur, out);
            cur[g].pop();
        }
        cur.push(vec![items[i]]);
        go(items, i + 1, cur, out);
        cur.pop();
    }
    let mut out = Vec::new();
    go(items, 0, &mut Vec::new(), &mut out);
    out.sort_by_key(|p| p.len());
    out
}

/// `--callas-groups`'s text for `groups`.
pub fn groups_text(groups: &[Vec<&'static str>]) -> String {
    if groups.is_empty() {
        return "all".into();
    }
    groups
        .iter()
        .map(|g| g.join(","))
        .collect::<Vec<_>>()
        .join("/")
}

/// What the heuristic proposes, and why.
#[derive(Clone, Debug)]
pub struct Proposal {
    pub types: Vec<TypeProfile>,
    pub candidates: Vec<&'static str>,
    /// Each grouping tried, with its throughput under `callas` (txn/s).
    pub tried: Vec<(String, f64)>,
    /// The proposal, as `--callas-groups` takes it.
    pub groups: String,
}

/// The groupings step 3 tries for `candidates` (see the module docs).
pub fn groupings(
    types: &[TypeProfile],
    candidates: &[&'static str],
) -> Vec<Vec<Vec<&'static str>>> {
    if candidates.is_empty() {
        return vec![Vec::new()];
    }
    let mut by_hold: Vec<&TypeProfile> = types
        .iter()
        .filter(|t| candidates.contains(&t.name))
        .collect();
    // "Those that hold locks on contended items for long intervals": longest low-load latency
    // (its lock hold time under 2PL) times its growth.
    by_hold
        .sort_by(|a, b| (b.low.mean_us() * b.growth()).total_cmp(&(a.low.mean_us() * a.growth())));
    let enumerated: Vec<&'static str> = by_hold.iter().take(ENUMERATED).map(|t| t.name).collect();
    let alone: Vec<Vec<&'static str>> = by_hold
        .iter()
        .skip(ENUMERATED)
        .map(|t| vec![t.name])
        .collect();
    let mut sorted = enumerated.clone();
    sorted.sort();
    partitions(&sorted)
        .into_iter()
        .map(|mut p| {
            p.extend(alone.iter().cloned());
            p
        })
        .collect()
}

/// Steps 1–3: profile `w`, pick the candidates, measure their groupings under `callas`.
pub fn propose<W: Workload>(w: &W, cfg: &ProfileConfig) -> Result<Proposal, String> {
    let types = profile(w, cfg)?;
    let candidates = candidates(&types);
    let options = groupings(&types, &candidates);
    let mut tried = Vec::new();
    if options.len() == 1 {
        tried.push((groups_text(&options[0]), f64::NAN));
    } else {
        for g in &options {
            let text = groups_text(g);
            let config = cfg
                .protocol
                .clone()
                .with_knob(&super::GROUPS_KNOB, &text)
                .map_err(|e| e.to_string())?;
            let run = measure("callas", w, &config, cfg.threads, cfg.per_thread, cfg.seed)?;
            tried.push((text, run.per_sec()));
        }
    }
    let best = tried
        .iter()
        .map(|t| t.1)
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::max);
    // Options are listed fewer groups first: the first within the tie margin wins.
    let groups = tried
        .iter()
        .find(|t| !t.1.is_finite() || t.1 >= best * (1.0 - TIE))
        .map(|t| t.0.clone())
        .unwrap_or_else(|| "all".into());
    Ok(Proposal {
        types,
        candidates,
        tried,
        groups,
    })
}

impl Proposal {
    /// The proposal and why, as `ordo analyze --propose-groups` prints it.
    pub fn report(&self) -> String {
        let mut out = String::new();
        let base = base_growth(&self.types);
        let _ = writeln!(
            out,
            "per type under acid-2pl (latency: mean, retries included; growth: high / low load; \
             base growth (lower quartile) {base:.2}, candidates: writers at ≥ {DISPROPORTION}× it)"
        );
        let _ = writeln!(
            out,
            "  {:<22} {:>6} {:>10} {:>10} {:>8} {:>10}",
            "type", "writes", "low µs", "high µs", "growth", "retry/txn"
        );
        for t in &self.types {
            let _ = writeln!(
                out,
                "  {:<22} {:>6} {:>10.0} {:>10.0} {:>8.2} {:>10.3}  {}",
                t.name,
                if t.low.writes { "yes" } else { "no" },
                t.low.mean_us(),
                t.high.mean_us(),
                t.growth(),
                t.retry_rate(),
                if self.candidates.contains(&t.name) {
                    "candidate"
                } else if !t.judged() {
                    "too few runs"
                } else {
                    ""
                }
            );
        }
        let _ = writeln!(out, "groupings tried under callas (txn/s):");
        for (g, x) in &self.tried {
            if x.is_finite() {
                let _ = writeln!(out, "  {x:>10.0}  {g}");
            } else {
                let _ = writeln!(out, "  {:>10}  {g} (the only one)", "-");
            }
        }
        let _ = writeln!(out, "proposed: --callas-groups {}", self.groups);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &'static str, writes: bool, low: f64, high: f64) -> TypeProfile {
        let stats = |us: f64| TypeStats {
            committed: 100,
            retries: 0,
            latency: Duration::from_secs_f64(us * 100.0 / 1e6),
            writes,
        };
        TypeProfile {
            name,
            low: stats(low),
            high: stats(high),
        }
    }

    #[test]
    fn candidates_are_writers_whose_latency_grew_out_of_proportion() {
        let types = [
            t("Hot", true, 100.0, 2_000.0),
            t("Warm", true, 100.0, 150.0),
            t("Reader", false, 100.0, 3_000.0),
            t("Cold", true, 100.0, 120.0),
            t("Other", false, 100.0, 110.0),
        ];
        assert_eq!(candidates(&types), ["Hot"]);
        let g = groupings(&types, &candidates(&types));
        assert_eq!(g, vec![vec![vec!["Hot"]]]);
        assert_eq!(groups_text(&g[0]), "Hot");
        assert_eq!(groupings(&types, &[]), vec![Vec::<Vec<&str>>::new()]);
        assert_eq!(groups_text(&[]), "all");
    }

    #[test]
    fn partitions_are_every_grouping_fewer_groups_first() {
        let p = partitions(&["A", "B", "C"]);
        assert_eq!(p.len(), 5, "Bell(3)");
        assert_eq!(p[0], vec![vec!["A", "B", "C"]]);
        assert_eq!(p[4], vec![vec!["A"], vec!["B"], vec!["C"]]);
        assert_eq!(partitions(&["A", "B", "C", "D"]).len(), 15);
    }

    #[test]
    fn with_many_candidates_the_longest_holders_are_enumerated_the_rest_alone() {
        let types = [
            t("A", true, 1_000.0, 10_000.0),
            t("B", true, 900.0, 9_000.0),
            t("C", true, 800.0, 8_000.0),
            t("D", true, 10.0, 100.0),
            t("E", false, 100.0, 100.0),
            t("F", false, 100.0, 100.0),
            t("G", false, 100.0, 100.0),
            t("H", false, 100.0, 100.0),
        ];
        let c = candidates(&types);
        assert_eq!(c.len(), 4);
        let g = groupings(&types, &c);
        assert_eq!(g.len(), 5);
        assert!(g.iter().all(|p| p.last() == Some(&vec!["D"])));
    }
}
