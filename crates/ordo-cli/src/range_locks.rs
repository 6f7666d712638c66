//! `ordo range-locks`: the VLL paper's Fig. 14 — VLLR (with and without SCA) against a standard
//! range lock manager and a hierarchical lock manager, in isolation: one thread, each transaction
//! locking one range, a varying fraction of them waiting a fixed delay with their lock held
//! ([`ordo::range_locks`]). One table (and one `ordo report` figure) per delay and contention
//! level, the fraction of delayed transactions on the x axis.
//!
//! ```text
//! ordo range-locks                          # Fig. 14a–d: 100 and 500 µs, 15 and 6 shared bits
//! ordo range-locks --delay-us 100 --shared-prefix 6 --delayed 0,0.5,1 --json r.json
//! ```

use crate::opts::{parse_list, split};
use crate::{Error, Result};
use ordo::range_locks::driver::{self, Config};
use ordo::range_locks::hierarchical::HierarchicalLocks;
use ordo::range_locks::standard::StandardRangeLocks;
use ordo::range_locks::vllr::VllrRangeLocks;
use ordo::range_locks::RangeLockManager;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The lock managers, by name.
const MANAGERS: [&str; 4] = ["vllr", "vllr-sca", "standard", "hierarchical"];

#[derive(clap::Args, Debug)]
pub struct RangeLocksArgs {
    /// Lock managers to compare: vllr, vllr-sca, standard, hierarchical.
    #[arg(
        short = 'm',
        long,
        default_value = "vllr,vllr-sca,standard,hierarchical"
    )]
    managers: String,
    /// Fractions of transactions that wait after their lock is granted, in [0, 1] (a list: the x
    /// axis).
    #[arg(long, default_value = "0,0.2,0.4,0.6,0.8,1")]
    delayed: String,
    /// How long a delayed transaction waits, holding its lock, in µs (a list: a table each; the
    /// paper's 100 and 500, its "ms" read as µs).
    #[arg(long, value_name = "US", default_value = "100,500")]
    delay_us: String,
    /// Leading bits the two ends of every range share at least (a list: a table each; the paper's
    /// low contention, 15 on average, and high contention, 6).
    #[arg(long, value_name = "BITS", default_value = "15,6")]
    shared_prefix: String,
    /// Bits in a key (1 to 56).
    #[arg(long, value_name = "BITS", default_value_t = 32)]
    key_bits: u8,
    /// New transactions are admitted only while fewer than this many wait for locks (1 to 1000000).
    #[arg(long, value_name = "N", default_value_t = ordo::protocols::vll::DEFAULT_BLOCKED_LIMIT)]
    blocked_limit: usize,
    /// Fraction of transactions that lock their range shared, in [0, 1] (the rest exclusive).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0)]
    shared: f64,
    /// Seconds per point (more than 0, at most 3600).
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Write the results as JSON rows for `ordo report`.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn manager(name: &str, key_bits: u8) -> Box<dyn RangeLockManager> {
    match name {
        "vllr" => Box::new(VllrRangeLocks::new(key_bits, false)),
        "vllr-sca" => Box::new(VllrRangeLocks::new(key_bits, true)),
        "standard" => Box::new(StandardRangeLocks::new()),
        _ => Box::new(HierarchicalLocks::new(key_bits)),
    }
}

/// The arguments, checked: managers, fractions delayed, delays (µs), shared-prefix bits.
type Plan<'a> = (Vec<&'a str>, Vec<f64>, Vec<f64>, Vec<f64>);

