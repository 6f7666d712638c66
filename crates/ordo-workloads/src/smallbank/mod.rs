//! SmallBank (Alomari et al., ICDE 2008), as the SSI thesis runs it (Cahill 2009, §2.8 and §5.1).
//!
//! A bank of `customers` customers, each with a savings and a checking account:
//!
//! | table      | key            | columns                    |
//! |------------|----------------|----------------------------|
//! | `account`  | the name (N)   | `custid`, `name`           |
//! | `saving`   | `custid`       | `balance`                  |
//! | `checking` | `custid`       | `balance`                  |
//!
//! `account` is **read-only once loaded** ([`ordo::storage::TableSpec::read_only`]): no SmallBank
//! transaction writes it, so protocols may read it without locks, SIREAD locks or validation.
//!
//! Five transaction types, 20% each, every one starting with the name → customer-id lookup in `account`
//! (thesis §5.1.1; [`txn`] maps each line of the thesis's code to a piece):
//!
//! * **Balance** `Bal(N)`: savings + checking (read-only);
//! * **DepositChecking** `DC(N, V)`: checking += V (rolls back if V < 0);
//! * **TransactSavings** `TS(N, V)`: savings += V (rolls back if the balance would go negative);
//! * **Amalgamate** `Amg(N1, N2)`: checking(N2) += savings(N1) + checking(N1); both of N1's set to 0;
//! * **WriteCheck** `WC(N, V)`: if savings + checking < V then checking −= V + 1 (the $1 overdraft
//!   penalty) else checking −= V. It reads savings and writes only checking: the pivot of the dangerous
//!   structure Bal →rw WC →rw TS →rw Bal that makes SmallBank non-serializable under plain SI.
//!
//! Customers are chosen uniformly, or with a **hotspot**: with probability `hotspot_prob` from the first
//! `hotspot_size` customers, otherwise from the rest. The thesis gives no customer counts — it sizes its
//! data by Berkeley DB pages ("approximately 100 leaf pages", §6.1.2, about a 1% conflict chance per
//! pair of transactions). The defaults (18,000 customers, 90% of transactions on 1,000 of them) are the
//! configuration usually attributed to the original SmallBank paper (Alomari et al.); it was not
//! checked against that paper here, so quote it as this repository's default.
//!
//! **Invariants** ([`SmallBank::check`]): every customer's three rows exist; no savings balance is
//! negative (TS refuses, Amg zeroes); and money is conserved — the sum of all balances equals the loaded
//! total plus the deposits (DC, TS) minus the checks (WC, penalties included) of the committed
//! transactions, which a [`crate::ledger::Ledger`] tallies.

pub mod options;
pub mod txn;

#[cfg(test)]
mod tests;

use crate::inspect;
use crate::ledger::{Entry, Ledger};
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{Column, ColumnType, Database, LoadError, Schema, TableId, TableSpec};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
pub use txn::{Kind, SmallBankTxn};

pub const ACCOUNT: TableId = 0;
pub const SAVING: TableId = 1;
pub const CHECKING: TableId = 2;

/// `account` columns.
pub const CUSTID: usize = 0;
pub const NAME: usize = 1;
/// The one column of `saving` and `checking`.
pub const BALANCE: usize = 0;

/// Largest amount a DC, WC or TS moves.
pub const MAX_AMOUNT: i64 = 100;

/// SmallBank parameters (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SmallBankConfig {
    pub customers: u64,
    /// Customers `0..hotspot_size` are hot (0: no hotspot, uniform choice).
    pub hotspot_size: u64,
    /// Probability that a customer is drawn from the hotspot.
    pub hotspot_prob: f64,
}

impl Default for SmallBankConfig {
    fn default() -> Self {
        SmallBankConfig {
            customers: 18_000,
            hotspot_size: 1_000,
            hotspot_prob: 0.9,
        }
    }
}

