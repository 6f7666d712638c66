//! `front-accounting` — a retail company's ERP after the thesis's Front Accounting workload (Xie
//! 2016, §4.6: "17 transactions that simulate the workload of a retail company: the company
//! purchases goods from suppliers at a low price and sells them to customers at a higher price …
//! five read-write transactions: create-order, payment, delivery, pay-supplier, and
//! stock-adjustment, and 12 read-only transactions to query order information"; set-up: "100
//! different types of goods, and on average … a bulk purchase for every 1,000 sale orders").
//!
//! # What is reconstructed, and what is not
//!
//! The thesis names the five read-write transactions and the set-up, nothing more; its workload's
//! code is not public. This module rebuilds it on FrontAccounting's (PHP on MySQL) own data model,
//! read from its public schema (`sql/en_US-new.sql` of `FrontAccountingERP/FA`): sales orders
//! (`sales_orders`, `sales_order_details`), customer documents (`debtor_trans`: delivery notes,
//! invoices, customer payments) and balances (`debtors_master`), stock movements (`stock_moves`, one
//! per document and item, their sum the quantity on hand), supplier documents (`supp_trans`:
//! invoices, payments) and the per-document-type numbering (`sys_types` and its next number). It is
//! a reconstruction, not a port:
//!
//! * one line per sales order (FA's orders have lines in `sales_order_details`);
//! * a delivery is FA's delivery note and its invoice in one document (FA: two, or a direct
//!   invoice): the stock leaves, the customer is invoiced;
//! * **pay-supplier is the bulk purchase**: the thesis lists no purchase among its five read-write
//!   transactions yet makes one per 1,000 sale orders; here pay-supplier is FA's direct supplier
//!   invoice paid at once — goods received for every item, the supplier invoiced and paid. Its mix
//!   share makes one per ~1,000 create-orders;
//! * the quantity on hand and the quantity on order (FA computes both from `stock_moves` and open
//!   orders) are kept on the item's row, which the check compares with the moves and the orders;
//! * no general ledger, bank accounts, taxes, currencies, locations or price lists.
//!
//! Each document takes the next number of its type from `sys_types` when it is written — the rows
//! every document of a type updates, and what makes create-order, delivery and payment contend
//! (the thesis's tool put each in a group of its own, Fig. 4.7).
//!
//! # Tables
//!
//! | table          | key                                  | columns |
//! |----------------|--------------------------------------|---------|
//! | `sys_types`    | document type (6)                    | next number |
//! | `stock_master` | item ([`FaConfig::goods`], 100)      | on hand, on order (undelivered), price, cost |
//! | `sales_orders` | order id                             | customer, item, quantity, unit price, status (ordered, delivered, paid), number |
//! | `debtor_trans` | order id · 2 + (0 invoice, 1 payment) | customer, amount, number |
//! | `debtors_master` | customer (1,000)                   | orders, invoiced, paid |
//! | `stock_moves`  | document id · 256 + item             | item, quantity (signed), type (delivery, adjustment, purchase) |
//! | `supp_trans`   | purchase id · 2 + (0 invoice, 1 payment) | supplier, amount, number |
//! | `suppliers`    | supplier (10)                        | invoiced, paid |
//!
//! # The transactions and the mix (per 100,000)
//!
//! Each worker is a clerk: it takes orders, delivers and invoices the oldest undelivered one it
//! took, records the payment of the oldest unpaid invoice, adjusts stock now and then, and rarely
//! makes the bulk purchase; the queries look at what it handled. Document ids are the worker's
//! number above bit 32. A drawn kind whose object does not exist yet becomes the flow's next step
//! (delivery with nothing to deliver: create-order; payment with nothing to pay: delivery or
//! create-order; a query of a document it has none of: the customer's balance).
//!
//! | transaction        | mix    | pieces                                                           | refuses (piece 0, before any write) |
//! |--------------------|--------|------------------------------------------------------------------|---------|
//! | **CreateOrder**    | 25,000 | next order number; item: read price, on order + qty; insert the order; customer's orders + 1 | — |
//! | **Delivery**       | 22,000 | item: on hand − qty, on order − qty; order → delivered (reads qty, price); next delivery number; insert the invoice; insert the stock move; customer's invoiced + amount | not enough on hand |
//! | **Payment**        | 20,000 | order delivered → paid (reads qty, price); next payment number; insert the payment; customer's paid + amount | not delivered |
//! | StockAdjustment    | 2,000  | item: on hand ± 1–3; next adjustment number; insert the stock move | below zero |
//! | PaySupplier        | 25     | next supplier-invoice number; every item: on hand + [`BULK`] (reads cost); insert the moves; insert the invoice; next supplier-payment number; insert the payment; supplier's invoiced, paid + amount | — |
//! | ViewOrder          | 4,000  | read an order; read its item's price                             | — |
//! | ViewInvoice        | 3,000  | read an invoice                                                  | — |
//! | ViewPayment        | 2,500  | read a payment                                                   | — |
//! | CustomerBalance    | 3,000  | read a customer                                                  | — |
//! | CustomerOrders     | 3,000  | read the customer's row, then three of the worker's recent orders | — |
//! | OutstandingOrders  | 2,500  | read three of the worker's undelivered orders                    | — |
//! | ItemStatus         | 4,000  | read an item's on hand and on order                              | — |
//! | InventoryValuation | 1,500  | read on hand and cost of ten consecutive items                   | — |
//! | ItemMovements      | 2,000  | read the stock move of a delivery, then the item                 | — |
//! | SupplierBalance    | 1,500  | read a supplier                                                  | — |
//! | SupplierTrans      | 975    | read a purchase's supplier invoice and payment                   | — |
//! | NextReferences     | 3,000  | read every document type's next number                           | — |
//!
//! Stock: every item starts with [`INITIAL_STOCK`] on hand; an order is for 1–5 of a random item
//! (3 on average: ~30 per item per 1,000 orders), and a bulk purchase brings [`BULK`] of each. A
//! delivery short of stock is refused and its order stays undelivered (a later payment of it is
//! refused too).
//!
//! # Invariants ([`Workload::check`], after every run)
//!
//! * per item: on hand = initial + Σ its stock moves (purchases − deliveries ± adjustments), ≥ 0;
//!   on order = Σ quantities of its undelivered orders;
//! * per order: ordered — no invoice, no payment; delivered — its invoice (quantity × price) and
//!   its delivery's stock move, no payment; paid — also its payment of the invoice's amount;
//! * per customer: orders, invoiced and paid are the sums of its documents, paid ≤ invoiced;
//! * per supplier: invoiced and paid are the sums of its documents, paid ≤ invoiced; a purchase's
//!   invoice is the sum of its moves at cost;
//! * per document type: the next number = the documents of the type, and their numbers are
//!   distinct (no number given twice, none lost).

