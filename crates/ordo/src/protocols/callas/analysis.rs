//! Runtime Pipelining's static analysis (Xie 2016, §4.4.1, Fig. 4.4; §4.5.1's optimizations): from
//! what each piece of each transaction type of a group touches, a **rank** for every read-write
//! table (or column) and, per transaction type, its **stages**: the pieces merged and ordered so
//! that
//!
//! * GR1 — a stage touches read-write tables of one rank only (read-only ones too), and
//! * GR2 — a transaction's stages touch read-write tables of increasing rank.
//!
//! ```text
//!  Step 1.a  graph over read-write nodes: an edge a → b for every dependency from a piece that
//!            touches a to a later piece that touches b (rank(a) ≤ rank(b)); the nodes of one
//!            piece are tied both ways (a piece is one block of code: it cannot be split)
//!  Step 1.b  strongly connected components collapse into one rank; ranks in topological order
//!  Step 1.c  a transaction's pieces of one rank merge into one stage
//!  Step 2    per transaction: ranked stages chained by rank, unranked pieces (read-only nodes
//!            only) placed by their dependencies; cycles merge; topological order — larger
//!            stages first where the order is free (§4.5.1 "larger pieces early")
//! ```
//!
//! **Ordo's pieces are the operations.** The thesis analyses program statements; Ordo's programs
//! are already cut into pieces ([`crate::txn::Program::pieces`]), each declaring what it touches
//! ([`crate::txn::Program::declare`]) and which earlier pieces it needs
//! ([`crate::txn::Program::depends_on`], the data and control dependencies). A piece is the finest
//! grain: the analysis merges and reorders pieces, never splits one. What a piece touches is
//! learnt from its declarations ([`PieceShape`]), so no workload is annotated twice.
//!
//! **Optimizations** ([`Opts`]):
//! * *column level*: nodes are (table, column); a column written by no member of the group is
//!   read-only even in a table others write (TPC-C's `w_tax` beside Payment's `w_ytd`);
//! * *commutativity*: a node touched only by pieces whose writes commute
//!   ([`crate::txn::Program::commutes`]) has no C-edge and needs no rank;
//! * *runtime uniqueness*: a table the group only ever inserts into, with keys no two
//!   transactions share (counters used as keys: TPC-C's order ids), has no C-edge either. Ordo
//!   approximates "keys from a counter" by "only inserted into within the group"; a collision the
//!   approximation misses is still caught at run time (row-level dependencies), it only costs the
//!   ordering the rank would have bought;
//! * *larger pieces early*: among the orders Step 2 allows, stages with more pieces go first.
//!
//! **Safe mode.** Rollback safety puts every piece up to the last one that may roll back by its own
//! logic ([`crate::txn::Program::commit_point`]) in the first stage ([`TypePlan::safe`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::protocols::kit::shape::{closure, nodes_of, scc, topo};
pub use crate::protocols::kit::shape::{Node, PieceShape, Touch, TypeShape, WHOLE};

/// Which optimizations of §4.5.1 the analysis applies (all by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opts {
    pub column: bool,
    pub commutativity: bool,
    pub uniqueness: bool,
    pub large_first: bool,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            column: true,
            commutativity: true,
            uniqueness: true,
            large_first: true,
        }
    }
}

/// One stage: pieces run as one mini-transaction, in program order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    pub pieces: Vec<usize>,
    /// The lowest and highest rank of the read-write nodes it touches (`None`: it touches none).
    pub ranks: Option<(u32, u32)>,
}

/// A transaction type's stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypePlan {
    pub name: &'static str,
    /// Optimistic mode: the finest chopping the ranks allow.
    pub stages: Vec<Stage>,
    /// Safe mode (rollback safety): every stage up to the commit point merged into the first.
    pub safe: Vec<Stage>,
}

/// Why a node touched by the group has no rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unranked {
    /// No member of the group writes it.
    ReadOnly,
    /// Only pieces whose writes commute touch it.
    Commutes,
    /// The group only inserts into its table.
    Unique,
}

