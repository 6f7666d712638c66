//! Salt's three microbenchmarks (Xie 2016, §3.6.3, Figs. 3.10–3.12), `-w salt-micro --variant V`.
//!
//! One table of integer records. Every writing transaction is BASE-ified the way the thesis does
//! it: **each update its own alkaline subtransaction** ([`Program::alkaline_starts`]), so `salt`
//! holds an exclusive (alkaline) lock only for one update and its commit, while `acid-2pl` (and
//! every other protocol, which ignores the boundaries) holds it to the end of the transaction.
//!
//! * `ratio` (Fig. 3.10, contention ratio): each transaction updates 5 distinct rows drawn from
//!   `--contended-rows N` (fewer rows, more contention).
//! * `position` (Fig. 3.11, contention position): each transaction updates 10 rows; exactly one
//!   of them is contended — one of 10 shared rows — and `--ops-after K` updates follow it; the other
//!   9 are drawn from the many cold rows. ACID falls as K grows (its exclusive lock on the shared
//!   row is held through K more updates); Salt should stay flat.
//! * `rw` (Fig. 3.12, read/write ratio): each transaction reads 5 rows or updates 5 rows of 100;
//!   `--read-only-pct P` of them read. Read-only transactions stay ACID.
//!
//! ```text
//!   position, --ops-after 3:   c  c  c  c  c  c  SHARED  c  c  c      (each update: +1)
//!   salt:     [alk][alk][alk]…[alk: SHARED]─saline…                   alkaline lock: one update
//!   acid-2pl: X(SHARED) ─────────────────────────── held to commit
//! ```
//!
//! Invariant ([`Workload::check`]): every writing transaction adds 1 to each of its rows, so the
//! sum of the values is a multiple of its updates per transaction (5, or 10 for `position`): a
//! lost update or a torn transaction breaks it.

pub mod options;

use crate::vll_micro::{load_records, sum_of_values, RECORDS, VALUE};
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{ColumnSet, Database, LoadError};
use ordo::txn::{Access, Program, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Rows a `ratio` or `rw` transaction touches.
pub const RATIO_OPS: usize = 5;
/// Rows a `position` transaction updates.
pub const POSITION_OPS: usize = 10;
/// The shared rows of `position` (keys `0..10`).
pub const SHARED_ROWS: u64 = 10;

/// Which microbenchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Ratio,
    Position,
    Rw,
}

impl Variant {
    /// The variant named `text`.
    pub fn parse(text: &str) -> Option<Variant> {
        Some(match text {
            "ratio" => Variant::Ratio,
            "position" => Variant::Position,
            "rw" => Variant::Rw,
            _ => return None,
        })
    }
}

/// Parameters (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SaltMicroConfig {
    pub variant: Variant,
    /// `ratio`: rows the 5 updates are drawn from; `rw`: rows (the thesis's 100); `position`: all
    /// rows, the 10 shared ones included.
    pub rows: u64,
    /// `position`: updates after the contended one (0 to 9).
    pub ops_after: u32,
    /// `rw`: percent of read-only transactions.
    pub read_only_pct: f64,
}

impl Default for SaltMicroConfig {
    fn default() -> Self {
        SaltMicroConfig {
            variant: Variant::Position,
            rows: 100_000,
            ops_after: 9,
            read_only_pct: 50.0,
        }
    }
}

impl SaltMicroConfig {
    /// Updates (or reads) per transaction.
    pub fn ops(&self) -> usize {
        match self.variant {
            Variant::Position => POSITION_OPS,
            _ => RATIO_OPS,
        }
    }

    pub fn validate(&self) -> crate::Result<()> {
        let least = match self.variant {
            Variant::Position => SHARED_ROWS + POSITION_OPS as u64,
            _ => RATIO_OPS as u64,
        };
        if self.rows < least {
            return Err(Error::invalid(
                "contended-rows",
                format!(
                    "({}) too small: at least {least} for this variant",
                    self.rows
                ),
            ));
        }
        if self.ops_after >= POSITION_OPS as u32 {
            return Err(Error::invalid(
                "ops-after",
                format!("must be between 0 and 9, got {}", self.ops_after),
            ));
        }
        Ok(())
    }
}

