//! TATP as SQL: the four tables, the standard mix (80% reads), `s_id` drawn by NURand, and each
//! transaction type as the statements a client sends. Joins are split into per-table statements
//! (§3.2: a join with a filter becomes per-table locks): GetNewDestination reads the special
//! facility, then the call forwardings of that facility whose window covers the time —
//! `c0 = s_id ∧ c1 = sf_type ∧ c2 ≤ t ∧ c3 > t`, a real range predicate. Transactions that look
//! a subscriber up by `sub_nbr` do so with a statement of their own, locked on that column.
//!
//! The spec's failing transactions (an update of a special facility that does not exist, an
//! insert of a call forwarding that does, a delete of one that does not) roll back
//! ([`Error::UserAbort`]) and count as rolled back, not as aborts.

use super::{insert_batched, SqlWorkload, StmtDef, TableDef};
use crate::conn::{Conn, Value};
use crate::error::{Error, Result};
use crate::session::Session;
use ordo_predicate::StatementKind::{Delete, Insert, Select, Update};
use ordo_workloads::tatp::TatpConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const SUBSCRIBER: u32 = 0;
const ACCESS_INFO: u32 = 1;
const SPECIAL_FACILITY: u32 = 2;
const CALL_FORWARDING: u32 = 3;

// Statements, by index.
const GET_SUBSCRIBER: usize = 0;
const SF_ACTIVE: usize = 1;
const CF_DESTINATIONS: usize = 2;
const GET_ACCESS: usize = 3;
const UPDATE_BIT: usize = 4;
const UPDATE_SF: usize = 5;
const SID_BY_NBR: usize = 6;
const UPDATE_VLR: usize = 7;
const SF_TYPES: usize = 8;
const CF_EXISTS: usize = 9;
const CF_INSERT: usize = 10;
const CF_DELETE: usize = 11;

pub use ordo_workloads::tatp::Kind;

/// One client transaction and its parameters.
#[derive(Debug, Clone)]
pub struct Txn {
    pub kind: Kind,
    pub s_id: i64,
    pub sf_type: i64,
    pub ai_type: i64,
    pub start_time: i64,
    pub end_time: i64,
    pub bit: i64,
    pub data_a: i64,
    pub vlr_location: i64,
    pub numberx: String,
}

pub struct Tatp {
    subscribers: u64,
    a: u64,
    stmts: Vec<StmtDef>,
}

/// The 15-digit `sub_nbr` of a subscriber.
pub fn sub_nbr(s_id: i64) -> String {
    format!("{s_id:015}")
}

fn letters(rng: &mut SmallRng, n: usize) -> String {
    (0..n).map(|_| rng.gen_range(b'A'..=b'Z') as char).collect()
}

fn digits(rng: &mut SmallRng, n: usize) -> String {
    (0..n).map(|_| rng.gen_range(b'0'..=b'9') as char).collect()
}

/// 1 to 4 distinct values of 1..=4.
fn some_types(rng: &mut SmallRng) -> Vec<i64> {
    let mut t = vec![1, 2, 3, 4];
    for i in 0..4 {
        let j = rng.gen_range(i..4);
        t.swap(i, j);
    }
    t.truncate(rng.gen_range(1..=4));
    t
}

fn subscriber_columns() -> String {
    let mut cols = String::from("s_id, sub_nbr");
    for prefix in ["bit", "hex", "byte2"] {
        for i in 1..=10 {
            cols.push_str(&format!(", {prefix}_{i}"));
        }
    }
    cols.push_str(", msc_location, vlr_location");
    cols
}

