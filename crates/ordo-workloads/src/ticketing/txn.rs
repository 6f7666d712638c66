//! The eleven transactions of `ticketing` as [`Program`]s: their pieces, declarations and logic,
//! and where `--base-ified` cuts them (the module doc of [`super`] teaches the flow).

use super::*;
use crate::base_ified::{every_piece, Cut};
use ordo::txn::{AfterFailure, Program};

/// Which transaction. The order is the flow of a booking, browsing first, the administrator last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// Both categories' availability.
    #[default]
    ViewEvent,
    /// One category's availability and a row of its seat map.
    ViewCategory,
    /// Puts a chosen seat in the cart: free → reserved until a stamp.
    ReserveSeat,
    /// Looks at a reservation in the cart and its seat.
    ViewCart,
    /// Takes a reservation out of the cart: reserved → free.
    RemoveFromCart,
    /// The shop releases a reservation whose time ran out: reserved → free.
    ReleaseExpired,
    /// Checkout: a reserved seat becomes an order (the contended category count).
    CreateOrder,
    /// Pays an order.
    Payment,
    /// Looks at an order and its payment.
    ViewOrder,
    /// Looks at a customer's account.
    ViewCustomer,
    /// Administrator: deletes an order, freeing its seat and refunding a payment.
    DeleteOrder,
}

impl Kind {
    /// Every kind, in declaration order.
    pub const ALL: [Kind; 11] = [
        Kind::ViewEvent,
        Kind::ViewCategory,
        Kind::ReserveSeat,
        Kind::ViewCart,
        Kind::RemoveFromCart,
        Kind::ReleaseExpired,
        Kind::CreateOrder,
        Kind::Payment,
        Kind::ViewOrder,
        Kind::ViewCustomer,
        Kind::DeleteOrder,
    ];

    /// The transaction's name (per-type statistics, `--callas-groups`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::ViewEvent => "ViewEvent",
            Kind::ViewCategory => "ViewCategory",
            Kind::ReserveSeat => "ReserveSeat",
            Kind::ViewCart => "ViewCart",
            Kind::RemoveFromCart => "RemoveFromCart",
            Kind::ReleaseExpired => "ReleaseExpired",
            Kind::CreateOrder => "CreateOrder",
            Kind::Payment => "Payment",
            Kind::ViewOrder => "ViewOrder",
            Kind::ViewCustomer => "ViewCustomer",
            Kind::DeleteOrder => "DeleteOrder",
        }
    }

    /// Pieces of a transaction of this kind.
    pub fn pieces(self) -> usize {
        match self {
            Kind::ViewEvent => CATEGORIES as usize,
            Kind::ViewCategory => 1 + PLACEMAP_ROW as usize,
            Kind::ReserveSeat | Kind::RemoveFromCart | Kind::ReleaseExpired | Kind::Payment => 3,
            Kind::ViewCart | Kind::ViewOrder => 2,
            Kind::ViewCustomer => 1,
            Kind::CreateOrder | Kind::DeleteOrder => 5,
        }
    }

    /// Whether its first piece may abort by its own logic (its commit point is then piece 0:
    /// no later piece of any transaction aborts by its logic).
    fn may_refuse(self) -> bool {
        matches!(
            self,
            Kind::ReserveSeat
                | Kind::RemoveFromCart
                | Kind::ReleaseExpired
                | Kind::CreateOrder
                | Kind::Payment
                | Kind::DeleteOrder
        )
    }
}

/// The order in which `--base-ified N` BASE-ifies kinds (the module doc says why).
pub const BASE_ORDER: [Kind; 3] = [Kind::CreateOrder, Kind::ViewEvent, Kind::ViewCategory];

/// How `kind` is cut under `b`.
pub fn cut(b: BaseIfied, kind: Kind) -> Cut {
    b.cut_in(&BASE_ORDER, &kind)
}

/// A transaction of the workload: its kind and every input, all known when it is generated (no
/// declaration depends on an earlier piece), and what its pieces found.
#[derive(Clone, Debug, Default)]
pub struct TicketTxn {
    pub kind: Kind,
    /// How `--base-ified` cuts it.
    pub cut: Cut,
    pub customer: u64,
    pub category: u64,
    /// The seat's number within its category (ViewCategory: the first seat of the map's row).
    pub seat: u64,
    /// Seats per category.
    pub seats: u64,
    /// The reservation (cart entry) it makes or uses.
    pub reservation: u64,
    /// The order it creates or uses.
    pub order: u64,
    /// CreateOrder: the handling (delivery) fee.
    pub fee: i64,
    /// ReserveSeat: the reservation's expiry stamp; ReleaseExpired: the time now.
    pub stamp: i64,
    /// Found by piece 0 or 1: the seat's price (CreateOrder), the order's total and whether it
    /// was paid (Payment, DeleteOrder).
    pub price: i64,
    pub total: i64,
    pub was_paid: bool,
}

