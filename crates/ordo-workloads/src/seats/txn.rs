//! The six SEATS transactions as programs, piece by piece (BenchBase's `seats/procedures`).
//!
//! Each statement (or a few on one row) is a piece. A customer named by `c_id_str` or by
//! frequent-flyer number is first looked up in its index table; the later pieces declare keys built
//! from the `c_id` found, so they depend on that step. A step a transaction does not need (no lookup
//! by `c_id`; no distance search) is left out, so the pieces are numbered from the first step run.
//!
//! | transaction       | steps                                                                                 |
//! |-------------------|---------------------------------------------------------------------------------------|
//! | DeleteReservation | 0 `c_id_str` or ff number → `c_id` (by `c_id`: skipped) · 1 read `reservation_by_customer[c, f]` (none: roll back), `customer[c]`, `flight[f]` · 2 read `reservation[f, seat]` · 3 delete it and its index entry, `f_seats_left + 1` (described), refund the customer, `c_iattr10 − 1`, `ff_iattr10 − 1` of the flight's airline |
//! | FindFlights       | 0 scan `airport_distance[depart, *]`, keep `d_distance ≤ ?` (no distance: skipped) · 1 `flight WHERE f_depart_ap_id = ? AND f_depart_time BETWEEN ? AND ? AND f_arrive_ap_id IN (…)`, each with its airline, airports and countries |
//! | FindOpenSeats     | 0 read `flight[f]`, scan `reservation[f, 0..150]`: the seat map, each open seat's price |
//! | NewReservation    | 0 read `flight[f]` (sold out: roll back) and its airline · 1 read `reservation[f, seat]` (taken: roll back), `reservation_by_customer[c, f]` (present: roll back), `customer[c]` · 2 insert the reservation and its index entry, `f_seats_left − 1` (described), `c_iattr10 + 1`, `ff_iattr10 + 1` |
//! | UpdateCustomer    | 0 `c_id_str` → `c_id` (by `c_id`: skipped) · 1 read `customer[c]`, its base airport and country, scan its `frequent_flyer` rows (25%) · 2 set `c_iattr00`, `c_iattr01` and the frequent-flyer rows' `ff_iattr00`, `ff_iattr01` |
//! | UpdateReservation | 0 read `reservation[f, new seat]` (taken: roll back), `reservation_by_customer[c, f]` (none: roll back) · 1 read `reservation[f, old seat]` · 2 move it: delete, insert at the new seat with `r_iattr0x` set, repoint the index |
//!
//! The reference tables (`airport`, `airline`, `country`) are declared as scans of the whole table
//! where the rows read are found by running: they are read-only, so no protocol locks them.

use super::{
    ff_key, rc_key, res_key, Seats, AIRLINE, AIRPORT, AIRPORT_DISTANCE, AL_NAME, AP_CO_ID, CO_NAME,
    CS_C_ID, CUSTOMER, CUSTOMER_BY_ID_STR, C_BALANCE, C_BASE_AP_ID, C_IATTR00, C_IATTR01,
    C_IATTR10, C_IATTR11, C_IATTR12, C_IATTR13, D_DISTANCE, FF_BY_NUMBER, FF_IATTR00, FF_IATTR01,
    FF_IATTR10, FF_IATTR11, FLIGHT, FN_C_ID, FREQUENT_FLYER, F_AL_ID, F_ARRIVE_AP_ID, F_BASE_PRICE,
    F_DEPART_AP_ID, F_DEPART_TIME, F_SEATS_LEFT, F_SEATS_TOTAL, F_STATUS, RC_SEAT, RESERVATION,
    RESERVATION_BY_CUSTOMER, R_C_ID, R_F_ID, R_IATTR00, R_ID, R_PRICE, R_SEAT, SEATS_PER_FLIGHT,
};
use crate::seats::{AIRLINES, COUNTRY};
use ordo::storage::ColumnSet;
use ordo::txn::predicate::{Expr, Predicate};
use ordo::txn::{Abort, Access, Program, Tx, TxResult};
use std::hint::black_box;

