//! The seven TATP transactions as programs, piece by piece.
//!
//! Each SQL statement of the spec is a piece. The three transactions that name a subscriber by its
//! `sub_nbr` first read `sub_nbr_index` (`SELECT s_id FROM subscriber WHERE sub_nbr = ?`); their later
//! pieces declare keys built from the `s_id` found, so they depend on piece 0.
//!
//! | transaction          | pieces                                                                          |
//! |----------------------|---------------------------------------------------------------------------------|
//! | GetSubscriberData    | 0 read `subscriber[s_id]` (all columns)                                        |
//! | GetNewDestination    | 0 read `special_facility[s_id, sf_type].is_active` · 1 scan `call_forwarding[s_id, sf_type, 0..=start_time]`, keep `end_time < cf.end_time` (skipped unless active) |
//! | GetAccessData        | 0 read `access_info[s_id, ai_type]`                                            |
//! | UpdateSubscriberData | 0 write `subscriber[s_id].bit_1` · 1 write `special_facility[s_id, sf_type].data_a` (missing: roll back) |
//! | UpdateLocation       | 0 `sub_nbr` → `s_id` · 1 write `subscriber[s_id].vlr_location`                 |
//! | InsertCallForwarding | 0 `sub_nbr` → `s_id` · 1 read `special_facility[s_id, 1..=4]` · 2 insert `call_forwarding[s_id, sf_type, start_time]` (no facility or duplicate: roll back) |
//! | DeleteCallForwarding | 0 `sub_nbr` → `s_id` · 1 delete `call_forwarding[s_id, sf_type, start_time]` (missing: roll back) |

use super::{
    ai_key, cf_key, sf_key, ACCESS_INFO, BIT_1, CALL_FORWARDING, DATA_A, END_TIME, IS_ACTIVE,
    NUMBERX, SPECIAL_FACILITY, SUBSCRIBER, SUB_NBR_INDEX, S_ID, VLR_LOCATION,
};
use crate::ledger::Entry;
use ordo::storage::ColumnSet;
use ordo::txn::{Abort, Access, Program, Tx, TxResult};
use std::hint::black_box;

/// The transaction types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    GetSubscriberData,
    GetNewDestination,
    GetAccessData,
    UpdateSubscriberData,
    UpdateLocation,
    InsertCallForwarding,
    DeleteCallForwarding,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::GetSubscriberData,
        Kind::GetNewDestination,
        Kind::GetAccessData,
        Kind::UpdateSubscriberData,
        Kind::UpdateLocation,
        Kind::InsertCallForwarding,
        Kind::DeleteCallForwarding,
    ];
    /// Share of the standard mix, in percent.
    pub fn percent(self) -> u32 {
        match self {
            Kind::GetSubscriberData | Kind::GetAccessData => 35,
            Kind::GetNewDestination => 10,
            Kind::UpdateLocation => 14,
            _ => 2,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::GetSubscriberData => "GetSubscriberData",
            Kind::GetNewDestination => "GetNewDestination",
            Kind::GetAccessData => "GetAccessData",
            Kind::UpdateSubscriberData => "UpdateSubscriberData",
            Kind::UpdateLocation => "UpdateLocation",
            Kind::InsertCallForwarding => "InsertCallForwarding",
            Kind::DeleteCallForwarding => "DeleteCallForwarding",
        }
    }
}

const CF_COLS: ColumnSet = ColumnSet((1 << END_TIME) | (1 << NUMBERX));

/// One TATP transaction: type, parameters, and what earlier pieces found.
#[derive(Clone)]
pub struct TatpTxn {
    pub kind: Kind,
    pub s_id: u64,
    /// The value of the 15-digit `sub_nbr` (key of `sub_nbr_index`).
    pub sub_nbr: u64,
    pub sf_type: u8,
    pub ai_type: u8,
    pub start_time: u8,
    pub end_time: i64,
    pub bit: i64,
    pub data_a: i64,
    pub vlr_location: i64,
    pub numberx: [u8; 15],
    // Outputs of earlier pieces.
    found: u64,
    active: bool,
    facilities: [bool; 4],
    /// GetNewDestination's result count (black-boxed).
    pub destinations: u32,
    ledger: Entry,
}

impl TatpTxn {
    pub(crate) fn new(ledger: Entry) -> Self {
        TatpTxn {
            kind: Kind::GetSubscriberData,
            s_id: 1,
            sub_nbr: 1,
            sf_type: 1,
            ai_type: 1,
            start_time: 0,
            end_time: 1,
            bit: 0,
            data_a: 0,
            vlr_location: 1,
            numberx: [b'0'; 15],
            found: 1,
            active: false,
            facilities: [false; 4],
            destinations: 0,
            ledger,
        }
    }

    /// A new transaction of generator thread `thread` (the previous one's effects stay recorded).
    pub fn settle(&mut self, thread: u32) {
        self.ledger.settle(thread);
    }

    fn uses_sub_nbr(&self) -> bool {
        matches!(
            self.kind,
            Kind::UpdateLocation | Kind::InsertCallForwarding | Kind::DeleteCallForwarding
        )
    }
}

