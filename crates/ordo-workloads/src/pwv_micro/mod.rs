//! The PWV paper's write-visibility micro-benchmark (Faleiro, Abadi, Hellerstein 2017, §2.3, Fig. 1).
//!
//! One table of `records` records (the paper's 1,000,000), one integer value each. Every
//! transaction makes **10 read-modify-writes** (value + 1): one of them on the **hot record** — the
//! same record, the middle key ([`PwvMicroConfig::hot_key`]), for every transaction, so every pair
//! of transactions conflicts — and the other 9 on distinct records drawn uniformly from the rest.
//!
//! **Program order is key order.** The updates before the hot one are drawn below the hot key and
//! those after it above, each side in ascending order, so a transaction's updates go up the key
//! order. A protocol that locks in key order as it runs (the paper's Locking, `2pl-ordered`: "the
//! locking algorithm acquires an exclusive lock on a record prior to updating the record", §2.3)
//! then takes the hot lock exactly where the program updates the hot record, and RC's commit-time
//! write locks, "acquired in the same order", also hold it for the updates after it. Were the hot
//! record the smallest key, every ordered protocol would lock it first whatever its position.
//!
//! The **write visibility delay** is the paper's x axis: the number of updates a transaction makes
//! *after* its hot update ([`PwvMicroConfig::hot_position`], `--hot-position N`, 0 to 9). At 0 the
//! hot record is updated last, and a protocol that hides writes until the transaction ends (2PL
//! holds its lock, OCC buffers the write) hides it only for the commit; at 9 it is updated first
//! and stays hidden while the 9 other updates run — locking falls about 6× there in the paper,
//! while PWV, which makes each write visible as soon as it is done (no piece can abort), should not.
//!
//! ```text
//!   piece:          0    1    2    3    4    5    6    7    8    9
//!   hot-position 9  HOT  c    c    c    c    c    c    c    c    c     hot first: longest delay
//!   hot-position 0  c    c    c    c    c    c    c    c    c    HOT   hot last: no delay
//! ```
//!
//! Each update is one piece, in program order, declared up front ([`Access::update`] of its key).
//! No piece needs another's result and every key is an input: [`Program::depends_on`] and
//! [`Program::declaration_depends_on`] are empty, and there is no commit point, so PWV may run the
//! pieces of a transaction in any order and make each write visible at once.
//!
//! Invariant ([`Workload::check`]): every committed transaction adds 1 to the hot record and 10 to
//! the sum of the values, so the sum is exactly 10 × the hot record's value (the number of committed
//! transactions); a lost update on the hot record or a torn transaction breaks it.

pub mod options;

use crate::vll_micro::{load_records, sum_of_values, RECORDS, VALUE};
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{ColumnSet, Database, LoadError};
use ordo::txn::{Access, Program, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// Read-modify-writes per transaction.
pub const UPDATES: usize = 10;
/// The largest `--hot-position`: the hot record first, 9 updates after it.
pub const MAX_HOT_POSITION: u32 = UPDATES as u32 - 1;
/// The fewest records: 9 distinct cold ones must fit on either side of the hot one.
pub const MIN_RECORDS: u64 = 2 * UPDATES as u64;

/// Micro-benchmark parameters (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PwvMicroConfig {
    /// Records in the table (the hot one is the middle key, `records / 2`).
    pub records: u64,
    /// Updates each transaction makes after its hot one: 0 (hot last) to 9 (hot first).
    pub hot_position: u32,
}

impl Default for PwvMicroConfig {
    fn default() -> Self {
        PwvMicroConfig {
            records: 1_000_000,
            hot_position: MAX_HOT_POSITION,
        }
    }
}

