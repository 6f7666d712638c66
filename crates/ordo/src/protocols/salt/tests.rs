//! Salt's own behaviour: lock durations per level, the downgrade, both release rules and the
//! indirect dirty-read chain, FIFO against ACID starvation, accept semantics, local transactions,
//! and checked multi-threaded histories (the conformance suite runs the shared contract).

use super::*;
use crate::check::AnomalyKind;
use crate::harness::{verify, VerifyConfig, Workload};
use crate::protocols::conformance::{small_db, B, KV};
use crate::protocols::kit::testkit::{self, MixProgram, Mixed};
use crate::storage::{ColumnSet, LoadError};
use crate::txn::{Abort, AbortReason, Access};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// `P` on [`small_db`] at `level`, lock waits giving up after `timeout_ms`.
fn open<K: Kind>(level: &str, timeout_ms: u64) -> Salt<K> {
    let config = ProtocolConfig {
        threads: 4,
        lock_wait_timeout: Duration::from_millis(timeout_ms),
        ..ProtocolConfig::default()
    }
    .with_knob(&LEVEL_KNOB, level)
    .unwrap();
    Salt::open(small_db(), &config)
}

fn b_of<T: Tx>(tx: &mut T, key: u64) -> TxResult<i64> {
    Ok(tx.get(KV, key, ColumnSet::one(B))?.expect("present").int(B))
}

fn add<T: Tx>(tx: &mut T, key: u64, delta: i64) -> TxResult<()> {
    tx.update(KV, key, ColumnSet::one(B), |r| {
        r.set_int(B, r.int(B) + delta)
    })?
    .expect("present");
    Ok(())
}

fn modes<K: Kind>(tx: &SaltTx<'_, K>) -> Vec<SaltMode> {
    tx.locks().into_iter().map(|l| l.2).collect()
}

/// What an ACID transaction on a fresh worker reads of `key`'s `b` (or the abort, when a lock wait
/// timed out).
fn acid_read<K: Kind>(p: &Salt<K>, worker: u32, key: u64) -> TxResult<i64> {
    let mut w = p.worker(worker, false);
    let mut tx = p.begin(&mut w);
    let b = b_of(&mut tx, key)?;
    tx.commit()?;
    Ok(b)
}

// ---- Table 3.1, as transactions meet it ----

#[test]
fn read_committed_read_locks_are_short_and_write_locks_long() {
    let p: Salt<Base> = open("rc", 1000);
    let mut w = p.worker(0, false);
    let mut tx = p.begin(&mut w);
    b_of(&mut tx, 10).unwrap();
    assert!(modes(&tx).is_empty(), "the read lock went with the read");
    add(&mut tx, 20, 1).unwrap();
    assert_eq!(modes(&tx), vec![SaltMode::AcidW], "the write lock stays");
    b_of(&mut tx, 20).unwrap();
    assert_eq!(
        modes(&tx),
        vec![SaltMode::AcidW],
        "a read under it keeps it"
    );
    tx.commit().unwrap();
}

#[test]
fn repeatable_read_and_serializable_read_locks_are_long() {
    for level in ["rr", "ser"] {
        let p: Salt<Base> = open(level, 1000);
        let mut w = p.worker(0, false);
        let mut tx = p.begin(&mut w);
        b_of(&mut tx, 10).unwrap();
        assert_eq!(modes(&tx), vec![SaltMode::AcidR], "{level}");
        tx.commit().unwrap();
    }
}

#[test]
fn read_uncommitted_reads_take_no_lock_and_see_uncommitted_writes() {
    let p: Salt<Base> = open("ru", 1000);
    let (mut w0, mut w1) = (p.worker(0, false), p.worker(1, false));
    let mut writer = p.begin(&mut w0);
    add(&mut writer, 10, 7).unwrap();
    let mut reader = p.begin(&mut w1);
    assert_eq!(
        b_of(&mut reader, 10).unwrap(),
        7,
        "a dirty read, as RU allows"
    );
    assert!(modes(&reader).is_empty());
    reader.commit().unwrap();
    writer.abort();
}

