//! Callas's microbenchmarks (Xie 2016, Ch. 4, §4.6.4–4.6.6, Figs. 4.11–4.14), `-w callas-micro
//! --variant V`.
//!
//! Callas groups transaction types, chops each group's transactions with Runtime Pipelining (a
//! piece's locks are released as soon as it ends, in a pipeline) and keeps groups apart with
//! coarse **nexus locks**. Its microbenchmarks measure what that costs and where it pays. Every
//! operation is an update of one integer row (`+1`), and every operation is its own piece, so a
//! chopping protocol may cut between any two; each transaction type has its own
//! [`Program::name`], so a protocol can group types by name (the thesis puts `T1` and `T2` in
//! separate groups).
//!
//! * `nexus` (Fig. 4.11, the overhead of nexus locks): one type, `Nexus`, with every instance in a
//!   group of its own. `--contention none`: each transaction updates 5 rows no concurrent one
//!   touches (each worker cycles through its own slice of the private table), so only the cost of
//!   the extra lock shows; `--contention high`: every transaction updates the same 2 rows (keys 0
//!   and 1 of the shared table, in that order), where enforcing the nexus lock release order costs.
//! * `frequency` (Fig. 4.12, execution frequency across groups): types `T1` and `T2`, 6 operations
//!   each: one update of 1 of 10 shared rows (the same 10 for both types: 10% contention between the
//!   groups), then 5 updates of rows private to the instance. `--t1-share PCT` percent of
//!   transactions are `T1` (the thesis sweeps T1:T2 from 1:1, 50, to 100:1, 99.01).
//! * `contention` (Fig. 4.13, contention rate across groups): `T1` and `T2` at equal frequency, 7
//!   operations: one update of 1 of `--shared-rows N` shared rows (contention 1/N between the
//!   groups; the thesis goes from N = 1, 100%, to 10,000, 0.01%), one of 1 of 10 rows of the type's
//!   own table (`t1` or `t2`: 10% contention inside a group), then 5 private updates.
//! * `rollback` (Fig. 4.14, application rollbacks): one type, `Check`, on tables `a`, `b`, `c` of
//!   10 rows: pick `i`; check a condition on `a[i]` and update it, the same on `b[i]`, then on
//!   `c[i]`, whose check fails with probability `--rollback-pct P`, and the transaction then
//!   aborts by its own logic ([`Abort::user`]); then 5 private updates. 11 operations.
//!
//! ```text
//!   pieces (one update each; P = a private row, never shared by two concurrent transactions)
//!   nexus none    P P P P P                      name Nexus
//!   nexus high    shared[0] shared[1]            name Nexus
//!   frequency     shared[0..10] P P P P P        name T1 or T2
//!   contention    shared[0..N] tK[0..10] P P P P P           T1 or T2 (tK: the type's own table)
//!   rollback      ⟨1,2⟩a[i] ⟨3,4⟩b[i] ⟨5,6⟩c[i] ⟨7⟩P … ⟨11⟩P  name Check, commit point ⟨5,6⟩
//! ```
//!
//! **Pieces.** A check and the update it guards (`rollback`'s operations 1 and 2, 3 and 4, 5 and 6)
//! are one piece, the same read-modify-write: the check reads the value inside the update, which
//! therefore takes one exclusive access instead of a shared one upgraded (an upgrade deadlocks two
//! checkers of one row under 2PL). That is Runtime Pipelining's own chopping of this transaction,
//! ⟨1,2⟩ ⟨3,4⟩ ⟨5,6⟩ ⟨7⟩ … ⟨11⟩ (8 pieces), and [`Program::commit_point`] is ⟨5,6⟩, the last piece
//! whose logic may abort. Each piece declares exactly its one row ([`Access::update`]).
//! **No data edges** ([`Program::depends_on`] is empty for every piece, in every variant): every
//! key is drawn by the generator, no piece reads a value another piece produced, and a failed check
//! ends the whole transaction (control, which the commit point describes, not data).
//!
//! **Private rows.** The `private` table holds [`PRIVATE_SLOTS`] slices of `private_rows` rows;
//! worker `t` takes slice `t mod 128` and cycles through it 5 aligned rows per transaction, so
//! private updates never meet another worker's (past 128 workers two share a slice, and may).
//!
//! Invariant ([`Workload::check`]), on what committed transactions leave (each update adds 1):
//! the 5 rows of each aligned group of private rows hold one value (a transaction updates all of
//! them or, rolled back, none), and their sum counts the committed transactions that have private
//! rows, `n`; then per variant: `nexus high` `shared[0] = shared[1]`; `frequency` the shared rows
//! sum to `n`; `contention` the shared rows, and `t1` and `t2` together, each sum to `n`;
//! `rollback` `a[i] = b[i] = c[i]` for each `i` and `a` sums to `n`. A lost update, a transaction
//! torn, or a rolled-back one whose earlier updates stayed, breaks one of these.

