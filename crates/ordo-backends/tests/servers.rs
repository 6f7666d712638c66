//! The MariaDB and PostgreSQL connections against live servers.
//!
//! The servers are found at `ORDO_MARIADB_URL` and `ORDO_POSTGRES_URL` (defaults: what
//! `scripts/servers/mariadb.sh url` and `postgres.sh url` print). A test whose server cannot be
//! reached says so in one line and passes, unless `ORDO_REQUIRE_SERVERS=1`, when it fails. The
//! tests that need no server (an unreachable port, a bad URL) always run.
//!
//! Every test works in tables of its own, named `ordo_test_<engine>_<test>_<pid>`, and drops them.

mod common;

use ordo_backends::mariadb::Mariadb;
use ordo_backends::postgres::Postgres;
use ordo_backends::{Backend, Conn, Error, Intent, Level, Retry, Stmt, Value};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Engine {
    Mariadb,
    Postgres,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Mariadb => "mariadb",
            Engine::Postgres => "postgres",
        }
    }

    fn backend(self, url: &str) -> ordo_backends::Result<Arc<dyn Backend>> {
        Ok(match self {
            Engine::Mariadb => Arc::new(Mariadb::new(url)?),
            Engine::Postgres => Arc::new(Postgres::new(url)?),
        })
    }

    /// The backend at the configured URL, or `None` (test skipped) when its server is down.
    fn live(self) -> Option<Arc<dyn Backend>> {
        common::server(self.name())
    }
}

/// A table of one test, dropped (through a connection of its own) when the test ends, even by a
/// panic.
struct Table {
    backend: Arc<dyn Backend>,
    name: String,
}

impl Table {
    fn create(backend: &Arc<dyn Backend>, test: &str, columns: &str) -> Table {
        let name = format!("ordo_test_{}_{test}_{}", backend.name(), std::process::id());
        let mut c = backend.connect().unwrap();
        c.batch(&format!("DROP TABLE IF EXISTS {name}")).unwrap();
        c.batch(&format!("CREATE TABLE {name} ({columns})"))
            .unwrap();
        Table {
            backend: backend.clone(),
            name,
        }
    }