#[test]
fn serializable_scans_lock_the_gap_after_the_range_and_lower_levels_do_not() {
    for (level, locks) in [("rc", 0), ("rr", 3), ("ser", 4)] {
        let p: Salt<Base> = open(level, 1000);
        let mut w = p.worker(0, false);
        let mut tx = p.begin(&mut w);
        let mut seen = 0;
        tx.scan(KV, 10, 35, ColumnSet::one(B), |_, _| {
            seen += 1;
            true
        })
        .unwrap();
        assert_eq!(seen, 3);
        assert_eq!(
            tx.locks().len(),
            locks,
            "{level}: 10, 20, 30 and the next key 40"
        );
        tx.commit().unwrap();
    }
}

// ---- alkaline → saline ----

#[test]
fn alkaline_locks_turn_saline_at_the_end_of_their_subtransaction() {
    let p: Salt<Base> = open("rc", 50);
    let (mut w0, mut w1) = (p.worker(0, false), p.worker(1, false));
    let mut b1 = p.begin_base(&mut w0);
    add(&mut b1, 10, 5).unwrap();
    assert_eq!(modes(&b1), vec![SaltMode::AlkW]);
    b1.end_alkaline().unwrap();
    assert!(b1.is_accepted());
    assert_eq!(modes(&b1), vec![SaltMode::SalW], "downgraded, held on");
    // Another BASE transaction's alkaline write goes at once (saline-W with alkaline-W) and sees
    // the state at the alkaline boundary...
    let mut b2 = p.begin_base(&mut w1);
    assert_eq!(b_of(&mut b2, 10).unwrap(), 5);
    add(&mut b2, 10, 1).unwrap();
    b2.end_alkaline().unwrap();
    // ...while an ACID transaction waits (and here times out) until both BASE transactions end.
    assert_eq!(
        acid_read(&p, 2, 10).unwrap_err().reason,
        AbortReason::Deadlock
    );
    std::thread::scope(|s| {
        let b2_done = s.spawn(move || b2.commit());
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            !b2_done.is_finished(),
            "b2 read b1's write: it waits for b1"
        );
        b1.commit().unwrap();
        b2_done.join().unwrap().unwrap();
    });
    assert_eq!(acid_read(&p, 2, 10).unwrap(), 6);
}

#[test]
fn an_alkaline_subtransaction_is_isolated_from_other_alkaline_ones() {
    let p: Salt<Base> = open("rc", 50);
    let (mut w0, mut w1) = (p.worker(0, false), p.worker(1, false));
    let mut b1 = p.begin_base(&mut w0);
    add(&mut b1, 10, 5).unwrap();
    let mut b2 = p.begin_base(&mut w1);
    let err = b_of(&mut b2, 10).unwrap_err();
    assert_eq!(err.reason, AbortReason::Deadlock, "alk-R waits for alk-W");
    drop(b2);
    b1.commit().unwrap();
}

// ---- the release rules (§3.4) and the indirect dirty read (Fig. 3.3–3.4) ----

/// Rule 1 (read-after-write across transactions): b2 read x while b1's write of it was
/// uncommitted, so b2's saline lock on x outlives b1's — b2's commit waits for b1's.
#[test]
fn rule_1_a_dirty_reader_releases_after_the_writer() {
    let p: Salt<Base> = open("rc", 50);
    let (mut w0, mut w1) = (p.worker(0, false), p.worker(1, false));
    let mut b1 = p.begin_base(&mut w0);
    add(&mut b1, 10, 5).unwrap();
    b1.end_alkaline().unwrap();
    let mut b2 = p.begin_base(&mut w1);
    assert_eq!(b_of(&mut b2, 10).unwrap(), 5);
    assert_eq!(
        modes(&b2),
        vec![SaltMode::SalR],
        "at rc the read lock would go, but a dirty read keeps saline-R"
    );
    assert_eq!(b2.chain_entries(), 1);
    let meta = p.db().table(KV).meta(p.db().table(KV).lookup(10).unwrap());
    assert_eq!(meta.last(), Some(1), "b2's entry points to b1's (ticket 0)");
    std::thread::scope(|s| {
        let b2_done = s.spawn(move || b2.commit());
        std::thread::sleep(Duration::from_millis(30));
        assert!(!b2_done.is_finished());
        b1.commit().unwrap();
        b2_done.join().unwrap().unwrap();
    });
    assert!(!meta.dirty());
}