pub mod options;

use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{
    Column, ColumnSet, ColumnType, Database, LoadError, Schema, TableId, TableSpec,
};
use ordo::txn::{Abort, Access, Program, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// The shared rows (`nexus high`: 2, `frequency`: 10, `contention`: `--shared-rows`).
pub const SHARED: TableId = 0;
/// `contention`: `T1`'s own table, 10 rows.
pub const TYPE_T1: TableId = 1;
/// `contention`: `T2`'s own table, 10 rows.
pub const TYPE_T2: TableId = 2;
/// `rollback`: tables A, B and C, 10 rows each.
pub const A: TableId = 3;
pub const B: TableId = 4;
pub const C: TableId = 5;
/// The private rows, [`PRIVATE_SLOTS`] slices, one per worker.
pub const PRIVATE: TableId = 6;
/// Every table's one column.
pub const VALUE: usize = 0;

/// Private updates per transaction (every variant but `nexus high`).
pub const PRIVATE_OPS: usize = 5;
/// Slices of the private table (worker `t` takes slice `t mod PRIVATE_SLOTS`).
pub const PRIVATE_SLOTS: u64 = 128;
/// Rows of the shared table in `frequency`, of each type's table in `contention`, of A, B and C.
pub const TEN: u64 = 10;
/// `rollback`: the piece of operations 5 and 6 (the check that may fail, and its update).
pub const ROLLBACK_PIECE: usize = 2;
/// The most `--shared-rows` (each is loaded).
pub const MAX_SHARED_ROWS: u64 = 10_000_000;
/// The most `private_rows` per slice.
pub const MAX_PRIVATE_ROWS: u64 = 100_000;

/// Which microbenchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Nexus,
    Frequency,
    Contention,
    Rollback,
}

impl Variant {
    /// The variant named `text`.
    pub fn parse(text: &str) -> Option<Variant> {
        Some(match text {
            "nexus" => Variant::Nexus,
            "frequency" => Variant::Frequency,
            "contention" => Variant::Contention,
            "rollback" => Variant::Rollback,
            _ => return None,
        })
    }
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Nexus => "nexus",
            Variant::Frequency => "frequency",
            Variant::Contention => "contention",
            Variant::Rollback => "rollback",
        }
    }
}

/// `nexus`: whether transactions meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Contention {
    /// 5 rows per transaction, no two concurrent transactions share one (`--contention none`).
    #[serde(rename = "none")]
    Disjoint,
    /// The same 2 rows in every transaction (`--contention high`).
    #[serde(rename = "high")]
    High,
}

impl Contention {
    /// The setting named `text`.
    pub fn parse(text: &str) -> Option<Contention> {
        Some(match text {
            "none" => Contention::Disjoint,
            "high" => Contention::High,
            _ => return None,
        })
    }
}

