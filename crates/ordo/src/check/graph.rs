//! Building Adya's Direct Serialization Graph (DSG) from a [`History`].
//!
//! Two steps:
//!
//! 1. [`VersionOrder`]: every write names the version it replaced (`prev`),
//!    so each item's versions form a chain `prev -> new`. Aborted writers are
//!    part of the chain (they did install a version, possibly undone later);
//!    committed-only views are obtained by walking *through* aborted versions.
//! 2. [`Dsg`]: nodes are the committed transactions; edges are
//!    * `ww` — `Wprev -> W`: `W` replaced the nearest committed version below it,
//!    * `wr` — `W -> R`: `R` read the version `W` wrote,
//!    * `rw` — `R -> W2`: `R` read a version and `W2` installed the next
//!      committed version of that item;
//!    * `prw` — a predicate anti-dependency `R -> W`: `R` scanned a key range and
//!      saw a key in it as never existing (no slot yet, see [`Event::Scan`]), and
//!      `W` installed the first committed version of that key — the insert `R`'s
//!      scan missed.
//!
//! Facts found along the way that are not edges — reads of aborted versions
//! and version forks — are collected for [`super::anomaly`] to report.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::hash::FxHashMap;
use super::history::{Event, History, ItemKey, TxnId, INITIAL};
use super::scc::Csr;

/// The three kinds of DSG edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EdgeKind {
    /// Write-write (version order) dependency.
    WW,
    /// Write-read dependency: the reader saw the writer's version.
    WR,
    /// Read-write anti-dependency: the writer replaced the version the reader saw.
    RW,
    /// Predicate anti-dependency: the writer inserted a key into a range the reader scanned
    /// before the key existed.
    PRW,
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EdgeKind::WW => "ww",
            EdgeKind::WR => "wr",
            EdgeKind::RW => "rw",
            EdgeKind::PRW => "prw",
        })
    }
}

/// A DSG edge named by transaction ids, with one item that induced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EdgeWitness {
    /// Source transaction.
    pub from: TxnId,
    /// Target transaction.
    pub to: TxnId,
    /// Edge kind.
    pub kind: EdgeKind,
    /// An item on which the dependency arises.
    pub item: ItemKey,
}

impl fmt::Display for EdgeWitness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "T{} -{}({})-> T{}",
            self.from, self.kind, self.item, self.to
        )
    }
}

/// A committed transaction read a version written by an aborted one (G1a).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AbortedRead {
    /// The committed reader.
    pub reader: TxnId,
    /// The item read.
    pub item: ItemKey,
    /// The aborted writer whose version was seen.
    pub writer: TxnId,
}

/// Two or more committed writers claim to directly follow the same version.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct VersionFork {
    /// The item.
    pub item: ItemKey,
    /// The version that was replaced more than once.
    pub version: TxnId,
    /// The committed writers that replaced it (sorted).
    pub successors: Vec<TxnId>,
}

/// Status of a transaction named in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Committed, with its DSG node index.
    Committed(u32),
    Aborted,
}

/// Per-item version chains, built from the writes of all (committed and
/// aborted) transactions.
#[derive(Debug, Default)]
pub struct VersionOrder {
    status: FxHashMap<TxnId, Status>,
    /// First writer found that replaced `(item, version)`, with its status.
    next: FxHashMap<(ItemKey, TxnId), (TxnId, Status)>,
    /// Further writers replacing the same version (forks; normally empty).
    extra_next: FxHashMap<(ItemKey, TxnId), Vec<(TxnId, Status)>>,
    /// The version each aborted `(item, writer)` replaced (only aborted
    /// writers are ever walked back through).
    aborted_prev: FxHashMap<(ItemKey, TxnId), TxnId>,
}

/// Upper bound on how many aborted versions a single walk passes through;
/// only reached on malformed (cyclic) chains.
const MAX_WALK: usize = 1 << 20;

impl VersionOrder {
    /// Records that `writer` (with `status`) replaced `prev` of `item`.
    fn link(&mut self, item: ItemKey, prev: TxnId, writer: TxnId, status: Status) {
        if status == Status::Aborted {
            self.aborted_prev.entry((item, writer)).or_insert(prev);
        }
        match self.next.get(&(item, prev)) {
            None => {
                self.next.insert((item, prev), (writer, status));
            }
            Some(&(s, _)) if s == writer => {}
            Some(_) => {
                let extra = self.extra_next.entry((item, prev)).or_default();
                if !extra.iter().any(|&(s, _)| s == writer) {
                    extra.push((writer, status));
                }
            }
        }
    }

