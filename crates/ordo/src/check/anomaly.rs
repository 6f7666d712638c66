//! Anomaly detection over a [`Dsg`], after Adya's classification.
//!
//! * **G1a** (aborted read): a committed transaction read a version written by
//!   a transaction that aborted.
//! * **G1b** (intermediate read) — reading a version that its writer later
//!   overwrote within the same transaction — *cannot be detected here*:
//!   versions are named only by the writing transaction's id, so a
//!   transaction's intermediate and final versions of an item carry the same
//!   name. [`AnomalyKind::G1b`] exists for completeness and is never reported.
//! * **Cycles**: every nontrivial strongly connected component (iterative
//!   Tarjan) is classified by the most severe cycle it contains, and one
//!   concrete witness cycle is reported:
//!   * **G0** — a cycle of `ww` edges only (dirty write);
//!   * **G1c** — a cycle of `ww`/`wr` edges, not all `ww` (circular information flow);
//!   * **G-single** — a cycle with exactly one anti-dependency, item (`rw`) or predicate (`prw`)
//!     (e.g. lost update, read skew);
//!   * **G2-item** — a cycle of item edges only with two or more `rw` edges (e.g. write skew);
//!   * **G2** — any other cycle: two or more anti-dependencies, and every cycle of the component
//!     needs a predicate one (`prw`: a scan missed an insert, see [`super::graph`]) — a phantom.
//!
//!   The checks run in that order and the first hit is reported. Work is
//!   restricted to the component's nodes, so cost is linear in the history
//!   plus, for G-single, `O((V + E) * ceil(B / 64))` per component, where `B`
//!   is the number of distinct `rw` targets in it (bit-parallel reachability).
//! * **version-fork**: two committed writers claim to replace the same
//!   version. Not an isolation anomaly but a broken engine invariant.

use std::collections::VecDeque;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::graph::{AbortedRead, Dsg, EdgeKind, EdgeWitness, VersionFork};
use super::history::TxnId;
use super::scc::{bfs_path, nontrivial_sccs, Csr};

/// Anomaly classes (Adya) plus engine-invariant violations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum AnomalyKind {
    /// Cycle of ww edges.
    G0,
    /// Committed read of an aborted version.
    G1a,
    /// Intermediate read (never reported: undetectable with txn-named versions).
    G1b,
    /// Cycle of ww/wr edges, not pure ww.
    G1c,
    /// Cycle with exactly one rw edge.
    GSingle,
    /// Cycle with two or more rw edges (item level).
    G2Item,
    /// Cycle with two or more anti-dependencies, at least one a predicate's (a phantom).
    G2,
    /// Two committed writers replaced the same version.
    VersionFork,
}

impl AnomalyKind {
    /// All kinds, in display order.
    pub const ALL: [AnomalyKind; 8] = [
        AnomalyKind::G0,
        AnomalyKind::G1a,
        AnomalyKind::G1b,
        AnomalyKind::G1c,
        AnomalyKind::GSingle,
        AnomalyKind::G2Item,
        AnomalyKind::G2,
        AnomalyKind::VersionFork,
    ];

    /// The conventional name, e.g. `"G-single"`.
    pub fn name(self) -> &'static str {
        match self {
            AnomalyKind::G0 => "G0",
            AnomalyKind::G1a => "G1a",
            AnomalyKind::G1b => "G1b",
            AnomalyKind::G1c => "G1c",
            AnomalyKind::GSingle => "G-single",
            AnomalyKind::G2Item => "G2-item",
            AnomalyKind::G2 => "G2",
            AnomalyKind::VersionFork => "version-fork",
        }
    }

    /// Whether this kind violates serializability (everything but version forks).
    pub fn breaks_serializability(self) -> bool {
        !matches!(self, AnomalyKind::VersionFork)
    }
}

impl fmt::Display for AnomalyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One detected anomaly with a concrete witness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anomaly {
    /// Classification.
    pub kind: AnomalyKind,
    /// Transactions involved; for cycles, the cycle's nodes in order
    /// (`txns[i]` is the source of `edges[i]`).
    pub txns: Vec<TxnId>,
    /// Witness edges; for cycles, they close the cycle.
    pub edges: Vec<EdgeWitness>,
    /// Human one-liner, e.g. `G2-item: T12 -rw(t0:k5)-> T40 -rw(t0:k7)-> T12`.
    pub description: String,
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description)
    }
}