/// The analysis of one group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupPlan {
    /// The rank of every read-write node.
    pub ranks: BTreeMap<Node, u32>,
    /// Nodes touched but not ranked, and why.
    pub unranked: BTreeMap<Node, Unranked>,
    /// The table-dependency edges (between read-write nodes).
    pub edges: BTreeSet<(Node, Node)>,
    pub types: Vec<TypePlan>,
}

impl GroupPlan {
    /// The plan of the type named `name`.
    pub fn plan(&self, name: &str) -> Option<&TypePlan> {
        self.types.iter().find(|t| t.name == name)
    }
}

/// Analyses the transaction types of one group (see the module docs).
pub fn analyze(types: &[TypeShape], opts: Opts) -> GroupPlan {
    // Which nodes are read-write, and why the others are not.
    #[derive(Default, Clone, Copy)]
    struct Seen {
        written: bool,
        non_comm: bool,
        non_insert: bool,
    }
    let mut seen: BTreeMap<Node, Seen> = BTreeMap::new();
    let mut nodes = Vec::new();
    for ty in types {
        for p in &ty.pieces {
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
    }
    let mut plan = GroupPlan::default();
    let mut rw: Vec<Node> = Vec::new();
    for (&n, s) in &seen {
        let why = if !s.written {
            Some(Unranked::ReadOnly)
        } else if opts.commutativity && !s.non_comm {
            Some(Unranked::Commutes)
        } else if opts.uniqueness && !s.non_insert {
            Some(Unranked::Unique)
        } else {
            None
        };
        match why {
            Some(w) => {
                plan.unranked.insert(n, w);
            }
            None => rw.push(n),
        }
    }
    let index: BTreeMap<Node, usize> = rw.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    // The read-write nodes each piece touches.
    let piece_nodes = |p: &PieceShape| -> Vec<usize> {
        let mut out = Vec::new();
        let mut ns = Vec::new();
        for (&table, t) in &p.touches {
            ns.clear();
            nodes_of(table, t.read | t.write, opts.column, &mut ns);
            out.extend(ns.iter().filter_map(|n| index.get(n).copied()));
        }
        out.sort_unstable();
        out.dedup();
        out
    };
    // Step 1.a: the table-dependency graph.
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); rw.len()];
    let edge = |a: usize, b: usize, adj: &mut Vec<Vec<usize>>| {
        if a != b && !adj[a].contains(&b) {
            adj[a].push(b);
        }
    };
    let shapes: Vec<Vec<Vec<usize>>> = types
        .iter()
        .map(|ty| ty.pieces.iter().map(piece_nodes).collect())
        .collect();
    for (ty, nodes) in types.iter().zip(&shapes) {
        for (j, nj) in nodes.iter().enumerate() {
            // One piece's nodes share a rank.
            for w in nj.windows(2) {
                edge(w[0], w[1], &mut adj);
                edge(w[1], w[0], &mut adj);
            }
            for i in closure(&ty.pieces, j) {
                for &a in &nodes[i] {
                    for &b in nj {
                        edge(a, b, &mut adj);
                    }
                }
            }
        }
    }
    for (a, out) in adj.iter().enumerate() {
        for &b in out {
            plan.edges.insert((rw[a], rw[b]));
        }
    }
    // Step 1.b: components, ranked in topological order (ties: the smallest node first).
    let comp = scc(rw.len(), &adj);
    let smallest = |c: usize| (0..rw.len()).find(|&v| comp[v] == c).map(|v| rw[v]);
    let order = topo(&comp, &adj, smallest);
    let mut rank_of_comp = vec![0u32; order.len()];
    for (r, &c) in order.iter().enumerate() {
        rank_of_comp[c] = r as u32;
    }
    for (v, &n) in rw.iter().enumerate() {
        plan.ranks.insert(n, rank_of_comp[comp[v]]);
    }
    // Steps 1.c and 2, per transaction type.
    for (ty, nodes) in types.iter().zip(&shapes) {
        let rank: Vec<Option<u32>> = nodes
            .iter()
            .map(|ns| ns.first().map(|&v| rank_of_comp[comp[v]]))
            .collect();
        let stages = order_stages(ty, &rank, opts.large_first);
        let safe = merge_to_commit_point(&stages, ty.commit_point);
        plan.types.push(TypePlan {
            name: ty.name,
            stages,
            safe,
        });
    }
    plan
}