pub mod options;
pub mod txn;

use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{Database, LoadError, Schema, TableId, TableSpec};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::VecDeque;

pub use txn::{FaTxn, Kind};

pub const SYS_TYPES: TableId = 0;
pub const STOCK: TableId = 1;
pub const ORDERS: TableId = 2;
pub const DEBTOR_TRANS: TableId = 3;
pub const DEBTORS: TableId = 4;
pub const MOVES: TableId = 5;
pub const SUPP_TRANS: TableId = 6;
pub const SUPPLIERS: TableId = 7;

/// `sys_types` column, and the document types (its keys).
pub const NEXT: usize = 0;
pub const T_ORDER: u64 = 0;
pub const T_DELIVERY: u64 = 1;
pub const T_PAYMENT: u64 = 2;
pub const T_ADJUSTMENT: u64 = 3;
pub const T_SUPP_INVOICE: u64 = 4;
pub const T_SUPP_PAYMENT: u64 = 5;
pub const DOC_TYPES: u64 = 6;
/// `stock_master` columns.
pub const ON_HAND: usize = 0;
pub const ON_ORDER: usize = 1;
pub const PRICE: usize = 2;
pub const COST: usize = 3;
/// `sales_orders` columns, and the values of `O_STATUS`.
pub const O_CUSTOMER: usize = 0;
pub const O_ITEM: usize = 1;
pub const O_QTY: usize = 2;
pub const O_PRICE: usize = 3;
pub const O_STATUS: usize = 4;
pub const O_NUMBER: usize = 5;
pub const ORDERED: i64 = 1;
pub const DELIVERED: i64 = 2;
pub const PAID: i64 = 3;
/// `debtor_trans` and `supp_trans` columns (`D_WHO`: the customer or the supplier).
pub const D_WHO: usize = 0;
pub const D_AMOUNT: usize = 1;
pub const D_NUMBER: usize = 2;
/// `debtors_master` columns.
pub const C_ORDERS: usize = 0;
pub const C_INVOICED: usize = 1;
pub const C_PAID: usize = 2;
/// `stock_moves` columns, and the values of `M_TYPE`.
pub const M_ITEM: usize = 0;
pub const M_QTY: usize = 1;
pub const M_TYPE: usize = 2;
pub const M_DELIVERY: i64 = 0;
pub const M_ADJUSTMENT: i64 = 1;
pub const M_PURCHASE: i64 = 2;
/// `suppliers` columns.
pub const S_INVOICED: usize = 0;
pub const S_PAID: usize = 1;