impl Program for TatpTxn {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn pieces(&self) -> usize {
        match self.kind {
            Kind::GetSubscriberData | Kind::GetAccessData => 1,
            Kind::InsertCallForwarding => 3,
            _ => 2,
        }
    }

    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        use Kind::*;
        let one = ColumnSet::one;
        if piece == 0 && self.uses_sub_nbr() {
            out.push(Access::read(SUB_NBR_INDEX, self.sub_nbr, one(S_ID)));
            return;
        }
        let (s, f) = (self.s_id, self.found);
        match (self.kind, piece) {
            (GetSubscriberData, _) => out.push(Access::read(SUBSCRIBER, s, ColumnSet::ALL)),
            (GetNewDestination, 0) => out.push(Access::read(
                SPECIAL_FACILITY,
                sf_key(s, self.sf_type),
                one(IS_ACTIVE),
            )),
            (GetNewDestination, _) => out.push(Access::scan(
                CALL_FORWARDING,
                cf_key(s, self.sf_type, 0),
                cf_key(s, self.sf_type, self.start_time),
                CF_COLS,
            )),
            (GetAccessData, _) => out.push(Access::read(
                ACCESS_INFO,
                ai_key(s, self.ai_type),
                ColumnSet::ALL,
            )),
            (UpdateSubscriberData, 0) => {
                out.push(Access::update(SUBSCRIBER, s, ColumnSet::NONE, one(BIT_1)))
            }
            (UpdateSubscriberData, _) => out.push(Access::update(
                SPECIAL_FACILITY,
                sf_key(s, self.sf_type),
                ColumnSet::NONE,
                one(DATA_A),
            )),
            (UpdateLocation, _) => out.push(Access::update(
                SUBSCRIBER,
                f,
                ColumnSet::NONE,
                one(VLR_LOCATION),
            )),
            (InsertCallForwarding, 1) => out.extend(
                (1..=4).map(|t| Access::read(SPECIAL_FACILITY, sf_key(f, t), one(IS_ACTIVE))),
            ),
            (InsertCallForwarding, _) => out.push(Access::insert(
                CALL_FORWARDING,
                cf_key(f, self.sf_type, self.start_time),
            )),
            (DeleteCallForwarding, _) => out.push(Access::delete(
                CALL_FORWARDING,
                cf_key(f, self.sf_type, self.start_time),
            )),
        }
    }

    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        match (self.kind, piece) {
            (_, 0) | (Kind::UpdateSubscriberData, _) => {}
            (Kind::GetNewDestination, _) => out.push(0),
            _ => out.extend(0..piece),
        }
    }

    fn commit_point(&self) -> Option<usize> {
        match self.kind {
            Kind::UpdateSubscriberData | Kind::DeleteCallForwarding => Some(1),
            Kind::InsertCallForwarding => Some(2),
            _ => None,
        }
    }

    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        use Kind::*;
        let one = ColumnSet::one;
        if piece == 0 {
            self.ledger.retract();
            if self.uses_sub_nbr() {
                self.found = match tx.get(SUB_NBR_INDEX, self.sub_nbr, one(S_ID))? {
                    Some(r) => r.int(S_ID) as u64,
                    None => return Err(Abort::user("sub_nbr not found")),
                };
                return Ok(());
            }
        }
        let (s, f) = (self.s_id, self.found);
        match (self.kind, piece) {
            (GetSubscriberData, _) => {
                if let Some(r) = tx.get(SUBSCRIBER, s, ColumnSet::ALL)? {
                    black_box(r.words()[0]);
                }
            }
            (GetNewDestination, 0) => {
                self.active = tx
                    .get(SPECIAL_FACILITY, sf_key(s, self.sf_type), one(IS_ACTIVE))?
                    .is_some_and(|r| r.int(IS_ACTIVE) == 1);
            }
            (GetNewDestination, _) => {
                self.destinations = 0;
                if self.active {
                    let (end, found) = (self.end_time, &mut self.destinations);
                    tx.scan(
                        CALL_FORWARDING,
                        cf_key(s, self.sf_type, 0),
                        cf_key(s, self.sf_type, self.start_time),
                        CF_COLS,
                        |_, r| {
                            if end < r.int(END_TIME) {
                                black_box(r.str(NUMBERX));
                                *found += 1;
                            }
                            true
                        },
                    )?;
                }
            }
            (GetAccessData, _) => {
                if let Some(r) = tx.get(ACCESS_INFO, ai_key(s, self.ai_type), ColumnSet::ALL)? {
                    black_box(r.words()[0]);
                }
            }
            (UpdateSubscriberData, 0) => {
                let bit = self.bit;
                tx.update(SUBSCRIBER, s, one(BIT_1), |r| r.set_int(BIT_1, bit))?;
            }
            (UpdateSubscriberData, _) => {
                let a = self.data_a;
                let key = sf_key(s, self.sf_type);
                if tx
                    .update(SPECIAL_FACILITY, key, one(DATA_A), |r| r.set_int(DATA_A, a))?
                    .is_none()
                {
                    return Err(Abort::user("no such special facility"));
                }
            }
            (UpdateLocation, _) => {
                let v = self.vlr_location;
                tx.update(SUBSCRIBER, f, one(VLR_LOCATION), |r| {
                    r.set_int(VLR_LOCATION, v)
                })?;
            }
            (InsertCallForwarding, 1) => {
                for t in 1..=4u8 {
                    self.facilities[t as usize - 1] = tx
                        .get(SPECIAL_FACILITY, sf_key(f, t), one(IS_ACTIVE))?
                        .is_some();
                }
            }
            (InsertCallForwarding, _) => {
                if !self.facilities[self.sf_type as usize - 1] {
                    return Err(Abort::user("no such special facility"));
                }
                let (end, nbr) = (self.end_time, &self.numberx);
                let key = cf_key(f, self.sf_type, self.start_time);
                tx.insert(CALL_FORWARDING, key, |r| {
                    r.set_int(END_TIME, end);
                    r.set_str(NUMBERX, nbr).expect("15 digits fit CHAR(15)");
                })?;
                self.ledger.record(1);
            }
            (DeleteCallForwarding, _) => {
                let key = cf_key(f, self.sf_type, self.start_time);
                if !tx.delete(CALL_FORWARDING, key)? {
                    return Err(Abort::user("no such call forwarding"));
                }
                self.ledger.record(-1);
            }
        }
        Ok(())
    }
}
