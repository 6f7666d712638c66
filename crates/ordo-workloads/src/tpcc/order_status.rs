//! Order-Status (clause 2.6, read-only): a customer's balance and their most recent order's lines.
//!
//! | piece | does                                                                  | depends on |
//! |-------|-----------------------------------------------------------------------|------------|
//! | 0     | by last name (60%): scan CUSTOMER_BY_NAME for the middle customer     | –          |
//! | 1     | read CUSTOMER; scan ORDER_BY_CUSTOMER for the customer's latest order | 0          |
//! | 2     | read that ORDER and scan its ORDER-LINEs                              | 1          |

use super::customer::Lookup;
use super::schema::*;
use super::units::UNITS;
use ordo::storage::ColumnSet;
use ordo::txn::{Access, ConflictUnits, Program, Tx, TxResult};
use std::hint::black_box;

/// An Order-Status transaction.
#[derive(Clone, Debug, Default)]
pub struct OrderStatus {
    pub customer: Lookup,
    /// The latest order found by piece 1 (0: none).
    pub o_id: u32,
    /// Lines seen by piece 2.
    pub lines: u32,
}

fn cust_cols() -> ColumnSet {
    ColumnSet::of(&[col::C_BALANCE, col::C_FIRST, col::C_MIDDLE, col::C_LAST])
}
fn order_cols() -> ColumnSet {
    ColumnSet::of(&[col::O_ENTRY_D, col::O_CARRIER_ID, col::O_OL_CNT])
}
fn line_cols() -> ColumnSet {
    ColumnSet::of(&[
        col::OL_I_ID,
        col::OL_SUPPLY_W_ID,
        col::OL_QUANTITY,
        col::OL_AMOUNT,
        col::OL_DELIVERY_D,
    ])
}

impl OrderStatus {
    fn orders_range(&self) -> (u64, u64) {
        let l = &self.customer;
        (
            order_cust_key(l.w, l.d, l.c, 0),
            order_cust_key(l.w, l.d, l.c, u32::MAX),
        )
    }
}

impl Program for OrderStatus {
    fn name(&self) -> &'static str {
        "OrderStatus"
    }
    fn pieces(&self) -> usize {
        3
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let (w, d) = (self.customer.w, self.customer.d);
        match piece {
            0 => self.customer.declare(out),
            1 => {
                out.push(Access::read(CUSTOMER, self.customer.key(), cust_cols()));
                let (lo, hi) = self.orders_range();
                out.push(Access::scan(
                    ORDER_BY_CUSTOMER,
                    lo,
                    hi,
                    ColumnSet::one(col::OC_O_ID),
                ));
            }
            _ if self.o_id != 0 => {
                out.push(Access::read(
                    ORDER,
                    order_key(w, d, self.o_id),
                    order_cols(),
                ));
                out.push(Access::scan(
                    ORDER_LINE,
                    ol_key(w, d, self.o_id, 0),
                    ol_key(w, d, self.o_id, 15),
                    line_cols(),
                ));
            }
            _ => {}
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if piece > 0 {
            out.push(piece - 1);
        }
    }
    fn conflict_units(&self) -> Option<ConflictUnits> {
        Some(UNITS)
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let (w, d) = (self.customer.w, self.customer.d);
        match piece {
            0 => self.customer.run(tx)?,
            1 => {
                if let Some(r) = tx.get(CUSTOMER, self.customer.key(), cust_cols())? {
                    black_box((
                        r.int(col::C_BALANCE),
                        r.str(col::C_FIRST),
                        r.str(col::C_LAST),
                    ));
                }
                let (lo, hi) = self.orders_range();
                let mut latest = 0;
                tx.scan(
                    ORDER_BY_CUSTOMER,
                    lo,
                    hi,
                    ColumnSet::one(col::OC_O_ID),
                    |_, r| {
                        latest = r.int(col::OC_O_ID) as u32;
                        true
                    },
                )?;
                self.o_id = latest;
            }
            _ => {
                self.lines = 0;
                if self.o_id == 0 {
                    return Ok(());
                }
                if let Some(r) = tx.get(ORDER, order_key(w, d, self.o_id), order_cols())? {
                    black_box((r.int(col::O_ENTRY_D), r.int(col::O_CARRIER_ID)));
                }
                let lines = &mut self.lines;
                tx.scan(
                    ORDER_LINE,
                    ol_key(w, d, self.o_id, 0),
                    ol_key(w, d, self.o_id, 15),
                    line_cols(),
                    |_, r| {
                        *lines += 1;
                        black_box((r.int(col::OL_I_ID), r.int(col::OL_AMOUNT)));
                        true
                    },
                )?;
            }
        }
        Ok(())
    }
}
