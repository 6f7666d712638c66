//! TPC-C (revision 5.11) and TPC-C++ (Cahill's SSI thesis, §5.3), written once as transaction programs.
//!
//! **Schema** ([`schema`]): the nine tables with every column of clause 1.3, plus two secondary
//! indexes kept as tables of their own — CUSTOMER_BY_NAME (w, d, last name, c) for the 60% of Payment
//! and Order-Status transactions that select a customer by last name, and ORDER_BY_CUSTOMER
//! (w, d, c, o) for Order-Status's latest order and Credit Check's join — so they are read and written
//! under the same concurrency control as the data. Keys are `u64`s packing the composite keys in tuple
//! order, so "the oldest new order of a district" or "the order lines of the last 20 orders" are range
//! scans.
//!
//! **Population** ([`load`]): clause 4.3.3.1, scaled by warehouses, loaded in parallel. `tiny` divides
//! customers per district by 30 (100) and items by 100 (1,000), as in the SSI thesis.
//!
//! **Transactions**, each a [`Program`] of pieces with declared accesses; an access that depends on
//! data (a customer found by last name, Delivery's oldest new order, Stock-Level's items) is declared
//! by a later piece that `depends_on` the piece that found it:
//! [`new_order`] (1% roll back on an unused item id, before any write: piece 0 is the commit point;
//! 1% of order lines from a remote warehouse, so about 10% of New-Orders touch one — or, with
//! `remote_new_order` (`--remote-new-order PCT`), that percentage of New-Orders take exactly one of
//! their lines from a remote warehouse and the others none, the PWV paper's "~10% of NewOrders"
//! as a knob), [`payment`] (15% remote customer), [`order_status`], [`delivery`], [`stock_level`],
//! and TPC-C++'s [`credit_check`]. Remote warehouses need more than one: with one, nothing is
//! remote whatever the options say.
//!
//! **Conflict units** ([`units`]): the district-keyed tables by (warehouse, district), Stock by
//! warehouse at the coarse grain — what PWV orders transactions over (the paper's §5.3).
//!
//! **Mixes** ([`mix`]): the standard 45/43/4/4/4, PWV's New-Order + Payment 50/50, TPC-C++ and its
//! Stock-Level mix, DBx1000's New-Order + Payment with DBx1000's work (no inserts), or custom.
//!
//! **Terminals** (clause 4.2.2): each worker is a terminal bound to a home warehouse, worker t to
//! warehouse t mod W + 1, as the specification binds terminals and DBx1000 binds threads
//! (`FIRST_PART_LOCAL`); `--home-warehouse random` draws each transaction's home uniformly
//! instead (what every run did before 2026-11-28). Keying and think times are not modelled (a
//! closed loop), and the district is drawn uniformly per transaction.
//!
//! **Consistency** ([`consistency`]): conditions 1–4 of clause 3.3.2, after a run.
//!
//! Money is in cents and rates in basis points (integers), so the conditions hold exactly.

pub mod base;
pub mod consistency;
pub mod credit_check;
pub mod customer;
pub mod delivery;
pub mod load;
pub mod mix;
pub mod new_order;
pub mod options;
pub mod order_status;
pub mod partitions;
pub mod payment;
pub mod random;
pub mod schema;
pub mod stock_level;
pub mod units;

#[cfg(test)]
mod pwv_tests;
#[cfg(test)]
mod tests;

use crate::base_ified::{BaseIfied, Cut};
use crate::Error;
use customer::By;
use mix::{Kind, Mix};
use ordo::harness::{Violation, Workload};
use ordo::storage::{Database, LoadError};
use ordo::txn::{Access, ConflictUnits, Partitioning, Program, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use random::{nurand, NuRandC};
use schema::MAX_WAREHOUSES;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// TPC-C parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TpccConfig {
    pub warehouses: u32,
    /// Customers per district / 30, items / 100.
    pub tiny: bool,
    pub mix: Mix,
    /// Payment skips the w_ytd / d_ytd updates (the warehouse and district become read-only there).
    pub no_ytd: bool,
    /// Percent of New-Orders that take one line from a remote warehouse (and no other); `None`:
    /// the specification's 1% of order lines, each on its own.
    pub remote_new_order: Option<f64>,
    /// Each transaction draws its home warehouse uniformly (`--home-warehouse random`), instead of
    /// the worker's fixed one (the default: TPC-C binds each terminal to a warehouse).
    pub random_home: bool,
    /// Which types `salt`/`salt-local` run as BASE transactions (`--base-ified`, [`base`]).
    pub base_ified: BaseIfied,
}

