//! SEATS, the airline ticketing benchmark of OLTP-Bench (Stonebraker and Pavlo, "The SEATS Airline
//! Ticketing Systems Benchmark"; Difallah, Pavlo, Curino, Cudré-Mauroux, PVLDB 2013; the code of
//! BenchBase, `com.oltpbenchmark.benchmarks.seats`), as the DIBS paper runs it (Fig. 3b).
//!
//! An airline's reservation system: customers search flights, look at a flight's open seats, book,
//! move and cancel seats. Eight tables of the spec, and the three secondary indexes the spec's
//! lookups go through (as TATP's `sub_nbr`, an index is a table keyed by the value looked up):
//!
//! | table                     | key (packed `u64`)           | rows                                   |
//! |---------------------------|------------------------------|----------------------------------------|
//! | `country`                 | `co_id`                      | 10 (read-only)                         |
//! | `airport`                 | `ap_id`                      | 40 (read-only)                         |
//! | `airport_distance`        | `d_ap_id0 << 16 \| d_ap_id1` | 40 × 39 (read-only)                    |
//! | `airline`                 | `al_id`                      | 20 (read-only)                         |
//! | `customer`                | `c_id` (1..=C)               | C                                      |
//! | `frequent_flyer`          | `ff_c_id << 8 \| ff_al_id`   | 0–3 per customer, distinct airlines    |
//! | `flight`                  | `f_id` (1..=F)               | F, 150 seats each                      |
//! | `reservation`             | `r_f_id << 8 \| r_seat`      | about 2 per customer at load           |
//! | `customer_by_id_str`      | `c_id_str`                   | C → `c_id` (read-only)                 |
//! | `frequent_flyer_by_number`| `ff_c_id_str`                | one per customer with a frequent-flyer row → `ff_c_id`, `ff_al_id` (read-only) |
//! | `reservation_by_customer` | `r_c_id << 32 \| r_f_id`     | one per reservation → `r_seat`         |
//!
//! The six transactions, with OLTP-Bench's weights (`SEATSConstants.FREQUENCY_*`); [`txn`] maps
//! their SQL to pieces:
//!
//! | transaction       | mix | does                                                                        | fails by design |
//! |-------------------|-----|-----------------------------------------------------------------------------|-----------------|
//! | DeleteReservation | 10% | customer by `c_id` (60%), `c_id_str` (20%) or frequent-flyer number (20%); its reservation on a flight: delete it, `f_seats_left + 1`, refund the customer, its frequent-flyer row's count − 1 | no such customer or reservation |
//! | FindFlights       | 10% | airports within a distance of the departure airport (25% of searches), then the flights between them in a time window, with their airline and airports | (empty result) |
//! | FindOpenSeats     | 35% | a flight and every reservation on it: the seat map and each open seat's price | — |
//! | NewReservation    | 20% | the flight has seats left, the seat is free, the customer has no seat on the flight: insert the reservation, `f_seats_left − 1`, update the customer and its frequent-flyer row | seat taken, customer already on board, sold out |
//! | UpdateCustomer    | 10% | customer by `c_id` (80%) or `c_id_str` (20%), its base airport; set two attributes of it and (25%) of its frequent-flyer rows | — |
//! | UpdateReservation | 15% | move a customer's reservation on a flight to a free seat of it               | seat taken, no reservation |
//!
//! FindFlights and FindOpenSeats, 45% of the mix, never write. The DIBS paper calls SEATS "60%
//! read-only": it counts executions, and a NewReservation, UpdateReservation or DeleteReservation
//! that finds its seat taken or no reservation ends after reading only. Transactions that fail by
//! design roll back (a user abort) and are not retried.
//!
//! **Predicates.** FindFlights names its flights by a predicate over non-key columns,
//! `f_depart_ap_id = ? AND f_depart_time BETWEEN ? AND ? AND f_arrive_ap_id IN (?, ?, ?)`, run with
//! [`ordo::txn::Tx::scan_where`]: DIBS locks that predicate, and NewReservation and
//! DeleteReservation describe their `f_seats_left` update by the flight's values
//! ([`ordo::txn::Tx::update_described`]), so they wait for a search only when the search names their
//! flight; every other protocol protects the search as a scan of the whole `flight` table.
//! FindOpenSeats names the flight's reservations by `r_f_id = ?`, which the key's packing makes a
//! key range (`r_f_id << 8 | 0 ..= r_f_id << 8 | 149`): a scan every protocol protects as a range, DIBS
//! as the predicate `key BETWEEN`. The lookups by `c_id_str` and by frequent-flyer number are
//! predicates `c_id_str = ?`, `ff_c_id_str = ?` on their index tables: point reads, of tables no
//! transaction writes, so no protocol locks them.
//!
//! **Simplified from the spec**, and why:
//! * Integer columns only, as TATP here: `c_id_str` is the value of BenchBase's `CustomerId`
//!   (customer number and base airport packed, `c_id << 16 | c_base_ap_id`), which is also the
//!   frequent-flyer number `ff_c_id_str` as in BenchBase; names and codes are numbers; prices are
//!   cents; times are minutes from the start of the schedule. The `*_sattr*` / `*_iattr*` columns
//!   are cut to those the transactions read or write (BenchBase has 20–30 per table).
//! * Generated reference data, not BenchBase's CSV files: 10 countries, 40 airports placed in a
//!   500 × 500-mile square (so that the distance search's 5–100 miles finds neighbours), 20
//!   airlines. Flights are spread uniformly over 51 days (1 past, 50 future), 150 seats each; each
//!   flight's airline, airports, times and base price are functions of `f_id`, so a generator can
//!   draw a search for an existing flight (BenchBase's clients keep a cache of flight ids).
//! * Reservations: BenchBase's clients remember the reservations they made and delete or move
//!   those. Generators here do not see results, so each customer books among 4 *home flights*
//!   (a function of `c_id`), and DeleteReservation and UpdateReservation name a customer and one of
//!   its home flights: they find a reservation about half the time and roll back otherwise. The
//!   load books each home flight with probability ½, on a random free seat.
//! * `reservation`'s key is `(r_f_id, r_seat)`, BenchBase's unique index; `r_id` stays a column.
//!   BenchBase's join `WHERE r_c_id = ? AND r_f_id = ?` goes through `reservation_by_customer`,
//!   maintained by the transactions, so the check "the customer has no seat on this flight" is a
//!   point read. UpdateReservation's `UPDATE … SET r_seat = ?` therefore moves the row to its new
//!   key (delete and insert) and repoints the index.
//! * `c_iattr10` and `ff_iattr10` are counters BenchBase's NewReservation and DeleteReservation
//!   increment and decrement; loaded here as the customer's reservations (on the frequent-flyer
//!   row's airline), they become invariants. DeleteReservation decrements the row of the flight's
//!   airline (BenchBase: the row its frequent-flyer lookup found, if it looked one up).
//!
//! **Invariants** ([`Seats::check`]): for every flight, `f_seats_left = f_seats_total − its
//! reservations`, with 150 seats; every reservation's columns match its key, its seat is in
//! 0..150, its flight and customer exist, and `reservation_by_customer` holds exactly one entry per
//! reservation, pointing at it (so no customer holds two seats on one flight, and no seat is
//! double-booked); every customer's `c_iattr10` and frequent-flyer `ff_iattr10` count its
//! reservations; the read-only tables and indexes hold their loaded rows. A lost
//! `f_seats_left` update, two bookings of one seat or of one customer on one flight, or a
//! half-done move all break them.