impl TicketTxn {
    fn seat_key(&self) -> u64 {
        self.category * self.seats + self.seat
    }
    /// ViewCategory: the key of the map row's `i`-th seat (wrapping within the category).
    fn map_seat(&self, i: u64) -> u64 {
        self.category * self.seats + (self.seat + i) % self.seats
    }
}

fn cols(c: &[usize]) -> ColumnSet {
    ColumnSet::of(c)
}

impl Program for TicketTxn {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn pieces(&self) -> usize {
        self.kind.pieces()
    }

    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let seat = cols(&[STATUS, HOLDER, STAMP]);
        let cust = |c: &[usize]| Access::update(CUSTOMER, self.customer, cols(c), cols(c));
        let a = match (self.kind, piece) {
            (Kind::ViewEvent, c) => {
                Access::read(CATEGORY, c as u64, cols(&[SOLD, RETURNED, PRICE]))
            }
            (Kind::ViewCategory, 0) => {
                Access::read(CATEGORY, self.category, cols(&[SOLD, RETURNED, PRICE]))
            }
            (Kind::ViewCategory, i) => Access::read(SEAT, self.map_seat(i as u64 - 1), seat),
            (Kind::ReserveSeat, 0) => Access::update(SEAT, self.seat_key(), seat, seat),
            (Kind::ReserveSeat, 1) => Access::insert(RESERVATION, self.reservation),
            (Kind::ReserveSeat, _) => cust(&[C_CART]),
            (Kind::ViewCart, 0) => Access::read(RESERVATION, self.reservation, ColumnSet::ALL),
            (Kind::ViewCart, _) => Access::read(SEAT, self.seat_key(), seat),
            (Kind::RemoveFromCart | Kind::ReleaseExpired, 0) => {
                Access::update(SEAT, self.seat_key(), seat, seat)
            }
            (Kind::RemoveFromCart | Kind::ReleaseExpired, 1) => {
                Access::delete(RESERVATION, self.reservation)
            }
            (Kind::RemoveFromCart | Kind::ReleaseExpired, _) => cust(&[C_CART]),
            (Kind::CreateOrder, 0) => Access::update(SEAT, self.seat_key(), seat, seat),
            (Kind::CreateOrder, 1) => {
                Access::update(CATEGORY, self.category, cols(&[SOLD, PRICE]), cols(&[SOLD]))
            }
            (Kind::CreateOrder, 2) => Access::delete(RESERVATION, self.reservation),
            (Kind::CreateOrder, 3) => Access::insert(ORDERS, self.order),
            (Kind::CreateOrder, _) => cust(&[C_ORDERS, C_SPENT, C_CART]),
            (Kind::Payment, 0) => Access::update(
                ORDERS,
                self.order,
                cols(&[O_PRICE, O_FEE, O_STATUS]),
                cols(&[O_STATUS]),
            ),
            (Kind::Payment, 1) => Access::insert(PAYMENT, self.order),
            (Kind::Payment, _) => cust(&[C_PAID]),
            (Kind::ViewOrder, 0) => Access::read(ORDERS, self.order, ColumnSet::ALL),
            (Kind::ViewOrder, _) => Access::read(PAYMENT, self.order, ColumnSet::ALL),
            (Kind::ViewCustomer, _) => Access::read(CUSTOMER, self.customer, ColumnSet::ALL),
            (Kind::DeleteOrder, 0) => Access::update(
                ORDERS,
                self.order,
                cols(&[O_PRICE, O_FEE, O_STATUS]),
                cols(&[O_STATUS]),
            ),
            (Kind::DeleteOrder, 1) => Access::update(SEAT, self.seat_key(), seat, seat),
            (Kind::DeleteOrder, 2) => Access::update(
                CATEGORY,
                self.category,
                cols(&[SOLD, RETURNED]),
                cols(&[SOLD, RETURNED]),
            ),
            (Kind::DeleteOrder, 3) => Access::update(
                PAYMENT,
                self.order,
                cols(&[P_REFUNDED]),
                cols(&[P_REFUNDED]),
            ),
            (Kind::DeleteOrder, _) => cust(&[C_ORDERS, C_SPENT, C_PAID]),
        };
        out.push(a);
    }

    /// Every key is an input of the transaction: no declaration waits for an earlier piece.
    fn declaration_depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}

    fn commit_point(&self) -> Option<usize> {
        self.kind.may_refuse().then_some(0)
    }

    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let seat_cols = cols(&[STATUS, HOLDER, STAMP]);
        match (self.kind, piece) {
            (Kind::ViewEvent, c) => {
                tx.get(CATEGORY, c as u64, cols(&[SOLD, RETURNED, PRICE]))?;
            }
            (Kind::ViewCategory, 0) => {
                tx.get(CATEGORY, self.category, cols(&[SOLD, RETURNED, PRICE]))?;
            }
            (Kind::ViewCategory, i) => {
                tx.get(SEAT, self.map_seat(i as u64 - 1), seat_cols)?;
            }
            (Kind::ReserveSeat, 0) => {
                let (r, stamp) = (self.reservation as i64, self.stamp);
                let taken = tx.update(SEAT, self.seat_key(), seat_cols, |s| {
                    if s.int(STATUS) != FREE {
                        return true;
                    }
                    s.set_int(STATUS, RESERVED);
                    s.set_int(HOLDER, r);
                    s.set_int(STAMP, stamp);
                    false
                })?;
                if taken.unwrap_or(true) {
                    return Err(Abort::user("seat taken"));
                }
            }
            (Kind::ReserveSeat, 1) => {
                let (c, k, s, e) = (self.customer, self.category, self.seat, self.stamp);
                tx.insert(RESERVATION, self.reservation, |r| {
                    r.set_int(R_CUSTOMER, c as i64);
                    r.set_int(R_CATEGORY, k as i64);
                    r.set_int(R_SEAT, s as i64);
                    r.set_int(R_EXPIRES, e);
                })?;
            }
            (Kind::ReserveSeat, _) => add(tx, self.customer, &[(C_CART, 1)])?,
            (Kind::ViewCart, 0) => {
                tx.get(RESERVATION, self.reservation, ColumnSet::ALL)?;
            }
            (Kind::ViewCart, _) => {
                tx.get(SEAT, self.seat_key(), seat_cols)?;
            }
            (Kind::RemoveFromCart | Kind::ReleaseExpired, 0) => {
                let r = self.reservation as i64;
                let now = (self.kind == Kind::ReleaseExpired).then_some(self.stamp);
                let freed = tx.update(SEAT, self.seat_key(), seat_cols, |s| {
                    let mine = s.int(STATUS) == RESERVED && s.int(HOLDER) == r;
                    if !mine {
                        return Err("no such reservation");
                    }
                    if now.is_some_and(|now| s.int(STAMP) > now) {
                        return Err("the reservation has not expired");
                    }
                    free(s);
                    Ok(())
                })?;
                freed.unwrap_or(Err("no such seat")).map_err(Abort::user)?;
            }
            (Kind::RemoveFromCart | Kind::ReleaseExpired, 1) => {
                tx.delete(RESERVATION, self.reservation)?;
            }
            (Kind::RemoveFromCart | Kind::ReleaseExpired, _) => {
                add(tx, self.customer, &[(C_CART, -1)])?
            }
            (Kind::CreateOrder, 0) => {
                let (r, o) = (self.reservation as i64, self.order as i64);
                let sold = tx.update(SEAT, self.seat_key(), seat_cols, |s| {
                    let mine = s.int(STATUS) == RESERVED && s.int(HOLDER) == r;
                    if mine {
                        s.set_int(STATUS, SOLD_TO);
                        s.set_int(HOLDER, o);
                        s.set_int(STAMP, 0);
                    }
                    mine
                })?;
                if !sold.unwrap_or(false) {
                    return Err(Abort::user("the reservation is gone"));
                }
            }
            (Kind::CreateOrder, 1) => {
                let price = tx.update(CATEGORY, self.category, cols(&[SOLD, PRICE]), |r| {
                    r.set_int(SOLD, r.int(SOLD) + 1);
                    r.int(PRICE)
                })?;
                self.price = price.unwrap_or(0);
            }
            (Kind::CreateOrder, 2) => {
                tx.delete(RESERVATION, self.reservation)?;
            }
            (Kind::CreateOrder, 3) => {
                let (c, k, s, p, f) = (
                    self.customer,
                    self.category,
                    self.seat,
                    self.price,
                    self.fee,
                );
                tx.insert(ORDERS, self.order, |r| {
                    r.set_int(O_CUSTOMER, c as i64);
                    r.set_int(O_CATEGORY, k as i64);
                    r.set_int(O_SEAT, s as i64);
                    r.set_int(O_PRICE, p);
                    r.set_int(O_FEE, f);
                    r.set_int(O_STATUS, ORDERED);
                })?;
            }
            (Kind::CreateOrder, _) => {
                let total = self.price + self.fee;
                add(
                    tx,
                    self.customer,
                    &[(C_ORDERS, 1), (C_SPENT, total), (C_CART, -1)],
                )?
            }
            (Kind::Payment, 0) => {
                let paid =
                    tx.update(ORDERS, self.order, cols(&[O_PRICE, O_FEE, O_STATUS]), |o| {
                        if o.int(O_STATUS) != ORDERED {
                            return None;
                        }
                        o.set_int(O_STATUS, PAID);
                        Some(o.int(O_PRICE) + o.int(O_FEE))
                    })?;
                let Some(total) = paid.flatten() else {
                    return Err(Abort::user("no unpaid order to pay"));
                };
                self.total = total;
            }
            (Kind::Payment, 1) => {
                let (c, t) = (self.customer, self.total);
                tx.insert(PAYMENT, self.order, |p| {
                    p.set_int(P_CUSTOMER, c as i64);
                    p.set_int(P_AMOUNT, t);
                })?;
            }
            (Kind::Payment, _) => add(tx, self.customer, &[(C_PAID, self.total)])?,
            (Kind::ViewOrder, 0) => {
                tx.get(ORDERS, self.order, ColumnSet::ALL)?;
            }
            (Kind::ViewOrder, _) => {
                tx.get(PAYMENT, self.order, ColumnSet::ALL)?;
            }
            (Kind::ViewCustomer, _) => {
                tx.get(CUSTOMER, self.customer, ColumnSet::ALL)?;
            }
            (Kind::DeleteOrder, 0) => {
                let found =
                    tx.update(ORDERS, self.order, cols(&[O_PRICE, O_FEE, O_STATUS]), |o| {
                        let status = o.int(O_STATUS);
                        if status != ORDERED && status != PAID {
                            return None;
                        }
                        o.set_int(O_STATUS, DELETED);
                        Some((o.int(O_PRICE) + o.int(O_FEE), status == PAID))
                    })?;
                let Some((total, paid)) = found.flatten() else {
                    return Err(Abort::user("no order to delete"));
                };
                (self.total, self.was_paid) = (total, paid);
            }
            (Kind::DeleteOrder, 1) => {
                // The order's seat is sold to it (the invariant); free it only if so.
                let o = self.order as i64;
                tx.update(SEAT, self.seat_key(), seat_cols, |s| {
                    if s.int(STATUS) == SOLD_TO && s.int(HOLDER) == o {
                        free(s);
                    }
                })?;
            }
            (Kind::DeleteOrder, 2) => {
                tx.update(CATEGORY, self.category, cols(&[SOLD, RETURNED]), |r| {
                    r.set_int(SOLD, r.int(SOLD) - 1);
                    r.set_int(RETURNED, r.int(RETURNED) + 1);
                })?;
            }
            (Kind::DeleteOrder, 3) => {
                if self.was_paid {
                    tx.update(PAYMENT, self.order, cols(&[P_REFUNDED]), |p| {
                        p.set_int(P_REFUNDED, 1)
                    })?;
                }
            }
            (Kind::DeleteOrder, _) => {
                let refund = if self.was_paid { self.total } else { 0 };
                add(
                    tx,
                    self.customer,
                    &[(C_ORDERS, -1), (C_SPENT, -self.total), (C_PAID, -refund)],
                )?
            }
        }
        Ok(())
    }

    /// `--base-ified` (the module doc's table): `Base` cuts each kind as documented there —
    /// CreateOrder after the seat claim, then one alkaline subtransaction per step; the two
    /// views one per category row or seat — and `Raw` one per piece for every kind.
    fn alkaline_starts(&self, out: &mut Vec<usize>) {
        match self.cut {
            Cut::Acid => {}
            Cut::Base | Cut::Raw => every_piece(self.kind.pieces(), out),
        }
    }

    /// Every step after acceptance is owed whatever happens to another: an accepted order's seat
    /// is sold, so its count, its cart entry, its order row and its customer's totals each still
    /// have to be written; a view's later read has nothing to undo. No later step can fail by its
    /// own logic (every refusal — seat taken, reservation gone, nothing to pay or delete — is in
    /// the first subtransaction, before acceptance), so this runs only when the protocol gave up
    /// on a step: go on with the rest, which keeps all that still can be kept.
    fn alkaline_failed(&mut self, _sub: usize, _abort: &Abort) -> AfterFailure {
        AfterFailure::Continue
    }
}

/// Marks a seat row free.
fn free(s: &mut ordo::storage::RowMut<'_>) {
    s.set_int(STATUS, FREE);
    s.set_int(HOLDER, 0);
    s.set_int(STAMP, 0);
}

/// Adds `deltas` (column, amount) to customer `c`'s row.
fn add<T: Tx>(tx: &mut T, c: u64, deltas: &[(usize, i64)]) -> TxResult<()> {
    let set = deltas
        .iter()
        .fold(ColumnSet::NONE, |s, d| s.union(ColumnSet::one(d.0)));
    tx.update(CUSTOMER, c, set, |r| {
        for &(col, d) in deltas {
            r.set_int(col, r.int(col) + d);
        }
    })?;
    Ok(())
}
