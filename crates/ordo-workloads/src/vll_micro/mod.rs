//! The VLL paper's micro-benchmark (Ren, Thomson, Abadi 2015, §3.1.2).
//!
//! Each transaction reads and updates 10 records: **1 hot and 9 cold**. The hot records are the first
//! `1 / CI` keys of a partition, where CI is the **contention index** (CI = 0.001 → 1,000 hot records,
//! CI = 1 → one hot record every transaction updates); the cold ones are the rest, drawn uniformly.
//! Every access is a read-modify-write of the record's value (+1), declared up front, one piece each,
//! in random order.
//!
//! * **Hot records per transaction** (`hot_accesses`, default 1). With one hot record a transaction
//!   can wait for another only through that record, so 2PL (almost) never deadlocks — Fig. 8a/c.
//!   The paper's Fig. 8b/d "increase the number of hot records per transaction" (it does not say to
//!   how many) so that two transactions can meet on two hot records in opposite orders and deadlock
//!   under 2PL, while VLL, which requests every lock at once, cannot. `hot_accesses` = H draws H
//!   distinct hot records and 10 − H cold ones; the accesses are shuffled, so the hot ones come in
//!   any order.
//!
//! * **Short** transactions do only that. **Long** ones (`long`) add fixed CPU work per record —
//!   [`LONG_WORK_ROUNDS`] rounds of an integer hash on the value read, about 3× the short transaction
//!   as in the paper ("like TPC-C New Order"); the work runs while the record's lock is held.
//! * **Partitions** (for partitioned and distributed protocols): key `k` lives in partition
//!   `k % partitions`, and each partition has its own hot set (its first `1 / CI` local keys). A
//!   single-partition transaction draws all 10 records from one home partition; a **multi-partition**
//!   one (`multi_partition_pct` percent of them) draws 1 hot and 4 cold records at its home
//!   partition and 1 hot and 4 cold at one other partition, drawn at random (H hot and 5 − H cold
//!   at each, with `hot_accesses` = H). A worker's transactions are all homed at **its** partition,
//!   worker `t`'s at `t % partitions`: in the paper's partition-per-core deployment (Figs. 9–10)
//!   each partition's site issues its own transactions, so with as many workers as partitions a
//!   single-partition transaction runs where its data is and meets no other thread. (Homes drawn
//!   at random, as before 2026-11-27, sent most transactions to another worker's partition:
//!   `hstore`, which should match no locking there, ran at 0.75× `nocc` on 2 cores and 0.5× on 16.)
//! * **Remote reads** (`remote_wait_us`): in the paper's partition-per-core deployment (Fig. 9) a
//!   multi-partition transaction reads its records at the other partition by message, and waits for
//!   the reply holding whatever it holds. Here partitions share memory, so that wait is simulated: a
//!   multi-partition transaction sleeps `remote_wait_us` microseconds (at least; the OS adds its timer
//!   slack, tens of µs) once per attempt, just before its first access at the other partition. The
//!   sleep happens while the transaction runs under its protocol (holding locks, partitions, …), and
//!   leaves the core free for other threads, as a wait for the network would. A protocol whose
//!   thread can work on other transactions meanwhile (`vll-partitioned` and `vll-partitioned-sca`:
//!   the paper's single-threaded VLL, whose Waiting state is for exactly this; `hstore-lockmgr`, its
//!   per-core lock manager) takes the wait over instead
//!   ([`Program::take_remote_wait`]): it sets the transaction aside, with its locks, for
//!   `remote_wait_us`, and the attempt that follows does not sleep.
//!
//! Invariant: every committed transaction adds exactly 10 to the sum of the values, so the sum is a
//! multiple of 10 ([`Workload::check`]).

pub mod options;

