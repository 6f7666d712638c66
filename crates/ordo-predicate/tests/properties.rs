//! Property tests against a brute-force oracle: over three columns and constants in `[-3, 6]`, a
//! conjunction satisfiable over the integers has a solution with every column in `[-4, 7]` (below
//! or above every constant, or between two), so enumerating that box decides satisfiability exactly.

use ordo_predicate::buckets::{bucket_of, key_values};
use ordo_predicate::conflict_graph::ConflictGraph;
use ordo_predicate::dnf::{self, term_count, Solver};
use ordo_predicate::grouping;
use ordo_predicate::lock::{access_conflict, ConflictRule, Lock};
use ordo_predicate::prepared::ConflictPredicate;
use ordo_predicate::{
    ColumnSet, Expr, Op, Optimizations, Predicate, Prepared, StatementKind, Step, Template, Value,
};
use proptest::prelude::*;

const COLUMNS: u16 = 3;
const DOMAIN: std::ops::RangeInclusive<i64> = -4..=7;

fn brute(p: &Predicate) -> bool {
    DOMAIN
        .flat_map(|a| DOMAIN.flat_map(move |b| DOMAIN.map(move |c| [a, b, c])))
        .any(|row| p.eval(&row))
}

fn both(p: &Predicate, q: &Predicate) -> Predicate {
    Expr::and(vec![p.clone(), q.clone()])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Lt),
        Just(Op::Le),
        Just(Op::Gt),
        Just(Op::Ge),
        Just(Op::Eq),
        Just(Op::Ne)
    ]
}

fn expr<V: Clone + std::fmt::Debug + 'static>(
    value: impl Strategy<Value = V> + Clone + 'static,
) -> impl Strategy<Value = Expr<V>> {
    let leaf = prop_oneof![
        20 => (0..COLUMNS, op(), value).prop_map(|(column, op, value)| Expr::Atom(ordo_predicate::predicate::Atom { column, op, value })),
        1 => Just(Expr::True),
        1 => Just(Expr::False),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(Expr::And),
            prop::collection::vec(inner, 1..4).prop_map(Expr::Or),
        ]
    })
}

fn predicate() -> impl Strategy<Value = Predicate> {
    expr(-3i64..=6)
}

fn template() -> impl Strategy<Value = Prepared> {
    expr(prop_oneof![
        (-3i64..=6).prop_map(Value::Const),
        (0u16..3).prop_map(Value::Param)
    ])
}

/// Parameter values: mostly small, sometimes at the ends of `i64` (where off-by-one bugs live).
fn param() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => -3i64..=6,
        1 => prop_oneof![Just(i64::MIN), Just(i64::MIN + 1), Just(i64::MAX - 1), Just(i64::MAX)],
    ]
}

fn params() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(param(), 3)
}

const BIG: u64 = 1 << 20;

fn rule(opts: Optimizations) -> ConflictRule {
    ConflictRule::new(opts, ConflictGraph::default())
}

