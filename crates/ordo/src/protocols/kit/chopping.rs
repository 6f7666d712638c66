//! Transaction chopping by SC-cycle analysis (Shasha, Llirbat, Simon, Valduriez, "Transaction
//! chopping: algorithms and performance studies", TODS 20(3), 1995): the **finest correct
//! chopping** of a set of transaction types, from what their pieces touch ([`TypeShape`]).
//!
//! # The theory
//!
//! Chop each transaction into pieces and run every piece as a transaction of its own. The
//! **chopping graph** has a vertex per piece (of every transaction instance that may run at once),
//! **S-edges** between the pieces of one transaction and **C-edges** between pieces of different
//! transactions that conflict (both touch a node — a table, or a column at column level — and at
//! least one writes it). A chopping is **correct** — every execution in which each piece is
//! serializable is serializable as the whole transactions — if the graph has no **SC-cycle** (a
//! cycle with at least one S-edge and one C-edge), and it is **rollback-safe** if every piece that
//! may roll back by its own logic is in the first piece.
//!
//! An SC-cycle through transaction T leaves T at one piece and comes back at another through the
//! other transactions, and the pieces of any other transaction are all tied by S-edges: so a
//! chopping of T is free of SC-cycles through T iff no two of T's pieces are connected through the
//! **unchopped** others — whatever the chopping of the others. Hence the paper's algorithm:
//!
//! ```text
//!  for each transaction type T                                           [`chop`]
//!    graph: a vertex per piece of T, one per other transaction, unchopped (the other types and,
//!           with `concurrent_self`, a second instance T' of T); C-edges only       [`Footprint`]
//!    pieces of T in one connected component form one piece of T's finest chopping   (`finest`)
//!    rollback safety: the pieces up to Program::commit_point join the first one
//!    order: the pieces follow the dependencies between them (Program::depends_on); a cycle of
//!           dependencies merges them, the first piece goes first                      (`chops`)
//!  the finest chopping of the set is every type's finest chopping at once (Thm: their union has
//!  no SC-cycle, and any finer chopping of some T has one)
//! ```
//!
//! **Ordo's pieces are the operations.** A program is already cut into pieces that declare what
//! they touch; the analysis merges pieces, never splits one.
//!
//! **Instances.** A workload runs many instances of each type at once, so a type T conflicts with
//! a second instance of itself (`concurrent_self`, the default): two pieces of T that both conflict
//! with T' are merged. This is why the thesis (Xie 2016, §4.4) finds SC-cycle chopping so coarse:
//! any two pieces of TPC-C's New-Order that write tables another New-Order writes are tied through
//! that other New-Order. The textbook examples reason about single transactions (`concurrent_self`
//! false).
//!
//! **Exemptions** (as Callas's analysis, §4.5.1): a node only ever inserted into (keys that no two
//! transactions share, from counters) has no C-edge (`uniqueness`); optionally, a node touched only
//! by pieces whose writes commute ([`crate::txn::Program::commutes`]) has none either
//! (`commutativity`; off by default: the classic theory has no commutativity, and the history
//! checker would see those write-write cycles).

use super::shape::{closure, nodes_of, scc, topo, Node, TypeShape};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The analysis's choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScOpts {
    /// Nodes are columns (else whole tables).
    pub column: bool,
    /// A node touched only by commuting pieces has no C-edge.
    pub commutativity: bool,
    /// A node only ever inserted into has no C-edge.
    pub uniqueness: bool,
    /// Each type may run beside another instance of itself.
    pub concurrent_self: bool,
}

impl Default for ScOpts {
    fn default() -> Self {
        ScOpts {
            column: true,
            commutativity: false,
            uniqueness: true,
            concurrent_self: true,
        }
    }
}

/// Why a node written by some type has no C-edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exempt {
    /// Only pieces whose writes commute touch it.
    Commutes,
    /// Only inserts touch it (unique keys).
    Unique,
}

impl fmt::Display for Exempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Exempt::Commutes => "only commuting writes",
            Exempt::Unique => "only inserts (unique keys)",
        })
    }
}

/// One transaction type's chopping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeChops {
    pub name: &'static str,
    /// The finest chopping without SC-cycles (pieces grouped, each group ascending, groups by
    /// their first piece), before rollback safety.
    pub finest: Vec<Vec<usize>>,
    /// What runs: rollback-safe (every piece up to the commit point in the first chop), in an
    /// order the dependencies allow; each chop's pieces run in program order.
    pub chops: Vec<Vec<usize>>,
    /// Per piece: the other transactions it has a C-edge with (`T'`: another instance of T).
    pub conflicts: Vec<Vec<String>>,
}