/// The transaction types, in OLTP-Bench's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    DeleteReservation,
    FindFlights,
    FindOpenSeats,
    NewReservation,
    UpdateCustomer,
    UpdateReservation,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::DeleteReservation,
        Kind::FindFlights,
        Kind::FindOpenSeats,
        Kind::NewReservation,
        Kind::UpdateCustomer,
        Kind::UpdateReservation,
    ];
    /// Share of the mix, in percent (`SEATSConstants.FREQUENCY_*`).
    pub fn percent(self) -> u32 {
        match self {
            Kind::DeleteReservation | Kind::FindFlights | Kind::UpdateCustomer => 10,
            Kind::FindOpenSeats => 35,
            Kind::NewReservation => 20,
            Kind::UpdateReservation => 15,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::DeleteReservation => "DeleteReservation",
            Kind::FindFlights => "FindFlights",
            Kind::FindOpenSeats => "FindOpenSeats",
            Kind::NewReservation => "NewReservation",
            Kind::UpdateCustomer => "UpdateCustomer",
            Kind::UpdateReservation => "UpdateReservation",
        }
    }
    /// Whether the type never writes.
    pub fn read_only(self) -> bool {
        matches!(self, Kind::FindFlights | Kind::FindOpenSeats)
    }
}

/// How DeleteReservation and UpdateCustomer name their customer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// By `c_id`: no lookup.
    Id,
    /// `SELECT c_id FROM customer WHERE c_id_str = ?`.
    IdStr,
    /// `SELECT c_id, ff_al_id FROM customer, frequent_flyer WHERE ff_c_id_str = ? AND ff_c_id = c_id`.
    FrequentFlyer,
}

/// Columns a flight update is described by (beside `f_seats_left`), and FindFlights reads.
const FLIGHT_IMAGE: [usize; 3] = [F_DEPART_AP_ID, F_DEPART_TIME, F_ARRIVE_AP_ID];
const FLIGHT_READ: ColumnSet = ColumnSet(
    1 << F_AL_ID
        | 1 << F_DEPART_AP_ID
        | 1 << F_DEPART_TIME
        | 1 << F_ARRIVE_AP_ID
        | 1 << F_BASE_PRICE
        | 1 << F_SEATS_TOTAL
        | 1 << F_SEATS_LEFT,
);
const SEAT_COL: ColumnSet = ColumnSet::one(F_SEATS_LEFT);
const CUSTOMER_NEW: ColumnSet =
    ColumnSet(1 << C_IATTR10 | 1 << C_IATTR11 | 1 << C_IATTR12 | 1 << C_IATTR13);
const CUSTOMER_DELETE: ColumnSet =
    ColumnSet(1 << C_BALANCE | 1 << C_IATTR00 | 1 << C_IATTR10 | 1 << C_IATTR11);
const CUSTOMER_ATTRS: ColumnSet = ColumnSet(1 << C_IATTR00 | 1 << C_IATTR01);
const FF_NEW: ColumnSet = ColumnSet(1 << FF_IATTR10 | 1 << FF_IATTR11);
const FF_DELETE: ColumnSet = ColumnSet::one(FF_IATTR10);
const FF_ATTRS: ColumnSet = ColumnSet(1 << FF_IATTR00 | 1 << FF_IATTR01);
const RES_SEATMAP: ColumnSet = ColumnSet(1 << R_ID | 1 << R_F_ID | 1 << R_SEAT);

/// The whole of a read-only reference table, read where the rows are found by running.
fn reference(table: ordo::storage::TableId) -> Access {
    Access::scan(table, 0, u64::MAX, ColumnSet::ALL)
}

/// The first and last keys of flight `f`'s reservations (seats 0..150: a predicate lock manager
/// that files a narrow key range under each of its values files it under 150, not 256).
fn seat_range(f: u64) -> (u64, u64) {
    (res_key(f, 0), res_key(f, SEATS_PER_FLIGHT - 1))
}

/// The first and last keys of customer `c`'s frequent-flyer rows (airlines 1..=20).
fn ff_range(c: u64) -> (u64, u64) {
    (ff_key(c, 1), ff_key(c, AIRLINES))
}

