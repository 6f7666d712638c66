//! New-Order (clause 2.4): enter an order of 5–15 items for a customer.
//!
//! | piece | does                                                                  | depends on | declaration depends on |
//! |-------|-----------------------------------------------------------------------|------------|------------------------|
//! | 0     | read every ITEM; an unused item id rolls the transaction back (1%)   | –          | –                      |
//! | 1     | read WAREHOUSE w_tax, CUSTOMER discount/credit                        | –          | –                      |
//! | 2     | DISTRICT: read d_tax, `d_next_o_id++`                                 | –          | –                      |
//! | 3     | update each line's STOCK (quantity, ytd, order/remote counts)         | –          | –                      |
//! | 4     | insert ORDER, NEW-ORDER, ORDER_BY_CUSTOMER and the ORDER-LINEs        | 0, 1, 2, 3 | 2                      |
//!
//! With DBx1000's work (`--mix dbx1000`) piece 4 does not run.
//!
//! Piece 0 is the commit point: the rollback on an invalid item happens before any write, as
//! piece-wise protocols (PWV) require. Piece 4 needs the prices (piece 0), the taxes (pieces 1
//! and 2), the o_id (piece 2) and the stock's dist info (piece 3), but its keys only the o_id: a
//! protocol that plans up front runs pieces 0 to 2 in its reconnaissance, not the stock updates.
//! The district counter is a piece of its own, one record, so that Salt can make it an alkaline
//! subtransaction of its own (Xie 2016, Fig. 3.5; [`super::base`]).

use super::schema::*;
use super::units::UNITS;
use ordo::storage::ColumnSet;
use ordo::txn::{Abort, Access, ConflictUnits, Program, Tx, TxResult};
use std::hint::black_box;

/// One order line's input and what the transaction learns about it.
#[derive(Clone, Copy, Debug)]
pub struct Line {
    pub i: u32,
    pub supply_w: u32,
    pub quantity: u32,
    /// What piece 0 and 2 read.
    pub price: i64,
    pub original: bool,
    pub dist_info: [u8; 24],
}

impl Line {
    pub fn new(i: u32, supply_w: u32, quantity: u32) -> Self {
        Line {
            i,
            supply_w,
            quantity,
            price: 0,
            original: false,
            dist_info: [0; 24],
        }
    }
}

/// A New-Order transaction.
#[derive(Clone, Debug, Default)]
pub struct NewOrder {
    pub w: u32,
    pub d: u32,
    pub c: u32,
    pub lines: Vec<Line>,
    pub entry_d: i64,
    /// DBx1000's work ([`super::mix`]): piece 4 (the inserts) does not run.
    pub dbx1000: bool,
    // Results of pieces.
    o_id: u32,
    w_tax: i64,
    d_tax: i64,
    c_discount: i64,
}

fn has_original(s: &[u8]) -> bool {
    s.windows(8).any(|w| w == b"ORIGINAL")
}

fn stock_cols(d: u32) -> ColumnSet {
    ColumnSet::of(&[
        col::S_QUANTITY,
        col::S_DIST_01 + d as usize - 1,
        col::S_YTD,
        col::S_ORDER_CNT,
        col::S_REMOTE_CNT,
        col::S_DATA,
    ])
}

fn stock_writes() -> ColumnSet {
    ColumnSet::of(&[
        col::S_QUANTITY,
        col::S_YTD,
        col::S_ORDER_CNT,
        col::S_REMOTE_CNT,
    ])
}

impl NewOrder {
    /// Whether every order line is supplied by the home warehouse.
    pub fn all_local(&self) -> bool {
        self.lines.iter().all(|l| l.supply_w == self.w)
    }
    /// The o_id assigned (after piece 2).
    pub fn o_id(&self) -> u32 {
        self.o_id
    }
}