/// A clean read (no unfinished BASE write on the record) keeps nothing at rc.
#[test]
fn rule_1_a_clean_read_keeps_no_saline_lock() {
    let p: Salt<Base> = open("rc", 50);
    let mut w = p.worker(0, false);
    let mut b = p.begin_base(&mut w);
    b_of(&mut b, 10).unwrap();
    assert!(modes(&b).is_empty());
    assert_eq!(b.chain_entries(), 0);
    b.commit().unwrap();
}

/// Rule 2 (write-after-read within a transaction): b2 read x dirty, then wrote y: b2's saline
/// lock on y stays until its lock on x went, which waits for b1 — so an ACID reader of y cannot
/// see what was computed from b1's uncommitted x.
#[test]
fn rule_2_a_write_after_a_dirty_read_waits_for_the_read() {
    let p: Salt<Base> = open("rc", 50);
    let (mut w0, mut w1) = (p.worker(0, false), p.worker(1, false));
    let mut b1 = p.begin_base(&mut w0);
    add(&mut b1, 10, 5).unwrap();
    b1.end_alkaline().unwrap();
    std::thread::scope(|s| {
        let (read, read_done) = mpsc::channel();
        let p = &p;
        let b2_done = s.spawn(move || {
            let mut b2 = p.begin_base(&mut w1);
            let x = b_of(&mut b2, 10)?;
            b2.end_alkaline()?;
            add(&mut b2, 20, x)?;
            read.send(()).unwrap();
            b2.commit()
        });
        read_done.recv().unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(!b2_done.is_finished(), "b2 waits to release");
        assert_eq!(
            acid_read(p, 2, 20).unwrap_err().reason,
            AbortReason::Deadlock,
            "y stays saline-W-locked while b1 is unfinished"
        );
        b1.commit().unwrap();
        b2_done.join().unwrap().unwrap();
        assert_eq!(acid_read(p, 2, 20).unwrap(), 5);
    });
}

/// Rule 2 is about *earlier* reads only: a write made before the dirty read is released at once.
#[test]
fn rule_2_a_write_before_the_dirty_read_does_not_wait() {
    let p: Salt<Base> = open("rc", 200);
    let (mut w0, mut w1) = (p.worker(0, false), p.worker(1, false));
    let mut b1 = p.begin_base(&mut w0);
    add(&mut b1, 10, 5).unwrap();
    b1.end_alkaline().unwrap();
    std::thread::scope(|s| {
        let p = &p;
        let (read, read_done) = mpsc::channel();
        let b2_done = s.spawn(move || {
            let mut b2 = p.begin_base(&mut w1);
            add(&mut b2, 20, 1)?;
            b2.end_alkaline()?;
            b_of(&mut b2, 10)?;
            read.send(()).unwrap();
            b2.commit()
        });
        read_done.recv().unwrap();
        // y (20) goes as soon as b2 ends, though b2's saline lock on x waits for b1.
        let mut got = acid_read(p, 2, 20);
        for _ in 0..20 {
            if got.is_ok() {
                break;
            }
            got = acid_read(p, 2, 20);
        }
        assert_eq!(got.unwrap(), 1);
        assert!(!b2_done.is_finished(), "b2's x waits for b1");
        b1.commit().unwrap();
        b2_done.join().unwrap().unwrap();
    });
}

