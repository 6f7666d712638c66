//! `ticketing` — ticket sales after the thesis's Fusion Ticket set-up (Xie 2016, §3.6: one event,
//! two categories of 10,000 seats each), with the contended transaction, create-order,
//! BASE-ified.
//!
//! Tables: `category` (2 rows: the next seat to hand out, seats sold, the price), `seat` (one row
//! per seat: the order that bought it, 0 while free), `orders` (one row per order: customer,
//! category, seat) and `customer` (1,000 rows: orders placed, money spent).
//!
//! Transactions (a subset of Fusion Ticket's 11 that book or look at tickets):
//! * **CreateOrder** (80%): a customer buys a seat of a category. Pieces: take the category's next
//!   seat (the contended row: every order of the category updates it; sold out is a user abort);
//!   mark the seat sold to the order; insert the order; add it to the customer. BASE-ified with the
//!   seat hand-out (piece 0, one record: local under `salt-local`) as the first alkaline
//!   subtransaction — once it commits the order is accepted and the seat is the customer's — and
//!   each later piece its own alkaline subtransaction. `salt` holds the category row's exclusive lock for the hand-out only;
//!   `acid-2pl` (and every other protocol) to the end of the order.
//! * **ViewEvent** (10%, ACID): both categories' seats sold.
//! * **ViewCustomer** (10%, ACID): a customer's orders and spending.
//!
//! Invariants ([`Workload::check`], after every run): per category, the seats handed out equal the
//! seats sold and the seats marked sold; every sold seat's order exists and names that seat (so no
//! seat was sold twice); the orders, and the customers' order counts, add up to the seats sold.
//!
//! With `--seats N` per category the event sells out after 2N orders; later CreateOrders end in a
//! user abort ("sold out"), so a benchmark that should measure sales needs seats for its length.

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

pub const CATEGORY: TableId = 0;
pub const SEAT: TableId = 1;
pub const ORDERS: TableId = 2;
pub const CUSTOMER: TableId = 3;

/// `category` columns.
pub const NEXT_SEAT: usize = 0;
pub const SOLD: usize = 1;
pub const PRICE: usize = 2;
/// `seat` column.
pub const ORDER_ID: usize = 0;
/// `orders` columns.
pub const O_CUSTOMER: usize = 0;
pub const O_CATEGORY: usize = 1;
pub const O_SEAT: usize = 2;
/// `customer` columns.
pub const C_ORDERS: usize = 0;
pub const C_SPENT: usize = 1;

/// Categories of the event.
pub const CATEGORIES: u64 = 2;
/// Customers.
pub const CUSTOMERS: u64 = 1_000;

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TicketingConfig {
    /// Seats per category (the thesis's 10,000).
    pub seats: u64,
}

impl Default for TicketingConfig {
    fn default() -> Self {
        TicketingConfig { seats: 10_000 }
    }
}

/// The workload.
pub struct Ticketing {
    cfg: TicketingConfig,
}

impl Ticketing {
    pub fn new(cfg: TicketingConfig) -> crate::Result<Self> {
        if cfg.seats == 0 || cfg.seats >= 1 << 32 {
            return Err(Error::invalid("seats", "must be between 1 and 2^32 - 1"));
        }
        Ok(Ticketing { cfg })
    }
    pub fn config(&self) -> &TicketingConfig {
        &self.cfg
    }
    fn seat_key(&self, category: u64, seat: u64) -> u64 {
        category * self.cfg.seats + seat
    }
}

/// Which transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    #[default]
    CreateOrder,
    ViewEvent,
    ViewCustomer,
}

/// A transaction of the workload.
#[derive(Clone, Debug, Default)]
pub struct TicketTxn {
    pub kind: Kind,
    pub customer: u64,
    pub category: u64,
    /// The order's id (unique: the worker's number above bit 32).
    pub order: u64,
    /// Seats per category.
    pub seats: u64,
    /// The seat handed out (piece 1's result).
    pub seat: Option<u64>,
    pub price: i64,
}

