//! What a transaction type's pieces touch, learnt from their declarations, and the graph
//! algorithms the static analyses over those shapes share — Callas's Runtime Pipelining
//! (`callas/analysis.rs`) and transaction chopping by SC-cycles ([`super::chopping`]).
//!
//! A piece's **shape** is, per table, the columns it reads and writes and whether it inserts or
//! does anything else ([`Touch`]), whether its writes commute, and which earlier pieces it needs.
//! A type's shape is the union over every instance seen ([`PieceShape::widen`]). The analyses
//! work on **nodes**: a whole table, or one column of it ([`Node`], [`nodes_of`]).

use crate::storage::{ColumnSet, Database, TableId};
use crate::txn::{Access, AccessKind};
use std::collections::{BTreeMap, BTreeSet};

/// The column index that stands for a whole table (table-level analysis).
pub const WHOLE: u8 = u8::MAX;

/// A node of the table-dependency graph: a table, or one column of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Node {
    pub table: TableId,
    /// The column, or [`WHOLE`].
    pub col: u8,
}

/// How one piece touches one table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Touch {
    /// Columns read (a mask).
    pub read: u64,
    /// Columns written.
    pub write: u64,
    /// Some access inserts.
    pub insert: bool,
    /// Some access reads, updates, deletes or scans (anything but an insert).
    pub other: bool,
}

impl Touch {
    fn union(self, o: Touch) -> Touch {
        Touch {
            read: self.read | o.read,
            write: self.write | o.write,
            insert: self.insert | o.insert,
            other: self.other | o.other,
        }
    }
}

/// What one piece of a transaction type touches, and what it needs (learnt from declarations).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PieceShape {
    /// Per table (tables read-only once loaded left out: nothing conflicts with them).
    pub touches: BTreeMap<TableId, Touch>,
    /// Its writes commute ([`crate::txn::Program::commutes`]).
    pub commutes: bool,
    /// The earlier pieces it needs ([`crate::txn::Program::depends_on`]).
    pub depends_on: Vec<usize>,
}

impl PieceShape {
    /// Adds that the piece touches `table` as `touch`.
    pub fn add(&mut self, table: TableId, touch: Touch) {
        let t = self.touches.entry(table).or_default();
        *t = t.union(touch);
    }

    /// Whether everything `o` touches, `self` touches as well (same columns, same kinds).
    pub fn covers(&self, o: &PieceShape) -> bool {
        o.touches
            .iter()
            .all(|(t, x)| self.touches.get(t).is_some_and(|s| s.union(*x) == *s))
    }

    /// Whether the piece's shape covers what `accesses` touch: `self.covers(&shape_of(db,
    /// accesses))`, without building that shape (the run-time check of every piece).
    pub fn covers_accesses<M: Default + Send + Sync>(
        &self,
        db: &Database<M>,
        accesses: &[Access],
    ) -> bool {
        accesses.iter().all(|a| {
            let Some(t) = db.tables().get(a.table as usize) else {
                return true;
            };
            if t.is_read_only() {
                return true;
            }
            let x = touch_of(a, t.schema().columns().len());
            self.touches
                .get(&(a.table as TableId))
                .is_some_and(|s| s.union(x) == *s)
        })
    }

    /// Both shapes in one.
    pub fn widen(&mut self, o: &PieceShape) {
        for (&t, &x) in &o.touches {
            self.add(t, x);
        }
        self.commutes &= o.commutes;
        for &d in &o.depends_on {
            if !self.depends_on.contains(&d) {
                self.depends_on.push(d);
            }
        }
    }
}

/// A transaction type's pieces, as learnt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeShape {
    pub name: &'static str,
    pub pieces: Vec<PieceShape>,
    /// The last piece that may roll back by its own logic.
    pub commit_point: Option<usize>,
}

impl TypeShape {
    /// Both shapes in one: each piece widened ([`PieceShape::widen`]), pieces only one has
    /// kept, the later commit point.
    pub fn widen(&mut self, o: &TypeShape) {
        if self.pieces.len() < o.pieces.len() {
            self.pieces.resize(o.pieces.len(), PieceShape::default());
        }
        for (s, n) in self.pieces.iter_mut().zip(&o.pieces) {
            s.widen(n);
        }
        self.commit_point = self.commit_point.max(o.commit_point);
    }
}

/// The nodes of `table` that a touch of the columns `mask` makes: one per column, or the whole
/// table (`column` false).
pub fn nodes_of(table: TableId, mask: u64, column: bool, out: &mut Vec<Node>) {
    if mask == 0 {
        return;
    }
    if !column {
        out.push(Node { table, col: WHOLE });
        return;
    }
    let mut m = mask;
    while m != 0 {
        let c = m.trailing_zeros() as u8;
        out.push(Node { table, col: c });
        m &= m - 1;
    }
}

/// Every earlier piece `piece` needs, directly or through others.
pub fn closure(pieces: &[PieceShape], piece: usize) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<usize> = pieces[piece].depends_on.clone();
    while let Some(d) = todo.pop() {
        if d < pieces.len() && d != piece && seen.insert(d) {
            todo.extend(pieces[d].depends_on.iter().copied());
        }
    }
    seen
}

