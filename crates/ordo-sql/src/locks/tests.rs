use super::*;
use crate::session::parse;
use ordo_predicate::predicate::string_key;

fn schema() -> Schema {
    let mut s = Schema::default();
    for st in parse(
        "CREATE TABLE doctors (name VARCHAR(16) PRIMARY KEY, on_call BOOLEAN);
         CREATE TABLE shifts (id INT PRIMARY KEY, day INT, pay FLOAT);
         CREATE TABLE kv (k INT, v INT, PRIMARY KEY (k))",
    )
    .unwrap()
    {
        s.observe(&st).unwrap();
    }
    s
}

fn locks(sql: &str) -> Vec<LockRequest> {
    schema().requests(&parse(sql).unwrap()[0]).unwrap()
}

fn one(sql: &str) -> LockRequest {
    let mut l = locks(sql);
    assert_eq!(l.len(), 1, "{sql}: {l:?}");
    l.pop().unwrap()
}

#[test]
fn learns_tables_and_their_filter_columns() {
    let s = schema();
    assert_eq!(s.tables.len(), 3);
    assert_eq!(s.tables[0].key, Some(0));
    assert_eq!(s.tables[1].columns[2].1, ColumnKind::Float);
    assert_eq!(s.tables[2].key, Some(0), "table-level PRIMARY KEY");
    let mut s = s;
    s.observe(&parse("DROP TABLE shifts").unwrap()[0]).unwrap();
    assert!(s.table("shifts").is_none());
    assert_eq!(s.table("kv").unwrap().0, 1, "relation ids are positions");
}

#[test]
fn a_select_locks_its_where_and_the_columns_it_names() {
    let l = one("SELECT count(*) FROM shifts WHERE day BETWEEN 7 AND 9");
    assert_eq!(l.relation, 1);
    assert_eq!(l.kind, StatementKind::Select);
    assert_eq!(
        l.predicate,
        Expr::and(vec![Expr::atom(1, Op::Ge, 7), Expr::atom(1, Op::Le, 9)])
    );
    assert_eq!(l.read, ColumnSet::of(&[1]));
    let l = one("SELECT pay FROM shifts s WHERE s.id = 3 OR 4 = id");
    assert_eq!(l.predicate, Expr::or(vec![Expr::eq(0, 3), Expr::eq(0, 4)]));
    assert_eq!(l.read, ColumnSet::of(&[0, 2]));
    assert_eq!(one("SELECT * FROM shifts").read, ColumnSet::all(3));
    assert_eq!(one("SELECT * FROM shifts").predicate, Expr::True);
    assert_eq!(
        one("SELECT id FROM shifts WHERE -5 < day").predicate,
        Expr::atom(1, Op::Gt, -5)
    );
}

#[test]
fn strings_lock_by_a_folded_prefix_and_only_for_equality() {
    let a = one("SELECT on_call FROM doctors WHERE name = 'Alice  '").predicate;
    let b = one("SELECT on_call FROM doctors WHERE name = 'alice'").predicate;
    assert_eq!(a, b, "MariaDB's collation says they are equal");
    assert_eq!(
        one("SELECT on_call FROM doctors WHERE name < 'b'").predicate,
        Expr::True
    );
    let l = one("SELECT count(*) FROM doctors WHERE name IN ('alice', 'bob') AND on_call = true");
    assert_eq!(
        l.predicate,
        Expr::and(vec![
            Expr::or(vec![
                Expr::eq(0, string_key("alice")),
                Expr::eq(0, string_key("bob"))
            ]),
            Expr::eq(1, 1)
        ])
    );
    // An insert of the row locks the same key.
    let i = one("INSERT INTO doctors VALUES ('ALICE', false)");
    assert_eq!(
        i.predicate,
        Expr::and(vec![Expr::eq(0, string_key("alice")), Expr::eq(1, 0)])
    );
}

#[test]
fn unknown_parts_widen_never_narrow() {
    // An unknown conjunct is dropped; an unknown disjunct makes the whole TRUE.
    assert_eq!(
        one("SELECT id FROM shifts WHERE day = 7 AND id % 2 = 0").predicate,
        Expr::eq(1, 7)
    );
    assert_eq!(
        one("SELECT id FROM shifts WHERE day = 7 OR id % 2 = 0").predicate,
        Expr::True
    );
    assert_eq!(
        one("SELECT id FROM shifts WHERE NOT (id % 2 = 0)").predicate,
        Expr::True
    );
    assert_eq!(
        one("SELECT id FROM shifts WHERE day = 7.5").predicate,
        Expr::True,
        "float vs int column"
    );
    assert_eq!(
        one("SELECT id FROM shifts WHERE day IS NULL").predicate,
        Expr::True
    );
    assert_eq!(
        one("SELECT id FROM shifts WHERE day NOT BETWEEN 1 AND 2").predicate,
        Expr::or(vec![Expr::atom(1, Op::Lt, 1), Expr::atom(1, Op::Gt, 2)])
    );
    // Unknown projections read every column.
    assert_eq!(
        one("SELECT day + (SELECT 1) FROM shifts").read,
        ColumnSet::all(3)
    );
}