pub mod options;
pub mod txn;

#[cfg(test)]
mod tests;

use crate::inspect;
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{Database, LoadError, Schema, TableId, TableSpec};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::HashMap;
pub use txn::{Kind, Lookup, SeatsTxn};

pub const COUNTRY: TableId = 0;
pub const AIRPORT: TableId = 1;
pub const AIRPORT_DISTANCE: TableId = 2;
pub const AIRLINE: TableId = 3;
pub const CUSTOMER: TableId = 4;
pub const FREQUENT_FLYER: TableId = 5;
pub const FLIGHT: TableId = 6;
pub const RESERVATION: TableId = 7;
pub const CUSTOMER_BY_ID_STR: TableId = 8;
pub const FF_BY_NUMBER: TableId = 9;
pub const RESERVATION_BY_CUSTOMER: TableId = 10;

/// `country` columns.
pub const CO_NAME: usize = 0;
pub const CO_CODE_2: usize = 1;
pub const CO_CODE_3: usize = 2;
/// `airport` columns (coordinates in miles).
pub const AP_CODE: usize = 0;
pub const AP_NAME: usize = 1;
pub const AP_CITY: usize = 2;
pub const AP_CO_ID: usize = 3;
pub const AP_LONGITUDE: usize = 4;
pub const AP_LATITUDE: usize = 5;
pub const AP_GMT_OFFSET: usize = 6;
/// `airport_distance` column (miles).
pub const D_DISTANCE: usize = 0;
/// `airline` columns.
pub const AL_IATA_CODE: usize = 0;
pub const AL_CO_ID: usize = 1;
pub const AL_NAME: usize = 2;
pub const AL_IATTR00: usize = 3;
pub const AL_IATTR01: usize = 4;
/// `customer` columns (`c_iattr10`: the customer's reservations).
pub const C_ID_STR: usize = 0;
pub const C_BASE_AP_ID: usize = 1;
pub const C_BALANCE: usize = 2;
pub const C_SATTR00: usize = 3;
pub const C_IATTR00: usize = 4;
pub const C_IATTR01: usize = 5;
pub const C_IATTR10: usize = 6;
pub const C_IATTR11: usize = 7;
pub const C_IATTR12: usize = 8;
pub const C_IATTR13: usize = 9;
/// `frequent_flyer` columns (`ff_iattr10`: the customer's reservations on the airline).
pub const FF_C_ID: usize = 0;
pub const FF_AL_ID: usize = 1;
pub const FF_C_ID_STR: usize = 2;
pub const FF_SATTR00: usize = 3;
pub const FF_IATTR00: usize = 4;
pub const FF_IATTR01: usize = 5;
pub const FF_IATTR10: usize = 6;
pub const FF_IATTR11: usize = 7;
/// `flight` columns (times in minutes from the schedule's start; prices in cents).
pub const F_AL_ID: usize = 0;
pub const F_DEPART_AP_ID: usize = 1;
pub const F_DEPART_TIME: usize = 2;
pub const F_ARRIVE_AP_ID: usize = 3;
pub const F_ARRIVE_TIME: usize = 4;
pub const F_STATUS: usize = 5;
pub const F_BASE_PRICE: usize = 6;
pub const F_SEATS_TOTAL: usize = 7;
pub const F_SEATS_LEFT: usize = 8;
pub const F_IATTR00: usize = 9;
/// `reservation` columns.
pub const R_ID: usize = 0;
pub const R_C_ID: usize = 1;
pub const R_F_ID: usize = 2;
pub const R_SEAT: usize = 3;
pub const R_PRICE: usize = 4;
pub const R_IATTR00: usize = 5;
/// `customer_by_id_str` column.
pub const CS_C_ID: usize = 0;
/// `frequent_flyer_by_number` columns.
pub const FN_C_ID: usize = 0;
pub const FN_AL_ID: usize = 1;
/// `reservation_by_customer` column.
pub const RC_SEAT: usize = 0;

