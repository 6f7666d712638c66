//! sibench, the SSI thesis's microbenchmark for snapshot isolation (Cahill 2009, §5.2 and §6.3).
//!
//! One table `sitest(id, value)` of `items` rows (the thesis's I ∈ {10, 100, 1000}) and two transactions:
//!
//! * the **query** `SELECT id FROM sitest ORDER BY value ASC LIMIT 1` — it must look at every row: one
//!   piece, a [`Tx::scan`] over the whole key range, declared as that range (so locking protocols lock
//!   the range, next-key included, and SSI takes SIREAD locks on every row);
//! * the **update** `UPDATE sitest SET value = value + 1 WHERE id = :id`, `id` uniform: one
//!   read-modify-write piece.
//!
//! They are drawn in a `queries : updates` ratio (the thesis runs 1:1 and 10:1). The static dependency
//! graph has a single rw edge (query → update), so there is no write skew: under SI, SSI and S2PL no
//! transaction should need to roll back except for write-write conflicts between updates, whose rate
//! falls as I grows while the query's cost grows with I.
//!
//! **Invariants** ([`SiBench::check`]): all I rows exist, and the values (all 0 after loading) sum to the
//! number of committed updates, which a [`Ledger`] tallies — a lost update breaks it.

pub mod options;

use crate::inspect;
use crate::ledger::{Entry, Ledger};
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{
    Column, ColumnSet, ColumnType, Database, LoadError, Schema, TableId, TableSpec,
};
use ordo::txn::{Access, Program, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::hint::black_box;
use std::sync::Arc;

/// The one table.
pub const SITEST: TableId = 0;
/// Its one column besides the key (`id` is the key).
pub const VALUE: usize = 0;
const V: ColumnSet = ColumnSet::one(VALUE);

/// sibench parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiBenchConfig {
    /// I: rows in `sitest`.
    pub items: u64,
    /// Queries per `updates` updates.
    pub queries: u32,
    pub updates: u32,
}

impl Default for SiBenchConfig {
    fn default() -> Self {
        SiBenchConfig {
            items: 100,
            queries: 1,
            updates: 1,
        }
    }
}

/// Most rows (the query scans them all in one transaction).
pub const MAX_ITEMS: u64 = 1 << 24;

impl SiBenchConfig {
    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if self.items == 0 || self.items > MAX_ITEMS {
            return Err(Error::invalid(
                "items",
                format!("must be between 1 and {MAX_ITEMS}, got {}", self.items),
            ));
        }
        if self.queries == 0 && self.updates == 0 {
            return Err(Error::invalid(
                "query-ratio",
                "0:0 leaves no transactions to run",
            ));
        }
        if self.queries.checked_add(self.updates).is_none() {
            return Err(Error::invalid(
                "query-ratio",
                format!(
                    "{}:{} is too large: give a ratio in smaller numbers",
                    self.queries, self.updates
                ),
            ));
        }
        Ok(())
    }
}

/// The sibench workload.
pub struct SiBench {
    cfg: SiBenchConfig,
    ledger: Arc<Ledger>,
}

impl SiBench {
    /// A workload with validated parameters.
    pub fn new(cfg: SiBenchConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(SiBench {
            cfg,
            ledger: Arc::default(),
        })
    }
    pub fn config(&self) -> &SiBenchConfig {
        &self.cfg
    }
    /// Updates committed since the last load.
    pub fn updates_committed(&self) -> i64 {
        self.ledger.total()
    }
}

/// A sibench transaction.
#[derive(Clone)]
pub struct SiBenchTxn {
    /// `None`: the query; `Some(id)`: the update of row `id`.
    pub update: Option<u64>,
    items: u64,
    /// The query's answer: the id with the smallest value.
    pub answer: u64,
    ledger: Entry,
}

impl SiBenchTxn {
    /// Makes this program the query (`None`) or the update of row `id`, for generator thread `thread`.
    pub fn set(&mut self, update: Option<u64>, thread: u32) {
        self.ledger.settle(thread);
        self.update = update;
    }
}

impl Program for SiBenchTxn {
    fn name(&self) -> &'static str {
        if self.update.is_some() {
            "update"
        } else {
            "query"
        }
    }
    fn pieces(&self) -> usize {
        1
    }
    fn declare(&self, _piece: usize, out: &mut Vec<Access>) {
        out.push(match self.update {
            Some(id) => Access::update(SITEST, id, V, V),
            None => Access::scan(SITEST, 0, self.items - 1, V),
        });
    }
    fn depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn run_piece<T: Tx>(&mut self, _piece: usize, tx: &mut T) -> TxResult<()> {
        self.ledger.retract();
        match self.update {
            Some(id) => {
                tx.update(SITEST, id, V, |row| row.set_int(VALUE, row.int(VALUE) + 1))?;
                self.ledger.record(1);
            }
            None => {
                // ORDER BY value ASC LIMIT 1: the first id among the smallest values.
                let mut best = (i64::MAX, u64::MAX);
                tx.scan(SITEST, 0, self.items - 1, V, |id, row| {
                    best = best.min((row.int(VALUE), id));
                    true
                })?;
                self.answer = black_box(best.1);
            }
        }
        Ok(())
    }
}

