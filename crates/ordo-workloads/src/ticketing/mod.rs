//! `ticketing` — booking tickets after the thesis's Fusion Ticket set-up (Xie 2016, §3.6: one
//! event, two categories of 10,000 seats each, "the 11 transactions that implement the business
//! logic necessary to book a ticket, including a single administrative transaction,
//! delete-order"), with create-order — the contended one — BASE-ified for Salt (Fig. 3.7) and
//! `--base-ified N|raw` for incremental BASE-ification (Fig. 3.9).
//!
//! # Where the flow comes from
//!
//! Fusion Ticket (PHP on MySQL) is not in this repository; its schema and booking flow were read
//! from its public sources (forks such as `TickyBoo`): a `Seat` row per seat with a status —
//! `free`, `res` (in a cart, with `seat_ts`, the time the reservation runs out, and the session
//! that holds it), `com` (ordered, with `seat_order_id`) — reserved by `Seat::reservate` (`SELECT
//! … FOR UPDATE` on free seats, then `UPDATE … seat_status='res'`), freed by `Seat::free` (the cart
//! gives a seat back) and by the shop once `seat_ts` has passed; an order turns its cart's seats
//! `com` and decrements the category's and the event's free counts (`Category_stat.cs_free`,
//! `Event_stat.es_free`) — the rows every order of the event updates; `Seat::cancel` (deleting an
//! order) frees its seats and gives the counts back; an order carries a handling fee and is paid
//! later. This module rebuilds that flow on its own schema; it is a reconstruction, not a port: one
//! seat per reservation and per order, the event's count folded into the two category rows (the
//! event view reads both), and seats, once handed back, free for anyone to reserve again.
//!
//! # Tables
//!
//! | table         | key                        | columns |
//! |---------------|----------------------------|---------|
//! | `category`    | category (2)               | seats sold, seats returned by deleted orders, price |
//! | `seat`        | category · seats + number  | status (free, reserved, sold), holder (the reservation or order), stamp (a reservation's expiry) |
//! | `reservation` | reservation id             | customer, category, seat, expiry — a cart entry |
//! | `orders`      | order id                   | customer, category, seat, price, handling fee, status (ordered, paid, deleted) |
//! | `payment`     | order id                   | customer, amount, refunded |
//! | `customer`    | customer (1,000)           | live orders, their total, the total paid, reservations in the cart |
//!
//! # The flow and the mix
//!
//! Each worker thread is a client terminal serving one customer at a time: it browses, puts seats
//! in the cart, checks out, pays; the administrator now and then deletes an order. Ids of
//! reservations and orders are the worker's number above bit 32, so every transaction on a
//! reservation or an order comes from the worker that made it, after it. Time is each worker's own
//! transaction count (a logical clock): a reservation expires [`RESERVATION_TTL`] ticks after it
//! was made.
//!
//! | transaction      | mix | pieces (each one access)                                              | refuses (user abort, before any write) |
//! |------------------|-----|-----------------------------------------------------------------------|-------------|
//! | ViewEvent        | 6%  | read both category rows                                               | — |
//! | ViewCategory     | 6%  | read a category row, then a row of its seat map ([`PLACEMAP_ROW`] seats) | — |
//! | ReserveSeat      | 28% | seat free → reserved; insert the reservation; customer's cart + 1     | seat taken |
//! | ViewCart         | 4%  | read a reservation, read its seat                                     | — |
//! | RemoveFromCart   | 3%  | seat reserved for it → free; delete the reservation; cart − 1         | not in the cart |
//! | ReleaseExpired   | 2%  | as RemoveFromCart, once the reservation's stamp has passed            | not expired |
//! | **CreateOrder**  | 30% | seat reserved → sold to the order; **category sold + 1** (reads the price); delete the reservation; insert the order; customer's orders, total + 1, cart − 1 | the reservation is gone |
//! | Payment          | 12% | order ordered → paid; insert the payment; customer's paid + total     | nothing to pay |
//! | ViewOrder        | 4%  | read an order, read its payment                                       | — |
//! | ViewCustomer     | 4%  | read a customer                                                       | — |
//! | DeleteOrder      | 1%  | order → deleted; its seat → free; category sold − 1, returned + 1; refund a payment; customer's counts back | nothing to delete |
//!
//! A drawn kind whose object does not exist yet becomes the flow's next step: checkout, cart
//! views and releases with an empty cart reserve a seat, a reservation with a full cart
//! ([`MAX_CART`]) checks out; a payment with nothing unpaid checks out or reserves; an order view
//! with no order views the customer, a deletion with no order views the event. CreateOrder takes
//! the oldest reservation of the cart, RemoveFromCart the newest; ReleaseExpired releases the
//! oldest at its expiry (the customer walked away; the shop's clock has reached it). A reserved
//! seat is a random seat of a random category (the customer picks it on the seat map), so as the
//! event fills more reservations find their seat taken; a reservation that failed leaves its
//! checkout to refuse ("the reservation is gone").
//!
//! The category row is the contended one: every order of the category updates it. Under
//! `acid-2pl` a CreateOrder holds it from its second piece to its commit; readers of it (the two
//! views) and DeleteOrder queue behind.
//!
//! # BASE-ification (`--base-ified N|raw`, [`crate::base_ified`])
//!
//! | setting     | BASE-ified                                   |
//! |-------------|----------------------------------------------|
//! | `0`         | nothing: every transaction ACID              |
//! | `1` (default) | CreateOrder                                |
//! | `2`         | CreateOrder, ViewEvent                       |
//! | `3`         | CreateOrder, ViewEvent, ViewCategory         |
//! | `raw`       | all eleven, one alkaline subtransaction per piece (the thesis's RAW OPS) |
//!
//! * **CreateOrder**: the seat claim (piece 0, one record: local under `salt-local`) is the first
//!   alkaline subtransaction — once it commits the order is accepted and the seat is the
//!   customer's — and each later step its own: the category count, the cart entry, the order row,
//!   the customer's totals. `salt` holds the category row's alkaline lock for its one update and
//!   commit instead of to the end of the order.
//! * **ViewEvent, ViewCategory** (ranks 2 and 3): the other transactions on the contended rows,
//!   found the thesis's way (raise the load, see whose latency grows): they read the category rows.
//!   An ACID read conflicts with a BASE order's saline lock, so an ACID view waits for every order
//!   in flight on its category to end — and, queues being FIFO, the orders behind it wait for the
//!   view. BASE-ified, each row (and seat) is read in its own alkaline subtransaction, which saline
//!   locks do not block. DeleteOrder, the only other writer of the rows, is 1% of the mix: it is
//!   BASE-ified only by `raw`.
//! * **raw**: every piece of every kind its own alkaline subtransaction.
//!
//! Why every cut keeps the invariants (even `raw`, which promises nothing in general): every
//! transaction decides in its first piece, on one record (the seat, or the order), and refuses
//! there; its later pieces cannot refuse and only insert or delete rows of its own reservation or
//! order (which no other worker touches) or add to counters (sold, returned, the customer's
//! totals), which commute. An accepted BASE transaction always finishes, and its handler
//! ([`ordo::txn::Program::alkaline_failed`]), called only if the protocol gave up on a later step,
//! goes on with the remaining steps.
//!
//! # Invariants ([`Workload::check`], after every run)
//!
//! * a free seat has no holder; a reserved seat's reservation exists and names it; a sold seat's
//!   order exists, is live (ordered or paid) and names it — so no seat is sold twice;
//! * every reservation's seat is reserved for it; every live order's seat is sold to it; a deleted
//!   order's seat no longer names it (deleted orders freed their seats);
//! * per category: sold = seats marked sold = live orders; returned = deleted orders;
//! * payments match orders: a paid order has its payment of its total, unrefunded; a deleted
//!   order's payment, if any, is refunded; an unpaid order has none;
//! * per customer: live orders, their total, the unrefunded payments and the reservations add up
//!   to the customer's row.