/// Customers.
pub const CUSTOMERS: u64 = 1_000;
/// Suppliers.
pub const SUPPLIERS_N: u64 = 10;
/// Every item's quantity on hand at the start.
pub const INITIAL_STOCK: i64 = 100;
/// What a bulk purchase brings of each item.
pub const BULK: i64 = 30;
/// Orders a worker remembers; older ones stay in the database.
pub const REMEMBERED: usize = 64;
/// Items InventoryValuation reads.
pub const VALUATION_ITEMS: u64 = 10;
/// Orders CustomerOrders and OutstandingOrders read.
pub const LISTED: usize = 3;

/// The mix, per 100,000 (the module doc's table).
pub const MIX: [(Kind, u32); 17] = [
    (Kind::CreateOrder, 25_000),
    (Kind::Delivery, 22_000),
    (Kind::Payment, 20_000),
    (Kind::StockAdjustment, 2_000),
    (Kind::PaySupplier, 25),
    (Kind::ViewOrder, 4_000),
    (Kind::ViewInvoice, 3_000),
    (Kind::ViewPayment, 2_500),
    (Kind::CustomerBalance, 3_000),
    (Kind::CustomerOrders, 3_000),
    (Kind::OutstandingOrders, 2_500),
    (Kind::ItemStatus, 4_000),
    (Kind::InventoryValuation, 1_500),
    (Kind::ItemMovements, 2_000),
    (Kind::SupplierBalance, 1_500),
    (Kind::SupplierTrans, 975),
    (Kind::NextReferences, 3_000),
];

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FaConfig {
    /// Types of goods (the thesis's 100).
    pub goods: u64,
}

impl Default for FaConfig {
    fn default() -> Self {
        FaConfig { goods: 100 }
    }
}

/// The workload.
pub struct FrontAccounting {
    cfg: FaConfig,
}

impl FrontAccounting {
    pub fn new(cfg: FaConfig) -> crate::Result<Self> {
        if cfg.goods < VALUATION_ITEMS || cfg.goods > 256 {
            return Err(Error::invalid("goods", "must be between 10 and 256"));
        }
        Ok(FrontAccounting { cfg })
    }
    pub fn config(&self) -> &FaConfig {
        &self.cfg
    }
    /// An item's selling price and its cost (bought low, sold high).
    pub fn price_cost(item: u64) -> (i64, i64) {
        let cost = 10 + (item as i64 * 7) % 40;
        (cost + cost / 2 + 5, cost)
    }
}

/// An order a worker took, and what it believes of it.
#[derive(Clone, Copy, Debug)]
pub struct Taken {
    pub id: u64,
    pub customer: u64,
    pub item: u64,
    pub qty: i64,
    pub status: i64,
}

/// Per-thread generator: a clerk's session.
pub struct FaGen {
    rng: SmallRng,
    thread: u64,
    ids: u64,
    orders: VecDeque<Taken>,
    purchases: VecDeque<(u64, u64)>,
}