/// One SEATS transaction: type, parameters, and what earlier pieces found.
#[derive(Clone, Debug)]
pub struct SeatsTxn {
    pub kind: Kind,
    pub lookup: Lookup,
    pub c_id: u64,
    /// The customer's `c_id_str` (also its frequent-flyer number).
    pub c_id_str: u64,
    pub f_id: u64,
    /// NewReservation's seat; UpdateReservation's new seat.
    pub seat: u64,
    /// NewReservation's reservation id.
    pub r_id: u64,
    /// Attribute values to write (`attrs[0..4]`).
    pub attrs: [i64; 4],
    /// UpdateReservation: which `r_iattr0x` it sets.
    pub attr_idx: usize,
    /// UpdateCustomer: also its frequent-flyer rows.
    pub update_ff: bool,
    /// FindFlights: departure and arrival airports, window (minutes), nearby distance (0: none).
    pub depart: u64,
    pub arrive: u64,
    pub start: i64,
    pub end: i64,
    pub distance: i64,
    // Outputs of earlier pieces.
    found: u64,
    airline: u64,
    /// The flight's `f_depart_ap_id`, `f_depart_time`, `f_arrive_ap_id`, `f_seats_left`.
    image: [i64; 4],
    base_price: i64,
    old_seat: u64,
    customer_iattr00: i64,
    price: i64,
    /// UpdateReservation: the reservation's columns.
    row: [i64; 9],
    ff_keys: Vec<u64>,
    arrivals: Vec<u64>,
    /// Rows a search found (FindFlights: flights; FindOpenSeats: open seats).
    pub found_rows: u32,
}

impl Default for SeatsTxn {
    fn default() -> Self {
        Self::new()
    }
}

impl SeatsTxn {
    pub fn new() -> Self {
        SeatsTxn {
            kind: Kind::FindOpenSeats,
            lookup: Lookup::Id,
            c_id: 1,
            c_id_str: 0,
            f_id: 1,
            seat: 0,
            r_id: 0,
            attrs: [0; 4],
            attr_idx: 0,
            update_ff: false,
            depart: 1,
            arrive: 2,
            start: 0,
            end: 0,
            distance: 0,
            found: 0,
            airline: 0,
            image: [0; 4],
            base_price: 0,
            old_seat: 0,
            customer_iattr00: 0,
            price: 0,
            row: [0; 9],
            ff_keys: Vec::new(),
            arrivals: Vec::new(),
            found_rows: 0,
        }
    }

    /// A fresh transaction of type `kind`: lookup by `c_id`, no frequent-flyer update, no distance.
    pub fn reset(&mut self, kind: Kind) {
        self.kind = kind;
        self.lookup = Lookup::Id;
        self.update_ff = false;
        self.distance = 0;
        self.attr_idx = 0;
    }

    /// The customer: the input `c_id`, or the one the lookup found.
    fn customer(&self) -> u64 {
        match self.lookup {
            Lookup::Id => self.c_id,
            _ => self.found,
        }
    }

    /// Whether the first step (a lookup, a distance search) is left out.
    fn skips_first(&self) -> bool {
        match self.kind {
            Kind::DeleteReservation | Kind::UpdateCustomer => self.lookup == Lookup::Id,
            Kind::FindFlights => self.distance == 0,
            _ => false,
        }
    }

    /// The step piece `piece` runs.
    fn step(&self, piece: usize) -> usize {
        piece + usize::from(self.skips_first())
    }

    /// The piece that runs step `step`.
    fn piece_of(&self, step: usize) -> usize {
        step - usize::from(self.skips_first())
    }

    /// The `f_seats_left` update of the flight read, described by the flight's values before and
    /// after (the predicate DIBS locks: it meets a FindFlights search only if the flight matches).
    fn flight_images(&self, delta: i64) -> Predicate {
        let mut parts: Vec<Predicate> = FLIGHT_IMAGE
            .iter()
            .zip(self.image)
            .map(|(&c, v)| Expr::eq(c as u16, v))
            .collect();
        let left = self.image[3];
        parts.push(Expr::or(vec![
            Expr::eq(F_SEATS_LEFT as u16, left),
            Expr::eq(F_SEATS_LEFT as u16, left + delta),
        ]));
        Expr::and(parts)
    }

