//! Delivery (clause 2.7): deliver the oldest undelivered order of each of a warehouse's 10 districts.
//!
//! Three pieces per district `d` (pieces `3(d−1)` .. `3(d−1)+2`):
//!
//! | piece | does                                                                  | depends on |
//! |-------|-----------------------------------------------------------------------|------------|
//! | A     | scan NEW-ORDER over `(w, d, *)` for the oldest order (first key)      | –          |
//! | B     | delete that NEW-ORDER; set the ORDER's carrier, read o_c_id, o_ol_cnt | A          |
//! | C     | set each ORDER-LINE's delivery date, sum amounts; CUSTOMER balance += sum, delivery_cnt++ | B |
//!
//! A district without undelivered orders is skipped (B and C then declare and do nothing).

use super::schema::*;
use ordo::storage::ColumnSet;
use ordo::txn::{Access, Program, Tx, TxResult};

#[derive(Clone, Copy, Debug, Default)]
struct District {
    /// Oldest undelivered order (0: none).
    o_id: u32,
    c: u32,
    ol_cnt: u32,
}

/// A Delivery transaction.
#[derive(Clone, Debug, Default)]
pub struct Delivery {
    pub w: u32,
    pub carrier: u32,
    pub date: i64,
    districts: [District; DISTRICTS as usize],
}

impl Delivery {
    /// Orders delivered by the last run (districts that had one).
    pub fn delivered(&self) -> usize {
        self.districts.iter().filter(|d| d.o_id != 0).count()
    }
}

fn new_orders(w: u32, d: u32) -> (u64, u64) {
    (order_key(w, d, 0), order_key(w, d, u32::MAX))
}

impl Program for Delivery {
    fn name(&self) -> &'static str {
        "Delivery"
    }
    fn pieces(&self) -> usize {
        3 * DISTRICTS as usize
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let (w, d) = (self.w, piece as u32 / 3 + 1);
        let dist = self.districts[piece / 3];
        match piece % 3 {
            0 => {
                let (lo, hi) = new_orders(w, d);
                out.push(Access::scan(
                    NEW_ORDER,
                    lo,
                    hi,
                    ColumnSet::one(col::NO_O_ID),
                ));
            }
            _ if dist.o_id == 0 => {}
            1 => {
                out.push(Access::delete(NEW_ORDER, order_key(w, d, dist.o_id)));
                out.push(Access::update(
                    ORDER,
                    order_key(w, d, dist.o_id),
                    ColumnSet::of(&[col::O_C_ID, col::O_OL_CNT]),
                    ColumnSet::one(col::O_CARRIER_ID),
                ));
            }
            _ => {
                out.extend((1..=dist.ol_cnt).map(|ol| {
                    Access::update(
                        ORDER_LINE,
                        ol_key(w, d, dist.o_id, ol),
                        ColumnSet::one(col::OL_AMOUNT),
                        ColumnSet::one(col::OL_DELIVERY_D),
                    )
                }));
                let cols = ColumnSet::of(&[col::C_BALANCE, col::C_DELIVERY_CNT]);
                out.push(Access::update(CUSTOMER, cust_key(w, d, dist.c), cols, cols));
            }
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if piece % 3 != 0 {
            out.push(piece - 1);
        }
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let (w, d) = (self.w, piece as u32 / 3 + 1);
        let (carrier, date) = (self.carrier, self.date);
        let dist = &mut self.districts[piece / 3];
        match piece % 3 {
            0 => {
                *dist = District::default();
                let (lo, hi) = new_orders(w, d);
                tx.scan(NEW_ORDER, lo, hi, ColumnSet::one(col::NO_O_ID), |key, _| {
                    dist.o_id = order_id(key);
                    false
                })?;
            }
            _ if dist.o_id == 0 => {}
            1 => {
                let key = order_key(w, d, dist.o_id);
                tx.delete(NEW_ORDER, key)?;
                let cols = ColumnSet::of(&[col::O_C_ID, col::O_OL_CNT, col::O_CARRIER_ID]);
                if let Some((c, n)) = tx.update(ORDER, key, cols, |r| {
                    r.set_int(col::O_CARRIER_ID, carrier as i64);
                    (r.int(col::O_C_ID) as u32, r.int(col::O_OL_CNT) as u32)
                })? {
                    dist.c = c;
                    dist.ol_cnt = n.min(15);
                }
            }
            _ => {
                let mut sum = 0i64;
                for ol in 1..=dist.ol_cnt {
                    let cols = ColumnSet::of(&[col::OL_AMOUNT, col::OL_DELIVERY_D]);
                    tx.update(ORDER_LINE, ol_key(w, d, dist.o_id, ol), cols, |r| {
                        sum += r.int(col::OL_AMOUNT);
                        r.set_int(col::OL_DELIVERY_D, date);
                    })?;
                }
                let cols = ColumnSet::of(&[col::C_BALANCE, col::C_DELIVERY_CNT]);
                tx.update(CUSTOMER, cust_key(w, d, dist.c), cols, |r| {
                    r.set_int(col::C_BALANCE, r.int(col::C_BALANCE) + sum);
                    r.set_int(col::C_DELIVERY_CNT, r.int(col::C_DELIVERY_CNT) + 1);
                })?;
            }
        }
        Ok(())
    }
}
