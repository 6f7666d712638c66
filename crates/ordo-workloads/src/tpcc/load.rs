//! Initial population (clause 4.3.3.1), in parallel.
//!
//! The work is cut into independent jobs — a slice of ITEM, a slice of one warehouse's STOCK, one
//! WAREHOUSE row, one district with its customers, history, orders, new orders and order lines — and
//! loader threads take jobs from a shared counter, so one warehouse loads on every core too. Each job
//! has its own random generator seeded from its identity, so the database does not depend on the
//! number of threads.
//!
//! Per district: `customers` customers (3,000; 100 with `--tiny`), one history row each, as many orders
//! (o_c_id a random permutation of the customers), the last 30% of them undelivered (in NEW-ORDER, no
//! carrier, order lines with an amount and no delivery date), `d_next_o_id` = customers + 1; and the
//! district's NEW-ORDER fence row ([`FENCE_O_ID`]).

use super::random::{astring, data_original, last_name, nstring, nurand, zip, NuRandC};
use super::schema::*;
use super::TpccConfig;
use ordo::storage::{Database, LoadError, RowMut, SchemaError, Table};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Stock or item rows per job.
const CHUNK: u32 = 10_000;

#[derive(Clone, Copy, Debug)]
enum Job {
    Items { from: u32, to: u32 },
    Stock { w: u32, from: u32, to: u32 },
    Warehouse { w: u32 },
    District { w: u32, d: u32 },
}

/// The date stored as "now" by the loader and the transactions (seconds since the epoch).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The number of the last undelivered-from order: orders `1..=delivered(customers)` are delivered.
pub fn delivered(customers: u32) -> u32 {
    customers * 7 / 10
}

/// Creates the tables and loads them.
pub fn populate<M: Default + Send + Sync>(
    cfg: &TpccConfig,
    db: &mut Database<M>,
) -> Result<(), LoadError> {
    for spec in tables(cfg.warehouses, cfg.customers(), cfg.items()) {
        db.create_table(spec)?;
    }
    let items = cfg.items();
    let mut jobs = Vec::new();
    for from in (1..=items).step_by(CHUNK as usize) {
        jobs.push(Job::Items {
            from,
            to: (from + CHUNK - 1).min(items),
        });
    }
    for w in 1..=cfg.warehouses {
        // Districts first: they are the longest jobs.
        for d in 1..=DISTRICTS {
            jobs.push(Job::District { w, d });
        }
        jobs.push(Job::Warehouse { w });
        for from in (1..=items).step_by(CHUNK as usize) {
            jobs.push(Job::Stock {
                w,
                from,
                to: (from + CHUNK - 1).min(items),
            });
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16)
        .min(jobs.len());
    let next = AtomicUsize::new(0);
    let db = &*db;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<(), LoadError> {
                    let mut l = Loader::new(db, cfg);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&job) = jobs.get(i) else {
                            return Ok(());
                        };
                        l.rng = SmallRng::seed_from_u64(
                            0x7c3c_0000 ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                        );
                        l.run(job)?;
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("TPC-C loader thread panicked"))
    })
}

struct Loader<'a, M> {
    db: &'a Database<M>,
    cfg: &'a TpccConfig,
    rng: SmallRng,
    scratch: Vec<u64>,
    s: Vec<u8>,
    now: i64,
}

fn set_addr(
    row: &mut RowMut,
    first: usize,
    rng: &mut SmallRng,
    s: &mut Vec<u8>,
) -> Result<(), SchemaError> {
    for c in 0..3 {
        astring(rng, 10, 20, s);
        row.set_str(first + c, s)?;
    }
    let state = [b'A' + rng.gen_range(0..26u8), b'A' + rng.gen_range(0..26u8)];
    row.set_str(first + 3, &state)?;
    zip(rng, s);
    row.set_str(first + 4, s)
}

impl<'a, M: Default + Send + Sync> Loader<'a, M> {
    fn new(db: &'a Database<M>, cfg: &'a TpccConfig) -> Self {
        Loader {
            db,
            cfg,
            rng: SmallRng::seed_from_u64(0),
            scratch: Vec::new(),
            s: Vec::with_capacity(512),
            now: now(),
        }
    }