    fn successors_with_status(
        &self,
        item: ItemKey,
        version: TxnId,
    ) -> impl Iterator<Item = (TxnId, Status)> + '_ {
        let first = self.next.get(&(item, version)).copied();
        let rest = (!self.extra_next.is_empty())
            .then(|| self.extra_next.get(&(item, version)))
            .flatten()
            .into_iter()
            .flatten()
            .copied();
        first.into_iter().chain(rest)
    }

    /// Direct successors of `version` in `item`'s chain (committed or not).
    pub fn successors(&self, item: ItemKey, version: TxnId) -> impl Iterator<Item = TxnId> + '_ {
        self.successors_with_status(item, version).map(|(s, _)| s)
    }

    /// The committed versions that directly follow `version` once aborted
    /// versions are skipped (deduplicated, in discovery order).
    pub fn committed_successors(&self, item: ItemKey, version: TxnId) -> Vec<TxnId> {
        let mut out = Vec::new();
        self.committed_successor_nodes(item, version, &mut out);
        out.into_iter().map(|(s, _)| s).collect()
    }

    /// Like [`Self::committed_successors`], with DSG node indices, appended
    /// to `out` (which the caller clears).
    fn committed_successor_nodes(
        &self,
        item: ItemKey,
        version: TxnId,
        out: &mut Vec<(TxnId, u32)>,
    ) {
        let mut stack: Vec<TxnId> = Vec::new();
        let mut expanded: Vec<TxnId> = Vec::new();
        let mut v = version;
        loop {
            for (s, status) in self.successors_with_status(item, v) {
                match status {
                    Status::Committed(node) => {
                        if !out.iter().any(|&(t, _)| t == s) {
                            out.push((s, node));
                        }
                    }
                    Status::Aborted => {
                        if expanded.len() < MAX_WALK && !expanded.contains(&s) {
                            expanded.push(s);
                            stack.push(s);
                        }
                    }
                }
            }
            match stack.pop() {
                Some(next) => v = next,
                None => return,
            }
        }
    }

    /// The nearest committed version at or below `version` in `item`'s chain,
    /// walking back through aborted writers, with its node index. `None` for
    /// [`INITIAL`] or a writer unknown to the history.
    fn committed_at_or_below(&self, item: ItemKey, version: TxnId) -> Option<(TxnId, u32)> {
        let mut v = version;
        for _ in 0..MAX_WALK {
            match self.status.get(&v)? {
                Status::Committed(node) => return Some((v, *node)),
                Status::Aborted => v = *self.aborted_prev.get(&(item, v))?,
            }
        }
        None
    }

    /// Versions replaced by two or more committed writers (after skipping aborted ones).
    fn forks(&self) -> Vec<VersionFork> {
        let mut forks: Vec<VersionFork> = self
            .extra_next
            .keys()
            .filter_map(|&(item, version)| {
                let mut successors = self.committed_successors(item, version);
                (successors.len() > 1).then(|| {
                    successors.sort_unstable();
                    VersionFork {
                        item,
                        version,
                        successors,
                    }
                })
            })
            .collect();
        forks.sort();
        forks
    }
}

/// An edge between DSG node indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NodeEdge {
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) kind: EdgeKind,
    pub(crate) item: ItemKey,
}

/// Adya's Direct Serialization Graph over the committed transactions.
#[derive(Debug)]
pub struct Dsg {
    /// Node index -> transaction id.
    pub(crate) ids: Vec<TxnId>,
    /// Distinct edges (one witness item per `(from, to, kind)`).
    pub(crate) edges: Vec<NodeEdge>,
    /// Adjacency; arc labels are indices into `edges`.
    pub(crate) adj: Csr,
    /// Number of aborted transactions in the history.
    pub aborted: usize,
    /// Committed reads of aborted versions.
    pub aborted_reads: Vec<AbortedRead>,
    /// Versions replaced by more than one committed writer.
    pub forks: Vec<VersionFork>,
    /// The per-item version chains the graph was built from.
    pub versions: VersionOrder,
}