impl Anomaly {
    /// A cycle anomaly from its edges, in order.
    fn cycle(kind: AnomalyKind, edges: Vec<EdgeWitness>) -> Self {
        let txns: Vec<TxnId> = edges.iter().map(|e| e.from).collect();
        let mut description = format!("{kind}:");
        if let Some(first) = edges.first() {
            description.push_str(&format!(" T{}", first.from));
        }
        for e in &edges {
            description.push_str(&format!(" -{}({})-> T{}", e.kind, e.item, e.to));
        }
        Self {
            kind,
            txns,
            edges,
            description,
        }
    }

    fn aborted_read(r: &AbortedRead) -> Self {
        Self {
            kind: AnomalyKind::G1a,
            txns: vec![r.reader, r.writer],
            edges: vec![EdgeWitness {
                from: r.writer,
                to: r.reader,
                kind: EdgeKind::WR,
                item: r.item,
            }],
            description: format!(
                "G1a: T{} read {} as written by aborted T{}",
                r.reader, r.item, r.writer
            ),
        }
    }

    fn fork(f: &VersionFork) -> Self {
        let names: Vec<String> = f.successors.iter().map(|s| format!("T{s}")).collect();
        let mut txns = vec![f.version];
        txns.extend_from_slice(&f.successors);
        Self {
            kind: AnomalyKind::VersionFork,
            txns,
            edges: f
                .successors
                .iter()
                .map(|&s| EdgeWitness {
                    from: f.version,
                    to: s,
                    kind: EdgeKind::WW,
                    item: f.item,
                })
                .collect(),
            description: format!(
                "version-fork: {} version T{} replaced by each of {}",
                f.item,
                f.version,
                names.join(", ")
            ),
        }
    }
}

/// All anomalies of a built DSG: version forks, G1a reads, then one
/// classified cycle per nontrivial SCC (SCCs ordered by smallest txn id).
pub fn find_anomalies(dsg: &Dsg) -> Vec<Anomaly> {
    let mut out: Vec<Anomaly> = dsg.forks.iter().map(Anomaly::fork).collect();
    out.extend(dsg.aborted_reads.iter().map(Anomaly::aborted_read));

    let mut sccs = nontrivial_sccs(&dsg.adj);
    sccs.sort_by_cached_key(|c| c.iter().map(|&v| dsg.ids[v as usize]).min());
    let mut local = vec![u32::MAX; dsg.ids.len()];
    for comp in &sccs {
        if let Some(a) = classify_scc(dsg, comp, &mut local) {
            out.push(a);
        }
        for &v in comp {
            local[v as usize] = u32::MAX;
        }
    }
    out
}

/// The component's arcs in local numbering, split by kind.
struct SccGraph {
    /// ww arcs only.
    ww: Csr,
    /// ww and wr arcs.
    wwr: Csr,
    /// All arcs.
    all: Csr,
    /// All arcs as `(from, to, edge)`.
    all_arcs: Vec<(u32, u32, u32)>,
    /// rw arcs, item and predicate, `(from, to, edge)`.
    rw: Vec<(u32, u32, u32)>,
}

impl SccGraph {
    fn new(dsg: &Dsg, comp: &[u32], local: &mut [u32]) -> Self {
        for (i, &v) in comp.iter().enumerate() {
            local[v as usize] = i as u32;
        }
        let mut all = Vec::new();
        for (i, &v) in comp.iter().enumerate() {
            for (w, e) in dsg.adj.arcs(v as usize) {
                let lw = local[w as usize];
                if lw != u32::MAX {
                    all.push((i as u32, lw, e));
                }
            }
        }
        let kind = |&&(_, _, e): &&(u32, u32, u32)| dsg.edges[e as usize].kind;
        let pick = |f: &dyn Fn(EdgeKind) -> bool| -> Vec<(u32, u32, u32)> {
            all.iter().filter(|a| f(kind(a))).copied().collect()
        };
        let n = comp.len();
        let ww = Csr::new(n, &pick(&|k| k == EdgeKind::WW));
        let wwr = Csr::new(n, &pick(&|k| matches!(k, EdgeKind::WW | EdgeKind::WR)));
        let rw = pick(&|k| matches!(k, EdgeKind::RW | EdgeKind::PRW));
        Self {
            ww,
            wwr,
            all: Csr::new(n, &all),
            all_arcs: all,
            rw,
        }
    }
}