pub mod options;
pub mod txn;

use crate::base_ified::BaseIfied;
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{ColumnSet, Database, LoadError, Schema, TableId, TableSpec};
use ordo::txn::{Abort, Access, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};

pub use txn::{Kind, TicketTxn};

pub const CATEGORY: TableId = 0;
pub const SEAT: TableId = 1;
pub const ORDERS: TableId = 2;
pub const CUSTOMER: TableId = 3;
pub const RESERVATION: TableId = 4;
pub const PAYMENT: TableId = 5;

/// `category` columns.
pub const SOLD: usize = 0;
pub const RETURNED: usize = 1;
pub const PRICE: usize = 2;
/// `seat` columns, and the values of `STATUS`.
pub const STATUS: usize = 0;
pub const HOLDER: usize = 1;
pub const STAMP: usize = 2;
pub const FREE: i64 = 0;
pub const RESERVED: i64 = 1;
pub const SOLD_TO: i64 = 2;
/// `reservation` columns.
pub const R_CUSTOMER: usize = 0;
pub const R_CATEGORY: usize = 1;
pub const R_SEAT: usize = 2;
pub const R_EXPIRES: usize = 3;
/// `orders` columns, and the values of `O_STATUS`.
pub const O_CUSTOMER: usize = 0;
pub const O_CATEGORY: usize = 1;
pub const O_SEAT: usize = 2;
pub const O_PRICE: usize = 3;
pub const O_FEE: usize = 4;
pub const O_STATUS: usize = 5;
pub const ORDERED: i64 = 1;
pub const PAID: i64 = 2;
pub const DELETED: i64 = 3;
/// `payment` columns.
pub const P_CUSTOMER: usize = 0;
pub const P_AMOUNT: usize = 1;
pub const P_REFUNDED: usize = 2;
/// `customer` columns.
pub const C_ORDERS: usize = 0;
pub const C_SPENT: usize = 1;
pub const C_PAID: usize = 2;
pub const C_CART: usize = 3;