/// Step 1.c and Step 2 for one transaction type whose pieces have ranks `rank`.
fn order_stages(ty: &TypeShape, rank: &[Option<u32>], large_first: bool) -> Vec<Stage> {
    // Vertices: one per distinct rank, one per unranked piece.
    let mut ranks: Vec<u32> = rank.iter().flatten().copied().collect();
    ranks.sort_unstable();
    ranks.dedup();
    let vertex_of = |p: usize| -> usize {
        match rank[p] {
            Some(r) => ranks.binary_search(&r).expect("a rank of a piece"),
            None => ranks.len() + p,
        }
    };
    let n = ranks.len() + ty.pieces.len();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    let chained = ranks.len().saturating_sub(1);
    for (w, out) in adj.iter_mut().enumerate().take(chained) {
        out.push(w + 1);
    }
    for j in 0..ty.pieces.len() {
        for i in closure(&ty.pieces, j) {
            let (a, b) = (vertex_of(i), vertex_of(j));
            if a != b && !adj[a].contains(&b) {
                adj[a].push(b);
            }
        }
    }
    let comp = scc(n, &adj);
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for p in 0..ty.pieces.len() {
        members.entry(comp[vertex_of(p)]).or_default().push(p);
    }
    // Only components holding pieces matter (a vertex of an unused id holds none).
    let key = |c: usize| {
        let m = members.get(&c);
        let size = m.map_or(0, |m| m.len());
        let first = m.and_then(|m| m.first().copied()).unwrap_or(usize::MAX);
        (if large_first { usize::MAX - size } else { 0 }, first)
    };
    topo(&comp, &adj, key)
        .into_iter()
        .filter_map(|c| members.remove(&c))
        .map(|pieces| {
            let rs = pieces.iter().filter_map(|&p| rank[p]);
            let ranks = rs.clone().min().zip(rs.max());
            Stage { pieces, ranks }
        })
        .collect()
}

/// Safe mode: the stages up to the one holding `commit_point` merged into one.
fn merge_to_commit_point(stages: &[Stage], commit_point: Option<usize>) -> Vec<Stage> {
    let Some(cp) = commit_point else {
        return stages.to_vec();
    };
    let Some(last) = stages.iter().position(|s| s.pieces.contains(&cp)) else {
        return stages.to_vec();
    };
    let mut first = Stage {
        pieces: Vec::new(),
        ranks: None,
    };
    for s in &stages[..=last] {
        first.pieces.extend(&s.pieces);
        first.ranks = match (first.ranks, s.ranks) {
            (None, r) | (r, None) => r,
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
        };
    }
    first.pieces.sort_unstable();
    let mut out = vec![first];
    out.extend_from_slice(&stages[last + 1..]);
    out
}

