//! The conflict graph of prepared predicates (§2.2.2, §3.2): built once from the request templates,
//! one vertex per template, an edge between two templates whose locks can conflict at all (same
//! relation; a write on one side, or under the column-level rule a column one writes and the other
//! touches), carrying their [`ConflictPredicate`]. Online, two prepared locks are compared by
//! evaluating their edge on their parameter vectors — no DNF, no allocation.

use crate::lock::access_conflict;
use crate::prepared::{ConflictPredicate, Template, TemplateId};

/// Groups of more terms than this are not derived offline: such a pair is compared ad hoc.
pub const OFFLINE_LIMIT: u64 = 4096;

/// What the graph says about a pair of templates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edge {
    /// No edge: the two can never conflict (different relations, no write, disjoint columns, or
    /// predicates that contradict for every parameter value).
    Never,
    /// They conflict iff the conflict predicate holds on (left parameters, right parameters).
    When(ConflictPredicate),
    /// Too large to derive offline: compare the bound predicates ad hoc.
    AdHoc,
}

/// Templates and the edges between every ordered pair (`edge(a, b)` reads `a`'s parameters as `v`).
#[derive(Debug, Clone, Default)]
pub struct ConflictGraph {
    templates: Vec<Template>,
    edges: Vec<Edge>,
}

impl ConflictGraph {
    /// Build the graph; `column_level` picks §2.2.4's access rule, `k` is the threshold (groups of
    /// more terms become `true`). Templates are taken as given (the manager validates them first).
    pub fn build(templates: Vec<Template>, column_level: bool, k: Option<u64>) -> Self {
        let n = templates.len();
        let mut edges = Vec::with_capacity(n * n);
        for a in &templates {
            for b in &templates {
                let related = a.relation == b.relation
                    && access_conflict(a.read, a.write, b.read, b.write, column_level);
                edges.push(if !related {
                    Edge::Never
                } else {
                    match ConflictPredicate::derive(&a.predicate, &b.predicate, OFFLINE_LIMIT, k) {
                        None => Edge::AdHoc,
                        Some(cp) if cp.is_never() => Edge::Never,
                        Some(cp) => Edge::When(cp),
                    }
                });
            }
        }
        ConflictGraph { templates, edges }
    }

    /// The templates with no edges derived: every pair [`Edge::AdHoc`] (a manager without the
    /// prepared optimization binds templates and compares them ad hoc).
    pub fn templates_only(templates: Vec<Template>) -> Self {
        let n = templates.len();
        ConflictGraph {
            templates,
            edges: vec![Edge::AdHoc; n * n],
        }
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    pub fn template(&self, id: TemplateId) -> Option<&Template> {
        self.templates.get(id as usize)
    }

    /// The edge from `a` to `b` (both must be valid ids).
    #[inline]
    pub fn edge(&self, a: TemplateId, b: TemplateId) -> &Edge {
        &self.edges[a as usize * self.templates.len() + b as usize]
    }

    /// How many ordered pairs have each kind of edge: (never, when, ad hoc).
    pub fn census(&self) -> (usize, usize, usize) {
        self.edges.iter().fold((0, 0, 0), |(n, w, h), e| match e {
            Edge::Never => (n + 1, w, h),
            Edge::When(_) => (n, w + 1, h),
            Edge::AdHoc => (n, w, h + 1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::{ColumnSet, StatementKind};
    use crate::predicate::Prepared;

    fn template(
        relation: u32,
        kind: StatementKind,
        p: &str,
        read: &[u16],
        write: &[u16],
    ) -> Template {
        let predicate = Prepared::parse(p).unwrap();
        let read = ColumnSet::of(read).union(ColumnSet(predicate.columns()));
        Template {
            relation,
            kind,
            predicate,
            read,
            write: ColumnSet::of(write),
        }
    }

    #[test]
    fn edges_follow_relations_modes_and_columns() {
        use StatementKind::*;
        let ts = vec![
            template(0, Select, "a = $1", &[1], &[]), // 0: read b by key a
            template(0, Update, "a = $1", &[], &[2]), // 1: write c by key a
            template(0, Update, "a = $1", &[], &[1]), // 2: write b by key a
            template(1, Update, "a = $1", &[], &[1]), // 3: another relation
            template(0, Select, "b BETWEEN $1 AND $2", &[], &[]), // 4: scan on b
        ];
        let g = ConflictGraph::build(ts.clone(), false, None);
        assert_eq!(g.edge(0, 0), &Edge::Never, "read/read");
        assert!(matches!(g.edge(0, 1), Edge::When(_)));
        assert_eq!(g.edge(0, 3), &Edge::Never, "different relations");
        assert!(
            matches!(g.edge(4, 1), Edge::When(_)),
            "relation rule: any write conflicts"
        );
        let c = ConflictGraph::build(ts, true, None);
        assert_eq!(c.edge(0, 1), &Edge::Never, "reads b, the other writes c");
        assert!(matches!(c.edge(0, 2), Edge::When(_)));
        assert_eq!(c.edge(4, 1), &Edge::Never, "scan of b vs writes of c");
        let Edge::When(cp) = c.edge(4, 2) else {
            panic!()
        };
        assert_eq!(
            cp.to_string(),
            "(v1 ≤ v2)",
            "any row the writer touches may fall in a non-empty scan range"
        );
    }
}
