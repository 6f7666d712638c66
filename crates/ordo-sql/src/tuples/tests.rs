use super::*;
use crate::catalog::{ColumnDef, TableDef};
use crate::expr::{compile, Scope};
use ordo::txn::predicate::Predicate;
use proptest::prelude::*;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// `t (id INT PRIMARY KEY, day INT, on_call BOOLEAN, note TEXT, pay FLOAT)`.
fn def() -> TableDef {
    let col = |name: &str, ty| ColumnDef {
        default: None,
        sequence: None,
        name: name.into(),
        ty,
        not_null: false,
    };
    TableDef {
        name: "t".into(),
        columns: vec![
            col("id", SqlType::Int),
            col("day", SqlType::Int),
            col("on_call", SqlType::Bool),
            col("note", SqlType::Text(16)),
            col("pay", SqlType::Float),
        ],
        primary_key: vec![0],
        indexes: Vec::new(),
        uniques: Vec::new(),
        storage: 0,
        next_row_id: Arc::new(AtomicU64::new(0)),
    }
}

fn compiled(sql: &str) -> Expr {
    let e = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(sql)
        .unwrap()
        .parse_expr()
        .unwrap();
    compile(&e, &mut Scope::plain(Some(&def()))).unwrap()
}

fn cover_of(sql: &str) -> Option<Predicate> {
    cover(&def(), &compiled(sql), &[Datum::Int(4)])
}

fn p(text: &str) -> Option<Predicate> {
    let names = ["id", "day", "on_call", "note", "pay"];
    Some(
        Predicate::parse_with(text, |n| {
            names.iter().position(|c| *c == n).map(|i| i as u16)
        })
        .unwrap()
        .simplify(),
    )
}

#[test]
fn integer_comparisons_are_kept_and_the_rest_widens() {
    assert_eq!(cover_of("day = 7 AND note = 'x'"), p("day = 7"));
    assert_eq!(cover_of("5 > day"), p("day < 5"));
    assert_eq!(cover_of("day = $1"), p("day = 4"), "a parameter");
    assert_eq!(cover_of("day BETWEEN 3 AND 5"), p("day >= 3 AND day <= 5"));
    assert_eq!(cover_of("day IN (1, 2)"), p("day = 1 OR day = 2"));
    assert_eq!(cover_of("on_call"), p("on_call = 1"));
    assert_eq!(
        cover_of("on_call = false AND id > 2"),
        p("on_call = 0 AND id > 2")
    );
    // Unknown: text, floats, arithmetic on columns, NULL; in a disjunct they cover every row.
    assert_eq!(cover_of("day = 7 OR note = 'x'"), None);
    assert_eq!(cover_of("pay < 2.5"), None);
    assert_eq!(cover_of("day + 1 = 5"), None);
    assert_eq!(cover_of("day = NULL"), None);
    assert_eq!(
        cover_of("day < 2.5"),
        None,
        "an integer column against a float"
    );
}

#[test]
fn not_is_pushed_to_exact_atoms_only() {
    assert_eq!(
        cover_of("NOT (day BETWEEN 3 AND 5)"),
        p("day < 3 OR day > 5")
    );
    assert_eq!(cover_of("day NOT BETWEEN 3 AND 5"), p("day < 3 OR day > 5"));
    assert_eq!(
        cover_of("NOT (day NOT BETWEEN 3 AND 5)"),
        p("day >= 3 AND day <= 5")
    );
    assert_eq!(cover_of("day NOT IN (1, 2)"), p("day <> 1 AND day <> 2"));
    assert_eq!(cover_of("NOT on_call"), p("on_call <> 1"));
    assert_eq!(
        cover_of("NOT (day = 1 OR id = 2)"),
        p("day <> 1 AND id <> 2")
    );
    // NOT (day = 1 AND unknown) = day <> 1 OR NOT unknown: every row.
    assert_eq!(cover_of("NOT (day = 1 AND note = 'x')"), None);
    assert_eq!(cover_of("NOT (day = 1 OR note = 'x')"), p("day <> 1"));
}

#[test]
fn a_cover_that_would_blow_up_is_every_row() {
    let conjuncts: Vec<String> = (0..10)
        .map(|i| format!("(day = {i} OR id = {i})"))
        .collect();
    assert_eq!(cover_of(&conjuncts.join(" AND ")), None, "2^10 terms");
    assert!(
        cover_of(&conjuncts[..8].join(" AND ")).is_some(),
        "2^8 terms"
    );
}

