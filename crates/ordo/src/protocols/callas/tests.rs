//! `callas` and `callas-ser`: checked contended histories — the kit's one-table mix, and a
//! pipeline over three tables that Runtime Pipelining chops into stages, in one group, in one
//! group each, and beside a reversed type in another group; the plans learnt; interactive
//! transactions beside the worker loop; nothing left on any list or lock after a run.

use super::{Callas, CallasRc, CallasSer, Level, GROUPS_KNOB, MODE_KNOB};
use crate::check::AnomalyKind;
use crate::harness::{verify, VerifyConfig, Workload};
use crate::protocols::kit::testkit::{
    checked_history, contended, interactive_alongside_worker_loop, Mixed,
};
use crate::protocols::{Protocol, ProtocolConfig};
use crate::storage::{Column, ColumnSet, ColumnType, Database, LoadError, Schema, TableSpec};
use crate::txn::{Access, Program, Tx, TxResult};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

/// Tables of the pipeline workload.
const TABLES: u32 = 3;
/// Rows per table (few: contended).
const ROWS: u64 = 6;

/// A transaction that updates one row of each table in turn (`Forward`: 0, 1, 2; `Backward`:
/// 2, 1, 0), each update a piece needing the one before (the value written carries the row read:
/// `b ← 3b + tag + prev`).
#[derive(Clone, Debug, Default)]
struct Pipe {
    backward: bool,
    rows: Vec<u64>,
    tag: i64,
    carried: i64,
}

impl Pipe {
    fn table(&self, piece: usize) -> u32 {
        if self.backward {
            TABLES - 1 - piece as u32
        } else {
            piece as u32
        }
    }
}

impl Program for Pipe {
    fn name(&self) -> &'static str {
        if self.backward {
            "Backward"
        } else {
            "Forward"
        }
    }
    fn pieces(&self) -> usize {
        TABLES as usize
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        out.push(Access::update(
            self.table(piece),
            self.rows[piece],
            ColumnSet::ALL,
            ColumnSet::ALL,
        ));
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        if piece > 0 {
            out.push(piece - 1);
        }
    }
    fn run_piece<X: Tx>(&mut self, piece: usize, tx: &mut X) -> TxResult<()> {
        if piece == 0 {
            self.carried = 0;
        }
        let (tag, carried) = (self.tag, self.carried);
        let b = tx
            .update(self.table(piece), self.rows[piece], ColumnSet::ALL, |r| {
                let b = r.int(1);
                r.set_int(1, (3 * b + tag + carried) % 1_000_003);
                b
            })?
            .unwrap_or(0);
        self.carried = b % 7;
        Ok(())
    }
}

/// The pipeline workload: `backward_share` of the transactions go backward.
struct Pipeline {
    backward_share: f64,
}

impl Workload for Pipeline {
    type Program = Pipe;
    type Gen = SmallRng;
    fn name(&self) -> &'static str {
        "pipeline"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::json!({ "backward_share": self.backward_share })
    }
    fn load<M: Default + Send + Sync>(&self, db: &mut Database<M>) -> Result<(), LoadError> {
        for i in 0..TABLES {
            let schema = Schema::new(vec![
                Column::new("a", ColumnType::Int),
                Column::new("b", ColumnType::Int),
            ])
            .expect("a valid schema");
            let t = db
                .create_table(TableSpec::new(format!("t{i}"), schema))
                .expect("a new table");
            let mut scratch = Vec::new();
            for k in 0..ROWS {
                db.table(t).load(k, &mut scratch, |r| {
                    r.set_int(0, k as i64);
                    r.set_int(1, 0);
                    Ok(())
                })?;
            }
        }
        Ok(())
    }
    fn generator(&self, thread: u32, seed: u64) -> SmallRng {
        SmallRng::seed_from_u64(seed ^ (thread as u64) << 32)
    }
    fn program(&self) -> Pipe {
        Pipe::default()
    }
    fn next(&self, g: &mut SmallRng, p: &mut Pipe) {
        p.backward = g.gen_bool(self.backward_share);
        p.rows = (0..TABLES).map(|_| g.gen_range(0..ROWS)).collect();
        p.tag = g.gen_range(1..1000);
    }
}

fn config(groups: &str, mode: &str) -> ProtocolConfig {
    ProtocolConfig {
        lock_wait_timeout: Duration::from_millis(20),
        ..ProtocolConfig::with_threads(4)
    }
    .with_knob(&GROUPS_KNOB, groups)
    .unwrap()
    .with_knob(&MODE_KNOB, mode)
    .unwrap()
}

fn verify_pipeline<L: Level>(groups: &str, backward: f64) -> crate::harness::Verified {
    let cfg = VerifyConfig {
        protocol: config(groups, "optimistic"),
        txns: 6_000,
        seed: 11,
        prefetch: true,
    };
    verify::run::<Callas<L>, Pipeline>(
        &Pipeline {
            backward_share: backward,
        },
        &cfg,
    )
    .unwrap()
}

#[test]
fn callas_ser_histories_of_the_kits_mix_are_serializable() {
    checked_history::<CallasSer>();
}