/// Seats per flight (`FLIGHTS_NUM_SEATS`).
pub const SEATS_PER_FLIGHT: u64 = 150;
/// The first seats, sold at twice the price (`FLIGHTS_FIRST_CLASS_OFFSET`).
pub const FIRST_CLASS: u64 = 10;
pub const COUNTRIES: u64 = 10;
pub const AIRPORTS: u64 = 40;
pub const AIRLINES: u64 = 20;
/// Flights a customer books among (see the module doc).
pub const HOME_FLIGHTS: u64 = 4;
/// Days of flights (`FLIGHTS_DAYS_PAST + FLIGHTS_DAYS_FUTURE`).
pub const DAYS: i64 = 51;
pub const MINUTES_PER_DAY: i64 = 1440;
/// Side of the square the airports lie in, in miles.
const MAP_MILES: i64 = 500;
/// Most customers and flights (keys pack `c_id` and `f_id` into 32 bits each).
pub const MAX_CUSTOMERS: u64 = 100_000_000;
pub const MAX_FLIGHTS: u64 = 10_000_000;

/// Key of `frequent_flyer` `(c_id, al_id)`.
pub fn ff_key(c_id: u64, al_id: u64) -> u64 {
    c_id << 8 | al_id
}
/// Key of `reservation` `(f_id, seat)`.
pub fn res_key(f_id: u64, seat: u64) -> u64 {
    f_id << 8 | seat
}
/// Key of `reservation_by_customer` `(c_id, f_id)`.
pub fn rc_key(c_id: u64, f_id: u64) -> u64 {
    c_id << 32 | f_id
}
/// Key of `airport_distance` `(ap0, ap1)`.
pub fn distance_key(ap0: u64, ap1: u64) -> u64 {
    ap0 << 16 | ap1
}

/// A 64-bit mix (splitmix64's finalizer) of `x`: the generated attributes of customers, flights
/// and airports, so the generator and the check can recompute them.
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Customer `c_id`'s base airport.
pub fn base_airport(c_id: u64) -> u64 {
    mix(c_id ^ 0xC0) % AIRPORTS + 1
}
/// Customer `c_id`'s `c_id_str` (and frequent-flyer number): its `CustomerId`, packed.
pub fn c_id_str(c_id: u64) -> u64 {
    c_id << 16 | base_airport(c_id)
}
/// An airport's position in miles, `(x, y)`.
pub fn airport_position(ap_id: u64) -> (i64, i64) {
    let h = mix(ap_id ^ 0xA1);
    (
        (h % MAP_MILES as u64) as i64,
        ((h >> 32) % MAP_MILES as u64) as i64,
    )
}
/// Distance between two airports, in whole miles.
pub fn airport_distance(a: u64, b: u64) -> i64 {
    let ((xa, ya), (xb, yb)) = (airport_position(a), airport_position(b));
    (((xa - xb).pow(2) + (ya - yb).pow(2)) as f64)
        .sqrt()
        .round() as i64
}

/// What a flight is, a function of its id: airline, airports, times, base price.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlightInfo {
    pub al_id: u64,
    pub depart: u64,
    pub arrive: u64,
    pub depart_time: i64,
    pub arrive_time: i64,
    pub base_price: i64,
}