#[test]
fn writes_lock_what_they_write() {
    let u = one("UPDATE doctors SET on_call = false WHERE name = 'bob'");
    assert_eq!(u.kind, StatementKind::Update);
    assert_eq!(u.write, ColumnSet::of(&[1]));
    assert_eq!(u.predicate, Expr::eq(0, string_key("bob")));
    let u = one("UPDATE kv SET v = v + 1 WHERE k = 1");
    assert_eq!(
        (u.read, u.write),
        (ColumnSet::of(&[0, 1]), ColumnSet::of(&[1]))
    );
    // An update that writes a column its WHERE constrains frees it: the rows it moves may enter
    // another lock's predicate on that column.
    let u = one("UPDATE shifts SET day = 15 WHERE day = 3 AND id = 2");
    assert_eq!(u.predicate, Expr::eq(0, 2));
    assert_eq!(
        one("UPDATE shifts SET day = 15 WHERE day = 3").predicate,
        Expr::True
    );
    let d = one("DELETE FROM shifts WHERE day = 7");
    assert_eq!(
        (d.kind, d.write),
        (StatementKind::Delete, ColumnSet::all(3))
    );
    let i = one("INSERT INTO shifts (id, day) VALUES (10, 7), (11, 8)");
    assert_eq!(
        i.predicate,
        Expr::or(vec![
            Expr::and(vec![Expr::eq(0, 10), Expr::eq(1, 7)]),
            Expr::and(vec![Expr::eq(0, 11), Expr::eq(1, 8)])
        ])
    );
}

#[test]
fn statements_over_several_tables_lock_them_whole() {
    let l = locks("SELECT * FROM shifts JOIN kv ON shifts.id = kv.k");
    assert_eq!(l.len(), 2);
    assert!(l
        .iter()
        .all(|r| r.predicate == Expr::True && r.kind == StatementKind::Select));
    let l = locks("UPDATE kv SET v = 1 WHERE k IN (SELECT id FROM shifts)");
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].predicate, Expr::True, "IN (subquery) is unknown");
    assert_eq!((l[1].relation, l[1].kind), (1, StatementKind::Select));
    let l = locks("INSERT INTO kv SELECT id, day FROM shifts");
    assert_eq!(l.len(), 2);
    assert!(locks("SELECT 1").is_empty());
    assert!(locks("BEGIN").is_empty());
}

#[test]
fn an_unknown_table_is_an_error_not_a_missing_lock() {
    let e = schema()
        .requests(&parse("SELECT * FROM nope").unwrap()[0])
        .unwrap_err();
    assert!(e.to_string().contains("\"nope\""), "{e}");
}

#[test]
fn an_update_of_a_unique_column_locks_its_new_value() {
    let mut s = schema();
    for st in parse(
        "CREATE TABLE u (id INT PRIMARY KEY, a INT UNIQUE, b INT, c INT, UNIQUE (b, c));
         CREATE UNIQUE INDEX ui ON kv (v)",
    )
    .unwrap()
    {
        s.observe(&st).unwrap();
    }
    assert_eq!(s.table("u").unwrap().1.uniques, vec![vec![1], vec![2, 3]]);
    assert_eq!(s.table("kv").unwrap().1.uniques, vec![vec![1]]);
    let l = s
        .requests(&parse("UPDATE u SET a = 5 WHERE id = 1").unwrap()[0])
        .unwrap();
    assert_eq!(l.len(), 2, "{l:?}");
    assert_eq!(l[1].kind, StatementKind::Insert);
    assert_eq!(l[1].predicate, Expr::atom(1, Op::Eq, 5));
    assert_eq!(l[1].write, ColumnSet::of(&[1]));
    // A computed value or a partly written column set: any value of the set.
    let l = s
        .requests(&parse("UPDATE u SET c = c + 1 WHERE id = 1").unwrap()[0])
        .unwrap();
    assert_eq!(l.len(), 2, "{l:?}");
    assert_eq!(l[1].predicate, Expr::True);
    assert_eq!(l[1].write, ColumnSet::of(&[2, 3]));
    // Writing no unique column adds nothing.
    let l = s
        .requests(&parse("UPDATE u SET id = 3 WHERE id = 1").unwrap()[0])
        .unwrap();
    assert_eq!(l.len(), 1, "{l:?}");
}

#[test]
fn learns_added_columns() {
    let mut s = schema();
    s.observe(&parse("ALTER TABLE kv ADD COLUMN w INT UNIQUE").unwrap()[0])
        .unwrap();
    let t = s.table("kv").unwrap().1;
    assert_eq!(t.columns.len(), 3);
    assert_eq!(t.uniques, vec![vec![2]]);
}