/// Categories of the event.
pub const CATEGORIES: u64 = 2;
/// Customers.
pub const CUSTOMERS: u64 = 1_000;
/// Seats ViewCategory reads: one row of the seat map.
pub const PLACEMAP_ROW: u64 = 4;
/// Reservations a worker's cart holds at most.
pub const MAX_CART: usize = 4;
/// How long a reservation lives, in its worker's transactions.
pub const RESERVATION_TTL: i64 = 16;
/// Orders a worker remembers (to pay, view or delete them); older ones stay in the database.
pub const REMEMBERED_ORDERS: usize = 32;
/// Handling fees (box-office pick-up, e-ticket, post).
pub const FEES: [i64; 3] = [0, 2, 5];

/// The mix, in percent (the module doc's table).
pub const MIX: [(Kind, u32); 11] = [
    (Kind::ViewEvent, 6),
    (Kind::ViewCategory, 6),
    (Kind::ReserveSeat, 28),
    (Kind::ViewCart, 4),
    (Kind::RemoveFromCart, 3),
    (Kind::ReleaseExpired, 2),
    (Kind::CreateOrder, 30),
    (Kind::Payment, 12),
    (Kind::ViewOrder, 4),
    (Kind::ViewCustomer, 4),
    (Kind::DeleteOrder, 1),
];

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

/// `--base-ified`'s default: CreateOrder (the thesis's Fig. 3.7).
pub const DEFAULT_BASE_IFIED: BaseIfied = BaseIfied::Types(1);

/// The workload.
pub struct Ticketing {
    cfg: TicketingConfig,
    base: BaseIfied,
}