/// Parameters (see the module doc). Each field but `private_rows` is the option of its name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallasMicroConfig {
    pub variant: Variant,
    /// `nexus`: disjoint rows or the same 2.
    pub contention: Contention,
    /// `frequency`: percent of transactions that are `T1`.
    pub t1_share: f64,
    /// `contention`: rows the first update is drawn from.
    pub shared_rows: u64,
    /// `rollback`: percent of transactions whose check of `c[i]` fails.
    pub rollback_pct: f64,
    /// Rows of each worker's slice of the private table (a multiple of 5).
    pub private_rows: u64,
}

impl Default for CallasMicroConfig {
    fn default() -> Self {
        CallasMicroConfig {
            variant: Variant::Frequency,
            contention: Contention::Disjoint,
            t1_share: 50.0,
            shared_rows: TEN,
            rollback_pct: 0.0,
            private_rows: 4_000,
        }
    }
}

impl CallasMicroConfig {
    pub fn validate(&self) -> crate::Result<()> {
        let pct = |option: &'static str, v: f64| {
            if (0.0..=100.0).contains(&v) {
                Ok(())
            } else {
                Err(Error::invalid(
                    option,
                    format!("must be a percentage from 0 to 100, got {v}"),
                ))
            }
        };
        pct("t1-share", self.t1_share)?;
        pct("rollback-pct", self.rollback_pct)?;
        if !(1..=MAX_SHARED_ROWS).contains(&self.shared_rows) {
            return Err(Error::invalid(
                "shared-rows",
                format!(
                    "must be from 1 to {MAX_SHARED_ROWS}, got {}",
                    self.shared_rows
                ),
            ));
        }
        let p = self.private_rows;
        if p == 0 || !p.is_multiple_of(PRIVATE_OPS as u64) || p > MAX_PRIVATE_ROWS {
            return Err(Error::Unrunnable(format!(
                "private rows per worker must be a positive multiple of {PRIVATE_OPS} up to \
                 {MAX_PRIVATE_ROWS}, got {p}"
            )));
        }
        Ok(())
    }

    /// Rows of table `t` for this variant (0: the variant does not use it).
    pub fn rows(&self, t: TableId) -> u64 {
        match (t, self.variant) {
            (SHARED, Variant::Nexus) if self.contention == Contention::High => 2,
            (SHARED, Variant::Frequency) => TEN,
            (SHARED, Variant::Contention) => self.shared_rows,
            (TYPE_T1 | TYPE_T2, Variant::Contention) => TEN,
            (A | B | C, Variant::Rollback) => TEN,
            (PRIVATE, _) if self.has_private_rows() => PRIVATE_SLOTS * self.private_rows,
            _ => 0,
        }
    }

    /// Whether transactions update private rows (all but `nexus high`).
    pub fn has_private_rows(&self) -> bool {
        !(self.variant == Variant::Nexus && self.contention == Contention::High)
    }
}

/// The microbenchmark.
pub struct CallasMicro {
    cfg: CallasMicroConfig,
}

impl CallasMicro {
    pub fn new(cfg: CallasMicroConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(CallasMicro { cfg })
    }
    pub fn config(&self) -> &CallasMicroConfig {
        &self.cfg
    }
}

/// A transaction type ([`Program::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Nexus,
    T1,
    T2,
    Check,
}

/// One piece: an update of one row, guarded by a check (`rollback`'s first three pieces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub table: TableId,
    pub key: u64,
    /// Whether the piece checks a condition on the row before updating it (the row's value is
    /// not negative, and, if `fails`, the draw of `--rollback-pct`).
    pub check: bool,
    /// Whether the check fails: the transaction aborts by its own logic (`c[i]`'s, drawn).
    pub fails: bool,
}

/// A transaction: piece `i` is `steps[i]`.
#[derive(Clone, Debug)]
pub struct CallasMicroTxn {
    pub kind: Kind,
    pub steps: Vec<Step>,
}

impl CallasMicroTxn {
    /// Whether a check of this transaction fails (it cannot commit).
    pub fn fails(&self) -> bool {
        self.steps.iter().any(|s| s.fails)
    }
}

