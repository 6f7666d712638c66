//! Conjunct grouping (§2.2.1): only atoms on one column can contradict each other, so the top-level
//! conjuncts of `P ∧ P'` are split by a union-find over their columns into groups over disjoint
//! column sets; each group is converted to DNF on its own, and `P ∧ P'` is satisfiable iff every
//! group is. `(a=1 ∨ a=2) ∧ (b=1 ∨ b=2)` against `(a=3 ∨ a=4) ∧ (b=3 ∨ b=4)`: 2 groups of 4 terms
//! instead of one DNF of 16.
//!
//! Each lock keeps its predicate as [`Grouped`]: its top-level conjuncts, each with its own DNF and
//! column mask, and already known to be satisfiable on its own, so a pair test only converts the groups
//! that mix conjuncts of both sides.

use crate::dnf::{Dnf, Solver};
use crate::predicate::{Expr, Predicate};

/// Union-find over `0..n` with path halving (the disjoint-set structure of [46] in the paper).
pub struct UnionFind<'a> {
    parent: &'a mut [u16],
}

impl<'a> UnionFind<'a> {
    /// Over `parent.len()` singletons (at most 65,535).
    /// `parent.len()` must not exceed 65,536 (callers with more items merge everything instead).
    pub fn new(parent: &'a mut [u16]) -> Self {
        for (i, p) in parent.iter_mut().enumerate() {
            *p = i as u16;
        }
        UnionFind { parent }
    }

    pub fn find(&mut self, mut i: usize) -> usize {
        while usize::from(self.parent[i]) != i {
            let g = self.parent[usize::from(self.parent[i])];
            self.parent[i] = g;
            i = usize::from(g);
        }
        i
    }

    pub fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            self.parent[hi] = lo as u16;
        }
    }

    /// Union every two items whose column masks (`columns(i)`) share a column: one pass, each column
    /// remembers the first item that mentioned it.
    pub fn union_by_columns(&mut self, n: usize, columns: impl Fn(usize) -> u64) {
        let mut owner = [u16::MAX; 64];
        for i in 0..n {
            let mut m = columns(i);
            while m != 0 {
                let c = m.trailing_zeros() as usize;
                m &= m - 1;
                if owner[c] == u16::MAX {
                    owner[c] = i as u16;
                } else {
                    self.union(i, usize::from(owner[c]));
                }
            }
        }
    }
}

/// The groups of items `0..n` over disjoint column sets, each a list of item indices in order.
pub fn groups(n: usize, columns: impl Fn(usize) -> u64) -> Vec<Vec<usize>> {
    if n > usize::from(u16::MAX) {
        return vec![(0..n).collect()]; // one group: plain DNF, exact, just not split
    }
    let mut parent = vec![0u16; n];
    let mut uf = UnionFind::new(&mut parent);
    uf.union_by_columns(n, columns);
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut slot = vec![usize::MAX; n];
    for i in 0..n {
        let r = uf.find(i);
        if slot[r] == usize::MAX {
            slot[r] = out.len();
            out.push(Vec::new());
        }
        out[slot[r]].push(i);
    }
    out
}

/// One top-level conjunct: its columns and its DNF (`None` when its DNF is past the limit: it is then
/// assumed satisfiable with anything, the conservative answer).
#[derive(Debug, Clone)]
pub struct Conjunct {
    pub columns: u64,
    pub dnf: Option<Dnf>,
}

/// A predicate as its top-level conjuncts. `conjuncts` empty means `true`.
#[derive(Debug, Clone, Default)]
pub struct Grouped {
    pub conjuncts: Vec<Conjunct>,
}

/// The top-level conjuncts of `p`, without copying: nested ∧ flattened, `TRUE` skipped; `false` if
/// one is `FALSE` (then `p` is unsatisfiable).
fn conjunct_refs<'a, V>(p: &'a Expr<V>, out: &mut Vec<&'a Expr<V>>) -> bool {
    match p {
        Expr::True => true,
        Expr::False => false,
        Expr::And(ps) => ps.iter().all(|q| conjunct_refs(q, out)),
        _ => {
            out.push(p);
            true
        }
    }
}