impl Program for TicketTxn {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::CreateOrder => "CreateOrder",
            Kind::ViewEvent => "ViewEvent",
            Kind::ViewCustomer => "ViewCustomer",
        }
    }
    fn pieces(&self) -> usize {
        match self.kind {
            Kind::CreateOrder => 4,
            Kind::ViewEvent => CATEGORIES as usize,
            Kind::ViewCustomer => 1,
        }
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let all = ColumnSet::ALL;
        match (self.kind, piece) {
            (Kind::ViewCustomer, _) => out.push(Access::read(CUSTOMER, self.customer, all)),
            (Kind::CreateOrder, 0) => out.push(Access::update(CATEGORY, self.category, all, all)),
            (Kind::CreateOrder, 1) => {
                let seat = self.category * self.seats + self.seat.unwrap_or(0);
                out.push(Access::update(SEAT, seat, all, all));
            }
            (Kind::CreateOrder, 2) => out.push(Access::insert(ORDERS, self.order)),
            (Kind::CreateOrder, _) => out.push(Access::update(CUSTOMER, self.customer, all, all)),
            (Kind::ViewEvent, c) => out.push(Access::read(CATEGORY, c as u64, all)),
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if self.kind == Kind::CreateOrder && piece >= 1 {
            out.push(0);
        }
    }
    fn declaration_depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        // The seat is the one piece 0 hands out.
        if self.kind == Kind::CreateOrder && piece == 1 {
            out.push(0);
        }
    }
    fn commit_point(&self) -> Option<usize> {
        (self.kind == Kind::CreateOrder).then_some(3)
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        match (self.kind, piece) {
            (Kind::ViewCustomer, _) => {
                if tx.get(CUSTOMER, self.customer, ColumnSet::ALL)?.is_none() {
                    return Err(Abort::user("no such customer"));
                }
            }
            (Kind::CreateOrder, 0) => {
                let seats = self.seats as i64;
                let got = tx
                    .update(CATEGORY, self.category, ColumnSet::ALL, |r| {
                        let next = r.int(NEXT_SEAT);
                        if next >= seats {
                            return None;
                        }
                        r.set_int(NEXT_SEAT, next + 1);
                        r.set_int(SOLD, r.int(SOLD) + 1);
                        Some((next as u64, r.int(PRICE)))
                    })?
                    .flatten();
                let Some((seat, price)) = got else {
                    return Err(Abort::user("sold out"));
                };
                self.seat = Some(seat);
                self.price = price;
            }
            (Kind::CreateOrder, 1) => {
                let key = self.category * self.seats + self.seat.expect("piece 0 ran");
                let order = self.order as i64;
                let free = tx
                    .update(SEAT, key, ColumnSet::one(ORDER_ID), |r| {
                        let free = r.int(ORDER_ID) == 0;
                        if free {
                            r.set_int(ORDER_ID, order);
                        }
                        free
                    })?
                    .unwrap_or(false);
                if !free {
                    return Err(Abort::user("seat already sold"));
                }
            }
            (Kind::CreateOrder, 2) => {
                let (c, k, s) = (
                    self.customer,
                    self.category,
                    self.seat.expect("piece 0 ran"),
                );
                tx.insert(ORDERS, self.order, |r| {
                    r.set_int(O_CUSTOMER, c as i64);
                    r.set_int(O_CATEGORY, k as i64);
                    r.set_int(O_SEAT, s as i64);
                })?;
            }
            (Kind::CreateOrder, _) => {
                let price = self.price;
                let found = tx.update(CUSTOMER, self.customer, ColumnSet::ALL, |r| {
                    r.set_int(C_ORDERS, r.int(C_ORDERS) + 1);
                    r.set_int(C_SPENT, r.int(C_SPENT) + price);
                })?;
                if found.is_none() {
                    return Err(Abort::user("no such customer"));
                }
            }
            (Kind::ViewEvent, c) => {
                tx.get(CATEGORY, c as u64, ColumnSet::one(SOLD))?;
            }
        }
        Ok(())
    }
    /// CreateOrder: the seat hand-out (piece 0) is the first alkaline subtransaction, each later
    /// piece its own.
    fn alkaline_starts(&self, out: &mut Vec<usize>) {
        if self.kind == Kind::CreateOrder {
            out.extend([1, 2, 3]);
        }
    }
}

/// Per-thread generator: its random numbers and its next order number.
pub struct TicketGen {
    rng: SmallRng,
    thread: u64,
    orders: u64,
}

fn table(name: &str, cols: &[&str]) -> TableSpec {
    let schema = Schema::new(
        cols.iter()
            .map(|c| Column::new(*c, ColumnType::Int))
            .collect(),
    )
    .expect("schema");
    TableSpec::new(name, schema)
}

