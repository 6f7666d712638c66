//! YCSB as SQL, as DIBS's backend experiments ran it (§4.4–§4.5): one table `usertable` of an
//! integer key and `fields` text fields, each request reads or overwrites one field of one row
//! chosen by a Zipfian draw (the field uniformly), `ops` requests a transaction, a `read_ratio`
//! share of them reads (0.95 read-intensive, 0.5 write-intensive).
//!
//! Each request names one field, and its DIBS template declares exactly that column: two
//! transactions touching different fields of one hot row do not conflict (§2.2.4, the point of
//! Fig. 7), while the engine's own row locks would serialize them.

use super::{field_statements, insert_batched, SqlWorkload, StmtDef, TableDef};
use crate::conn::{Conn, Value};
use crate::error::{Error, Result};
use crate::session::Session;
use ordo_workloads::zipf::Zipf;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbConfig {
    pub rows: u64,
    pub fields: u16,
    pub field_len: usize,
    pub ops: usize,
    pub read_ratio: f64,
    pub theta: f64,
}

impl Default for YcsbConfig {
    fn default() -> Self {
        YcsbConfig {
            rows: 100_000,
            fields: 10,
            field_len: 100,
            ops: 1,
            read_ratio: 0.95,
            theta: 0.9,
        }
    }
}

/// One request: the row, the field, and for an update the value's seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub key: u64,
    pub field: u16,
    pub write: Option<u64>,
}

pub struct Ycsb {
    cfg: YcsbConfig,
    zipf: Zipf,
    stmts: Vec<StmtDef>,
}

impl Ycsb {
    pub fn new(cfg: YcsbConfig) -> Result<Self> {
        if cfg.rows == 0
            || cfg.fields == 0
            || cfg.fields > 63
            || cfg.ops == 0
            || cfg.field_len == 0
            || cfg.field_len > 1000
        {
            return Err(Error::Input(format!(
                "ycsb over a backend: rows, ops and field-len must be positive (field-len at most 1000) and fields 1 to 63, got {cfg:?}"
            )));
        }
        if !((0.0..=1.0).contains(&cfg.read_ratio) && cfg.theta >= 0.0 && cfg.theta.is_finite()) {
            return Err(Error::Input(format!(
                "ycsb over a backend: bad read-ratio or theta in {cfg:?}"
            )));
        }
        let columns: Vec<String> = (0..cfg.fields).map(|f| format!("field{f}")).collect();
        let stmts = field_statements("usertable", "ycsb_key", &columns);
        Ok(Ycsb {
            zipf: Zipf::new(cfg.rows, cfg.theta),
            cfg,
            stmts,
        })
    }

    pub fn config(&self) -> &YcsbConfig {
        &self.cfg
    }

    /// The text written by an update with `seed`: `field_len` letters.
    fn text(&self, seed: u64) -> String {
        let mut rng = SmallRng::seed_from_u64(seed);
        (0..self.cfg.field_len)
            .map(|_| rng.gen_range(b'a'..=b'z') as char)
            .collect()
    }
}

impl SqlWorkload for Ycsb {
    type Txn = Vec<Op>;

    fn name(&self) -> &'static str {
        "ycsb"
    }

    fn params(&self) -> serde_json::Value {
        let c = &self.cfg;
        serde_json::json!({
            "rows": c.rows, "fields": c.fields, "field_len": c.field_len, "ops": c.ops,
            "read_ratio": c.read_ratio, "theta": c.theta,
        })
    }

    fn tables(&self) -> Vec<TableDef> {
        let fields: Vec<String> = (0..self.cfg.fields)
            .map(|f| format!(", field{f} VARCHAR({})", self.cfg.field_len))
            .collect();
        vec![TableDef {
            name: "usertable",
            ddl: vec![format!(
                "CREATE TABLE usertable (ycsb_key BIGINT PRIMARY KEY{})",
                fields.concat()
            )],
            width: self.cfg.fields + 1,
        }]
    }

    fn statements(&self) -> &[StmtDef] {
        &self.stmts
    }

    fn load(&self, conn: &mut dyn Conn) -> Result<()> {
        let rows = (0..self.cfg.rows).map(|k| {
            let mut row = vec![Value::Int(k as i64)];
            for f in 0..self.cfg.fields {
                row.push(Value::Text(self.text(k * 64 + f as u64)));
            }
            row
        });
        let per = (256 * 1024 / (self.cfg.field_len * self.cfg.fields as usize + 16)).clamp(1, 500);
        insert_batched(conn, "usertable", rows, per)?;
        Ok(())
    }

    fn next(&self, rng: &mut SmallRng) -> Vec<Op> {
        (0..self.cfg.ops)
            .map(|_| Op {
                key: self.zipf.next(rng),
                field: rng.gen_range(0..self.cfg.fields),
                write: (!rng.gen_bool(self.cfg.read_ratio)).then(|| rng.gen()),
            })
            .collect()
    }

    fn writes(&self, txn: &Vec<Op>) -> bool {
        txn.iter().any(|o| o.write.is_some())
    }

    fn kind(&self, txn: &Vec<Op>) -> &'static str {
        if self.writes(txn) {
            "update"
        } else {
            "read"
        }
    }

    fn run(&self, s: &mut Session<'_>, txn: &Vec<Op>) -> Result<()> {
        let fields = self.cfg.fields as usize;
        for op in txn {
            let key = Value::Int(op.key as i64);
            match op.write {
                None => {
                    let rows = s.query(op.field as usize, &[key])?;
                    if rows.len() != 1 {
                        return Err(Error::engine("ycsb", format!("row {} not found", op.key)));
                    }
                }
                Some(seed) => {
                    let n = s.execute(
                        fields + op.field as usize,
                        &[Value::Text(self.text(seed)), key],
                    )?;
                    if n != 1 {
                        return Err(Error::engine(
                            "ycsb",
                            format!("row {} not updated ({n} rows)", op.key),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