impl Default for TpccConfig {
    fn default() -> Self {
        TpccConfig {
            warehouses: 1,
            tiny: false,
            mix: Mix::STANDARD,
            no_ytd: false,
            remote_new_order: None,
            random_home: false,
            base_ified: base::DEFAULT,
        }
    }
}

impl TpccConfig {
    /// Customers per district (3,000; 100 tiny).
    pub fn customers(&self) -> u32 {
        if self.tiny {
            100
        } else {
            3000
        }
    }
    /// Items (100,000; 1,000 tiny).
    pub fn items(&self) -> u32 {
        if self.tiny {
            1000
        } else {
            100_000
        }
    }
    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if self.warehouses == 0 || self.warehouses >= MAX_WAREHOUSES {
            return Err(Error::invalid(
                "warehouses",
                format!(
                    "must be between 1 and {}, got {}",
                    MAX_WAREHOUSES - 1,
                    self.warehouses
                ),
            ));
        }
        if let Some(pct) = self.remote_new_order {
            if !(0.0..=100.0).contains(&pct) {
                return Err(Error::invalid(
                    "remote-new-order",
                    format!("must be a percentage in [0, 100], got {pct}"),
                ));
            }
        }
        if self.mix.total() == 0 {
            return Err(Error::Unrunnable("the mix runs no transaction".into()));
        }
        Ok(())
    }
}

/// The TPC-C workload.
pub struct Tpcc {
    cfg: TpccConfig,
    /// Generators handed out so far (each gets its own HISTORY key space).
    generators: AtomicU64,
    /// Where Delivery's scans start (reset by every load).
    oldest: Arc<delivery::OldestNewOrder>,
}

impl Tpcc {
    pub fn new(cfg: TpccConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(Tpcc {
            oldest: Arc::new(delivery::OldestNewOrder::new(cfg.warehouses)),
            cfg,
            generators: AtomicU64::new(0),
        })
    }
    pub fn config(&self) -> &TpccConfig {
        &self.cfg
    }
}

/// One TPC-C transaction: the type drawn, and reusable state for each type.
#[derive(Clone, Debug, Default)]
pub struct TpccTxn {
    pub kind: Option<Kind>,
    pub new_order: new_order::NewOrder,
    pub payment: payment::Payment,
    pub order_status: order_status::OrderStatus,
    pub delivery: delivery::Delivery,
    pub stock_level: stock_level::StockLevel,
    pub credit_check: credit_check::CreditCheck,
    /// How the drawn type is cut into alkaline subtransactions ([`base`]; read only by Salt).
    pub cut: Cut,
}

macro_rules! dispatch {
    ($self:ident, $p:ident => $e:expr) => {
        match $self
            .kind
            .expect("a TPC-C transaction drawn by Workload::next")
        {
            Kind::NewOrder => {
                let $p = &mut $self.new_order;
                $e
            }
            Kind::Payment => {
                let $p = &mut $self.payment;
                $e
            }
            Kind::OrderStatus => {
                let $p = &mut $self.order_status;
                $e
            }
            Kind::Delivery => {
                let $p = &mut $self.delivery;
                $e
            }
            Kind::StockLevel => {
                let $p = &mut $self.stock_level;
                $e
            }
            Kind::CreditCheck => {
                let $p = &mut $self.credit_check;
                $e
            }
        }
    };
}

macro_rules! dispatch_ref {
    ($self:ident, $p:ident => $e:expr) => {
        match $self
            .kind
            .expect("a TPC-C transaction drawn by Workload::next")
        {
            Kind::NewOrder => {
                let $p = &$self.new_order;
                $e
            }
            Kind::Payment => {
                let $p = &$self.payment;
                $e
            }
            Kind::OrderStatus => {
                let $p = &$self.order_status;
                $e
            }
            Kind::Delivery => {
                let $p = &$self.delivery;
                $e
            }
            Kind::StockLevel => {
                let $p = &$self.stock_level;
                $e
            }
            Kind::CreditCheck => {
                let $p = &$self.credit_check;
                $e
            }
        }
    };
}

