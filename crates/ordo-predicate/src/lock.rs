//! Predicate locks and the conflict rule (§2.1, §2.2.4).
//!
//! A lock is `(relation, predicate, read columns, write columns)` plus the kind of statement that
//! took it. Two locks of different transactions conflict iff
//! 1. they are on the same relation,
//! 2. at least one writes — or, under the column-level rule, `R∩W' ≠ ∅ ∨ W∩R' ≠ ∅ ∨ W∩W' ≠ ∅`
//!    over their column sets — and
//! 3. `P ∧ P'` is satisfiable: decided through the full DNF (naive), by conjunct grouping, or by the
//!    prepared conflict graph, and answered "conflict" whenever the DNF is past the threshold k.
//!
//! ## What a caller declares
//! - The read set includes the columns the predicate tests (added here: evaluating the predicate
//!   reads them).
//! - `INSERT` and `DELETE` write every column of the row (set here from the relation's width), and
//!   an insert's predicate is the new row's image (`c0 = v0 ∧ c1 = v1 ∧ …`, [`row_predicate`]).
//! - A write's predicate must cover the row before *and after* the write: an `UPDATE` that changes a
//!   column some predicate may test (the key, say) ORs in the new values, as `k = old ∨ k = new`.
//! - The column-level rule assumes the engine writes only the declared columns (no read-modify-write
//!   of whole tuples, §5.1).

use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

use crate::conflict_graph::{ConflictGraph, Edge};
use crate::dnf::{Dnf, Solver};
use crate::grouping::Grouped;
use crate::optimizations::Optimizations;
use crate::predicate::{ColumnId, Expr, Predicate};
use crate::prepared::TemplateId;

/// A relation's index in the list the lock manager was built with.
pub type RelationId = u32;

/// Past this many DNF terms of one predicate (or one conjunct) even a manager without the threshold
/// stores no DNF and answers "conflict": the naive manager's worst case is exponential, and it must
/// never run out of memory. SubscriberScan's 8 conjuncts (256 terms) stay well below it.
pub const HARD_TERMS: u64 = 1 << 16;

/// Past this many term combinations tested for one pair (the product of two DNFs, or of a group's
/// conjuncts) even a manager without the threshold answers "conflict" rather than stall: about a
/// second of work. SubscriberScan's 8 conjuncts (65,536 term pairs) stay below it.
pub const HARD_PRODUCT: u64 = 1 << 24;

/// A set of column ids below 64, as a bit mask.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ColumnSet(pub u64);

impl ColumnSet {
    pub const NONE: ColumnSet = ColumnSet(0);

    /// The set of `columns`; a column of 64 or more makes it every column (the conservative reading;
    /// the manager then refuses it as out of range for any relation narrower than 64).
    pub fn of(columns: &[ColumnId]) -> Self {
        ColumnSet(columns.iter().fold(0, |m, &c| {
            m | 1u64.checked_shl(u32::from(c)).unwrap_or(u64::MAX)
        }))
    }

    /// Columns `0..width` (64 or more: all).
    pub fn all(width: u16) -> Self {
        ColumnSet(if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        })
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn intersects(self, other: ColumnSet) -> bool {
        self.0 & other.0 != 0
    }

    pub fn union(self, other: ColumnSet) -> ColumnSet {
        ColumnSet(self.0 | other.0)
    }

    pub fn contains(self, c: ColumnId) -> bool {
        c < 64 && self.0 & (1 << c) != 0
    }
}

/// What kind of statement took a lock: decides its mode and, under the weaker isolation levels of
/// §5.2, what it may pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatementKind {
    Select,
    Update,
    Insert,
    Delete,
}

impl StatementKind {
    /// Inserts and deletes create or destroy whole rows (they write every column, and under
    /// repeatable read and weaker may pass range read locks).
    pub fn is_insert_or_delete(self) -> bool {
        matches!(self, StatementKind::Insert | StatementKind::Delete)
    }
}

/// Rule 2: can accesses with these column sets conflict at all? Relation level: one of them writes.
/// Column level: one writes a column the other reads or writes.
#[inline]
pub fn access_conflict(
    r1: ColumnSet,
    w1: ColumnSet,
    r2: ColumnSet,
    w2: ColumnSet,
    column_level: bool,
) -> bool {
    if column_level {
        r1.intersects(w2) || w1.intersects(r2) || w1.intersects(w2)
    } else {
        !w1.is_empty() || !w2.is_empty()
    }
}

/// The predicate `c0 = row[0] ∧ c1 = row[1] ∧ …`: what an insert of `row` locks.
pub fn row_predicate(row: &[i64]) -> Predicate {
    Expr::and(
        row.iter()
            .enumerate()
            .map(|(c, &v)| Expr::eq(c as ColumnId, v))
            .collect(),
    )
}