fn check(a: &RangeLocksArgs) -> Result<Plan<'_>> {
    let managers = split(&a.managers);
    if managers.is_empty() {
        return Err(Error::InvalidInput("no lock manager given".into()));
    }
    if let Some(m) = managers.iter().find(|m| !MANAGERS.contains(m)) {
        return Err(Error::InvalidInput(format!(
            "unknown lock manager `{m}`: expected one of {}",
            MANAGERS.join(", ")
        )));
    }
    if !(1..=56).contains(&a.key_bits) {
        return Err(Error::InvalidInput(format!(
            "--key-bits must be from 1 to 56, got {}",
            a.key_bits
        )));
    }
    let key_bits = a.key_bits as f64;
    let shared_prefix = parse_list(
        "shared-prefix",
        &a.shared_prefix,
        |x| x.fract() == 0.0 && (0.0..=56.0).contains(&x),
        "whole numbers of bits, at most --key-bits",
    )?;
    if let Some(s) = shared_prefix.iter().find(|&&s| s > key_bits) {
        return Err(Error::InvalidInput(format!(
            "--shared-prefix {s} is more than --key-bits {}",
            a.key_bits
        )));
    }
    let delayed = parse_list(
        "delayed",
        &a.delayed,
        |x| (0.0..=1.0).contains(&x),
        "fractions in [0, 1]",
    )?;
    let delays = parse_list(
        "delay-us",
        &a.delay_us,
        |x| (0.0..=1e6).contains(&x),
        "microseconds from 0 to 1000000",
    )?;
    if !(1..=1_000_000).contains(&a.blocked_limit) {
        return Err(Error::InvalidInput(format!(
            "--blocked-limit must be from 1 to 1000000, got {}",
            a.blocked_limit
        )));
    }
    if !(0.0..=1.0).contains(&a.shared) {
        return Err(Error::InvalidInput(format!(
            "--shared must be a fraction in [0, 1], got {}",
            a.shared
        )));
    }
    if !(a.seconds > 0.0 && a.seconds <= 3600.0) {
        return Err(Error::InvalidInput(format!(
            "--seconds must be more than 0 and at most 3600, got {}",
            a.seconds
        )));
    }
    Ok((managers, delayed, delays, shared_prefix))
}

pub fn run(a: RangeLocksArgs) -> Result<ExitCode> {
    let (managers, delayed, delays, shared_prefix) = check(&a)?;
    let out = a
        .json
        .as_deref()
        .map(crate::output::PendingFile::prepare)
        .transpose()?;
    let machine = crate::output::machine();
    let mut rows = Vec::new();
    for &delay_us in &delays {
        for &bits in &shared_prefix {
            let params = json!({
                "delay_us": delay_us,
                "shared_prefix": bits,
                "key_bits": a.key_bits,
                "blocked_limit": a.blocked_limit,
                "shared": a.shared,
            });
            println!("workload range-locks {params}");
            println!(
                "{:<12} {:>7} {:>12} {:>9} {:>9}",
                "manager", "delayed", "txn/s", "blocked/c", "picked/c"
            );
            for &m in &managers {
                for &f in &delayed {
                    let cfg = Config {
                        key_bits: a.key_bits,
                        shared_prefix: bits as u8,
                        delayed: f,
                        delay: Duration::from_secs_f64(delay_us / 1e6),
                        blocked_limit: a.blocked_limit,
                        shared: a.shared,
                        seconds: a.seconds,
                        seed: a.seed,
                    };
                    let mut lm = manager(m, a.key_bits);
                    let r = driver::run(lm.as_mut(), &cfg);
                    let per = |n: u64| n as f64 / r.committed.max(1) as f64;
                    println!(
                        "{:<12} {:>7} {:>12.0} {:>9.4} {:>9.4}",
                        m,
                        f,
                        r.per_sec(),
                        per(r.blocked),
                        per(r.picked)
                    );
                    rows.push(json!({
                        "workload": "range-locks",
                        "protocol": m,
                        "threads": 1,
                        "committed": r.committed,
                        "committed_per_sec": r.per_sec(),
                        "aborts_per_commit": 0.0,
                        "blocked": r.blocked,
                        "picked_by_sca": r.picked,
                        "elapsed_secs": r.elapsed.as_secs_f64(),
                        "sweep": {"param": "delayed", "value": f},
                        "params": {
                            "workload": params,
                            "seconds": a.seconds,
                            "warmup": 0.0,
                            "reps": 1,
                            "seed": a.seed,
                        },
                        "machine": machine,
                    }));
                }
            }
            println!();
        }
    }
    if let Some(f) = out {
        let text = serde_json::to_string_pretty(&rows).expect("rows are JSON");
        f.finish(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