fn classify_scc(dsg: &Dsg, comp: &[u32], local: &mut [u32]) -> Option<Anomaly> {
    let g = SccGraph::new(dsg, comp, local);
    let to_witness = |labels: Vec<u32>| -> Vec<EdgeWitness> {
        labels
            .into_iter()
            .map(|l| dsg.witness(&dsg.edges[l as usize]))
            .collect()
    };
    if let Some(c) = any_cycle(&g.ww) {
        return Some(Anomaly::cycle(AnomalyKind::G0, to_witness(c)));
    }
    if let Some(c) = any_cycle(&g.wwr) {
        return Some(Anomaly::cycle(AnomalyKind::G1c, to_witness(c)));
    }
    if let Some(c) = single_rw_cycle(&g.wwr, &g.rw) {
        return Some(Anomaly::cycle(AnomalyKind::GSingle, to_witness(c)));
    }
    // Any cycle now has >= 2 anti-dependencies. Without predicate ones, every cycle is G2-item.
    // With some, a cycle of item edges alone (found in the component without the `prw` arcs) is still
    // G2-item; otherwise every cycle goes through a predicate anti-dependency: G2.
    let predicate = |&(_, _, e): &(u32, u32, u32)| dsg.edges[e as usize].kind == EdgeKind::PRW;
    // A witness: anti-dependency `a -> b`, then the shortest way back from `b` to `a`.
    let through = |kind, &(a, b, e): &(u32, u32, u32)| {
        let mut cycle = vec![e];
        cycle.extend(bfs_path(&g.all, b, a)?);
        Some(Anomaly::cycle(kind, to_witness(cycle)))
    };
    if g.rw.iter().any(predicate) {
        let items: Vec<(u32, u32, u32)> = g
            .all_arcs
            .iter()
            .filter(|a| !predicate(a))
            .copied()
            .collect();
        if let Some(c) = any_cycle(&Csr::new(comp.len(), &items)) {
            return Some(Anomaly::cycle(AnomalyKind::G2Item, to_witness(c)));
        }
        return through(AnomalyKind::G2, g.rw.iter().find(|a| predicate(a))?);
    }
    through(AnomalyKind::G2Item, g.rw.first()?)
}

/// Some cycle of `g` as arc labels, if `g` has one.
fn any_cycle(g: &Csr) -> Option<Vec<u32>> {
    let comp = nontrivial_sccs(g).into_iter().next()?;
    let mut inside = vec![false; g.len()];
    for &v in &comp {
        inside[v as usize] = true;
    }
    let a = *comp.first()?;
    let (b, label) = g.arcs(a as usize).find(|&(w, _)| inside[w as usize])?;
    let mut cycle = vec![label];
    cycle.extend(bfs_path(g, b, a)?);
    Some(cycle)
}

/// A cycle made of one rw arc `a -> b` plus a path `b ~> a` in the acyclic
/// ww/wr graph `dag`. Reachability is computed 64 sources at a time with
/// bitmasks propagated in topological order.
fn single_rw_cycle(dag: &Csr, rw: &[(u32, u32, u32)]) -> Option<Vec<u32>> {
    let order = topological_order(dag);
    let mut targets: Vec<u32> = rw.iter().map(|&(_, b, _)| b).collect();
    targets.sort_unstable();
    targets.dedup();
    let mut bit = vec![u8::MAX; dag.len()];
    let mut mask = vec![0u64; dag.len()];
    for chunk in targets.chunks(64) {
        mask.iter_mut().for_each(|m| *m = 0);
        for (i, &b) in chunk.iter().enumerate() {
            bit[b as usize] = i as u8;
            mask[b as usize] |= 1 << i;
        }
        for &v in &order {
            let m = mask[v as usize];
            if m != 0 {
                for (w, _) in dag.arcs(v as usize) {
                    mask[w as usize] |= m;
                }
            }
        }
        for &(a, b, e) in rw {
            let i = bit[b as usize];
            if i != u8::MAX && mask[a as usize] & (1 << i) != 0 {
                let mut cycle = vec![e];
                cycle.extend(bfs_path(dag, b, a)?);
                return Some(cycle);
            }
        }
        for &b in chunk {
            bit[b as usize] = u8::MAX;
        }
    }
    None
}

/// Kahn's algorithm; nodes on cycles (none expected) are left out.
fn topological_order(g: &Csr) -> Vec<u32> {
    let n = g.len();
    let mut indeg = vec![0u32; n];
    for v in 0..n {
        for (w, _) in g.arcs(v) {
            indeg[w as usize] += 1;
        }
    }
    let mut queue: VecDeque<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(v) = queue.pop_front() {
        order.push(v);
        for (w, _) in g.arcs(v as usize) {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                queue.push_back(w);
            }
        }
    }
    order
}
