//! `sc-chopping` and `sc-chopping-ser`: checked contended histories — the kit's one-table mix,
//! and a shop whose purchases chop into three (a contended counter, a read of a column nobody
//! writes, an insert of a fresh key), with later chops that wait on row locks and time out; the
//! chopping learnt at column and table level; interactive transactions beside the worker loop.

use super::{ScChopping, ScChoppingRc, ScChoppingSer, ANALYSIS_KNOB};
use crate::check::AnomalyKind;
use crate::harness::{verify, Verified, VerifyConfig, Violation, Workload};
use crate::protocols::kit::testkit::{contended, interactive_alongside_worker_loop, Mixed};
use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::{Column, ColumnSet, ColumnType, Database, LoadError, Schema, TableSpec};
use crate::txn::{Access, Program, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const ITEMS: u32 = 0;
const LOG: u32 = 1;
/// `items` columns: units sold (contended), the price (never written after the load).
const SOLD: usize = 0;
const PRICE: usize = 1;
/// Items (few: contended).
const N: u64 = 4;

/// `Buy`: piece 0 sells one unit of an item (`sold += 1`), piece 1 reads its price, piece 2 logs
/// the sale under a fresh key. `Audit`: reads every item's units sold.
#[derive(Clone, Debug, Default)]
struct Shop {
    audit: bool,
    item: u64,
    log: u64,
    sold: i64,
    price: i64,
}

impl Program for Shop {
    fn name(&self) -> &'static str {
        if self.audit {
            "Audit"
        } else {
            "Buy"
        }
    }
    fn pieces(&self) -> usize {
        if self.audit {
            1
        } else {
            3
        }
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        match (self.audit, piece) {
            (true, _) => {
                out.extend((0..N).map(|k| Access::read(ITEMS, k, ColumnSet::one(SOLD))));
            }
            (false, 0) => out.push(Access::update(
                ITEMS,
                self.item,
                ColumnSet::one(SOLD),
                ColumnSet::one(SOLD),
            )),
            (false, 1) => out.push(Access::read(ITEMS, self.item, ColumnSet::one(PRICE))),
            (false, _) => out.push(Access::insert(LOG, self.log)),
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if piece == 2 {
            out.extend([0, 1]);
        }
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        match (self.audit, piece) {
            (true, _) => {
                for k in 0..N {
                    tx.get(ITEMS, k, ColumnSet::one(SOLD))?;
                }
            }
            (false, 0) => {
                self.sold = tx
                    .update(ITEMS, self.item, ColumnSet::one(SOLD), |r| {
                        let s = r.int(SOLD) + 1;
                        r.set_int(SOLD, s);
                        s
                    })?
                    .unwrap_or(0);
            }
            (false, 1) => {
                self.price = tx
                    .get(ITEMS, self.item, ColumnSet::one(PRICE))?
                    .map_or(0, |r| r.int(PRICE));
            }
            (false, _) => {
                let (item, sold, price) = (self.item as i64, self.sold, self.price);
                tx.insert(LOG, self.log, |r| {
                    r.set_int(0, item);
                    r.set_int(1, sold * price);
                })?;
            }
        }
        Ok(())
    }
}

struct ShopLoad {
    audits: f64,
}

static NEXT_LOG: AtomicU64 = AtomicU64::new(1);

impl Workload for ShopLoad {
    type Program = Shop;
    type Gen = SmallRng;
    fn name(&self) -> &'static str {
        "shop"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::json!({ "audits": self.audits })
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let cols = |a: &str, b: &str| {
            Schema::new(vec![
                Column::new(a, ColumnType::Int),
                Column::new(b, ColumnType::Int),
            ])
            .expect("a valid schema")
        };
        let items = db
            .create_table(TableSpec::new("items", cols("sold", "price")))
            .expect("a new table");
        db.create_table(
            TableSpec::new("log", cols("item", "amount"))
                .ordered(4)
                .capacity(1 << 16),
        )
        .expect("a new table");
        let mut scratch = Vec::new();
        for k in 0..N {
            db.table(items).load(k, &mut scratch, |r| {
                r.set_int(PRICE, 10 + k as i64);
                Ok(())
            })?;
        }
        Ok(())
    }
    fn generator(&self, thread: u32, seed: u64) -> SmallRng {
        SmallRng::seed_from_u64(seed ^ (thread as u64) << 32)
    }
    fn program(&self) -> Shop {
        Shop::default()
    }
    fn next(&self, g: &mut SmallRng, p: &mut Shop) {
        p.audit = g.gen_bool(self.audits);
        p.item = g.gen_range(0..N);
        p.log = NEXT_LOG.fetch_add(1, Ordering::Relaxed);
    }
    /// Every unit sold is logged once.
    fn check<M: Default + Send + Sync>(&self, db: &Database<M>) -> Result<(), Violation> {
        let items = db.table(ITEMS);
        let mut buf = vec![0u64; items.schema().row_words()];
        let mut sold = 0;
        for k in 0..N {
            items.read_into(items.lookup(k).unwrap(), ColumnSet::ALL, &mut buf);
            sold += crate::storage::RowRef::new(items.schema(), &buf).int(SOLD);
        }
        let log = db.table(LOG);
        let logged = log
            .range(0, u64::MAX)
            .filter(|&(_, r)| log.version(r).load(Ordering::Acquire) & crate::storage::ABSENT == 0)
            .count() as i64;
        if sold != logged {
            return Err(format!("{sold} units sold, {logged} logged").into());
        }
        Ok(())
    }
}

