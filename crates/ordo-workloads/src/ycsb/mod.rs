//! YCSB, configured as DBx1000 and the VLL, PWV and DIBS papers use it.
//!
//! One table `usertable`: an integer key `0..rows` and `fields` columns of `field_len` bytes (default
//! 10 × 100 bytes, 1,000,000 rows ≈ 1 GB). Each transaction makes `ops` requests (default 16) on
//! distinct keys; each request is a read of the whole record (probability `read_ratio`) or an update of
//! one random field — a blind overwrite, or with `rmw` a read-modify-write of that field.
//!
//! Keys are drawn one of two ways:
//! * **Zipfian** with skew θ ([`crate::zipf`]; θ = 0 is uniform, key 0 the hottest), as in DBx1000;
//! * **hot set**: `hot_per_txn` of each transaction's keys come uniformly from the first `hot_rows`
//!   keys and the rest uniformly from the others — the VLL micro-benchmark ("1 hot + 9 cold",
//!   contention index = 1 / hot_rows) and PWV's motivating experiment.
//!
//! Each request is one piece of the program (declared as a read of every column, or an update of one
//! column), so protocols that consume declarations see exactly what runs. No piece needs another's
//! result and every key is an input: [`Program::depends_on`] and [`Program::declaration_depends_on`]
//! are empty (PWV may run a transaction's requests in any order, and plans them without
//! reconnaissance).
//!
//! **Commit point** (`commit_point`, the PWV paper's §5.2 and Fig. 4; `--commit-point K`): each
//! transaction gets an explicit abort check, a piece of its own placed after its K-th write (after
//! its last request when it makes fewer), which [`Program::commit_point`] names: the writes before
//! it may still be undone, those after it may not. The check aborts ([`Abort::user`]) the
//! transactions the request generator marked, a fraction `abort_ratio` of them (`--abort-ratio`,
//! default [`DEFAULT_ABORT_RATIO`]), drawn with the transaction's keys. A flag drawn with the
//! transaction rather than a property of the data read, because (1) the check must be able to sit
//! before any write (K = 0), where nothing has been read yet; (2) every protocol then aborts
//! exactly the same transactions of a seeded request stream, whatever order it serializes them in
//! (a value read differs with that order); and (3) the abort rate is what was asked for, not what
//! the data happens to give. Without a commit point the programs, the request stream and the
//! recorded parameters are the same as before the option existed.
//!
//! **Partitions** (`partitioning`, DBx1000's `PART_CNT` and `PERC_MULTI_PART`; `--partitions P
//! --multi-partition PCT`): key `k` belongs to partition `k % P`, the mapping of the partitioned
//! protocols (`hstore`, the `vll-partitioned` family, `hstore-lockmgr`:
//! `ordo::protocols::partitioned::partition_of`), which take **P = the number of worker threads**:
//! give `--partitions` the `-t` of the run for their transactions to be partition-local. Worker `t`'s
//! home partition is `t % P` (as in `vll-micro`: each partition's site issues its own transactions).
//! A single-partition transaction draws all its keys from its home partition; a multi-partition one
//! (`PCT` percent of them, drawn with the transaction; 0 by default) from its home and one other
//! partition drawn uniformly, its requests alternating between the two (DBx1000's `PART_PER_TXN` =
//! 2, its first partition local). Within a partition a key is drawn as DBx1000 does: a Zipfian (θ)
//! rank `r` in `0..rows / P`, the key `r · P + p`, so every partition has the same skew, its
//! hottest key its smallest (the `rows % P` keys past `P · (rows / P)` are never drawn). The
//! hot-set mode has no partitioned form. Without `--partitions` the request stream and the recorded
//! parameters are the same as before the option existed.

pub mod options;

use crate::zipf::Zipf;
use crate::Error;
use ordo::harness::Workload;
use ordo::storage::{
    Column, ColumnSet, ColumnType, Database, LoadError, Schema, TableId, TableSpec,
};
use ordo::txn::{Abort, Access, Program, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::hint::black_box;

/// The one table.
pub const USERTABLE: TableId = 0;

/// A hot-set key distribution.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HotSet {
    /// Keys `0..rows` are hot.
    pub rows: u64,
    /// Hot keys in every transaction.
    pub per_txn: usize,
}