use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{
    Column, ColumnSet, ColumnType, Database, LoadError, Schema, TableId, TableSpec,
};
use ordo::txn::{Access, Program, RemoteWait, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::hint::black_box;

/// The one table.
pub const RECORDS: TableId = 0;
/// Its value column.
pub const VALUE: usize = 0;
/// Records per transaction.
pub const PER_TXN: usize = 10;
/// Rounds of hashing per record in a long transaction.
pub const LONG_WORK_ROUNDS: u32 = 150;

/// Micro-benchmark parameters (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VllMicroConfig {
    /// Records in total (across partitions).
    pub records: u64,
    /// Contention index, in (0, 1]: 1 / hot records per partition.
    pub ci: f64,
    /// Long transactions (extra CPU work per record).
    pub long: bool,
    pub partitions: u32,
    /// Percent of transactions that touch two partitions (`multi_partition` in the JSON
    /// parameters, the name of the `--multi-partition` option that sweeps it).
    #[serde(rename = "multi_partition")]
    pub multi_partition_pct: f64,
    /// Simulated remote-read round trip of a multi-partition transaction, in µs (0: none).
    pub remote_wait_us: f64,
    /// Hot records per transaction (per partition touched, for a multi-partition one): 1 is the
    /// paper's Fig. 8a/c, more its deadlock-prone Fig. 8b/d.
    pub hot_accesses: u32,
}

impl Default for VllMicroConfig {
    fn default() -> Self {
        VllMicroConfig {
            records: 1_000_000,
            ci: 0.0001,
            long: false,
            partitions: 1,
            multi_partition_pct: 0.0,
            remote_wait_us: 0.0,
            hot_accesses: 1,
        }
    }
}

/// Longest simulated remote-read round trip accepted (one second).
pub const MAX_REMOTE_WAIT_US: f64 = 1_000_000.0;

impl VllMicroConfig {
    /// Hot records per partition.
    pub fn hot(&self) -> u64 {
        (1.0 / self.ci).round().max(1.0) as u64
    }
    /// Records per partition.
    pub fn per_partition(&self) -> u64 {
        self.records / self.partitions.max(1) as u64
    }

    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if !(self.ci > 0.0 && self.ci <= 1.0) {
            return Err(Error::invalid(
                "ci",
                format!("must be in (0, 1], got {}", self.ci),
            ));
        }
        if self.partitions == 0 {
            return Err(Error::invalid("partitions", "must be at least 1"));
        }
        if !(0.0..=100.0).contains(&self.multi_partition_pct) {
            return Err(Error::invalid(
                "multi-partition",
                format!(
                    "must be a percentage in [0, 100], got {}",
                    self.multi_partition_pct
                ),
            ));
        }
        if self.multi_partition_pct > 0.0 && self.partitions < 2 {
            return Err(Error::invalid(
                "multi-partition",
                "needs at least 2 --partitions",
            ));
        }
        if !(0.0..=MAX_REMOTE_WAIT_US).contains(&self.remote_wait_us) {
            return Err(Error::invalid(
                "remote-wait",
                format!(
                    "must be a number of microseconds in [0, {MAX_REMOTE_WAIT_US}], got {}",
                    self.remote_wait_us
                ),
            ));
        }
        if self.remote_wait_us > 0.0 && self.partitions < 2 {
            return Err(Error::invalid(
                "remote-wait",
                "needs at least 2 --partitions",
            ));
        }
        // Each partition a transaction touches gets `hot_accesses` hot records among its share of
        // the 10: all of them, or half for a multi-partition transaction.
        let share = if self.multi_partition_pct > 0.0 {
            PER_TXN / 2
        } else {
            PER_TXN
        };
        if self.hot_accesses == 0 || self.hot_accesses as usize > share {
            return Err(Error::invalid(
                "hot-accesses",
                format!(
                    "must be in [1, {share}]{}, got {}",
                    if share < PER_TXN {
                        " with multi-partition transactions (half of the 10 records at each partition)"
                    } else {
                        ""
                    },
                    self.hot_accesses
                ),
            ));
        }
        if self.hot() < self.hot_accesses as u64 {
            return Err(Error::invalid(
                "hot-accesses",
                format!(
                    "{} needs at least {} hot records per partition, but --ci {} gives {}",
                    self.hot_accesses,
                    self.hot_accesses,
                    self.ci,
                    self.hot()
                ),
            ));
        }
        // Saturating: a tiny CI asks for more hot records than a u64 holds.
        let need = self.hot().saturating_add(PER_TXN as u64);
        if self.per_partition() < need {
            return Err(Error::invalid(
                "records",format!(
                "({}) too small: each of the {} partitions needs {} hot and at least {} cold records",
                self.records,
                self.partitions,
                self.hot(),
                PER_TXN
            )));
        }
        Ok(())
    }
}

/// The micro-benchmark.
pub struct VllMicro {
    cfg: VllMicroConfig,
    remote_wait: std::time::Duration,
}

