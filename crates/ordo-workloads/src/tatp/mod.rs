//! TATP, the Telecom Application Transaction Processing benchmark (Neuvonen, Wolski, Manner, Raatikka;
//! tatpbenchmark.sourceforge.net), with the 1,000,000-subscriber population and recommended key
//! distribution the DIBS paper runs.
//!
//! A home location register: four tables plus the index the spec's `sub_nbr` lookups go through.
//!
//! | table              | key (packed `u64`)                      | rows per subscriber        |
//! |--------------------|-----------------------------------------|----------------------------|
//! | `subscriber`       | `s_id` (1..=P)                          | 1                          |
//! | `access_info`      | `s_id·4 + ai_type−1`                    | 1–4 (distinct types)       |
//! | `special_facility` | `s_id·4 + sf_type−1`                    | 1–4 (85% active)           |
//! | `call_forwarding`  | `(s_id·4 + sf_type−1)·4 + start_time/8` | 0–3 per facility (ordered) |
//! | `sub_nbr_index`    | `sub_nbr` (the 15-digit string's value) | 1 → `s_id`                 |
//!
//! The seven transactions, in the spec's mix (80% reads, 20% writes), one module-level program each
//! ([`txn`] maps their SQL to pieces):
//!
//! | transaction            | mix | does                                                       | fails by design |
//! |------------------------|-----|------------------------------------------------------------|-----------------|
//! | GetSubscriberData      | 35% | read a subscriber row                                       | —               |
//! | GetNewDestination      | 10% | active facility ⋈ its forwardings in a time window          | (empty result)  |
//! | GetAccessData          | 35% | read one access_info row                                    | (empty result)  |
//! | UpdateSubscriberData   |  2% | set `bit_1`; set the facility's `data_a`                    | no facility     |
//! | UpdateLocation         | 14% | `sub_nbr` → `s_id`, set `vlr_location`                      | —               |
//! | InsertCallForwarding   |  2% | `sub_nbr` → `s_id`, read its facilities, insert a forwarding | no facility, duplicate |
//! | DeleteCallForwarding   |  2% | `sub_nbr` → `s_id`, delete a forwarding                     | not found       |
//!
//! Transactions that fail by design roll back (a user abort, or the insert's duplicate key) and are not
//! retried; reads that find nothing commit. `s_id` is drawn non-uniformly, `NURand(A, 1, P) =
//! ((rand(0, A) | rand(1, P)) mod P) + 1`, with the spec's A (65,535 up to 1M subscribers, 1,048,575 up
//! to 10M, 2,097,151 beyond); below 1M subscribers A is scaled with P (A + 1 the power of two nearest
//! 65,536·P/10⁶, as A/P is at 1M), so a small test population is as skewed as the real one.
//!
//! **Invariants** ([`Tatp::check`]): every subscriber exists and its `sub_nbr` index entry points back
//! to it; access_info and special_facility (never inserted or deleted) keep their loaded rows, 1–4
//! per subscriber; every call_forwarding row has its special_facility (referential integrity) and an
//! end time 1–8 hours after its start; and the number of forwardings is the loaded number plus the
//! committed inserts minus the committed deletes (a [`crate::ledger::Ledger`] tallies them).

pub mod options;
pub mod txn;

#[cfg(test)]
mod tests;

use crate::inspect;
use crate::ledger::{Entry, Ledger};
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{Column, ColumnType, Database, LoadError, Schema, TableId, TableSpec};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
pub use txn::{Kind, TatpTxn};

pub const SUBSCRIBER: TableId = 0;
pub const ACCESS_INFO: TableId = 1;
pub const SPECIAL_FACILITY: TableId = 2;
pub const CALL_FORWARDING: TableId = 3;
pub const SUB_NBR_INDEX: TableId = 4;