/// An explicit abort check in every transaction (the PWV paper's Fig. 4; see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CommitPoint {
    /// Writes before the check (the paper's commit position), `--commit-point`.
    #[serde(rename = "commit_point")]
    pub after_writes: usize,
    /// Fraction of transactions whose check aborts them, `--abort-ratio`.
    pub abort_ratio: f64,
}

/// The fraction of transactions a commit-point check aborts unless `--abort-ratio` says otherwise.
pub const DEFAULT_ABORT_RATIO: f64 = 0.01;

/// Partition-local transactions (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Partitioning {
    /// Number of partitions P, `--partitions`: key `k` belongs to partition `k % P`.
    pub partitions: u32,
    /// Percent of transactions that touch two partitions, `--multi-partition`.
    pub multi_partition_pct: f64,
}

impl Partitioning {
    /// The partition that holds `key`.
    #[inline]
    pub fn partition_of(&self, key: u64) -> u32 {
        (key % self.partitions as u64) as u32
    }
    /// Keys drawn in each partition (ranks `0..local_rows`).
    pub fn local_rows(&self, rows: u64) -> u64 {
        rows / self.partitions as u64
    }
    /// The key of rank `rank` in partition `p`.
    #[inline]
    fn key(&self, p: u32, rank: u64) -> u64 {
        rank * self.partitions as u64 + p as u64
    }
}

/// YCSB parameters (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct YcsbConfig {
    pub rows: u64,
    pub fields: usize,
    pub field_len: u16,
    pub ops: usize,
    pub read_ratio: f64,
    pub theta: f64,
    pub rmw: bool,
    pub hot: Option<HotSet>,
    /// An abort check after some writes (recorded as `commit_point` and `abort_ratio`, absent
    /// without one, as before the option existed).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub commit_point: Option<CommitPoint>,
    /// Partition-local transactions (recorded as `partitions` and `multi_partition_pct`, absent
    /// without, as before the option existed).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub partitioning: Option<Partitioning>,
}

impl Default for YcsbConfig {
    fn default() -> Self {
        YcsbConfig {
            rows: 1_000_000,
            fields: 10,
            field_len: 100,
            ops: 16,
            read_ratio: 0.9,
            theta: 0.6,
            rmw: false,
            hot: None,
            commit_point: None,
            partitioning: None,
        }
    }
}

/// Most requests one transaction may make.
pub const MAX_OPS: usize = 1024;

/// Most key draws (a bound on the expected number, see [`crate::zipf::distinct_draws_bound`]) one
/// transaction's distinct keys may take, about 5 ms of drawing: beyond it the skew is so high that a
/// transaction keeps drawing keys it already has and the benchmark measures only that. Sixteen keys
/// reach it between θ = 4 (5 × 10^4 draws) and θ = 5 (9 × 10^5, 20 transactions a second); a θ of
/// 10^14 would never finish.
pub const MAX_KEY_DRAWS: f64 = 1e5;