/// The top-level conjuncts of `p` (after `simplify`, which flattens nested ∧).
pub fn top_level_conjuncts<V: Copy>(p: &Expr<V>) -> Vec<Expr<V>> {
    match p.simplify() {
        Expr::True => vec![],
        Expr::And(ps) => ps,
        q => vec![q],
    }
}

impl Grouped {
    /// `p` as conjuncts, each converted to DNF if it has at most `limit` terms, or `None` when `p` is
    /// unsatisfiable (then it conflicts with nothing). Groups of `p`'s own conjuncts past `limit`
    /// terms are assumed satisfiable.
    pub fn of(p: &Predicate, limit: u64, solver: &mut Solver) -> Option<Grouped> {
        let mut parts = Vec::new();
        if !conjunct_refs(p, &mut parts) {
            return None;
        }
        let mut conjuncts = Vec::with_capacity(parts.len());
        let (mut seen, mut shared) = (0u64, false);
        for c in parts {
            let columns = c.columns();
            match Dnf::of(c, limit, solver) {
                None => conjuncts.push(Conjunct { columns, dnf: None }),
                Some(d) if d.is_empty() => return None,
                Some(d) if d.terms().any(|t| t.is_empty()) => continue, // always true: drop
                Some(d) => conjuncts.push(Conjunct {
                    columns,
                    dnf: Some(d),
                }),
            }
            shared |= seen & columns != 0;
            seen |= columns;
        }
        let g = Grouped { conjuncts };
        // Conjuncts over disjoint columns are satisfiable together (each is on its own).
        (!shared || g.intersects(&Grouped::default(), limit, solver)).then_some(g)
    }

    /// Is `self ∧ other` satisfiable? Exact up to `limit` terms per group, `true` (conflict) past it.
    /// Assumes each side is satisfiable on its own (as [`Grouped::of`] guarantees), except that
    /// `other` may be empty (`true`), which checks `self` alone.
    pub fn intersects(&self, other: &Grouped, limit: u64, solver: &mut Solver) -> bool {
        let na = self.conjuncts.len();
        let n = na + other.conjuncts.len();
        if n > usize::from(u16::MAX) {
            return true; // too many conjuncts to group: the conservative answer
        }
        let conjunct = |i: usize| {
            if i < na {
                &self.conjuncts[i]
            } else {
                &other.conjuncts[i - na]
            }
        };
        let mut stack = [0u16; 128];
        let mut heap = Vec::new();
        let parent: &mut [u16] = if n <= stack.len() {
            &mut stack[..n]
        } else {
            heap.resize(n, 0);
            &mut heap
        };
        let mut uf = UnionFind::new(parent);
        uf.union_by_columns(n, |i| conjunct(i).columns);
        let alone = other.conjuncts.is_empty();
        let mut members: Vec<usize> = Vec::new();
        let mut dnfs: Vec<&Dnf> = Vec::new();
        for root in 0..n {
            if uf.find(root) != root {
                continue;
            }
            // A group of one conjunct is satisfiable (its DNF is non-empty), and so is a group of one
            // side's conjuncts only (each side is), unless we are checking `self` alone.
            let (mut size, mut left, mut right) = (0, false, false);
            for i in root..n {
                if uf.find(i) == root {
                    size += 1;
                    left |= i < na;
                    right |= i >= na;
                }
            }
            if size < 2 || !(left && right || alone) {
                continue;
            }
            members.clear();
            members.extend((root..n).filter(|&i| uf.find(i) == root));
            dnfs.clear();
            let mut unknown = false;
            for &i in &members {
                match conjunct(i).dnf.as_ref() {
                    Some(d) => dnfs.push(d),
                    None => unknown = true,
                }
            }
            if unknown {
                continue; // a conjunct past the limit: assume satisfiable
            }
            if !group_satisfiable(&dnfs, limit, solver) {
                return false;
            }
        }
        true
    }
}

