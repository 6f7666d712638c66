//! The lock manager with threads: who waits for whom, timeouts, release, isolation levels, errors.
//! Every scenario runs under each cumulative optimization step of Fig. 3.

use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use ordo_predicate::lock::row_predicate;
use ordo_predicate::{
    ColumnSet, Config, Error, Isolation, LockManager, Optimizations, Predicate, Prepared,
    RelationSpec, Request, StatementKind, Step, Template, Txn, Waiter,
};

use StatementKind::*;

/// Long enough that a wait which should end never times out on a loaded machine.
const PATIENT: Config = Config {
    timeout: Duration::from_secs(20),
    jitter: Duration::from_millis(1),
};
/// Short, for waits that should time out.
const IMPATIENT: Config = Config {
    timeout: Duration::from_millis(30),
    jitter: Duration::from_millis(30),
};
/// How long a blocked acquisition is watched to see that it stays blocked.
const BLOCKED: Duration = Duration::from_millis(150);

/// Relation 0: `t(k, x, v)` keyed by k, 8 buckets. Relation 1: `u(k, x)` keyed by k.
fn manager(step: Step, config: Config) -> LockManager {
    let relations = vec![
        RelationSpec::new("t", 3, Some(0), 8),
        RelationSpec::new("u", 2, Some(0), 8),
    ];
    LockManager::new(
        relations,
        templates(),
        Optimizations::cumulative(step),
        config,
    )
    .unwrap()
}

/// Prepared templates: 0 reads t by key, 1 updates t.v by key, 2 scans t by x range.
fn templates() -> Vec<Template> {
    let t = |kind, p: &str, read: &[u16], write: &[u16]| Template {
        relation: 0,
        kind,
        predicate: Prepared::parse_with(p, column).unwrap(),
        read: ColumnSet::of(read),
        write: ColumnSet::of(write),
    };
    vec![
        t(Select, "k = $1", &[1, 2], &[]),
        t(Update, "k = $1", &[], &[2]),
        t(Select, "x BETWEEN $1 AND $2", &[0, 1, 2], &[]),
    ]
}

fn column(name: &str) -> Option<u16> {
    ["k", "x", "v"]
        .iter()
        .position(|c| *c == name)
        .map(|i| i as u16)
}

fn p(s: &str) -> Predicate {
    Predicate::parse_with(s, column).unwrap()
}

fn req<'a>(
    kind: StatementKind,
    predicate: &'a Predicate,
    read: &[u16],
    write: &[u16],
) -> Request<'a> {
    Request {
        relation: 0,
        kind,
        predicate,
        read: ColumnSet::of(read),
        write: ColumnSet::of(write),
    }
}

/// Run `f` (an acquisition) on another thread; the receiver gets its result.
fn spawn<F>(f: F) -> mpsc::Receiver<Result<(), Error>>
where
    F: FnOnce() -> Result<(), Error> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx
}

/// Begin a transaction on another thread and acquire with `f`; the receiver gets the result at once,
/// and the transaction releases its locks ("commits") when the sender is signalled or dropped.
fn spawn_holding<F>(
    plm: &Arc<LockManager>,
    f: F,
) -> (mpsc::Receiver<Result<(), Error>>, mpsc::Sender<()>)
where
    F: FnOnce(&LockManager, &mut Txn) -> Result<(), Error> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let (commit, wait) = mpsc::channel::<()>();
    let plm = plm.clone();
    thread::spawn(move || {
        let mut t = plm.begin(Isolation::Serializable);
        let _ = tx.send(f(&plm, &mut t));
        let _ = wait.recv();
        plm.release(&mut t);
    });
    (rx, commit)
}

/// Wait (up to 10 s) for the active sets to empty: threads release asynchronously.
fn drained(plm: &LockManager) -> bool {
    (0..1000).any(|_| {
        thread::sleep(Duration::from_millis(10));
        plm.active() == 0
    })
}

fn blocked(rx: &mpsc::Receiver<Result<(), Error>>) -> bool {
    rx.recv_timeout(BLOCKED).is_err()
}

fn granted(rx: &mpsc::Receiver<Result<(), Error>>) -> bool {
    matches!(rx.recv_timeout(Duration::from_secs(10)), Ok(Ok(())))
}

