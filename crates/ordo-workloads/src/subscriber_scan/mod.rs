//! SubscriberScan (Gaffney, Claus, Patel, PVLDB 14(9) 2021, §4.1): the benchmark DIBS's authors
//! built to load a predicate lock manager with **disjunctive predicates**.
//!
//! TATP's `subscriber` table (its schema; 100,000 rows by default, keys `s_id` 1..=N), and two
//! transaction types, 80% / 20%, each one request whose rows are named by a predicate over the
//! `byte2_x` columns (integers in 0..=255):
//!
//! ```text
//!   WHERE (byte2_1 BETWEEN a1 AND a1+15 OR byte2_1 BETWEEN b1 AND b1+15)
//!     AND (byte2_2 BETWEEN a2 AND a2+15 OR byte2_2 BETWEEN b2 AND b2+15)
//!     AND …                                    (--conjuncts of them, 1 to 8)
//! ```
//!
//! * **Read** (80%): `SELECT *` of the rows satisfying it ([`ordo::txn::Tx::scan_where`]).
//! * **Update** (20%): `UPDATE subscriber SET vlr_location = ?` on them
//!   ([`ordo::txn::Tx::update_where`]).
//!
//! Each `BETWEEN` is 16 wide, its low end uniform in 0..=240 (the paper: "16-wide and randomly
//! chosen from the interval [0, 255]"). The predicate's DNF has 2^conjuncts disjuncts: what makes
//! naive predicate locking (§2.1) slow past about 4 conjuncts, and what conjunct grouping (§2.2.1)
//! avoids — the paper's Fig. 3c (6 conjuncts, threads) and Fig. 4 (conjuncts). More conjuncts
//! also select fewer rows (each conjunct keeps about 1 row in 8).
//!
//! Every protocol runs it: a protocol without predicate locks protects the request as a scan of
//! the whole table. A declaration names the whole table: a read as a scan of every key, an update
//! as an update of every key (the rows it writes are found only by running it).
//!
//! Invariant ([`Workload::check`]): the `byte2_x` columns — which no transaction writes — still
//! hold their loaded values in every row, and no row was lost.

pub mod options;

use crate::tatp::{Tatp, BYTE2_1, SUBSCRIBER, VLR_LOCATION};
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{ColumnSet, Database, LoadError, TableId, TableSpec};
use ordo::txn::predicate::{Expr, Predicate};
use ordo::txn::{Access, AccessKind, Program, Target, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// The most conjuncts (the paper's range, and the `byte2_x` columns a predicate may use: 10).
pub const MAX_CONJUNCTS: u32 = 8;
/// Width of each `BETWEEN` interval.
pub const WIDTH: i64 = 16;
/// Percent of transactions that read.
pub const READ_PERCENT: u32 = 80;

/// SubscriberScan parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubscriberScanConfig {
    /// Rows of `subscriber` (the paper's 100,000).
    pub subscribers: u64,
    /// Conjuncts per predicate, 1 to 8.
    pub conjuncts: u32,
}

impl Default for SubscriberScanConfig {
    fn default() -> Self {
        SubscriberScanConfig {
            subscribers: 100_000,
            conjuncts: 6,
        }
    }
}

impl SubscriberScanConfig {
    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if self.subscribers == 0 || self.subscribers > crate::tatp::MAX_SUBSCRIBERS {
            return Err(Error::invalid(
                "subscribers",
                format!(
                    "must be between 1 and {}, got {}",
                    crate::tatp::MAX_SUBSCRIBERS,
                    self.subscribers
                ),
            ));
        }
        if !(1..=MAX_CONJUNCTS).contains(&self.conjuncts) {
            return Err(Error::invalid(
                "conjuncts",
                format!(
                    "must be between 1 and {MAX_CONJUNCTS}, got {}",
                    self.conjuncts
                ),
            ));
        }
        Ok(())
    }
}

/// The loaded value of `byte2_{i+1}` of subscriber `s_id`: a hash, so the check can recompute it.
pub fn byte2(s_id: u64, i: usize) -> i64 {
    let mut z = s_id
        .wrapping_mul(16)
        .wrapping_add(i as u64)
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) & 0xFF) as i64
}

/// The workload.
pub struct SubscriberScan {
    cfg: SubscriberScanConfig,
}

impl SubscriberScan {
    pub fn new(cfg: SubscriberScanConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(SubscriberScan { cfg })
    }
    pub fn config(&self) -> &SubscriberScanConfig {
        &self.cfg
    }
}

/// One transaction: a read or an update of the rows satisfying `predicate`.
#[derive(Clone, Debug)]
pub struct SubscriberScanTxn {
    pub update: bool,
    pub predicate: Predicate,
    /// The update's new `vlr_location`.
    pub vlr: i64,
    /// Rows the last run read or updated.
    pub rows: u64,
}