    /// Reads flight `f`'s columns the updates are described by; `None` if absent.
    fn read_flight<T: Tx>(&mut self, tx: &mut T) -> TxResult<Option<()>> {
        let Some(r) = tx.get(FLIGHT, self.f_id, FLIGHT_READ)? else {
            return Ok(None);
        };
        self.airline = r.int(F_AL_ID) as u64;
        self.image = [
            r.int(F_DEPART_AP_ID),
            r.int(F_DEPART_TIME),
            r.int(F_ARRIVE_AP_ID),
            r.int(F_SEATS_LEFT),
        ];
        self.base_price = r.int(F_BASE_PRICE);
        Ok(Some(()))
    }

    /// The FindFlights predicate.
    pub fn search(&self) -> Predicate {
        let arrive: Vec<Predicate> = self
            .arrivals
            .iter()
            .map(|&a| Expr::eq(F_ARRIVE_AP_ID as u16, a as i64))
            .collect();
        let arrive = match arrive.len() {
            1 => arrive.into_iter().next().expect("one"),
            _ => Expr::or(arrive),
        };
        Expr::and(vec![
            Expr::eq(F_DEPART_AP_ID as u16, self.depart as i64),
            Expr::atom(
                F_DEPART_TIME as u16,
                ordo::txn::predicate::Op::Ge,
                self.start,
            ),
            Expr::atom(F_DEPART_TIME as u16, ordo::txn::predicate::Op::Le, self.end),
            arrive,
        ])
    }
}