#[test]
fn a_scan_blocks_an_insert_inside_its_range_and_not_outside() {
    for step in Step::ALL {
        let plm = Arc::new(manager(step, PATIENT));
        let mut reader = plm.begin(Isolation::Serializable);
        let scan = p("x BETWEEN 10 AND 20");
        plm.acquire(&mut reader, req(Select, &scan, &[0, 1, 2], &[]))
            .unwrap();

        let outside = {
            let plm = plm.clone();
            spawn(move || {
                let mut w = plm.begin(Isolation::Serializable);
                let r = plm.acquire(&mut w, req(Insert, &row_predicate(&[1, 25, 0]), &[], &[]));
                plm.release(&mut w);
                r
            })
        };
        assert!(granted(&outside), "{step:?}: x = 25 is outside the scan");

        let (inside, commit) = spawn_holding(&plm, |plm, w| {
            plm.acquire(w, req(Insert, &row_predicate(&[2, 15, 0]), &[], &[]))
        });
        assert!(blocked(&inside), "{step:?}: x = 15 is inside the scan");
        plm.release(&mut reader);
        assert!(granted(&inside), "{step:?}: released by the scan's release");
        commit.send(()).unwrap();
    }
}

#[test]
fn scans_conflict_with_key_updates_in_every_bucket() {
    for step in Step::ALL {
        let plm = manager(step, IMPATIENT);
        let mut scanner = plm.begin(Isolation::Serializable);
        let scan = p("v > 0");
        plm.acquire(&mut scanner, req(Select, &scan, &[0, 1, 2], &[]))
            .unwrap();
        for key in 0..16 {
            let mut w = plm.begin(Isolation::Serializable);
            let upd = p(&format!("k = {key}"));
            assert_eq!(
                plm.acquire(&mut w, req(Update, &upd, &[], &[2])),
                Err(Error::Timeout),
                "{step:?} key {key}"
            );
            plm.release(&mut w);
            // The prepared form of the same update.
            let mut w = plm.begin(Isolation::Serializable);
            assert_eq!(
                plm.acquire_prepared(&mut w, 1, &[key]),
                Err(Error::Timeout),
                "{step:?} key {key}"
            );
            plm.release(&mut w);
        }
        // A write scan blocks a point read in any bucket too.
        plm.release(&mut scanner);
        let mut writer = plm.begin(Isolation::Serializable);
        plm.acquire(&mut writer, req(Update, &scan, &[], &[1]))
            .unwrap();
        for key in 0..16 {
            let mut r = plm.begin(Isolation::Serializable);
            assert_eq!(
                plm.acquire_prepared(&mut r, 0, &[key]),
                Err(Error::Timeout),
                "{step:?} key {key}"
            );
            plm.release(&mut r);
        }
        plm.release(&mut writer);
        assert_eq!(plm.active(), 0);
    }
}

#[test]
fn different_rows_and_relations_do_not_wait() {
    for step in Step::ALL {
        let plm = manager(step, IMPATIENT);
        let mut a = plm.begin(Isolation::Serializable);
        let mut b = plm.begin(Isolation::Serializable);
        plm.acquire_prepared(&mut a, 1, &[1]).unwrap();
        plm.acquire_prepared(&mut b, 1, &[2]).unwrap();
        plm.acquire_prepared(&mut b, 0, &[3]).unwrap();
        let all = p("TRUE");
        plm.acquire(
            &mut b,
            Request {
                relation: 1,
                kind: Update,
                predicate: &all,
                read: ColumnSet::NONE,
                write: ColumnSet::of(&[1]),
            },
        )
        .unwrap();
        assert_eq!(b.waits(), 0);
        plm.release(&mut a);
        plm.release(&mut b);
    }
}

#[test]
fn disjoint_columns_wait_only_without_the_column_rule() {
    for step in Step::ALL {
        let plm = manager(step, IMPATIENT);
        let mut a = plm.begin(Isolation::Serializable);
        let mut b = plm.begin(Isolation::Serializable);
        let row = p("k = 1");
        plm.acquire(&mut a, req(Select, &row, &[1], &[])).unwrap(); // reads k, x
        let r = plm.acquire(&mut b, req(Update, &row, &[], &[2])); // writes v
        assert_eq!(
            r.is_ok(),
            Optimizations::cumulative(step).column_level,
            "{step:?}"
        );
        plm.release(&mut a);
        plm.release(&mut b);
    }
}