    /// `sql` with `{t}` replaced by the table's name.
    fn sql(&self, sql: &str) -> String {
        sql.replace("{t}", &self.name)
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        if let Ok(mut c) = self.backend.connect() {
            let _ = c.batch(&format!("DROP TABLE IF EXISTS {}", self.name));
        }
    }
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

fn query(c: &mut dyn Conn, id: usize, sql: &str, params: &[Value]) -> Vec<Vec<Value>> {
    let mut out = vec![vec![Value::Null]];
    c.query(&Stmt { id, sql }, params, &mut out)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    out
}

fn execute(c: &mut dyn Conn, id: usize, sql: &str, params: &[Value]) -> u64 {
    c.execute(&Stmt { id, sql }, params)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

const KV: &str = "id BIGINT PRIMARY KEY, n BIGINT, s VARCHAR(40)";

fn values(engine: Engine) {
    let Some(b) = engine.live() else { return };
    let mut c = b.connect().unwrap();
    let c = &mut *c;
    // Over TCP, as the URL says (MariaDB's client would switch to the unix socket by default).
    let transport = match engine {
        Engine::Mariadb => {
            "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"
        }
        Engine::Postgres => "SELECT COALESCE(host(inet_client_addr()), 'socket')",
    };
    let host = query(c, 100, transport, &[]);
    assert!(
        matches!(&host[0][0], Value::Text(h) if h.starts_with("127.0.0.1")),
        "{host:?}"
    );
    let d = b.describe();
    assert_eq!(d["engine"], engine.name());
    assert!(d["version"].as_str().is_some_and(|v| !v.is_empty()), "{d}");

    let t = Table::create(&b, "values", KV);
    let insert = t.sql("INSERT INTO {t} (id, n, s) VALUES (?, ?, ?)");
    for row in [
        [int(1), int(10), text("one")],
        [int(2), Value::Null, Value::Null],
        [int(3), int(-7), text("it's ?")],
    ] {
        assert_eq!(execute(c, 0, &insert, &row), 1);
    }
    let get = t.sql("SELECT id, n, s FROM {t} WHERE id = ?");
    assert_eq!(
        query(c, 1, &get, &[int(1)]),
        [[int(1), int(10), text("one")]]
    );
    assert_eq!(
        query(c, 1, &get, &[int(2)]),
        [[int(2), Value::Null, Value::Null]]
    );
    assert_eq!(
        query(c, 1, &get, &[int(3)]),
        [[int(3), int(-7), text("it's ?")]]
    );
    assert!(query(c, 1, &get, &[int(99)]).is_empty());

    // A `?` inside a literal is no placeholder; a NULL parameter matches nothing.
    let literal = t.sql("SELECT id FROM {t} WHERE s <> '?' AND n > ? ORDER BY id");
    assert_eq!(query(c, 2, &literal, &[int(0)]), [[int(1)]]);
    let by_s = t.sql("SELECT id FROM {t} WHERE s = ?");
    assert_eq!(query(c, 3, &by_s, &[text("it's ?")]), [[int(3)]]);
    assert!(query(c, 3, &by_s, &[Value::Null]).is_empty());

    let bump = t.sql("UPDATE {t} SET n = n + ?, s = ? WHERE id = ?");
    assert_eq!(execute(c, 4, &bump, &[int(5), text("uno"), int(1)]), 1);
    assert_eq!(execute(c, 4, &bump, &[int(5), text("x"), int(99)]), 0);
    // An update that changes nothing still counts the row it matched (MariaDB: CLIENT_FOUND_ROWS).
    let set_s = t.sql("UPDATE {t} SET s = ? WHERE id = ?");
    assert_eq!(execute(c, 5, &set_s, &[text("uno"), int(1)]), 1);
    assert_eq!(execute(c, 5, &set_s, &[Value::Null, int(3)]), 1);
    assert_eq!(
        query(c, 1, &get, &[int(1)]),
        [[int(1), int(15), text("uno")]]
    );
    assert_eq!(
        query(c, 1, &get, &[int(3)]),
        [[int(3), int(-7), Value::Null]]
    );

    // `SUM` of a BIGINT is a DECIMAL (MariaDB) or a NUMERIC (PostgreSQL): read back as integers.
    let agg = t.sql("SELECT COUNT(*), SUM(n), MIN(s) FROM {t}");
    assert_eq!(query(c, 6, &agg, &[]), [[int(3), int(8), text("uno")]]);

    // Extremes and the empty string.
    assert_eq!(
        execute(c, 0, &insert, &[int(4), int(i64::MAX), text("")]),
        1
    );
    assert_eq!(
        execute(c, 0, &insert, &[int(5), int(i64::MIN), text("z")]),
        1
    );
    assert_eq!(
        query(c, 1, &get, &[int(4)]),
        [[int(4), int(i64::MAX), text("")]]
    );
    assert_eq!(
        query(c, 1, &get, &[int(5)]),
        [[int(5), int(i64::MIN), text("z")]]
    );

    // A statement id reused for another text is prepared afresh.
    let count = t.sql("SELECT COUNT(*) FROM {t} WHERE id < ?");
    assert_eq!(query(c, 1, &count, &[int(3)]), [[int(2)]]);
    assert_eq!(
        query(c, 1, &get, &[int(2)]),
        [[int(2), Value::Null, Value::Null]]
    );

    // A broken statement is an engine error, and the connection goes on.
    let bad = t.sql("SELECT no_such_column FROM {t}");
    let mut out = Vec::new();
    match c.query(&Stmt { id: 7, sql: &bad }, &[], &mut out) {
        Err(Error::Engine { backend, .. }) => assert_eq!(backend, engine.name()),
        other => panic!("{other:?}"),
    }
    assert_eq!(query(c, 6, &agg, &[])[0][0], int(5));

    // A batch of several statements runs them all, and reports an error in a later one.
    c.batch(&t.sql("INSERT INTO {t} (id) VALUES (10); INSERT INTO {t} (id) VALUES (11)"))
        .unwrap();
    assert_eq!(query(c, 6, &agg, &[])[0][0], int(7));
    match c.batch(&t.sql("INSERT INTO {t} (id) VALUES (12); INSERT INTO {t} (id) VALUES (12)")) {
        Err(Error::Engine { .. }) => {}
        other => panic!("{other:?}"),
    }
}

fn savepoints(engine: Engine) {
    let Some(b) = engine.live() else { return };
    let t = Table::create(&b, "savepoints", KV);
    let mut c = b.connect().unwrap();
    let c = &mut *c;
    let insert = t.sql("INSERT INTO {t} (id, n) VALUES (?, 0)");
    let ids = t.sql("SELECT id FROM {t} ORDER BY id");

    c.begin(b.weak_level(), Intent::Write).unwrap();
    execute(c, 0, &insert, &[int(1)]);
    c.savepoint("s1").unwrap();
    execute(c, 0, &insert, &[int(2)]);
    c.savepoint("s2").unwrap();
    execute(c, 0, &insert, &[int(3)]);
    c.rollback_to("s1").unwrap();
    execute(c, 0, &insert, &[int(4)]);
    c.release("s1").unwrap();
    assert_eq!(query(c, 1, &ids, &[]), [[int(1)], [int(4)]]);
    c.commit().unwrap();
    assert_eq!(query(c, 1, &ids, &[]), [[int(1)], [int(4)]]);

    c.begin(b.weak_level(), Intent::Write).unwrap();
    execute(c, 0, &insert, &[int(5)]);
    c.rollback().unwrap();
    assert_eq!(query(c, 1, &ids, &[]), [[int(1)], [int(4)]]);
    // A rollback outside a transaction is harmless.
    c.rollback().unwrap();
}

fn levels(engine: Engine) {
    let Some(b) = engine.live() else { return };
    let (sql, name): (&str, fn(Level) -> String) = match engine {
        Engine::Mariadb => (
            "SELECT VARIABLE_VALUE FROM information_schema.SESSION_VARIABLES \
             WHERE VARIABLE_NAME IN ('TX_ISOLATION', 'TRANSACTION_ISOLATION')",
            |l| l.sql().replace(' ', "-"),
        ),
        Engine::Postgres => ("SELECT current_setting('transaction_isolation')", |l| {
            l.sql().to_lowercase()
        }),
    };
    assert!(b.levels().contains(&b.weak_level()));
    let mut c = b.connect().unwrap();
    let c = &mut *c;
    // Twice round, so that each level follows another.
    for &level in b.levels().iter().chain(b.levels()) {
        c.begin(level, Intent::Read).unwrap();
        let rows = query(c, 0, sql, &[]);
        assert!(!rows.is_empty());
        for r in rows {
            assert_eq!(r, [text(&name(level))], "{level:?}");
        }
        c.commit().unwrap();
    }
}

/// Two transactions update two rows in opposite orders: the engine breaks the deadlock by
/// aborting one, and the other commits.
fn deadlock(engine: Engine) {
    let Some(b) = engine.live() else { return };
    let t = Table::create(&b, "deadlock", KV);
    let mut c = b.connect().unwrap();
    c.batch(&t.sql("INSERT INTO {t} (id, n) VALUES (1, 0), (2, 0)"))
        .unwrap();
    let update = t.sql("UPDATE {t} SET n = n + ? WHERE id = ?");
    let barrier = Arc::new(Barrier::new(2));
    let workers: Vec<_> = [(1, 2, 1), (2, 1, 10)]
        .into_iter()
        .map(|(first, second, by)| {
            let (b, barrier, update) = (b.clone(), barrier.clone(), update.clone());
            std::thread::spawn(move || -> ordo_backends::Result<()> {
                let mut c = b.connect()?;
                c.begin(b.weak_level(), Intent::Write)?;
                let stmt = Stmt {
                    id: 0,
                    sql: &update,
                };
                let run = |c: &mut Box<dyn Conn>| -> ordo_backends::Result<()> {
                    c.execute(&stmt, &[int(by), int(first)])?;
                    barrier.wait();
                    c.execute(&stmt, &[int(by), int(second)])?;
                    c.commit()
                };
                let r = run(&mut c);
                if r.is_err() {
                    c.rollback()?;
                }
                r
            })
        })
        .collect();
    let results: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let won: Vec<i64> = match results.as_slice() {
        [Ok(()), Err(e)] | [Err(e), Ok(())] => {
            assert!(
                matches!(e.retry(), Some(Retry::Deadlock | Retry::Busy)),
                "{e}"
            );
            let msg = e.to_string();
            assert!(msg.starts_with(engine.name()), "{msg}");
            if results[0].is_ok() {
                vec![1, 1]
            } else {
                vec![10, 10]
            }
        }
        other => panic!("one transaction should abort and one commit: {other:?}"),
    };
    let rows = query(&mut *c, 1, &t.sql("SELECT n FROM {t} ORDER BY id"), &[]);
    assert_eq!(rows, [[int(won[0])], [int(won[1])]]);
}

/// Write skew: two doctors on call, each transaction takes one off after seeing two on call. One
/// of the two SERIALIZABLE transactions must fail.
fn write_skew(engine: Engine) {
    let Some(b) = engine.live() else { return };
    let t = Table::create(&b, "write_skew", "id BIGINT PRIMARY KEY, on_call BIGINT");
    let mut setup = b.connect().unwrap();
    setup
        .batch(&t.sql("INSERT INTO {t} (id, on_call) VALUES (1, 1), (2, 1)"))
        .unwrap();
    let count = t.sql("SELECT COUNT(*) FROM {t} WHERE on_call = 1");
    let off = t.sql("UPDATE {t} SET on_call = 0 WHERE id = ?");
    let mut cs = [b.connect().unwrap(), b.connect().unwrap()];
    let mut failed: [Option<Error>; 2] = [None, None];
    for c in &mut cs {
        c.begin(Level::Serializable, Intent::Write).unwrap();
    }
    // Both read, both write, both commit, each step in turn; a transaction stops at its first
    // error.
    for step in 0..3 {
        for (k, c) in cs.iter_mut().enumerate() {
            if failed[k].is_some() {
                continue;
            }
            let mut out = Vec::new();
            let r = match step {
                0 => c
                    .query(&Stmt { id: 0, sql: &count }, &[], &mut out)
                    .map(|()| assert_eq!(out, [[int(2)]])),
                1 => c
                    .execute(&Stmt { id: 1, sql: &off }, &[int(k as i64 + 1)])
                    .map(|n| assert_eq!(n, 1)),
                _ => c.commit(),
            };
            if let Err(e) = r {
                c.rollback().unwrap();
                failed[k] = Some(e);
            }
        }
    }
    match &failed {
        [None, Some(e)] | [Some(e), None] => {
            assert_eq!(e.retry(), Some(Retry::Serialization), "{e}")
        }
        other => panic!("exactly one transaction should fail: {other:?}"),
    }
    assert_eq!(query(&mut *setup, 0, &count, &[]), [[int(1)]]);
}

/// A connection killed from another is `Unavailable`, as a server gone mid-run would be.
fn killed(engine: Engine) {
    let Some(b) = engine.live() else { return };
    let mut victim = b.connect().unwrap();
    let mut killer = b.connect().unwrap();
    let who = match engine {
        Engine::Mariadb => "SELECT CONNECTION_ID()",
        Engine::Postgres => "SELECT pg_backend_pid()",
    };
    let id = query(&mut *victim, 0, who, &[])[0][0].clone();
    match engine {
        Engine::Mariadb => killer.batch(&format!("KILL CONNECTION {id}")).unwrap(),
        Engine::Postgres => {
            let kill = "SELECT pg_terminate_backend(?)";
            assert_eq!(query(&mut *killer, 0, kill, &[id]), [[int(1)]]);
        }
    }
    let mut out = Vec::new();
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..2 {
        match victim.query(&Stmt { id: 0, sql: who }, &[], &mut out) {
            Err(e @ Error::Unavailable { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(engine.name()), "{msg}");
                assert!(msg.contains("start it with scripts/servers/"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
    }
}

/// No server at the port: a quick `Unavailable` that names the backend and its start script.
fn unreachable(engine: Engine) {
    let url = match engine {
        Engine::Mariadb => "mysql://ordo:ordo@127.0.0.1:1/ordo",
        Engine::Postgres => "postgres://ordo:ordo@127.0.0.1:1/ordo",
    };
    let b = engine.backend(url).unwrap();
    let start = Instant::now();
    let e = b.connect().err().expect("a connection to port 1");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(matches!(e, Error::Unavailable { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.starts_with(engine.name()), "{msg}");
    assert!(
        msg.contains(&format!("scripts/servers/{}.sh start", engine.name())),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
    // What a row would record about it, without a server: no version, no hang.
    assert!(b.describe()["version"].is_null());
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );

    let bad = match engine {
        Engine::Mariadb => "postgres://127.0.0.1/x",
        Engine::Postgres => "postgres://ordo@127.0.0.1:notaport/ordo",
    };
    match engine.backend(bad) {
        Err(Error::Input(msg)) => {
            assert!(msg.starts_with(engine.name()), "{msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
        Err(e) => panic!("{e:?}"),
        Ok(_) => panic!("{bad} accepted"),
    }
}

/// A peer that accepts the connection and never answers: `Unavailable` after the connect timeout
/// plus the handshake's, not a hang. The URL's connect timeout (1 s) replaces the default (3 s).
fn silent(engine: Engine) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = match engine {
        Engine::Mariadb => {
            format!("mysql://ordo:ordo@127.0.0.1:{port}/ordo?tcp_connect_timeout_ms=1000")
        }
        Engine::Postgres => format!("postgres://ordo:ordo@127.0.0.1:{port}/ordo?connect_timeout=1"),
    };
    let b = engine.backend(&url).unwrap();
    let start = Instant::now();
    let e = b.connect().err().expect("a connection to a silent peer");
    assert!(
        start.elapsed() < Duration::from_secs(12),
        "{:?}",
        start.elapsed()
    );
    assert!(matches!(e, Error::Unavailable { .. }), "{e:?}");
    assert!(e.to_string().contains("handshake"), "{e}");
    drop(listener);
}

#[test]
fn mariadb_values() {
    values(Engine::Mariadb);
}

#[test]
fn postgres_values() {
    values(Engine::Postgres);
}

#[test]
fn mariadb_savepoints() {
    savepoints(Engine::Mariadb);
}

#[test]
fn postgres_savepoints() {
    savepoints(Engine::Postgres);
}

#[test]
fn mariadb_levels() {
    levels(Engine::Mariadb);
}

#[test]
fn postgres_levels() {
    levels(Engine::Postgres);
}

#[test]
fn mariadb_deadlock() {
    deadlock(Engine::Mariadb);
}

#[test]
fn postgres_deadlock() {
    deadlock(Engine::Postgres);
}

#[test]
fn postgres_write_skew() {
    write_skew(Engine::Postgres);
}

#[test]
fn mariadb_killed() {
    killed(Engine::Mariadb);
}

#[test]
fn postgres_killed() {
    killed(Engine::Postgres);
}

#[test]
fn mariadb_unreachable() {
    unreachable(Engine::Mariadb);
}

#[test]
fn postgres_unreachable() {
    unreachable(Engine::Postgres);
}

#[test]
fn mariadb_silent() {
    silent(Engine::Mariadb);
}

#[test]
fn postgres_silent() {
    silent(Engine::Postgres);
}
