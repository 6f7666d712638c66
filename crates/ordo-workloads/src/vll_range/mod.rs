//! The VLL paper's range micro-benchmark (Ren, Thomson, Abadi 2015, §3.4.2, Fig. 15: "VLLR versus
//! basic VLL").
//!
//! Keys are `key_bits`-bit bitstrings (the paper: 16), one record each. Every transaction updates
//! one **range** of records whose two ends share their first `shared_prefix` bits (the paper varies
//! this "longest common prefix of the bitstring range from 16 to 7"): VLLR locks the range as a few
//! prefixes, basic VLL one record at a time, so the shorter the shared prefix — the wider the
//! range — the more VLL pays.
//!
//! * **The range.** The `2^(key_bits − shared_prefix)` keys that share one random prefix form a
//!   block; the range is a run of `s` consecutive keys inside it, with `s` uniform in `1..=block`
//!   and its start uniform among the places it fits. The paper: "since the average range is half of
//!   the total possible range size, the average size range for a shared prefix of 11 bits is 16
//!   records", i.e. 1 record at 16 bits and 256 at 7; here `(block + 1) / 2`, the same. (Its ends
//!   share *at least* `shared_prefix` bits, exactly that many when the range crosses the block's
//!   middle.)
//! * **What a transaction does.** Declares the range as one write access (a range lock for VLLR,
//!   one exclusive point lock per record for VLL) and read-modify-writes every record in it: each
//!   gets +1 except the range's first, which gets −(s − 1). Every transaction thus leaves the sum of
//!   the values unchanged (0, [`Workload::check`]); a lost or torn update changes it.
//! * **Short** transactions do only that; **long** ones (`long`) add the micro-benchmark's fixed CPU
//!   work per record ([`crate::vll_micro::long_work`]), as Fig. 15b.
//!
//! The paper's VLLR locks each range as the one prefix its ends share (over-locking up to the whole
//! block, Fig. 14's setup); Ordo's `vllr` locks an exact cover rounded out to 16-key blocks
//! (`ordo::protocols::vll::prefix`): fewer false conflicts, a few more counters.

pub mod options;

use crate::vll_micro::{load_records, long_work, sum_of_values, RECORDS, VALUE};
use crate::Error;
use ordo::harness::{Violation, Workload};
use ordo::storage::{ColumnSet, Database, LoadError};
use ordo::txn::{Access, AccessKind, Program, Target, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::hint::black_box;

/// Widest keys accepted (2^24 records, 128 MiB of rows and more: a benchmark, not a stress test).
pub const MAX_KEY_BITS: u8 = 24;

/// Range micro-benchmark parameters (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VllRangeConfig {
    /// Key width in bits: `2^key_bits` records.
    pub key_bits: u8,
    /// Bits the two ends of every range share, in `0..=key_bits` (the paper: 16 down to 7).
    pub shared_prefix: u8,
    /// Long transactions (extra CPU work per record).
    pub long: bool,
}

impl Default for VllRangeConfig {
    fn default() -> Self {
        VllRangeConfig {
            key_bits: 16,
            shared_prefix: 11,
            long: false,
        }
    }
}

impl VllRangeConfig {
    /// Records in the table.
    pub fn records(&self) -> u64 {
        1 << self.key_bits
    }
    /// Keys per block (keys that share one `shared_prefix`-bit prefix): the widest range.
    pub fn block(&self) -> u64 {
        1 << (self.key_bits - self.shared_prefix)
    }
    /// Checks the parameters; the error is one line for the user.
    pub fn validate(&self) -> crate::Result<()> {
        if !(1..=MAX_KEY_BITS).contains(&self.key_bits) {
            return Err(Error::invalid(
                "key-bits",
                format!("must be in [1, {MAX_KEY_BITS}], got {}", self.key_bits),
            ));
        }
        if self.shared_prefix > self.key_bits {
            return Err(Error::invalid(
                "shared-prefix",
                format!(
                    "must be in [0, {}] (the key width, --key-bits), got {}",
                    self.key_bits, self.shared_prefix
                ),
            ));
        }
        Ok(())
    }
}

/// The range micro-benchmark.
pub struct VllRange {
    cfg: VllRangeConfig,
}

impl VllRange {
    pub fn new(cfg: VllRangeConfig) -> crate::Result<Self> {
        cfg.validate()?;
        Ok(VllRange { cfg })
    }
    pub fn config(&self) -> &VllRangeConfig {
        &self.cfg
    }
}

/// One transaction: read-modify-write every record of `lo..=hi`.
#[derive(Clone, Debug, Default)]
pub struct RangeTxn {
    pub lo: u64,
    pub hi: u64,
    long: bool,
}

impl Program for RangeTxn {
    fn name(&self) -> &'static str {
        "range"
    }
    fn pieces(&self) -> usize {
        1
    }
    fn declare(&self, _piece: usize, out: &mut Vec<Access>) {
        let v = ColumnSet::one(VALUE);
        out.push(Access {
            table: RECORDS,
            target: Target::Range {
                lo: self.lo,
                hi: self.hi,
            },
            read: v,
            write: v,
            kind: AccessKind::Update,
        });
    }
    fn depends_on(&self, _piece: usize, _out: &mut Vec<usize>) {}
    fn run_piece<T: Tx>(&mut self, _piece: usize, tx: &mut T) -> TxResult<()> {
        let (long, first) = (self.long, self.lo);
        let delta_first = -((self.hi - self.lo) as i64);
        for key in self.lo..=self.hi {
            tx.update(RECORDS, key, ColumnSet::one(VALUE), |r| {
                let v = r.int(VALUE);
                if long {
                    black_box(long_work(v as u64));
                }
                r.set_int(VALUE, v + if key == first { delta_first } else { 1 });
            })?;
        }
        Ok(())
    }
}

