//! A YCSB whose fields hold version ids, for recording histories from the client side and checking
//! them with Ordo's serializability checker (Adya's DSG): each field stores the id of the attempt
//! that last wrote it (0: the loader). A read records the version it saw; a write first reads the
//! field (under DIBS that read's lock is held to commit, so the version it replaces is exact), then
//! stores its own attempt id and records the version it replaced. The item is (0, row × fields +
//! field): DIBS locks fields, so fields are the checker's items.
//!
//! Without DIBS, at a level that lets another writer slip between the read and the write (MariaDB
//! READ UNCOMMITTED, PostgreSQL READ COMMITTED), two committed writers replace one version: the
//! checker reports the lost update as a version fork, and a read of an attempt that rolled back as
//! G1a.

use super::{field_statements, insert_batched, SqlWorkload, StmtDef, TableDef};
use crate::conn::{Conn, Value};
use crate::error::{Error, Result};
use crate::session::{Seen, Session};
use ordo_workloads::zipf::Zipf;
use rand::rngs::SmallRng;
use rand::Rng;

/// One request: the row, the field, and whether it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub key: u64,
    pub field: u16,
    pub write: bool,
}

pub struct Versioned {
    rows: u64,
    fields: u16,
    ops: usize,
    write_ratio: f64,
    zipf: Zipf,
    stmts: Vec<StmtDef>,
}

impl Versioned {
    /// `rows` rows of `fields` version fields; `ops` requests a transaction, a `write_ratio` share
    /// of them writes; rows drawn with Zipfian skew `theta`.
    pub fn new(rows: u64, fields: u16, ops: usize, write_ratio: f64, theta: f64) -> Result<Self> {
        if rows == 0
            || fields == 0
            || fields > 63
            || ops == 0
            || !(0.0..=1.0).contains(&write_ratio)
            || !(theta >= 0.0 && theta.is_finite())
        {
            return Err(Error::Input(format!(
                "versioned ycsb: rows, ops positive, fields 1 to 63, write ratio in [0, 1], theta >= 0 (got {rows}, {fields}, {ops}, {write_ratio}, {theta})"
            )));
        }
        let columns: Vec<String> = (0..fields).map(|f| format!("v{f}")).collect();
        let stmts = field_statements("vycsb", "k", &columns);
        Ok(Versioned {
            rows,
            fields,
            ops,
            write_ratio,
            zipf: Zipf::new(rows, theta),
            stmts,
        })
    }

    fn read(&self, s: &mut Session<'_>, op: &Op) -> Result<u64> {
        let rows = s.query(op.field as usize, &[Value::Int(op.key as i64)])?;
        match rows.first().and_then(|r| r[0].int()) {
            Some(v) if v >= 0 => Ok(v as u64),
            _ => Err(Error::engine(
                "versioned",
                format!("row {} has no version", op.key),
            )),
        }
    }
}

impl SqlWorkload for Versioned {
    type Txn = Vec<Op>;

    fn name(&self) -> &'static str {
        "versioned-ycsb"
    }

    fn params(&self) -> serde_json::Value {
        serde_json::json!({"rows": self.rows, "fields": self.fields, "ops": self.ops, "write_ratio": self.write_ratio})
    }

    fn tables(&self) -> Vec<TableDef> {
        let cols: String = (0..self.fields)
            .map(|f| format!(", v{f} BIGINT NOT NULL"))
            .collect();
        vec![TableDef {
            name: "vycsb",
            ddl: vec![format!("CREATE TABLE vycsb (k BIGINT PRIMARY KEY{cols})")],
            width: self.fields + 1,
        }]
    }

    fn statements(&self) -> &[StmtDef] {
        &self.stmts
    }

    fn load(&self, conn: &mut dyn Conn) -> Result<()> {
        let fields = self.fields as usize;
        insert_batched(
            conn,
            "vycsb",
            (0..self.rows).map(|k| {
                std::iter::once(Value::Int(k as i64))
                    .chain(std::iter::repeat_n(Value::Int(0), fields))
                    .collect()
            }),
            500,
        )?;
        Ok(())
    }

    fn next(&self, rng: &mut SmallRng) -> Vec<Op> {
        (0..self.ops)
            .map(|_| Op {
                key: self.zipf.next(rng),
                field: rng.gen_range(0..self.fields),
                write: rng.gen_bool(self.write_ratio),
            })
            .collect()
    }

    fn writes(&self, txn: &Vec<Op>) -> bool {
        txn.iter().any(|o| o.write)
    }

    fn kind(&self, txn: &Vec<Op>) -> &'static str {
        if self.writes(txn) {
            "update"
        } else {
            "read"
        }
    }

    fn run(&self, s: &mut Session<'_>, txn: &Vec<Op>) -> Result<()> {
        for op in txn {
            let item = (0, op.key * self.fields as u64 + op.field as u64);
            let version = self.read(s, op)?;
            s.record(Seen::Read { item, version });
            if op.write {
                let me = s.attempt() as i64;
                let n = s.execute(
                    self.fields as usize + op.field as usize,
                    &[Value::Int(me), Value::Int(op.key as i64)],
                )?;
                if n != 1 {
                    return Err(Error::engine(
                        "versioned",
                        format!("row {} not updated ({n} rows)", op.key),
                    ));
                }
                s.record(Seen::Write {
                    item,
                    prev: version,
                });
            }
        }
        Ok(())
    }
}