#[test]
fn a_rows_tuple_pins_its_integer_columns() {
    let row = [
        Datum::Int(7),
        Datum::Int(3),
        Datum::Bool(true),
        Datum::Text("x".into()),
        Datum::Float(1.5),
    ];
    assert_eq!(
        Some(tuple(&def(), &row)),
        p("id = 7 AND day = 3 AND on_call = 1")
    );
    let mut moved = row.clone();
    moved[1] = Datum::Int(15);
    assert_eq!(
        Some(images(&def(), &row, &moved)),
        p("(id = 7 AND day = 3 AND on_call = 1) OR (id = 7 AND day = 15 AND on_call = 1)")
    );
    let mut text_only = row.clone();
    text_only[3] = Datum::Text("y".into());
    assert_eq!(images(&def(), &row, &text_only), tuple(&def(), &row));
    // A NULL leaves its column unconstrained.
    let mut nulls = row.clone();
    nulls[1] = Datum::Null;
    nulls[2] = Datum::Null;
    assert_eq!(Some(tuple(&def(), &nulls)), p("id = 7"));
}

/// A random WHERE clause over the table's columns.
fn clause() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        (0..2usize, 0..6usize, -2..6i64).prop_map(|(c, op, v)| {
            let ops = ["=", "<>", "<", "<=", ">", ">="];
            format!("{} {} {v}", ["id", "day"][c], ops[op])
        }),
        (-2..6i64, 0..6usize).prop_map(|(v, op)| {
            let ops = ["=", "<>", "<", "<=", ">", ">="];
            format!("{v} {} day", ops[op])
        }),
        (0..4i64, 0..4i64, any::<bool>()).prop_map(|(a, b, n)| format!(
            "day {}BETWEEN {a} AND {b}",
            if n { "NOT " } else { "" }
        )),
        (prop::collection::vec(0..4i64, 1..4), any::<bool>()).prop_map(|(l, n)| {
            let l: Vec<String> = l.iter().map(i64::to_string).collect();
            format!("id {}IN ({})", if n { "NOT " } else { "" }, l.join(", "))
        }),
        Just("on_call".to_string()),
        Just("note = 'a'".to_string()),
        Just("pay < 1.5".to_string()),
        Just("day + id = 3".to_string()),
        Just("day = 2.5".to_string()),
        Just("day IS NULL".to_string()),
        Just("on_call IS NOT NULL".to_string()),
        Just("coalesce(day, 1) = 1".to_string()),
        Just("day = NULL".to_string()),
        Just("day IN (1, NULL)".to_string()),
    ];
    atom.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} AND {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} OR {b})")),
            inner.prop_map(|a| format!("NOT ({a})")),
        ]
    })
}

proptest! {
    /// Every row a random clause accepts satisfies its cover, also where `day` and `on_call` are
    /// NULL and the cover reads them as the pattern storage keeps for NULL.
    #[test]
    fn the_cover_accepts_every_row_the_clause_accepts(
        sql in clause(),
        rows in prop::collection::vec(
            (0..4i64, prop::option::of(0..4i64), prop::option::of(any::<bool>()), 0..2usize, 0..3i32),
            1..24,
        ),
    ) {
        let e = compiled(&sql);
        let cover = cover(&def(), &e, &[]);
        for (id, day, on_call, note, pay) in rows {
            let row = vec![
                Datum::Int(id),
                day.map_or(Datum::Null, Datum::Int),
                on_call.map_or(Datum::Null, Datum::Bool),
                Datum::Text(["a", "b"][note].into()),
                Datum::Float(f64::from(pay) * 0.5 + 0.5),
            ];
            let env = Env { row: &row, params: &[], aggs: &[] };
            let accepted = e.test(&env).unwrap();
            let null = crate::value::NULL_INT;
            let ints = [id, day.unwrap_or(null), on_call.map_or(null, i64::from), 0, 0];
            let covered = cover.as_ref().is_none_or(|c| c.eval(&ints));
            prop_assert!(!accepted || covered, "{sql}: {row:?} accepted, cover {cover:?}");
        }
    }
}