/// Is the conjunction of the DNFs `parts` satisfiable? Walks the product of their terms (an
/// odometer) without building it; past `limit` combinations, answers `true`.
pub fn group_satisfiable(parts: &[&Dnf], limit: u64, solver: &mut Solver) -> bool {
    let product = parts
        .iter()
        .fold(1u64, |n, d| n.saturating_mul(d.len() as u64));
    if product > limit {
        return true;
    }
    if product == 0 {
        return false;
    }
    if let [a, b] = parts {
        // The common case, two conjuncts meeting on one column: no odometer.
        return a.intersects(b, solver);
    }
    let mut at = vec![0usize; parts.len()];
    loop {
        solver.reset();
        if parts
            .iter()
            .zip(&at)
            .all(|(d, &i)| solver.add_all(d.term(i)))
            && solver.finish()
        {
            return true;
        }
        // Next combination.
        let mut k = 0;
        loop {
            if k == parts.len() {
                return false;
            }
            at[k] += 1;
            if at[k] < parts[k].len() {
                break;
            }
            at[k] = 0;
            k += 1;
        }
    }
}

/// Is `p ∧ q` satisfiable, by conjunct grouping? Groups past `limit` terms count as satisfiable.
pub fn satisfiable(p: &Predicate, q: &Predicate, limit: u64) -> bool {
    let mut s = Solver::default();
    match (Grouped::of(p, limit, &mut s), Grouped::of(q, limit, &mut s)) {
        (Some(a), Some(b)) => a.intersects(&b, limit, &mut s),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dnf::{self, term_count};

    fn p(s: &str) -> Predicate {
        Predicate::parse(s).unwrap()
    }

    #[test]
    fn the_papers_grouping_example_2_2_1() {
        let a = p("(a = 1 OR a = 2) AND (b = 1 OR b = 2)");
        let b = p("(a = 3 OR a = 4) AND (b = 3 OR b = 4)");
        let both = Expr::and(vec![a.clone(), b.clone()]);
        assert_eq!(term_count(&both), 16);
        let conj = top_level_conjuncts(&both);
        let gs = groups(conj.len(), |i| conj[i].columns());
        assert_eq!(gs, vec![vec![0, 2], vec![1, 3]]);
        for g in &gs {
            let sub = Expr::and(g.iter().map(|&i| conj[i].clone()).collect());
            assert_eq!(term_count(&sub), 4);
        }
        assert!(!satisfiable(&a, &b, 4));
        // The whole DNF would need 16 terms: past a limit of 4 the naive way cannot decide.
        assert_eq!(dnf::satisfiable(&both, 4), None);
        assert_eq!(dnf::satisfiable(&both, 16), Some(false));
        let c = p("(a = 2 OR a = 4) AND (b = 1 OR b = 4)");
        assert!(satisfiable(&a, &c, 4));
        assert!(satisfiable(&b, &c, 4));
    }

    #[test]
    fn groups_chain_through_shared_columns() {
        let cols = [0b001, 0b010, 0b100, 0b011, 0b1000];
        assert_eq!(
            groups(5, |i| cols[i]),
            vec![vec![0, 1, 3], vec![2], vec![4]]
        );
    }

    #[test]
    fn unsatisfiable_sides_conflict_with_nothing() {
        assert!(!satisfiable(&p("a > 3 AND a < 4"), &p("TRUE"), 100));
        assert!(!satisfiable(
            &p("(a = 1 OR a = 2) AND (a = 3 OR a = 4)"),
            &p("b = 1"),
            100
        ));
        assert!(satisfiable(&p("TRUE"), &p("TRUE"), 100));
        assert!(!satisfiable(&p("FALSE"), &p("TRUE"), 100));
    }
}
