//! Payment (clause 2.5): a customer pays; the warehouse's and district's year-to-date totals grow.
//!
//! | piece | does                                                                   | depends on        | declaration depends on |
//! |-------|------------------------------------------------------------------------|-------------------|------------------------|
//! | 0     | `w_ytd += amount` (only read it with `--no-ytd`), read the name         | –                 | –                      |
//! | 1     | `d_ytd += amount` (only read it with `--no-ytd`), read the name         | –                 | –                      |
//! | 2     | by last name (60%): scan CUSTOMER_BY_NAME for the middle customer      | –                 | –                      |
//! | 3     | update CUSTOMER (balance, ytd payment, count; c_data if bad credit)    | 2 by name         | 2 by name              |
//! | 4     | insert HISTORY (with the warehouse's and district's names)             | 0, 1; 2 by name   | –                      |
//!
//! The edges are exact: by id nothing needs the (empty) piece 2, and the customer update needs
//! nothing of pieces 0 and 1. The HISTORY insert is a piece of its own because its key is an input
//! (never stale), while the customer's key, by name, comes from the index scan: PWV treats a
//! piece whose declaration came from a reconnaissance and names a record as abortable, and
//! HISTORY's key is a record, the customer's a (warehouse, district) unit ([`super::units`]).
//! The warehouse's and the district's totals are a piece each, one record each, so that Salt can
//! make each an alkaline subtransaction of its own ([`super::base`]).
//!
//! With DBx1000's work (`--mix dbx1000`) piece 4 does not run and `c_data` is not rewritten.
//!
//! The customer belongs to a remote warehouse in 15% of payments when there is more than one.
//!
//! Pieces 0 and 1's increments commute with another Payment's ([`Program::commutes`], read by
//! `ic3-comm`).

use super::customer::Lookup;
use super::schema::*;
use super::units::UNITS;
use ordo::storage::ColumnSet;
use ordo::txn::{Abort, Access, ConflictUnits, Program, Tx, TxResult};

/// A Payment transaction.
#[derive(Clone, Debug, Default)]
pub struct Payment {
    pub w: u32,
    pub d: u32,
    /// The customer (in warehouse `customer.w`, district `customer.d`).
    pub customer: Lookup,
    /// Cents.
    pub amount: i64,
    pub date: i64,
    /// The HISTORY key this payment inserts.
    pub h_key: u64,
    /// Skip the w_ytd / d_ytd updates (SSI thesis option).
    pub no_ytd: bool,
    /// DBx1000's work ([`super::mix`]): no HISTORY insert (piece 4 does not run), and a bad-credit
    /// customer's `c_data` is left alone.
    pub dbx1000: bool,
    w_name: Vec<u8>,
    d_name: Vec<u8>,
    scratch: Vec<u8>,
}

fn wh_cols() -> ColumnSet {
    ColumnSet(((1u64 << 7) - 1) & !1) // w_name .. w_zip
}
fn dist_cols() -> ColumnSet {
    ColumnSet(((1u64 << 8) - 1) & !3) // d_name .. d_zip
}
fn cust_reads() -> ColumnSet {
    // c_first .. c_data except c_delivery_cnt.
    ColumnSet(((1u64 << 21) - 1) & !0b111 & !(1 << col::C_DELIVERY_CNT))
}
fn cust_writes(dbx1000: bool) -> ColumnSet {
    let counts = ColumnSet::of(&[col::C_BALANCE, col::C_YTD_PAYMENT, col::C_PAYMENT_CNT]);
    if dbx1000 {
        counts
    } else {
        counts.union(ColumnSet::one(col::C_DATA))
    }
}