impl YcsbConfig {
    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if self.rows == 0 {
            return Err(Error::invalid("rows", "must be at least 1"));
        }
        if !(1..=64).contains(&self.fields) {
            return Err(Error::invalid(
                "fields",
                format!("must be between 1 and 64, got {}", self.fields),
            ));
        }
        if self.field_len == 0 {
            return Err(Error::invalid("field-len", "must be at least 1"));
        }
        if self.ops == 0 || self.ops > MAX_OPS {
            return Err(Error::invalid(
                "ops",
                format!("must be between 1 and {MAX_OPS}, got {}", self.ops),
            ));
        }
        if self.ops as u64 > self.rows {
            return Err(Error::invalid(
                "ops",
                format!(
                    "({}) cannot exceed --rows ({}): a transaction's keys are distinct",
                    self.ops, self.rows
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.read_ratio) {
            return Err(Error::invalid(
                "read-ratio",
                format!("must be in [0, 1], got {}", self.read_ratio),
            ));
        }
        if !(self.theta >= 0.0 && self.theta.is_finite()) {
            return Err(Error::invalid(
                "theta",
                format!("must be a finite number >= 0, got {}", self.theta),
            ));
        }
        if let Some(p) = self.partitioning {
            self.validate_partitioning(p)?;
        }
        if self.hot.is_none() {
            // Partitioned, each partition's keys are drawn from its own `rows / P`.
            let rows = self
                .partitioning
                .map_or(self.rows, |p| p.local_rows(self.rows));
            let draws = crate::zipf::distinct_draws_bound(rows, self.ops, self.theta);
            if draws > MAX_KEY_DRAWS {
                return Err(Error::invalid(
                    "theta",
                    format!(
                    "{} is too skewed for {} distinct keys per transaction (--ops) over {} rows: \
                     drawing them could take {draws:.1e} draws; lower --theta or --ops",
                    self.theta, self.ops, rows
                ),
                ));
            }
        }
        if let Some(c) = self.commit_point {
            if c.after_writes > self.ops {
                return Err(Error::invalid(
                    "commit-point",
                    format!(
                        "({}) cannot exceed --ops ({}): it counts writes before the check",
                        c.after_writes, self.ops
                    ),
                ));
            }
            if !(0.0..=1.0).contains(&c.abort_ratio) {
                return Err(Error::invalid(
                    "abort-ratio",
                    format!("must be in [0, 1], got {}", c.abort_ratio),
                ));
            }
        }
        if let Some(h) = self.hot {
            if h.rows == 0 || h.rows > self.rows {
                return Err(Error::invalid(
                    "hot-rows",
                    format!(
                        "must be between 1 and --rows ({}), got {}",
                        self.rows, h.rows
                    ),
                ));
            }
            if h.per_txn > self.ops {
                return Err(Error::invalid(
                    "hot-per-txn",
                    format!("({}) cannot exceed --ops ({})", h.per_txn, self.ops),
                ));
            }
            if h.per_txn as u64 > h.rows {
                return Err(Error::invalid(
                    "hot-per-txn",
                    format!("({}) cannot exceed --hot-rows ({})", h.per_txn, h.rows),
                ));
            }
            if ((self.ops - h.per_txn) as u64) > self.rows - h.rows {
                return Err(Error::Unrunnable(format!(
                    "not enough cold rows: {} cold requests per transaction but only {} cold rows",
                    self.ops - h.per_txn,
                    self.rows - h.rows
                )));
            }
        }
        Ok(())
    }

    fn validate_partitioning(&self, p: Partitioning) -> crate::Result<()> {
        if p.partitions == 0 || p.partitions as u64 > self.rows {
            return Err(Error::invalid(
                "partitions",
                format!(
                    "must be between 1 and --rows ({}), got {}",
                    self.rows, p.partitions
                ),
            ));
        }
        if !(0.0..=100.0).contains(&p.multi_partition_pct) {
            return Err(Error::invalid(
                "multi-partition",
                format!(
                    "must be a percent in [0, 100], got {}",
                    p.multi_partition_pct
                ),
            ));
        }
        if p.multi_partition_pct > 0.0 && p.partitions < 2 {
            return Err(Error::invalid(
                "multi-partition",
                format!(
                    "({}) needs --partitions of 2 or more, got {}",
                    p.multi_partition_pct, p.partitions
                ),
            ));
        }
        if self.hot.is_some() {
            return Err(Error::invalid(
                "partitions",
                "draws Zipfian keys (--theta) in each partition; the hot set (--hot-rows) has no \
                 partitioned form",
            ));
        }
        let local = p.local_rows(self.rows);
        if self.ops as u64 > local {
            return Err(Error::invalid(
                "ops",
                format!(
                    "({}) cannot exceed the rows of a partition, --rows / --partitions ({} / {} = \
                     {local}): a single-partition transaction's keys are distinct keys of one \
                     partition",
                    self.ops, self.rows, p.partitions
                ),
            ));
        }
        Ok(())
    }
}

/// The YCSB workload.
pub struct Ycsb {
    cfg: YcsbConfig,
    zipf: Zipf,
}

impl Ycsb {
    /// A workload with validated parameters.
    pub fn new(cfg: YcsbConfig) -> crate::Result<Self> {
        cfg.validate()?;
        // Partitioned, the ranks within a partition.
        let n = cfg
            .partitioning
            .map_or(cfg.rows, |p| p.local_rows(cfg.rows));
        let zipf = Zipf::new(n, if cfg.hot.is_some() { 0.0 } else { cfg.theta });
        Ok(Ycsb { cfg, zipf })
    }
    pub fn config(&self) -> &YcsbConfig {
        &self.cfg
    }
    fn schema(&self) -> Schema {
        let cols = (0..self.cfg.fields)
            .map(|f| Column::new(format!("field{f}"), ColumnType::Char(self.cfg.field_len)))
            .collect();
        Schema::new(cols).expect("valid YCSB schema")
    }
}

/// One request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub key: u64,
    pub write: bool,
    pub field: u8,
}

/// A YCSB transaction: `ops` requests, one piece each, and with a commit point the abort check,
/// a piece of its own between them.
#[derive(Clone, Debug)]
pub struct YcsbTxn {
    pub requests: Vec<Request>,
    /// The piece of the abort check (requests before it are pieces `0..check`, the rest follow
    /// it), if the workload has a commit point.
    pub check: Option<usize>,
    /// Whether the check aborts this transaction (drawn with it).
    pub aborts: bool,
    rmw: bool,
    value: Vec<u8>,
    scratch: Vec<u8>,
}

impl YcsbTxn {
    /// The request piece `piece` makes; `None` for the abort check.
    #[inline(always)]
    fn request(&self, piece: usize) -> Option<Request> {
        let i = match self.check {
            None => piece,
            Some(c) if piece == c => return None,
            Some(c) => piece - usize::from(piece > c),
        };
        Some(self.requests[i])
    }