impl Tatp {
    pub fn new(subscribers: u64) -> Result<Self> {
        let cfg = TatpConfig { subscribers };
        cfg.validate().map_err(|e| Error::Input(e.to_string()))?;
        let sub = |name: &str, sql: String, kind, pred: &str| {
            StmtDef::new(name, sql, SUBSCRIBER, kind, pred)
        };
        let stmts = vec![
            sub("GetSubscriberData", format!("SELECT {} FROM subscriber WHERE s_id = ?", subscriber_columns()), Select, "c0 = $1")
                .reads(&(0..34).collect::<Vec<_>>())
                .locking(&[0]),
            StmtDef::new("special facility active", "SELECT is_active FROM special_facility WHERE s_id = ? AND sf_type = ?", SPECIAL_FACILITY, Select, "c0 = $1 AND c1 = $2")
                .reads(&[2])
                .locking(&[0, 1]),
            StmtDef::new(
                "call forwarding destinations",
                "SELECT numberx FROM call_forwarding WHERE s_id = ? AND sf_type = ? AND start_time <= ? AND end_time > ?",
                CALL_FORWARDING,
                Select,
                "c0 = $1 AND c1 = $2 AND c2 <= $3 AND c3 > $4",
            )
            .reads(&[4])
            .locking(&[0, 1, 2, 3]),
            StmtDef::new("GetAccessData", "SELECT data1, data2, data3, data4 FROM access_info WHERE s_id = ? AND ai_type = ?", ACCESS_INFO, Select, "c0 = $1 AND c1 = $2")
                .reads(&[2, 3, 4, 5])
                .locking(&[0, 1]),
            sub("update bit_1", "UPDATE subscriber SET bit_1 = ? WHERE s_id = ?".into(), Update, "c0 = $1")
                .writes(&[2])
                .locking(&[1]),
            StmtDef::new("update data_a", "UPDATE special_facility SET data_a = ? WHERE s_id = ? AND sf_type = ?", SPECIAL_FACILITY, Update, "c0 = $1 AND c1 = $2")
                .writes(&[4])
                .locking(&[1, 2]),
            sub("s_id by sub_nbr", "SELECT s_id FROM subscriber WHERE sub_nbr = ?".into(), Select, "c1 = $1")
                .reads(&[0])
                .locking(&[0]),
            sub("update vlr_location", "UPDATE subscriber SET vlr_location = ? WHERE s_id = ?".into(), Update, "c0 = $1")
                .writes(&[33])
                .locking(&[1]),
            StmtDef::new("special facility types", "SELECT sf_type FROM special_facility WHERE s_id = ?", SPECIAL_FACILITY, Select, "c0 = $1")
                .reads(&[1])
                .locking(&[0]),
            StmtDef::new("call forwarding exists", "SELECT end_time FROM call_forwarding WHERE s_id = ? AND sf_type = ? AND start_time = ?", CALL_FORWARDING, Select, "c0 = $1 AND c1 = $2 AND c2 = $3")
                .reads(&[3])
                .locking(&[0, 1, 2]),
            StmtDef::new("insert call forwarding", "INSERT INTO call_forwarding VALUES (?, ?, ?, ?, ?)", CALL_FORWARDING, Insert, "c0 = $1 AND c1 = $2 AND c2 = $3")
                .locking(&[0, 1, 2]),
            StmtDef::new("delete call forwarding", "DELETE FROM call_forwarding WHERE s_id = ? AND sf_type = ? AND start_time = ?", CALL_FORWARDING, Delete, "c0 = $1 AND c1 = $2 AND c2 = $3")
                .locking(&[0, 1, 2]),
        ];
        debug_assert_eq!(stmts[CF_DELETE].kind, Delete);
        Ok(Tatp {
            subscribers,
            a: cfg.nurand_a(),
            stmts,
        })
    }

    /// `s_id = NURand(A, 1, P)`.
    fn s_id(&self, rng: &mut SmallRng) -> i64 {
        let p = self.subscribers;
        (((rng.gen_range(0..=self.a) | rng.gen_range(1..=p)) % p) + 1) as i64
    }

    /// The subscriber `sub_nbr` names (the spec's lookup of `s_id`).
    fn s_id_of(&self, s: &mut Session<'_>, nbr: &str) -> Result<i64> {
        let rows = s.query(SID_BY_NBR, &[Value::Text(nbr.to_string())])?;
        rows.first()
            .and_then(|r| r[0].int())
            .ok_or(Error::UserAbort("no subscriber with that sub_nbr"))
    }
}

impl SqlWorkload for Tatp {
    type Txn = Txn;