impl Program for SeatsTxn {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn pieces(&self) -> usize {
        let steps = match self.kind {
            Kind::DeleteReservation => 4,
            Kind::FindFlights => 2,
            Kind::FindOpenSeats => 1,
            Kind::NewReservation | Kind::UpdateCustomer | Kind::UpdateReservation => 3,
        };
        steps - usize::from(self.skips_first())
    }

    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        use Kind::*;
        let one = ColumnSet::one;
        let (c, f) = (self.customer(), self.f_id);
        match (self.kind, self.step(piece)) {
            (DeleteReservation | UpdateCustomer, 0) => match self.lookup {
                Lookup::FrequentFlyer => {
                    out.push(Access::read(FF_BY_NUMBER, self.c_id_str, ColumnSet::ALL))
                }
                _ => out.push(Access::read(
                    CUSTOMER_BY_ID_STR,
                    self.c_id_str,
                    one(CS_C_ID),
                )),
            },
            (DeleteReservation, 1) => out.extend([
                Access::read(RESERVATION_BY_CUSTOMER, rc_key(c, f), one(RC_SEAT)),
                Access::read(CUSTOMER, c, ColumnSet::one(C_IATTR00)),
                Access::read(FLIGHT, f, FLIGHT_READ),
            ]),
            (DeleteReservation, 2) => out.push(Access::read(
                RESERVATION,
                res_key(f, self.old_seat),
                ColumnSet(1 << R_C_ID | 1 << R_PRICE),
            )),
            (DeleteReservation, _) => out.extend([
                Access::delete(RESERVATION, res_key(f, self.old_seat)),
                Access::delete(RESERVATION_BY_CUSTOMER, rc_key(c, f)),
                Access::update(FLIGHT, f, SEAT_COL, SEAT_COL),
                Access::update(CUSTOMER, c, CUSTOMER_DELETE, CUSTOMER_DELETE),
                Access::update(
                    FREQUENT_FLYER,
                    ff_key(c, self.airline),
                    FF_DELETE,
                    FF_DELETE,
                ),
            ]),
            (FindFlights, 0) => {
                let lo = super::distance_key(self.depart, 0);
                out.push(Access::scan(
                    AIRPORT_DISTANCE,
                    lo,
                    lo | 0xFFFF,
                    one(D_DISTANCE),
                ))
            }
            (FindFlights, _) => out.extend([
                Access::scan(FLIGHT, 0, u64::MAX, FLIGHT_READ),
                reference(AIRLINE),
                reference(AIRPORT),
                reference(COUNTRY),
            ]),
            (FindOpenSeats, _) => {
                let (lo, hi) = seat_range(f);
                out.extend([
                    Access::read(FLIGHT, f, ColumnSet::ALL),
                    Access::scan(RESERVATION, lo, hi, RES_SEATMAP),
                ])
            }
            (NewReservation, 0) => {
                out.extend([Access::read(FLIGHT, f, FLIGHT_READ), reference(AIRLINE)])
            }
            (NewReservation, 1) => out.extend([
                Access::read(RESERVATION, res_key(f, self.seat), one(R_ID)),
                Access::read(RESERVATION_BY_CUSTOMER, rc_key(self.c_id, f), one(RC_SEAT)),
                Access::read(CUSTOMER, self.c_id, one(C_BASE_AP_ID)),
            ]),
            (NewReservation, _) => out.extend([
                Access::insert(RESERVATION, res_key(f, self.seat)),
                Access::insert(RESERVATION_BY_CUSTOMER, rc_key(self.c_id, f)),
                Access::update(FLIGHT, f, SEAT_COL, SEAT_COL),
                Access::update(CUSTOMER, self.c_id, CUSTOMER_NEW, CUSTOMER_NEW),
                Access::update(
                    FREQUENT_FLYER,
                    ff_key(self.c_id, self.airline),
                    FF_NEW,
                    FF_NEW,
                ),
            ]),
            (UpdateCustomer, 1) => {
                out.extend([
                    Access::read(CUSTOMER, c, ColumnSet::ALL),
                    reference(AIRPORT),
                    reference(COUNTRY),
                ]);
                if self.update_ff {
                    let (lo, hi) = ff_range(c);
                    out.push(Access::scan(FREQUENT_FLYER, lo, hi, ColumnSet::NONE));
                }
            }
            (UpdateCustomer, _) => {
                out.push(Access::update(CUSTOMER, c, ColumnSet::NONE, CUSTOMER_ATTRS));
                out.extend(
                    self.ff_keys
                        .iter()
                        .map(|&k| Access::update(FREQUENT_FLYER, k, ColumnSet::NONE, FF_ATTRS)),
                );
            }
            (UpdateReservation, 0) => out.extend([
                Access::read(RESERVATION, res_key(f, self.seat), one(R_ID)),
                Access::read(RESERVATION_BY_CUSTOMER, rc_key(self.c_id, f), one(RC_SEAT)),
            ]),
            (UpdateReservation, 1) => out.push(Access::read(
                RESERVATION,
                res_key(f, self.old_seat),
                ColumnSet::ALL,
            )),
            (UpdateReservation, _) => out.extend([
                Access::delete(RESERVATION, res_key(f, self.old_seat)),
                Access::insert(RESERVATION, res_key(f, self.seat)),
                Access::update(
                    RESERVATION_BY_CUSTOMER,
                    rc_key(self.c_id, f),
                    ColumnSet::NONE,
                    one(RC_SEAT),
                ),
            ]),
        }
    }

    fn declaration_depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        use Kind::*;
        match (self.kind, self.step(piece)) {
            // Whole tables, or keys that are inputs.
            (FindFlights, _) | (FindOpenSeats, _) => {}
            (NewReservation, 0 | 1) | (UpdateReservation, 0) => {}
            // The frequent-flyer row's airline is the flight's.
            (NewReservation, _) => out.push(0),
            _ => out.extend(0..piece),
        }
    }

    fn commit_point(&self) -> Option<usize> {
        let step = match self.kind {
            Kind::DeleteReservation => 2,
            Kind::NewReservation | Kind::UpdateReservation | Kind::UpdateCustomer => 1,
            Kind::FindFlights | Kind::FindOpenSeats => return None,
        };
        Some(self.piece_of(step))
    }

    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        use Kind::*;
        let one = ColumnSet::one;
        let step = self.step(piece);
        if piece == 0 {
            self.found = self.c_id;
            self.found_rows = 0;
            self.ff_keys.clear();
            self.arrivals.clear();
            self.arrivals.push(self.arrive);
        }
        let f = self.f_id;
        match (self.kind, step) {
            (DeleteReservation | UpdateCustomer, 0) => {
                self.found = match self.lookup {
                    Lookup::FrequentFlyer => tx
                        .get(FF_BY_NUMBER, self.c_id_str, ColumnSet::ALL)?
                        .map(|r| r.int(FN_C_ID) as u64),
                    _ => tx
                        .get(CUSTOMER_BY_ID_STR, self.c_id_str, one(CS_C_ID))?
                        .map(|r| r.int(CS_C_ID) as u64),
                }
                .ok_or_else(|| Abort::user("no customer with that id string or number"))?;
            }
            (DeleteReservation, 1) => {
                let c = self.customer();
                self.old_seat = tx
                    .get(RESERVATION_BY_CUSTOMER, rc_key(c, f), one(RC_SEAT))?
                    .ok_or_else(|| Abort::user("the customer has no reservation on the flight"))?
                    .int(RC_SEAT) as u64;
                self.customer_iattr00 = tx
                    .get(CUSTOMER, c, one(C_IATTR00))?
                    .ok_or_else(|| Abort::user("no such customer"))?
                    .int(C_IATTR00);
                if self.read_flight(tx)?.is_none() {
                    return Err(Abort::user("no such flight"));
                }
            }
            (DeleteReservation, 2) => {
                let key = res_key(f, self.old_seat);
                let cols = ColumnSet(1 << R_C_ID | 1 << R_PRICE);
                let Some(r) = tx.get(RESERVATION, key, cols)? else {
                    return Err(Abort::user("the reservation is gone"));
                };
                if r.int(R_C_ID) as u64 != self.customer() {
                    return Err(Abort::user("the seat is another customer's"));
                }
                self.price = r.int(R_PRICE);
            }
            (DeleteReservation, _) => {
                let c = self.customer();
                tx.delete(RESERVATION, res_key(f, self.old_seat))?;
                tx.delete(RESERVATION_BY_CUSTOMER, rc_key(c, f))?;
                let images = self.flight_images(1);
                tx.update_described(FLIGHT, f, &images, SEAT_COL, |r| {
                    r.set_int(F_SEATS_LEFT, r.int(F_SEATS_LEFT) + 1)
                })?;
                let (price, iattr00) = (self.price, self.customer_iattr00 + 1);
                tx.update(CUSTOMER, c, CUSTOMER_DELETE, |r| {
                    let held = r.int(C_IATTR10) - 1;
                    r.set_int(C_BALANCE, r.int(C_BALANCE) - price);
                    r.set_int(C_IATTR00, iattr00);
                    r.set_int(C_IATTR10, held);
                    r.set_int(C_IATTR11, held);
                })?;
                // The frequent-flyer row of the flight's airline, if the customer has one.
                tx.update(FREQUENT_FLYER, ff_key(c, self.airline), FF_DELETE, |r| {
                    r.set_int(FF_IATTR10, r.int(FF_IATTR10) - 1)
                })?;
            }
            (FindFlights, 0) => {
                let lo = super::distance_key(self.depart, 0);
                let mut near: Vec<(i64, u64)> = Vec::new();
                let max = self.distance;
                tx.scan(
                    AIRPORT_DISTANCE,
                    lo,
                    lo | 0xFFFF,
                    one(D_DISTANCE),
                    |k, r| {
                        let d = r.int(D_DISTANCE);
                        if d <= max {
                            near.push((d, k & 0xFFFF));
                        }
                        true
                    },
                )?;
                near.sort_unstable();
                // H-Store's limit: the arrival airport and up to two nearby ones.
                for (_, ap) in near {
                    if self.arrivals.len() == 3 {
                        break;
                    }
                    if !self.arrivals.contains(&ap) {
                        self.arrivals.push(ap);
                    }
                }
            }
            (FindFlights, _) => {
                let pred = self.search();
                let mut flights: Vec<(u64, u64, u64)> = Vec::new();
                tx.scan_where(FLIGHT, &pred, FLIGHT_READ, |_, r| {
                    black_box(r.int(F_SEATS_LEFT));
                    flights.push((
                        r.int(F_AL_ID) as u64,
                        r.int(F_DEPART_AP_ID) as u64,
                        r.int(F_ARRIVE_AP_ID) as u64,
                    ));
                    true
                })?;
                for &(al, depart, arrive) in &flights {
                    if let Some(r) = tx.get(AIRLINE, al, one(AL_NAME))? {
                        black_box(r.int(AL_NAME));
                    }
                    for ap in [depart, arrive] {
                        let co = tx
                            .get(AIRPORT, ap, ColumnSet::ALL)?
                            .map(|r| r.int(AP_CO_ID));
                        if let Some(co) = co {
                            if let Some(r) = tx.get(COUNTRY, co as u64, ColumnSet::ALL)? {
                                black_box(r.int(CO_NAME));
                            }
                        }
                    }
                }
                self.found_rows = flights.len() as u32;
            }
            (FindOpenSeats, _) => {
                let Some(r) = tx.get(FLIGHT, f, ColumnSet::ALL)? else {
                    return Ok(());
                };
                black_box(r.int(F_STATUS));
                let (base, total, left) = (
                    r.int(F_BASE_PRICE),
                    r.int(F_SEATS_TOTAL),
                    r.int(F_SEATS_LEFT),
                );
                let mut taken = [false; 256];
                let (lo, hi) = seat_range(f);
                tx.scan(RESERVATION, lo, hi, RES_SEATMAP, |k, r| {
                    black_box(r.int(R_ID));
                    taken[(k & 0xFF) as usize] = true;
                    true
                })?;
                let mut open = 0;
                for seat in 0..SEATS_PER_FLIGHT {
                    if !taken[seat as usize] {
                        black_box(Seats::seat_price(base, left, total, seat));
                        open += 1;
                    }
                }
                self.found_rows = open;
            }
            (NewReservation, 0) => {
                if self.read_flight(tx)?.is_none() {
                    return Err(Abort::user("no such flight"));
                }
                if self.image[3] <= 0 {
                    return Err(Abort::user("no seats left on the flight"));
                }
                if let Some(r) = tx.get(AIRLINE, self.airline, ColumnSet::ALL)? {
                    black_box(r.int(AL_NAME));
                }
                self.price = Seats::seat_price(
                    self.base_price,
                    self.image[3],
                    SEATS_PER_FLIGHT as i64,
                    self.seat,
                );
            }
            (NewReservation, 1) => {
                if tx
                    .get(RESERVATION, res_key(f, self.seat), one(R_ID))?
                    .is_some()
                {
                    return Err(Abort::user("the seat is taken"));
                }
                if tx
                    .get(RESERVATION_BY_CUSTOMER, rc_key(self.c_id, f), one(RC_SEAT))?
                    .is_some()
                {
                    return Err(Abort::user("the customer already has a seat on the flight"));
                }
                if tx.get(CUSTOMER, self.c_id, one(C_BASE_AP_ID))?.is_none() {
                    return Err(Abort::user("no such customer"));
                }
            }
            (NewReservation, _) => {
                let (c, seat, r_id, price, attrs) =
                    (self.c_id, self.seat, self.r_id, self.price, self.attrs);
                tx.insert(RESERVATION, res_key(f, seat), |r| {
                    r.set_int(R_ID, r_id as i64);
                    r.set_int(R_C_ID, c as i64);
                    r.set_int(R_F_ID, f as i64);
                    r.set_int(R_SEAT, seat as i64);
                    r.set_int(R_PRICE, price);
                    for (i, a) in attrs.iter().enumerate() {
                        r.set_int(R_IATTR00 + i, *a);
                    }
                })?;
                tx.insert(RESERVATION_BY_CUSTOMER, rc_key(c, f), |r| {
                    r.set_int(RC_SEAT, seat as i64)
                })?;
                let images = self.flight_images(-1);
                tx.update_described(FLIGHT, f, &images, SEAT_COL, |r| {
                    r.set_int(F_SEATS_LEFT, r.int(F_SEATS_LEFT) - 1)
                })?;
                tx.update(CUSTOMER, c, CUSTOMER_NEW, |r| {
                    let held = r.int(C_IATTR10) + 1;
                    r.set_int(C_IATTR10, held);
                    r.set_int(C_IATTR11, r.int(C_IATTR11) + 1);
                    r.set_int(C_IATTR12, attrs[0]);
                    r.set_int(C_IATTR13, attrs[1]);
                })?;
                // "We don't care if we updated FrequentFlyer": the customer may have no row.
                tx.update(FREQUENT_FLYER, ff_key(c, self.airline), FF_NEW, |r| {
                    r.set_int(FF_IATTR10, r.int(FF_IATTR10) + 1);
                    r.set_int(FF_IATTR11, attrs[2]);
                })?;
            }
            (UpdateCustomer, 1) => {
                let c = self.customer();
                let Some(r) = tx.get(CUSTOMER, c, ColumnSet::ALL)? else {
                    return Err(Abort::user("no such customer"));
                };
                let base = r.int(C_BASE_AP_ID) as u64;
                let co = tx
                    .get(AIRPORT, base, ColumnSet::ALL)?
                    .map(|r| r.int(AP_CO_ID));
                if let Some(co) = co {
                    if let Some(r) = tx.get(COUNTRY, co as u64, ColumnSet::ALL)? {
                        black_box(r.int(CO_NAME));
                    }
                }
                if self.update_ff {
                    let keys = &mut self.ff_keys;
                    let (lo, hi) = ff_range(c);
                    tx.scan(FREQUENT_FLYER, lo, hi, ColumnSet::NONE, |k, _| {
                        keys.push(k);
                        true
                    })?;
                }
            }
            (UpdateCustomer, _) => {
                let [a0, a1, ..] = self.attrs;
                for &k in &self.ff_keys {
                    tx.update(FREQUENT_FLYER, k, ColumnSet::NONE, |r| {
                        r.set_int(FF_IATTR00, a0);
                        r.set_int(FF_IATTR01, a1);
                    })?;
                }
                tx.update(CUSTOMER, self.customer(), ColumnSet::NONE, |r| {
                    r.set_int(C_IATTR00, a0);
                    r.set_int(C_IATTR01, a1);
                })?;
            }
            (UpdateReservation, 0) => {
                if tx
                    .get(RESERVATION, res_key(f, self.seat), one(R_ID))?
                    .is_some()
                {
                    return Err(Abort::user("the seat is taken"));
                }
                self.old_seat = tx
                    .get(RESERVATION_BY_CUSTOMER, rc_key(self.c_id, f), one(RC_SEAT))?
                    .ok_or_else(|| Abort::user("the customer has no reservation on the flight"))?
                    .int(RC_SEAT) as u64;
            }
            (UpdateReservation, 1) => {
                let Some(r) = tx.get(RESERVATION, res_key(f, self.old_seat), ColumnSet::ALL)?
                else {
                    return Err(Abort::user("the reservation is gone"));
                };
                for (i, v) in self.row.iter_mut().enumerate() {
                    *v = r.int(i);
                }
            }
            (UpdateReservation, _) => {
                tx.delete(RESERVATION, res_key(f, self.old_seat))?;
                let (seat, mut row) = (self.seat, self.row);
                row[R_SEAT] = seat as i64;
                row[R_IATTR00 + self.attr_idx] = self.attrs[0];
                tx.insert(RESERVATION, res_key(f, seat), |r| {
                    for (i, v) in row.iter().enumerate() {
                        r.set_int(i, *v);
                    }
                })?;
                tx.update(
                    RESERVATION_BY_CUSTOMER,
                    rc_key(self.c_id, f),
                    ColumnSet::NONE,
                    |r| r.set_int(RC_SEAT, seat as i64),
                )?;
            }
        }
        Ok(())
    }
}