#[test]
fn a_newcomer_waits_only_for_locks_present_when_it_arrived() {
    for step in Step::ALL {
        let plm = Arc::new(manager(step, PATIENT));
        let row = p("k = 1");
        // Z holds a write on row 1.
        let mut z = plm.begin(Isolation::Serializable);
        plm.acquire(&mut z, req(Update, &row, &[], &[1, 2]))
            .unwrap();
        // X arrives: a read of row 1, waits for Z.
        let (x, x_done) = spawn_holding(&plm, |plm, x| {
            plm.acquire(x, req(Select, &p("k = 1"), &[1, 2], &[]))
        });
        assert!(blocked(&x));
        // Y arrives after X: a write of row 1, waits for Z and for X.
        let (y, y_done) = spawn_holding(&plm, |plm, y| {
            plm.acquire(y, req(Update, &p("k = 1"), &[], &[2]))
        });
        assert!(blocked(&y));
        // Z commits: X goes ahead although Y, which conflicts with it, is in the set — Y came later.
        plm.release(&mut z);
        assert!(granted(&x), "{step:?}: X must not wait for the later Y");
        assert!(blocked(&y), "{step:?}: Y still waits for X");
        x_done.send(()).unwrap();
        assert!(granted(&y), "{step:?}");
        drop(y_done);
        assert!(drained(&plm));
    }
}

/// Acquire `first` then `second` (two prepared updates by key), returning the second's result;
/// the locks stay held until the returned channel is dropped or signalled.
fn two_updates(
    plm: &Arc<LockManager>,
    first: i64,
    second: i64,
) -> (mpsc::Receiver<Result<(), Error>>, mpsc::Sender<()>) {
    let (go, wait) = mpsc::channel::<()>();
    let plm = plm.clone();
    let rx = spawn(move || {
        let mut tx = plm.begin(Isolation::Serializable);
        let mut attempts = 0;
        loop {
            attempts += 1;
            let r = plm.acquire_prepared(&mut tx, 1, &[first]).and_then(|()| {
                thread::sleep(Duration::from_millis(50)); // both hold their first lock
                plm.acquire_prepared(&mut tx, 1, &[second])
            });
            match r {
                Ok(()) => break,
                Err(Error::Timeout) => {
                    // Roll back, release, restart (after a pause, so the other side can finish).
                    plm.release(&mut tx);
                    assert!(attempts < 50, "livelock");
                    thread::sleep(Duration::from_millis(10 * attempts));
                }
                Err(e) => return Err(e),
            }
        }
        let _ = wait.recv_timeout(Duration::from_millis(10));
        plm.release(&mut tx); // "commit"
        Ok(())
    });
    (rx, go)
}

#[test]
fn opposite_order_waits_time_out_and_the_restart_commits() {
    for step in Step::ALL {
        let plm = Arc::new(manager(step, IMPATIENT));
        // A direct look at the timeout first.
        let mut a = plm.begin(Isolation::Serializable);
        let mut b = plm.begin(Isolation::Serializable);
        plm.acquire_prepared(&mut a, 1, &[1]).unwrap();
        plm.acquire_prepared(&mut b, 1, &[2]).unwrap();
        let b_waits = {
            let plm = plm.clone();
            spawn(move || {
                let r = plm.acquire_prepared(&mut b, 1, &[1]);
                plm.release(&mut b);
                r
            })
        };
        let r = plm.acquire_prepared(&mut a, 1, &[2]);
        let other = b_waits.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(
            r == Err(Error::Timeout) || other == Err(Error::Timeout),
            "{step:?}: one of them times out"
        );
        plm.release(&mut a);
        // And the full worker loop: both transactions eventually commit.
        let (x, gx) = two_updates(&plm, 10, 11);
        let (y, gy) = two_updates(&plm, 11, 10);
        gx.send(()).ok();
        gy.send(()).ok();
        assert_eq!(
            x.recv_timeout(Duration::from_secs(20)).unwrap(),
            Ok(()),
            "{step:?}"
        );
        assert_eq!(
            y.recv_timeout(Duration::from_secs(20)).unwrap(),
            Ok(()),
            "{step:?}"
        );
        assert_eq!(plm.active(), 0);
    }
}