/// Per-thread generator state.
pub struct RangeGen {
    rng: SmallRng,
}

impl Workload for VllRange {
    type Program = RangeTxn;
    type Gen = RangeGen;

    fn name(&self) -> &'static str {
        "vll-range"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).expect("serializable config")
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        load_records(db, self.cfg.records())
    }
    fn generator(&self, thread: u32, seed: u64) -> RangeGen {
        RangeGen {
            rng: SmallRng::seed_from_u64(
                seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        }
    }
    fn program(&self) -> RangeTxn {
        RangeTxn {
            long: self.cfg.long,
            ..RangeTxn::default()
        }
    }
    fn next(&self, g: &mut RangeGen, p: &mut RangeTxn) {
        let block = self.cfg.block();
        let base = g.rng.gen_range(0..self.cfg.records() / block) * block;
        let size = g.rng.gen_range(1..=block);
        p.lo = base + g.rng.gen_range(0..=block - size);
        p.hi = p.lo + size - 1;
    }
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let sum = sum_of_values(db, self.cfg.records())?;
        if sum != 0 {
            return Err(
                format!("sum of values is {sum}, not 0: a range update was lost or torn").into(),
            );
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

    fn range(key_bits: u8, shared_prefix: u8) -> VllRange {
        VllRange::new(VllRangeConfig {
            key_bits,
            shared_prefix,
            long: false,
        })
        .unwrap()
    }

    #[test]
    fn validation_rejects_bad_parameters() {
        assert!(VllRangeConfig::default().validate().is_ok());
        for (key_bits, shared_prefix) in [(0, 0), (25, 7), (16, 17), (8, 9)] {
            let c = VllRangeConfig {
                key_bits,
                shared_prefix,
                long: false,
            };
            assert!(c.validate().is_err(), "{c:?}");
        }
        for (key_bits, shared_prefix) in [(1, 0), (16, 0), (16, 16), (24, 7)] {
            let c = VllRangeConfig {
                key_bits,
                shared_prefix,
                long: false,
            };
            assert!(c.validate().is_ok(), "{c:?}");
        }
    }

    /// Ranges stay in one block, cover every size from 1 to the block, and average half a block
    /// (the paper's 1 record at 16 shared bits, 16 at 11, 256 at 7).
    #[test]
    fn ranges_share_the_prefix_and_average_half_a_block() {
        for (shared, mean) in [(16u8, 1.0), (11, 16.5), (7, 256.5)] {
            let w = range(16, shared);
            let mut g = w.generator(0, 1);
            let mut p = w.program();
            let (n, mut total, mut sizes) = (20_000u64, 0u64, std::collections::BTreeSet::new());
            for _ in 0..n {
                w.next(&mut g, &mut p);
                assert!(p.lo <= p.hi && p.hi < 1 << 16, "{p:?}");
                assert_eq!(p.lo >> (16 - shared), p.hi >> (16 - shared), "{p:?}");
                let size = p.hi - p.lo + 1;
                total += size;
                sizes.insert(size);
            }
            let avg = total as f64 / n as f64;
            assert!(
                (avg - mean).abs() <= mean * 0.05,
                "shared {shared}: mean {avg}, want {mean}"
            );
            if shared >= 11 {
                assert_eq!(sizes.len() as u64, w.config().block(), "every size drawn");
            }
        }
    }

    /// A transaction updates exactly its range, keeps the sum at 0, and declares one write range.
    #[test]
    fn a_transaction_updates_its_range_and_keeps_the_sum() {
        let w = range(8, 4);
        let mut db = Database::new();
        w.load(&mut db).unwrap();
        let p = NoCC::open(db, &Default::default());
        let mut worker = p.worker(0, false);
        let mut txn = RangeTxn {
            lo: 3,
            hi: 6,
            long: false,
        };
        let mut declared = Vec::new();
        txn.declare(0, &mut declared);
        assert_eq!(
            declared[0].target,
            Target::Range { lo: 3, hi: 6 },
            "one range"
        );
        assert!(declared[0].is_write());
        let v = run_checked(&mut txn, p.begin(&mut worker)).unwrap();
        assert!(v.is_empty(), "within its declarations: {v:#?}");
        let values: Vec<i64> = {
            let mut tx = p.begin(&mut worker);
            let v = (0..16)
                .map(|k| {
                    tx.get(RECORDS, k, ColumnSet::one(VALUE))
                        .unwrap()
                        .unwrap()
                        .int(VALUE)
                })
                .collect();
            tx.commit().unwrap();
            v
        };
        let mut want = vec![0i64; 16];
        want[3] = -3;
        want[4..=6].fill(1);
        assert_eq!(values, want);
        assert!(w.check(p.db()).is_ok());
        // A torn one (its first record's share lost) leaves the sum off 0, and the check says so.
        let mut tx = p.begin(&mut worker);
        tx.update(RECORDS, 9, ColumnSet::one(VALUE), |r| r.set_int(VALUE, 1))
            .unwrap();
        tx.commit().unwrap();
        assert!(w.check(p.db()).unwrap_err().0.contains("not 0"));
    }

    #[test]
    fn runs_within_its_declarations_and_keeps_the_invariant() {
        for long in [false, true] {
            let w = VllRange::new(VllRangeConfig {
                key_bits: 10,
                shared_prefix: 4,
                long,
            })
            .unwrap();
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