    /// The abort check's run (out of the requests' way: most programs have none).
    #[cold]
    #[inline(never)]
    fn run_check(&self) -> TxResult<()> {
        if self.aborts {
            Err(Abort::user("YCSB: the commit-point check aborts"))
        } else {
            Ok(())
        }
    }
}

impl Program for YcsbTxn {
    fn name(&self) -> &'static str {
        "ycsb"
    }
    fn pieces(&self) -> usize {
        self.requests.len() + usize::from(self.check.is_some())
    }
    // Inlined as before the commit point existed: the harness declares every piece of every
    // transaction to prefetch it (cachegrind: an out-of-line call cost YCSB 2-3% more instructions).
    #[inline(always)]
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let Some(r) = self.request(piece) else {
            return; // the abort check touches nothing
        };
        out.push(if r.write {
            let f = ColumnSet::one(r.field as usize);
            Access::update(
                USERTABLE,
                r.key,
                if self.rmw { f } else { ColumnSet::NONE },
                f,
            )
        } else {
            Access::read(USERTABLE, r.key, ColumnSet::ALL)
        });
    }
    /// No data edges: a request needs nothing another piece found, and the check decides by a flag
    /// drawn with the transaction.
    fn depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    /// Every key is an input: no reconnaissance.
    fn declaration_depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn commit_point(&self) -> Option<usize> {
        self.check
    }
    #[inline]
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        let Some(r) = self.request(piece) else {
            return self.run_check();
        };
        let f = r.field as usize;
        if !r.write {
            if let Some(row) = tx.get(USERTABLE, r.key, ColumnSet::ALL)? {
                black_box(row.words()[0]);
            }
        } else if self.rmw {
            let scratch = &mut self.scratch;
            tx.update(USERTABLE, r.key, ColumnSet::one(f), |row| {
                scratch.clear();
                scratch.extend_from_slice(row.str(f));
                let n = u64::from_le_bytes(
                    scratch[..8.min(scratch.len())].try_into().unwrap_or([0; 8]),
                );
                let len = scratch.len().min(8);
                scratch[..len].copy_from_slice(&(n.wrapping_add(1)).to_le_bytes()[..len]);
                row.set_str(f, scratch).expect("same length");
            })?;
        } else {
            let value = &self.value;
            tx.update(USERTABLE, r.key, ColumnSet::one(f), |row| {
                row.set_str(f, value).expect("field length")
            })?;
        }
        Ok(())
    }
}

