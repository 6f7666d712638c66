//! The seventeen transactions of `front-accounting` as [`Program`]s: their pieces, declarations
//! and logic (the module doc of [`super`] teaches the flow).

use super::*;
use ordo::storage::ColumnSet;
use ordo::txn::{Abort, Access, Program, Tx, TxResult};

/// Which transaction: the five read-write ones first, then the twelve queries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// A sale order for some quantity of one item.
    #[default]
    CreateOrder,
    /// Delivers and invoices an order: the stock leaves.
    Delivery,
    /// Records the customer's payment of a delivered order's invoice.
    Payment,
    /// Corrects an item's quantity on hand (damage, a count).
    StockAdjustment,
    /// The bulk purchase: goods of every item received from a supplier, invoiced and paid.
    PaySupplier,
    ViewOrder,
    ViewInvoice,
    ViewPayment,
    CustomerBalance,
    CustomerOrders,
    OutstandingOrders,
    ItemStatus,
    InventoryValuation,
    ItemMovements,
    SupplierBalance,
    SupplierTrans,
    NextReferences,
}

impl Kind {
    /// Every kind, in declaration order.
    pub const ALL: [Kind; 17] = [
        Kind::CreateOrder,
        Kind::Delivery,
        Kind::Payment,
        Kind::StockAdjustment,
        Kind::PaySupplier,
        Kind::ViewOrder,
        Kind::ViewInvoice,
        Kind::ViewPayment,
        Kind::CustomerBalance,
        Kind::CustomerOrders,
        Kind::OutstandingOrders,
        Kind::ItemStatus,
        Kind::InventoryValuation,
        Kind::ItemMovements,
        Kind::SupplierBalance,
        Kind::SupplierTrans,
        Kind::NextReferences,
    ];

    /// The transaction's name (per-type statistics, `--callas-groups`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::CreateOrder => "CreateOrder",
            Kind::Delivery => "Delivery",
            Kind::Payment => "Payment",
            Kind::StockAdjustment => "StockAdjustment",
            Kind::PaySupplier => "PaySupplier",
            Kind::ViewOrder => "ViewOrder",
            Kind::ViewInvoice => "ViewInvoice",
            Kind::ViewPayment => "ViewPayment",
            Kind::CustomerBalance => "CustomerBalance",
            Kind::CustomerOrders => "CustomerOrders",
            Kind::OutstandingOrders => "OutstandingOrders",
            Kind::ItemStatus => "ItemStatus",
            Kind::InventoryValuation => "InventoryValuation",
            Kind::ItemMovements => "ItemMovements",
            Kind::SupplierBalance => "SupplierBalance",
            Kind::SupplierTrans => "SupplierTrans",
            Kind::NextReferences => "NextReferences",
        }
    }

    /// Whether it writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Kind::CreateOrder
                | Kind::Delivery
                | Kind::Payment
                | Kind::StockAdjustment
                | Kind::PaySupplier
        )
    }

    /// Pieces of a transaction of this kind.
    pub fn pieces(self) -> usize {
        match self {
            Kind::CreateOrder => 4,
            Kind::Delivery => 6,
            Kind::Payment => 4,
            Kind::StockAdjustment => 3,
            Kind::PaySupplier => 7,
            Kind::ViewOrder | Kind::ItemMovements | Kind::SupplierTrans => 2,
            Kind::CustomerOrders => 1 + LISTED,
            Kind::OutstandingOrders => LISTED,
            Kind::ViewInvoice
            | Kind::ViewPayment
            | Kind::CustomerBalance
            | Kind::ItemStatus
            | Kind::InventoryValuation
            | Kind::SupplierBalance
            | Kind::NextReferences => 1,
        }
    }
}

/// A transaction of the workload: its kind and every input (all known when it is generated: no
/// declaration depends on an earlier piece), and what its pieces found.
#[derive(Clone, Debug, Default)]
pub struct FaTxn {
    pub kind: Kind,
    /// Types of goods.
    pub goods: u64,
    /// The order (or the adjustment's, the purchase's document id).
    pub order: u64,
    pub customer: u64,
    pub supplier: u64,
    /// The item (InventoryValuation: the first of its items).
    pub item: u64,
    /// The order's quantity, or the adjustment's (signed).
    pub qty: i64,
    /// CustomerOrders, OutstandingOrders: the orders listed.
    pub listed: [u64; LISTED],
    /// Found by the pieces: the document's number, its unit price, its amount.
    pub number: i64,
    pub price: i64,
    pub amount: i64,
    /// PaySupplier: each item's cost.
    pub costs: Vec<i64>,
}

