use super::*;
use crate::conn::Stmt;

fn db() -> (tempfile::TempDir, Sqlite) {
    let dir = tempfile::tempdir().unwrap();
    let db = Sqlite::new(&dir.path().join("t.db")).unwrap();
    (dir, db)
}

const INSERT: Stmt<'static> = Stmt {
    id: 0,
    sql: "INSERT INTO t VALUES (?, ?)",
};
const SELECT: Stmt<'static> = Stmt {
    id: 1,
    sql: "SELECT k, v FROM t WHERE k >= ? ORDER BY k",
};

#[test]
fn a_durable_commit_syncs_and_a_read_does_not() {
    let (_dir, db) = db();
    let mut c = db.connect().unwrap();
    c.batch("CREATE TABLE t (k BIGINT PRIMARY KEY, v VARCHAR(10))")
        .unwrap();
    let before = db.syncs().unwrap();
    c.begin(Level::Serializable, Intent::Write).unwrap();
    c.execute(&INSERT, &[Value::Int(1), Value::Text("a".into())])
        .unwrap();
    c.commit().unwrap();
    let after_write = db.syncs().unwrap();
    assert!(
        after_write > before,
        "a commit with synchronous=FULL syncs the WAL"
    );
    // Other tests of this process may sync meanwhile; a read of our own must not add to a
    // window in which we alone run on this file, so compare against the global counter only
    // for the write, and for the read count it through a fresh window on the same file.
    let mut rows = Vec::new();
    let mut reads = 0;
    for _ in 0..5 {
        let b = db.syncs().unwrap();
        c.begin(Level::Serializable, Intent::Read).unwrap();
        c.query(&SELECT, &[Value::Int(0)], &mut rows).unwrap();
        c.commit().unwrap();
        if db.syncs().unwrap() == b {
            reads += 1;
        }
    }
    assert!(
        reads > 0,
        "a read-only transaction never synced without another test syncing"
    );
    assert_eq!(rows, vec![vec![Value::Int(1), Value::Text("a".into())]]);
}

#[test]
fn a_savepoint_rollback_undoes_only_the_inner_work() {
    let (_dir, db) = db();
    let mut c = db.connect().unwrap();
    c.batch("CREATE TABLE t (k BIGINT PRIMARY KEY, v VARCHAR(10))")
        .unwrap();
    c.begin(Level::Serializable, Intent::Write).unwrap();
    c.execute(&INSERT, &[Value::Int(1), Value::Null]).unwrap();
    c.savepoint("client").unwrap();
    c.execute(&INSERT, &[Value::Int(2), Value::Text("x".into())])
        .unwrap();
    c.rollback_to("client").unwrap();
    c.release("client").unwrap();
    c.execute(&INSERT, &[Value::Int(3), Value::Text("y".into())])
        .unwrap();
    c.commit().unwrap();
    let mut rows = Vec::new();
    c.query(&SELECT, &[Value::Int(0)], &mut rows).unwrap();
    let keys: Vec<_> = rows.iter().map(|r| r[0].clone()).collect();
    assert_eq!(keys, vec![Value::Int(1), Value::Int(3)]);
    assert_eq!(rows[0][1], Value::Null);
}

#[test]
fn a_second_writer_waits_then_gets_a_retryable_busy() {
    let (_dir, db) = db();
    let db = db.busy_timeout(Duration::from_millis(50));
    let mut a = db.connect().unwrap();
    let mut b = db.connect().unwrap();
    a.batch("CREATE TABLE t (k BIGINT PRIMARY KEY, v VARCHAR(10))")
        .unwrap();
    a.begin(Level::Serializable, Intent::Write).unwrap();
    let e = b.begin(Level::Serializable, Intent::Write).unwrap_err();
    assert_eq!(e.retry(), Some(Retry::Busy), "{e}");
    // A reader is not blocked by the writer (WAL).
    b.begin(Level::Serializable, Intent::Read).unwrap();
    let mut rows = Vec::new();
    b.query(&SELECT, &[Value::Int(0)], &mut rows).unwrap();
    b.commit().unwrap();
    a.rollback().unwrap();
}

#[test]
fn a_bad_statement_is_an_engine_error_naming_sqlite() {
    let (_dir, db) = db();
    let mut c = db.connect().unwrap();
    let e = c.batch("SELEC nonsense").unwrap_err();
    assert!(e.retry().is_none());
    assert!(e.to_string().starts_with("sqlite: "), "{e}");
}

#[test]
fn every_commit_of_a_writer_syncs_on_every_connection() {
    let (_dir, db) = db();
    let mut c = db.connect().unwrap();
    c.batch("CREATE TABLE t (k BIGINT PRIMARY KEY, v VARCHAR(200))")
        .unwrap();
    c.batch("BEGIN").unwrap();
    for k in 0..10_000 {
        c.execute(&INSERT, &[Value::Int(k), Value::Text("x".repeat(150))])
            .unwrap();
    }
    c.batch("COMMIT").unwrap();
    drop(c);
    let update = Stmt {
        id: 2,
        sql: "UPDATE t SET v = ? WHERE k = ?",
    };
    let sync = Stmt {
        id: 3,
        sql: "PRAGMA synchronous",
    };
    for round in 0..3 {
        let mut c = db.connect().unwrap();
        let mut rows = Vec::new();
        c.query(&sync, &[], &mut rows).unwrap();
        let before = db.syncs().unwrap();
        for i in 0..500i64 {
            c.begin(Level::Serializable, Intent::Write).unwrap();
            c.execute(
                &update,
                &[
                    Value::Text(format!("{round}-{i}")),
                    Value::Int((i * 7919) % 10_000),
                ],
            )
            .unwrap();
            c.commit().unwrap();
        }
        let n = db.syncs().unwrap() - before;
        assert!(
            n >= 500,
            "round {round}: {n} syncs for 500 commits, synchronous = {rows:?}"
        );
    }
}