impl Dsg {
    /// Builds the DSG. Records with id [`INITIAL`] are ignored; if an id
    /// appears more than once, only its first record counts.
    pub fn build(history: &History) -> Self {
        let mut versions = VersionOrder::default();
        versions.status.reserve(history.txns.len());
        let mut ids = Vec::new();
        let mut kept = Vec::with_capacity(history.txns.len());
        let mut aborted = 0;
        for rec in &history.txns {
            if rec.id == INITIAL || versions.status.contains_key(&rec.id) {
                continue;
            }
            let status = if rec.committed {
                let Ok(node) = u32::try_from(ids.len()) else {
                    continue;
                };
                ids.push(rec.id);
                Status::Committed(node)
            } else {
                aborted += 1;
                Status::Aborted
            };
            versions.status.insert(rec.id, status);
            kept.push((rec, status));
        }

        let writes = kept.iter().flat_map(|(r, _)| &r.events);
        let writes = writes.filter(|e| matches!(e, Event::Write { .. })).count();
        versions.next.reserve(writes);
        for &(rec, status) in &kept {
            for ev in &rec.events {
                if let Event::Write { item, prev, .. } = *ev {
                    if prev != rec.id {
                        versions.link(item, prev, rec.id, status);
                    }
                }
            }
        }

        // Items whose version chain starts at INITIAL with some writer: what a scan that saw the
        // item as never existing may have missed (only needed when the history has scans).
        let scans = kept
            .iter()
            .any(|(r, _)| r.events.iter().any(|e| matches!(e, Event::Scan { .. })));
        let inserted: std::collections::BTreeSet<ItemKey> = if scans {
            versions
                .next
                .keys()
                .chain(versions.extra_next.keys())
                .filter(|&&(_, v)| v == INITIAL)
                .map(|&(item, _)| item)
                .collect()
        } else {
            Default::default()
        };
        let mut edges = Vec::new();
        let mut aborted_reads = Vec::new();
        let mut local: Vec<NodeEdge> = Vec::new();
        let mut succ = Vec::new();
        let mut touched: Vec<ItemKey> = Vec::new();
        for &(rec, status) in &kept {
            let Status::Committed(me) = status else {
                continue;
            };
            local.clear();
            for (i, ev) in rec.events.iter().enumerate() {
                match *ev {
                    Event::Scan { table, lo, hi } => {
                        // Keys the transaction had read or written by the end of the scan (its reads
                        // come before its event), and keys it writes at all (protocols that buffer
                        // writes record them at commit, after the scan that saw them): none of these
                        // was "never existing" to it.
                        touched.clear();
                        touched.extend(rec.events[..i].iter().filter_map(Event::item));
                        touched.extend(rec.events[i..].iter().filter_map(|e| match *e {
                            Event::Write { item, .. } => Some(item),
                            _ => None,
                        }));
                        touched.sort_unstable();
                        let range = ItemKey::new(table, lo)..=ItemKey::new(table, hi);
                        for &item in inserted.range(range) {
                            if touched.binary_search(&item).is_ok() {
                                continue;
                            }
                            succ.clear();
                            versions.committed_successor_nodes(item, INITIAL, &mut succ);
                            for &(_, to) in &succ {
                                if to != me {
                                    local.push(NodeEdge {
                                        from: me,
                                        to,
                                        kind: EdgeKind::PRW,
                                        item,
                                    });
                                }
                            }
                        }
                    }
                    Event::Write { item, prev, .. } => {
                        if prev == rec.id {
                            continue;
                        }
                        if let Some((_, from)) = versions.committed_at_or_below(item, prev) {
                            if from != me {
                                local.push(NodeEdge {
                                    from,
                                    to: me,
                                    kind: EdgeKind::WW,
                                    item,
                                });
                            }
                        }
                    }
                    Event::Read { item, version } => {
                        if version == rec.id {
                            continue;
                        }
                        match versions.status.get(&version) {
                            Some(&Status::Committed(from)) => {
                                local.push(NodeEdge {
                                    from,
                                    to: me,
                                    kind: EdgeKind::WR,
                                    item,
                                });
                            }
                            Some(Status::Aborted) => aborted_reads.push(AbortedRead {
                                reader: rec.id,
                                item,
                                writer: version,
                            }),
                            None => {}
                        }
                        succ.clear();
                        versions.committed_successor_nodes(item, version, &mut succ);
                        for &(_, to) in &succ {
                            if to != me {
                                local.push(NodeEdge {
                                    from: me,
                                    to,
                                    kind: EdgeKind::RW,
                                    item,
                                });
                            }
                        }
                    }
                }
            }
            // Every ww/wr edge is generated while visiting its target and every
            // rw edge while visiting its source, so per-transaction dedup is global.
            local.sort_unstable_by_key(|e| (e.from, e.to, e.kind, e.item));
            local.dedup_by_key(|e| (e.from, e.to, e.kind));
            edges.extend_from_slice(&local);
        }
        aborted_reads.sort_unstable();
        aborted_reads.dedup();

        let arcs: Vec<(u32, u32, u32)> = edges
            .iter()
            .enumerate()
            .filter_map(|(i, e)| Some((e.from, e.to, u32::try_from(i).ok()?)))
            .collect();
        let adj = Csr::new(ids.len(), &arcs);
        let forks = versions.forks();
        Self {
            ids,
            edges,
            adj,
            aborted,
            aborted_reads,
            forks,
            versions,
        }
    }

    /// Number of committed transactions (nodes).
    pub fn committed(&self) -> usize {
        self.ids.len()
    }