impl VllMicro {
    pub fn new(cfg: VllMicroConfig) -> crate::Result<Self> {
        cfg.validate()?;
        let remote_wait = std::time::Duration::from_secs_f64(cfg.remote_wait_us / 1e6);
        Ok(VllMicro { cfg, remote_wait })
    }
    pub fn config(&self) -> &VllMicroConfig {
        &self.cfg
    }
    /// The partition that holds `key`.
    pub fn partition_of(&self, key: u64) -> u32 {
        (key % self.cfg.partitions as u64) as u32
    }
    /// The key of local record `i` of partition `p`.
    fn key(&self, p: u32, i: u64) -> u64 {
        i * self.cfg.partitions as u64 + p as u64
    }
    /// Whether `key` is one of its partition's hot records.
    pub fn is_hot(&self, key: u64) -> bool {
        key / (self.cfg.partitions as u64) < self.cfg.hot()
    }
}

/// A micro-benchmark transaction: read-modify-write 10 records.
#[derive(Clone, Debug, Default)]
pub struct MicroTxn {
    pub keys: Vec<u64>,
    /// Partitions touched (home first).
    pub partitions: Vec<u32>,
    long: bool,
    /// The piece before which the simulated remote-read round trip happens (multi-partition
    /// transactions with a remote wait: the first piece at the other partition).
    pub remote_piece: Option<usize>,
    /// Its round trip (set exactly when `remote_piece` is).
    remote: RemoteWait,
}

/// The long transactions' CPU work on one value.
#[inline(never)]
pub fn long_work(mut x: u64) -> u64 {
    for _ in 0..LONG_WORK_ROUNDS {
        x = (x ^ (x >> 31))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(17);
    }
    x
}

impl Program for MicroTxn {
    fn name(&self) -> &'static str {
        if self.partitions.len() > 1 {
            "multi-partition"
        } else {
            "single-partition"
        }
    }
    fn pieces(&self) -> usize {
        self.keys.len()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let v = ColumnSet::one(VALUE);
        out.push(Access::update(RECORDS, self.keys[piece], v, v));
    }
    fn depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        if self.remote_piece == Some(piece) {
            // The remote-read round trip (see the module docs): once per attempt, since every
            // attempt runs the pieces from the first — unless the protocol already set the
            // transaction aside for it.
            self.remote.pay();
        }
        let long = self.long;
        tx.update(RECORDS, self.keys[piece], ColumnSet::one(VALUE), |r| {
            let v = r.int(VALUE);
            if long {
                black_box(long_work(v as u64));
            }
            r.set_int(VALUE, v + 1);
        })?;
        Ok(())
    }
    fn take_remote_wait(&mut self) -> Option<std::time::Duration> {
        self.remote.take()
    }
}

/// Per-thread generator state.
pub struct MicroGen {
    rng: SmallRng,
    /// The partition this worker's transactions are homed at (see the module docs).
    home: u32,
}

impl VllMicro {
    /// Draws `hot` hot and `cold` cold distinct records of partition `p` into `keys`.
    fn draw(&self, rng: &mut SmallRng, p: u32, hot: usize, cold: usize, keys: &mut Vec<u64>) {
        let (h, n) = (self.cfg.hot(), self.cfg.per_partition());
        for (count, lo, hi) in [(hot, 0, h), (cold, h, n)] {
            let start = keys.len();
            while keys.len() < start + count {
                let k = self.key(p, rng.gen_range(lo..hi));
                if !keys[start..].contains(&k) {
                    keys.push(k);
                }
            }
        }
    }
}

/// Creates the one table, [`RECORDS`], with keys `0..n`, every value 0 (this micro-benchmark's and
/// [`crate::vll_range`]'s).
pub(crate) fn load_records<M: Default + Send + Sync>(
    db: &mut Database<M>,
    n: u64,
) -> Result<(), LoadError> {
    let schema = Schema::new(vec![Column::new("value", ColumnType::Int)]).expect("schema");
    let t = db.create_table(TableSpec::new("records", schema).capacity(n as usize))?;
    debug_assert_eq!(t, RECORDS);
    let table = db.table(t);
    let mut scratch = Vec::new();
    for key in 0..n {
        table.load(key, &mut scratch, |r| {
            r.set_int(VALUE, 0);
            Ok(())
        })?;
    }
    Ok(())
}

