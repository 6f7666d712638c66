//! Test support shared by the families' suites (the deterministic, partitioned and deadlock-free
//! protocols, and `nocc` as the no-control baseline): a contended key-value workload with
//! order-sensitive updates and optional data-dependent (pointer-chasing) transactions ([`Mixed`]),
//! its serial execution ([`serial`]), and sources that hand a worker loop a fixed script
//! ([`Script`]) or a counted stream ([`Counted`]).

use crate::harness::{verify, VerifyConfig, Workload};
use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::{Column, ColumnSet, ColumnType, Database, LoadError, Schema, TableSpec};
use crate::txn::{AbortReason, Access, Program, RemoteWait, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub const T: u32 = 0;
pub const A: usize = 0;
pub const B: usize = 1;

/// `keys` rows `k → (a = k, b = 0)`; transactions of `ops` reads/updates, `b ← 3b + tag` and
/// `a ← a + tag` (order-sensitive: the final state depends on the serial order).
#[derive(Clone, Debug)]
pub struct Mixed {
    pub keys: u64,
    pub ops: usize,
    /// Share of transactions that first read a pointer row (key < 4) and then update the key it names.
    pub pointer_share: f64,
    /// `Some((partitions, multi))`: thread `t`'s transactions keep to keys `≡ t (mod partitions)`,
    /// except a `multi` share that picks keys anywhere (multi-partition transactions).
    pub affine: Option<(u64, f64)>,
}

/// One transaction.
#[derive(Clone, Debug, Default)]
pub struct MixProgram {
    pub keys: u64,
    pub ops: Vec<(u64, bool)>,
    pub tag: i64,
    /// `Some(p)`: piece 0 reads row `p`, piece 1 updates row `a(p) % keys`.
    pub pointer: Option<u64>,
    pub target: u64,
    /// A simulated remote-read round trip before piece 0 ([`Program::take_remote_wait`]).
    pub remote: RemoteWait,
    /// Names a partitioning ([`Program::partitioning`]): each key is its own partition key, which
    /// maps keys to partitions as no partitioning does (`k % n`), but tells a partitioned protocol
    /// that the program routes by its inputs (`hstore` then plans only its known accesses).
    pub routed: bool,
}

impl MixProgram {
    fn rmw<X: Tx>(tx: &mut X, key: u64, tag: i64) -> TxResult<()> {
        tx.update(T, key, ColumnSet::ALL, |r| {
            r.set_int(B, r.int(B).wrapping_mul(3).wrapping_add(tag));
            r.set_int(A, r.int(A).wrapping_add(tag));
        })?;
        Ok(())
    }
}

impl Program for MixProgram {
    fn name(&self) -> &'static str {
        if self.pointer.is_some() {
            "Pointer"
        } else {
            "Mix"
        }
    }
    fn pieces(&self) -> usize {
        if self.pointer.is_some() {
            2
        } else {
            self.ops.len()
        }
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        match self.pointer {
            Some(p) if piece == 0 => out.push(Access::read(T, p, ColumnSet::ALL)),
            Some(_) => out.push(Access::update(
                T,
                self.target,
                ColumnSet::ALL,
                ColumnSet::ALL,
            )),
            None => {
                let (k, w) = self.ops[piece];
                out.push(if w {
                    Access::update(T, k, ColumnSet::ALL, ColumnSet::ALL)
                } else {
                    Access::read(T, k, ColumnSet::ALL)
                });
            }
        }
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if self.pointer.is_some() && piece == 1 {
            out.push(0);
        }
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        if piece == 0 {
            self.remote.pay();
        }
        match self.pointer {
            Some(p) if piece == 0 => {
                let a = tx.get(T, p, ColumnSet::ALL)?.map_or(0, |r| r.int(A));
                self.target = a.rem_euclid(self.keys as i64) as u64;
                Ok(())
            }
            Some(_) => Self::rmw(tx, self.target, self.tag),
            None => {
                let (k, w) = self.ops[piece];
                if w {
                    Self::rmw(tx, k, self.tag)
                } else {
                    tx.get(T, k, ColumnSet::ALL)?;
                    Ok(())
                }
            }
        }
    }
    fn take_remote_wait(&mut self) -> Option<std::time::Duration> {
        self.remote.take()
    }
    fn partitioning(&self) -> Option<crate::txn::Partitioning> {
        self.routed.then_some(|_, key| key)
    }
}