/// The microbenchmark.
pub struct SaltMicro {
    cfg: SaltMicroConfig,
}

impl SaltMicro {
    pub fn new(cfg: SaltMicroConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(SaltMicro { cfg })
    }
    pub fn config(&self) -> &SaltMicroConfig {
        &self.cfg
    }
}

/// A transaction: piece `i` reads or updates `keys[i]`; a writing one is BASE, one alkaline
/// subtransaction per update.
#[derive(Clone, Debug, Default)]
pub struct SaltMicroTxn {
    pub keys: Vec<u64>,
    pub write: bool,
}

impl Program for SaltMicroTxn {
    fn name(&self) -> &'static str {
        if self.write {
            "Update"
        } else {
            "Read"
        }
    }
    fn pieces(&self) -> usize {
        self.keys.len()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let v = ColumnSet::one(VALUE);
        out.push(if self.write {
            Access::update(RECORDS, self.keys[piece], v, v)
        } else {
            Access::read(RECORDS, self.keys[piece], v)
        });
    }
    fn depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn declaration_depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let k = self.keys[piece];
        if self.write {
            tx.update(RECORDS, k, ColumnSet::one(VALUE), |r| {
                r.set_int(VALUE, r.int(VALUE) + 1)
            })?;
        } else {
            tx.get(RECORDS, k, ColumnSet::one(VALUE))?;
        }
        Ok(())
    }
    /// BASE-ified as the thesis does: each update its own alkaline subtransaction.
    fn alkaline_starts(&self, out: &mut Vec<usize>) {
        if self.write {
            out.extend(1..self.keys.len());
        }
    }
}

/// Per-thread generator state.
pub struct SaltMicroGen {
    rng: SmallRng,
}

impl Workload for SaltMicro {
    type Program = SaltMicroTxn;
    type Gen = SaltMicroGen;