/// Fig. 3.3–3.4 at length 4: b1 writes x0; b2 reads x0, writes x1; b3 reads x1, writes x2; b4
/// reads x2, writes x3. Every BASE transaction but b1 has ended; an ACID reader of x3 (or of any
/// x_i) must not see a value derived from b1's uncommitted write until b1 commits.
#[test]
fn the_indirect_dirty_read_chain_is_prevented_at_length_4() {
    let p: Salt<Base> = open("rc", 30);
    let keys = [10, 20, 30, 40];
    let mut w0 = p.worker(0, false);
    let mut b1 = p.begin_base(&mut w0);
    add(&mut b1, keys[0], 100).unwrap();
    b1.end_alkaline().unwrap();
    std::thread::scope(|s| {
        let p = &p;
        let mut ends = Vec::new();
        for i in 1..keys.len() {
            let (started, wait_started) = mpsc::channel();
            ends.push(s.spawn(move || {
                let mut w = p.worker(i as u32, false);
                let mut b = p.begin_base(&mut w);
                let x = b_of(&mut b, keys[i - 1])?;
                b.end_alkaline()?;
                add(&mut b, keys[i], x + 1)?;
                started.send(()).unwrap();
                b.commit()
            }));
            wait_started.recv().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
        for &k in &keys {
            assert_eq!(
                acid_read(p, 9, k).unwrap_err().reason,
                AbortReason::Deadlock,
                "key {k}: an ACID read would see b1's uncommitted write, directly or not"
            );
        }
        assert!(ends.iter().all(|e| !e.is_finished()));
        b1.commit().unwrap();
        for e in ends {
            e.join().unwrap().unwrap();
        }
        let seen: Vec<i64> = keys.iter().map(|&k| acid_read(p, 9, k).unwrap()).collect();
        assert_eq!(seen, vec![100, 101, 102, 103]);
    });
}

// ---- FIFO: no ACID starvation ----

#[test]
fn fifo_queues_keep_a_stream_of_base_transactions_from_starving_an_acid_one() {
    let p: Salt<Base> = open("rc", 5_000);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let base_commits = AtomicU64::new(0);
    std::thread::scope(|s| {
        let (p, stop, base_commits) = (&p, &stop, &base_commits);
        // Three clients run BASE increments of key 10 back to back, each holding its saline lock
        // a while: at every moment some BASE transaction holds key 10.
        for t in 0..3u32 {
            s.spawn(move || {
                let mut w = p.worker(t, false);
                while !stop.load(Ordering::Relaxed) {
                    let mut b = p.begin_base(&mut w);
                    if add(&mut b, 10, 1).is_err() {
                        continue;
                    }
                    b.end_alkaline().unwrap();
                    std::thread::sleep(Duration::from_millis(2));
                    b.commit().unwrap();
                    base_commits.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        while base_commits.load(Ordering::Relaxed) < 10 {
            std::thread::sleep(Duration::from_millis(1));
        }
        // The ACID reader queues behind the saline holders, and the BASE requests that come after
        // it queue behind it: it gets in well before its 5-second timeout.
        let start = std::time::Instant::now();
        let got = acid_read(p, 3, 10);
        let waited = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        assert!(got.is_ok(), "starved: {got:?} after {waited:?}");
        assert!(waited < Duration::from_secs(2), "waited {waited:?}");
    });
}

#[test]
fn an_alkaline_request_queues_behind_a_waiting_acid_one() {
    let p: Salt<Base> = open("rc", 5_000);
    let (mut w0, mut w1) = (p.worker(0, false), p.worker(1, false));
    let mut b1 = p.begin_base(&mut w0);
    add(&mut b1, 10, 1).unwrap();
    b1.end_alkaline().unwrap();
    std::thread::scope(|s| {
        let p = &p;
        let acid = s.spawn(move || acid_read(p, 2, 10));
        std::thread::sleep(Duration::from_millis(30));
        let base = s.spawn(move || {
            let mut b2 = p.begin_base(&mut w1);
            add(&mut b2, 10, 1)?;
            b2.commit()
        });
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            !base.is_finished(),
            "alkaline-W is compatible with the held saline-W, but may not overtake the ACID waiter"
        );
        assert!(!acid.is_finished());
        b1.commit().unwrap();
        assert_eq!(
            acid.join().unwrap().unwrap(),
            1,
            "the ACID reader went first"
        );
        base.join().unwrap().unwrap();
    });
    assert_eq!(acid_read(&p, 2, 10).unwrap(), 2);
}

// ---- accept semantics ----

/// A program of one piece per step; `starts` marks alkaline boundaries; piece `fail` fails with a
/// user abort (once, or always); the handler's calls are kept.
#[derive(Default)]
struct Steps {
    ops: Vec<(u64, i64)>,
    starts: Vec<usize>,
    fail: Option<(usize, bool)>,
    handled: Vec<(usize, AbortReason)>,
    after: Option<AfterFailure>,
    runs: Vec<usize>,
}

impl Program for Steps {
    fn name(&self) -> &'static str {
        "Steps"
    }
    fn pieces(&self) -> usize {
        self.ops.len()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        out.push(Access::update(
            KV,
            self.ops[piece].0,
            ColumnSet::one(B),
            ColumnSet::one(B),
        ));
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        self.runs.push(piece);
        let (k, d) = self.ops[piece];
        add(tx, k, d)?;
        if let Some((f, always)) = self.fail {
            if f == piece {
                if !always {
                    self.fail = None;
                }
                return Err(Abort::user("the step fails"));
            }
        }
        Ok(())
    }
    fn alkaline_starts(&self, out: &mut Vec<usize>) {
        out.extend(&self.starts);
    }
    fn alkaline_failed(&mut self, sub: usize, abort: &Abort) -> AfterFailure {
        self.handled.push((sub, abort.reason));
        self.after.unwrap_or(AfterFailure::End)
    }
}

fn bs<K: Kind>(p: &Salt<K>) -> Vec<i64> {
    [10, 20, 30]
        .iter()
        .map(|&k| acid_read(p, 7, k).unwrap())
        .collect()
}

#[test]
fn an_accepted_base_transaction_commits_and_hands_a_later_failure_to_its_handler() {
    for (after, want) in [
        (AfterFailure::Continue, vec![1, 0, 100]),
        (AfterFailure::End, vec![1, 0, 0]),
    ] {
        let p: Salt<Base> = open("rc", 100);
        let mut w = p.worker(0, false);
        let mut prog = Steps {
            ops: vec![(10, 1), (20, 10), (30, 100)],
            starts: vec![1, 2],
            fail: Some((1, true)),
            after: Some(after),
            ..Steps::default()
        };
        p.execute(&mut w, &mut prog).expect("accepted: it commits");
        assert_eq!(prog.handled, vec![(1, AbortReason::User)]);
        assert_eq!(
            bs(&p),
            want,
            "{after:?}: the failed subtransaction was rolled back"
        );
    }
}

#[test]
fn a_failure_before_acceptance_rolls_the_whole_base_transaction_back() {
    let p: Salt<Base> = open("rc", 100);
    let mut w = p.worker(0, false);
    let mut prog = Steps {
        ops: vec![(10, 1), (20, 10), (30, 100)],
        starts: vec![2],
        fail: Some((1, true)),
        ..Steps::default()
    };
    let err = p.execute(&mut w, &mut prog).unwrap_err();
    assert_eq!(err.reason, AbortReason::User);
    assert!(prog.handled.is_empty(), "no handler before acceptance");
    assert_eq!(bs(&p), vec![0, 0, 0]);
}

#[test]
fn an_accepted_base_transaction_runs_a_timed_out_subtransaction_again_until_it_commits() {
    let p: Salt<Base> = open("rc", 20);
    let mut w1 = p.worker(1, false);
    std::thread::scope(|s| {
        let p = &p;
        // An ACID transaction holds key 20 for a while: the BASE transaction's second alkaline
        // subtransaction times out several times, is rolled back and run again each time.
        let mut w0 = p.worker(0, false);
        let mut acid = p.begin(&mut w0);
        add(&mut acid, 20, 1000).unwrap();
        let base = s.spawn(move || {
            let mut prog = Steps {
                ops: vec![(10, 1), (30, 100), (20, 10)],
                starts: vec![1],
                ..Steps::default()
            };
            p.execute(&mut w1, &mut prog).map(|()| prog)
        });
        std::thread::sleep(Duration::from_millis(150));
        acid.commit().unwrap();
        let prog = base.join().unwrap().expect("accepted: it commits");
        assert!(
            prog.handled.is_empty(),
            "a concurrency abort is retried, not handed over"
        );
        let retries = prog.runs.iter().filter(|&&r| r == 2).count();
        assert!(retries > 1, "the subtransaction ran {retries} times");
        assert_eq!(
            prog.runs.iter().filter(|&&r| r == 0).count(),
            1,
            "accepted once: the first subtransaction never runs again"
        );
    });
    assert_eq!(
        bs(&p),
        vec![1, 1010, 100],
        "each write once: retries were rolled back"
    );
}

// ---- local transactions (§3.5) ----

#[test]
fn salt_local_turns_a_one_record_subtransaction_saline_right_after_its_operation() {
    let p: Salt<Local> = open("rc", 50);
    let (mut w0, mut w1) = (p.worker(0, false), p.worker(1, false));
    let mut b1 = p.begin_base(&mut w0);
    b1.set_local(true);
    add(&mut b1, 10, 5).unwrap();
    assert_eq!(
        modes(&b1),
        vec![SaltMode::SalW],
        "saline before the subtransaction ends"
    );
    std::thread::scope(|s| {
        let p = &p;
        let b2 = s.spawn(move || {
            let mut b2 = p.begin_base(&mut w1);
            add(&mut b2, 10, 1)?;
            b2.commit()
        });
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            !b2.is_finished(),
            "its write went at once; it waits only to release"
        );
        b1.commit().unwrap();
        b2.join()
            .unwrap()
            .expect("another alkaline write goes at once");
    });

    // Which subtransactions are local: one piece declaring one record.
    let prog = Steps {
        ops: vec![(10, 1), (20, 1)],
        ..Steps::default()
    };
    let mut scratch = Vec::new();
    assert!(p.is_local(&prog, 0..1, &mut scratch));
    assert!(!p.is_local(&prog, 0..2, &mut scratch));
    let plain: Salt<Base> = open("rc", 50);
    assert!(
        !plain.is_local(&prog, 0..1, &mut scratch),
        "only salt-local"
    );
}

// ---- delays ----

#[test]
fn the_operation_and_commit_delays_are_slept_with_locks_held() {
    let config = ProtocolConfig::with_threads(1)
        .with_knob(&OP_DELAY_KNOB, "3000")
        .unwrap()
        .with_knob(&COMMIT_DELAY_KNOB, "10000")
        .unwrap();
    let p: Salt<AcidOnly> = Salt::open(small_db(), &config);
    let mut w = p.worker(0, false);
    let start = std::time::Instant::now();
    let mut prog = Steps {
        ops: vec![(10, 1), (20, 1)],
        ..Steps::default()
    };
    p.execute(&mut w, &mut prog).unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(16),
        "2 × 3 ms + 10 ms"
    );
}

// ---- checked multi-threaded histories ----

/// [`Mixed`]'s programs, a share of them BASE-ified with every piece its own alkaline
/// subtransaction.
struct BaseMixed {
    mixed: Mixed,
    base_share: f64,
}

struct BaseMix {
    inner: MixProgram,
    base: bool,
}

impl Program for BaseMix {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn pieces(&self) -> usize {
        self.inner.pieces()
    }
    fn declare(&self, piece: usize, out: &mut Vec<Access>) {
        self.inner.declare(piece, out)
    }
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        self.inner.depends_on(piece, out)
    }
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()> {
        self.inner.run_piece(piece, tx)
    }
    fn alkaline_starts(&self, out: &mut Vec<usize>) {
        if self.base {
            out.extend(1..self.inner.pieces());
        }
    }
}