impl Mixed {
    pub fn random_program(&self, rng: &mut SmallRng, thread: u32, p: &mut MixProgram) {
        p.keys = self.keys;
        p.tag = rng.gen_range(1..1000);
        p.ops.clear();
        p.pointer = None;
        p.remote = RemoteWait::default();
        if rng.gen_bool(self.pointer_share) {
            p.pointer = Some(rng.gen_range(0..4));
            return;
        }
        let home = match self.affine {
            Some((n, multi)) if !rng.gen_bool(multi) => Some((n, thread as u64 % n)),
            _ => None,
        };
        while p.ops.len() < self.ops {
            let k = match home {
                Some((n, h)) => rng.gen_range(0..self.keys / n) * n + h,
                None => rng.gen_range(0..self.keys),
            };
            if p.ops.iter().all(|o| o.0 != k) {
                p.ops.push((k, rng.gen_bool(0.5)));
            }
        }
    }

    /// Every row as `(key, a, b)`.
    pub fn dump<M: Default + Send + Sync>(db: &Database<M>) -> Vec<(u64, i64, i64)> {
        let t = db.table(T);
        let mut buf = vec![0; t.schema().row_words()];
        (0..t.key_count() as u64 * 2)
            .filter_map(|k| {
                let rid = t.lookup(k)?;
                t.read_into(rid, ColumnSet::ALL, &mut buf);
                let r = crate::storage::RowRef::new(t.schema(), &buf);
                Some((k, r.int(A), r.int(B)))
            })
            .collect()
    }
}

impl Workload for Mixed {
    type Program = MixProgram;
    type Gen = (SmallRng, u32);
    fn name(&self) -> &'static str {
        "mixed-test"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::json!({ "keys": self.keys, "ops": self.ops })
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        let schema = Schema::new(vec![
            Column::new("a", ColumnType::Int),
            Column::new("b", ColumnType::Int),
        ])
        .expect("schema");
        let t = db
            .create_table(TableSpec::new("kv", schema).ordered(4))
            .expect("table");
        let mut scratch = Vec::new();
        for k in 0..self.keys {
            db.table(t).load(k, &mut scratch, |r| {
                r.set_int(A, k as i64);
                r.set_int(B, 0);
                Ok(())
            })?;
        }
        Ok(())
    }
    fn generator(&self, thread: u32, seed: u64) -> (SmallRng, u32) {
        let rng =
            SmallRng::seed_from_u64(seed ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        (rng, thread)
    }
    fn program(&self) -> MixProgram {
        MixProgram::default()
    }
    fn next(&self, gen: &mut (SmallRng, u32), p: &mut MixProgram) {
        self.random_program(&mut gen.0, gen.1, p)
    }
}

/// A [`crate::txn::RequestSource`] handing out `left` programs of `workload` (thread `thread`),
/// counting the attempts that aborted and were retried.
pub struct Counted<'a> {
    pub workload: &'a Mixed,
    pub gen: (SmallRng, u32),
    pub left: u64,
    pub aborts: u64,
}

impl crate::txn::RequestSource for Counted<'_> {
    type Program = MixProgram;
    fn program(&self) -> MixProgram {
        MixProgram::default()
    }
    fn next(&mut self, p: &mut MixProgram) -> Option<crate::txn::Ticket> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.workload.next(&mut self.gen, p);
        Some(crate::txn::Ticket::now(0))
    }
    fn aborted(&mut self, _: crate::txn::AbortReason) {
        self.aborts += 1;
    }
    fn finished(&mut self, _: crate::txn::Ticket, outcome: Result<(), crate::txn::Abort>) {
        outcome.expect("no program of this workload aborts for good");
    }
    fn seed(&self) -> u64 {
        1
    }
}