/// Per-thread generator state.
pub struct SiBenchGen {
    rng: SmallRng,
    thread: u32,
}

impl Workload for SiBench {
    type Program = SiBenchTxn;
    type Gen = SiBenchGen;

    fn name(&self) -> &'static str {
        "sibench"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let schema = Schema::new(vec![Column::new("value", ColumnType::Int)]).expect("schema");
        let spec = TableSpec::new("sitest", schema)
            .ordered(0)
            .capacity(self.cfg.items as usize);
        let t = db.create_table(spec)?;
        debug_assert_eq!(t, SITEST);
        let mut scratch = Vec::new();
        for id in 0..self.cfg.items {
            db.table(t).load(id, &mut scratch, |row| {
                row.set_int(VALUE, 0);
                Ok(())
            })?;
        }
        self.ledger.reset();
        Ok(())
    }
    fn generator(&self, thread: u32, seed: u64) -> SiBenchGen {
        let s = seed ^ (thread as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407);
        SiBenchGen {
            rng: SmallRng::seed_from_u64(s),
            thread,
        }
    }
    fn program(&self) -> SiBenchTxn {
        SiBenchTxn {
            update: None,
            items: self.cfg.items,
            answer: 0,
            ledger: Entry::new(self.ledger.clone()),
        }
    }
    fn next(&self, g: &mut SiBenchGen, p: &mut SiBenchTxn) {
        let (q, u) = (self.cfg.queries, self.cfg.updates);
        let update = (g.rng.gen_range(0..q + u) >= q).then(|| g.rng.gen_range(0..self.cfg.items));
        p.set(update, g.thread);
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let mut buf = Vec::new();
        let mut sum = 0i64;
        for id in 0..self.cfg.items {
            sum += inspect::int(db, SITEST, id, VALUE, &mut buf)
                .ok_or_else(|| format!("sitest row {id} is missing"))?;
        }
        let updates = self.ledger.total();
        if sum != updates {
            return Err(format!(
                "values sum to {sum} but {updates} updates committed (lost or phantom increments)"
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ordo::protocols::nocc::NoCC;
    use ordo::protocols::Protocol;
    use ordo::txn::declared::run_checked;

    fn open(cfg: SiBenchConfig) -> (SiBench, NoCC) {
        let w = SiBench::new(cfg).unwrap();
        let mut db = Database::new();
        w.load(&mut db).unwrap();
        let p = NoCC::open(db, &Default::default());
        (w, p)
    }

    #[test]
    fn validation_rejects_bad_parameters() {
        assert!(SiBenchConfig::default().validate().is_ok());
        for bad in [
            SiBenchConfig {
                items: 0,
                ..SiBenchConfig::default()
            },
            SiBenchConfig {
                items: MAX_ITEMS + 1,
                ..SiBenchConfig::default()
            },
            SiBenchConfig {
                queries: 0,
                updates: 0,
                ..SiBenchConfig::default()
            },
            SiBenchConfig {
                queries: u32::MAX,
                updates: 1,
                ..SiBenchConfig::default()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_ratio_and_the_uniform_ids_are_respected() {
        let w = SiBench::new(SiBenchConfig {
            items: 10,
            queries: 10,
            updates: 1,
        })
        .unwrap();
        let (mut g, mut p) = (w.generator(1, 2), w.program());
        let (mut per_id, mut queries, n) = ([0u32; 10], 0u32, 22_000u32);
        for _ in 0..n {
            w.next(&mut g, &mut p);
            match p.update {
                Some(id) => per_id[id as usize] += 1,
                None => queries += 1,
            }
        }
        assert!((queries as f64 / n as f64 - 10.0 / 11.0).abs() < 0.01);
        assert!(
            per_id.iter().all(|&c| (150..250).contains(&c)),
            "{per_id:?}"
        );
    }

    #[test]
    fn the_query_finds_the_smallest_value_and_updates_are_counted() {
        let (w, p) = open(SiBenchConfig {
            items: 5,
            queries: 1,
            updates: 1,
        });
        let mut worker = p.worker(0, false);
        let mut prog = w.program();
        // Raise every row but 3 once: row 3 keeps the smallest value.
        for id in [0, 1, 2, 4, 0] {
            prog.set(Some(id), 0);
            p.execute(&mut worker, &mut prog).unwrap();
        }
        prog.set(None, 0);
        p.execute(&mut worker, &mut prog).unwrap();
        assert_eq!(prog.answer, 3);
        assert_eq!(w.updates_committed(), 5);
        w.check(p.db()).unwrap();
        assert!(inspect::set_int(p.db(), SITEST, 2, VALUE, 0));
        assert!(w.check(p.db()).unwrap_err().0.contains("sum to 4"));
    }

    #[test]
    fn both_transactions_stay_within_their_declarations() {
        let (w, p) = open(SiBenchConfig {
            items: 30,
            ..SiBenchConfig::default()
        });
        let mut worker = p.worker(0, false);
        let (mut g, mut prog) = (w.generator(0, 4), w.program());
        for _ in 0..200 {
            w.next(&mut g, &mut prog);
            let v = run_checked(&mut prog, p.begin(&mut worker)).unwrap();
            assert!(v.is_empty(), "{v:#?}");
        }
    }
}