impl FaGen {
    fn id(&mut self) -> u64 {
        self.ids += 1;
        (self.thread << 32) | self.ids
    }
    fn oldest(&self, status: i64) -> Option<usize> {
        self.orders.iter().position(|o| o.status == status)
    }
    /// What a drawn `want` becomes given the session's state (the module doc's fallbacks).
    fn resolve(&self, want: Kind) -> Kind {
        let any = |s: i64| self.oldest(s).is_some();
        match want {
            Kind::Delivery if !any(ORDERED) => Kind::CreateOrder,
            Kind::Payment if !any(DELIVERED) => {
                if any(ORDERED) {
                    Kind::Delivery
                } else {
                    Kind::CreateOrder
                }
            }
            Kind::ViewOrder | Kind::CustomerOrders | Kind::OutstandingOrders
                if self.orders.is_empty() =>
            {
                Kind::CustomerBalance
            }
            Kind::ViewInvoice | Kind::ItemMovements
                if !self.orders.iter().any(|o| o.status != ORDERED) =>
            {
                Kind::CustomerBalance
            }
            Kind::ViewPayment if !any(PAID) => Kind::CustomerBalance,
            Kind::SupplierTrans if self.purchases.is_empty() => Kind::SupplierBalance,
            k => k,
        }
    }
}

fn table(name: &str, cols: &[&str]) -> TableSpec {
    TableSpec::new(name, Schema::ints(cols).expect("schema"))
}

impl Workload for FrontAccounting {
    type Program = FaTxn;
    type Gen = FaGen;