/// Per-thread state: RNG and a buffer for drawing distinct keys.
pub struct YcsbGen {
    rng: SmallRng,
    keys: Vec<u64>,
    /// With partitions, the partition this worker's transactions are homed at (`thread % P`).
    home: u32,
}

impl YcsbGen {
    fn distinct(&mut self, n: usize, mut draw: impl FnMut(&mut SmallRng) -> u64) {
        let start = self.keys.len();
        while self.keys.len() < start + n {
            let k = draw(&mut self.rng);
            if !self.keys[..].contains(&k) {
                self.keys.push(k);
            }
        }
    }
}

impl Ycsb {
    /// The partition of `key`, `None` without partitions.
    pub fn partition_of(&self, key: u64) -> Option<u32> {
        self.cfg.partitioning.map(|p| p.partition_of(key))
    }

    /// A transaction's keys with partitions (see the module doc): whether it is multi-partition is
    /// drawn first, then its other partition if it is, then its keys.
    fn partitioned_keys(&self, g: &mut YcsbGen) {
        let part = self.cfg.partitioning.expect("partitioned");
        let multi = g.rng.gen::<f64>() * 100.0 < part.multi_partition_pct;
        let parts = [
            g.home,
            if multi {
                // One of the P - 1 others, uniformly.
                let o = g.rng.gen_range(0..part.partitions - 1);
                o + u32::from(o >= g.home)
            } else {
                g.home
            },
        ];
        let z = &self.zipf;
        for i in 0..self.cfg.ops {
            let p = parts[i % 2];
            g.distinct(1, |rng| part.key(p, z.next(rng)));
        }
    }
}

impl Workload for Ycsb {
    type Program = YcsbTxn;
    type Gen = YcsbGen;