fn config(analysis: &str, timeout_ms: u64) -> ProtocolConfig {
    ProtocolConfig {
        lock_wait_timeout: Duration::from_millis(timeout_ms),
        ..ProtocolConfig::with_threads(4)
    }
    .with_knob(&ANALYSIS_KNOB, analysis)
    .unwrap()
}

fn verify_shop<P: Protocol>(analysis: &str, timeout_ms: u64) -> Verified {
    let cfg = VerifyConfig {
        protocol: config(analysis, timeout_ms),
        txns: 6_000,
        seed: 5,
        prefetch: true,
    };
    verify::run::<P, ShopLoad>(&ShopLoad { audits: 0.2 }, &cfg).unwrap()
}

/// Runs `n` shop transactions on one thread and returns the protocol (to inspect its plans).
fn learnt(analysis: &str) -> ScChoppingSer {
    let w = ShopLoad { audits: 0.3 };
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = ScChoppingSer::open(db, &config(analysis, 250));
    let mut worker = p.worker(0, false);
    let mut g = w.generator(0, 1);
    let mut prog = w.program();
    for _ in 0..100 {
        w.next(&mut g, &mut prog);
        p.execute(&mut worker, &mut prog).unwrap();
    }
    p
}

fn chops_of<L: super::Level>(p: &ScChopping<L>, name: &str) -> Vec<Vec<usize>> {
    p.plans().get(name).expect("learnt").chops.clone()
}

#[test]
fn the_chopping_learnt_splits_what_conflicts_with_nothing() {
    // Column level: the price is read-only, the log insert-only; the counter is contended.
    let p = learnt("column");
    assert_eq!(chops_of(&p, "Buy"), vec![vec![0], vec![1], vec![2]]);
    assert_eq!(chops_of(&p, "Audit"), vec![vec![0]]);
    let c = p.plans().chopping();
    assert_eq!(
        c.of("Buy").unwrap().conflicts,
        vec![
            vec!["Audit".to_string(), "Buy'".to_string()],
            vec![],
            vec![]
        ]
    );
    // Table level: reading the price is reading a table another Buy writes.
    let p = learnt("table");
    assert_eq!(chops_of(&p, "Buy"), vec![vec![0, 1], vec![2]]);
}

