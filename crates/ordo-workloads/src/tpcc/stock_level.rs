//! Stock-Level (clause 2.8, read-only): how many items of a district's last 20 orders are low on stock.
//!
//! | piece | does                                                                 | depends on |
//! |-------|----------------------------------------------------------------------|------------|
//! | 0     | read DISTRICT `d_next_o_id`                                          | –          |
//! | 1     | scan ORDER-LINE over orders `d_next_o_id − 20 .. d_next_o_id − 1`    | 0          |
//! | 2     | read STOCK of each distinct item; count those below the threshold    | 1          |

use super::schema::*;
use super::units::UNITS;
use ordo::storage::ColumnSet;
use ordo::txn::{Access, ConflictUnits, Program, Tx, TxResult};

/// A Stock-Level transaction.
#[derive(Clone, Debug, Default)]
pub struct StockLevel {
    pub w: u32,
    pub d: u32,
    /// 10..=20.
    pub threshold: i64,
    next_o_id: u32,
    items: Vec<u32>,
    /// The answer of the last run.
    pub low_stock: u32,
}

impl StockLevel {
    fn lines(&self) -> (u64, u64) {
        let first = self.next_o_id.saturating_sub(20);
        let last = self.next_o_id.saturating_sub(1);
        (
            ol_key(self.w, self.d, first, 0),
            ol_key(self.w, self.d, last, 15),
        )
    }
}

impl Program for StockLevel {
    fn name(&self) -> &'static str {
        "StockLevel"
    }
    fn pieces(&self) -> usize {
        3
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        match piece {
            0 => out.push(Access::read(
                DISTRICT,
                dist_key(self.w, self.d),
                ColumnSet::one(col::D_NEXT_O_ID),
            )),
            1 => {
                let (lo, hi) = self.lines();
                out.push(Access::scan(
                    ORDER_LINE,
                    lo,
                    hi,
                    ColumnSet::one(col::OL_I_ID),
                ));
            }
            _ => out.extend(self.items.iter().map(|&i| {
                Access::read(STOCK, stock_key(self.w, i), ColumnSet::one(col::S_QUANTITY))
            })),
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
        match piece {
            0 => {
                let r = tx.get(
                    DISTRICT,
                    dist_key(self.w, self.d),
                    ColumnSet::one(col::D_NEXT_O_ID),
                )?;
                self.next_o_id = r.map_or(1, |r| r.int(col::D_NEXT_O_ID) as u32);
            }
            1 => {
                self.items.clear();
                let (lo, hi) = self.lines();
                let items = &mut self.items;
                tx.scan(ORDER_LINE, lo, hi, ColumnSet::one(col::OL_I_ID), |_, r| {
                    items.push(r.int(col::OL_I_ID) as u32);
                    true
                })?;
                self.items.sort_unstable();
                self.items.dedup();
            }
            _ => {
                self.low_stock = 0;
                for &i in &self.items {
                    let r = tx.get(STOCK, stock_key(self.w, i), ColumnSet::one(col::S_QUANTITY))?;
                    if r.is_some_and(|r| r.int(col::S_QUANTITY) < self.threshold) {
                        self.low_stock += 1;
                    }
                }
            }
        }
        Ok(())
    }
}