    fn name(&self) -> &'static str {
        "salt-micro"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        load_records(db, self.cfg.rows)
    }
    fn generator(&self, thread: u32, seed: u64) -> SaltMicroGen {
        SaltMicroGen {
            rng: SmallRng::seed_from_u64(
                seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        }
    }
    fn program(&self) -> SaltMicroTxn {
        SaltMicroTxn {
            keys: Vec::with_capacity(POSITION_OPS),
            write: true,
        }
    }
    fn next(&self, g: &mut SaltMicroGen, p: &mut SaltMicroTxn) {
        p.keys.clear();
        let c = &self.cfg;
        let distinct = |p: &mut SaltMicroTxn, g: &mut SaltMicroGen, n: usize, lo: u64| {
            while p.keys.len() < n {
                let k = g.rng.gen_range(lo..c.rows);
                if !p.keys.contains(&k) {
                    p.keys.push(k);
                }
            }
        };
        match c.variant {
            Variant::Ratio => {
                p.write = true;
                distinct(p, g, RATIO_OPS, 0);
            }
            Variant::Rw => {
                p.write = !g.rng.gen_bool(c.read_only_pct / 100.0);
                distinct(p, g, RATIO_OPS, 0);
            }
            Variant::Position => {
                p.write = true;
                distinct(p, g, POSITION_OPS - 1, SHARED_ROWS);
                let at = POSITION_OPS - 1 - c.ops_after as usize;
                p.keys.insert(at, g.rng.gen_range(0..SHARED_ROWS));
            }
        }
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let sum = sum_of_values(db, self.cfg.rows)?;
        let per = self.cfg.ops() as i64;
        if sum.rem_euclid(per) != 0 {
            return Err(format!(
                "sum of values {sum} is not a multiple of {per}: an update was lost or a \
                 transaction torn"
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(cfg: SaltMicroConfig) -> Vec<SaltMicroTxn> {
        let w = SaltMicro::new(cfg).unwrap();
        let mut g = w.generator(0, 1);
        (0..200)
            .map(|_| {
                let mut p = w.program();
                w.next(&mut g, &mut p);
                p
            })
            .collect()
    }

    #[test]
    fn position_puts_one_shared_row_with_k_updates_after_it() {
        for after in [0, 4, 9] {
            for p in draw(SaltMicroConfig {
                variant: Variant::Position,
                rows: 1_000,
                ops_after: after,
                ..SaltMicroConfig::default()
            }) {
                assert_eq!(p.keys.len(), POSITION_OPS);
                let shared: Vec<usize> = (0..POSITION_OPS)
                    .filter(|&i| p.keys[i] < SHARED_ROWS)
                    .collect();
                assert_eq!(shared, vec![POSITION_OPS - 1 - after as usize]);
                let mut s = Vec::new();
                p.alkaline_starts(&mut s);
                assert_eq!(s, (1..POSITION_OPS).collect::<Vec<_>>(), "one update each");
            }
        }
    }

    #[test]
    fn ratio_updates_five_distinct_rows_and_rw_mixes_acid_reads() {
        for p in draw(SaltMicroConfig {
            variant: Variant::Ratio,
            rows: 8,
            ..SaltMicroConfig::default()
        }) {
            let mut k = p.keys.clone();
            k.sort_unstable();
            k.dedup();
            assert_eq!((k.len(), p.write), (RATIO_OPS, true));
            assert!(k.iter().all(|&k| k < 8));
        }
        let txns = draw(SaltMicroConfig {
            variant: Variant::Rw,
            rows: 100,
            read_only_pct: 95.0,
            ..SaltMicroConfig::default()
        });
        let reads = txns.iter().filter(|p| !p.write).count();
        assert!((170..200).contains(&reads), "{reads} of 200 read-only");
        let read = txns.iter().find(|p| !p.write).unwrap();
        let mut s = Vec::new();
        read.alkaline_starts(&mut s);
        assert!(s.is_empty(), "read-only transactions stay ACID");
    }

    /// Under `salt` the writers run as BASE transactions (one recorded transaction per alkaline
    /// subtransaction), under `acid-2pl` as ACID ones; both keep the invariant, and neither shows
    /// a dirty write or read.
    #[test]
    fn salt_runs_the_writers_as_base_and_both_keep_the_invariant() {
        use ordo::check::AnomalyKind;
        use ordo::harness::{verify, VerifyConfig};
        use ordo::protocols::salt::{Acid2pl, SaltProtocol};
        use ordo::protocols::ProtocolConfig;
        for variant in [Variant::Ratio, Variant::Position, Variant::Rw] {
            let w = SaltMicro::new(options::defaults(variant, crate::Purpose::Verify)).unwrap();
            let cfg = VerifyConfig {
                protocol: ProtocolConfig {
                    lock_wait_timeout: std::time::Duration::from_millis(5),
                    ..ProtocolConfig::with_threads(4)
                },
                txns: 2_000,
                seed: 1,
                prefetch: true,
            };
            let salt = verify::run::<SaltProtocol, _>(&w, &cfg).unwrap();
            let acid = verify::run::<Acid2pl, _>(&w, &cfg).unwrap();
            for (name, v) in [("salt", &salt), ("acid-2pl", &acid)] {
                assert_eq!(v.invariants, Ok(()), "{name} {variant:?}");
                for k in [AnomalyKind::G0, AnomalyKind::G1a, AnomalyKind::G1c] {
                    assert!(!v.report.has(k), "{name} {variant:?}: {}", v.report);
                }
            }
            assert_eq!(acid.report.committed, 2_000, "{variant:?}");
            assert!(
                salt.report.committed > 2_000 * 2,
                "{variant:?}: alkaline subtransactions recorded apart ({})",
                salt.report.committed
            );
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        for cfg in [
            SaltMicroConfig {
                variant: Variant::Ratio,
                rows: 4,
                ..SaltMicroConfig::default()
            },
            SaltMicroConfig {
                ops_after: 10,
                ..SaltMicroConfig::default()
            },
            SaltMicroConfig {
                rows: 19,
                ..SaltMicroConfig::default()
            },
        ] {
            assert!(SaltMicro::new(cfg).is_err());
        }
    }
}