/// `subscriber` columns: `sub_nbr`, `bit_1..=bit_10`, `hex_1..=hex_10`, `byte2_1..=byte2_10`,
/// `msc_location`, `vlr_location`.
pub const SUB_NBR: usize = 0;
pub const BIT_1: usize = 1;
pub const HEX_1: usize = 11;
pub const BYTE2_1: usize = 21;
pub const MSC_LOCATION: usize = 31;
pub const VLR_LOCATION: usize = 32;
/// `access_info` columns.
pub const DATA1: usize = 0;
pub const DATA2: usize = 1;
pub const DATA3: usize = 2;
pub const DATA4: usize = 3;
/// `special_facility` columns.
pub const IS_ACTIVE: usize = 0;
pub const ERROR_CNTRL: usize = 1;
pub const DATA_A: usize = 2;
pub const DATA_B: usize = 3;
/// `call_forwarding` columns.
pub const END_TIME: usize = 0;
pub const NUMBERX: usize = 1;
/// `sub_nbr_index` column.
pub const S_ID: usize = 0;

/// Key of access_info `(s_id, ai_type)` (types 1..=4).
pub fn ai_key(s_id: u64, ai_type: u8) -> u64 {
    s_id << 2 | (ai_type as u64 - 1)
}
/// Key of special_facility `(s_id, sf_type)` (types 1..=4).
pub fn sf_key(s_id: u64, sf_type: u8) -> u64 {
    s_id << 2 | (sf_type as u64 - 1)
}
/// Key of call_forwarding `(s_id, sf_type, start_time)` (start times 0, 8, 16).
pub fn cf_key(s_id: u64, sf_type: u8, start_time: u8) -> u64 {
    sf_key(s_id, sf_type) << 2 | (start_time / 8) as u64
}
/// The 15-digit `sub_nbr` of subscriber `s_id` (its value is the index key).
pub fn sub_nbr(s_id: u64) -> [u8; 15] {
    let mut out = [b'0'; 15];
    let mut n = s_id;
    for d in out.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out
}

/// TATP parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TatpConfig {
    /// P: rows in `subscriber`.
    pub subscribers: u64,
}

impl Default for TatpConfig {
    fn default() -> Self {
        TatpConfig {
            subscribers: 1_000_000,
        }
    }
}

/// Most subscribers (keys pack `s_id` into 60 bits; the spec's largest runs are 100M).
pub const MAX_SUBSCRIBERS: u64 = 1_000_000_000;

impl TatpConfig {
    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if self.subscribers == 0 || self.subscribers > MAX_SUBSCRIBERS {
            return Err(Error::invalid(
                "subscribers",
                format!(
                    "must be between 1 and {MAX_SUBSCRIBERS}, got {}",
                    self.subscribers
                ),
            ));
        }
        Ok(())
    }

    /// The NURand constant A for this population (see the module doc).
    pub fn nurand_a(&self) -> u64 {
        let p = self.subscribers;
        if p > 10_000_000 {
            2_097_151
        } else if p > 1_000_000 {
            1_048_575
        } else {
            let target = (65_536.0 * p as f64 / 1e6).max(1.0);
            let lo = (target.log2().floor() as u32).min(16);
            let (a, b) = (1u64 << lo, 1u64 << (lo + 1).min(16));
            let pow = if target - a as f64 <= b as f64 - target {
                a
            } else {
                b
            };
            pow - 1
        }
    }
}

/// Subscribers loaded per chunk (each chunk has its own seed, so the data do not depend on how many
/// threads load it).
const CHUNK: u64 = 4096;

/// The TATP workload.
pub struct Tatp {
    cfg: TatpConfig,
    a: u64,
    ledger: Arc<Ledger>,
    /// Rows loaded: access_info, special_facility, call_forwarding.
    loaded: [AtomicI64; 3],
}

impl Tatp {
    /// A workload with validated parameters.
    pub fn new(cfg: TatpConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(Tatp {
            a: cfg.nurand_a(),
            cfg,
            ledger: Arc::default(),
            loaded: Default::default(),
        })
    }
    pub fn config(&self) -> &TatpConfig {
        &self.cfg
    }
    /// Committed call-forwarding inserts minus deletes since the last load.
    pub fn net_forwardings(&self) -> i64 {
        self.ledger.total()
    }
    /// `s_id = NURand(A, 1, P)`.
    pub fn s_id(&self, rng: &mut SmallRng) -> u64 {
        let p = self.cfg.subscribers;
        ((rng.gen_range(0..=self.a) | rng.gen_range(1..=p)) % p) + 1
    }