/// How a lock's predicate is held for satisfiability tests.
#[derive(Debug, Clone)]
pub enum Form {
    /// The predicate can hold for no tuple: it conflicts with nothing.
    Unsat,
    /// Past the threshold (or the hard limit): conflicts with whatever rules 1–2 let through.
    Coarse,
    /// Full DNF (no grouping).
    Dnf(Dnf),
    /// Top-level conjuncts, each in DNF (conjunct grouping).
    Grouped(Grouped),
}

/// Where a lock's predicate came from.
#[derive(Debug, Clone)]
pub enum Source {
    AdHoc,
    Prepared {
        template: TemplateId,
        params: Box<[i64]>,
    },
}

/// One predicate lock, as stored in the active sets. Shared (`Arc`) by every bucket it is in.
#[derive(Debug)]
pub struct Lock {
    pub txn: u64,
    pub relation: RelationId,
    pub kind: StatementKind,
    pub read: ColumnSet,
    pub write: ColumnSet,
    /// A range read lock of a transaction at repeatable read or weaker: inserts and deletes pass it
    /// (§5.2).
    pub passable: bool,
    pub source: Source,
    pub(crate) released: AtomicBool,
    form: OnceLock<Form>,
}

impl Lock {
    /// A lock whose predicate `form` is already compiled ([`ConflictRule::compile`]).
    pub fn ad_hoc(
        txn: u64,
        relation: RelationId,
        kind: StatementKind,
        form: Form,
        read: ColumnSet,
        write: ColumnSet,
    ) -> Lock {
        Lock::new(txn, relation, kind, Source::AdHoc, Some(form), read, write)
    }

    /// A prepared lock: its form is compiled only if a pair ever needs it (ad hoc comparison).
    pub fn prepared(
        txn: u64,
        template: TemplateId,
        params: &[i64],
        relation: RelationId,
        kind: StatementKind,
        read: ColumnSet,
        write: ColumnSet,
    ) -> Lock {
        let source = Source::Prepared {
            template,
            params: params.into(),
        };
        Lock::new(txn, relation, kind, source, None, read, write)
    }

    /// A prepared lock handled ad hoc (the prepared optimization off): compared by its compiled
    /// `form`, and still named by its template and parameters (so a repeat is recognised).
    #[allow(clippy::too_many_arguments)]
    pub fn bound(
        txn: u64,
        template: TemplateId,
        params: &[i64],
        relation: RelationId,
        kind: StatementKind,
        form: Form,
        read: ColumnSet,
        write: ColumnSet,
    ) -> Lock {
        let source = Source::Prepared {
            template,
            params: params.into(),
        };
        Lock::new(txn, relation, kind, source, Some(form), read, write)
    }

    /// Does this lock cover request `template` with `params` reading `read` and writing `write`:
    /// same template, same parameters, at least those columns? A transaction holding it needs no
    /// second lock for the request (see [`crate::LockManager::acquire_prepared_with`]).
    pub fn covers(
        &self,
        template: TemplateId,
        params: &[i64],
        read: ColumnSet,
        write: ColumnSet,
    ) -> bool {
        matches!(&self.source, Source::Prepared { template: t, params: p } if *t == template && **p == *params)
            && read.0 & !self.read.0 == 0
            && write.0 & !self.write.0 == 0
    }

    fn new(
        txn: u64,
        relation: RelationId,
        kind: StatementKind,
        source: Source,
        form: Option<Form>,
        read: ColumnSet,
        write: ColumnSet,
    ) -> Lock {
        let cell = OnceLock::new();
        if let Some(f) = form {
            let _ = cell.set(f);
        }
        Lock {
            txn,
            relation,
            kind,
            read,
            write,
            passable: false,
            source,
            released: AtomicBool::new(false),
            form: cell,
        }
    }

    pub fn is_write(&self) -> bool {
        !self.write.is_empty()
    }
}

/// The conflict rule of one lock manager: its optimizations and its conflict graph.
#[derive(Debug, Clone, Default)]
pub struct ConflictRule {
    pub opts: Optimizations,
    pub graph: ConflictGraph,
}

impl ConflictRule {
    pub fn new(opts: Optimizations, graph: ConflictGraph) -> Self {
        ConflictRule { opts, graph }
    }

    /// The most DNF terms a predicate is converted to: the threshold k if set, at most
    /// [`HARD_TERMS`].
    pub fn dnf_limit(&self) -> u64 {
        self.opts.threshold.unwrap_or(HARD_TERMS).min(HARD_TERMS)
    }