    fn table(&self, t: ordo::storage::TableId) -> &'a Table<M> {
        self.db.table(t)
    }

    fn run(&mut self, job: Job) -> Result<(), LoadError> {
        match job {
            Job::Items { from, to } => self.items(from, to),
            Job::Stock { w, from, to } => self.stock(w, from, to),
            Job::Warehouse { w } => self.warehouse(w),
            Job::District { w, d } => self.district(w, d),
        }
    }

    fn items(&mut self, from: u32, to: u32) -> Result<(), LoadError> {
        use col::*;
        let t = self.table(ITEM);
        let (rng, s) = (&mut self.rng, &mut self.s);
        for i in from..=to {
            t.load(item_key(i), &mut self.scratch, |r| {
                r.set_int(I_ID, i as i64);
                r.set_int(I_IM_ID, rng.gen_range(1..=10_000));
                astring(rng, 14, 24, s);
                r.set_str(I_NAME, s)?;
                r.set_int(I_PRICE, rng.gen_range(100..=10_000));
                data_original(rng, s);
                r.set_str(I_DATA, s)
            })?;
        }
        Ok(())
    }

    fn stock(&mut self, w: u32, from: u32, to: u32) -> Result<(), LoadError> {
        use col::*;
        let t = self.table(STOCK);
        let (rng, s) = (&mut self.rng, &mut self.s);
        for i in from..=to {
            t.load(stock_key(w, i), &mut self.scratch, |r| {
                r.set_int(S_I_ID, i as i64);
                r.set_int(S_W_ID, w as i64);
                r.set_int(S_QUANTITY, rng.gen_range(10..=100));
                for d in 0..10 {
                    astring(rng, 24, 24, s);
                    r.set_str(S_DIST_01 + d, s)?;
                }
                data_original(rng, s);
                r.set_str(S_DATA, s)
            })?;
        }
        Ok(())
    }

    fn warehouse(&mut self, w: u32) -> Result<(), LoadError> {
        use col::*;
        let t = self.table(WAREHOUSE);
        let (rng, s) = (&mut self.rng, &mut self.s);
        t.load(wh_key(w), &mut self.scratch, |r| {
            r.set_int(W_ID, w as i64);
            astring(rng, 6, 10, s);
            r.set_str(W_NAME, s)?;
            set_addr(r, W_STREET_1, rng, s)?;
            r.set_int(W_TAX, rng.gen_range(0..=2000));
            r.set_int(W_YTD, 30_000_000);
            Ok(())
        })
    }

    fn district(&mut self, w: u32, d: u32) -> Result<(), LoadError> {
        use col::*;
        let customers = self.cfg.customers();
        let now = self.now;
        let (rng, s) = (&mut self.rng, &mut self.s);
        let scratch = &mut self.scratch;
        self.db.table(DISTRICT).load(dist_key(w, d), scratch, |r| {
            r.set_int(D_ID, d as i64);
            r.set_int(D_W_ID, w as i64);
            astring(rng, 6, 10, s);
            r.set_str(D_NAME, s)?;
            set_addr(r, D_STREET_1, rng, s)?;
            r.set_int(D_TAX, rng.gen_range(0..=2000));
            r.set_int(D_YTD, 3_000_000);
            r.set_int(D_NEXT_O_ID, customers as i64 + 1);
            Ok(())
        })?;
        let (cust, hist, by_name) = (
            self.db.table(CUSTOMER),
            self.db.table(HISTORY),
            self.db.table(CUSTOMER_BY_NAME),
        );
        let mut first = Vec::with_capacity(16);
        for c in 1..=customers {
            let name = if c <= 1000 {
                c - 1
            } else {
                nurand(rng, 255, NuRandC::LOAD.c_last, 0, 999)
            };
            astring(rng, 8, 16, &mut first);
            cust.load(cust_key(w, d, c), scratch, |r| {
                r.set_int(C_ID, c as i64);
                r.set_int(C_D_ID, d as i64);
                r.set_int(C_W_ID, w as i64);
                r.set_str(C_FIRST, &first)?;
                r.set_str(C_MIDDLE, b"OE")?;
                last_name(name, s);
                r.set_str(C_LAST, s)?;
                set_addr(r, C_STREET_1, rng, s)?;
                nstring(rng, 16, 16, s);
                r.set_str(C_PHONE, s)?;
                r.set_int(C_SINCE, now);
                r.set_str(
                    C_CREDIT,
                    if rng.gen_range(0..10) == 0 {
                        b"BC"
                    } else {
                        b"GC"
                    },
                )?;
                r.set_int(C_CREDIT_LIM, 5_000_000);
                r.set_int(C_DISCOUNT, rng.gen_range(0..=5000));
                r.set_int(C_BALANCE, -1000);
                r.set_int(C_YTD_PAYMENT, 1000);
                r.set_int(C_PAYMENT_CNT, 1);
                r.set_int(C_DELIVERY_CNT, 0);
                astring(rng, 300, 500, s);
                r.set_str(C_DATA, s)
            })?;
            by_name.load(cust_name_key(w, d, name, c), scratch, |r| {
                r.set_str(CN_FIRST, &first)?;
                r.set_int(CN_C_ID, c as i64);
                Ok(())
            })?;
            hist.load(cust_key(w, d, c), scratch, |r| {
                r.set_int(H_C_ID, c as i64);
                r.set_int(H_C_D_ID, d as i64);
                r.set_int(H_C_W_ID, w as i64);
                r.set_int(H_D_ID, d as i64);
                r.set_int(H_W_ID, w as i64);
                r.set_int(H_DATE, now);
                r.set_int(H_AMOUNT, 1000);
                astring(rng, 12, 24, s);
                r.set_str(H_DATA, s)
            })?;
        }
        let mut perm: Vec<u32> = (1..=customers).collect();
        perm.shuffle(rng);
        let (orders, new_orders, lines, by_cust) = (
            self.db.table(ORDER),
            self.db.table(NEW_ORDER),
            self.db.table(ORDER_LINE),
            self.db.table(ORDER_BY_CUSTOMER),
        );
        new_orders.load(order_key(w, d, FENCE_O_ID), scratch, |r| {
            r.set_int(NO_D_ID, d as i64);
            r.set_int(NO_W_ID, w as i64);
            Ok(())
        })?;
        let items = self.cfg.items();
        let cut = delivered(customers);
        for o in 1..=customers {
            let c = perm[o as usize - 1];
            let done = o <= cut;
            let ol_cnt = rng.gen_range(5..=15u32);
            orders.load(order_key(w, d, o), scratch, |r| {
                r.set_int(O_ID, o as i64);
                r.set_int(O_D_ID, d as i64);
                r.set_int(O_W_ID, w as i64);
                r.set_int(O_C_ID, c as i64);
                r.set_int(O_ENTRY_D, now);
                r.set_int(O_CARRIER_ID, if done { rng.gen_range(1..=10) } else { 0 });
                r.set_int(O_OL_CNT, ol_cnt as i64);
                r.set_int(O_ALL_LOCAL, 1);
                Ok(())
            })?;
            by_cust.load(order_cust_key(w, d, c, o), scratch, |r| {
                r.set_int(OC_O_ID, o as i64);
                Ok(())
            })?;
            if !done {
                new_orders.load(order_key(w, d, o), scratch, |r| {
                    r.set_int(NO_O_ID, o as i64);
                    r.set_int(NO_D_ID, d as i64);
                    r.set_int(NO_W_ID, w as i64);
                    Ok(())
                })?;
            }
            for ol in 1..=ol_cnt {
                lines.load(ol_key(w, d, o, ol), scratch, |r| {
                    r.set_int(OL_O_ID, o as i64);
                    r.set_int(OL_D_ID, d as i64);
                    r.set_int(OL_W_ID, w as i64);
                    r.set_int(OL_NUMBER, ol as i64);
                    r.set_int(OL_I_ID, rng.gen_range(1..=items) as i64);
                    r.set_int(OL_SUPPLY_W_ID, w as i64);
                    r.set_int(OL_DELIVERY_D, if done { now } else { 0 });
                    r.set_int(OL_QUANTITY, 5);
                    r.set_int(OL_AMOUNT, if done { 0 } else { rng.gen_range(1..=999_999) });
                    astring(rng, 24, 24, s);
                    r.set_str(OL_DIST_INFO, s)
                })?;
            }
        }
        Ok(())
    }
}