    pub(crate) fn schemas() -> [Schema; 5] {
        let int = |n: &str| Column::new(n, ColumnType::Int);
        let mut sub = vec![Column::new("sub_nbr", ColumnType::Char(15))];
        for prefix in ["bit", "hex", "byte2"] {
            sub.extend((1..=10).map(|i| int(&format!("{prefix}_{i}"))));
        }
        sub.extend([int("msc_location"), int("vlr_location")]);
        let s = |cols| Schema::new(cols).expect("TATP schema");
        [
            s(sub),
            s(vec![
                int("data1"),
                int("data2"),
                Column::new("data3", ColumnType::Char(3)),
                Column::new("data4", ColumnType::Char(5)),
            ]),
            s(vec![
                int("is_active"),
                int("error_cntrl"),
                int("data_a"),
                Column::new("data_b", ColumnType::Char(5)),
            ]),
            s(vec![
                int("end_time"),
                Column::new("numberx", ColumnType::Char(15)),
            ]),
            s(vec![int("s_id")]),
        ]
    }

    /// Loads subscribers `lo..hi` and their rows; returns the rows loaded per table.
    fn load_chunk<M: Default + Send + Sync>(
        db: &Database<M>,
        lo: u64,
        hi: u64,
        seed: u64,
    ) -> Result<[i64; 3], LoadError> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut scratch = Vec::new();
        let mut counts = [0i64; 3];
        let mut letters = [0u8; 15];
        for s_id in lo..hi {
            db.table(SUBSCRIBER).load(s_id, &mut scratch, |r| {
                r.set_str(SUB_NBR, &sub_nbr(s_id))?;
                for i in 0..10 {
                    r.set_int(BIT_1 + i, rng.gen_range(0..=1));
                    r.set_int(HEX_1 + i, rng.gen_range(0..=15));
                    r.set_int(BYTE2_1 + i, rng.gen_range(0..=255));
                }
                r.set_int(MSC_LOCATION, rng.gen_range(1..=u32::MAX as i64));
                r.set_int(VLR_LOCATION, rng.gen_range(1..=u32::MAX as i64));
                Ok(())
            })?;
            let nbr = sub_nbr(s_id);
            db.table(SUB_NBR_INDEX)
                .load(nbr_value(&nbr), &mut scratch, |r| {
                    r.set_int(S_ID, s_id as i64);
                    Ok(())
                })?;
            for ai_type in types(&mut rng) {
                db.table(ACCESS_INFO)
                    .load(ai_key(s_id, ai_type), &mut scratch, |r| {
                        r.set_int(DATA1, rng.gen_range(0..=255));
                        r.set_int(DATA2, rng.gen_range(0..=255));
                        r.set_str(DATA3, upper(&mut rng, &mut letters[..3]))?;
                        r.set_str(DATA4, upper(&mut rng, &mut letters[..5]))
                    })?;
                counts[0] += 1;
            }
            for sf_type in types(&mut rng) {
                db.table(SPECIAL_FACILITY)
                    .load(sf_key(s_id, sf_type), &mut scratch, |r| {
                        r.set_int(IS_ACTIVE, (rng.gen_range(0..100) < 85) as i64);
                        r.set_int(ERROR_CNTRL, rng.gen_range(0..=255));
                        r.set_int(DATA_A, rng.gen_range(0..=255));
                        r.set_str(DATA_B, upper(&mut rng, &mut letters[..5]))
                    })?;
                counts[1] += 1;
                let n = rng.gen_range(0..=3);
                let mut starts = [0u8, 8, 16];
                for i in 0..n {
                    let j = rng.gen_range(i..3);
                    starts.swap(i, j);
                    let start = starts[i];
                    db.table(CALL_FORWARDING).load(
                        cf_key(s_id, sf_type, start),
                        &mut scratch,
                        |r| {
                            r.set_int(END_TIME, start as i64 + rng.gen_range(1..=8));
                            r.set_str(NUMBERX, digits(&mut rng, &mut letters))
                        },
                    )?;
                    counts[2] += 1;
                }
            }
        }
        Ok(counts)
    }
}