/// The key of an order's invoice (`payment`: its payment) in `debtor_trans`, or a purchase's in
/// `supp_trans`.
pub fn doc_key(id: u64, payment: bool) -> u64 {
    id << 1 | payment as u64
}

/// The key of a document's stock move of `item`.
pub fn move_key(id: u64, item: u64) -> u64 {
    id << 8 | item
}

fn cols(c: &[usize]) -> ColumnSet {
    ColumnSet::of(c)
}

fn next_number(t: u64) -> Access {
    Access::update(SYS_TYPES, t, cols(&[NEXT]), cols(&[NEXT]))
}

impl FaTxn {
    fn valuation_items(&self) -> std::ops::Range<u64> {
        self.item..self.item + VALUATION_ITEMS
    }
}

impl Program for FaTxn {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn pieces(&self) -> usize {
        self.kind.pieces()
    }

    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let stock = |c: &[usize], w: &[usize]| Access::update(STOCK, self.item, cols(c), cols(w));
        let order_read = cols(&[O_CUSTOMER, O_ITEM, O_QTY, O_PRICE, O_STATUS, O_NUMBER]);
        let a = match (self.kind, piece) {
            (Kind::CreateOrder, 0) => next_number(T_ORDER),
            (Kind::CreateOrder, 1) => stock(&[PRICE, ON_ORDER], &[ON_ORDER]),
            (Kind::CreateOrder, 2) => Access::insert(ORDERS, self.order),
            (Kind::CreateOrder, _) => {
                Access::update(DEBTORS, self.customer, cols(&[C_ORDERS]), cols(&[C_ORDERS]))
            }
            (Kind::Delivery, 0) => stock(&[ON_HAND, ON_ORDER], &[ON_HAND, ON_ORDER]),
            (Kind::Delivery, 1) => Access::update(
                ORDERS,
                self.order,
                cols(&[O_QTY, O_PRICE, O_STATUS]),
                cols(&[O_STATUS]),
            ),
            (Kind::Delivery, 2) => next_number(T_DELIVERY),
            (Kind::Delivery, 3) => Access::insert(DEBTOR_TRANS, doc_key(self.order, false)),
            (Kind::Delivery, 4) => Access::insert(MOVES, move_key(self.order, self.item)),
            (Kind::Delivery, _) => Access::update(
                DEBTORS,
                self.customer,
                cols(&[C_INVOICED]),
                cols(&[C_INVOICED]),
            ),
            (Kind::Payment, 0) => Access::update(
                ORDERS,
                self.order,
                cols(&[O_QTY, O_PRICE, O_STATUS]),
                cols(&[O_STATUS]),
            ),
            (Kind::Payment, 1) => next_number(T_PAYMENT),
            (Kind::Payment, 2) => Access::insert(DEBTOR_TRANS, doc_key(self.order, true)),
            (Kind::Payment, _) => {
                Access::update(DEBTORS, self.customer, cols(&[C_PAID]), cols(&[C_PAID]))
            }
            (Kind::StockAdjustment, 0) => stock(&[ON_HAND], &[ON_HAND]),
            (Kind::StockAdjustment, 1) => next_number(T_ADJUSTMENT),
            (Kind::StockAdjustment, _) => Access::insert(MOVES, move_key(self.order, self.item)),
            (Kind::PaySupplier, 0) => next_number(T_SUPP_INVOICE),
            (Kind::PaySupplier, 1) => {
                for i in 0..self.goods {
                    out.push(Access::update(
                        STOCK,
                        i,
                        cols(&[ON_HAND, COST]),
                        cols(&[ON_HAND]),
                    ));
                }
                return;
            }
            (Kind::PaySupplier, 2) => {
                for i in 0..self.goods {
                    out.push(Access::insert(MOVES, move_key(self.order, i)));
                }
                return;
            }
            (Kind::PaySupplier, 3) => Access::insert(SUPP_TRANS, doc_key(self.order, false)),
            (Kind::PaySupplier, 4) => next_number(T_SUPP_PAYMENT),
            (Kind::PaySupplier, 5) => Access::insert(SUPP_TRANS, doc_key(self.order, true)),
            (Kind::PaySupplier, _) => Access::update(
                SUPPLIERS,
                self.supplier,
                cols(&[S_INVOICED, S_PAID]),
                cols(&[S_INVOICED, S_PAID]),
            ),
            (Kind::ViewOrder, 0) => Access::read(ORDERS, self.order, order_read),
            (Kind::ViewOrder, _) => Access::read(STOCK, self.item, cols(&[PRICE])),
            (Kind::ViewInvoice, _) => {
                Access::read(DEBTOR_TRANS, doc_key(self.order, false), ColumnSet::ALL)
            }
            (Kind::ViewPayment, _) => {
                Access::read(DEBTOR_TRANS, doc_key(self.order, true), ColumnSet::ALL)
            }
            (Kind::CustomerBalance, _) | (Kind::CustomerOrders, 0) => {
                Access::read(DEBTORS, self.customer, ColumnSet::ALL)
            }
            (Kind::CustomerOrders, i) => Access::read(ORDERS, self.listed[i - 1], order_read),
            (Kind::OutstandingOrders, i) => Access::read(ORDERS, self.listed[i], order_read),
            (Kind::ItemStatus, _) => Access::read(STOCK, self.item, cols(&[ON_HAND, ON_ORDER])),
            (Kind::InventoryValuation, _) => {
                for i in self.valuation_items() {
                    out.push(Access::read(STOCK, i, cols(&[ON_HAND, COST])));
                }
                return;
            }
            (Kind::ItemMovements, 0) => {
                Access::read(MOVES, move_key(self.order, self.item), ColumnSet::ALL)
            }
            (Kind::ItemMovements, _) => Access::read(STOCK, self.item, cols(&[ON_HAND, ON_ORDER])),
            (Kind::SupplierBalance, _) => Access::read(SUPPLIERS, self.supplier, ColumnSet::ALL),
            (Kind::SupplierTrans, i) => {
                Access::read(SUPP_TRANS, doc_key(self.order, i == 1), ColumnSet::ALL)
            }
            (Kind::NextReferences, _) => {
                for t in 0..DOC_TYPES {
                    out.push(Access::read(SYS_TYPES, t, cols(&[NEXT])));
                }
                return;
            }
        };
        out.push(a);
    }

    /// Every key is an input of the transaction: no declaration waits for an earlier piece.
    fn declaration_depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}

    /// Delivery, Payment and StockAdjustment refuse in their first piece, on one record; no later
    /// piece of any transaction refuses.
    fn commit_point(&self) -> Option<usize> {
        matches!(
            self.kind,
            Kind::Delivery | Kind::Payment | Kind::StockAdjustment
        )
        .then_some(0)
    }

    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let order_read = cols(&[O_CUSTOMER, O_ITEM, O_QTY, O_PRICE, O_STATUS, O_NUMBER]);
        match (self.kind, piece) {
            (Kind::CreateOrder, 0) => self.number = take_number(tx, T_ORDER)?,
            (Kind::CreateOrder, 1) => {
                let qty = self.qty;
                let price = tx.update(STOCK, self.item, cols(&[PRICE, ON_ORDER]), |r| {
                    r.set_int(ON_ORDER, r.int(ON_ORDER) + qty);
                    r.int(PRICE)
                })?;
                self.price = price.unwrap_or(0);
            }
            (Kind::CreateOrder, 2) => {
                let (c, i, q, p, n) = (self.customer, self.item, self.qty, self.price, self.number);
                tx.insert(ORDERS, self.order, |r| {
                    r.set_int(O_CUSTOMER, c as i64);
                    r.set_int(O_ITEM, i as i64);
                    r.set_int(O_QTY, q);
                    r.set_int(O_PRICE, p);
                    r.set_int(O_STATUS, ORDERED);
                    r.set_int(O_NUMBER, n);
                })?;
            }
            (Kind::CreateOrder, _) => add(tx, DEBTORS, self.customer, &[(C_ORDERS, 1)])?,
            (Kind::Delivery, 0) => {
                let qty = self.qty;
                let ok = tx.update(STOCK, self.item, cols(&[ON_HAND, ON_ORDER]), |r| {
                    if r.int(ON_HAND) < qty {
                        return false;
                    }
                    r.set_int(ON_HAND, r.int(ON_HAND) - qty);
                    r.set_int(ON_ORDER, r.int(ON_ORDER) - qty);
                    true
                })?;
                if !ok.unwrap_or(false) {
                    return Err(Abort::user("not enough on hand"));
                }
            }
            (Kind::Delivery, 1) => {
                // Only the worker that took the order delivers it, once: it is ordered.
                let amount =
                    tx.update(ORDERS, self.order, cols(&[O_QTY, O_PRICE, O_STATUS]), |o| {
                        o.set_int(O_STATUS, DELIVERED);
                        o.int(O_QTY) * o.int(O_PRICE)
                    })?;
                self.amount = amount.unwrap_or(0);
            }
            (Kind::Delivery, 2) => self.number = take_number(tx, T_DELIVERY)?,
            (Kind::Delivery, 3) => document(
                tx,
                DEBTOR_TRANS,
                doc_key(self.order, false),
                self.customer,
                self.amount,
                self.number,
            )?,
            (Kind::Delivery, 4) => stock_move(tx, self.order, self.item, -self.qty, M_DELIVERY)?,
            (Kind::Delivery, _) => add(tx, DEBTORS, self.customer, &[(C_INVOICED, self.amount)])?,
            (Kind::Payment, 0) => {
                let amount =
                    tx.update(ORDERS, self.order, cols(&[O_QTY, O_PRICE, O_STATUS]), |o| {
                        if o.int(O_STATUS) != DELIVERED {
                            return None;
                        }
                        o.set_int(O_STATUS, PAID);
                        Some(o.int(O_QTY) * o.int(O_PRICE))
                    })?;
                let Some(amount) = amount.flatten() else {
                    return Err(Abort::user("not delivered"));
                };
                self.amount = amount;
            }
            (Kind::Payment, 1) => self.number = take_number(tx, T_PAYMENT)?,
            (Kind::Payment, 2) => document(
                tx,
                DEBTOR_TRANS,
                doc_key(self.order, true),
                self.customer,
                self.amount,
                self.number,
            )?,
            (Kind::Payment, _) => add(tx, DEBTORS, self.customer, &[(C_PAID, self.amount)])?,
            (Kind::StockAdjustment, 0) => {
                let d = self.qty;
                let ok = tx.update(STOCK, self.item, cols(&[ON_HAND]), |r| {
                    if r.int(ON_HAND) + d < 0 {
                        return false;
                    }
                    r.set_int(ON_HAND, r.int(ON_HAND) + d);
                    true
                })?;
                if !ok.unwrap_or(false) {
                    return Err(Abort::user("below zero"));
                }
            }
            (Kind::StockAdjustment, 1) => self.number = take_number(tx, T_ADJUSTMENT)?,
            (Kind::StockAdjustment, _) => {
                stock_move(tx, self.order, self.item, self.qty, M_ADJUSTMENT)?
            }
            (Kind::PaySupplier, 0) => self.number = take_number(tx, T_SUPP_INVOICE)?,
            (Kind::PaySupplier, 1) => {
                self.costs.clear();
                for i in 0..self.goods {
                    let cost = tx.update(STOCK, i, cols(&[ON_HAND, COST]), |r| {
                        r.set_int(ON_HAND, r.int(ON_HAND) + BULK);
                        r.int(COST)
                    })?;
                    self.costs.push(cost.unwrap_or(0));
                }
                self.amount = self.costs.iter().map(|c| c * BULK).sum();
            }
            (Kind::PaySupplier, 2) => {
                for i in 0..self.goods {
                    stock_move(tx, self.order, i, BULK, M_PURCHASE)?;
                }
            }
            (Kind::PaySupplier, 3) => document(
                tx,
                SUPP_TRANS,
                doc_key(self.order, false),
                self.supplier,
                self.amount,
                self.number,
            )?,
            (Kind::PaySupplier, 4) => self.number = take_number(tx, T_SUPP_PAYMENT)?,
            (Kind::PaySupplier, 5) => document(
                tx,
                SUPP_TRANS,
                doc_key(self.order, true),
                self.supplier,
                self.amount,
                self.number,
            )?,
            (Kind::PaySupplier, _) => add(
                tx,
                SUPPLIERS,
                self.supplier,
                &[(S_INVOICED, self.amount), (S_PAID, self.amount)],
            )?,
            (Kind::ViewOrder, 0) => {
                tx.get(ORDERS, self.order, order_read)?;
            }
            (Kind::ViewOrder, _) => {
                tx.get(STOCK, self.item, cols(&[PRICE]))?;
            }
            (Kind::ViewInvoice, _) => {
                tx.get(DEBTOR_TRANS, doc_key(self.order, false), ColumnSet::ALL)?;
            }
            (Kind::ViewPayment, _) => {
                tx.get(DEBTOR_TRANS, doc_key(self.order, true), ColumnSet::ALL)?;
            }
            (Kind::CustomerBalance, _) | (Kind::CustomerOrders, 0) => {
                tx.get(DEBTORS, self.customer, ColumnSet::ALL)?;
            }
            (Kind::CustomerOrders, i) => {
                tx.get(ORDERS, self.listed[i - 1], order_read)?;
            }
            (Kind::OutstandingOrders, i) => {
                tx.get(ORDERS, self.listed[i], order_read)?;
            }
            (Kind::ItemStatus, _) | (Kind::ItemMovements, 1) => {
                tx.get(STOCK, self.item, cols(&[ON_HAND, ON_ORDER]))?;
            }
            (Kind::InventoryValuation, _) => {
                for i in self.valuation_items() {
                    tx.get(STOCK, i, cols(&[ON_HAND, COST]))?;
                }
            }
            (Kind::ItemMovements, _) => {
                tx.get(MOVES, move_key(self.order, self.item), ColumnSet::ALL)?;
            }
            (Kind::SupplierBalance, _) => {
                tx.get(SUPPLIERS, self.supplier, ColumnSet::ALL)?;
            }
            (Kind::SupplierTrans, i) => {
                tx.get(SUPP_TRANS, doc_key(self.order, i == 1), ColumnSet::ALL)?;
            }
            (Kind::NextReferences, _) => {
                for t in 0..DOC_TYPES {
                    tx.get(SYS_TYPES, t, cols(&[NEXT]))?;
                }
            }
        }
        Ok(())
    }
}