#[test]
fn callas_histories_of_the_kits_mix_have_no_dirty_reads_or_writes() {
    // A later batch of a stage tries its locks until the lock-wait timeout: short, so that a
    // deadlock between two such batches costs little.
    let cfg = VerifyConfig {
        protocol: ProtocolConfig {
            lock_wait_timeout: Duration::from_millis(20),
            ..ProtocolConfig::with_threads(4)
        },
        txns: 10_000,
        seed: 4,
        prefetch: true,
    };
    let v = verify::run::<CallasRc, Mixed>(&contended(), &cfg).unwrap();
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

#[test]
fn interactive_transactions_beside_the_worker_loop() {
    interactive_alongside_worker_loop::<CallasSer>();
    interactive_alongside_worker_loop::<CallasRc>();
}

/// Forward alone, one group: three ranks, three stages — pipelined — and serializable.
#[test]
fn a_pipeline_is_chopped_by_rank_and_stays_serializable() {
    let v = verify_pipeline::<super::Ser>("all", 0.0);
    assert_eq!(v.report.committed, 6_000);
    assert!(v.report.is_serializable(), "{}", v.report);
    assert!(v.report.anomalies.is_empty(), "{}", v.report);
    assert!(v.report.edges > 6_000, "too few dependencies");
}

/// Forward and Backward in one group tie every table into one rank (each one stage): still
/// serializable; and in two groups, each chopped, nexus locks between them.
#[test]
fn opposite_orders_in_one_group_or_two_stay_serializable() {
    for groups in ["all", "Forward/Backward", "each"] {
        let v = verify_pipeline::<super::Ser>(groups, 0.3);
        assert_eq!(v.report.committed, 6_000, "{groups}");
        assert!(v.report.is_serializable(), "{groups}: {}", v.report);
        assert!(v.report.anomalies.is_empty(), "{groups}: {}", v.report);
    }
    for groups in ["all", "Forward/Backward"] {
        let v = verify_pipeline::<super::Rc>(groups, 0.3);
        for k in [
            AnomalyKind::G0,
            AnomalyKind::G1a,
            AnomalyKind::G1b,
            AnomalyKind::G1c,
        ] {
            assert!(!v.report.has(k), "{groups} {k:?}: {}", v.report);
        }
    }
}

/// Runs `n` pipeline transactions on one thread and returns the protocol (to inspect its plans).
fn learnt(groups: &str, backward: f64) -> CallasSer {
    let w = Pipeline {
        backward_share: backward,
    };
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = CallasSer::open(db, &config(groups, "optimistic"));
    let mut worker = p.worker(0, false);
    let mut g = w.generator(0, 1);
    let mut prog = w.program();
    for _ in 0..200 {
        w.next(&mut g, &mut prog);
        p.execute(&mut worker, &mut prog).unwrap();
    }
    p
}

fn stages_of(p: &CallasSer, name: &str) -> Vec<Vec<usize>> {
    let k = p.plans().get(name).expect("learnt");
    k.stages.iter().map(|s| s.pieces.clone()).collect()
}

#[test]
fn the_plans_learnt_follow_the_groups() {
    let p = learnt("all", 0.0);
    assert_eq!(stages_of(&p, "Forward"), vec![vec![0], vec![1], vec![2]]);
    let p = learnt("all", 0.5);
    assert_eq!(stages_of(&p, "Forward"), vec![vec![0, 1, 2]]);
    assert_eq!(stages_of(&p, "Backward"), vec![vec![0, 1, 2]]);
    let p = learnt("Forward/Backward", 0.5);
    assert_eq!(stages_of(&p, "Forward"), vec![vec![0], vec![1], vec![2]]);
    assert_eq!(stages_of(&p, "Backward"), vec![vec![0], vec![1], vec![2]]);
    let groups = p.plans().groups();
    assert_eq!(groups.len(), 2);
    assert!(groups.iter().all(|g| g.pipelined && g.members.len() == 1));
    // Not named: one group, unpipelined.
    let p = learnt("Forward", 0.5);
    assert_eq!(stages_of(&p, "Backward"), vec![vec![0, 1, 2]]);
    assert!(!p.plans().get("Backward").unwrap().pipelined);
}

/// After a contended run, no access list holds an entry, every piece and nexus lock is free.
#[test]
fn nothing_is_left_held_after_a_run() {
    let w = Pipeline {
        backward_share: 0.3,
    };
    let cfg = VerifyConfig {
        protocol: config("Forward/Backward", "adaptive"),
        txns: 2_000,
        seed: 2,
        prefetch: false,
    };
    let v = verify::run::<CallasSer, Pipeline>(&w, &cfg).unwrap();
    assert!(v.report.anomalies.is_empty(), "{}", v.report);
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    let p = CallasSer::open(db, &config("Forward/Backward", "adaptive"));
    std::thread::scope(|s| {
        for t in 0..3 {
            let p = &p;
            let w = &w;
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
    assert_eq!(p.nexus.heads_in_use(), 0, "nexus locks left");
    for t in p.db().tables() {
        for k in 0..ROWS {
            let m = t.meta(t.lookup(k).unwrap());
            assert!(m.lock.is_free(), "piece lock left on {}/{k}", t.name());
            assert!(m.list.lock().is_empty(), "entries left on {}/{k}", t.name());
        }
    }
}