/// The finest correct chopping of a set of types.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chopping {
    /// Written nodes that have no C-edge, and why.
    pub exempt: BTreeMap<Node, Exempt>,
    pub types: Vec<TypeChops>,
}

impl Chopping {
    /// The chopping of type `name`.
    pub fn of(&self, name: &str) -> Option<&TypeChops> {
        self.types.iter().find(|t| t.name == name)
    }
}

/// The nodes something reads and writes (exempt nodes left out): a piece, or a whole transaction.
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    pub reads: BTreeSet<Node>,
    pub writes: BTreeSet<Node>,
}

impl Footprint {
    /// Whether the two have a C-edge: a node both touch that at least one writes.
    pub fn conflicts(&self, o: &Footprint) -> bool {
        let hits = |w: &BTreeSet<Node>, x: &Footprint| {
            w.iter()
                .any(|n| x.writes.contains(n) || x.reads.contains(n))
        };
        hits(&self.writes, o) || hits(&o.writes, self)
    }

    fn add(&mut self, o: &Footprint) {
        self.reads.extend(o.reads.iter().copied());
        self.writes.extend(o.writes.iter().copied());
    }
}

/// The exempt nodes of `types` (see the module docs).
fn exemptions(types: &[TypeShape], opts: ScOpts) -> BTreeMap<Node, Exempt> {
    #[derive(Default)]
    struct Seen {
        written: bool,
        non_comm: bool,
        non_insert: bool,
    }
    let mut seen: BTreeMap<Node, Seen> = BTreeMap::new();
    let mut nodes = Vec::new();
    for p in types.iter().flat_map(|t| &t.pieces) {
        for (&table, t) in &p.touches {
            nodes.clear();
            nodes_of(table, t.read | t.write, opts.column, &mut nodes);
            for n in &nodes {
                let s = seen.entry(*n).or_default();
                s.non_comm |= !p.commutes;
                s.non_insert |= t.other;
            }
            nodes.clear();
            nodes_of(table, t.write, opts.column, &mut nodes);
            for n in &nodes {
                seen.entry(*n).or_default().written = true;
            }
        }
    }
    seen.into_iter()
        .filter(|(_, s)| s.written)
        .filter_map(|(n, s)| {
            if opts.commutativity && !s.non_comm {
                Some((n, Exempt::Commutes))
            } else if opts.uniqueness && !s.non_insert {
                Some((n, Exempt::Unique))
            } else {
                None
            }
        })
        .collect()
}

/// The footprint of each piece of each type.
fn footprints(
    types: &[TypeShape],
    exempt: &BTreeMap<Node, Exempt>,
    column: bool,
) -> Vec<Vec<Footprint>> {
    let mut nodes = Vec::new();
    types
        .iter()
        .map(|ty| {
            ty.pieces
                .iter()
                .map(|p| {
                    let mut f = Footprint::default();
                    for (&table, t) in &p.touches {
                        for (mask, set) in [(t.read, &mut f.reads), (t.write, &mut f.writes)] {
                            nodes.clear();
                            nodes_of(table, mask, column, &mut nodes);
                            set.extend(nodes.iter().filter(|n| !exempt.contains_key(n)));
                        }
                    }
                    f
                })
                .collect()
        })
        .collect()
}

/// A union-find over `n` vertices.
struct Sets(Vec<usize>);

impl Sets {
    fn new(n: usize) -> Self {
        Sets((0..n).collect())
    }
    fn find(&mut self, v: usize) -> usize {
        let mut r = v;
        while self.0[r] != r {
            r = self.0[r];
        }
        let mut v = v;
        while self.0[v] != r {
            let next = self.0[v];
            self.0[v] = r;
            v = next;
        }
        r
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }
}