impl Program for Payment {
    fn name(&self) -> &'static str {
        "Payment"
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
            0 if self.no_ytd => out.push(Access::read(WAREHOUSE, wh_key(w), wh_cols())),
            1 if self.no_ytd => out.push(Access::read(DISTRICT, dist_key(w, d), dist_cols())),
            0 => {
                let ytd = ColumnSet::one(col::W_YTD);
                out.push(Access::update(
                    WAREHOUSE,
                    wh_key(w),
                    wh_cols().union(ytd),
                    ytd,
                ));
            }
            1 => {
                let ytd = ColumnSet::one(col::D_YTD);
                out.push(Access::update(
                    DISTRICT,
                    dist_key(w, d),
                    dist_cols().union(ytd),
                    ytd,
                ));
            }
            2 => self.customer.declare(out),
            3 => out.push(Access::update(
                CUSTOMER,
                self.customer.key(),
                cust_reads(),
                cust_writes(self.dbx1000),
            )),
            _ => out.push(Access::insert(HISTORY, self.h_key)),
        }
    }
    /// A customer found by last name is one of its district's: the bounds of piece 3 (what
    /// `hstore` takes instead of a reconnaissance pass, so that a remote customer's partition is
    /// held from the start).
    fn declare_bounds(&self, piece: usize, out: &mut Vec<Access>) -> bool {
        if piece != 3 {
            return false;
        }
        let (w, d) = (self.customer.w, self.customer.d);
        out.push(Access::update_within(
            CUSTOMER,
            cust_key(w, d, 0),
            cust_key(w, d, (1 << 12) - 1),
            cust_reads(),
            cust_writes(self.dbx1000),
        ));
        true
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        let by_name = self.customer.by_name();
        match piece {
            3 if by_name => out.push(2),
            4 => {
                out.extend([0, 1]); // w_name, d_name
                if by_name {
                    out.push(2); // c
                }
            }
            _ => {}
        }
    }
    fn declaration_depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if piece == 3 && self.customer.by_name() {
            out.push(2); // the customer found by last name
        }
    }
    fn conflict_units(&self) -> Option<ConflictUnits> {
        Some(UNITS)
    }
    /// Pieces 0 and 1's writes commute with another Payment's (for `ic3-comm`): `w_ytd += amount`
    /// and `d_ytd += amount`, whose old values the payment never sees, beside names nobody writes.
    /// The customer's update does not (a bad-credit customer's `c_data` is prepended to), nor do
    /// pieces 0 and 1 with `--no-ytd` (they write nothing).
    fn commutes(&self, piece: usize) -> bool {
        piece <= 1 && !self.no_ytd
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let (w, d, amount) = (self.w, self.d, self.amount);
        match piece {
            0 => {
                let wn = &mut self.w_name;
                let found = if self.no_ytd {
                    tx.get(WAREHOUSE, wh_key(w), wh_cols())?.map(|r| {
                        wn.clear();
                        wn.extend_from_slice(r.str(col::W_NAME));
                    })
                } else {
                    let ytd = ColumnSet::one(col::W_YTD);
                    tx.update(WAREHOUSE, wh_key(w), wh_cols().union(ytd), |r| {
                        r.set_int(col::W_YTD, r.int(col::W_YTD) + amount);
                        wn.clear();
                        wn.extend_from_slice(r.str(col::W_NAME));
                    })?
                };
                found.ok_or_else(|| Abort::user("Payment: no such warehouse"))?;
            }
            1 => {
                let dn = &mut self.d_name;
                let found = if self.no_ytd {
                    tx.get(DISTRICT, dist_key(w, d), dist_cols())?.map(|r| {
                        dn.clear();
                        dn.extend_from_slice(r.str(col::D_NAME));
                    })
                } else {
                    let ytd = ColumnSet::one(col::D_YTD);
                    tx.update(DISTRICT, dist_key(w, d), dist_cols().union(ytd), |r| {
                        r.set_int(col::D_YTD, r.int(col::D_YTD) + amount);
                        dn.clear();
                        dn.extend_from_slice(r.str(col::D_NAME));
                    })?
                };
                found.ok_or_else(|| Abort::user("Payment: no such district"))?;
            }
            2 => self.customer.run(tx)?,
            3 => {
                let (c, cd, cw) = (self.customer.c, self.customer.d, self.customer.w);
                let scratch = &mut self.scratch;
                let keep_data = self.dbx1000;
                tx.update(CUSTOMER, self.customer.key(), cust_reads(), |r| {
                    r.set_int(col::C_BALANCE, r.int(col::C_BALANCE) - amount);
                    r.set_int(col::C_YTD_PAYMENT, r.int(col::C_YTD_PAYMENT) + amount);
                    r.set_int(col::C_PAYMENT_CNT, r.int(col::C_PAYMENT_CNT) + 1);
                    if r.str(col::C_CREDIT) == b"BC" && !keep_data {
                        // Prepend (c_id, c_d_id, c_w_id, d_id, w_id, h_amount) to c_data, keep 500 chars.
                        scratch.clear();
                        use std::io::Write;
                        let _ = write!(scratch, "{c} {cd} {cw} {d} {w} {amount} ");
                        scratch.extend_from_slice(r.str(col::C_DATA));
                        scratch.truncate(500);
                        r.set_str(col::C_DATA, scratch).expect("500 chars fit");
                    }
                })?
                .ok_or_else(|| Abort::user("Payment: no such customer"))?;
            }
            _ => {
                let (c, cd, cw) = (self.customer.c, self.customer.d, self.customer.w);
                let (wn, dn, date) = (&self.w_name, &self.d_name, self.date);
                let scratch = &mut self.scratch;
                scratch.clear();
                scratch.extend_from_slice(&wn[..wn.len().min(10)]);
                scratch.extend_from_slice(b"    ");
                scratch.extend_from_slice(&dn[..dn.len().min(10)]);
                tx.insert(HISTORY, self.h_key, |r| {
                    r.set_int(col::H_C_ID, c as i64);
                    r.set_int(col::H_C_D_ID, cd as i64);
                    r.set_int(col::H_C_W_ID, cw as i64);
                    r.set_int(col::H_D_ID, d as i64);
                    r.set_int(col::H_W_ID, w as i64);
                    r.set_int(col::H_DATE, date);
                    r.set_int(col::H_AMOUNT, amount);
                    r.set_str(col::H_DATA, scratch).expect("24 chars fit");
                })?;
            }
        }
        Ok(())
    }
}