impl Workload for Ticketing {
    type Program = TicketTxn;
    type Gen = TicketGen;

    fn name(&self) -> &'static str {
        "ticketing"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let seats = self.cfg.seats;
        let cat =
            db.create_table(table("category", &["next_seat", "sold", "price"]).capacity(2))?;
        let seat =
            db.create_table(table("seat", &["order_id"]).capacity((CATEGORIES * seats) as usize))?;
        let orders = db.create_table(
            table("orders", &["customer", "category", "seat"])
                .ordered(4)
                .capacity((CATEGORIES * seats) as usize),
        )?;
        let customer =
            db.create_table(table("customer", &["orders", "spent"]).capacity(CUSTOMERS as usize))?;
        debug_assert_eq!(
            (cat, seat, orders, customer),
            (CATEGORY, SEAT, ORDERS, CUSTOMER)
        );
        let mut scratch = Vec::new();
        for c in 0..CATEGORIES {
            db.table(cat).load(c, &mut scratch, |r| {
                r.set_int(PRICE, 50 + 25 * c as i64);
                Ok(())
            })?;
            for s in 0..seats {
                db.table(seat)
                    .load(self.seat_key(c, s), &mut scratch, |_| Ok(()))?;
            }
        }
        for c in 0..CUSTOMERS {
            db.table(customer).load(c, &mut scratch, |_| Ok(()))?;
        }
        Ok(())
    }
    fn generator(&self, thread: u32, seed: u64) -> TicketGen {
        TicketGen {
            rng: SmallRng::seed_from_u64(
                seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            thread: thread as u64 + 1,
            orders: 0,
        }
    }
    fn program(&self) -> TicketTxn {
        TicketTxn::default()
    }
    fn next(&self, g: &mut TicketGen, p: &mut TicketTxn) {
        let roll = g.rng.gen_range(0..100);
        g.orders += 1;
        *p = TicketTxn {
            kind: match roll {
                0..80 => Kind::CreateOrder,
                80..90 => Kind::ViewEvent,
                _ => Kind::ViewCustomer,
            },
            customer: g.rng.gen_range(0..CUSTOMERS),
            category: g.rng.gen_range(0..CATEGORIES),
            order: (g.thread << 32) | g.orders,
            seats: self.cfg.seats,
            seat: None,
            price: 0,
        };
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        use crate::inspect::{int, with_row};
        let mut buf = Vec::new();
        let mut sold_total = 0i64;
        for c in 0..CATEGORIES {
            let (next, sold) = with_row(db, CATEGORY, c, &mut buf, |r| {
                (r.int(NEXT_SEAT), r.int(SOLD))
            })
            .ok_or("a category is missing")?;
            if next != sold {
                return Err(format!("category {c}: {next} seats handed out, {sold} sold").into());
            }
            let mut marked = 0;
            for s in 0..self.cfg.seats {
                let o = int(db, SEAT, self.seat_key(c, s), ORDER_ID, &mut buf)
                    .ok_or(format!("seat {c}/{s} missing"))?;
                if o == 0 {
                    continue;
                }
                marked += 1;
                let names = with_row(db, ORDERS, o as u64, &mut buf, |r| {
                    (r.int(O_CATEGORY), r.int(O_SEAT))
                })
                .ok_or(format!(
                    "seat {c}/{s} sold to order {o}, which does not exist"
                ))?;
                if names != (c as i64, s as i64) {
                    return Err(format!(
                        "seat {c}/{s} sold to order {o}, which names seat {}/{}: a seat sold twice",
                        names.0, names.1
                    )
                    .into());
                }
            }
            if marked != sold {
                return Err(
                    format!("category {c}: {sold} sold, {marked} seats marked sold").into(),
                );
            }
            sold_total += sold;
        }
        let t = db.table(ORDERS);
        let orders = t
            .range(0, u64::MAX)
            .filter(|&(k, _)| with_row(db, ORDERS, k, &mut buf, |_| ()).is_some())
            .count() as i64;
        let placed: i64 = (0..CUSTOMERS)
            .map(|c| int(db, CUSTOMER, c, C_ORDERS, &mut buf).unwrap_or(0))
            .sum();
        if orders != sold_total || placed != sold_total {
            return Err(format!(
                "{sold_total} seats sold, but {orders} orders and {placed} orders counted by customers"
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