#[test]
fn release_wakes_every_waiter() {
    for step in Step::ALL {
        let plm = Arc::new(manager(step, PATIENT));
        let mut w = plm.begin(Isolation::Serializable);
        plm.acquire(&mut w, req(Update, &p("k = 7"), &[], &[1, 2]))
            .unwrap();
        let readers: Vec<_> = (0..3)
            .map(|i| {
                let plm = plm.clone();
                spawn(move || {
                    let mut r = plm.begin(Isolation::Serializable);
                    let res = if i == 0 {
                        plm.acquire_prepared(&mut r, 0, &[7])
                    } else {
                        plm.acquire(&mut r, req(Select, &p("k >= 5 AND k <= 9"), &[1, 2], &[]))
                    };
                    plm.release(&mut r);
                    res
                })
            })
            .collect();
        for r in &readers {
            assert!(blocked(r));
        }
        plm.release(&mut w);
        for r in &readers {
            assert!(granted(r), "{step:?}");
        }
    }
}

#[test]
fn locks_are_held_until_release() {
    let plm = manager(Step::Full, IMPATIENT);
    let mut a = plm.begin(Isolation::Serializable);
    plm.acquire_prepared(&mut a, 1, &[3]).unwrap();
    plm.end_statement(&mut a); // a statement's end releases nothing at serializable
    assert_eq!(a.held(), 1);
    let mut b = plm.begin(Isolation::Serializable);
    assert_eq!(plm.acquire_prepared(&mut b, 0, &[3]), Err(Error::Timeout));
    assert_eq!(b.held(), 1, "the timed-out lock stays until release");
    plm.release(&mut b);
    plm.release(&mut a);
    let mut c = plm.begin(Isolation::Serializable);
    plm.acquire_prepared(&mut c, 0, &[3]).unwrap();
    plm.release(&mut c);
    assert_eq!(plm.active(), 0);
}

/// Hold a read lock of `isolation` with `predicate`, then try an insert (and a delete, and an update)
/// of row (k = 5, x = 15) from another transaction: which are granted?
fn passes(step: Step, isolation: Isolation, predicate: &str) -> (bool, bool, bool) {
    let plm = manager(step, IMPATIENT);
    let mut reader = plm.begin(isolation);
    let scan = p(predicate);
    plm.acquire(&mut reader, req(Select, &scan, &[0, 1, 2], &[]))
        .unwrap();
    let try_ = |kind, pred: &Predicate, write: &[u16]| {
        let mut w = plm.begin(Isolation::Serializable);
        let ok = plm.acquire(&mut w, req(kind, pred, &[], write)).is_ok();
        plm.release(&mut w);
        ok
    };
    let insert = try_(Insert, &row_predicate(&[5, 15, 0]), &[]);
    let delete = try_(Delete, &p("k = 5"), &[]);
    let update = try_(Update, &p("k = 5"), &[1, 2]);
    plm.release(&mut reader);
    (insert, delete, update)
}

#[test]
fn isolation_levels_pass_what_section_5_2_allows() {
    for step in Step::ALL {
        use Isolation::*;
        // Serializable: a range lock stops inserts, deletes and updates.
        assert_eq!(
            passes(step, Serializable, "x BETWEEN 10 AND 20"),
            (false, false, false),
            "{step:?}"
        );
        // Repeatable read: inserts and deletes pass range locks (phantoms), updates do not…
        assert_eq!(
            passes(step, RepeatableRead, "x BETWEEN 10 AND 20"),
            (true, true, false),
            "{step:?}"
        );
        // …and nothing passes an equality lock.
        assert_eq!(
            passes(step, RepeatableRead, "k = 5"),
            (false, false, false),
            "{step:?}"
        );
        assert_eq!(
            passes(step, RepeatableRead, "k = 5 AND x > 0"),
            (false, false, false),
            "{step:?}"
        );
        // Read committed treats conflicts as repeatable read does.
        assert_eq!(
            passes(step, ReadCommitted, "x BETWEEN 10 AND 20"),
            (true, true, false),
            "{step:?}"
        );
        // Read uncommitted takes no read lock at all.
        assert_eq!(
            passes(step, ReadUncommitted, "k = 5"),
            (true, true, true),
            "{step:?}"
        );
    }
}