impl Program for CallasMicroTxn {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Nexus => "Nexus",
            Kind::T1 => "T1",
            Kind::T2 => "T2",
            Kind::Check => "Check",
        }
    }
    fn pieces(&self) -> usize {
        self.steps.len()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let s = self.steps[piece];
        let v = ColumnSet::one(VALUE);
        out.push(Access::update(s.table, s.key, v, v));
    }
    /// None: keys are inputs and no piece reads what another wrote (see the module doc).
    fn depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn declaration_depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn commit_point(&self) -> Option<usize> {
        (self.kind == Kind::Check).then_some(ROLLBACK_PIECE)
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let s = self.steps[piece];
        let passed = tx.update(s.table, s.key, ColumnSet::one(VALUE), |r| {
            let v = r.int(VALUE);
            let pass = !s.check || (v >= 0 && !s.fails);
            if pass {
                r.set_int(VALUE, v + 1);
            }
            pass
        })?;
        match passed {
            Some(true) => Ok(()),
            Some(false) => Err(Abort::user(format!(
                "{}: the check of row {} of table {} failed",
                self.name(),
                s.key,
                s.table
            ))),
            None => Err(Abort::user(format!(
                "{}: no row {} in table {}",
                self.name(),
                s.key,
                s.table
            ))),
        }
    }
}

/// Per-thread generator state.
pub struct CallasMicroGen {
    rng: SmallRng,
    /// The first row of this worker's slice of the private table.
    base: u64,
    /// The next group of private rows, from `base`.
    cursor: u64,
}

impl CallasMicro {
    fn update(p: &mut CallasMicroTxn, table: TableId, key: u64) {
        p.steps.push(Step {
            table,
            key,
            check: false,
            fails: false,
        });
    }
    fn private(&self, g: &mut CallasMicroGen, p: &mut CallasMicroTxn) {
        for k in 0..PRIVATE_OPS as u64 {
            CallasMicro::update(p, PRIVATE, g.base + g.cursor + k);
        }
        g.cursor = (g.cursor + PRIVATE_OPS as u64) % self.cfg.private_rows;
    }
}

impl Workload for CallasMicro {
    type Program = CallasMicroTxn;
    type Gen = CallasMicroGen;