/// The kit's contended mix, as `checked_history` runs it, but with a short lock-wait timeout:
/// deadlocks end only in the timeout here, and at the default one the run took minutes.
#[test]
fn sc_chopping_ser_histories_of_the_kits_mix_are_serializable() {
    let cfg = VerifyConfig {
        protocol: ProtocolConfig {
            lock_wait_timeout: Duration::from_millis(20),
            ..ProtocolConfig::with_threads(4)
        },
        txns: 10_000,
        seed: 3,
        prefetch: true,
    };
    let v = verify::run::<ScChoppingSer, Mixed>(&contended(), &cfg).unwrap();
    assert_eq!(v.report.committed, 10_000);
    assert!(v.report.is_serializable(), "{}", v.report);
    assert!(v.report.anomalies.is_empty(), "{}", v.report);
    assert!(v.report.edges > 10_000, "too few dependencies");
}

#[test]
fn sc_chopping_histories_of_the_kits_mix_have_no_dirty_reads_or_writes() {
    let cfg = VerifyConfig {
        protocol: ProtocolConfig {
            lock_wait_timeout: Duration::from_millis(20),
            ..ProtocolConfig::with_threads(4)
        },
        txns: 10_000,
        seed: 4,
        prefetch: true,
    };
    let v = verify::run::<ScChoppingRc, Mixed>(&contended(), &cfg).unwrap();
    assert_eq!(v.report.committed, 10_000);
    for k in [
        AnomalyKind::G0,
        AnomalyKind::G1a,
        AnomalyKind::G1b,
        AnomalyKind::G1c,
    ] {
        assert!(!v.report.has(k), "{k:?}: {}", v.report);
    }
}

/// The shop, chopped (at table level: the sale, then its log entry), at serializable and at read
/// committed; with a lock-wait timeout of a millisecond, chops time out and run again.
#[test]
fn chopped_shop_histories_are_checked_and_keep_every_sale_logged() {
    for timeout in [250, 1] {
        let v = verify_shop::<ScChoppingSer>("table", timeout);
        assert_eq!(v.report.committed, 6_000, "{timeout}");
        assert!(v.report.is_serializable(), "{timeout}: {}", v.report);
        assert!(v.report.anomalies.is_empty(), "{timeout}: {}", v.report);
        assert_eq!(v.invariants, Ok(()), "{timeout}");
        let v = verify_shop::<ScChoppingRc>("table", timeout);
        for k in [
            AnomalyKind::G0,
            AnomalyKind::G1a,
            AnomalyKind::G1b,
            AnomalyKind::G1c,
        ] {
            assert!(!v.report.has(k), "{timeout} {k:?}: {}", v.report);
        }
        assert_eq!(v.invariants, Ok(()), "{timeout}");
    }
}

/// At column level the shop chops in three; the checker, versioning whole rows, sees the price
/// read after another sale as a dependency (a cycle it reports), yet nothing is dirty and every
/// sale is logged once.
#[test]
fn column_level_chopping_keeps_the_invariant() {
    for timeout in [250, 1] {
        let v = verify_shop::<ScChoppingRc>("column", timeout);
        assert_eq!(v.report.committed, 6_000);
        assert!(!v.report.has(AnomalyKind::G1a), "{}", v.report);
        assert_eq!(v.invariants, Ok(()), "{timeout}");
    }
}

#[test]
fn interactive_transactions_beside_the_worker_loop() {
    interactive_alongside_worker_loop::<ScChoppingSer>();
    interactive_alongside_worker_loop::<ScChoppingRc>();
}

/// After a contended run nothing is left in the lock table.
#[test]
fn nothing_is_left_locked_after_a_run() {
    let w = ShopLoad { audits: 0.2 };
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = ScChoppingRc::open(db, &config("column", 1));
    std::thread::scope(|s| {
        for t in 0..3 {
            let (p, w) = (&p, &w);
            s.spawn(move || {
                let mut worker = p.worker(t, false);
                let mut g = w.generator(t, 9);
                let mut prog = w.program();
                for _ in 0..500 {
                    w.next(&mut g, &mut prog);
                    while p.execute(&mut worker, &mut prog).is_err() {}
                }
            });
        }
    });
    assert_eq!(p.locks.heads_in_use(), 0, "locks left");
    assert!(p.barrier.is_free());
    assert_eq!(w.check(p.db()), Ok(()));
}