#[test]
fn read_committed_releases_select_locks_at_statement_end() {
    let plm = Arc::new(manager(Step::Full, PATIENT));
    let mut r = plm.begin(Isolation::ReadCommitted);
    plm.acquire_prepared(&mut r, 0, &[4]).unwrap();
    plm.acquire_prepared(&mut r, 1, &[9]).unwrap(); // its own write: held to commit
    assert_eq!(r.held(), 2);
    let writer = {
        let plm = plm.clone();
        spawn(move || {
            let mut w = plm.begin(Isolation::Serializable);
            let res = plm.acquire_prepared(&mut w, 1, &[4]);
            plm.release(&mut w);
            res
        })
    };
    assert!(blocked(&writer));
    plm.end_statement(&mut r);
    assert!(granted(&writer), "the read lock went with the statement");
    assert_eq!(r.held(), 1, "the write stays");
    let mut u = plm.begin(Isolation::ReadUncommitted);
    plm.acquire_prepared(&mut u, 0, &[9]).unwrap(); // no read lock: does not wait for r's write
    assert_eq!(u.held(), 0);
    plm.release(&mut r);
}

#[test]
fn prepared_and_ad_hoc_requests_meet() {
    for step in Step::ALL {
        let plm = manager(step, IMPATIENT);
        let mut scan = plm.begin(Isolation::Serializable);
        plm.acquire_prepared(&mut scan, 2, &[10, 20]).unwrap(); // x BETWEEN 10 AND 20
        let mut w = plm.begin(Isolation::Serializable);
        assert_eq!(
            plm.acquire(&mut w, req(Insert, &row_predicate(&[3, 12, 0]), &[], &[])),
            Err(Error::Timeout)
        );
        plm.release(&mut w);
        plm.acquire(&mut w, req(Insert, &row_predicate(&[3, 21, 0]), &[], &[]))
            .unwrap();
        plm.release(&mut w);
        // An empty range locks nothing.
        let mut e = plm.begin(Isolation::Serializable);
        plm.acquire_prepared(&mut e, 2, &[20, 10]).unwrap();
        plm.acquire(&mut w, req(Update, &p("TRUE"), &[], &[0, 1, 2]))
            .unwrap_err();
        plm.release(&mut w);
        plm.release(&mut scan);
        plm.acquire(&mut w, req(Update, &p("TRUE"), &[], &[0, 1, 2]))
            .unwrap();
        plm.release(&mut w);
        plm.release(&mut e);
    }
}

