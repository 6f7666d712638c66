//! No panic on malformed SQL: generated SQL text — token soup from a grammar of SQL keywords,
//! identifiers, literals and operators, and valid statements (from the tests below and the step
//! and setup blocks of `specs/*.spec`) with tokens deleted, duplicated, swapped, replaced or cut
//! short — runs through a session over a small schema under `ssi`, `2pl-detect` and `dibs`. Every
//! statement either succeeds or fails with a SQLSTATE (five characters of 0-9A-Z), and the session
//! thread survives (a panic there ends it, and the next statement gets no reply).
//!
//! A modest case count runs with the tests; `PROPTEST_CASES=200000 cargo test -p ordo-sql --test
//! fuzz --release` runs it longer (docs/results/pg-oracle.md records what that found).

use ordo::protocols::ProtocolConfig;
use ordo_sql::session::{self, Session};
use proptest::prelude::*;
use std::path::Path;
use std::sync::Mutex;

const SCHEMA: &str = "
CREATE TABLE t (k INT PRIMARY KEY, v INT, s TEXT, d DATE, ts TIMESTAMPTZ, b BOOLEAN, f DOUBLE PRECISION);
CREATE INDEX t_v ON t (v);
CREATE TABLE u (id SERIAL PRIMARY KEY, a INT UNIQUE, tk INT, n VARCHAR(8));
INSERT INTO t VALUES (1, 10, 'x', DATE '2024-01-02', '2024-01-02 03:04:05+00', true, 1.5),
  (2, NULL, NULL, NULL, NULL, NULL, NULL), (3, 30, 'zz', '2023-12-31', NULL, false, -2);
INSERT INTO u (a, tk, n) VALUES (1, 1, 'one'), (2, 3, NULL), (NULL, 2, 'n');
";

/// Valid statements over [`SCHEMA`], covering the SQL the session supports.
const VALID: &[&str] = &[
    "SELECT * FROM t WHERE k = 1",
    "SELECT k, v + 1, -v, v % 3, v / 2 FROM t WHERE v BETWEEN 5 AND 40 ORDER BY k DESC LIMIT 2",
    "SELECT count(*), sum(v), min(s), max(d) FROM t GROUP BY b",
    "SELECT COALESCE(MAX(v) + 1, 1) FROM t WHERE s IS NOT NULL",
    "SELECT v FROM t WHERE v IN (10, 30) AND NOT b OR s IS NULL ORDER BY v NULLS FIRST",
    "SELECT t.k, u.n FROM t JOIN u ON u.tk = t.k WHERE u.a > 0 ORDER BY t.k",
    "SELECT x.k, y.a FROM t x, u y WHERE x.k = y.tk",
    "SELECT (SELECT count(*) FROM u), EXISTS (SELECT 1 FROM u WHERE a = 2)",
    "SELECT k FROM t WHERE k IN (SELECT tk FROM u) AND k NOT IN (SELECT a FROM u WHERE a IS NOT NULL)",
    "SELECT d + 1, d - DATE '2024-01-01', ts, CAST('2024-02-03' AS DATE), '2024-01-01'::timestamptz FROM t",
    "SELECT generate_series(1, 5)",
    "SELECT g FROM generate_series(1, 10, 3) AS g(g)",
    "SELECT k FROM t WHERE k = 1 FOR UPDATE",
    "INSERT INTO t VALUES (4, 40, 'w', '2024-03-01', NULL, true, 0.25)",
    "INSERT INTO t (k, v) SELECT g, g * 2 FROM generate_series(10, 20) g",
    "INSERT INTO u (a, tk) VALUES ((SELECT max(v) FROM t), 1)",
    "UPDATE t SET v = COALESCE(v, 0) + 1, s = 'y' WHERE k = 2",
    "UPDATE t SET v = (SELECT count(*) FROM u) WHERE d < DATE '2024-01-05'",
    "DELETE FROM t WHERE k > 3 AND ts IS NULL",
    "DELETE FROM u WHERE a = 2",
    "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE; SELECT * FROM u; ABORT",
    "START TRANSACTION READ WRITE; UPDATE u SET a = a + 10 WHERE id = 1; COMMIT",
    "BEGIN; SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; ROLLBACK",
    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "PREPARE p (int) AS SELECT * FROM t WHERE k = $1; EXECUTE p(1)",
    "CREATE TABLE w (a INT, b BIGSERIAL, c TEXT DEFAULT 'q', PRIMARY KEY (a), UNIQUE (c))",
    "ALTER TABLE u ADD COLUMN IF NOT EXISTS z INT DEFAULT 7",
    "CREATE UNIQUE INDEX u_n ON u (n)",
    "DROP INDEX t_v",
    "DROP TABLE u",
];