/// Interactive transactions (`begin`: the whole database) on one thread while another runs the
/// protocol's own worker loop: the combined history must be serializable.
pub fn interactive_alongside_worker_loop<P: crate::protocols::Protocol>() {
    use crate::protocols::ProtocolConfig;
    let w = Mixed {
        keys: 16,
        ops: 4,
        pointer_share: 0.1,
        affine: None,
    };
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = P::open(
        db,
        &ProtocolConfig {
            threads: 2,
            ..ProtocolConfig::default()
        },
    );
    let mut txns = Vec::new();
    std::thread::scope(|s| {
        let p = &p;
        let w = &w;
        let looped = s.spawn(move || {
            let mut worker = p.worker(0, true);
            let mut src = Counted {
                workload: w,
                gen: w.generator(0, 7),
                left: 3000,
                aborts: 0,
            };
            p.run_worker(&mut worker, &mut src);
            P::recorder(&mut worker).take()
        });
        let interactive = s.spawn(move || {
            let mut worker = p.worker(1, true);
            for i in 0..200u64 {
                let mut tx = p.begin(&mut worker);
                let mut sum: i64 = 0;
                for k in 0..4 {
                    let row = tx.get(T, (i + k) % 16, ColumnSet::ALL).unwrap().unwrap();
                    sum = sum.wrapping_add(row.int(B));
                }
                tx.update(T, (i + 7) % 16, ColumnSet::ALL, |r| r.set_int(B, sum))
                    .unwrap();
                tx.commit().unwrap();
            }
            P::recorder(&mut worker).take()
        });
        txns.extend(looped.join().unwrap());
        txns.extend(interactive.join().unwrap());
    });
    let report = crate::check::check(&crate::check::History { txns });
    assert_eq!(report.committed, 3200, "{}", P::INFO.name);
    assert!(report.is_serializable(), "{}: {report}", P::INFO.name);
    assert!(report.anomalies.is_empty(), "{}: {report}", P::INFO.name);
}

/// A small, contended mix (64 keys, 6 accesses, a tenth of them data-dependent).
pub fn contended() -> Mixed {
    Mixed {
        keys: 64,
        ops: 6,
        pointer_share: 0.1,
        affine: None,
    }
}

/// 20,000 transactions of [`contended`] on 4 threads, checked: every one commits, the history is
/// serializable, and it has enough dependencies to mean something.
pub fn checked_history<P: Protocol>() {
    // 4 threads on 2 cores: preemption mid-transaction adds interleavings.
    let cfg = VerifyConfig {
        protocol: ProtocolConfig::with_threads(4),
        txns: 20_000,
        seed: 3,
        prefetch: true,
    };
    let v = verify::run::<P, Mixed>(&contended(), &cfg).unwrap();
    assert_eq!(v.report.committed, 20_000, "{}", P::INFO.name);
    assert!(v.report.is_serializable(), "{}: {}", P::INFO.name, v.report);
    assert!(
        v.report.anomalies.is_empty(),
        "{}: {}",
        P::INFO.name,
        v.report
    );
    assert!(
        v.report.edges > 20_000,
        "{}: too few dependencies",
        P::INFO.name
    );
}

/// A program whose piece 1 targets key 10 when piece 0 has run an odd number of times, key 20
/// otherwise: reconnaissance always sees the other key than the execution.
#[derive(Default)]
struct Fickle {
    runs: u32,
    target: u64,
}

impl Program for Fickle {
    fn name(&self) -> &'static str {
        "Fickle"
    }
    fn pieces(&self) -> usize {
        2
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        let k = if piece == 0 { 0 } else { self.target };
        out.push(Access::update(T, k, ColumnSet::ALL, ColumnSet::ALL));
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        out.extend(0..piece);
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        if piece == 0 {
            self.runs += 1;
            self.target = if self.runs % 2 == 1 { 10 } else { 20 };
        }
        tx.update(
            T,
            if piece == 0 { 0 } else { self.target },
            ColumnSet::ALL,
            |r| r.set_int(B, r.int(B) + 1),
        )?;
        Ok(())
    }
}

/// A database of 32 [`Mixed`] rows, `k → (a = k, b = 0)`.
pub fn fresh_db<M: Default + Send + Sync>() -> Database<M> {
    let mut db = Database::new();
    Mixed {
        keys: 32,
        ops: 5,
        pointer_share: 0.0,
        affine: None,
    }
    .load(&mut db)
    .unwrap();
    db
}