impl Program for NewOrder {
    fn name(&self) -> &'static str {
        "NewOrder"
    }
    fn pieces(&self) -> usize {
        if self.dbx1000 {
            4
        } else {
            5
        }
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let (w, d) = (self.w, self.d);
        match piece {
            0 => out.extend(self.lines.iter().map(|l| {
                Access::read(
                    ITEM,
                    item_key(l.i),
                    ColumnSet::of(&[col::I_PRICE, col::I_NAME, col::I_DATA]),
                )
            })),
            1 => {
                out.push(Access::read(
                    WAREHOUSE,
                    wh_key(w),
                    ColumnSet::one(col::W_TAX),
                ));
                out.push(Access::read(
                    CUSTOMER,
                    cust_key(w, d, self.c),
                    ColumnSet::of(&[col::C_DISCOUNT, col::C_LAST, col::C_CREDIT]),
                ));
            }
            2 => out.push(Access::update(
                DISTRICT,
                dist_key(w, d),
                ColumnSet::of(&[col::D_TAX, col::D_NEXT_O_ID]),
                ColumnSet::one(col::D_NEXT_O_ID),
            )),
            3 => out.extend(self.lines.iter().map(|l| {
                Access::update(
                    STOCK,
                    stock_key(l.supply_w, l.i),
                    stock_cols(d),
                    stock_writes(),
                )
            })),
            _ => {
                let o = self.o_id;
                out.push(Access::insert(ORDER, order_key(w, d, o)));
                out.push(Access::insert(NEW_ORDER, order_key(w, d, o)));
                out.push(Access::insert(
                    ORDER_BY_CUSTOMER,
                    order_cust_key(w, d, self.c, o),
                ));
                out.extend(
                    (1..=self.lines.len() as u32)
                        .map(|ol| Access::insert(ORDER_LINE, ol_key(w, d, o, ol))),
                );
            }
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if piece == 4 {
            out.extend([0, 1, 2, 3]);
        }
    }
    fn declaration_depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if piece == 4 {
            out.push(2); // the o_id, from d_next_o_id
        }
    }
    fn commit_point(&self) -> Option<usize> {
        Some(0)
    }
    fn conflict_units(&self) -> Option<ConflictUnits> {
        Some(UNITS)
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let (w, d) = (self.w, self.d);
        match piece {
            0 => {
                for l in &mut self.lines {
                    let cols = ColumnSet::of(&[col::I_PRICE, col::I_NAME, col::I_DATA]);
                    let Some(item) = tx.get(ITEM, item_key(l.i), cols)? else {
                        return Err(Abort::user("NewOrder: invalid item"));
                    };
                    l.price = item.int(col::I_PRICE);
                    l.original = has_original(item.str(col::I_DATA));
                    black_box(item.str(col::I_NAME));
                }
            }
            1 => {
                let wh = tx.get(WAREHOUSE, wh_key(w), ColumnSet::one(col::W_TAX))?;
                self.w_tax = wh.map_or(0, |r| r.int(col::W_TAX));
                let cols = ColumnSet::of(&[col::C_DISCOUNT, col::C_LAST, col::C_CREDIT]);
                let cust = tx.get(CUSTOMER, cust_key(w, d, self.c), cols)?;
                self.c_discount = cust.map_or(0, |r| {
                    black_box((r.str(col::C_LAST), r.str(col::C_CREDIT)));
                    r.int(col::C_DISCOUNT)
                });
            }
            2 => {
                let cols = ColumnSet::of(&[col::D_TAX, col::D_NEXT_O_ID]);
                let (tax, next) = tx
                    .update(DISTRICT, dist_key(w, d), cols, |r| {
                        let next = r.int(col::D_NEXT_O_ID);
                        r.set_int(col::D_NEXT_O_ID, next + 1);
                        (r.int(col::D_TAX), next)
                    })?
                    .ok_or_else(|| Abort::user("NewOrder: no such district"))?;
                self.d_tax = tax;
                self.o_id = next as u32;
            }
            3 => {
                for l in &mut self.lines {
                    let remote = l.supply_w != w;
                    let qty = l.quantity as i64;
                    let dist_col = col::S_DIST_01 + d as usize - 1;
                    tx.update(STOCK, stock_key(l.supply_w, l.i), stock_cols(d), |r| {
                        let q = r.int(col::S_QUANTITY);
                        r.set_int(
                            col::S_QUANTITY,
                            if q >= qty + 10 { q - qty } else { q - qty + 91 },
                        );
                        r.set_int(col::S_YTD, r.int(col::S_YTD) + qty);
                        r.set_int(col::S_ORDER_CNT, r.int(col::S_ORDER_CNT) + 1);
                        if remote {
                            r.set_int(col::S_REMOTE_CNT, r.int(col::S_REMOTE_CNT) + 1);
                        }
                        l.dist_info.copy_from_slice(&r.str(dist_col)[..24]);
                        l.original &= has_original(r.str(col::S_DATA));
                    })?;
                }
            }
            _ => {
                let o = self.o_id;
                let (c, entry_d, n) = (self.c, self.entry_d, self.lines.len());
                let all_local = self.all_local();
                tx.insert(ORDER, order_key(w, d, o), |r| {
                    r.set_int(col::O_ID, o as i64);
                    r.set_int(col::O_D_ID, d as i64);
                    r.set_int(col::O_W_ID, w as i64);
                    r.set_int(col::O_C_ID, c as i64);
                    r.set_int(col::O_ENTRY_D, entry_d);
                    r.set_int(col::O_CARRIER_ID, 0);
                    r.set_int(col::O_OL_CNT, n as i64);
                    r.set_int(col::O_ALL_LOCAL, all_local as i64);
                })?;
                tx.insert(NEW_ORDER, order_key(w, d, o), |r| {
                    r.set_int(col::NO_O_ID, o as i64);
                    r.set_int(col::NO_D_ID, d as i64);
                    r.set_int(col::NO_W_ID, w as i64);
                })?;
                tx.insert(ORDER_BY_CUSTOMER, order_cust_key(w, d, c, o), |r| {
                    r.set_int(col::OC_O_ID, o as i64)
                })?;
                let mut total = 0i64;
                for (i, l) in self.lines.iter().enumerate() {
                    let amount = l.quantity as i64 * l.price;
                    total += amount;
                    black_box(if l.original { b'B' } else { b'G' });
                    tx.insert(ORDER_LINE, ol_key(w, d, o, i as u32 + 1), |r| {
                        r.set_int(col::OL_O_ID, o as i64);
                        r.set_int(col::OL_D_ID, d as i64);
                        r.set_int(col::OL_W_ID, w as i64);
                        r.set_int(col::OL_NUMBER, i as i64 + 1);
                        r.set_int(col::OL_I_ID, l.i as i64);
                        r.set_int(col::OL_SUPPLY_W_ID, l.supply_w as i64);
                        r.set_int(col::OL_DELIVERY_D, 0);
                        r.set_int(col::OL_QUANTITY, l.quantity as i64);
                        r.set_int(col::OL_AMOUNT, amount);
                        r.set_str(col::OL_DIST_INFO, &l.dist_info)
                            .expect("24 bytes");
                    })?;
                }
                // total · (1 − c_discount) · (1 + w_tax + d_tax), in basis points.
                black_box(
                    total * (10_000 - self.c_discount) / 10_000
                        * (10_000 + self.w_tax + self.d_tax)
                        / 10_000,
                );
            }
        }
        Ok(())
    }
}
