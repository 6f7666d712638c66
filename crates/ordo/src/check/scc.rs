//! Graph plumbing: a compact adjacency structure, iterative Tarjan SCCs and
//! BFS shortest paths. Everything here is iterative, so histories with
//! millions of transactions cannot overflow the stack.

use std::collections::VecDeque;

/// Compressed sparse row adjacency over nodes `0..n`. Each arc carries a
/// caller-chosen label (the index of the edge it came from).
#[derive(Clone, Debug, Default)]
pub(crate) struct Csr {
    offsets: Vec<usize>,
    targets: Vec<u32>,
    labels: Vec<u32>,
}

impl Csr {
    /// Builds the adjacency of `n` nodes from `(from, to, label)` arcs.
    /// Arcs whose endpoints are out of range are ignored.
    pub(crate) fn new(n: usize, arcs: &[(u32, u32, u32)]) -> Self {
        let in_range = |&&(f, t, _): &&(u32, u32, u32)| (f as usize) < n && (t as usize) < n;
        let mut offsets = vec![0usize; n + 1];
        for &(f, _, _) in arcs.iter().filter(in_range) {
            offsets[f as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let total = offsets[n];
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; total];
        let mut labels = vec![0u32; total];
        for &(f, t, l) in arcs.iter().filter(in_range) {
            let slot = &mut fill[f as usize];
            targets[*slot] = t;
            labels[*slot] = l;
            *slot += 1;
        }
        Self {
            offsets,
            targets,
            labels,
        }
    }

    /// Number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Range of arc positions leaving `v`.
    fn arc_range(&self, v: usize) -> std::ops::Range<usize> {
        self.offsets[v]..self.offsets[v + 1]
    }

    /// Arcs leaving `v` as `(target, label)`.
    pub(crate) fn arcs(&self, v: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        let r = self.arc_range(v);
        self.targets[r.clone()]
            .iter()
            .copied()
            .zip(self.labels[r].iter().copied())
    }
}

const UNVISITED: u32 = u32::MAX;

/// Strongly connected components with at least two nodes, by iterative
/// Tarjan. Each component lists its nodes; components come out in reverse
/// topological order of the condensation. (Self-loops are not reported: the
/// DSG never has them.)
pub(crate) fn nontrivial_sccs(g: &Csr) -> Vec<Vec<u32>> {
    let n = g.len();
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    // Simulated call stack: (node, next arc position).
    let mut calls: Vec<(u32, usize)> = Vec::new();
    let mut next_index = 0u32;
    let mut out = Vec::new();

    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root as u32);
        on_stack[root] = true;
        calls.push((root as u32, g.offsets[root]));

        while let Some(&mut (v, ref mut pos)) = calls.last_mut() {
            let v = v as usize;
            if *pos < g.offsets[v + 1] {
                let w = g.targets[*pos] as usize;
                *pos += 1;
                if index[w] == UNVISITED {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    calls.push((w as u32, g.offsets[w]));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    comp.push(w);
                    if w as usize == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    out.push(comp);
                }
            }
            if let Some(&(u, _)) = calls.last() {
                let u = u as usize;
                low[u] = low[u].min(low[v]);
            }
        }
    }
    out
}

/// Shortest path from `from` to `to` as the list of arc labels along it, or
/// `None` if `to` is unreachable. `from == to` yields the empty path.
pub(crate) fn bfs_path(g: &Csr, from: u32, to: u32) -> Option<Vec<u32>> {
    let n = g.len();
    if from as usize >= n || to as usize >= n {
        return None;
    }
    if from == to {
        return Some(Vec::new());
    }
    // parent[v] = (predecessor, label of the arc used)
    let mut parent: Vec<Option<(u32, u32)>> = vec![None; n];
    let mut seen = vec![false; n];
    seen[from as usize] = true;
    let mut queue = VecDeque::from([from]);
    while let Some(v) = queue.pop_front() {
        for (w, label) in g.arcs(v as usize) {
            if seen[w as usize] {
                continue;
            }
            seen[w as usize] = true;
            parent[w as usize] = Some((v, label));
            if w == to {
                let mut path = Vec::new();
                let mut cur = to;
                while cur != from {
                    let (p, l) = parent[cur as usize]?;
                    path.push(l);
                    cur = p;
                }
                path.reverse();
                return Some(path);
            }
            queue.push_back(w);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut comps: Vec<Vec<u32>>) -> Vec<Vec<u32>> {
        for c in &mut comps {
            c.sort_unstable();
        }
        comps.sort();
        comps
    }

    #[test]
    fn finds_components() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 4 -> 3, 5 alone
        let arcs = [
            (0, 1, 0),
            (1, 2, 1),
            (2, 0, 2),
            (2, 3, 3),
            (3, 4, 4),
            (4, 3, 5),
        ];
        let g = Csr::new(6, &arcs);
        assert_eq!(sorted(nontrivial_sccs(&g)), vec![vec![0, 1, 2], vec![3, 4]]);
    }

    #[test]
    fn dag_has_no_components() {
        let arcs: Vec<_> = (0..1000u32).map(|i| (i, i + 1, i)).collect();
        let g = Csr::new(1001, &arcs);
        assert!(nontrivial_sccs(&g).is_empty());
    }

    #[test]
    fn deep_cycle_does_not_overflow() {
        let n = 300_000u32;
        let arcs: Vec<_> = (0..n).map(|i| (i, (i + 1) % n, i)).collect();
        let g = Csr::new(n as usize, &arcs);
        let comps = nontrivial_sccs(&g);
        assert_eq!(comps.len(), 1);
        assert_eq!(comps[0].len(), n as usize);
    }

    #[test]
    fn bfs_returns_shortest_labels() {
        let arcs = [(0, 1, 10), (1, 2, 11), (0, 2, 12), (2, 3, 13)];
        let g = Csr::new(4, &arcs);
        assert_eq!(bfs_path(&g, 0, 3), Some(vec![12, 13]));
        assert_eq!(bfs_path(&g, 3, 0), None);
        assert_eq!(bfs_path(&g, 2, 2), Some(vec![]));
    }
}