/// Whether two ad hoc locks on the same relation, one reading and one writing every column, conflict
/// under `r` (so the column rule lets every pair through to the predicate test).
fn locks_conflict(r: &ConflictRule, p: &Predicate, q: &Predicate) -> bool {
    let mut s = Solver::default();
    let a = Lock::ad_hoc(
        1,
        0,
        StatementKind::Select,
        r.compile(p, &mut s),
        ColumnSet::all(COLUMNS),
        ColumnSet::NONE,
    );
    let b = Lock::ad_hoc(
        2,
        0,
        StatementKind::Update,
        r.compile(q, &mut s),
        ColumnSet(q.columns()),
        ColumnSet::all(COLUMNS),
    );
    r.conflict(&a, &b, &mut s)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn dnf_satisfiability_is_exact(p in predicate()) {
        prop_assert_eq!(dnf::satisfiable(&p, BIG), Some(brute(&p)), "{}", p);
    }

    #[test]
    fn grouping_agrees_with_plain_dnf(p in predicate(), q in predicate()) {
        let plain = dnf::satisfiable(&both(&p, &q), BIG).unwrap();
        prop_assert_eq!(plain, brute(&both(&p, &q)));
        prop_assert_eq!(grouping::satisfiable(&p, &q, BIG), plain, "{} / {}", p, q);
    }

    #[test]
    fn every_ablation_step_decides_conflicts_exactly(p in predicate(), q in predicate()) {
        let exact = brute(&both(&p, &q));
        for step in Step::ALL {
            let mut o = Optimizations::cumulative(step);
            o.threshold = None;
            prop_assert_eq!(locks_conflict(&rule(o), &p, &q), exact, "{:?}: {} / {}", step, p, q);
        }
    }

    #[test]
    fn the_threshold_fallback_is_conservative(p in predicate(), q in predicate(), k in 1u64..12) {
        let exact = brute(&both(&p, &q));
        for grouping in [false, true] {
            let mut o = Optimizations::naive();
            o.grouping = grouping;
            o.threshold = Some(k);
            let answer = locks_conflict(&rule(o), &p, &q);
            prop_assert!(answer || !exact, "missed a conflict with k = {}: {} / {}", k, p, q);
            // Below the threshold everywhere, the answer is exact.
            if term_count(&both(&p, &q)) <= k {
                prop_assert_eq!(answer, exact);
            }
        }
    }

    #[test]
    fn prepared_equals_ad_hoc_on_every_parameter_vector(l in template(), r in template(), v in params(), w in params()) {
        let cp = ConflictPredicate::derive(&l, &r, BIG, None).expect("small templates derive");
        let (pl, pr) = (l.bind(&v).unwrap(), r.bind(&w).unwrap());
        let ad_hoc = dnf::satisfiable(&both(&pl, &pr), BIG).unwrap();
        prop_assert_eq!(cp.eval(&v, &w, &mut Solver::default()), ad_hoc, "{} / {} / {}", l, r, cp);
        if v.iter().chain(&w).all(|x| DOMAIN.contains(x)) {
            prop_assert_eq!(ad_hoc, brute(&both(&pl, &pr)));
        }
        // With a threshold, conservative.
        let k = ConflictPredicate::derive(&l, &r, BIG, Some(2)).unwrap();
        prop_assert!(k.eval(&v, &w, &mut Solver::default()) || !ad_hoc);
    }

    #[test]
    fn prepared_locks_equal_ad_hoc_locks_through_the_rule(l in template(), r in template(), v in params(), w in params()) {
        let t = |p: &Prepared, kind, write| Template { relation: 0, kind, predicate: p.clone(), read: ColumnSet(p.columns()), write };
        let templates = vec![t(&l, StatementKind::Select, ColumnSet::NONE), t(&r, StatementKind::Update, ColumnSet::all(COLUMNS))];
        let mut o = Optimizations::full();
        o.threshold = None;
        o.column_level = false;
        let rule = ConflictRule::new(o, ConflictGraph::build(templates, false, None));
        let mut s = Solver::default();
        let a = Lock::prepared(1, 0, &v, 0, StatementKind::Select, ColumnSet(l.columns()), ColumnSet::NONE);
        let b = Lock::prepared(2, 1, &w, 0, StatementKind::Update, ColumnSet(r.columns()), ColumnSet::all(COLUMNS));
        let prepared = rule.conflict(&a, &b, &mut s);
        // The same prepared lock against an ad hoc one goes through grouping.
        let pr = r.bind(&w).unwrap();
        let c = Lock::ad_hoc(3, 0, StatementKind::Update, rule.compile(&pr, &mut s), ColumnSet(pr.columns()), ColumnSet::all(COLUMNS));
        let mixed = rule.conflict(&a, &c, &mut s);
        let exact = dnf::satisfiable(&both(&l.bind(&v).unwrap(), &pr), BIG).unwrap();
        prop_assert_eq!(prepared, exact);
        prop_assert_eq!(mixed, exact);
    }

    #[test]
    fn the_corrected_or_form(v1 in param(), v2 in param(), w1 in param(), w2 in param()) {
        let l = Prepared::parse("a = $1 OR b > $2").unwrap();
        let r = Prepared::parse("a = $1 AND b = $2").unwrap();
        let cp = ConflictPredicate::derive(&l, &r, BIG, None).unwrap();
        let expected = v1 == w1 || v2 < w2;
        prop_assert_eq!(cp.eval(&[v1, v2], &[w1, w2], &mut Solver::default()), expected);
        let ad_hoc = dnf::satisfiable(&both(&l.bind(&[v1, v2]).unwrap(), &r.bind(&[w1, w2]).unwrap()), BIG).unwrap();
        prop_assert_eq!(ad_hoc, expected);
    }

    #[test]
    fn conflicting_predicates_share_a_bucket(p in predicate(), q in predicate(), n in 1u32..5) {
        // Column 0 is the key: a satisfiable P ∧ P' means both are filed in a common bucket.
        if brute(&both(&p, &q)) {
            let buckets = |x: &Predicate| key_values(x, 0).map(|ks| ks.iter().map(|&k| bucket_of(k, n)).collect::<Vec<_>>());
            if let (Some(a), Some(b)) = (buckets(&p), buckets(&q)) {
                prop_assert!(a.iter().any(|x| b.contains(x)), "{} {:?} / {} {:?}", p, a, q, b);
            }
        }
    }

    #[test]
    fn the_column_rule_only_removes_conflicts(r1 in 0u64..8, w1 in 0u64..8, r2 in 0u64..8, w2 in 0u64..8) {
        let (r1, w1, r2, w2) = (ColumnSet(r1), ColumnSet(w1), ColumnSet(r2), ColumnSet(w2));
        prop_assert!(!access_conflict(r1, w1, r2, w2, true) || access_conflict(r1, w1, r2, w2, false));
        // Read/read never conflicts under either rule.
        prop_assert!(!access_conflict(r1, ColumnSet::NONE, r2, ColumnSet::NONE, true));
        prop_assert!(!access_conflict(r1, ColumnSet::NONE, r2, ColumnSet::NONE, false));
    }

    #[test]
    fn parse_never_panics(text in "[a-d0-9 ()$<>=!,-]{0,40}|(a|b|AND|OR|NOT|BETWEEN|TRUE|\\(|\\)|=|<|>|1|\\$1| ){0,20}") {
        let _ = Predicate::parse(&text);
        let _ = Prepared::parse(&text);
    }

    #[test]
    fn display_round_trips(p in predicate()) {
        // Text loses only one-child connectives, which `simplify` removes too.
        prop_assert_eq!(Predicate::parse(&p.to_string()).unwrap().simplify(), p.simplify());
    }
}