/// Flight `f_id`'s airline, airports, times and base price.
pub fn flight_info(f_id: u64) -> FlightInfo {
    let h = mix(f_id ^ 0xF1);
    let depart = h % AIRPORTS + 1;
    let arrive = (depart + (h >> 8) % (AIRPORTS - 1)) % AIRPORTS + 1; // never `depart`
    let depart_time = ((h >> 16) % (DAYS * MINUTES_PER_DAY) as u64) as i64;
    // FLIGHT_TRAVEL_RATE: 570 miles an hour, plus half an hour at the gates.
    let minutes = airport_distance(depart, arrive) * 60 / 570 + 30;
    let h2 = mix(h);
    FlightInfo {
        al_id: h2 % AIRLINES + 1,
        depart,
        arrive,
        depart_time,
        arrive_time: depart_time + minutes,
        base_price: 10_000 + ((h2 >> 8) % 90_001) as i64,
    }
}

/// SEATS parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeatsConfig {
    /// C: rows in `customer`.
    pub customers: u64,
    /// F: rows in `flight`.
    pub flights: u64,
}

impl Default for SeatsConfig {
    /// 100,000 customers (`CUSTOMERS_COUNT`, BenchBase's scale factor 1) and 4,000 flights.
    fn default() -> Self {
        SeatsConfig::scaled(100.0)
    }
}

impl SeatsConfig {
    /// `--scale s`: 1,000·s customers and 40·s flights (at least 4 flights: a customer's home flights).
    pub fn scaled(scale: f64) -> Self {
        SeatsConfig {
            customers: ((1_000.0 * scale).round() as u64).max(1),
            flights: ((40.0 * scale).round() as u64).max(HOME_FLIGHTS),
        }
    }

    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if self.customers == 0 || self.customers > MAX_CUSTOMERS {
            return Err(Error::invalid(
                "scale",
                format!(
                    "customers must be between 1 and {MAX_CUSTOMERS}, got {}",
                    self.customers
                ),
            ));
        }
        if self.flights < HOME_FLIGHTS || self.flights > MAX_FLIGHTS {
            return Err(Error::invalid(
                "scale",
                format!(
                    "flights must be between {HOME_FLIGHTS} and {MAX_FLIGHTS}, got {}",
                    self.flights
                ),
            ));
        }
        Ok(())
    }

    /// Customer `c_id`'s `j`th home flight (`j < HOME_FLIGHTS`; the four are distinct).
    pub fn home_flight(&self, c_id: u64, j: u64) -> u64 {
        let f = self.flights;
        let stride = f / HOME_FLIGHTS;
        (mix(c_id ^ 0x40F) % f + j * stride) % f + 1
    }
}

/// Rows loaded into the tables no transaction inserts or deletes, for the check.
#[derive(Default)]
struct Loaded {
    frequent_flyers: usize,
    ff_numbers: usize,
}

/// The SEATS workload.
pub struct Seats {
    cfg: SeatsConfig,
    loaded: std::sync::Mutex<Loaded>,
}

impl Seats {
    /// A workload with validated parameters.
    pub fn new(cfg: SeatsConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(Seats {
            cfg,
            loaded: Default::default(),
        })
    }
    pub fn config(&self) -> &SeatsConfig {
        &self.cfg
    }

    pub(crate) fn schemas() -> [(&'static str, Schema); 11] {
        let s = |cols: &[&str]| Schema::ints(cols).expect("SEATS schema");
        [
            ("country", s(&["co_name", "co_code_2", "co_code_3"])),
            (
                "airport",
                s(&[
                    "ap_code",
                    "ap_name",
                    "ap_city",
                    "ap_co_id",
                    "ap_longitude",
                    "ap_latitude",
                    "ap_gmt_offset",
                ]),
            ),
            ("airport_distance", s(&["d_distance"])),
            (
                "airline",
                s(&[
                    "al_iata_code",
                    "al_co_id",
                    "al_name",
                    "al_iattr00",
                    "al_iattr01",
                ]),
            ),
            (
                "customer",
                s(&[
                    "c_id_str",
                    "c_base_ap_id",
                    "c_balance",
                    "c_sattr00",
                    "c_iattr00",
                    "c_iattr01",
                    "c_iattr10",
                    "c_iattr11",
                    "c_iattr12",
                    "c_iattr13",
                ]),
            ),
            (
                "frequent_flyer",
                s(&[
                    "ff_c_id",
                    "ff_al_id",
                    "ff_c_id_str",
                    "ff_sattr00",
                    "ff_iattr00",
                    "ff_iattr01",
                    "ff_iattr10",
                    "ff_iattr11",
                ]),
            ),
            (
                "flight",
                s(&[
                    "f_al_id",
                    "f_depart_ap_id",
                    "f_depart_time",
                    "f_arrive_ap_id",
                    "f_arrive_time",
                    "f_status",
                    "f_base_price",
                    "f_seats_total",
                    "f_seats_left",
                    "f_iattr00",
                ]),
            ),
            (
                "reservation",
                s(&[
                    "r_id",
                    "r_c_id",
                    "r_f_id",
                    "r_seat",
                    "r_price",
                    "r_iattr00",
                    "r_iattr01",
                    "r_iattr02",
                    "r_iattr03",
                ]),
            ),
            ("customer_by_id_str", s(&["c_id"])),
            ("frequent_flyer_by_number", s(&["ff_c_id", "ff_al_id"])),
            ("reservation_by_customer", s(&["r_seat"])),
        ]
    }

    /// Creates the tables.
    fn create<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let (c, f) = (self.cfg.customers as usize, self.cfg.flights as usize);
        let reservations = c * HOME_FLIGHTS as usize * 3 / 4;
        for (i, (name, schema)) in Self::schemas().into_iter().enumerate() {
            let t = i as TableId;
            let spec = TableSpec::new(name, schema);
            let spec = match t {
                COUNTRY => spec.capacity(COUNTRIES as usize).ordered(0).read_only(),
                AIRPORT => spec.capacity(AIRPORTS as usize).ordered(0).read_only(),
                AIRLINE => spec.capacity(AIRLINES as usize).ordered(0).read_only(),
                // One stripe per departure airport: a distance search scans one.
                AIRPORT_DISTANCE => spec
                    .capacity((AIRPORTS * AIRPORTS) as usize)
                    .ordered(16)
                    .read_only(),
                CUSTOMER => spec.capacity(c),
                // One stripe per customer (UpdateCustomer scans a customer's rows).
                FREQUENT_FLYER => spec.capacity(c * 3 / 2).ordered(8),
                // FindFlights scans it with a predicate.
                FLIGHT => spec.capacity(f).ordered(0),
                // One stripe per flight (FindOpenSeats scans a flight's rows).
                RESERVATION => spec.capacity(reservations).ordered(8),
                CUSTOMER_BY_ID_STR => spec.capacity(c).read_only(),
                FF_BY_NUMBER => spec.capacity(c).read_only(),
                _ => spec.capacity(reservations),
            };
            let id = db.create_table(spec)?;
            debug_assert_eq!(id, t);
        }
        Ok(())
    }