    fn name(&self) -> &'static str {
        "callas-micro"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let names = ["shared", "t1", "t2", "a", "b", "c", "private"];
        let mut scratch = Vec::new();
        for (id, name) in names.into_iter().enumerate() {
            let rows = self.cfg.rows(id as TableId);
            let schema = Schema::new(vec![Column::new("value", ColumnType::Int)]).expect("schema");
            let t = db.create_table(TableSpec::new(name, schema).capacity(rows.max(1) as usize))?;
            debug_assert_eq!(t, id as TableId);
            let table = db.table(t);
            for key in 0..rows {
                table.load(key, &mut scratch, |r| {
                    r.set_int(VALUE, 0);
                    Ok(())
                })?;
            }
        }
        Ok(())
    }
    fn generator(&self, thread: u32, seed: u64) -> CallasMicroGen {
        CallasMicroGen {
            rng: SmallRng::seed_from_u64(
                seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            base: (thread as u64 % PRIVATE_SLOTS) * self.cfg.private_rows,
            cursor: 0,
        }
    }
    fn program(&self) -> CallasMicroTxn {
        CallasMicroTxn {
            kind: Kind::Nexus,
            steps: Vec::with_capacity(3 + PRIVATE_OPS),
        }
    }
    fn next(&self, g: &mut CallasMicroGen, p: &mut CallasMicroTxn) {
        p.steps.clear();
        let c = &self.cfg;
        match c.variant {
            Variant::Nexus => {
                p.kind = Kind::Nexus;
                match c.contention {
                    Contention::High => {
                        CallasMicro::update(p, SHARED, 0);
                        CallasMicro::update(p, SHARED, 1);
                    }
                    Contention::Disjoint => self.private(g, p),
                }
            }
            Variant::Frequency => {
                p.kind = if g.rng.gen_bool(c.t1_share / 100.0) {
                    Kind::T1
                } else {
                    Kind::T2
                };
                CallasMicro::update(p, SHARED, g.rng.gen_range(0..TEN));
                self.private(g, p);
            }
            Variant::Contention => {
                let t1 = g.rng.gen_bool(0.5);
                p.kind = if t1 { Kind::T1 } else { Kind::T2 };
                CallasMicro::update(p, SHARED, g.rng.gen_range(0..c.shared_rows));
                let own = if t1 { TYPE_T1 } else { TYPE_T2 };
                CallasMicro::update(p, own, g.rng.gen_range(0..TEN));
                self.private(g, p);
            }
            Variant::Rollback => {
                p.kind = Kind::Check;
                let i = g.rng.gen_range(0..TEN);
                let fails = g.rng.gen_bool(c.rollback_pct / 100.0);
                for (t, fails) in [(A, false), (B, false), (C, fails)] {
                    p.steps.push(Step {
                        table: t,
                        key: i,
                        check: true,
                        fails,
                    });
                }
                self.private(g, p);
            }
        }
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let c = &self.cfg;
        let values = |t: TableId| values(db, t, c.rows(t));
        let sum = |v: &[i64]| v.iter().fold(0i64, |s, x| s.wrapping_add(*x));
        let private = values(PRIVATE)?;
        for (g, group) in private.chunks(PRIVATE_OPS).enumerate() {
            if group.iter().any(|&v| v != group[0]) {
                let lo = g * PRIVATE_OPS;
                return Err(format!(
                    "private rows {lo}..{} hold {group:?}, not one value: a transaction updated \
                     only some of its private rows (torn), or an update was lost",
                    lo + PRIVATE_OPS
                )
                .into());
            }
        }
        let n = sum(&private) / PRIVATE_OPS as i64;
        let must_count = |what: &str, total: i64| -> Result<(), Violation> {
            if total == n {
                Ok(())
            } else {
                Err(format!(
                    "{what} sum to {total}, but the private rows count {n} committed \
                     transactions: an update was lost or a transaction torn"
                )
                .into())
            }
        };
        match c.variant {
            Variant::Nexus if c.contention == Contention::High => {
                let s = values(SHARED)?;
                if s[0] != s[1] {
                    return Err(format!(
                        "shared rows 0 and 1 hold {} and {}, which every transaction updates \
                         together: an update was lost or a transaction torn",
                        s[0], s[1]
                    )
                    .into());
                }
            }
            Variant::Nexus => {}
            Variant::Frequency => must_count("the shared rows", sum(&values(SHARED)?))?,
            Variant::Contention => {
                must_count("the shared rows", sum(&values(SHARED)?))?;
                let own = sum(&values(TYPE_T1)?).wrapping_add(sum(&values(TYPE_T2)?));
                must_count("the rows of tables t1 and t2", own)?;
            }
            Variant::Rollback => {
                let (a, b, cc) = (values(A)?, values(B)?, values(C)?);
                for i in 0..a.len() {
                    if a[i] != b[i] || b[i] != cc[i] {
                        return Err(format!(
                            "a[{i}], b[{i}], c[{i}] hold {}, {}, {}, not one value: a Check was \
                             torn, or a rolled-back one left an update behind",
                            a[i], b[i], cc[i]
                        )
                        .into());
                    }
                }
                must_count("the rows of table a", sum(&a))?;
            }
        }
        Ok(())
    }
}

/// The values of keys `0..n` of table `t`, or which one is missing.
fn values<M: Default + Send + Sync>(
    db: &Database<M>,
    t: TableId,
    n: u64,
) -> Result<Vec<i64>, Violation> {
    let mut buf = Vec::new();
    (0..n)
        .map(|k| {
            crate::inspect::int(db, t, k, VALUE, &mut buf)
                .ok_or_else(|| Violation::from(format!("row {k} of table {t} missing")))
        })
        .collect()
}

#[cfg(test)]
mod tests;
