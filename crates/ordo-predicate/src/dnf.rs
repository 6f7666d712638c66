//! Disjunctive normal form and the solver of a conjunction (§2.1, §2.2.4's threshold).
//!
//! `P ∧ P'` is unsatisfiable iff every term of its DNF is a contradiction, and a term — a
//! conjunction of atoms — is decided column by column: the comparisons on one column intersect to
//! an interval `[lo, hi]` of `i64`, and the term is a contradiction iff some column's interval is
//! empty or wholly covered by the values its `≠` atoms exclude. That is exact over the integers.
//!
//! [`term_count`] counts a predicate's DNF terms in linear time (product over ∧, sum over ∨) so a
//! conversion that would blow up can be refused before it starts (the threshold k).

use crate::predicate::{Atom, ColumnId, Expr, Op, Predicate};

/// The number of terms of the DNF of `e` (before dropping contradictory ones), saturating at
/// `u64::MAX`: `Atom`/`True` 1, `False` 0, product over `And`, sum over `Or`.
pub fn term_count<V>(e: &Expr<V>) -> u64 {
    match e {
        Expr::True | Expr::Atom(_) => 1,
        Expr::False => 0,
        Expr::And(ps) => ps.iter().fold(1u64, |n, p| n.saturating_mul(term_count(p))),
        Expr::Or(ps) => ps.iter().fold(0u64, |n, p| n.saturating_add(term_count(p))),
    }
}

/// The DNF of `e` as a list of terms (each a conjunction of atoms; an empty term is `true`, an empty
/// list `false`), or `None` when it would have more than `limit` terms.
pub fn to_dnf<V: Copy>(e: &Expr<V>, limit: u64) -> Option<Vec<Vec<Atom<V>>>> {
    if term_count(e) > limit {
        return None;
    }
    Some(dnf_of(e))
}

fn dnf_of<V: Copy>(e: &Expr<V>) -> Vec<Vec<Atom<V>>> {
    match e {
        Expr::True => vec![vec![]],
        Expr::False => vec![],
        Expr::Atom(a) => vec![vec![*a]],
        Expr::Or(ps) => ps.iter().flat_map(dnf_of).collect(),
        Expr::And(ps) => {
            let mut acc: Vec<Vec<Atom<V>>> = vec![vec![]];
            for p in ps {
                let part = dnf_of(p);
                let mut next = Vec::with_capacity(acc.len() * part.len());
                for t in &acc {
                    for u in &part {
                        let mut term = Vec::with_capacity(t.len() + u.len());
                        term.extend_from_slice(t);
                        term.extend_from_slice(u);
                        next.push(term);
                    }
                }
                acc = next;
            }
            acc
        }
    }
}

/// An atom normalized for the solver: `lo ≤ column ≤ hi` (closed over `i64`; `lo > hi` is an empty
/// interval, as `column < i64::MIN`), or `column ≠ lo` when `ne`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub column: ColumnId,
    pub ne: bool,
    pub lo: i64,
    pub hi: i64,
}

impl Bound {
    pub fn of(a: &Atom<i64>) -> Bound {
        let (c, v) = (a.column, a.value);
        let range = |lo, hi| Bound {
            column: c,
            ne: false,
            lo,
            hi,
        };
        match a.op {
            Op::Eq => range(v, v),
            Op::Le => range(i64::MIN, v),
            Op::Ge => range(v, i64::MAX),
            Op::Lt => v.checked_sub(1).map_or(range(1, 0), |h| range(i64::MIN, h)),
            Op::Gt => v.checked_add(1).map_or(range(1, 0), |l| range(l, i64::MAX)),
            Op::Ne => Bound {
                column: c,
                ne: true,
                lo: v,
                hi: v,
            },
        }
    }
}

/// Decides conjunctions of [`Bound`]s; reusable (call [`Solver::reset`] between terms) so that a
/// lock acquisition allocates nothing per term.
pub struct Solver {
    lo: [i64; 64],
    hi: [i64; 64],
    touched: u64,
    ne: Vec<(ColumnId, i64)>,
}

impl Default for Solver {
    fn default() -> Self {
        Solver {
            lo: [0; 64],
            hi: [0; 64],
            touched: 0,
            ne: Vec::new(),
        }
    }
}

impl Solver {
    pub fn reset(&mut self) {
        self.touched = 0;
        self.ne.clear();
    }