    fn name(&self) -> &'static str {
        "ycsb"
    }

    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }

    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let spec = TableSpec::new("usertable", self.schema()).capacity(self.cfg.rows as usize);
        let t = db.create_table(spec)?;
        debug_assert_eq!(t, USERTABLE);
        let table = db.table(t);
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8) as u64;
        let per = self.cfg.rows.div_ceil(threads);
        let (fields, len) = (self.cfg.fields, self.cfg.field_len as usize);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    s.spawn(move || -> Result<(), LoadError> {
                        let mut scratch = Vec::new();
                        let mut value = vec![0u8; len];
                        for key in i * per..((i + 1) * per).min(self.cfg.rows) {
                            table.load(key, &mut scratch, |row| {
                                for f in 0..fields {
                                    value.fill(b'a' + ((key as usize + f) % 26) as u8);
                                    row.set_str(f, &value)?;
                                }
                                Ok(())
                            })?;
                        }
                        Ok(())
                    })
                })
                .collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().expect("loader thread panicked"))
        })
    }

    fn generator(&self, thread: u32, seed: u64) -> YcsbGen {
        let s = seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        YcsbGen {
            rng: SmallRng::seed_from_u64(s),
            keys: Vec::with_capacity(self.cfg.ops),
            home: self.cfg.partitioning.map_or(0, |p| thread % p.partitions),
        }
    }

    fn program(&self) -> YcsbTxn {
        YcsbTxn {
            requests: Vec::with_capacity(self.cfg.ops),
            check: None,
            aborts: false,
            rmw: self.cfg.rmw,
            value: vec![b'w'; self.cfg.field_len as usize],
            scratch: Vec::with_capacity(self.cfg.field_len as usize),
        }
    }

    fn next(&self, g: &mut YcsbGen, p: &mut YcsbTxn) {
        g.keys.clear();
        match self.cfg.hot {
            None if self.cfg.partitioning.is_some() => self.partitioned_keys(g),
            None => {
                let z = &self.zipf;
                g.distinct(self.cfg.ops, |rng| z.next(rng));
            }
            Some(h) => {
                g.distinct(h.per_txn, |rng| rng.gen_range(0..h.rows));
                let rows = self.cfg.rows;
                g.distinct(self.cfg.ops - h.per_txn, |rng| rng.gen_range(h.rows..rows));
                g.keys.shuffle(&mut g.rng);
            }
        }
        p.requests.clear();
        for &key in &g.keys {
            let write = g.rng.gen::<f64>() >= self.cfg.read_ratio;
            let field = g.rng.gen_range(0..self.cfg.fields) as u8;
            p.requests.push(Request { key, write, field });
        }
        if let Some(c) = self.cfg.commit_point {
            // After the K-th write (after the last request when there are fewer).
            let mut writes = 0;
            let at = p
                .requests
                .iter()
                .position(|r| {
                    let reached = writes == c.after_writes;
                    writes += usize::from(r.write);
                    reached
                })
                .unwrap_or(p.requests.len());
            p.check = Some(at);
            p.aborts = g.rng.gen::<f64>() < c.abort_ratio;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ordo::protocols::nocc::NoCC;
    use ordo::protocols::Protocol;

    fn small(cfg: YcsbConfig) -> Ycsb {
        Ycsb::new(cfg).unwrap()
    }

    #[test]
    fn validation_rejects_bad_parameters() {
        let ok = YcsbConfig {
            rows: 100,
            ..YcsbConfig::default()
        };
        assert!(ok.validate().is_ok());
        // Skewed beyond θ = 1, but every transaction still finds its keys at once.
        assert!(YcsbConfig {
            theta: 2.0,
            ..ok.clone()
        }
        .validate()
        .is_ok());
        for bad in [
            YcsbConfig {
                rows: 0,
                ..ok.clone()
            },
            YcsbConfig {
                read_ratio: 1.5,
                ..ok.clone()
            },
            YcsbConfig {
                read_ratio: -0.1,
                ..ok.clone()
            },
            YcsbConfig {
                theta: -1.0,
                ..ok.clone()
            },
            YcsbConfig {
                theta: f64::NAN,
                ..ok.clone()
            },
            // So skewed that a transaction's 16 distinct keys would (almost) never all be drawn.
            YcsbConfig {
                theta: 8.0,
                ..ok.clone()
            },
            YcsbConfig {
                theta: 1e14,
                ..ok.clone()
            },
            YcsbConfig {
                ops: 0,
                ..ok.clone()
            },
            YcsbConfig {
                ops: 101,
                ..ok.clone()
            },
            YcsbConfig {
                hot: Some(HotSet {
                    rows: 0,
                    per_txn: 1,
                }),
                ..ok.clone()
            },
            YcsbConfig {
                hot: Some(HotSet {
                    rows: 10,
                    per_txn: 17,
                }),
                ..ok.clone()
            },
            YcsbConfig {
                hot: Some(HotSet {
                    rows: 95,
                    per_txn: 1,
                }),
                ..ok.clone()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn transactions_have_distinct_keys_and_the_requested_mix() {
        let w = small(YcsbConfig {
            rows: 1000,
            read_ratio: 0.75,
            ..YcsbConfig::default()
        });
        let mut g = w.generator(0, 42);
        let mut p = w.program();
        let (mut reads, mut total) = (0, 0);
        for _ in 0..2000 {
            w.next(&mut g, &mut p);
            assert_eq!(p.requests.len(), 16);
            let mut keys: Vec<_> = p.requests.iter().map(|r| r.key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), 16);
            assert!(keys.iter().all(|&k| k < 1000));
            reads += p.requests.iter().filter(|r| !r.write).count();
            total += 16;
        }
        let ratio = reads as f64 / total as f64;
        assert!((ratio - 0.75).abs() < 0.02, "read ratio {ratio}");
    }

    #[test]
    fn hot_set_mode_draws_exactly_k_hot_keys() {
        let hot = HotSet {
            rows: 5,
            per_txn: 1,
        };
        let w = small(YcsbConfig {
            rows: 1000,
            ops: 10,
            hot: Some(hot),
            ..YcsbConfig::default()
        });
        let mut g = w.generator(3, 1);
        let mut p = w.program();
        for _ in 0..1000 {
            w.next(&mut g, &mut p);
            assert_eq!(p.requests.iter().filter(|r| r.key < 5).count(), 1);
        }
    }

    #[test]
    fn loads_and_runs_under_nocc() {
        let w = small(YcsbConfig {
            rows: 500,
            read_ratio: 0.0,
            ..YcsbConfig::default()
        });
        let mut db = Database::new();
        w.load(&mut db).unwrap();
        assert_eq!(db.table(USERTABLE).present_keys().len(), 500);
        let p = NoCC::open(db, &Default::default());
        let mut worker = p.worker(0, false);
        let mut g = w.generator(0, 1);
        let mut prog = w.program();
        let mut written = Vec::new();
        for _ in 0..100 {
            w.next(&mut g, &mut prog);
            p.execute(&mut worker, &mut prog).unwrap();
            written.extend(prog.requests.iter().map(|r| (r.key, r.field as usize)));
        }
        let mut tx = p.begin(&mut worker);
        for (key, field) in written {
            let row = tx.get(USERTABLE, key, ColumnSet::ALL).unwrap().unwrap();
            assert!(
                row.str(field).iter().all(|&b| b == b'w'),
                "key {key} field {field} not overwritten"
            );
        }
    }

    #[test]
    fn read_modify_write_counts_up() {
        let w = small(YcsbConfig {
            rows: 20,
            ops: 1,
            read_ratio: 0.0,
            rmw: true,
            fields: 1,
            ..YcsbConfig::default()
        });
        let mut db = Database::new();
        w.load(&mut db).unwrap();
        let p = NoCC::open(db, &Default::default());
        let mut worker = p.worker(0, false);
        let counter = |p: &NoCC, worker: &mut _| -> u64 {
            let mut tx = p.begin(worker);
            (0..20)
                .map(|k| {
                    let row = tx.get(USERTABLE, k, ColumnSet::ALL).unwrap().unwrap();
                    u64::from_le_bytes(row.str(0)[..8].try_into().unwrap())
                })
                .fold(0u64, u64::wrapping_add)
        };
        let before = counter(&p, &mut worker);
        let (mut g, mut prog) = (w.generator(0, 9), w.program());
        for _ in 0..50 {
            w.next(&mut g, &mut prog);
            p.execute(&mut worker, &mut prog).unwrap();
        }
        assert_eq!(counter(&p, &mut worker).wrapping_sub(before), 50);
    }
}

#[cfg(test)]
mod commit_point_tests;

#[cfg(test)]
mod declaration_tests {
    use super::*;
    use ordo::protocols::nocc::NoCC;
    use ordo::protocols::Protocol;
    use ordo::txn::declared::run_checked;

    #[test]
    fn every_request_stays_within_its_declaration() {
        for rmw in [false, true] {
            let w = Ycsb::new(YcsbConfig {
                rows: 300,
                read_ratio: 0.5,
                rmw,
                ..YcsbConfig::default()
            })
            .unwrap();
            let mut db = Database::new();
            w.load(&mut db).unwrap();
            let p = NoCC::open(db, &Default::default());
            let mut worker = p.worker(0, false);
            let (mut g, mut prog) = (w.generator(0, 5), w.program());
            for _ in 0..200 {
                w.next(&mut g, &mut prog);
                let violations = run_checked(&mut prog, p.begin(&mut worker)).unwrap();
                assert!(violations.is_empty(), "{violations:#?}");
            }
        }
    }
}

#[cfg(test)]
mod partition_tests;
