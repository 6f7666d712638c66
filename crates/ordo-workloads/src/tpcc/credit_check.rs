//! Credit Check (TPC-C++, SSI thesis §5.3.2, Figure 5.1): is a customer's balance plus the value of
//! their undelivered orders above their credit limit? Sets `c_credit` to "BC" (bad) or "GC" (good).
//!
//! The thesis joins NEW-ORDER, ORDER and ORDER-LINE on the customer's id. Here the join runs from the
//! customer's side, through the ORDER_BY_CUSTOMER index — the same predicate, read from the other end:
//!
//! | piece | does                                                                     | depends on |
//! |-------|--------------------------------------------------------------------------|------------|
//! | 0     | read CUSTOMER c_balance, c_credit_lim; scan ORDER_BY_CUSTOMER (orders)   | –          |
//! | 1     | read NEW-ORDER of each of those orders (present = undelivered)           | 0          |
//! | 2     | scan the undelivered orders' ORDER-LINEs, sum ol_amount; write c_credit  | 0, 1       |
//!
//! It reads what Delivery and Payment write (c_balance, NEW-ORDER) and writes what New-Order reads
//! (c_credit): the cycle through which SI lets TPC-C++ go non-serializable (thesis Example 5).
//!
//! **Commit point: piece 2.** Nothing aborts by the transaction's logic, but piece 2's scans are
//! one per undelivered order its planning found: a protocol that plans from a reconnaissance may
//! find none where the run finds one (a New-Order earlier in the same batch), and the run then
//! scans what it did not declare, not even in the same conflict unit. The attempt must be able to
//! abort and be planned again; PWV takes the commit point for that (see [`super::delivery`]).

use super::schema::*;
use super::units::UNITS;
use ordo::storage::ColumnSet;
use ordo::txn::{Access, ConflictUnits, Program, Tx, TxResult};

/// A Credit Check transaction.
#[derive(Clone, Debug, Default)]
pub struct CreditCheck {
    pub w: u32,
    pub d: u32,
    pub c: u32,
    balance: i64,
    limit: i64,
    orders: Vec<u32>,
    undelivered: Vec<u32>,
    /// The verdict of the last run: true for "BC".
    pub bad_credit: bool,
}

fn cust_cols() -> ColumnSet {
    ColumnSet::of(&[col::C_BALANCE, col::C_CREDIT_LIM])
}

impl CreditCheck {
    fn orders_range(&self) -> (u64, u64) {
        (
            order_cust_key(self.w, self.d, self.c, 0),
            order_cust_key(self.w, self.d, self.c, u32::MAX),
        )
    }
}

impl Program for CreditCheck {
    fn name(&self) -> &'static str {
        "CreditCheck"
    }
    fn pieces(&self) -> usize {
        3
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let (w, d) = (self.w, self.d);
        match piece {
            0 => {
                out.push(Access::read(CUSTOMER, cust_key(w, d, self.c), cust_cols()));
                let (lo, hi) = self.orders_range();
                out.push(Access::scan(
                    ORDER_BY_CUSTOMER,
                    lo,
                    hi,
                    ColumnSet::one(col::OC_O_ID),
                ));
            }
            1 => out.extend(self.orders.iter().map(|&o| {
                Access::read(NEW_ORDER, order_key(w, d, o), ColumnSet::one(col::NO_O_ID))
            })),
            _ => {
                out.extend(self.undelivered.iter().map(|&o| {
                    Access::scan(
                        ORDER_LINE,
                        ol_key(w, d, o, 0),
                        ol_key(w, d, o, 15),
                        ColumnSet::one(col::OL_AMOUNT),
                    )
                }));
                out.push(Access::update(
                    CUSTOMER,
                    cust_key(w, d, self.c),
                    ColumnSet::NONE,
                    ColumnSet::one(col::C_CREDIT),
                ));
            }
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        out.extend(0..piece);
    }
    fn commit_point(&self) -> Option<usize> {
        Some(2) // see the module doc
    }
    fn conflict_units(&self) -> Option<ConflictUnits> {
        Some(UNITS)
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let (w, d) = (self.w, self.d);
        match piece {
            0 => {
                let r = tx.get(CUSTOMER, cust_key(w, d, self.c), cust_cols())?;
                (self.balance, self.limit) = r.map_or((0, 0), |r| {
                    (r.int(col::C_BALANCE), r.int(col::C_CREDIT_LIM))
                });
                self.orders.clear();
                let (lo, hi) = self.orders_range();
                let orders = &mut self.orders;
                tx.scan(
                    ORDER_BY_CUSTOMER,
                    lo,
                    hi,
                    ColumnSet::one(col::OC_O_ID),
                    |_, r| {
                        orders.push(r.int(col::OC_O_ID) as u32);
                        true
                    },
                )?;
            }
            1 => {
                self.undelivered.clear();
                for &o in &self.orders {
                    if tx
                        .get(NEW_ORDER, order_key(w, d, o), ColumnSet::one(col::NO_O_ID))?
                        .is_some()
                    {
                        self.undelivered.push(o);
                    }
                }
            }
            _ => {
                let mut sum = 0i64;
                for &o in &self.undelivered {
                    tx.scan(
                        ORDER_LINE,
                        ol_key(w, d, o, 0),
                        ol_key(w, d, o, 15),
                        ColumnSet::one(col::OL_AMOUNT),
                        |_, r| {
                            sum += r.int(col::OL_AMOUNT);
                            true
                        },
                    )?;
                }
                self.bad_credit = self.balance + sum > self.limit;
                let credit: &[u8; 2] = if self.bad_credit { b"BC" } else { b"GC" };
                tx.update(CUSTOMER, cust_key(w, d, self.c), ColumnSet::NONE, |r| {
                    r.set_str(col::C_CREDIT, credit).expect("2 chars")
                })?;
            }
        }
        Ok(())
    }
}