    /// Number of distinct `(from, to, kind)` edges.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// All edges, named by transaction ids.
    pub fn edges(&self) -> impl Iterator<Item = EdgeWitness> + '_ {
        self.edges.iter().map(|e| self.witness(e))
    }

    pub(crate) fn witness(&self, e: &NodeEdge) -> EdgeWitness {
        EdgeWitness {
            from: self.ids[e.from as usize],
            to: self.ids[e.to as usize],
            kind: e.kind,
            item: e.item,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::history::TxnRecord;

    const X: ItemKey = ItemKey::new(0, 1);

    fn txn(id: TxnId, committed: bool, events: Vec<Event>) -> TxnRecord {
        TxnRecord {
            id,
            session: 0,
            committed,
            events,
        }
    }
    fn r(version: TxnId) -> Event {
        Event::Read { item: X, version }
    }
    fn w(prev: TxnId) -> Event {
        Event::Write {
            item: X,
            prev,
            deleted: false,
        }
    }
    fn edge_set(d: &Dsg) -> Vec<(TxnId, TxnId, EdgeKind)> {
        let mut v: Vec<_> = d.edges().map(|e| (e.from, e.to, e.kind)).collect();
        v.sort();
        v
    }

    #[test]
    fn aborted_writer_is_skipped_in_version_chain() {
        // T1 commits x; T2 (aborted) overwrites it; T3 overwrites T2's version.
        let h = History {
            txns: vec![
                txn(1, true, vec![w(INITIAL)]),
                txn(2, false, vec![w(1)]),
                txn(3, true, vec![w(2)]),
            ],
        };
        let d = Dsg::build(&h);
        assert_eq!(edge_set(&d), vec![(1, 3, EdgeKind::WW)]);
        assert_eq!(d.aborted, 1);
        assert!(d.forks.is_empty());
    }

    #[test]
    fn rw_edge_skips_aborted_successor() {
        // T4 read T1's x; T2 aborted replaced it (not undone), T3 replaced T2's.
        let h = History {
            txns: vec![
                txn(1, true, vec![w(INITIAL)]),
                txn(4, true, vec![r(1)]),
                txn(2, false, vec![w(1)]),
                txn(3, true, vec![w(2)]),
            ],
        };
        let d = Dsg::build(&h);
        assert_eq!(
            edge_set(&d),
            vec![
                (1, 3, EdgeKind::WW),
                (1, 4, EdgeKind::WR),
                (4, 3, EdgeKind::RW)
            ]
        );
    }

    #[test]
    fn undone_abort_is_not_a_fork() {
        // Undo protocols: T2 aborted and was undone, so T3 names T1 as prev too.
        let h = History {
            txns: vec![
                txn(1, true, vec![w(INITIAL)]),
                txn(2, false, vec![w(1)]),
                txn(3, true, vec![w(1)]),
            ],
        };
        let d = Dsg::build(&h);
        assert!(d.forks.is_empty());
        assert_eq!(edge_set(&d), vec![(1, 3, EdgeKind::WW)]);
    }

    #[test]
    fn two_committed_writers_on_one_prev_is_a_fork() {
        let h = History {
            txns: vec![
                txn(1, true, vec![w(INITIAL)]),
                txn(2, true, vec![w(1)]),
                txn(3, true, vec![w(1)]),
            ],
        };
        let d = Dsg::build(&h);
        assert_eq!(
            d.forks,
            vec![VersionFork {
                item: X,
                version: 1,
                successors: vec![2, 3]
            }]
        );
        assert_eq!(
            edge_set(&d),
            vec![(1, 2, EdgeKind::WW), (1, 3, EdgeKind::WW)]
        );
    }

    #[test]
    fn read_own_write_makes_no_edges() {
        let h = History {
            txns: vec![txn(1, true, vec![w(INITIAL), r(1), w(1), r(1)])],
        };
        let d = Dsg::build(&h);
        assert_eq!(d.edge_count(), 0);
    }

    #[test]
    fn duplicate_edges_are_merged() {
        let y = ItemKey::new(0, 2);
        let h = History {
            txns: vec![
                txn(
                    1,
                    true,
                    vec![
                        w(INITIAL),
                        Event::Write {
                            item: y,
                            prev: INITIAL,
                            deleted: false,
                        },
                    ],
                ),
                txn(
                    2,
                    true,
                    vec![
                        r(1),
                        Event::Read {
                            item: y,
                            version: 1,
                        },
                    ],
                ),
            ],
        };
        let d = Dsg::build(&h);
        let wr: Vec<_> = d.edges().collect();
        assert_eq!(wr.len(), 1);
        assert_eq!(wr[0].item, X, "smallest item is kept as witness");
    }

    #[test]
    fn read_of_aborted_version_is_recorded() {
        let h = History {
            txns: vec![txn(1, false, vec![w(INITIAL)]), txn(2, true, vec![r(1)])],
        };
        let d = Dsg::build(&h);
        assert_eq!(
            d.aborted_reads,
            vec![AbortedRead {
                reader: 2,
                item: X,
                writer: 1
            }]
        );
        assert_eq!(d.edge_count(), 0);
    }
}