    /// Add one atom; `false` once the conjunction is known to be a contradiction (an empty interval).
    #[inline]
    pub fn add(&mut self, b: &Bound) -> bool {
        if b.ne {
            self.ne.push((b.column, b.lo));
            return true;
        }
        let c = usize::from(b.column) & 63;
        let bit = 1u64 << c;
        if self.touched & bit == 0 {
            self.touched |= bit;
            self.lo[c] = b.lo;
            self.hi[c] = b.hi;
        } else {
            self.lo[c] = self.lo[c].max(b.lo);
            self.hi[c] = self.hi[c].min(b.hi);
        }
        self.lo[c] <= self.hi[c]
    }

    /// Add every atom of `term`; `false` on a contradiction.
    #[inline]
    pub fn add_all(&mut self, term: &[Bound]) -> bool {
        term.iter().all(|b| self.add(b))
    }

    /// After the atoms are added: is the conjunction satisfiable? (Checks the `≠` atoms: a column is
    /// a contradiction when they exclude every value of its interval.)
    pub fn finish(&mut self) -> bool {
        if self.ne.is_empty() {
            return true;
        }
        self.ne.sort_unstable();
        self.ne.dedup();
        let mut i = 0;
        while i < self.ne.len() {
            let col = self.ne[i].0;
            let c = usize::from(col) & 63;
            let (lo, hi) = if self.touched & (1 << c) != 0 {
                (self.lo[c], self.hi[c])
            } else {
                (i64::MIN, i64::MAX)
            };
            let mut inside: i128 = 0;
            while i < self.ne.len() && self.ne[i].0 == col {
                let v = self.ne[i].1;
                if lo <= v && v <= hi {
                    inside += 1;
                }
                i += 1;
            }
            if inside > i128::from(hi) - i128::from(lo) {
                return false;
            }
        }
        true
    }

    /// Is the conjunction of `terms` (all their atoms together) satisfiable?
    pub fn satisfiable(&mut self, terms: &[&[Bound]]) -> bool {
        self.reset();
        terms.iter().all(|t| self.add_all(t)) && self.finish()
    }
}

/// A predicate in DNF, flat: the atoms of all terms in one vector, `ends[i]` where term i ends.
/// Terms that are contradictions on their own are dropped, so an empty `Dnf` is an unsatisfiable
/// predicate and a `Dnf` with an empty term is `true`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dnf {
    atoms: Vec<Bound>,
    ends: Vec<u32>,
}

impl Dnf {
    /// The DNF of `p`, or `None` past `limit` terms. Built flat, node by node (no vector per term),
    /// then pruned of terms that contradict themselves.
    pub fn of(p: &Predicate, limit: u64, solver: &mut Solver) -> Option<Dnf> {
        if term_count(p) > limit {
            return None;
        }
        // Compact in place, dropping terms that contradict themselves.
        let mut d = Dnf::build(p);
        let (mut atoms, mut terms, mut start) = (0, 0, 0);
        for i in 0..d.ends.len() {
            let end = d.ends[i] as usize;
            let t = &d.atoms[start..end];
            let alone =
                matches!(t, [] | [Bound { ne: true, .. }]) || matches!(t, [b] if b.lo <= b.hi);
            if alone || solver.satisfiable(&[t]) {
                d.atoms.copy_within(start..end, atoms);
                atoms += end - start;
                d.ends[terms] = atoms as u32;
                terms += 1;
            }
            start = end;
        }
        d.atoms.truncate(atoms);
        d.ends.truncate(terms);
        Some(d)
    }

    fn build(p: &Predicate) -> Dnf {
        match p {
            Expr::True => Dnf {
                atoms: vec![],
                ends: vec![0],
            },
            Expr::False => Dnf::default(),
            Expr::Atom(a) => Dnf {
                atoms: vec![Bound::of(a)],
                ends: vec![1],
            },
            Expr::Or(ps) => {
                let mut d = Dnf::default();
                for q in ps {
                    let part = Dnf::build(q);
                    let base = d.atoms.len() as u32;
                    d.atoms.extend_from_slice(&part.atoms);
                    d.ends.extend(part.ends.iter().map(|e| e + base));
                }
                d
            }
            Expr::And(ps) => {
                // A conjunction of atoms is one term: no products.
                if ps.iter().all(|q| matches!(q, Expr::Atom(_))) {
                    let atoms: Vec<Bound> = ps
                        .iter()
                        .map(|q| match q {
                            Expr::Atom(a) => Bound::of(a),
                            _ => unreachable!("all atoms"),
                        })
                        .collect();
                    let n = atoms.len() as u32;
                    return Dnf {
                        atoms,
                        ends: vec![n],
                    };
                }
                let mut acc = Dnf {
                    atoms: vec![],
                    ends: vec![0],
                };
                for q in ps {
                    let part = Dnf::build(q);
                    let mut next = Dnf {
                        atoms: Vec::with_capacity(
                            acc.atoms.len() * part.len() + part.atoms.len() * acc.len(),
                        ),
                        ends: Vec::with_capacity(acc.len() * part.len()),
                    };
                    for t in acc.terms() {
                        for u in part.terms() {
                            next.atoms.extend_from_slice(t);
                            next.atoms.extend_from_slice(u);
                            next.ends.push(next.atoms.len() as u32);
                        }
                    }
                    acc = next;
                }
                acc
            }
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Term `i`.
    #[inline]
    pub fn term(&self, i: usize) -> &[Bound] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.atoms[start..self.ends[i] as usize]
    }

    pub fn terms(&self) -> impl Iterator<Item = &[Bound]> + '_ {
        (0..self.len()).map(move |i| self.term(i))
    }

