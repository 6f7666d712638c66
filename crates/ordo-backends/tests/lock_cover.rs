//! Never a missed conflict: the predicate lock `ordo_sql::locks` derives from a WHERE clause covers
//! every row the engine finds with it. Random rows and random WHERE clauses (comparisons either way
//! round, IN, BETWEEN, NOT, AND, OR, bare booleans, and shapes the translation does not know) are
//! run on SQLite; each row SQLite returns, encoded as an INSERT of it locks it, must satisfy the
//! SELECT's lock predicate.

use ordo_backends::sqlite::Sqlite;
use ordo_backends::{Backend, Value};
use ordo_predicate::{Expr, Predicate};
use ordo_sql::locks::Schema;
use ordo_sql::session::parse;
use proptest::prelude::*;

const SETUP: &str = "CREATE TABLE t (k INT PRIMARY KEY, a INT, b TEXT, c BOOLEAN)";

fn column() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("k"), Just("a")]
}

fn int() -> impl Strategy<Value = i64> {
    -3i64..4
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just("x"), Just("y"), Just("xy"), Just("X"), Just("")].prop_map(String::from)
}

fn op() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("="),
        Just("<>"),
        Just("<"),
        Just("<="),
        Just(">"),
        Just(">=")
    ]
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        (column(), op(), int()).prop_map(|(c, o, v)| format!("{c} {o} {v}")),
        (int(), op(), column()).prop_map(|(v, o, c)| format!("{v} {o} {c}")),
        (op(), text()).prop_map(|(o, s)| format!("b {o} '{s}'")),
        (column(), int(), int()).prop_map(|(c, l, h)| format!("{c} BETWEEN {l} AND {h}")),
        (column(), int(), int()).prop_map(|(c, l, h)| format!("{c} NOT BETWEEN {l} AND {h}")),
        (column(), prop::collection::vec(int(), 1..4)).prop_map(|(c, vs)| format!(
            "{c} IN ({})",
            vs.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Just("c".to_string()),
        Just("c = false".to_string()),
        // Shapes the translation does not know: they must widen, never narrow.
        Just("a % 2 = 0".to_string()),
        Just("a + k > 1".to_string()),
        Just("b IS NULL".to_string()),
    ]
}

fn where_clause() -> impl Strategy<Value = String> {
    leaf().prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x}) AND ({y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x}) OR ({y})")),
            inner.prop_map(|x| format!("NOT ({x})")),
        ]
    })
}

fn row() -> impl Strategy<Value = (i64, String, bool)> {
    (int(), text(), any::<bool>())
}

/// The values an INSERT of a row locks, by column: what the row is, as the lock layer encodes it.
fn encoded(schema: &Schema, insert: &str) -> Vec<i64> {
    let req = schema.requests(&parse(insert).unwrap()[0]).unwrap();
    let Expr::And(atoms) = &req[0].predicate else {
        panic!(
            "an insert of one row locks a conjunction: {:?}",
            req[0].predicate
        )
    };
    atoms
        .iter()
        .map(|a| match a {
            Expr::Atom(a) => a.value,
            other => panic!("{other:?}"),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn the_lock_covers_every_row_the_engine_finds(
        rows in prop::collection::vec(row(), 1..6),
        w in where_clause(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = Sqlite::new(&dir.path().join("p.db")).unwrap();
        let mut conn = db.connect().unwrap();
        conn.batch(SETUP).unwrap();
        let mut schema = Schema::default();
        schema.observe(&parse(SETUP).unwrap()[0]).unwrap();
        let mut inserts = Vec::new();
        for (k, (a, b, c)) in rows.iter().enumerate() {
            let sql = format!("INSERT INTO t VALUES ({k}, {a}, '{b}', {c})");
            conn.simple(&sql).unwrap();
            inserts.push(sql);
        }
        let select = format!("SELECT k FROM t WHERE {w}");
        let lock: Predicate = schema.requests(&parse(&select).unwrap()[0]).unwrap()[0].predicate.clone();
        for found in conn.simple(&select).unwrap().rows {
            let Value::Int(k) = found[0] else { panic!("{found:?}") };
            let row = encoded(&schema, &inserts[k as usize]);
            prop_assert!(lock.eval(&row), "{select}: row {:?} found, but the lock {lock} misses it", rows[k as usize]);
        }
    }
}