impl Workload for BaseMixed {
    type Program = BaseMix;
    type Gen = (rand::rngs::SmallRng, u32);
    fn name(&self) -> &'static str {
        "base-mixed-test"
    }
    fn params(&self) -> serde_json::Value {
        serde_json::json!({})
    }
    fn load<M: Default + Send + Sync>(
        &self,
        db: &mut crate::storage::Database<M>,
    ) -> Result<(), LoadError> {
        self.mixed.load(db)
    }
    fn generator(&self, thread: u32, seed: u64) -> Self::Gen {
        self.mixed.generator(thread, seed)
    }
    fn program(&self) -> BaseMix {
        BaseMix {
            inner: MixProgram::default(),
            base: false,
        }
    }
    fn next(&self, gen: &mut Self::Gen, p: &mut BaseMix) {
        use rand::Rng;
        self.mixed.next(gen, &mut p.inner);
        p.base = gen.0.gen_bool(self.base_share);
    }
}

fn verify_at<P: Protocol>(level: &str, base_share: f64) -> crate::harness::Verified {
    // Deadlocks (the programs lock in random order) are broken by the lock-wait timeout: short,
    // so that the test does not spend its time waiting for them.
    let cfg = VerifyConfig {
        protocol: ProtocolConfig {
            lock_wait_timeout: Duration::from_millis(5),
            ..ProtocolConfig::with_threads(4)
        }
        .with_knob(&LEVEL_KNOB, level)
        .unwrap(),
        txns: 6_000,
        seed: 5,
        prefetch: true,
    };
    let w = BaseMixed {
        mixed: testkit::contended(),
        base_share,
    };
    verify::run::<P, BaseMixed>(&w, &cfg).unwrap()
}