    /// Does some term of `self` together with some term of `other` have a solution? (The naive
    /// conflict test: the DNF of `P ∧ P'` is the cross product of the two DNFs.)
    pub fn intersects(&self, other: &Dnf, solver: &mut Solver) -> bool {
        self.terms()
            .any(|t| other.terms().any(|u| solver.satisfiable(&[t, u])))
    }
}

/// Is the conjunction `atoms` satisfiable over the integers?
pub fn conjunction_satisfiable(atoms: &[Atom<i64>]) -> bool {
    let bounds: Vec<Bound> = atoms.iter().map(Bound::of).collect();
    Solver::default().satisfiable(&[&bounds])
}

/// Is `p` satisfiable? By full DNF (the naive way); `None` past `limit` terms.
pub fn satisfiable(p: &Predicate, limit: u64) -> Option<bool> {
    Dnf::of(p, limit, &mut Solver::default()).map(|d| !d.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Predicate {
        Predicate::parse(s).unwrap()
    }

    #[test]
    fn counts_terms_in_linear_time() {
        assert_eq!(term_count(&p("a = 1")), 1);
        assert_eq!(term_count(&p("a = 1 OR b > 2")), 2);
        let grouped =
            p("(a = 1 OR a = 2) AND (b = 1 OR b = 2) AND (a = 3 OR a = 4) AND (b = 3 OR b = 4)");
        assert_eq!(term_count(&grouped), 16);
        assert_eq!(to_dnf(&grouped, 16).map(|d| d.len()), Some(16));
        assert_eq!(to_dnf(&grouped, 15), None);
        assert_eq!(term_count(&Expr::<i64>::False), 0);
        // 2^70 terms: counted without building anything.
        let wide = Expr::and(
            (0..70)
                .map(|i| Expr::or(vec![Expr::eq(i % 8, 1), Expr::eq(i % 8, 2)]))
                .collect(),
        );
        assert_eq!(term_count(&wide), u64::MAX);
        assert_eq!(satisfiable(&wide, 1 << 10), None);
    }

    #[test]
    fn the_papers_example_of_section_2_1() {
        // P = (a=1 ∨ b>2), P' = (a=3 ∧ b=4): (a=1∧a=3∧b=4) ∨ (b>2∧a=3∧b=4), the second satisfiable.
        let both = p("(a = 1 OR b > 2) AND (a = 3 AND b = 4)");
        let terms = to_dnf(&both, 100).unwrap();
        assert_eq!(terms.len(), 2);
        assert!(!conjunction_satisfiable(&terms[0]));
        assert!(conjunction_satisfiable(&terms[1]));
        assert_eq!(satisfiable(&both, 100), Some(true));
        assert_eq!(
            satisfiable(&p("(a = 1 OR b > 4) AND (a = 3 AND b = 4)"), 100),
            Some(false)
        );
    }

    #[test]
    fn integer_reasoning_is_exact() {
        let sat = |s: &str| satisfiable(&p(s), 100).unwrap();
        assert!(!sat("a > 3 AND a < 4"));
        assert!(sat("a > 3 AND a < 5"));
        assert!(!sat("a >= 3 AND a <= 4 AND a <> 3 AND a <> 4"));
        assert!(sat("a >= 3 AND a <= 5 AND a <> 3 AND a <> 4"));
        assert!(sat("a <> 3 AND a <> 4"));
        assert!(!sat("a = 3 AND a <> 3"));
        assert!(!sat("a < -9223372036854775808"));
        assert!(!sat("a > 9223372036854775807"));
        assert!(sat("a >= 9223372036854775807"));
        assert!(!sat("a BETWEEN 5 AND 4"));
        assert!(sat("a = 1 AND b = 2 AND c <> 1"));
        assert!(!sat("FALSE"));
        assert!(sat("TRUE"));
    }
}