impl PwvMicroConfig {
    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if self.records < MIN_RECORDS {
            return Err(Error::invalid(
                "records",
                format!(
                    "({}) too small: each transaction updates the hot record and {} others, up to \
                     {} on either side of it (at least {MIN_RECORDS})",
                    self.records,
                    UPDATES - 1,
                    UPDATES - 1
                ),
            ));
        }
        if self.hot_position > MAX_HOT_POSITION {
            return Err(Error::invalid(
                "hot-position",
                format!(
                    "must be between 0 and {MAX_HOT_POSITION}, got {}",
                    self.hot_position
                ),
            ));
        }
        Ok(())
    }

    /// The piece that updates the hot record.
    pub fn hot_piece(&self) -> usize {
        MAX_HOT_POSITION as usize - self.hot_position as usize
    }

    /// The hot record every transaction updates: the middle key, so that up to 9 updates fit on
    /// either side of it in key order.
    pub fn hot_key(&self) -> u64 {
        self.records / 2
    }
}

/// The micro-benchmark.
pub struct PwvMicro {
    cfg: PwvMicroConfig,
}

impl PwvMicro {
    pub fn new(cfg: PwvMicroConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(PwvMicro { cfg })
    }
    pub fn config(&self) -> &PwvMicroConfig {
        &self.cfg
    }
}

/// A transaction: read-modify-write 10 records, piece `i` the `i`-th of `keys`.
#[derive(Clone, Debug, Default)]
pub struct PwvMicroTxn {
    /// The records, in program order (the hot one among them).
    pub keys: Vec<u64>,
}

impl Program for PwvMicroTxn {
    fn name(&self) -> &'static str {
        "pwv-micro"
    }
    fn pieces(&self) -> usize {
        self.keys.len()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let v = ColumnSet::one(VALUE);
        out.push(Access::update(RECORDS, self.keys[piece], v, v));
    }
    /// No data edges: an update needs nothing another piece found.
    fn depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    /// Every key is an input: no reconnaissance.
    fn declaration_depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    /// Every piece is an increment whose old value the transaction never sees: any two commute
    /// (read by `ic3-comm`).
    fn commutes(&self, _piece: usize) -> bool {
        true
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        tx.update(RECORDS, self.keys[piece], ColumnSet::one(VALUE), |r| {
            r.set_int(VALUE, r.int(VALUE) + 1)
        })?;
        Ok(())
    }
}

/// Per-thread generator state.
pub struct PwvMicroGen {
    rng: SmallRng,
}

impl Workload for PwvMicro {
    type Program = PwvMicroTxn;
    type Gen = PwvMicroGen;

    fn name(&self) -> &'static str {
        "pwv-micro"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        load_records(db, self.cfg.records)
    }
    fn generator(&self, thread: u32, seed: u64) -> PwvMicroGen {
        PwvMicroGen {
            rng: SmallRng::seed_from_u64(
                seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        }
    }
    fn program(&self) -> PwvMicroTxn {
        PwvMicroTxn {
            keys: Vec::with_capacity(UPDATES),
        }
    }
    fn next(&self, g: &mut PwvMicroGen, p: &mut PwvMicroTxn) {
        p.keys.clear();
        let (hot, key) = (self.cfg.hot_piece(), self.cfg.hot_key());
        // Below the hot key, then the hot key, then above it; each side ascending.
        let mut draw = |p: &mut PwvMicroTxn, n: usize, range: std::ops::Range<u64>| {
            let from = p.keys.len();
            while p.keys.len() < from + n {
                let k = g.rng.gen_range(range.clone());
                if !p.keys[from..].contains(&k) {
                    p.keys.push(k);
                }
            }
            p.keys[from..].sort_unstable();
        };
        draw(p, hot, 0..key);
        p.keys.push(key);
        draw(p, UPDATES - 1 - hot, key + 1..self.cfg.records);
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let sum = sum_of_values(db, self.cfg.records)?;
        let mut buf = Vec::new();
        let hot = crate::inspect::int(db, RECORDS, self.cfg.hot_key(), VALUE, &mut buf)
            .ok_or("the hot record is missing")?;
        if sum != hot.wrapping_mul(UPDATES as i64) {
            return Err(format!(
                "sum of values {sum} is not {UPDATES} × the hot record's {hot}: an update was lost \
                 or a transaction torn"
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