/// Takes the next number of document type `t` (its `sys_types` row + 1); the number taken.
fn take_number<T: Tx>(tx: &mut T, t: u64) -> TxResult<i64> {
    let n = tx.update(SYS_TYPES, t, cols(&[NEXT]), |r| {
        let n = r.int(NEXT);
        r.set_int(NEXT, n + 1);
        n
    })?;
    Ok(n.unwrap_or(-1))
}

/// Inserts a document row (`debtor_trans` or `supp_trans`).
fn document<T: Tx>(
    tx: &mut T,
    table: TableId,
    key: u64,
    who: u64,
    amount: i64,
    number: i64,
) -> TxResult<()> {
    tx.insert(table, key, |r| {
        r.set_int(D_WHO, who as i64);
        r.set_int(D_AMOUNT, amount);
        r.set_int(D_NUMBER, number);
    })?;
    Ok(())
}

/// Inserts document `id`'s stock move of `item`.
fn stock_move<T: Tx>(tx: &mut T, id: u64, item: u64, qty: i64, kind: i64) -> TxResult<()> {
    tx.insert(MOVES, move_key(id, item), |r| {
        r.set_int(M_ITEM, item as i64);
        r.set_int(M_QTY, qty);
        r.set_int(M_TYPE, kind);
    })?;
    Ok(())
}

/// Adds `deltas` (column, amount) to row `key` of `table`.
fn add<T: Tx>(tx: &mut T, table: TableId, key: u64, deltas: &[(usize, i64)]) -> TxResult<()> {
    let set = deltas
        .iter()
        .fold(ColumnSet::NONE, |s, d| s.union(ColumnSet::one(d.0)));
    tx.update(table, key, set, |r| {
        for &(col, d) in deltas {
            r.set_int(col, r.int(col) + d);
        }
    })?;
    Ok(())
}