#[test]
fn malformed_requests_are_errors_and_take_no_lock() {
    let plm = manager(Step::Full, IMPATIENT);
    let mut t: Txn = plm.begin(Isolation::Serializable);
    let ok = p("k = 1");
    let bad_col = Predicate::eq(3, 1);
    let empty = Predicate::and(vec![]);
    assert_eq!(
        plm.acquire(&mut t, req(Select, &bad_col, &[], &[])),
        Err(Error::ColumnOutOfRange {
            column: 3,
            width: 3
        })
    );
    assert_eq!(
        plm.acquire(&mut t, req(Select, &empty, &[], &[])),
        Err(Error::EmptyConnective("AND"))
    );
    assert_eq!(
        plm.acquire(&mut t, req(Update, &ok, &[], &[5])),
        Err(Error::ColumnOutOfRange {
            column: 5,
            width: 3
        })
    );
    assert_eq!(
        plm.acquire(&mut t, req(Update, &ok, &[], &[70])),
        Err(Error::ColumnOutOfRange {
            column: 63,
            width: 3
        })
    );
    let other = Request {
        relation: 9,
        ..req(Select, &ok, &[], &[])
    };
    assert_eq!(plm.acquire(&mut t, other), Err(Error::UnknownRelation(9)));
    assert_eq!(
        plm.acquire_prepared(&mut t, 7, &[1]),
        Err(Error::UnknownTemplate(7))
    );
    assert_eq!(
        plm.acquire_prepared(&mut t, 2, &[1]),
        Err(Error::Arity {
            template: 2,
            expected: 2,
            given: 1
        })
    );
    // Read uncommitted takes no read lock, but still refuses a malformed one.
    let mut ru = plm.begin(Isolation::ReadUncommitted);
    assert_eq!(
        plm.acquire(&mut ru, req(Select, &bad_col, &[], &[])),
        Err(Error::ColumnOutOfRange {
            column: 3,
            width: 3
        })
    );
    assert_eq!(
        plm.acquire_prepared(&mut ru, 0, &[]),
        Err(Error::Arity {
            template: 0,
            expected: 1,
            given: 0
        })
    );
    assert_eq!(t.held(), 0);
    assert_eq!(plm.active(), 0);
    // Bad configurations.
    let cfg = Config::default();
    let opts = Optimizations::full();
    assert!(matches!(
        LockManager::new(vec![RelationSpec::new("z", 0, None, 1)], vec![], opts, cfg),
        Err(Error::BadRelation { .. })
    ));
    assert!(matches!(
        LockManager::new(vec![RelationSpec::new("z", 65, None, 1)], vec![], opts, cfg),
        Err(Error::BadRelation { .. })
    ));
    assert!(matches!(
        LockManager::new(
            vec![RelationSpec::new("z", 2, Some(2), 1)],
            vec![],
            opts,
            cfg
        ),
        Err(Error::BadRelation { .. })
    ));
    assert!(matches!(
        LockManager::new(vec![RelationSpec::new("z", 2, None, 0)], vec![], opts, cfg),
        Err(Error::BadRelation { .. })
    ));
    let bad_template = Template {
        relation: 0,
        kind: Select,
        predicate: Prepared::parse("c5 = $1").unwrap(),
        read: ColumnSet::NONE,
        write: ColumnSet::NONE,
    };
    assert!(matches!(
        LockManager::new(
            vec![RelationSpec::new("z", 2, None, 1)],
            vec![bad_template],
            opts,
            cfg
        ),
        Err(Error::ColumnOutOfRange {
            column: 5,
            width: 2
        })
    ));
}