impl fmt::Display for Unranked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unranked::ReadOnly => "read-only in the group",
            Unranked::Commutes => "only commuting writes",
            Unranked::Unique => "only inserts (unique keys)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::TableId;

    const A: TableId = 0;
    const B: TableId = 1;
    const C: TableId = 2;

    fn touch(read: u64, write: u64) -> Touch {
        Touch {
            read,
            write,
            insert: false,
            other: true,
        }
    }

    /// A piece touching `tables` (each: table, read mask, write mask), needing `deps`.
    fn piece(tables: &[(TableId, u64, u64)], deps: &[usize]) -> PieceShape {
        let mut p = PieceShape {
            depends_on: deps.to_vec(),
            ..Default::default()
        };
        for &(t, r, w) in tables {
            p.add(t, touch(r, w));
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

    fn table_level() -> Opts {
        Opts {
            column: false,
            ..Opts::default()
        }
    }

    fn rank(plan: &GroupPlan, t: TableId) -> u32 {
        plan.ranks[&Node {
            table: t,
            col: WHOLE,
        }]
    }

    fn pieces(stages: &[Stage]) -> Vec<Vec<usize>> {
        stages.iter().map(|s| s.pieces.clone()).collect()
    }

    /// Fig. 4.3: new_order writes A (order), then B (item), then C (order_line), each after the
    /// last: three ranks, three pieces — the pipeline two instances run through.
    #[test]
    fn the_new_order_example_gets_three_ranks_and_three_pieces() {
        let no = ty(
            "new_order",
            vec![
                piece(&[(A, 1, 1)], &[]),
                piece(&[(B, 1, 1)], &[0]),
                piece(&[(C, 1, 1)], &[1]),
            ],
        );
        let plan = analyze(&[no], table_level());
        assert_eq!((rank(&plan, A), rank(&plan, B), rank(&plan, C)), (0, 1, 2));
        let p = plan.plan("new_order").unwrap();
        assert_eq!(pieces(&p.stages), vec![vec![0], vec![1], vec![2]]);
        let ranks: Vec<_> = p.stages.iter().map(|s| s.ranks).collect();
        assert_eq!(ranks, vec![Some((0, 0)), Some((1, 1)), Some((2, 2))]);
    }

    /// Fig. 4.4: T1 reads A then writes B, T2 reads B then writes A: rank(A) ≤ rank(B) ≤ rank(A),
    /// so A and B share a rank and each transaction is one piece.
    #[test]
    fn opposite_dependencies_merge_two_tables_into_one_rank() {
        let t1 = ty(
            "T1",
            vec![piece(&[(A, 1, 0)], &[]), piece(&[(B, 1, 1)], &[0])],
        );
        let t2 = ty(
            "T2",
            vec![piece(&[(B, 1, 0)], &[]), piece(&[(A, 1, 1)], &[0])],
        );
        let plan = analyze(&[t1, t2], table_level());
        assert_eq!(rank(&plan, A), rank(&plan, B));
        for name in ["T1", "T2"] {
            assert_eq!(pieces(&plan.plan(name).unwrap().stages), vec![vec![0, 1]]);
        }
        // Alone, each of them chops.
        let t1 = ty(
            "T1",
            vec![piece(&[(A, 1, 1)], &[]), piece(&[(B, 1, 1)], &[0])],
        );
        let plan = analyze(&[t1], table_level());
        assert!(rank(&plan, A) < rank(&plan, B));
        assert_eq!(
            pieces(&plan.plan("T1").unwrap().stages),
            vec![vec![0], vec![1]]
        );
    }

    /// A piece touching two tables ties their ranks, and pieces of one rank merge even when
    /// apart in the program.
    #[test]
    fn one_piece_ties_its_tables_and_same_rank_pieces_merge() {
        let t = ty(
            "T",
            vec![
                piece(&[(A, 1, 1)], &[]),
                piece(&[(B, 1, 1)], &[]),
                piece(&[(A, 1, 1), (C, 1, 1)], &[]),
            ],
        );
        let plan = analyze(&[t], table_level());
        assert_eq!(rank(&plan, A), rank(&plan, C));
        assert_ne!(rank(&plan, A), rank(&plan, B));
        let stages = &plan.plan("T").unwrap().stages;
        assert!(pieces(stages).contains(&vec![0, 2]), "{stages:?}");
        // GR2: ranks increase along the stages.
        let lo: Vec<u32> = stages.iter().filter_map(|s| s.ranks).map(|r| r.0).collect();
        assert!(lo.windows(2).all(|w| w[0] < w[1]), "{lo:?}");
    }

    /// A read-only piece goes where its dependencies put it, and a dependency cycle through it
    /// pulls it into the ranked stage.
    #[test]
    fn read_only_pieces_are_placed_by_dependencies() {
        // 0 writes A; 1 reads C (written by nobody) and needs 0; 2 writes A and needs 1.
        let t = ty(
            "T",
            vec![
                piece(&[(A, 1, 1)], &[]),
                piece(&[(C, 1, 0)], &[0]),
                piece(&[(A, 1, 1)], &[1]),
            ],
        );
        let plan = analyze(&[t], table_level());
        assert_eq!(
            plan.unranked[&Node {
                table: C,
                col: WHOLE
            }],
            Unranked::ReadOnly
        );
        assert_eq!(pieces(&plan.plan("T").unwrap().stages), vec![vec![0, 1, 2]]);
    }

    /// Column level: two types updating different columns of one table give those columns
    /// separate ranks, where table level ties everything (TPC-C's district: New-Order's
    /// d_next_o_id, Payment's d_ytd).
    #[test]
    fn column_level_separates_what_table_level_ties() {
        // T1: piece 0 updates A.col0, piece 1 updates B; T2: piece 0 updates B, piece 1 updates
        // A.col1.
        let t1 = ty(
            "T1",
            vec![piece(&[(A, 0b01, 0b01)], &[]), piece(&[(B, 1, 1)], &[0])],
        );
        let t2 = ty(
            "T2",
            vec![piece(&[(B, 1, 1)], &[]), piece(&[(A, 0b10, 0b10)], &[0])],
        );
        let tl = analyze(&[t1.clone(), t2.clone()], table_level());
        assert_eq!(pieces(&tl.plan("T1").unwrap().stages), vec![vec![0, 1]]);
        let cl = analyze(&[t1, t2], Opts::default());
        assert_eq!(
            pieces(&cl.plan("T1").unwrap().stages),
            vec![vec![0], vec![1]]
        );
        assert_eq!(
            pieces(&cl.plan("T2").unwrap().stages),
            vec![vec![0], vec![1]]
        );
    }

    #[test]
    fn commuting_and_insert_only_nodes_need_no_rank() {
        let mut inc = piece(&[(A, 1, 1)], &[]);
        inc.commutes = true;
        let mut ins = PieceShape::default();
        ins.add(
            B,
            Touch {
                read: 0,
                write: 1,
                insert: true,
                other: false,
            },
        );
        let t = ty("T", vec![inc, ins]);
        let plan = analyze(std::slice::from_ref(&t), table_level());
        assert!(plan.ranks.is_empty(), "{:?}", plan.ranks);
        let a = Node {
            table: A,
            col: WHOLE,
        };
        let b = Node {
            table: B,
            col: WHOLE,
        };
        assert_eq!(plan.unranked[&a], Unranked::Commutes);
        assert_eq!(plan.unranked[&b], Unranked::Unique);
        let off = Opts {
            column: false,
            commutativity: false,
            uniqueness: false,
            large_first: true,
        };
        let plan = analyze(&[t], off);
        assert_eq!(plan.ranks.len(), 2);
    }

    #[test]
    fn safe_mode_merges_up_to_the_commit_point() {
        let mut t = ty(
            "T",
            vec![
                piece(&[(A, 1, 1)], &[]),
                piece(&[(B, 1, 1)], &[0]),
                piece(&[(C, 1, 1)], &[1]),
            ],
        );
        t.commit_point = Some(1);
        let plan = analyze(&[t], table_level());
        let p = plan.plan("T").unwrap();
        assert_eq!(pieces(&p.stages), vec![vec![0], vec![1], vec![2]]);
        assert_eq!(pieces(&p.safe), vec![vec![0, 1], vec![2]]);
        assert_eq!(p.safe[0].ranks, Some((0, 1)));
    }

    #[test]
    fn larger_stages_go_first_where_the_order_is_free() {
        // Two independent read-only pieces and an independent pair of one rank.
        let t = ty(
            "T",
            vec![
                piece(&[(C, 1, 0)], &[]),
                piece(&[(A, 1, 1)], &[]),
                piece(&[(A, 1, 1)], &[]),
            ],
        );
        let plan = analyze(std::slice::from_ref(&t), table_level());
        assert_eq!(
            pieces(&plan.plan("T").unwrap().stages),
            vec![vec![1, 2], vec![0]]
        );
        let plan = analyze(
            &[t],
            Opts {
                large_first: false,
                ..table_level()
            },
        );
        assert_eq!(
            pieces(&plan.plan("T").unwrap().stages),
            vec![vec![0], vec![1, 2]]
        );
    }
}
