//! Delivery (clause 2.7): deliver the oldest undelivered order of each of a warehouse's 10 districts.
//!
//! Three pieces per district `d` (pieces `3(d−1)` .. `3(d−1)+2`):
//!
//! | piece | does                                                                  | depends on |
//! |-------|-----------------------------------------------------------------------|------------|
//! | A     | scan NEW-ORDER over `(w, d, *)` for the oldest order (first key)      | –          |
//!
//! (The range ends before the district's fence row, [`FENCE_O_ID`].)
//! | B     | delete that NEW-ORDER; set the ORDER's carrier, read o_c_id, o_ol_cnt | A          |
//! | C     | set each ORDER-LINE's delivery date, sum amounts; CUSTOMER balance += sum, delivery_cnt++ | B |
//!
//! A district without undelivered orders is skipped (B and C then declare and do nothing).
//!
//! **Commit point: the last piece.** Delivery never aborts by its own logic, but a protocol that
//! plans it from a reconnaissance may find a district empty that is not by the time B runs (a
//! New-Order ordered before it in the same batch): B and C then touch what they did not declare —
//! not even in the same conflict unit, since they declared nothing — and the attempt must be able
//! to abort and be planned again. PWV takes the commit point for that; its own rule (a piece whose
//! declaration came from reconnaissance and names a record is abortable) sees neither a piece that
//! declared nothing nor, with the district-keyed tables (warehouse, district) units
//! ([`super::units`]), one that declared only units.
//!
//! **Where the scan starts.** A deleted key stays in the ordered index as a tombstone (see
//! `ordo::storage::table`), so a scan from o_id 0 would walk past every order delivered so far and
//! Delivery would slow down as a run goes on. The workload therefore keeps, per district, a low-water
//! mark [`OldestNewOrder`] — like the SSI thesis's client-cached `w_tax`, outside the database — and
//! the scan covers `o_id ≥ mark`. The mark is raised to the first key a Delivery scan finds present.
//! That is safe: every protocol's scan sees only committed (or certain-to-commit) deletes, a committed
//! delete is never undone, and New-Order only inserts above every existing order, so the keys below the
//! mark stay absent for good.

use super::schema::*;
use super::units::UNITS;
use ordo::storage::ColumnSet;
use ordo::txn::{Access, ConflictUnits, Program, Tx, TxResult};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Per district, an o_id below which NEW-ORDER holds no key any more (see the module doc).
#[derive(Debug)]
pub struct OldestNewOrder(Box<[AtomicU32]>);

impl OldestNewOrder {
    pub fn new(warehouses: u32) -> Self {
        OldestNewOrder(
            (0..warehouses * DISTRICTS)
                .map(|_| AtomicU32::new(0))
                .collect(),
        )
    }
    fn slot(&self, w: u32, d: u32) -> &AtomicU32 {
        &self.0[((w - 1) * DISTRICTS + d - 1) as usize]
    }
    pub fn get(&self, w: u32, d: u32) -> u32 {
        self.slot(w, d).load(Ordering::Relaxed)
    }
    fn raise(&self, w: u32, d: u32, o: u32) {
        self.slot(w, d).fetch_max(o, Ordering::Relaxed);
    }
    /// Back to 0, for a freshly loaded database.
    pub fn reset(&self) {
        for a in self.0.iter() {
            a.store(0, Ordering::Relaxed);
        }
    }
}

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
    /// Where each district's scan starts (the marks when the transaction was drawn).
    pub from: [u32; DISTRICTS as usize],
    /// The marks to raise (none: scans start where `from` says and raise nothing).
    pub marks: Option<Arc<OldestNewOrder>>,
    districts: [District; DISTRICTS as usize],
}

impl Delivery {
    /// Orders delivered by the last run (districts that had one).
    pub fn delivered(&self) -> usize {
        self.districts.iter().filter(|d| d.o_id != 0).count()
    }
}

impl Delivery {
    fn new_orders(&self, d: u32) -> (u64, u64) {
        (
            order_key(self.w, d, self.from[d as usize - 1]),
            order_key(self.w, d, FENCE_O_ID - 1),
        )
    }
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
                let (lo, hi) = self.new_orders(d);
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
        if !piece.is_multiple_of(3) {
            out.push(piece - 1);
        }
    }
    fn commit_point(&self) -> Option<usize> {
        Some(self.pieces() - 1) // see the module doc
    }
    fn conflict_units(&self) -> Option<ConflictUnits> {
        Some(UNITS)
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let (w, d) = (self.w, piece as u32 / 3 + 1);
        let (carrier, date) = (self.carrier, self.date);
        let (lo, hi) = self.new_orders(d);
        let dist = &mut self.districts[piece / 3];
        match piece % 3 {
            0 => {
                *dist = District::default();
                tx.scan(NEW_ORDER, lo, hi, ColumnSet::one(col::NO_O_ID), |key, _| {
                    dist.o_id = order_id(key);
                    false
                })?;
                if let (Some(m), true) = (&self.marks, dist.o_id != 0) {
                    m.raise(w, d, dist.o_id);
                }
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