impl Program for TpccTxn {
    fn name(&self) -> &'static str {
        dispatch_ref!(self, p => p.name())
    }
    fn pieces(&self) -> usize {
        dispatch_ref!(self, p => p.pieces())
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        dispatch_ref!(self, p => p.declare(piece, out))
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        dispatch_ref!(self, p => p.depends_on(piece, out))
    }
    fn declaration_depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        dispatch_ref!(self, p => p.declaration_depends_on(piece, out))
    }
    fn declare_bounds(&self, piece: usize, out: &mut Vec<Access>) -> bool {
        dispatch_ref!(self, p => p.declare_bounds(piece, out))
    }
    fn commit_point(&self) -> Option<usize> {
        dispatch_ref!(self, p => p.commit_point())
    }
    fn conflict_units(&self) -> Option<ConflictUnits> {
        dispatch_ref!(self, p => p.conflict_units())
    }
    /// By warehouse, for every type ([`partitions`]).
    fn partitioning(&self) -> Option<Partitioning> {
        Some(partitions::BY_WAREHOUSE)
    }
    fn commutes(&self, piece: usize) -> bool {
        dispatch_ref!(self, p => p.commutes(piece))
    }
    fn alkaline_starts(&self, out: &mut Vec<usize>) {
        if let Some(kind) = self.kind {
            base::alkaline_starts(kind, self.pieces(), self.cut, out);
        }
    }
    #[inline]
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        dispatch!(self, p => p.run_piece(piece, tx))
    }
}

/// Per-thread generator state.
pub struct TpccGen {
    rng: SmallRng,
    id: u64,
    history: u64,
    /// The terminal's home warehouse: worker t's is t mod W + 1 (`None` with
    /// `--home-warehouse random`).
    home: Option<u32>,
}

impl Tpcc {
    /// The transaction's home warehouse: the terminal's, or drawn uniformly.
    fn warehouse(&self, g: &mut TpccGen) -> u32 {
        match g.home {
            Some(w) => w,
            None => g.rng.gen_range(1..=self.cfg.warehouses),
        }
    }
    /// A warehouse other than `w` (or `w` itself when there is only one).
    fn other_warehouse(&self, g: &mut TpccGen, w: u32) -> u32 {
        if self.cfg.warehouses == 1 {
            return w;
        }
        let o = g.rng.gen_range(1..self.cfg.warehouses);
        if o >= w {
            o + 1
        } else {
            o
        }
    }
    fn district(g: &mut TpccGen) -> u32 {
        g.rng.gen_range(1..=schema::DISTRICTS)
    }
    fn customer_id(&self, g: &mut TpccGen) -> u32 {
        nurand(&mut g.rng, 1023, NuRandC::RUN.c_id, 1, self.cfg.customers())
    }
    /// 60% by last name (a name that exists: with fewer than 1,000 customers per district only the first
    /// `customers` names do), 40% by id.
    fn customer_by(&self, g: &mut TpccGen) -> By {
        if g.rng.gen_range(1..=100) <= 60 {
            let names = self.cfg.customers().min(1000);
            By::Name(nurand(&mut g.rng, 255, NuRandC::RUN.c_last, 0, names - 1))
        } else {
            By::Id(self.customer_id(g))
        }
    }

    fn new_order(&self, g: &mut TpccGen, p: &mut new_order::NewOrder) {
        p.w = self.warehouse(g);
        p.d = Self::district(g);
        p.c = self.customer_id(g);
        p.entry_d = load::now();
        let n = g.rng.gen_range(5..=15);
        // DBx1000 draws `rbk` and never uses it: no rollbacks there.
        let rollback = g.rng.gen_range(1..=100) == 1 && !self.cfg.mix.dbx1000;
        p.dbx1000 = self.cfg.mix.dbx1000;
        // With --remote-new-order, whether this order takes one line from a remote warehouse.
        let remote_order = self
            .cfg
            .remote_new_order
            .map(|pct| g.rng.gen::<f64>() * 100.0 < pct);
        let items = self.cfg.items();
        p.lines.clear();
        while p.lines.len() < n {
            let i = nurand(&mut g.rng, 8191, NuRandC::RUN.ol_i_id, 1, items);
            if p.lines.iter().any(|l| l.i == i) {
                continue;
            }
            // The specification: each line from a remote warehouse with probability 1%.
            let supply_w = if remote_order.is_none() && g.rng.gen_range(1..=100) == 1 {
                self.other_warehouse(g, p.w)
            } else {
                p.w
            };
            let quantity = g.rng.gen_range(1..=10);
            p.lines.push(new_order::Line::new(i, supply_w, quantity));
        }
        if remote_order == Some(true) {
            let l = g.rng.gen_range(0..n);
            p.lines[l].supply_w = self.other_warehouse(g, p.w);
        }
        if rollback {
            // An unused item number (clause 2.4.1.4).
            p.lines.last_mut().expect("5..=15 lines").i = items + 1;
        }
    }