impl Ticketing {
    pub fn new(cfg: TicketingConfig) -> crate::Result<Self> {
        if cfg.seats == 0 || cfg.seats >= 1 << 32 {
            return Err(Error::invalid("seats", "must be between 1 and 2^32 - 1"));
        }
        Ok(Ticketing {
            cfg,
            base: DEFAULT_BASE_IFIED,
        })
    }
    /// The workload with `base` BASE-ified (`--base-ified`).
    pub fn with_base_ified(mut self, base: BaseIfied) -> Self {
        self.base = base;
        self
    }
    pub fn config(&self) -> &TicketingConfig {
        &self.cfg
    }
    pub fn base_ified(&self) -> BaseIfied {
        self.base
    }
    fn seat_key(&self, category: u64, seat: u64) -> u64 {
        category * self.cfg.seats + seat
    }
}

/// A reservation a worker made and has not yet checked out, removed or let expire.
#[derive(Clone, Copy, Debug)]
struct Held {
    id: u64,
    customer: u64,
    category: u64,
    seat: u64,
    expires: i64,
}

/// An order a worker placed (and remembers).
#[derive(Clone, Copy, Debug)]
struct Placed {
    id: u64,
    customer: u64,
    category: u64,
    seat: u64,
    paid: bool,
}

/// Per-thread generator: a client terminal's session.
pub struct TicketGen {
    rng: SmallRng,
    thread: u64,
    ids: u64,
    clock: i64,
    /// The customer at the terminal (a new one comes when the cart is empty).
    customer: u64,
    cart: VecDeque<Held>,
    orders: VecDeque<Placed>,
}

impl TicketGen {
    fn id(&mut self) -> u64 {
        self.ids += 1;
        (self.thread << 32) | self.ids
    }
    /// What a drawn `want` becomes given the session's state (the module doc's fallbacks).
    fn resolve(&self, want: Kind) -> Kind {
        let checkout_or_reserve = if self.cart.is_empty() {
            Kind::ReserveSeat
        } else {
            Kind::CreateOrder
        };
        match want {
            Kind::ReserveSeat if self.cart.len() >= MAX_CART => Kind::CreateOrder,
            Kind::CreateOrder | Kind::ViewCart | Kind::RemoveFromCart | Kind::ReleaseExpired
                if self.cart.is_empty() =>
            {
                Kind::ReserveSeat
            }
            Kind::Payment if !self.orders.iter().any(|o| !o.paid) => checkout_or_reserve,
            Kind::ViewOrder if self.orders.is_empty() => Kind::ViewCustomer,
            Kind::DeleteOrder if self.orders.is_empty() => Kind::ViewEvent,
            k => k,
        }
    }
}

fn table(name: &str, cols: &[&str]) -> TableSpec {
    TableSpec::new(name, Schema::ints(cols).expect("schema"))
}

impl Workload for Ticketing {
    type Program = TicketTxn;
    type Gen = TicketGen;