/// Tokens of the soup.
const TOKENS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "CREATE",
    "TABLE",
    "INDEX",
    "UNIQUE",
    "DROP",
    "ALTER",
    "ADD",
    "COLUMN",
    "PRIMARY",
    "KEY",
    "NOT",
    "NULL",
    "AND",
    "OR",
    "IN",
    "IS",
    "BETWEEN",
    "EXISTS",
    "JOIN",
    "ON",
    "AS",
    "ORDER",
    "BY",
    "GROUP",
    "LIMIT",
    "DESC",
    "NULLS",
    "FIRST",
    "FOR",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "ABORT",
    "READ",
    "ONLY",
    "DEFERRABLE",
    "ISOLATION",
    "LEVEL",
    "SERIALIZABLE",
    "DEFAULT",
    "SERIAL",
    "INT",
    "BIGINT",
    "TEXT",
    "DATE",
    "TIMESTAMP",
    "TIMESTAMPTZ",
    "BOOLEAN",
    "VARCHAR(3)",
    "CAST",
    "COALESCE",
    "count(*)",
    "sum",
    "min",
    "max",
    "generate_series",
    "PREPARE",
    "EXECUTE",
    "$1",
    "t",
    "u",
    "k",
    "v",
    "s",
    "d",
    "ts",
    "b",
    "f",
    "id",
    "a",
    "tk",
    "n",
    "g",
    "x",
    "t.k",
    "u.a",
    "0",
    "1",
    "-1",
    "2",
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999999999999",
    "1.5",
    "1e308",
    "'x'",
    "''",
    "'2024-01-02'",
    "'2024-02-30'",
    "'24:00:00'",
    "true",
    "false",
    "DATE '2024-01-01'",
    "'2024-01-01 00:00:00+14'::timestamptz",
    "(",
    ")",
    ",",
    ";",
    "*",
    "+",
    "-",
    "/",
    "%",
    "=",
    "<>",
    "<",
    ">=",
    "::",
    ".",
    "||",
];

/// The SQL of the spec corpus's one-line step and setup blocks.
fn spec_statements() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "spec") {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            if let (Some(a), Some(b)) = (line.find('{'), line.rfind('}')) {
                if a < b {
                    out.push(line[a + 1..b].trim().to_string());
                }
            }
        }
    }
    out.sort();
    out
}

/// SQL text split into tokens: words, quoted strings, and single punctuation characters.
fn tokenize(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let cs: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut j = i + 1;
            while j < cs.len() && cs[j] != '\'' {
                j += 1;
            }
            let end = (j + 1).min(cs.len());
            out.push(cs[i..end].iter().collect());
            i = end;
        } else if c.is_alphanumeric() || c == '_' || c == '$' || c == '.' {
            let mut j = i;
            while j < cs.len() && (cs[j].is_alphanumeric() || "_$.".contains(cs[j])) {
                j += 1;
            }
            out.push(cs[i..j].iter().collect());
            i = j;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Replace(usize, usize),
    Insert(usize, usize),
    Truncate(usize),
}