    fn payment(&self, g: &mut TpccGen, p: &mut payment::Payment) {
        p.w = self.warehouse(g);
        p.d = Self::district(g);
        let (cw, cd) = if g.rng.gen_range(1..=100) <= 85 {
            (p.w, p.d)
        } else {
            (self.other_warehouse(g, p.w), Self::district(g))
        };
        let by = self.customer_by(g);
        p.customer.set(cw, cd, by);
        p.amount = g.rng.gen_range(100..=500_000);
        p.date = load::now();
        p.no_ytd = self.cfg.no_ytd;
        p.dbx1000 = self.cfg.mix.dbx1000;
        g.history += 1;
        p.h_key = schema::history_key(p.w, g.id, g.history);
    }
}

impl Workload for Tpcc {
    type Program = TpccTxn;
    type Gen = TpccGen;

    fn name(&self) -> &'static str {
        if self.cfg.mix.weight(Kind::CreditCheck) > 0 {
            "tpcc++"
        } else {
            "tpcc"
        }
    }

    fn params(&self) -> serde_json::Value {
        let mut params = serde_json::json!({
            "warehouses": self.cfg.warehouses,
            "tiny": self.cfg.tiny,
            "mix": self.cfg.mix.to_string(),
            "no_ytd": self.cfg.no_ytd,
            "home_warehouse": if self.cfg.random_home { "random" } else { "bound" },
        });
        // Only when not the default: a run without it records what it always did.
        if self.cfg.base_ified != base::DEFAULT {
            params["base_ified"] = serde_json::json!(self.cfg.base_ified.to_string());
        }
        // Only when given: a run without it records what it always did.
        if let Some(pct) = self.cfg.remote_new_order {
            params["remote_new_order"] = serde_json::json!(pct);
        }
        params
    }

    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        self.oldest.reset();
        load::populate(&self.cfg, db)
    }

    fn generator(&self, thread: u32, seed: u64) -> TpccGen {
        let s = seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        TpccGen {
            rng: SmallRng::seed_from_u64(s),
            id: self.generators.fetch_add(1, Ordering::Relaxed),
            history: 0,
            home: (!self.cfg.random_home).then(|| thread % self.cfg.warehouses + 1),
        }
    }

    fn program(&self) -> TpccTxn {
        let mut t = TpccTxn::default();
        t.new_order.lines.reserve(15);
        t.delivery.marks = Some(self.oldest.clone());
        t
    }

    fn next(&self, g: &mut TpccGen, p: &mut TpccTxn) {
        let kind = self.cfg.mix.pick(g.rng.gen_range(0..self.cfg.mix.total()));
        p.kind = Some(kind);
        p.cut = base::cut(self.cfg.base_ified, kind);
        match kind {
            Kind::NewOrder => self.new_order(g, &mut p.new_order),
            Kind::Payment => self.payment(g, &mut p.payment),
            Kind::OrderStatus => {
                let (w, d) = (self.warehouse(g), Self::district(g));
                let by = self.customer_by(g);
                p.order_status.customer.set(w, d, by);
            }
            Kind::Delivery => {
                let w = self.warehouse(g);
                p.delivery.w = w;
                for d in 1..=schema::DISTRICTS {
                    p.delivery.from[d as usize - 1] = self.oldest.get(w, d);
                }
                p.delivery.carrier = g.rng.gen_range(1..=10);
                p.delivery.date = load::now();
            }
            Kind::StockLevel => {
                p.stock_level.w = self.warehouse(g);
                p.stock_level.d = Self::district(g);
                p.stock_level.threshold = g.rng.gen_range(10..=20);
            }
            Kind::CreditCheck => {
                let c = &mut p.credit_check;
                c.w = self.warehouse(g);
                c.d = Self::district(g);
                c.c = self.customer_id(g);
            }
        }
    }

    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        if self.cfg.mix.dbx1000 {
            // Without the inserts only condition 1 can hold (see [`mix`]).
            consistency::check_ytd(db, self.cfg.warehouses)
        } else {
            consistency::check(db, self.cfg.warehouses)
        }
    }
}