    fn name(&self) -> &'static str {
        "tatp"
    }

    fn params(&self) -> serde_json::Value {
        serde_json::json!({ "subscribers": self.subscribers })
    }

    fn tables(&self) -> Vec<TableDef> {
        let mut sub = String::from(
            "CREATE TABLE subscriber (s_id BIGINT PRIMARY KEY, sub_nbr VARCHAR(15) NOT NULL",
        );
        for i in 1..=10 {
            sub.push_str(&format!(", bit_{i} SMALLINT"));
        }
        for i in 1..=10 {
            sub.push_str(&format!(", hex_{i} SMALLINT"));
        }
        for i in 1..=10 {
            sub.push_str(&format!(", byte2_{i} SMALLINT"));
        }
        sub.push_str(", msc_location BIGINT, vlr_location BIGINT)");
        vec![
            TableDef {
                name: "subscriber",
                ddl: vec![sub, "CREATE UNIQUE INDEX subscriber_nbr ON subscriber (sub_nbr)".into()],
                width: 34,
            },
            TableDef {
                name: "access_info",
                ddl: vec!["CREATE TABLE access_info (s_id BIGINT NOT NULL, ai_type SMALLINT NOT NULL, data1 SMALLINT, data2 SMALLINT, data3 VARCHAR(3), data4 VARCHAR(5), PRIMARY KEY (s_id, ai_type))".into()],
                width: 6,
            },
            TableDef {
                name: "special_facility",
                ddl: vec!["CREATE TABLE special_facility (s_id BIGINT NOT NULL, sf_type SMALLINT NOT NULL, is_active SMALLINT NOT NULL, error_cntrl SMALLINT, data_a SMALLINT, data_b VARCHAR(5), PRIMARY KEY (s_id, sf_type))".into()],
                width: 6,
            },
            TableDef {
                name: "call_forwarding",
                ddl: vec!["CREATE TABLE call_forwarding (s_id BIGINT NOT NULL, sf_type SMALLINT NOT NULL, start_time SMALLINT NOT NULL, end_time SMALLINT, numberx VARCHAR(15), PRIMARY KEY (s_id, sf_type, start_time))".into()],
                width: 5,
            },
        ]
    }

    fn statements(&self) -> &[StmtDef] {
        &self.stmts
    }

    fn load(&self, conn: &mut dyn Conn) -> Result<()> {
        use Value::{Int, Text};
        let p = self.subscribers as i64;
        let mut rng = SmallRng::seed_from_u64(0x7A7B);
        insert_batched(
            conn,
            "subscriber",
            (1..=p).map(|s| {
                let mut row = vec![Int(s), Text(sub_nbr(s))];
                row.extend((0..10).map(|_| Int(rng.gen_range(0..=1))));
                row.extend((0..10).map(|_| Int(rng.gen_range(0..=15))));
                row.extend((0..10).map(|_| Int(rng.gen_range(0..=255))));
                row.push(Int(rng.gen_range(1..=u32::MAX as i64)));
                row.push(Int(rng.gen_range(1..=u32::MAX as i64)));
                row
            }),
            500,
        )?;
        let mut rng = SmallRng::seed_from_u64(0x7A7C);
        insert_batched(
            conn,
            "access_info",
            (1..=p).flat_map(|s| {
                let types = some_types(&mut rng);
                types
                    .into_iter()
                    .map(|t| {
                        vec![
                            Int(s),
                            Int(t),
                            Int(rng.gen_range(0..=255)),
                            Int(rng.gen_range(0..=255)),
                            Text(letters(&mut rng, 3)),
                            Text(letters(&mut rng, 5)),
                        ]
                    })
                    .collect::<Vec<_>>()
            }),
            500,
        )?;
        // Special facilities and their call forwardings, from one generator.
        let mut rng = SmallRng::seed_from_u64(0x7A7D);
        let mut forwardings = Vec::new();
        let mut facilities = Vec::new();
        for s in 1..=p {
            for t in some_types(&mut rng) {
                let active = if rng.gen_range(0..100) < 85 { 1 } else { 0 };
                facilities.push(vec![
                    Int(s),
                    Int(t),
                    Int(active),
                    Int(rng.gen_range(0..=255)),
                    Int(rng.gen_range(0..=255)),
                    Text(letters(&mut rng, 5)),
                ]);
                for start in [0, 8, 16] {
                    if rng.gen_range(0..4) < 2 {
                        forwardings.push(vec![
                            Int(s),
                            Int(t),
                            Int(start),
                            Int(start + rng.gen_range(1..=8)),
                            Text(digits(&mut rng, 15)),
                        ]);
                    }
                }
            }
            if facilities.len() >= 4096 {
                insert_batched(conn, "special_facility", facilities.drain(..), 500)?;
                insert_batched(conn, "call_forwarding", forwardings.drain(..), 500)?;
            }
        }
        insert_batched(conn, "special_facility", facilities.drain(..), 500)?;
        insert_batched(conn, "call_forwarding", forwardings.drain(..), 500)?;
        Ok(())
    }

    fn next(&self, rng: &mut SmallRng) -> Txn {
        // The standard mix, by the in-memory workload's shares.
        let roll = rng.gen_range(0..100);
        let mut acc = 0;
        let kind = Kind::ALL
            .into_iter()
            .find(|k| {
                acc += k.percent();
                roll < acc
            })
            .unwrap_or(Kind::GetSubscriberData);
        let start_time = [0, 8, 16][rng.gen_range(0..3)];
        Txn {
            kind,
            s_id: self.s_id(rng),
            sf_type: rng.gen_range(1..=4),
            ai_type: rng.gen_range(1..=4),
            start_time,
            end_time: match kind {
                Kind::InsertCallForwarding => start_time + rng.gen_range(1..=8),
                _ => rng.gen_range(1..=24),
            },
            bit: rng.gen_range(0..=1),
            data_a: rng.gen_range(0..=255),
            vlr_location: rng.gen_range(1..=u32::MAX as i64),
            numberx: digits(rng, 15),
        }
    }

    fn writes(&self, txn: &Txn) -> bool {
        !matches!(
            txn.kind,
            Kind::GetSubscriberData | Kind::GetNewDestination | Kind::GetAccessData
        )
    }

    fn kind(&self, txn: &Txn) -> &'static str {
        txn.kind.name()
    }

    fn run(&self, s: &mut Session<'_>, t: &Txn) -> Result<()> {
        use Value::{Int, Text};
        match t.kind {
            Kind::GetSubscriberData => {
                if s.query(GET_SUBSCRIBER, &[Int(t.s_id)])?.len() != 1 {
                    return Err(Error::engine(
                        "tatp",
                        format!("subscriber {} missing", t.s_id),
                    ));
                }
            }
            Kind::GetNewDestination => {
                let active = s.query(SF_ACTIVE, &[Int(t.s_id), Int(t.sf_type)])?;
                if active.first().and_then(|r| r[0].int()) == Some(1) {
                    s.query(
                        CF_DESTINATIONS,
                        &[
                            Int(t.s_id),
                            Int(t.sf_type),
                            Int(t.start_time),
                            Int(t.end_time),
                        ],
                    )?;
                }
            }
            Kind::GetAccessData => {
                s.query(GET_ACCESS, &[Int(t.s_id), Int(t.ai_type)])?;
            }
            Kind::UpdateSubscriberData => {
                s.execute(UPDATE_BIT, &[Int(t.bit), Int(t.s_id)])?;
                if s.execute(UPDATE_SF, &[Int(t.data_a), Int(t.s_id), Int(t.sf_type)])? == 0 {
                    return Err(Error::UserAbort("no such special facility"));
                }
            }
            Kind::UpdateLocation => {
                let s_id = self.s_id_of(s, &sub_nbr(t.s_id))?;
                s.execute(UPDATE_VLR, &[Int(t.vlr_location), Int(s_id)])?;
            }
            Kind::InsertCallForwarding => {
                let s_id = self.s_id_of(s, &sub_nbr(t.s_id))?;
                let types = s.query(SF_TYPES, &[Int(s_id)])?;
                if !types.iter().any(|r| r[0].int() == Some(t.sf_type)) {
                    return Err(Error::UserAbort("no such special facility"));
                }
                if !s
                    .query(CF_EXISTS, &[Int(s_id), Int(t.sf_type), Int(t.start_time)])?
                    .is_empty()
                {
                    return Err(Error::UserAbort("the call forwarding exists"));
                }
                s.execute(
                    CF_INSERT,
                    &[
                        Int(s_id),
                        Int(t.sf_type),
                        Int(t.start_time),
                        Int(t.end_time),
                        Text(t.numberx.clone()),
                    ],
                )?;
            }
            Kind::DeleteCallForwarding => {
                let s_id = self.s_id_of(s, &sub_nbr(t.s_id))?;
                if s.execute(CF_DELETE, &[Int(s_id), Int(t.sf_type), Int(t.start_time)])? == 0 {
                    return Err(Error::UserAbort("no such call forwarding"));
                }
            }
        }
        Ok(())
    }
}