    /// The most term combinations tested for one pair: the threshold k if set, at most
    /// [`HARD_PRODUCT`].
    pub fn product_limit(&self) -> u64 {
        self.opts
            .threshold
            .unwrap_or(HARD_PRODUCT)
            .min(HARD_PRODUCT)
    }

    /// Compile a predicate for this rule: full DNF, or conjuncts when grouping. Expects a validated
    /// predicate ([`Expr::validate`]: its depth bounds the recursion).
    pub fn compile(&self, p: &Predicate, solver: &mut Solver) -> Form {
        let limit = self.dnf_limit();
        if self.opts.grouping {
            match Grouped::of(p, limit, solver) {
                None => Form::Unsat,
                Some(g) => Form::Grouped(g),
            }
        } else {
            match Dnf::of(p, limit, solver) {
                None => Form::Coarse,
                Some(d) if d.is_empty() => Form::Unsat,
                Some(d) => Form::Dnf(d),
            }
        }
    }

    /// The lock's form, compiled on first use for prepared locks.
    fn form<'l>(&self, lock: &'l Lock, solver: &mut Solver) -> &'l Form {
        lock.form.get_or_init(|| match &lock.source {
            Source::AdHoc => Form::Coarse, // never happens: ad hoc locks are built with their form
            Source::Prepared { template, params } => {
                match self
                    .graph
                    .template(*template)
                    .and_then(|t| t.predicate.bind(params))
                {
                    Some(p) => self.compile(&p, solver),
                    None => Form::Coarse,
                }
            }
        })
    }

    /// Do `new` and `old` conflict? (Locks of one transaction never do; the manager skips them.)
    pub fn conflict(&self, new: &Lock, old: &Lock, solver: &mut Solver) -> bool {
        if new.relation != old.relation
            || !access_conflict(
                new.read,
                new.write,
                old.read,
                old.write,
                self.opts.column_level,
            )
            || (new.kind.is_insert_or_delete() && old.passable)
        {
            return false;
        }
        if self.opts.prepared {
            if let (
                Source::Prepared {
                    template: a,
                    params: v,
                },
                Source::Prepared {
                    template: b,
                    params: w,
                },
            ) = (&new.source, &old.source)
            {
                match self.graph.edge(*a, *b) {
                    Edge::Never => return false,
                    Edge::When(cp) => return cp.eval(v, w, solver),
                    Edge::AdHoc => {}
                }
            }
        }
        self.predicates_intersect(self.form(new, solver), self.form(old, solver), solver)
    }

    /// Rule 3 on compiled forms.
    pub fn predicates_intersect(&self, a: &Form, b: &Form, solver: &mut Solver) -> bool {
        let limit = self.product_limit();
        match (a, b) {
            (Form::Unsat, _) | (_, Form::Unsat) => false,
            (Form::Coarse, _) | (_, Form::Coarse) => true,
            (Form::Dnf(x), Form::Dnf(y)) => {
                if (x.len() as u64).saturating_mul(y.len() as u64) > limit {
                    return true;
                }
                x.intersects(y, solver)
            }
            (Form::Grouped(x), Form::Grouped(y)) => x.intersects(y, limit, solver),
            _ => true, // mixed forms: one rule compiles one way; conservative if ever mixed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimizations::Step;
    use StatementKind::*;

    fn lock(
        rule: &ConflictRule,
        txn: u64,
        rel: u32,
        kind: StatementKind,
        p: &str,
        read: &[u16],
        write: &[u16],
    ) -> Lock {
        let p = Predicate::parse(p).unwrap();
        let form = rule.compile(&p, &mut Solver::default());
        let read = ColumnSet::of(read).union(ColumnSet(p.columns()));
        Lock::ad_hoc(txn, rel, kind, form, read, ColumnSet::of(write))
    }

    fn rules() -> Vec<ConflictRule> {
        Step::ALL
            .iter()
            .map(|&s| ConflictRule::new(Optimizations::cumulative(s), ConflictGraph::default()))
            .collect()
    }

    #[test]
    fn different_relations_never_conflict() {
        for r in rules() {
            let a = lock(&r, 1, 0, Update, "TRUE", &[], &[0, 1]);
            let b = lock(&r, 2, 1, Update, "TRUE", &[], &[0, 1]);
            assert!(!r.conflict(&a, &b, &mut Solver::default()));
        }
    }

    #[test]
    fn read_read_never_conflicts() {
        for r in rules() {
            let a = lock(&r, 1, 0, Select, "a = 1", &[0, 1, 2], &[]);
            let b = lock(&r, 2, 0, Select, "a = 1", &[0, 1, 2], &[]);
            assert!(!r.conflict(&a, &b, &mut Solver::default()));
        }
    }

    #[test]
    fn disjoint_columns_of_one_row_conflict_only_without_the_column_rule() {
        for r in rules() {
            // Both on row a = 1: one reads b, the other writes c.
            let a = lock(&r, 1, 0, Select, "a = 1", &[1], &[]);
            let b = lock(&r, 2, 0, Update, "a = 1", &[], &[2]);
            assert_eq!(
                r.conflict(&a, &b, &mut Solver::default()),
                !r.opts.column_level
            );
            // Writing the column the other reads conflicts under both rules.
            let c = lock(&r, 3, 0, Update, "a = 1", &[], &[1]);
            assert!(r.conflict(&a, &c, &mut Solver::default()));
            // And a different row never does.
            let d = lock(&r, 4, 0, Update, "a = 2", &[], &[1]);
            assert!(!r.conflict(&a, &d, &mut Solver::default()));
        }
    }

    #[test]
    fn the_section_2_1_example_conflicts() {
        for r in rules() {
            let a = lock(&r, 1, 0, Select, "a = 1 OR b > 2", &[], &[]);
            let b = lock(&r, 2, 0, Update, "a = 3 AND b = 4", &[], &[0, 1]);
            assert!(r.conflict(&a, &b, &mut Solver::default()));
            let c = lock(&r, 3, 0, Update, "a = 3 AND b = 2", &[], &[0, 1]);
            assert!(!r.conflict(&a, &c, &mut Solver::default()));
        }
    }

    #[test]
    fn threshold_falls_back_to_conflict() {
        let mut o = Optimizations::naive();
        o.threshold = Some(8);
        let r = ConflictRule::new(o, ConflictGraph::default());
        let a = lock(
            &r,
            1,
            0,
            Select,
            "(a = 1 OR a = 2) AND (b = 1 OR b = 2)",
            &[],
            &[],
        );
        let b = lock(
            &r,
            2,
            0,
            Update,
            "(a = 3 OR a = 4) AND (b = 3 OR b = 4)",
            &[],
            &[0, 1],
        );
        assert!(
            r.conflict(&a, &b, &mut Solver::default()),
            "16 term pairs > k = 8: conservative"
        );
        o.grouping = true;
        let g = ConflictRule::new(o, ConflictGraph::default());
        let a = lock(
            &g,
            1,
            0,
            Select,
            "(a = 1 OR a = 2) AND (b = 1 OR b = 2)",
            &[],
            &[],
        );
        let b = lock(
            &g,
            2,
            0,
            Update,
            "(a = 3 OR a = 4) AND (b = 3 OR b = 4)",
            &[],
            &[0, 1],
        );
        assert!(
            !g.conflict(&a, &b, &mut Solver::default()),
            "2 groups of 4 terms each ≤ k = 8: exact"
        );
    }

    #[test]
    fn blow_ups_past_the_hard_caps_are_conflicts_not_crashes() {
        // 2^40 DNF terms: the naive rule stores none and answers "conflict"; grouping is exact.
        let wide = (0..40)
            .map(|i| format!("(c{} = 1 OR c{} = 2)", i % 20, i % 20))
            .collect::<Vec<_>>()
            .join(" AND ");
        let other = "c0 = 3";
        let naive = ConflictRule::new(Optimizations::naive(), ConflictGraph::default());
        let a = lock(&naive, 1, 0, Select, &wide, &[], &[]);
        assert!(matches!(a.form.get(), Some(Form::Coarse)));
        let b = lock(&naive, 2, 0, Update, other, &[], &[0]);
        assert!(naive.conflict(&a, &b, &mut Solver::default()));
        let mut o = Optimizations::naive();
        o.grouping = true;
        let grouped = ConflictRule::new(o, ConflictGraph::default());
        let a = lock(&grouped, 1, 0, Select, &wide, &[], &[]);
        let b = lock(&grouped, 2, 0, Update, other, &[], &[0]);
        assert!(!grouped.conflict(&a, &b, &mut Solver::default()));
    }

    #[test]
    fn column_sets() {
        assert_eq!(ColumnSet::of(&[0, 2]), ColumnSet(0b101));
        assert_eq!(ColumnSet::of(&[70]), ColumnSet(u64::MAX));
        assert_eq!(ColumnSet::all(3), ColumnSet(0b111));
        assert_eq!(ColumnSet::all(64), ColumnSet(u64::MAX));
        assert!(ColumnSet::of(&[5]).contains(5) && !ColumnSet::of(&[5]).contains(70));
        assert_eq!(row_predicate(&[7, 8]).to_string(), "(c0 = 7 AND c1 = 8)");
    }
}