/// For type `ti`: the component of each of its pieces in the graph of its pieces and the other
/// transactions unchopped (C-edges only), and the others each piece has a C-edge with.
fn components(
    types: &[TypeShape],
    fps: &[Vec<Footprint>],
    ti: usize,
    concurrent_self: bool,
) -> (Vec<usize>, Vec<Vec<String>>) {
    let whole = |i: usize| {
        let mut f = Footprint::default();
        for p in &fps[i] {
            f.add(p);
        }
        f
    };
    let mut others: Vec<(String, Footprint)> = (0..types.len())
        .filter(|&j| j != ti)
        .map(|j| (types[j].name.to_string(), whole(j)))
        .collect();
    if concurrent_self {
        others.push((format!("{}'", types[ti].name), whole(ti)));
    }
    let n = fps[ti].len();
    let mut sets = Sets::new(n + others.len());
    let mut conflicts = vec![Vec::new(); n];
    for (p, fp) in fps[ti].iter().enumerate() {
        for (k, (name, o)) in others.iter().enumerate() {
            if fp.conflicts(o) {
                sets.union(p, n + k);
                conflicts[p].push(name.clone());
            }
        }
    }
    for k in 0..others.len() {
        for l in k + 1..others.len() {
            if others[k].1.conflicts(&others[l].1) {
                sets.union(n + k, n + l);
            }
        }
    }
    ((0..n).map(|p| sets.find(p)).collect(), conflicts)
}

/// The groups of pieces `0..comp.len()` with one component each, by their first piece.
fn groups(comp: &[usize]) -> Vec<Vec<usize>> {
    let mut by: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (p, &c) in comp.iter().enumerate() {
        by.entry(c).or_default().push(p);
    }
    let mut out: Vec<Vec<usize>> = by.into_values().collect();
    out.sort_by_key(|g| g[0]);
    out
}

/// Rollback safety and an order for `finest`, a chopping of `ty` (see the module docs).
fn runnable(ty: &TypeShape, finest: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = ty.pieces.len();
    let mut group = vec![0usize; n];
    for (g, ps) in finest.iter().enumerate() {
        for &p in ps {
            group[p] = g;
        }
    }
    let k = finest.len();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); k];
    let mut edge = |a: usize, b: usize| {
        if a != b && !adj[a].contains(&b) {
            adj[a].push(b);
        }
    };
    // Rollback safety: everything up to the commit point is one chop, and it goes first (tied
    // both ways to the chop of piece 0, then before every other).
    if let Some(cp) = ty.commit_point.filter(|_| n > 0) {
        let first = group[0];
        for &g in &group[..=cp.min(n - 1)] {
            edge(first, g);
            edge(g, first);
        }
        for g in 0..k {
            edge(first, g);
        }
    }
    for j in 0..n {
        for i in closure(&ty.pieces, j) {
            edge(group[i], group[j]);
        }
    }
    let comp = scc(k, &adj);
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (g, ps) in finest.iter().enumerate() {
        members.entry(comp[g]).or_default().extend(ps);
    }
    let first = |c: usize| members.get(&c).and_then(|m| m.iter().min().copied());
    topo(&comp, &adj, first)
        .into_iter()
        .filter_map(|c| members.remove(&c))
        .map(|mut ps| {
            ps.sort_unstable();
            ps
        })
        .collect()
}

/// The finest correct chopping of `types` (see the module docs).
pub fn chop(types: &[TypeShape], opts: ScOpts) -> Chopping {
    let exempt = exemptions(types, opts);
    let fps = footprints(types, &exempt, opts.column);
    let types_out = types
        .iter()
        .enumerate()
        .map(|(ti, ty)| {
            let (comp, conflicts) = components(types, &fps, ti, opts.concurrent_self);
            let finest = groups(&comp);
            let chops = runnable(ty, &finest);
            TypeChops {
                name: ty.name,
                finest,
                chops,
                conflicts,
            }
        })
        .collect();
    Chopping {
        exempt,
        types: types_out,
    }
}

/// An SC-cycle a chopping has: through type `name`, leaving piece `from` and coming back at piece
/// `to` of another of its chops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScCycle {
    pub name: &'static str,
    pub from: usize,
    pub to: usize,
}