    fn name(&self) -> &'static str {
        "ticketing"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::json!({ "seats": self.cfg.seats, "base_ified": self.base.to_string() })
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let seats = self.cfg.seats;
        let all = (CATEGORIES * seats) as usize;
        let cat = db.create_table(table("category", &["sold", "returned", "price"]).capacity(2))?;
        let seat = db.create_table(table("seat", &["status", "holder", "stamp"]).capacity(all))?;
        let orders = db.create_table(
            table(
                "orders",
                &["customer", "category", "seat", "price", "fee", "status"],
            )
            .ordered(4)
            .capacity(all),
        )?;
        let customer = db.create_table(
            table("customer", &["orders", "spent", "paid", "cart"]).capacity(CUSTOMERS as usize),
        )?;
        let reservation = db.create_table(
            table("reservation", &["customer", "category", "seat", "expires"])
                .ordered(4)
                .capacity(4096),
        )?;
        let payment = db.create_table(
            table("payment", &["customer", "amount", "refunded"])
                .ordered(4)
                .capacity(all),
        )?;
        debug_assert_eq!(
            (cat, seat, orders, customer, reservation, payment),
            (CATEGORY, SEAT, ORDERS, CUSTOMER, RESERVATION, PAYMENT)
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
        let mut rng =
            SmallRng::seed_from_u64(seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        TicketGen {
            customer: rng.gen_range(0..CUSTOMERS),
            rng,
            thread: thread as u64 + 1,
            ids: 0,
            clock: 0,
            cart: VecDeque::with_capacity(MAX_CART),
            orders: VecDeque::with_capacity(REMEMBERED_ORDERS),
        }
    }
    fn program(&self) -> TicketTxn {
        TicketTxn::default()
    }
    fn next(&self, g: &mut TicketGen, p: &mut TicketTxn) {
        g.clock += 1;
        let mut roll = g.rng.gen_range(0..100);
        let mut want = Kind::ViewEvent;
        for (k, pct) in MIX {
            if roll < pct {
                want = k;
                break;
            }
            roll -= pct;
        }
        let kind = g.resolve(want);
        let seats = self.cfg.seats;
        *p = TicketTxn {
            kind,
            cut: txn::cut(self.base, kind),
            seats,
            ..TicketTxn::default()
        };
        let held = |p: &mut TicketTxn, h: Held| {
            (p.reservation, p.customer, p.category, p.seat) = (h.id, h.customer, h.category, h.seat)
        };
        let placed = |p: &mut TicketTxn, o: Placed| {
            (p.order, p.customer, p.category, p.seat) = (o.id, o.customer, o.category, o.seat)
        };
        match kind {
            Kind::ViewEvent => {}
            Kind::ViewCategory => {
                p.category = g.rng.gen_range(0..CATEGORIES);
                p.seat = g.rng.gen_range(0..seats);
            }
            Kind::ReserveSeat => {
                if g.cart.is_empty() {
                    g.customer = g.rng.gen_range(0..CUSTOMERS);
                }
                let h = Held {
                    id: g.id(),
                    customer: g.customer,
                    category: g.rng.gen_range(0..CATEGORIES),
                    seat: g.rng.gen_range(0..seats),
                    expires: g.clock + RESERVATION_TTL,
                };
                g.cart.push_back(h);
                held(p, h);
                p.stamp = h.expires;
            }
            Kind::ViewCart => {
                let h = g.cart[g.rng.gen_range(0..g.cart.len())];
                held(p, h);
            }
            Kind::RemoveFromCart => held(p, g.cart.pop_back().expect("resolved")),
            Kind::ReleaseExpired => {
                let h = g.cart.pop_front().expect("resolved");
                g.clock = g.clock.max(h.expires);
                held(p, h);
                p.stamp = g.clock;
            }
            Kind::CreateOrder => {
                let h = g.cart.pop_front().expect("resolved");
                held(p, h);
                p.order = g.id();
                p.fee = FEES[g.rng.gen_range(0..FEES.len())];
                if g.orders.len() == REMEMBERED_ORDERS {
                    g.orders.pop_front();
                }
                g.orders.push_back(Placed {
                    id: p.order,
                    customer: h.customer,
                    category: h.category,
                    seat: h.seat,
                    paid: false,
                });
            }
            Kind::Payment => {
                let o = g.orders.iter_mut().find(|o| !o.paid).expect("resolved");
                o.paid = true;
                let o = *o;
                placed(p, o);
            }
            Kind::ViewOrder => {
                let o = g.orders[g.rng.gen_range(0..g.orders.len())];
                placed(p, o);
            }
            Kind::ViewCustomer => p.customer = g.rng.gen_range(0..CUSTOMERS),
            Kind::DeleteOrder => {
                let i = g.rng.gen_range(0..g.orders.len());
                let o = g.orders.remove(i).expect("resolved");
                placed(p, o);
            }
        }
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        check::check(self, db)
    }
}

mod check;

#[cfg(test)]
mod tests;