/// The value of a 15-digit `sub_nbr` (the index key).
pub fn nbr_value(nbr: &[u8; 15]) -> u64 {
    nbr.iter().fold(0, |n, d| n * 10 + (d - b'0') as u64)
}

/// 1 to 4 distinct types from 1..=4, in random order.
fn types(rng: &mut SmallRng) -> impl Iterator<Item = u8> {
    let n = rng.gen_range(1..=4);
    let mut t = [1u8, 2, 3, 4];
    for i in 0..n {
        let j = rng.gen_range(i..4);
        t.swap(i, j);
    }
    t.into_iter().take(n)
}

fn upper<'a>(rng: &mut SmallRng, buf: &'a mut [u8]) -> &'a [u8] {
    for b in buf.iter_mut() {
        *b = rng.gen_range(b'A'..=b'Z');
    }
    buf
}

/// A random 15-digit number string.
pub fn digits<'a>(rng: &mut SmallRng, buf: &'a mut [u8; 15]) -> &'a [u8] {
    for b in buf.iter_mut() {
        *b = rng.gen_range(b'0'..=b'9');
    }
    buf
}

/// Per-thread generator state.
pub struct TatpGen {
    rng: SmallRng,
    thread: u32,
}

impl Workload for Tatp {
    type Program = TatpTxn;
    type Gen = TatpGen;