    fn name(&self) -> &'static str {
        "front-accounting"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::json!({ "goods": self.cfg.goods })
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let docs = 1 << 16;
        let ids = [
            db.create_table(table("sys_types", &["next"]).capacity(DOC_TYPES as usize))?,
            db.create_table(
                table("stock_master", &["on_hand", "on_order", "price", "cost"])
                    .capacity(self.cfg.goods as usize),
            )?,
            db.create_table(
                table(
                    "sales_orders",
                    &["customer", "item", "qty", "price", "status", "number"],
                )
                .ordered(4)
                .capacity(docs),
            )?,
            db.create_table(
                table("debtor_trans", &["customer", "amount", "number"])
                    .ordered(4)
                    .capacity(docs),
            )?,
            db.create_table(
                table("debtors_master", &["orders", "invoiced", "paid"])
                    .capacity(CUSTOMERS as usize),
            )?,
            db.create_table(
                table("stock_moves", &["item", "qty", "type"])
                    .ordered(4)
                    .capacity(docs),
            )?,
            db.create_table(
                table("supp_trans", &["supplier", "amount", "number"])
                    .ordered(4)
                    .capacity(1024),
            )?,
            db.create_table(
                table("suppliers", &["invoiced", "paid"]).capacity(SUPPLIERS_N as usize),
            )?,
        ];
        debug_assert_eq!(
            ids,
            [
                SYS_TYPES,
                STOCK,
                ORDERS,
                DEBTOR_TRANS,
                DEBTORS,
                MOVES,
                SUPP_TRANS,
                SUPPLIERS
            ]
        );
        let mut scratch = Vec::new();
        for t in 0..DOC_TYPES {
            db.table(SYS_TYPES).load(t, &mut scratch, |_| Ok(()))?;
        }
        for i in 0..self.cfg.goods {
            let (price, cost) = Self::price_cost(i);
            db.table(STOCK).load(i, &mut scratch, |r| {
                r.set_int(ON_HAND, INITIAL_STOCK);
                r.set_int(PRICE, price);
                r.set_int(COST, cost);
                Ok(())
            })?;
        }
        for c in 0..CUSTOMERS {
            db.table(DEBTORS).load(c, &mut scratch, |_| Ok(()))?;
        }
        for s in 0..SUPPLIERS_N {
            db.table(SUPPLIERS).load(s, &mut scratch, |_| Ok(()))?;
        }
        Ok(())
    }
    fn generator(&self, thread: u32, seed: u64) -> FaGen {
        FaGen {
            rng: SmallRng::seed_from_u64(
                seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            thread: thread as u64 + 1,
            ids: 0,
            orders: VecDeque::with_capacity(REMEMBERED),
            purchases: VecDeque::with_capacity(4),
        }
    }
    fn program(&self) -> FaTxn {
        FaTxn::default()
    }
    fn next(&self, g: &mut FaGen, p: &mut FaTxn) {
        let mut roll = g.rng.gen_range(0..100_000);
        let mut want = Kind::CreateOrder;
        for (k, n) in MIX {
            if roll < n {
                want = k;
                break;
            }
            roll -= n;
        }
        let kind = g.resolve(want);
        let goods = self.cfg.goods;
        *p = FaTxn {
            kind,
            goods,
            ..FaTxn::default()
        };
        let pick = |g: &mut FaGen, p: &mut FaTxn, o: Taken| {
            let _ = g;
            (p.order, p.customer, p.item, p.qty) = (o.id, o.customer, o.item, o.qty);
        };
        match kind {
            Kind::CreateOrder => {
                let o = Taken {
                    id: g.id(),
                    customer: g.rng.gen_range(0..CUSTOMERS),
                    item: g.rng.gen_range(0..goods),
                    qty: g.rng.gen_range(1..=5),
                    status: ORDERED,
                };
                if g.orders.len() == REMEMBERED {
                    g.orders.pop_front();
                }
                g.orders.push_back(o);
                pick(g, p, o);
            }
            Kind::Delivery | Kind::Payment => {
                let (from, to) = if kind == Kind::Delivery {
                    (ORDERED, DELIVERED)
                } else {
                    (DELIVERED, PAID)
                };
                let i = g.oldest(from).expect("resolved");
                g.orders[i].status = to;
                let o = g.orders[i];
                pick(g, p, o);
            }
            Kind::StockAdjustment => {
                p.order = g.id();
                p.item = g.rng.gen_range(0..goods);
                p.qty = [-3, -2, -1, 1, 2, 3][g.rng.gen_range(0..6)];
            }
            Kind::PaySupplier => {
                p.order = g.id();
                p.supplier = g.rng.gen_range(0..SUPPLIERS_N);
                if g.purchases.len() == 4 {
                    g.purchases.pop_front();
                }
                g.purchases.push_back((p.order, p.supplier));
            }
            Kind::ViewOrder => {
                let o = g.orders[g.rng.gen_range(0..g.orders.len())];
                pick(g, p, o);
            }
            Kind::ViewInvoice | Kind::ItemMovements | Kind::ViewPayment => {
                let at_least = if kind == Kind::ViewPayment {
                    PAID
                } else {
                    DELIVERED
                };
                let done: Vec<Taken> = g
                    .orders
                    .iter()
                    .filter(|o| o.status >= at_least)
                    .copied()
                    .collect();
                let o = done[g.rng.gen_range(0..done.len())];
                pick(g, p, o);
            }
            Kind::CustomerBalance => p.customer = g.rng.gen_range(0..CUSTOMERS),
            Kind::CustomerOrders | Kind::OutstandingOrders => {
                let mut listed: Vec<Taken> = g
                    .orders
                    .iter()
                    .rev()
                    .filter(|o| kind == Kind::CustomerOrders || o.status == ORDERED)
                    .take(LISTED)
                    .copied()
                    .collect();
                if listed.is_empty() {
                    listed.push(*g.orders.back().expect("resolved"));
                }
                p.customer = listed[0].customer;
                for i in 0..LISTED {
                    p.listed[i] = listed[i % listed.len()].id;
                }
            }
            Kind::ItemStatus => p.item = g.rng.gen_range(0..goods),
            Kind::InventoryValuation => p.item = g.rng.gen_range(0..=goods - VALUATION_ITEMS),
            Kind::SupplierBalance => p.supplier = g.rng.gen_range(0..SUPPLIERS_N),
            Kind::SupplierTrans => {
                let (id, s) = g.purchases[g.rng.gen_range(0..g.purchases.len())];
                (p.order, p.supplier) = (id, s);
            }
            Kind::NextReferences => {}
        }
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        check::check(self, db)
    }
}

mod check;

#[cfg(test)]
mod tests;