/// Tarjan's strongly connected components of `n` vertices with adjacency `adj`: the component of
/// each vertex, components numbered in reverse topological order.
pub fn scc(n: usize, adj: &[Vec<usize>]) -> Vec<usize> {
    struct T<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        comp: Vec<usize>,
        next: usize,
        comps: usize,
    }
    fn visit(t: &mut T, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for i in 0..t.adj[v].len() {
            let w = t.adj[v][i];
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                t.comp[w] = t.comps;
                if w == v {
                    break;
                }
            }
            t.comps += 1;
        }
    }
    let mut t = T {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        comp: vec![0; n],
        next: 0,
        comps: 0,
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.comp
}

/// The components of `comp` (numbered `0..k`) in a topological order of the condensed graph,
/// choosing among the ready ones the smallest by `key`.
pub fn topo<K: Ord>(comp: &[usize], adj: &[Vec<usize>], key: impl Fn(usize) -> K) -> Vec<usize> {
    let k = comp.iter().copied().max().map_or(0, |m| m + 1);
    let mut succ: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); k];
    let mut indeg = vec![0usize; k];
    for (v, out) in adj.iter().enumerate() {
        for &w in out {
            let (a, b) = (comp[v], comp[w]);
            if a != b && succ[a].insert(b) {
                indeg[b] += 1;
            }
        }
    }
    let mut order = Vec::with_capacity(k);
    let mut ready: Vec<usize> = (0..k).filter(|&c| indeg[c] == 0).collect();
    while !ready.is_empty() {
        let (i, _) = ready
            .iter()
            .enumerate()
            .min_by_key(|(_, &c)| key(c))
            .expect("not empty");
        let c = ready.swap_remove(i);
        order.push(c);
        for &s in &succ[c] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                ready.push(s);
            }
        }
    }
    order
}

/// How `a` touches its table, its whole-row masks cut to the table's `ncols` columns.
pub fn touch_of(a: &Access, ncols: usize) -> Touch {
    let all = if ncols >= 64 { !0 } else { (1u64 << ncols) - 1 };
    let cut = |c: ColumnSet| c.0 & all;
    match a.kind {
        AccessKind::Read | AccessKind::Scan => Touch {
            read: cut(a.read),
            write: 0,
            insert: false,
            other: true,
        },
        AccessKind::Update => Touch {
            read: cut(a.read),
            write: cut(a.write),
            insert: false,
            other: true,
        },
        AccessKind::Insert => Touch {
            read: 0,
            write: all,
            insert: true,
            other: false,
        },
        AccessKind::Delete => Touch {
            read: 0,
            write: all,
            insert: false,
            other: true,
        },
    }
}

/// The shape of a piece that declared `accesses` (tables read-only once loaded left out).
pub fn shape_of<M: Default + Send + Sync>(db: &Database<M>, accesses: &[Access]) -> PieceShape {
    let mut s = PieceShape::default();
    for a in accesses {
        let Some(t) = db.tables().get(a.table as usize) else {
            continue;
        };
        if t.is_read_only() {
            continue;
        }
        s.add(a.table as TableId, touch_of(a, t.schema().columns().len()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Column, ColumnType, Schema, TableSpec};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn db() -> Database<()> {
        let mut db = Database::new();
        let cols = |n: usize| {
            Schema::new(
                (0..n)
                    .map(|c| Column::new(format!("c{c}"), ColumnType::Int))
                    .collect(),
            )
            .expect("a valid schema")
        };
        db.create_table(TableSpec::new("a", cols(3))).unwrap();
        db.create_table(TableSpec::new("b", cols(5))).unwrap();
        db.create_table(TableSpec::new("ro", cols(2)).read_only())
            .unwrap();
        db
    }

    fn access(rng: &mut SmallRng) -> Access {
        let table = rng.gen_range(0..4); // 3: no such table
        let cols = ColumnSet(rng.gen_range(0..32u64));
        let other = ColumnSet(rng.gen_range(0..32u64));
        match rng.gen_range(0..5) {
            0 => Access::read(table, 1, cols),
            1 => Access::update(table, 1, cols, other),
            2 => Access::insert(table, 1),
            3 => Access::delete(table, 1),
            _ => Access::scan(table, 0, 9, cols),
        }
    }

    /// The run-time check without a shape built says what the shape built says, on random
    /// declarations against random learnt shapes (read-only and unknown tables included).
    #[test]
    fn covers_accesses_agrees_with_covers_of_the_shape() {
        let db = db();
        let mut rng = SmallRng::seed_from_u64(7);
        let (mut yes, mut no) = (0, 0);
        for _ in 0..5_000 {
            let learnt: Vec<Access> = (0..rng.gen_range(0..4)).map(|_| access(&mut rng)).collect();
            let decl: Vec<Access> = (0..rng.gen_range(0..3)).map(|_| access(&mut rng)).collect();
            let shape = shape_of(&db, &learnt);
            let want = shape.covers(&shape_of(&db, &decl));
            assert_eq!(
                shape.covers_accesses(&db, &decl),
                want,
                "{learnt:?} {decl:?}"
            );
            if want {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 500 && no > 500, "both answers drawn: {yes} {no}");
    }
}