impl Program for SubscriberScanTxn {
    fn name(&self) -> &'static str {
        if self.update {
            "UpdateLocationWhere"
        } else {
            "ReadWhere"
        }
    }
    fn pieces(&self) -> usize {
        1
    }
    fn declare(&self, _: usize, out: &mut Vec<Access>) {
        let cols = ColumnSet(self.predicate.columns());
        if self.update {
            out.push(Access {
                table: SUBSCRIBER,
                target: Target::Range {
                    lo: 0,
                    hi: u64::MAX,
                },
                read: cols.union(ColumnSet::one(VLR_LOCATION)),
                write: ColumnSet::one(VLR_LOCATION),
                kind: AccessKind::Update,
            });
        } else {
            out.push(Access::scan(SUBSCRIBER, 0, u64::MAX, ColumnSet::ALL));
        }
    }
    fn run_piece<T: Tx>(&mut self, _: usize, tx: &mut T) -> TxResult<()> {
        self.rows = 0;
        if self.update {
            let vlr = self.vlr;
            self.rows = tx.update_where(
                SUBSCRIBER,
                &self.predicate,
                ColumnSet::one(VLR_LOCATION),
                |r| r.set_int(VLR_LOCATION, vlr),
            )?;
        } else {
            let rows = &mut self.rows;
            tx.scan_where(SUBSCRIBER, &self.predicate, ColumnSet::ALL, |_, _| {
                *rows += 1;
                true
            })?;
        }
        Ok(())
    }
}

/// Per-thread generator state.
pub struct SubscriberScanGen {
    rng: SmallRng,
}

impl SubscriberScan {
    /// A predicate of the configured number of conjuncts, drawn from `rng`.
    pub fn predicate(&self, rng: &mut SmallRng) -> Predicate {
        let conjunct = |i: usize, rng: &mut SmallRng| {
            let col = (BYTE2_1 + i) as u16;
            let mut between = || {
                let lo = rng.gen_range(0..=255 - (WIDTH - 1));
                Expr::between(col, lo, lo + WIDTH - 1)
            };
            Expr::or(vec![between(), between()])
        };
        match self.cfg.conjuncts {
            1 => conjunct(0, rng),
            n => Expr::and((0..n as usize).map(|i| conjunct(i, rng)).collect()),
        }
    }
}

impl Workload for SubscriberScan {
    type Program = SubscriberScanTxn;
    type Gen = SubscriberScanGen;

    fn name(&self) -> &'static str {
        "subscriber-scan"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let [schema, ..] = Tatp::schemas();
        let t = db.create_table(
            TableSpec::new("subscriber", schema)
                .ordered(0)
                .capacity(self.cfg.subscribers as usize),
        )?;
        debug_assert_eq!(t, SUBSCRIBER as TableId);
        let mut rng = SmallRng::seed_from_u64(0x5C4A);
        let mut scratch = Vec::new();
        let table = db.table(SUBSCRIBER);
        for s_id in 1..=self.cfg.subscribers {
            table.load(s_id, &mut scratch, |r| {
                r.set_str(crate::tatp::SUB_NBR, &crate::tatp::sub_nbr(s_id))?;
                for i in 0..10 {
                    r.set_int(crate::tatp::BIT_1 + i, rng.gen_range(0..=1));
                    r.set_int(crate::tatp::HEX_1 + i, rng.gen_range(0..=15));
                    r.set_int(BYTE2_1 + i, byte2(s_id, i));
                }
                r.set_int(
                    crate::tatp::MSC_LOCATION,
                    rng.gen_range(1..=u32::MAX as i64),
                );
                r.set_int(VLR_LOCATION, rng.gen_range(1..=u32::MAX as i64));
                Ok(())
            })?;
        }
        Ok(())
    }
    fn generator(&self, thread: u32, seed: u64) -> SubscriberScanGen {
        SubscriberScanGen {
            rng: SmallRng::seed_from_u64(
                seed ^ (thread as u64 + 1).wrapping_mul(0xA076_1D64_78BD_642F),
            ),
        }
    }
    fn program(&self) -> SubscriberScanTxn {
        SubscriberScanTxn {
            update: false,
            predicate: Expr::True,
            vlr: 0,
            rows: 0,
        }
    }
    fn next(&self, g: &mut SubscriberScanGen, p: &mut SubscriberScanTxn) {
        p.update = g.rng.gen_range(0..100) >= READ_PERCENT;
        p.predicate = self.predicate(&mut g.rng);
        p.vlr = g.rng.gen_range(1..=u32::MAX as i64);
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let mut buf = Vec::new();
        for s_id in 1..=self.cfg.subscribers {
            for i in 0..10 {
                let Some(v) = crate::inspect::int(db, SUBSCRIBER, s_id, BYTE2_1 + i, &mut buf)
                else {
                    return Err(format!("subscriber {s_id} is missing").into());
                };
                if v != byte2(s_id, i) {
                    return Err(format!(
                        "subscriber {s_id}: byte2_{} is {v}, loaded as {}; no transaction writes it",
                        i + 1,
                        byte2(s_id, i)
                    )
                    .into());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