#[test]
fn acid_2pl_at_serializable_gives_serializable_histories() {
    let v = verify_at::<Salt<AcidOnly>>("ser", 0.5);
    assert!(v.report.is_serializable(), "{}", v.report);
    assert!(v.report.anomalies.is_empty(), "{}", v.report);
    assert!(v.report.edges > 6_000, "too few dependencies");
}

#[test]
fn acid_2pl_passes_the_kits_checked_history_at_serializable() {
    // The kit's contended history, interactive transactions beside the worker loop.
    let cfg = VerifyConfig {
        protocol: ProtocolConfig {
            lock_wait_timeout: Duration::from_millis(5),
            ..ProtocolConfig::with_threads(4)
        }
        .with_knob(&LEVEL_KNOB, "ser")
        .unwrap(),
        txns: 6_000,
        seed: 3,
        prefetch: true,
    };
    let v = verify::run::<Salt<AcidOnly>, Mixed>(&testkit::contended(), &cfg).unwrap();
    assert_eq!(v.report.committed, 6_000);
    assert!(v.report.anomalies.is_empty(), "{}", v.report);
}

/// With half the programs BASE, the history of ACID transactions and alkaline subtransactions
/// (each recorded as its own transaction) is serializable at `ser`.
#[test]
fn salt_at_serializable_gives_serializable_histories_of_acid_and_alkaline_units() {
    for v in [
        verify_at::<Salt<Base>>("ser", 0.5),
        verify_at::<Salt<Local>>("ser", 0.5),
    ] {
        assert!(v.report.is_serializable(), "{}", v.report);
        assert!(v.report.anomalies.is_empty(), "{}", v.report);
        assert!(
            v.report.committed > 6_000,
            "BASE programs record one transaction per alkaline subtransaction"
        );
    }
}