    fn name(&self) -> &'static str {
        "tatp"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }

    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let p = self.cfg.subscribers as usize;
        let names = [
            "subscriber",
            "access_info",
            "special_facility",
            "call_forwarding",
            "sub_nbr_index",
        ];
        let capacity = [p, p * 5 / 2, p * 5 / 2, p * 15 / 4, p];
        for (i, schema) in Self::schemas().into_iter().enumerate() {
            let mut spec = TableSpec::new(names[i], schema).capacity(capacity[i]);
            if i as TableId == CALL_FORWARDING {
                // A structure stripe per subscriber: a GetNewDestination scan covers one stripe.
                spec = spec.ordered(4);
            }
            let t = db.create_table(spec)?;
            debug_assert_eq!(t, i as TableId);
        }
        let db = &*db;
        let chunks = self.cfg.subscribers.div_ceil(CHUNK);
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8) as u64;
        let totals = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads.min(chunks))
                .map(|t| {
                    s.spawn(move || -> Result<[i64; 3], LoadError> {
                        let mut sum = [0i64; 3];
                        for c in (t..chunks).step_by(threads as usize) {
                            let lo = 1 + c * CHUNK;
                            let hi = (lo + CHUNK).min(self.cfg.subscribers + 1);
                            let n = Self::load_chunk(db, lo, hi, 0x7A7B ^ c)?;
                            for i in 0..3 {
                                sum[i] += n[i];
                            }
                        }
                        Ok(sum)
                    })
                })
                .collect();
            let mut sum = [0i64; 3];
            for h in handles {
                let n = h.join().expect("loader thread panicked")?;
                for i in 0..3 {
                    sum[i] += n[i];
                }
            }
            Ok::<_, LoadError>(sum)
        })?;
        for (l, n) in self.loaded.iter().zip(totals) {
            l.store(n, Ordering::Relaxed);
        }
        self.ledger.reset();
        Ok(())
    }

    fn generator(&self, thread: u32, seed: u64) -> TatpGen {
        let s = seed ^ (thread as u64 + 1).wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        TatpGen {
            rng: SmallRng::seed_from_u64(s),
            thread,
        }
    }

    fn program(&self) -> TatpTxn {
        TatpTxn::new(Entry::new(self.ledger.clone()))
    }

    fn next(&self, g: &mut TatpGen, p: &mut TatpTxn) {
        let rng = &mut g.rng;
        let roll = rng.gen_range(0..100);
        let kind = Kind::ALL
            .iter()
            .scan(0, |acc, k| {
                *acc += k.percent();
                Some((*acc, *k))
            })
            .find(|(acc, _)| roll < *acc)
            .map_or(Kind::GetSubscriberData, |(_, k)| k);
        let s_id = self.s_id(rng);
        p.settle(g.thread);
        p.kind = kind;
        p.s_id = s_id;
        p.sub_nbr = nbr_value(&sub_nbr(s_id)); // the transaction looks s_id up by it
        p.sf_type = rng.gen_range(1..=4);
        p.ai_type = rng.gen_range(1..=4);
        p.start_time = [0, 8, 16][rng.gen_range(0..3)];
        p.end_time = match kind {
            Kind::InsertCallForwarding => p.start_time as i64 + rng.gen_range(1..=8),
            _ => rng.gen_range(1..=24),
        };
        p.bit = rng.gen_range(0..=1);
        p.data_a = rng.gen_range(0..=255);
        p.vlr_location = rng.gen_range(1..=u32::MAX as i64);
        digits(rng, &mut p.numberx);
    }

    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let mut buf = Vec::new();
        let p = self.cfg.subscribers;
        for s_id in 1..=p {
            let nbr = inspect::with_row(db, SUBSCRIBER, s_id, &mut buf, |r| {
                r.str(SUB_NBR) == sub_nbr(s_id)
            });
            if nbr != Some(true) {
                return Err(format!("subscriber {s_id} missing or with a wrong sub_nbr").into());
            }
            let key = nbr_value(&sub_nbr(s_id));
            if inspect::int(db, SUB_NBR_INDEX, key, S_ID, &mut buf) != Some(s_id as i64) {
                return Err(format!("sub_nbr index entry of subscriber {s_id} is wrong").into());
            }
        }
        let ai = db.table(ACCESS_INFO).present_keys();
        let sf = db.table(SPECIAL_FACILITY).present_keys();
        let cf = db.table(CALL_FORWARDING).present_keys();
        for (name, keys, i) in [("access_info", &ai, 0), ("special_facility", &sf, 1)] {
            if keys.len() as i64 != self.loaded[i].load(Ordering::Relaxed) {
                return Err(format!(
                    "{name} has {} rows, {} loaded (no transaction inserts or deletes any)",
                    keys.len(),
                    self.loaded[i].load(Ordering::Relaxed)
                )
                .into());
            }
            let mut per_sub = vec![0u8; p as usize + 1];
            for k in keys.iter() {
                let s = (k >> 2) as usize;
                if s == 0 || s > p as usize {
                    return Err(format!("{name} row {k} of no subscriber").into());
                }
                per_sub[s] += 1;
            }
            if let Some(s) = (1..=p as usize).find(|&s| per_sub[s] == 0) {
                return Err(format!("subscriber {s} has no {name} row").into());
            }
        }
        for &k in &cf {
            let facility = k >> 2;
            let start = (k & 3) as i64 * 8;
            if k & 3 == 3 || sf.binary_search(&facility).is_err() {
                return Err(format!(
                    "call_forwarding row {k} (s_id {}, sf_type {}, start {start}) has no special_facility",
                    facility >> 2,
                    (facility & 3) + 1
                ).into());
            }
            let end = inspect::int(db, CALL_FORWARDING, k, END_TIME, &mut buf).unwrap_or(-1);
            if !(start + 1..=start + 8).contains(&end) {
                return Err(format!(
                    "call_forwarding row {k}: end_time {end} not 1-8 hours after start {start}"
                )
                .into());
            }
        }
        let expected = self.loaded[2].load(Ordering::Relaxed) + self.ledger.total();
        if cf.len() as i64 != expected {
            return Err(format!(
                "call_forwarding has {} rows, but {} loaded + {} net committed inserts = {expected}",
                cf.len(),
                self.loaded[2].load(Ordering::Relaxed),
                self.ledger.total()
            ).into());
        }
        Ok(())
    }
}