    /// Loads the reference tables: countries, airports and their distances, airlines.
    fn load_reference<M: Default + Send + Sync>(db: &Database<M>) -> Result<(), LoadError> {
        let mut scratch = Vec::new();
        for co in 1..=COUNTRIES {
            db.table(COUNTRY).load(co, &mut scratch, |r| {
                r.set_int(CO_NAME, mix(co ^ 0xC1) as i64 >> 8);
                r.set_int(CO_CODE_2, (mix(co ^ 0xC2) % 676) as i64);
                r.set_int(CO_CODE_3, (mix(co ^ 0xC3) % 17_576) as i64);
                Ok(())
            })?;
        }
        for ap in 1..=AIRPORTS {
            let (x, y) = airport_position(ap);
            db.table(AIRPORT).load(ap, &mut scratch, |r| {
                r.set_int(AP_CODE, (mix(ap ^ 0xA2) % 17_576) as i64);
                r.set_int(AP_NAME, mix(ap ^ 0xA3) as i64 >> 8);
                r.set_int(AP_CITY, mix(ap ^ 0xA4) as i64 >> 8);
                r.set_int(AP_CO_ID, (mix(ap ^ 0xA5) % COUNTRIES + 1) as i64);
                r.set_int(AP_LONGITUDE, x);
                r.set_int(AP_LATITUDE, y);
                r.set_int(AP_GMT_OFFSET, (mix(ap ^ 0xA6) % 24) as i64 - 12);
                Ok(())
            })?;
            for other in (1..=AIRPORTS).filter(|&o| o != ap) {
                db.table(AIRPORT_DISTANCE)
                    .load(distance_key(ap, other), &mut scratch, |r| {
                        r.set_int(D_DISTANCE, airport_distance(ap, other));
                        Ok(())
                    })?;
            }
        }
        for al in 1..=AIRLINES {
            db.table(AIRLINE).load(al, &mut scratch, |r| {
                r.set_int(AL_IATA_CODE, (mix(al ^ 0xB1) % 676) as i64);
                r.set_int(AL_CO_ID, (mix(al ^ 0xB2) % COUNTRIES + 1) as i64);
                r.set_int(AL_NAME, mix(al ^ 0xB3) as i64 >> 8);
                r.set_int(AL_IATTR00, (mix(al ^ 0xB4) % 1000) as i64);
                r.set_int(AL_IATTR01, (mix(al ^ 0xB5) % 1000) as i64);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// The price of seat `seat` on a flight of base price `base` with `left` of `total` seats left
    /// (FindOpenSeats's `F_PRICE`: up to twice the base as the flight fills; first class twice that).
    pub fn seat_price(base: i64, left: i64, total: i64, seat: u64) -> i64 {
        let price = base + base * (total - left).max(0) / total.max(1);
        if seat < FIRST_CLASS {
            2 * price
        } else {
            price
        }
    }
}

/// Per-thread generator state.
pub struct SeatsGen {
    rng: SmallRng,
    /// The next reservation id this thread hands out (`thread + 1` in the top 16 bits).
    next_r_id: u64,
}

impl Workload for Seats {
    type Program = SeatsTxn;
    type Gen = SeatsGen;

    fn name(&self) -> &'static str {
        "seats"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }

    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        self.create(db)?;
        let db = &*db;
        Self::load_reference(db)?;
        let cfg = &self.cfg;
        let mut rng = SmallRng::seed_from_u64(0x5EA7);
        let mut scratch = Vec::new();
        // Seats taken per flight (150 bits each) and their count.
        let mut taken = vec![[0u64; 3]; cfg.flights as usize + 1];
        let mut booked = vec![0i64; cfg.flights as usize + 1];
        let mut r_id = 0u64;
        let mut loaded = Loaded::default();
        let mut trips: Vec<(u64, u64)> = Vec::with_capacity(HOME_FLIGHTS as usize);
        for c in 1..=cfg.customers {
            // Reservations first: the customer's counters count them.
            trips.clear();
            for j in 0..HOME_FLIGHTS {
                let f = cfg.home_flight(c, j);
                if rng.gen_bool(0.5) || booked[f as usize] >= SEATS_PER_FLIGHT as i64 {
                    continue;
                }
                let bits = &mut taken[f as usize];
                let mut seat = rng.gen_range(0..SEATS_PER_FLIGHT);
                while bits[(seat / 64) as usize] >> (seat % 64) & 1 == 1 {
                    seat = (seat + 1) % SEATS_PER_FLIGHT;
                }
                bits[(seat / 64) as usize] |= 1 << (seat % 64);
                booked[f as usize] += 1;
                trips.push((f, seat));
            }
            for &(f, seat) in &trips {
                r_id += 1;
                let price = rng.gen_range(10_000..=100_000);
                db.table(RESERVATION)
                    .load(res_key(f, seat), &mut scratch, |r| {
                        r.set_int(R_ID, r_id as i64);
                        r.set_int(R_C_ID, c as i64);
                        r.set_int(R_F_ID, f as i64);
                        r.set_int(R_SEAT, seat as i64);
                        r.set_int(R_PRICE, price);
                        for i in 0..4 {
                            r.set_int(R_IATTR00 + i, rng.gen_range(0..1000));
                        }
                        Ok(())
                    })?;
                db.table(RESERVATION_BY_CUSTOMER)
                    .load(rc_key(c, f), &mut scratch, |r| {
                        r.set_int(RC_SEAT, seat as i64);
                        Ok(())
                    })?;
            }
            let str_id = c_id_str(c);
            db.table(CUSTOMER).load(c, &mut scratch, |r| {
                r.set_int(C_ID_STR, str_id as i64);
                r.set_int(C_BASE_AP_ID, base_airport(c) as i64);
                r.set_int(C_BALANCE, rng.gen_range(100_000..=1_000_000));
                r.set_int(C_SATTR00, rng.gen_range(0..i64::MAX));
                for col in [C_IATTR00, C_IATTR01, C_IATTR11, C_IATTR12, C_IATTR13] {
                    r.set_int(col, rng.gen_range(0..1000));
                }
                r.set_int(C_IATTR10, trips.len() as i64);
                Ok(())
            })?;
            db.table(CUSTOMER_BY_ID_STR)
                .load(str_id, &mut scratch, |r| {
                    r.set_int(CS_C_ID, c as i64);
                    Ok(())
                })?;
            // 0-3 frequent-flyer rows, on distinct airlines.
            let n = rng.gen_range(0..=3u64);
            let first = rng.gen_range(0..AIRLINES);
            let mut airlines: Vec<u64> = (0..n).map(|i| (first + i * 7) % AIRLINES + 1).collect();
            airlines.sort_unstable();
            for &al in &airlines {
                let on_airline = trips
                    .iter()
                    .filter(|&&(f, _)| flight_info(f).al_id == al)
                    .count() as i64;
                db.table(FREQUENT_FLYER)
                    .load(ff_key(c, al), &mut scratch, |r| {
                        r.set_int(FF_C_ID, c as i64);
                        r.set_int(FF_AL_ID, al as i64);
                        r.set_int(FF_C_ID_STR, str_id as i64);
                        r.set_int(FF_SATTR00, rng.gen_range(0..i64::MAX));
                        r.set_int(FF_IATTR00, rng.gen_range(0..1000));
                        r.set_int(FF_IATTR01, rng.gen_range(0..1000));
                        r.set_int(FF_IATTR10, on_airline);
                        r.set_int(FF_IATTR11, rng.gen_range(0..1000));
                        Ok(())
                    })?;
                loaded.frequent_flyers += 1;
            }
            if let Some(&al) = airlines.first() {
                db.table(FF_BY_NUMBER).load(str_id, &mut scratch, |r| {
                    r.set_int(FN_C_ID, c as i64);
                    r.set_int(FN_AL_ID, al as i64);
                    Ok(())
                })?;
                loaded.ff_numbers += 1;
            }
        }
        for f in 1..=cfg.flights {
            let info = flight_info(f);
            db.table(FLIGHT).load(f, &mut scratch, |r| {
                r.set_int(F_AL_ID, info.al_id as i64);
                r.set_int(F_DEPART_AP_ID, info.depart as i64);
                r.set_int(F_DEPART_TIME, info.depart_time);
                r.set_int(F_ARRIVE_AP_ID, info.arrive as i64);
                r.set_int(F_ARRIVE_TIME, info.arrive_time);
                r.set_int(F_STATUS, 0);
                r.set_int(F_BASE_PRICE, info.base_price);
                r.set_int(F_SEATS_TOTAL, SEATS_PER_FLIGHT as i64);
                r.set_int(F_SEATS_LEFT, SEATS_PER_FLIGHT as i64 - booked[f as usize]);
                r.set_int(F_IATTR00, rng.gen_range(0..1000));
                Ok(())
            })?;
        }
        *self.loaded.lock().expect("not poisoned") = loaded;
        Ok(())
    }

    fn generator(&self, thread: u32, seed: u64) -> SeatsGen {
        let s = seed ^ (thread as u64 + 1).wrapping_mul(0x9FB2_1C65_1E98_DF25);
        SeatsGen {
            rng: SmallRng::seed_from_u64(s),
            next_r_id: (thread as u64 + 1) << 48,
        }
    }

    fn program(&self) -> SeatsTxn {
        SeatsTxn::new()
    }

    fn next(&self, g: &mut SeatsGen, p: &mut SeatsTxn) {
        let rng = &mut g.rng;
        let roll = rng.gen_range(0..100);
        let kind = Kind::ALL
            .iter()
            .scan(0, |acc, k| {
                *acc += k.percent();
                Some((*acc, *k))
            })
            .find(|(acc, _)| roll < *acc)
            .map_or(Kind::FindOpenSeats, |(_, k)| k);
        let cfg = &self.cfg;
        let c = rng.gen_range(1..=cfg.customers);
        p.reset(kind);
        p.c_id = c;
        p.c_id_str = c_id_str(c);
        p.f_id = cfg.home_flight(c, rng.gen_range(0..HOME_FLIGHTS));
        p.seat = rng.gen_range(0..SEATS_PER_FLIGHT);
        for a in p.attrs.iter_mut() {
            *a = rng.gen_range(0..1000);
        }
        match kind {
            Kind::DeleteReservation => {
                // PROB_DELETE_WITH_CUSTOMER_ID_STR, PROB_DELETE_WITH_FREQUENTFLYER_ID_STR: 20, 20.
                p.lookup = match rng.gen_range(0..100) {
                    0..=19 => Lookup::IdStr,
                    20..=39 => Lookup::FrequentFlyer,
                    _ => Lookup::Id,
                };
            }
            Kind::UpdateCustomer => {
                // PROB_UPDATE_WITH_CUSTOMER_ID_STR 20, PROB_UPDATE_FREQUENT_FLYER 25.
                if rng.gen_range(0..100) < 20 {
                    p.lookup = Lookup::IdStr;
                }
                p.update_ff = rng.gen_range(0..100) < 25;
            }
            Kind::NewReservation => {
                g.next_r_id += 1;
                p.r_id = g.next_r_id;
            }
            Kind::UpdateReservation => p.attr_idx = rng.gen_range(0..4),
            Kind::FindOpenSeats => p.f_id = rng.gen_range(1..=cfg.flights),
            Kind::FindFlights => {
                // PROB_FIND_FLIGHTS_RANDOM_AIRPORTS 10: two random airports and day; otherwise
                // an existing flight's airports and day. A window of two days from the day's start.
                let (depart, arrive, time) = if rng.gen_range(0..100) < 10 {
                    let d = rng.gen_range(1..=AIRPORTS);
                    let a = (d + rng.gen_range(0..AIRPORTS - 1)) % AIRPORTS + 1;
                    (d, a, rng.gen_range(0..DAYS * MINUTES_PER_DAY))
                } else {
                    let f = flight_info(rng.gen_range(1..=cfg.flights));
                    (f.depart, f.arrive, f.depart_time)
                };
                p.depart = depart;
                p.arrive = arrive;
                p.start = time - time % MINUTES_PER_DAY;
                p.end = p.start + 2 * MINUTES_PER_DAY - 1;
                // PROB_FIND_FLIGHTS_NEARBY_AIRPORT 25, with one of DISTANCES.
                p.distance = if rng.gen_range(0..100) < 25 {
                    [5, 10, 25, 50, 100][rng.gen_range(0..5)]
                } else {
                    0
                };
            }
        }
    }

    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let cfg = &self.cfg;
        let loaded = self.loaded.lock().expect("not poisoned");
        let mut buf = Vec::new();
        // The read-only tables keep their rows (the protocols refuse writes to them).
        for (t, name, rows) in [
            (COUNTRY, "country", COUNTRIES as usize),
            (AIRPORT, "airport", AIRPORTS as usize),
            (
                AIRPORT_DISTANCE,
                "airport_distance",
                (AIRPORTS * (AIRPORTS - 1)) as usize,
            ),
            (AIRLINE, "airline", AIRLINES as usize),
            (CUSTOMER, "customer", cfg.customers as usize),
            (FLIGHT, "flight", cfg.flights as usize),
            (
                CUSTOMER_BY_ID_STR,
                "customer_by_id_str",
                cfg.customers as usize,
            ),
            (FF_BY_NUMBER, "frequent_flyer_by_number", loaded.ff_numbers),
            (FREQUENT_FLYER, "frequent_flyer", loaded.frequent_flyers),
        ] {
            let n = db.table(t).present_keys().len();
            if n != rows {
                return Err(format!(
                    "{name} has {n} rows, {rows} loaded (no transaction inserts or deletes any)"
                )
                .into());
            }
        }
        // Reservations: columns match the key; count them per flight, customer, (customer, airline).
        let mut per_flight = vec![0i64; cfg.flights as usize + 1];
        let mut per_customer = vec![0i64; cfg.customers as usize + 1];
        let mut per_airline: HashMap<u64, i64> = HashMap::new();
        let reservations = db.table(RESERVATION).present_keys();
        for &k in &reservations {
            let (f, seat) = (k >> 8, k & 0xFF);
            let row = inspect::with_row(db, RESERVATION, k, &mut buf, |r| {
                (r.int(R_C_ID), r.int(R_F_ID), r.int(R_SEAT))
            })
            .expect("a present key");
            let (c, rf, rs) = row;
            if rf != f as i64 || rs != seat as i64 {
                return Err(format!(
                    "reservation at (flight {f}, seat {seat}) says flight {rf}, seat {rs}"
                )
                .into());
            }
            if seat >= SEATS_PER_FLIGHT {
                return Err(format!("flight {f}: seat {seat} is not one of its 150").into());
            }
            if f == 0 || f > cfg.flights {
                return Err(format!("reservation on flight {f}, which does not exist").into());
            }
            if c < 1 || c as u64 > cfg.customers {
                return Err(format!(
                    "reservation (flight {f}, seat {seat}) of customer {c}, who does not exist"
                )
                .into());
            }
            let c = c as u64;
            match inspect::int(db, RESERVATION_BY_CUSTOMER, rc_key(c, f), RC_SEAT, &mut buf) {
                Some(s) if s == seat as i64 => {}
                Some(s) => {
                    return Err(format!(
                        "customer {c} holds seats {seat} and {s} on flight {f} (or its index is stale)"
                    )
                    .into())
                }
                None => {
                    return Err(format!(
                        "reservation (flight {f}, seat {seat}) of customer {c} is missing from reservation_by_customer"
                    )
                    .into())
                }
            }
            per_flight[f as usize] += 1;
            per_customer[c as usize] += 1;
            *per_airline
                .entry(ff_key(c, flight_info(f).al_id))
                .or_default() += 1;
        }
        let index = db.table(RESERVATION_BY_CUSTOMER).present_keys();
        if index.len() != reservations.len() {
            // Every reservation has its entry (above), so some entry has no reservation.
            let orphan = index
                .iter()
                .find(|&&k| {
                    let seat = inspect::int(db, RESERVATION_BY_CUSTOMER, k, RC_SEAT, &mut buf)
                        .unwrap_or(-1);
                    seat < 0
                        || inspect::int(
                            db,
                            RESERVATION,
                            res_key(k & 0xFFFF_FFFF, seat as u64),
                            R_C_ID,
                            &mut buf,
                        ) != Some((k >> 32) as i64)
                })
                .copied()
                .unwrap_or(0);
            return Err(format!(
                "reservation_by_customer has {} entries for {} reservations: customer {} on flight {} has no reservation",
                index.len(),
                reservations.len(),
                orphan >> 32,
                orphan & 0xFFFF_FFFF
            )
            .into());
        }
        for f in 1..=cfg.flights {
            let (total, left) = inspect::with_row(db, FLIGHT, f, &mut buf, |r| {
                (r.int(F_SEATS_TOTAL), r.int(F_SEATS_LEFT))
            })
            .expect("every flight is present (counted above)");
            let booked = per_flight[f as usize];
            if total != SEATS_PER_FLIGHT as i64 || left != total - booked {
                return Err(format!(
                    "flight {f}: f_seats_left is {left}, but {total} seats - {booked} reservations = {}",
                    total - booked
                )
                .into());
            }
        }
        for c in 1..=cfg.customers {
            let held = inspect::int(db, CUSTOMER, c, C_IATTR10, &mut buf).unwrap_or(-1);
            if held != per_customer[c as usize] {
                return Err(format!(
                    "customer {c}: c_iattr10 is {held}, but the customer holds {} reservations",
                    per_customer[c as usize]
                )
                .into());
            }
        }
        for k in db.table(FREQUENT_FLYER).present_keys() {
            let held = inspect::int(db, FREQUENT_FLYER, k, FF_IATTR10, &mut buf).unwrap_or(-1);
            let count = per_airline.get(&k).copied().unwrap_or(0);
            if held != count {
                return Err(format!(
                    "frequent flyer (customer {}, airline {}): ff_iattr10 is {held}, but the customer holds {count} reservations on the airline",
                    k >> 8,
                    k & 0xFF
                )
                .into());
            }
        }
        Ok(())
    }
}