fn mutate(tokens: &mut Vec<String>, m: &Mutation) {
    let n = tokens.len();
    if n == 0 {
        return;
    }
    match *m {
        Mutation::Delete(i) => {
            tokens.remove(i % n);
        }
        Mutation::Duplicate(i) => {
            let t = tokens[i % n].clone();
            tokens.insert(i % n, t);
        }
        Mutation::Swap(i, j) => tokens.swap(i % n, j % n),
        Mutation::Replace(i, t) => tokens[i % n] = TOKENS[t % TOKENS.len()].to_string(),
        Mutation::Insert(i, t) => tokens.insert(i % (n + 1), TOKENS[t % TOKENS.len()].to_string()),
        Mutation::Truncate(i) => tokens.truncate(i % (n + 1)),
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let i = 0usize..1000;
    prop_oneof![
        i.clone().prop_map(Mutation::Delete),
        i.clone().prop_map(Mutation::Duplicate),
        (i.clone(), i.clone()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (i.clone(), i.clone()).prop_map(|(a, b)| Mutation::Replace(a, b)),
        (i.clone(), i.clone()).prop_map(|(a, b)| Mutation::Insert(a, b)),
        i.prop_map(Mutation::Truncate),
    ]
}

/// Malformed SQL: a mutated valid statement (from [`VALID`] or the specs), or token soup.
fn malformed_sql() -> impl Strategy<Value = String> {
    let mut base: Vec<String> = VALID.iter().map(|s| s.to_string()).collect();
    base.extend(spec_statements());
    let mutated = (
        proptest::sample::select(base),
        proptest::collection::vec(mutation(), 1..5),
    )
        .prop_map(|(sql, ms)| {
            let mut tokens = tokenize(&sql);
            for m in &ms {
                mutate(&mut tokens, m);
            }
            tokens.join(" ")
        });
    let soup = proptest::collection::vec(proptest::sample::select(TOKENS), 0..30)
        .prop_map(|ts| ts.join(" "));
    prop_oneof![3 => mutated, 1 => soup]
}

const PROTOCOLS: [&str; 3] = ["ssi", "2pl-detect", "dibs"];

/// A session over [`SCHEMA`] per protocol, kept across cases and rebuilt when a case broke the
/// schema (dropped or altered a table).
static SESSIONS: Mutex<Vec<Option<Session>>> = Mutex::new(Vec::new());

fn fresh(protocol: &str) -> Session {
    let s = session::open(protocol, ProtocolConfig::default(), false)
        .unwrap()
        .session(0);
    let r = s.execute(SCHEMA);
    assert!(r.results.iter().all(|x| x.result.is_ok()), "{r:?}");
    s
}

fn is_sqlstate(code: &str) -> bool {
    code.len() == 5
        && code
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
}

/// Runs `sql` under `protocol`; `Err` says what went wrong.
fn check(protocol: usize, sql: &str) -> Result<(), String> {
    let mut sessions = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
    if sessions.is_empty() {
        sessions.resize_with(PROTOCOLS.len(), || None);
    }
    let slot = &mut sessions[protocol];
    let s = slot.get_or_insert_with(|| fresh(PROTOCOLS[protocol]));
    let reply = s.execute(sql);
    for r in &reply.results {
        if let Err(e) = &r.result {
            if !is_sqlstate(e.code) {
                return Err(format!("{:?}: error without a SQLSTATE: {e:?}", r.sql));
            }
        }
    }
    // End whatever transaction the case left open, and see that the session thread lives.
    let _ = s.execute("ROLLBACK");
    let probe = s.execute("SELECT k, v FROM t LIMIT 0; SELECT a, tk FROM u LIMIT 0");
    if probe.results.is_empty() {
        *slot = None;
        return Err("the session thread died (a panic)".into());
    }
    let schema = s.execute(SCHEMA_CHECK);
    if probe
        .results
        .iter()
        .chain(&schema.results)
        .any(|x| x.result.is_err())
    {
        *slot = None;
    }
    Ok(())
}

/// A statement whose one result says the schema is as [`SCHEMA`] made it.
const SCHEMA_CHECK: &str = "SELECT s, d, ts, b, f, n FROM t JOIN u ON u.tk = t.k LIMIT 0";

proptest! {
    #![proptest_config(ProptestConfig {
        // PROPTEST_CASES runs it longer.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(512),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn malformed_sql_never_panics_and_every_error_has_a_sqlstate(
        protocol in 0..PROTOCOLS.len(),
        sql in malformed_sql(),
    ) {
        if let Err(why) = check(protocol, &sql) {
            prop_assert!(false, "under {}: {:?}: {}", PROTOCOLS[protocol], sql, why);
        }
    }
}

#[test]
fn the_valid_statements_are_valid() {
    let s = fresh("ssi");
    for sql in VALID {
        let r = s.execute(sql);
        for x in &r.results {
            assert!(x.result.is_ok(), "{sql}: {:?}", x.result);
        }
        let _ = s.execute("ROLLBACK");
    }
}