/// The sum of the values of records `0..n` (wrapping), or which one is missing.
pub(crate) fn sum_of_values<M: Default + Send + Sync>(
    db: &Database<M>,
    n: u64,
) -> Result<i64, Violation> {
    let t = db.table(RECORDS);
    let mut buf = vec![0u64; t.schema().row_words()];
    let mut sum = 0i64;
    for k in 0..n {
        let rid = t.lookup(k).ok_or(format!("record {k} missing"))?;
        t.read_into(rid, ColumnSet::one(VALUE), &mut buf);
        sum = sum.wrapping_add(buf[0] as i64);
    }
    Ok(sum)
}

impl Workload for VllMicro {
    type Program = MicroTxn;
    type Gen = MicroGen;

    fn name(&self) -> &'static str {
        "vll-micro"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        load_records(db, self.cfg.per_partition() * self.cfg.partitions as u64)
    }
    fn generator(&self, thread: u32, seed: u64) -> MicroGen {
        MicroGen {
            rng: SmallRng::seed_from_u64(
                seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            home: thread % self.cfg.partitions.max(1),
        }
    }
    fn program(&self) -> MicroTxn {
        MicroTxn {
            keys: Vec::with_capacity(PER_TXN),
            partitions: Vec::with_capacity(2),
            long: self.cfg.long,
            remote_piece: None,
            remote: RemoteWait::default(),
        }
    }
    fn next(&self, g: &mut MicroGen, p: &mut MicroTxn) {
        let parts = self.cfg.partitions;
        p.keys.clear();
        p.partitions.clear();
        let home = g.home;
        p.partitions.push(home);
        let multi = parts > 1 && g.rng.gen::<f64>() * 100.0 < self.cfg.multi_partition_pct;
        let hot = self.cfg.hot_accesses as usize;
        if multi {
            let other = (home + g.rng.gen_range(1..parts)) % parts;
            p.partitions.push(other);
            self.draw(&mut g.rng, home, hot, PER_TXN / 2 - hot, &mut p.keys);
            self.draw(
                &mut g.rng,
                other,
                hot,
                PER_TXN - PER_TXN / 2 - hot,
                &mut p.keys,
            );
        } else {
            self.draw(&mut g.rng, home, hot, PER_TXN - hot, &mut p.keys);
        }
        p.keys.shuffle(&mut g.rng);
        p.remote_piece = None;
        if multi && !self.remote_wait.is_zero() {
            let home = p.partitions[0];
            p.remote_piece = p.keys.iter().position(|&k| self.partition_of(k) != home);
        }
        p.remote = RemoteWait::new(p.remote_piece.map(|_| self.remote_wait));
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let sum = sum_of_values(db, self.cfg.per_partition() * self.cfg.partitions as u64)?;
        if sum % PER_TXN as i64 != 0 {
            return Err(format!(
                "sum of values {sum} is not a multiple of {PER_TXN}: a transaction was torn"
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ordo::protocols::nocc::NoCC;
    use ordo::protocols::Protocol;
    use ordo::txn::declared::run_checked;

    fn micro(cfg: VllMicroConfig) -> VllMicro {
        VllMicro::new(cfg).unwrap()
    }

    #[test]
    fn validation_rejects_bad_parameters() {
        let ok = VllMicroConfig {
            records: 10_000,
            ci: 0.01,
            ..Default::default()
        };
        assert!(ok.validate().is_ok());
        for good in [
            VllMicroConfig {
                hot_accesses: 10,
                ..ok.clone()
            },
            VllMicroConfig {
                ci: 0.5,
                hot_accesses: 2,
                ..ok.clone()
            },
            VllMicroConfig {
                partitions: 2,
                multi_partition_pct: 10.0,
                hot_accesses: 5,
                ..ok.clone()
            },
        ] {
            assert!(good.validate().is_ok(), "{good:?} should be accepted");
        }
        for bad in [
            VllMicroConfig {
                ci: 0.0,
                ..ok.clone()
            },
            VllMicroConfig {
                ci: -0.5,
                ..ok.clone()
            },
            VllMicroConfig {
                ci: 1.5,
                ..ok.clone()
            },
            VllMicroConfig {
                ci: f64::NAN,
                ..ok.clone()
            },
            VllMicroConfig {
                partitions: 0,
                ..ok.clone()
            },
            VllMicroConfig {
                multi_partition_pct: 10.0,
                ..ok.clone()
            },
            VllMicroConfig {
                partitions: 2,
                multi_partition_pct: 101.0,
                ..ok.clone()
            },
            VllMicroConfig {
                records: 15,
                ci: 0.1,
                ..ok.clone()
            },
            VllMicroConfig {
                records: 10_005,
                ci: 0.0001,
                ..ok.clone()
            },
            // 1 / CI hot records overflow a u64 (the check must not wrap around to pass).
            VllMicroConfig {
                records: 1_000_000,
                ci: 1e-300,
                ..ok.clone()
            },
            VllMicroConfig {
                partitions: 2,
                remote_wait_us: -1.0,
                ..ok.clone()
            },
            VllMicroConfig {
                partitions: 2,
                remote_wait_us: f64::NAN,
                ..ok.clone()
            },
            VllMicroConfig {
                partitions: 2,
                remote_wait_us: MAX_REMOTE_WAIT_US * 2.0,
                ..ok.clone()
            },
            VllMicroConfig {
                remote_wait_us: 50.0,
                ..ok.clone()
            },
            VllMicroConfig {
                hot_accesses: 0,
                ..ok.clone()
            },
            VllMicroConfig {
                hot_accesses: 11,
                ..ok.clone()
            },
            // Half of the 10 records at each partition: at most 5 hot ones.
            VllMicroConfig {
                partitions: 2,
                multi_partition_pct: 10.0,
                hot_accesses: 6,
                ..ok.clone()
            },
            // Two hot records per transaction need two hot records.
            VllMicroConfig {
                ci: 1.0,
                hot_accesses: 2,
                ..ok.clone()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?} should be rejected");
        }
    }

    /// Worker `t`'s transactions are homed at partition `t % partitions` (the paper's site per
    /// partition): its single-partition ones touch only that partition, and its multi-partition
    /// ones start there and reach each other partition.
    #[test]
    fn each_worker_issues_the_transactions_of_its_own_partition() {
        let parts = 4;
        for (multi_pct, threads) in [(0.0, 4), (50.0, 6)] {
            let w = micro(VllMicroConfig {
                records: 40_000,
                ci: 0.01,
                partitions: parts,
                multi_partition_pct: multi_pct,
                ..Default::default()
            });
            for t in 0..threads {
                let (mut g, mut p) = (w.generator(t, 11), w.program());
                let mut others = std::collections::BTreeSet::new();
                for _ in 0..400 {
                    w.next(&mut g, &mut p);
                    assert_eq!(p.partitions[0], t % parts, "worker {t}'s home");
                    others.extend(p.partitions[1..].iter().copied());
                    for &key in &p.keys {
                        assert!(p.partitions.contains(&w.partition_of(key)));
                    }
                }
                let expected: std::collections::BTreeSet<u32> = if multi_pct > 0.0 {
                    (0..parts).filter(|&q| q != t % parts).collect()
                } else {
                    Default::default()
                };
                assert_eq!(others, expected, "worker {t}'s remote partitions");
            }
        }
    }

    #[test]
    fn one_hot_and_nine_cold_per_transaction() {
        for parts in [1, 4] {
            let w = micro(VllMicroConfig {
                records: 40_000,
                ci: 0.01,
                partitions: parts,
                multi_partition_pct: if parts > 1 { 50.0 } else { 0.0 },
                ..Default::default()
            });
            let (mut g, mut p) = (w.generator(0, 1), w.program());
            let mut multi = 0;
            for _ in 0..2_000 {
                w.next(&mut g, &mut p);
                assert_eq!(p.keys.len(), 10);
                let mut k = p.keys.clone();
                k.sort();
                k.dedup();
                assert_eq!(k.len(), 10, "distinct records");
                let hot = p.keys.iter().filter(|&&k| w.is_hot(k)).count();
                assert_eq!(
                    hot,
                    p.partitions.len(),
                    "one hot record per partition touched"
                );
                for &key in &p.keys {
                    assert!(p.partitions.contains(&w.partition_of(key)));
                }
                multi += (p.partitions.len() > 1) as u32;
            }
            if parts > 1 {
                assert!(
                    (800..1200).contains(&multi),
                    "about half multi-partition: {multi}"
                );
            } else {
                assert_eq!(multi, 0);
            }
        }
    }

    #[test]
    fn more_hot_records_per_transaction_come_in_any_order() {
        for (parts, hot) in [(1, 2), (1, 3), (2, 2)] {
            let w = micro(VllMicroConfig {
                records: 40_000,
                ci: 0.1,
                partitions: parts,
                multi_partition_pct: if parts > 1 { 50.0 } else { 0.0 },
                hot_accesses: hot,
                ..Default::default()
            });
            let (mut g, mut p) = (w.generator(0, 3), w.program());
            let mut first_hot_at = [0u32; PER_TXN];
            for _ in 0..3_000 {
                w.next(&mut g, &mut p);
                let mut k = p.keys.clone();
                k.sort();
                k.dedup();
                assert_eq!(k.len(), PER_TXN, "distinct records");
                for &part in &p.partitions {
                    let hot_here = p
                        .keys
                        .iter()
                        .filter(|&&k| w.partition_of(k) == part && w.is_hot(k))
                        .count();
                    assert_eq!(hot_here, hot as usize, "{p:?}");
                }
                first_hot_at[p.keys.iter().position(|&k| w.is_hot(k)).unwrap()] += 1;
            }
            // Shuffled: the first hot access is not always at one place (two transactions can
            // take the same two hot records in opposite orders — Fig. 8b/d's deadlocks).
            assert!(
                first_hot_at.iter().filter(|&&n| n > 0).count() > 3,
                "{first_hot_at:?}"
            );
        }
    }

    #[test]
    fn a_multi_partition_transaction_waits_before_its_first_remote_access() {
        let w = micro(VllMicroConfig {
            records: 40_000,
            ci: 0.01,
            partitions: 4,
            multi_partition_pct: 50.0,
            remote_wait_us: 1_000.0,
            ..Default::default()
        });
        let (mut g, mut p) = (w.generator(0, 5), w.program());
        let mut waits = 0;
        for _ in 0..500 {
            w.next(&mut g, &mut p);
            let home = p.partitions[0];
            let first_remote = p.keys.iter().position(|&k| w.partition_of(k) != home);
            if p.partitions.len() > 1 {
                assert!(first_remote.is_some());
                assert_eq!(p.remote_piece, first_remote, "{p:?}");
                waits += 1;
            } else {
                assert_eq!(p.remote_piece, None, "single-partition: no remote read");
            }
        }
        assert!(waits > 0);
        // No wait configured: never.
        let w0 = micro(VllMicroConfig {
            remote_wait_us: 0.0,
            ..w.config().clone()
        });
        for _ in 0..100 {
            w0.next(&mut g, &mut p);
            assert_eq!(p.remote_piece, None);
        }
    }

    #[test]
    fn every_attempt_of_a_multi_partition_transaction_pays_the_round_trip() {
        // A lower bound only: sleeping guarantees at least the wait.
        let w = micro(VllMicroConfig {
            records: 4_000,
            ci: 0.1,
            partitions: 2,
            multi_partition_pct: 100.0,
            remote_wait_us: 2_000.0,
            ..Default::default()
        });
        let mut db = Database::new();
        w.load(&mut db).unwrap();
        let p = NoCC::open(db, &Default::default());
        let mut worker = p.worker(0, false);
        let (mut g, mut prog) = (w.generator(0, 9), w.program());
        w.next(&mut g, &mut prog);
        let start = std::time::Instant::now();
        for _ in 0..3 {
            // The same transaction run three times, as three attempts would be.
            let v = run_checked(&mut prog, p.begin(&mut worker)).unwrap();
            assert!(v.is_empty(), "{v:#?}");
        }
        assert!(start.elapsed() >= std::time::Duration::from_micros(6_000));
        w.check(p.db()).unwrap();
    }

    #[test]
    fn runs_within_its_declarations_and_keeps_the_invariant() {
        for long in [false, true] {
            let w = micro(VllMicroConfig {
                records: 1_000,
                ci: 0.1,
                long,
                ..Default::default()
            });
            let mut db = Database::new();
            w.load(&mut db).unwrap();
            let p = NoCC::open(db, &Default::default());
            let mut worker = p.worker(0, false);
            let (mut g, mut prog) = (w.generator(0, 3), w.program());
            for _ in 0..100 {
                w.next(&mut g, &mut prog);
                let v = run_checked(&mut prog, p.begin(&mut worker)).unwrap();
                assert!(v.is_empty(), "{v:#?}");
            }
            w.check(p.db()).unwrap();
        }
    }
}