/// A reconnaissance that sees another key than the execution aborts the attempt (retryably), rolls
/// it back and releases every lock.
pub fn recon_mismatch_aborts_and_releases<P: Protocol>() {
    let p = P::open(fresh_db(), &ProtocolConfig::default());
    let mut w = p.worker(0, false);
    let e = p.execute(&mut w, &mut Fickle::default()).unwrap_err();
    assert_eq!(e.reason, AbortReason::Validation, "{e}");
    assert!(e.is_retryable());
    // Rolled back (key 0 was written before the stray access) and every lock released: a barrier
    // transaction, which waits for all earlier ones, gets through.
    let mut tx = p.begin(&mut w);
    for k in [0, 10, 20] {
        assert_eq!(tx.get(T, k, ColumnSet::ALL).unwrap().unwrap().int(B), 0);
        assert_eq!(
            tx.get(T, k, ColumnSet::ALL).unwrap().unwrap().int(A),
            k as i64
        );
    }
    tx.commit().unwrap();
}

/// Hands out `programs` in order (ticket tag = position) and records the order they finish in.
pub struct Script {
    programs: Vec<MixProgram>,
    next: usize,
    pub finished: Vec<u64>,
    /// The most transactions drawn and not yet finished at once.
    pub most_in_flight: usize,
}

impl crate::txn::RequestSource for Script {
    type Program = MixProgram;
    fn program(&self) -> MixProgram {
        MixProgram::default()
    }
    fn next(&mut self, p: &mut MixProgram) -> Option<crate::txn::Ticket> {
        let next = self.programs.get(self.next)?;
        p.clone_from(next);
        self.next += 1;
        self.most_in_flight = self.most_in_flight.max(self.next - self.finished.len());
        Some(crate::txn::Ticket::now(self.next as u64 - 1))
    }
    fn aborted(&mut self, _: crate::txn::AbortReason) {}
    fn finished(&mut self, t: crate::txn::Ticket, outcome: Result<(), crate::txn::Abort>) {
        outcome.expect("commits");
        self.finished.push(t.tag);
    }
    fn seed(&self) -> u64 {
        1
    }
}

/// Runs `script` through one worker of `P` on 2 partitions; returns the order the transactions
/// finished in and each key's `b`.
pub fn run_script<P: Protocol>(script: Vec<MixProgram>) -> (Vec<u64>, Vec<(u64, i64, i64)>) {
    let (src, dump) = run_script_source::<P>(script);
    (src.finished, dump)
}

/// [`run_script`], returning the whole source (what it recorded).
pub fn run_script_source<P: Protocol>(script: Vec<MixProgram>) -> (Script, Vec<(u64, i64, i64)>) {
    let p = P::open(fresh_db(), &ProtocolConfig::with_threads(2));
    let mut w = p.worker(0, false);
    let mut src = Script {
        programs: script,
        next: 0,
        finished: Vec::new(),
        most_in_flight: 0,
    };
    p.run_worker(&mut w, &mut src);
    let dump = Mixed::dump(p.db());
    (src, dump)
}

/// A program that updates each of `keys` (of 64), tag 1.
pub fn mix(keys: &[u64]) -> MixProgram {
    MixProgram {
        keys: 64,
        ops: keys.iter().map(|&k| (k, true)).collect(),
        tag: 1,
        ..MixProgram::default()
    }
}

/// The final state of `programs` run one after another in list order with nothing else running (the
/// serial execution a deterministic protocol must reproduce), on the kit's executor with the whole
/// database as its cover: a program that aborts is rolled back.
pub fn serial(programs: &[MixProgram]) -> Vec<(u64, i64, i64)> {
    use crate::protocols::kit::exec::{Cover, ExecState, ExecTx};
    let db: Database<()> = fresh_db();
    let ledger = crate::txn::IdLedger::new();
    let mut st = ExecState::new(ledger.lease(0), false);
    for prog in programs {
        let mut tx = ExecTx::new(&db, &mut st, Cover::All);
        if crate::txn::run_pieces(&mut prog.clone(), &mut tx).is_ok() {
            tx.commit().expect("a serial transaction commits");
        }
    }
    Mixed::dump(&db)
}