#[test]
fn many_threads_no_lost_wakeups() {
    // Counter increments under write locks on a handful of keys, with scans mixed in: every
    // transaction must finish (retrying on timeouts), and the active sets must end empty. The
    // two-key transactions deadlock often, and each deadlock costs a timeout: a short one keeps
    // the test to seconds (with 50 ms it took 20–47 s).
    for step in [Step::Naive, Step::Full] {
        let plm = Arc::new(manager(
            step,
            Config {
                timeout: Duration::from_millis(5),
                jitter: Duration::from_millis(5),
            },
        ));
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let plm = plm.clone();
                thread::spawn(move || {
                    let mut tx = plm.begin(Isolation::Serializable);
                    let mut commits = 0;
                    let mut i = t as i64;
                    while commits < 100 {
                        i = (i * 7 + 3) % 5;
                        let r = plm
                            .acquire_prepared(&mut tx, 1, &[i])
                            .and_then(|_| {
                                if i % 2 == 0 {
                                    plm.acquire_prepared(&mut tx, 2, &[0, 100])
                                } else {
                                    Ok(())
                                }
                            })
                            .and_then(|_| plm.acquire_prepared(&mut tx, 1, &[(i + 1) % 5]));
                        plm.release(&mut tx);
                        if r.is_ok() {
                            commits += 1;
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(plm.active(), 0);
    }
}

/// A wide template narrowed per request: the column rule sees the narrow sets, a set wider than
/// the template's is refused, and inserts keep writing every column.
#[test]
fn narrowed_prepared_requests_use_their_own_columns() {
    for step in Step::ALL {
        let all = ColumnSet::of(&[0, 1, 2]);
        let wide = |kind, p: &str| Template {
            relation: 0,
            kind,
            predicate: Prepared::parse_with(p, column).unwrap(),
            read: all,
            write: if kind == Select { ColumnSet::NONE } else { all },
        };
        let plm = LockManager::new(
            vec![RelationSpec::new("t", 3, Some(0), 8)],
            vec![wide(Select, "k = $1"), wide(Update, "k = $1")],
            Optimizations::cumulative(step),
            IMPATIENT,
        )
        .unwrap();
        let mut a = plm.begin(Isolation::Serializable);
        let mut b = plm.begin(Isolation::Serializable);
        let cols = |r: &[u16], w: &[u16]| Some((ColumnSet::of(r), ColumnSet::of(w)));
        plm.acquire_prepared_with(&mut a, 0, &[1], cols(&[1], &[]), &mut ())
            .unwrap();
        let r = plm.acquire_prepared_with(&mut b, 1, &[1], cols(&[2], &[2]), &mut ());
        assert_eq!(
            r.is_ok(),
            Optimizations::cumulative(step).column_level,
            "{step:?}: a write of v against a read of x"
        );
        plm.release(&mut b);
        let r = plm.acquire_prepared_with(&mut b, 0, &[2], cols(&[1], &[2]), &mut ());
        assert!(
            matches!(r, Err(Error::ColumnOutOfRange { column: 2, .. })),
            "{step:?}: a select that writes: {r:?}"
        );
        plm.release(&mut a);
        plm.release(&mut b);
        assert_eq!(plm.active(), 0);
    }
}

/// A [`Waiter`] sees every slice of a wait with the holder's id, and can give up.
#[test]
fn a_waiter_sees_the_rounds_and_can_give_up() {
    struct Counting {
        rounds: u32,
        holder: u64,
        give_up_after: u32,
    }
    impl Waiter for Counting {
        fn slice(&self) -> Option<Duration> {
            Some(Duration::from_millis(1))
        }
        fn round(&mut self, holder: u64) -> bool {
            self.rounds += 1;
            self.holder = holder;
            self.rounds <= self.give_up_after
        }
    }
    for step in Step::ALL {
        let plm = manager(step, PATIENT);
        let mut a = plm.begin(Isolation::Serializable);
        let mut b = plm.begin(Isolation::Serializable);
        let row = p("k = 1");
        plm.acquire(&mut a, req(Update, &row, &[], &[2])).unwrap();
        let mut w = Counting {
            rounds: 0,
            holder: 0,
            give_up_after: 5,
        };
        let started = std::time::Instant::now();
        let r = plm.acquire_with(&mut b, req(Update, &row, &[], &[2]), &mut w);
        assert_eq!(r, Err(Error::Timeout), "{step:?}");
        assert_eq!(w.rounds, 6, "{step:?}");
        assert_eq!(w.holder, a.id(), "{step:?}");
        assert!(started.elapsed() < Duration::from_secs(10), "{step:?}");
        plm.release(&mut b);
        // Without conflicts the waiter is never called.
        let mut c = plm.begin(Isolation::Serializable);
        let other = p("k = 2");
        plm.acquire_with(&mut c, req(Update, &other, &[], &[2]), &mut w)
            .unwrap();
        assert_eq!(w.rounds, 6, "{step:?}");
        plm.release(&mut c);
        plm.release(&mut a);
    }
}

/// A transaction repeating a prepared request it holds a lock for (or a narrower one) takes no
/// second lock, and so does not queue behind a lock that arrived meanwhile and waits for it.
#[test]
fn a_repeated_request_takes_no_second_lock() {
    for step in Step::ALL {
        let plm = Arc::new(manager(step, PATIENT));
        let mut a = plm.begin(Isolation::Serializable);
        plm.acquire_prepared(&mut a, 2, &[10, 20]).unwrap(); // scan x ∈ [10, 20]
        let (rx, commit) = spawn_holding(&plm, |plm, t| {
            let row = row_predicate(&[7, 15, 0]);
            plm.acquire(t, req(Insert, &row, &[], &[]))
        });
        assert!(blocked(&rx), "{step:?}: the insert waits for the scan");
        // The same scan again, and a narrower one: granted at once, no new lock.
        plm.acquire_prepared(&mut a, 2, &[10, 20]).unwrap();
        let narrow = Some((ColumnSet::of(&[1]), ColumnSet::NONE));
        plm.acquire_prepared_with(&mut a, 2, &[10, 20], narrow, &mut ())
            .unwrap();
        assert_eq!(a.held(), 1, "{step:?}");
        plm.release(&mut a);
        assert!(granted(&rx), "{step:?}");
        drop(commit);
        assert!(drained(&plm), "{step:?}");
    }
}

/// The same for an ad hoc request: a repeat of the same predicate, or a read of it under a write
/// lock of it, takes no second lock; a wider one does.
#[test]
fn a_repeated_ad_hoc_request_takes_no_second_lock() {
    for step in Step::ALL {
        let plm = Arc::new(manager(step, PATIENT));
        let mut a = plm.begin(Isolation::Serializable);
        let scan = p("x BETWEEN 10 AND 20 OR v = 3");
        plm.acquire(&mut a, req(Update, &scan, &[0, 1, 2], &[2]))
            .unwrap();
        let (rx, commit) = spawn_holding(&plm, |plm, t| {
            let row = row_predicate(&[7, 15, 0]);
            plm.acquire(t, req(Insert, &row, &[], &[]))
        });
        assert!(blocked(&rx), "{step:?}: the insert waits for the update");
        plm.acquire(&mut a, req(Update, &scan, &[0, 1, 2], &[2]))
            .unwrap();
        plm.acquire(&mut a, req(Select, &scan, &[1], &[])).unwrap();
        assert_eq!(a.held(), 1, "{step:?}");
        plm.release(&mut a);
        assert!(granted(&rx), "{step:?}");
        drop(commit);
        assert!(drained(&plm), "{step:?}");
        // Another predicate, or a write under a read lock, is a lock of its own.
        let mut b = plm.begin(Isolation::Serializable);
        plm.acquire(&mut b, req(Select, &scan, &[1], &[])).unwrap();
        let wider = p("x BETWEEN 10 AND 21 OR v = 3");
        plm.acquire(&mut b, req(Select, &wider, &[1], &[])).unwrap();
        plm.acquire(&mut b, req(Update, &scan, &[1], &[2])).unwrap();
        assert_eq!(b.held(), 3, "{step:?}");
        plm.release(&mut b);
        assert!(drained(&plm), "{step:?}");
    }
}

/// Key ranges, short (filed in the buckets of their values) and long (filed everywhere), meet the
/// point locks of every key inside them and of none outside, and each other when they overlap.
#[test]
fn key_ranges_meet_the_point_locks_inside_them_in_any_bucket() {
    for step in Step::ALL {
        let plm = manager(step, IMPATIENT);
        // 8 buckets: [5, 7] is filed in 3 of them, [5, 20] in all.
        for (lo, hi) in [(5i64, 7i64), (5, 20), (-2, 1)] {
            let mut scanner = plm.begin(Isolation::Serializable);
            let scan = p(&format!("k BETWEEN {lo} AND {hi}"));
            plm.acquire(&mut scanner, req(Select, &scan, &[0, 1, 2], &[]))
                .unwrap();
            for key in lo - 9..=hi + 9 {
                let mut w = plm.begin(Isolation::Serializable);
                let upd = p(&format!("k = {key}"));
                let r = plm.acquire(&mut w, req(Update, &upd, &[], &[2]));
                let inside = (lo..=hi).contains(&key);
                assert_eq!(r.is_err(), inside, "{step:?} [{lo}, {hi}] key {key}");
                plm.release(&mut w);
            }
            // An overlapping writing range, short or long, waits too; a disjoint one does not.
            for (a, b, meets) in [
                (hi, hi + 2, true),
                (lo - 30, lo, true),
                (hi + 1, hi + 3, false),
            ] {
                let mut w = plm.begin(Isolation::Serializable);
                let upd = p(&format!("k BETWEEN {a} AND {b}"));
                let r = plm.acquire(&mut w, req(Update, &upd, &[], &[2]));
                assert_eq!(r.is_err(), meets, "{step:?} [{lo}, {hi}] vs [{a}, {b}]");
                plm.release(&mut w);
            }
            plm.release(&mut scanner);
        }
        assert_eq!(plm.active(), 0);
    }
}