#[test]
fn salt_at_read_committed_has_no_dirty_write_or_read() {
    let v = verify_at::<Salt<Base>>("rc", 0.7);
    for k in [AnomalyKind::G0, AnomalyKind::G1a, AnomalyKind::G1c] {
        assert!(!v.report.has(k), "{k:?}: {}", v.report);
    }
}

/// Transfers between 8 accounts of 100 (BASE: debit, then credit in its own alkaline
/// subtransaction) against ACID audits that sum every account: an audit never sees a transfer
/// half done (at `rr` and `ser`, where an ACID sum is repeatable at all).
#[test]
fn an_acid_audit_never_sees_half_a_base_transfer() {
    const ACCOUNTS: u64 = 8;
    for level in ["rr", "ser"] {
        let config = ProtocolConfig {
            threads: 4,
            lock_wait_timeout: Duration::from_millis(20),
            ..ProtocolConfig::default()
        }
        .with_knob(&LEVEL_KNOB, level)
        .unwrap();
        let p: Salt<Base> = Salt::open(small_db(), &config);
        let key = |i: u64| i * 10;
        let mut w = p.worker(0, false);
        let mut tx = p.begin(&mut w);
        for i in 0..ACCOUNTS {
            add(&mut tx, key(i), 100).unwrap();
        }
        tx.commit().unwrap();
        drop(w);
        let audits = AtomicU64::new(0);
        std::thread::scope(|s| {
            let (p, audits) = (&p, &audits);
            for t in 0..3u32 {
                s.spawn(move || {
                    let mut w = p.worker(t, false);
                    let mut x = 0x2545_F491u64 * (t as u64 + 1);
                    for _ in 0..300 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let from = x % ACCOUNTS;
                        let to = (from + 1 + (x >> 8) % (ACCOUNTS - 1)) % ACCOUNTS;
                        let mut prog = Steps {
                            ops: vec![(key(from), -7), (key(to), 7)],
                            starts: vec![1],
                            ..Steps::default()
                        };
                        while p.execute(&mut w, &mut prog).is_err() {}
                    }
                });
            }
            s.spawn(move || {
                let mut w = p.worker(3, false);
                while audits.load(Ordering::Relaxed) < 150 {
                    let mut tx = p.begin(&mut w);
                    let sum: TxResult<i64> = (0..ACCOUNTS).map(|i| b_of(&mut tx, key(i))).sum();
                    if let Ok(sum) = sum {
                        assert_eq!(sum, 100 * ACCOUNTS as i64, "{level}: half a transfer seen");
                        tx.commit().unwrap();
                        audits.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        });
        assert_eq!(bs_sum(&p, ACCOUNTS), 100 * ACCOUNTS as i64);
    }
}

fn bs_sum<K: Kind>(p: &Salt<K>, accounts: u64) -> i64 {
    (0..accounts)
        .map(|i| acid_read(p, 5, i * 10).unwrap())
        .sum()
}