/// The first SC-cycle of `chopping` (per type of `types`, in order: its chops, pieces not named
/// form one chop each), or `None` if the chopping is correct.
pub fn sc_cycle(
    types: &[TypeShape],
    chopping: &[Vec<Vec<usize>>],
    opts: ScOpts,
) -> Option<ScCycle> {
    let exempt = exemptions(types, opts);
    let fps = footprints(types, &exempt, opts.column);
    for (ti, ty) in types.iter().enumerate() {
        let (comp, _) = components(types, &fps, ti, opts.concurrent_self);
        let n = ty.pieces.len();
        let mut chop_of: Vec<usize> = (0..n).map(|p| usize::MAX - p).collect();
        for (c, ps) in chopping.get(ti).into_iter().flatten().enumerate() {
            for &p in ps.iter().filter(|&&p| p < n) {
                chop_of[p] = c;
            }
        }
        for a in 0..n {
            for b in a + 1..n {
                if comp[a] == comp[b] && chop_of[a] != chop_of[b] {
                    return Some(ScCycle {
                        name: ty.name,
                        from: a,
                        to: b,
                    });
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::kit::shape::{PieceShape, Touch};
    use crate::storage::TableId;

    /// A piece reading the tables (or columns: bit masks) `r` and writing `w`: (table, mask).
    fn piece(r: &[(TableId, u64)], w: &[(TableId, u64)], deps: &[usize]) -> PieceShape {
        let mut p = PieceShape {
            depends_on: deps.to_vec(),
            ..Default::default()
        };
        for &(t, m) in r {
            p.add(
                t,
                Touch {
                    read: m,
                    other: true,
                    ..Default::default()
                },
            );
        }
        for &(t, m) in w {
            p.add(
                t,
                Touch {
                    read: m,
                    write: m,
                    other: true,
                    ..Default::default()
                },
            );
        }
        p
    }

    fn ty(name: &'static str, pieces: Vec<PieceShape>) -> TypeShape {
        TypeShape {
            name,
            pieces,
            commit_point: None,
        }
    }

    /// Table-level, single instances: the textbook's setting.
    fn textbook() -> ScOpts {
        ScOpts {
            column: false,
            concurrent_self: false,
            ..ScOpts::default()
        }
    }

    const X: TableId = 0;
    const Y: TableId = 1;
    const Z: TableId = 2;

    /// Every SC-cycle of the explicit chopping graph, found by brute force (simple cycles through
    /// an S-edge that use a C-edge): independent of the component argument [`sc_cycle`] rests on.
    fn brute_force_has_sc_cycle(
        types: &[TypeShape],
        chopping: &[Vec<Vec<usize>>],
        opts: ScOpts,
    ) -> bool {
        let exempt = exemptions(types, opts);
        let fps = footprints(types, &exempt, opts.column);
        // Vertices: (instance, chop footprint); instances: each type, and its copy.
        let mut verts: Vec<(usize, Footprint)> = Vec::new();
        let copies = if opts.concurrent_self { 2 } else { 1 };
        for (ti, chops) in chopping.iter().enumerate() {
            for c in 0..copies {
                for ps in chops {
                    let mut f = Footprint::default();
                    for &p in ps {
                        f.add(&fps[ti][p]);
                    }
                    verts.push((ti * 2 + c, f));
                }
            }
        }
        let n = verts.len();
        // Edge kinds: 1 = S, 2 = C.
        let kind = |a: usize, b: usize| -> u8 {
            if verts[a].0 == verts[b].0 {
                1
            } else if verts[a].1.conflicts(&verts[b].1) {
                2
            } else {
                0
            }
        };
        fn dfs(
            at: usize,
            goal: usize,
            seen: &mut Vec<bool>,
            used_c: bool,
            n: usize,
            kind: &dyn Fn(usize, usize) -> u8,
        ) -> bool {
            for next in 0..n {
                let k = if next == at { 0 } else { kind(at, next) };
                if k == 0 {
                    continue;
                }
                if next == goal {
                    if used_c || k == 2 {
                        return true;
                    }
                    continue;
                }
                if !seen[next] {
                    seen[next] = true;
                    if dfs(next, goal, seen, used_c || k == 2, n, kind) {
                        return true;
                    }
                    seen[next] = false;
                }
            }
            false
        }
        for u in 0..n {
            for v in 0..n {
                if u != v && kind(u, v) == 1 {
                    // A path v … u not using the edge u–v directly, with a C-edge.
                    let mut seen = vec![false; n];
                    seen[u] = true;
                    seen[v] = true;
                    let k = |a: usize, b: usize| {
                        if (a, b) == (v, u) {
                            0
                        } else {
                            kind(a, b)
                        }
                    };
                    if dfs(v, u, &mut seen, false, n, &k) {
                        return true;
                    }
                }
            }
        }
        false
    }

    fn chops(c: &Chopping) -> Vec<Vec<Vec<usize>>> {
        c.types.iter().map(|t| t.chops.clone()).collect()
    }

    /// Shasha et al.'s first example: T1 = r(x) w(x) r(y) w(y), T2 = r(x) w(x), T3 = r(y) w(y).
    /// T1 chopped into {x} and {y} is correct — each of T2, T3 meets one piece — and finest.
    #[test]
    fn a_correct_chopping_is_kept() {
        let types = vec![
            ty(
                "T1",
                vec![piece(&[], &[(X, 1)], &[]), piece(&[], &[(Y, 1)], &[])],
            ),
            ty("T2", vec![piece(&[], &[(X, 1)], &[])]),
            ty("T3", vec![piece(&[], &[(Y, 1)], &[])]),
        ];
        let c = chop(&types, textbook());
        assert_eq!(c.of("T1").unwrap().chops, vec![vec![0], vec![1]]);
        assert_eq!(sc_cycle(&types, &chops(&c), textbook()), None);
        assert!(!brute_force_has_sc_cycle(&types, &chops(&c), textbook()));
    }

    /// Adding T4 = r(x) r(y) closes an SC-cycle T1.x – T4 – T1.y – (S) – T1.x: T1 is merged.
    #[test]
    fn a_chopping_with_an_sc_cycle_is_merged() {
        let mut types = vec![
            ty(
                "T1",
                vec![piece(&[], &[(X, 1)], &[]), piece(&[], &[(Y, 1)], &[])],
            ),
            ty("T2", vec![piece(&[], &[(X, 1)], &[])]),
        ];
        types.push(ty("T4", vec![piece(&[(X, 1), (Y, 1)], &[], &[])]));
        let split = vec![vec![vec![0], vec![1]], vec![vec![0]], vec![vec![0]]];
        let cycle = sc_cycle(&types, &split, textbook()).expect("an SC-cycle");
        assert_eq!((cycle.name, cycle.from, cycle.to), ("T1", 0, 1));
        assert!(brute_force_has_sc_cycle(&types, &split, textbook()));
        let c = chop(&types, textbook());
        assert_eq!(c.of("T1").unwrap().chops, vec![vec![0, 1]]);
        assert_eq!(
            c.of("T1").unwrap().conflicts,
            vec![vec!["T2", "T4"], vec!["T4"]]
        );
        assert!(!brute_force_has_sc_cycle(&types, &chops(&c), textbook()));
        // Connected through a chain of others (T1.x – T2 – T5 – T1.y) merges too.
        let chain = vec![
            types[0].clone(),
            ty("T2", vec![piece(&[(Z, 1)], &[(X, 1)], &[])]),
            ty("T5", vec![piece(&[(Y, 1)], &[(Z, 1)], &[])]),
        ];
        let c = chop(&chain, textbook());
        assert_eq!(c.of("T1").unwrap().chops, vec![vec![0, 1]]);
    }

    /// Two instances of one transfer (w(x) then w(y)) conflict on both: no chopping; one
    /// instance alone chops.
    #[test]
    fn a_second_instance_of_the_same_type_ties_its_pieces() {
        let t = ty(
            "Transfer",
            vec![piece(&[], &[(X, 1)], &[]), piece(&[], &[(Y, 1)], &[0])],
        );
        let many = ScOpts {
            column: false,
            ..ScOpts::default()
        };
        let c = chop(std::slice::from_ref(&t), many);
        assert_eq!(c.of("Transfer").unwrap().chops, vec![vec![0, 1]]);
        assert_eq!(
            c.of("Transfer").unwrap().conflicts,
            vec![vec!["Transfer'"], vec!["Transfer'"]]
        );
        let c = chop(std::slice::from_ref(&t), textbook());
        assert_eq!(c.of("Transfer").unwrap().chops, vec![vec![0], vec![1]]);
        let split = vec![vec![vec![0], vec![1]]];
        assert!(brute_force_has_sc_cycle(
            std::slice::from_ref(&t),
            &split,
            many
        ));
        assert!(sc_cycle(std::slice::from_ref(&t), &split, many).is_some());
    }

    /// Rollback safety puts the pieces up to the commit point first; dependencies order the chops
    /// and a dependency cycle between chops merges them.
    #[test]
    fn rollback_safety_and_dependencies_shape_the_chops() {
        // Four conflict-free pieces: finest is one chop each.
        let free = |deps: &[usize]| piece(&[], &[], deps);
        let mut t = ty("T", vec![free(&[]), free(&[]), free(&[0]), free(&[])]);
        t.commit_point = Some(1);
        let c = chop(std::slice::from_ref(&t), ScOpts::default());
        let tc = c.of("T").unwrap();
        assert_eq!(tc.finest, vec![vec![0], vec![1], vec![2], vec![3]]);
        assert_eq!(tc.chops, vec![vec![0, 1], vec![2], vec![3]]);
        // Pieces 0 and 2 tied (through T2), 1 between them needing 0 and needed by 2: one chop.
        let t = ty(
            "T",
            vec![
                piece(&[], &[(X, 1)], &[]),
                free(&[0]),
                piece(&[], &[(Y, 1)], &[1]),
            ],
        );
        let t2 = ty("T2", vec![piece(&[(X, 1), (Y, 1)], &[], &[])]);
        let c = chop(&[t.clone(), t2], textbook());
        assert_eq!(c.of("T").unwrap().finest, vec![vec![0, 2], vec![1]]);
        assert_eq!(c.of("T").unwrap().chops, vec![vec![0, 1, 2]]);
    }

    /// Column level: writes of different columns of one table do not conflict; inserts only
    /// (unique keys) have no C-edge; commuting writes only when asked.
    #[test]
    fn columns_inserts_and_commuting_writes() {
        // T1 writes X.col0, then Y; T2 reads X.col1 and Y.
        let t1 = ty(
            "T1",
            vec![piece(&[], &[(X, 0b01)], &[]), piece(&[], &[(Y, 1)], &[0])],
        );
        let t2 = ty("T2", vec![piece(&[(X, 0b10), (Y, 1)], &[], &[])]);
        let table = chop(&[t1.clone(), t2.clone()], textbook());
        assert_eq!(table.of("T1").unwrap().chops, vec![vec![0, 1]]);
        let col = ScOpts {
            column: true,
            ..textbook()
        };
        let column = chop(&[t1, t2], col);
        assert_eq!(column.of("T1").unwrap().chops, vec![vec![0], vec![1]]);
        // Inserts into Z only, by two instances: no C-edge.
        let mut ins = PieceShape::default();
        ins.add(
            Z,
            Touch {
                write: 1,
                insert: true,
                ..Default::default()
            },
        );
        let mut inc = piece(&[], &[(X, 1)], &[]);
        inc.commutes = true;
        let t = ty("T", vec![inc, piece(&[], &[(Y, 1)], &[0]), ins]);
        let many = ScOpts {
            column: false,
            ..ScOpts::default()
        };
        let c = chop(std::slice::from_ref(&t), many);
        assert_eq!(c.exempt.len(), 1);
        assert_eq!(c.of("T").unwrap().chops, vec![vec![0, 1], vec![2]]);
        let comm = ScOpts {
            commutativity: true,
            ..many
        };
        let c = chop(std::slice::from_ref(&t), comm);
        assert_eq!(c.of("T").unwrap().chops, vec![vec![0], vec![1], vec![2]]);
    }

    /// Random shapes: the chopping computed has no SC-cycle (by brute force), and splitting any
    /// of its finest chops in two makes one.
    #[test]
    fn random_choppings_are_correct_and_finest() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        let mut rng = SmallRng::seed_from_u64(7);
        for round in 0..300 {
            let ntypes = rng.gen_range(1..4);
            let types: Vec<TypeShape> = (0..ntypes)
                .map(|i| {
                    let pieces = (0..rng.gen_range(1..4))
                        .map(|_| {
                            let mut r = Vec::new();
                            let mut w = Vec::new();
                            for t in 0..3 {
                                match rng.gen_range(0..4) {
                                    0 => r.push((t, 1)),
                                    1 => w.push((t, 1)),
                                    _ => {}
                                }
                            }
                            piece(&r, &w, &[])
                        })
                        .collect();
                    ty(["A", "B", "C"][i], pieces)
                })
                .collect();
            let opts = ScOpts {
                column: false,
                concurrent_self: rng.gen_bool(0.5),
                ..ScOpts::default()
            };
            let c = chop(&types, opts);
            let finest: Vec<Vec<Vec<usize>>> = c.types.iter().map(|t| t.finest.clone()).collect();
            assert!(
                !brute_force_has_sc_cycle(&types, &finest, opts),
                "round {round}: {types:?} {finest:?}"
            );
            for (ti, t) in c.types.iter().enumerate() {
                for (gi, g) in t.finest.iter().enumerate() {
                    if g.len() < 2 {
                        continue;
                    }
                    // Some piece taken out of a merged chop makes an SC-cycle.
                    let any = g.iter().any(|&p| {
                        let mut s = finest.clone();
                        s[ti].remove(gi);
                        s[ti].push(vec![p]);
                        s[ti].push(g.iter().copied().filter(|&q| q != p).collect());
                        brute_force_has_sc_cycle(&types, &s, opts)
                    });
                    assert!(any, "round {round}: {ti} {g:?} could be finer");
                }
            }
        }
    }
}