impl SmallBankConfig {
    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if self.customers < 2 {
            return Err(Error::invalid(
                "customers",
                format!(
                    "must be at least 2 (Amalgamate needs two), got {}",
                    self.customers
                ),
            ));
        }
        if self.customers > 1 << 40 {
            return Err(Error::invalid(
                "customers",
                format!("must be at most 2^40, got {}", self.customers),
            ));
        }
        if self.hotspot_size > self.customers {
            return Err(Error::invalid(
                "hotspot-size",
                format!(
                    "({}) cannot exceed --customers ({})",
                    self.hotspot_size, self.customers
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.hotspot_prob) {
            return Err(Error::invalid(
                "hotspot-prob",
                format!("must be in [0, 1], got {}", self.hotspot_prob),
            ));
        }
        if self.hotspot_size == self.customers && self.hotspot_prob < 1.0 && self.hotspot_size > 0 {
            return Err(Error::invalid(
                "hotspot-size",
                "equals --customers: no cold customers for --hotspot-prob < 1",
            ));
        }
        if self.hotspot_size == 1 && self.hotspot_prob == 1.0 {
            return Err(Error::Unrunnable(
                "a hotspot of 1 customer with --hotspot-prob 1 leaves Amalgamate no second customer"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// The name (the `account` key) of customer `c`: an odd multiplier scatters ids over the key space, so
/// names and ids are different keys, as in the benchmark.
pub fn name_of(c: u64) -> u64 {
    c.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Initial balances of customer `c` (savings, checking): deterministic, 10,000 to 50,000.
pub fn initial_balances(c: u64) -> (i64, i64) {
    let mut z = c.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (
        10_000 + (z % 40_001) as i64,
        10_000 + ((z >> 32) % 40_001) as i64,
    )
}

/// The SmallBank workload.
pub struct SmallBank {
    cfg: SmallBankConfig,
    ledger: Arc<Ledger>,
    loaded_total: AtomicI64,
}

impl SmallBank {
    /// A workload with validated parameters.
    pub fn new(cfg: SmallBankConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(SmallBank {
            cfg,
            ledger: Arc::default(),
            loaded_total: AtomicI64::new(0),
        })
    }
    pub fn config(&self) -> &SmallBankConfig {
        &self.cfg
    }
    /// Net money the committed transactions brought in (deposits minus checks) since the last load.
    pub fn net_deposits(&self) -> i64 {
        self.ledger.total()
    }

    fn customer(&self, rng: &mut SmallRng) -> u64 {
        let (h, n) = (self.cfg.hotspot_size, self.cfg.customers);
        if h == 0 {
            rng.gen_range(0..n)
        } else if h == n || rng.gen::<f64>() < self.cfg.hotspot_prob {
            rng.gen_range(0..h)
        } else {
            rng.gen_range(h..n)
        }
    }
}

/// Per-thread generator state.
pub struct SmallBankGen {
    rng: SmallRng,
    thread: u32,
}

impl Workload for SmallBank {
    type Program = SmallBankTxn;
    type Gen = SmallBankGen;

    fn name(&self) -> &'static str {
        "smallbank"
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }

    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let n = self.cfg.customers as usize;
        let balance =
            || Schema::new(vec![Column::new("balance", ColumnType::Int)]).expect("schema");
        let account = Schema::new(vec![
            Column::new("custid", ColumnType::Int),
            Column::new("name", ColumnType::Char(16)),
        ])
        .expect("schema");
        let t = [
            // No transaction writes `account`: read-only once loaded (protocols may read it unlocked).
            db.create_table(TableSpec::new("account", account).capacity(n).read_only())?,
            db.create_table(TableSpec::new("saving", balance()).capacity(n))?,
            db.create_table(TableSpec::new("checking", balance()).capacity(n))?,
        ];
        debug_assert_eq!(t, [ACCOUNT, SAVING, CHECKING]);
        let mut scratch = Vec::new();
        let mut total = 0i64;
        for c in 0..self.cfg.customers {
            let (s, k) = initial_balances(c);
            total += s + k;
            db.table(ACCOUNT).load(name_of(c), &mut scratch, |r| {
                r.set_int(CUSTID, c as i64);
                r.set_str(NAME, format!("cust{c:012}").as_bytes())
            })?;
            db.table(SAVING).load(c, &mut scratch, |r| {
                r.set_int(BALANCE, s);
                Ok(())
            })?;
            db.table(CHECKING).load(c, &mut scratch, |r| {
                r.set_int(BALANCE, k);
                Ok(())
            })?;
        }
        self.loaded_total.store(total, Ordering::Relaxed);
        self.ledger.reset();
        Ok(())
    }

    fn generator(&self, thread: u32, seed: u64) -> SmallBankGen {
        let s = seed ^ (thread as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        SmallBankGen {
            rng: SmallRng::seed_from_u64(s),
            thread,
        }
    }

    fn program(&self) -> SmallBankTxn {
        SmallBankTxn::new(Entry::new(self.ledger.clone()))
    }

    fn next(&self, g: &mut SmallBankGen, p: &mut SmallBankTxn) {
        let kind = Kind::ALL[g.rng.gen_range(0..Kind::ALL.len())];
        let c1 = self.customer(&mut g.rng);
        let mut c2 = c1;
        if kind == Kind::Amalgamate {
            while c2 == c1 {
                c2 = self.customer(&mut g.rng);
            }
        }
        let v = match kind {
            Kind::TransactSavings => g.rng.gen_range(-MAX_AMOUNT..=MAX_AMOUNT),
            _ => g.rng.gen_range(1..=MAX_AMOUNT),
        };
        p.set(kind, name_of(c1), name_of(c2), v, g.thread);
    }

    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let mut buf = Vec::new();
        let mut total = 0i64;
        for c in 0..self.cfg.customers {
            match inspect::int(db, ACCOUNT, name_of(c), CUSTID, &mut buf) {
                Some(id) if id == c as i64 => {}
                other => return Err(format!("account of customer {c}: custid {other:?}").into()),
            }
            let s = inspect::int(db, SAVING, c, BALANCE, &mut buf)
                .ok_or_else(|| format!("customer {c} has no savings row"))?;
            let k = inspect::int(db, CHECKING, c, BALANCE, &mut buf)
                .ok_or_else(|| format!("customer {c} has no checking row"))?;
            if s < 0 {
                return Err(format!("customer {c}: negative savings balance {s}").into());
            }
            total += s + k;
        }
        let expected = self.loaded_total.load(Ordering::Relaxed) + self.ledger.total();
        if total != expected {
            return Err(format!(
                "money not conserved: balances sum to {total}, but loaded {} + net deposits {} = {expected}",
                self.loaded_total.load(Ordering::Relaxed),
                self.ledger.total()
            ).into());
        }
        Ok(())
    }
}
