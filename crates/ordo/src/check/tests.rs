//! End-to-end tests of [`check`] on hand-built and generated histories.

use super::*;

const X: ItemKey = ItemKey::new(0, 1);
const Y: ItemKey = ItemKey::new(0, 2);

fn txn(id: TxnId, committed: bool, events: Vec<Event>) -> TxnRecord {
    TxnRecord {
        id,
        session: (id % 2) as u32,
        committed,
        events,
    }
}
fn r(item: ItemKey, version: TxnId) -> Event {
    Event::Read { item, version }
}
fn w(item: ItemKey, prev: TxnId) -> Event {
    Event::Write {
        item,
        prev,
        deleted: false,
    }
}
fn kinds(rep: &Report) -> Vec<AnomalyKind> {
    rep.anomalies.iter().map(|a| a.kind).collect()
}
/// The cycle closes: each edge ends where the next starts, the last ends at the first.
fn assert_closed_cycle(a: &Anomaly) {
    assert!(!a.edges.is_empty());
    for (i, e) in a.edges.iter().enumerate() {
        let next = &a.edges[(i + 1) % a.edges.len()];
        assert_eq!(e.to, next.from, "broken cycle in {}", a.description);
        assert_eq!(a.txns[i], e.from);
    }
}

#[test]
fn write_skew_is_g2_item() {
    let h = History {
        txns: vec![
            txn(1, true, vec![r(X, INITIAL), r(Y, INITIAL), w(X, INITIAL)]),
            txn(2, true, vec![r(X, INITIAL), r(Y, INITIAL), w(Y, INITIAL)]),
        ],
    };
    let rep = check(&h);
    assert_eq!(kinds(&rep), vec![AnomalyKind::G2Item]);
    let a = &rep.anomalies[0];
    let mut txns = a.txns.clone();
    txns.sort_unstable();
    assert_eq!(txns, vec![1, 2]);
    assert!(a.edges.iter().all(|e| e.kind == EdgeKind::RW));
    assert_closed_cycle(a);
    assert!(a.description.starts_with("G2-item: T"), "{}", a.description);
    assert!(a.description.contains("-rw(t0:k"), "{}", a.description);
    assert!(!rep.is_serializable());
}

#[test]
fn lost_update_is_g_single() {
    let h = History {
        txns: vec![
            txn(1, true, vec![r(X, INITIAL), w(X, INITIAL)]),
            txn(2, true, vec![r(X, INITIAL), w(X, 1)]),
        ],
    };
    let rep = check(&h);
    assert_eq!(kinds(&rep), vec![AnomalyKind::GSingle]);
    let a = &rep.anomalies[0];
    assert_closed_cycle(a);
    // T2 -rw-> T1 -ww-> T2
    assert_eq!(a.edges.iter().filter(|e| e.kind == EdgeKind::RW).count(), 1);
    assert!(a
        .edges
        .iter()
        .any(|e| (e.from, e.to, e.kind) == (2, 1, EdgeKind::RW)));
    assert!(a
        .edges
        .iter()
        .any(|e| (e.from, e.to, e.kind) == (1, 2, EdgeKind::WW)));
}

#[test]
fn write_cycle_is_g0() {
    // T1 writes x then y; T2 writes y then x, interleaved: x: T1 -> T2, y: T2 -> T1.
    let h = History {
        txns: vec![
            txn(1, true, vec![w(X, INITIAL), w(Y, 2)]),
            txn(2, true, vec![w(Y, INITIAL), w(X, 1)]),
        ],
    };
    let rep = check(&h);
    assert_eq!(kinds(&rep), vec![AnomalyKind::G0]);
    let a = &rep.anomalies[0];
    assert!(a.edges.iter().all(|e| e.kind == EdgeKind::WW));
    assert_closed_cycle(a);
}

#[test]
fn read_cycle_is_g1c() {
    // Each reads the other's write.
    let h = History {
        txns: vec![
            txn(1, true, vec![w(X, INITIAL), r(Y, 2)]),
            txn(2, true, vec![w(Y, INITIAL), r(X, 1)]),
        ],
    };
    let rep = check(&h);
    assert_eq!(kinds(&rep), vec![AnomalyKind::G1c]);
    let a = &rep.anomalies[0];
    assert!(a.edges.iter().all(|e| e.kind == EdgeKind::WR));
    assert_closed_cycle(a);
}

#[test]
fn read_of_aborted_write_is_g1a() {
    let h = History {
        txns: vec![
            txn(1, false, vec![w(X, INITIAL)]),
            txn(2, true, vec![r(X, 1)]),
        ],
    };
    let rep = check(&h);
    assert_eq!(kinds(&rep), vec![AnomalyKind::G1a]);
    assert_eq!(rep.anomalies[0].txns, vec![2, 1]);
    assert!(rep.has(AnomalyKind::G1a));
    assert!(!rep.is_serializable());
    assert_eq!((rep.committed, rep.aborted), (1, 1));
}

#[test]
fn serial_history_is_clean() {
    let h = History {
        txns: vec![
            txn(1, true, vec![r(X, INITIAL), w(X, INITIAL), w(Y, INITIAL)]),
            txn(2, false, vec![r(X, 1), w(X, 1)]), // aborted and undone
            txn(3, true, vec![r(X, 1), r(Y, 1), w(Y, 1)]),
            txn(4, true, vec![r(Y, 3), w(X, 1)]),
        ],
    };
    let rep = check(&h);
    assert!(rep.anomalies.is_empty(), "{rep}");
    assert!(rep.is_serializable());
    assert_eq!((rep.committed, rep.aborted), (3, 1));
    assert!(rep.summary().contains("serializable, no anomalies"));
}

#[test]
fn read_own_write_makes_no_self_edges() {
    let h = History {
        txns: vec![txn(1, true, vec![w(X, INITIAL), r(X, 1), w(X, 1), r(X, 1)])],
    };
    let rep = check(&h);
    assert_eq!(rep.edges, 0);
    assert!(rep.anomalies.is_empty());
}

#[test]
fn aborted_writer_is_skipped_between_committed_writers() {
    let h = History {
        txns: vec![
            txn(1, true, vec![w(X, INITIAL)]),
            txn(2, false, vec![w(X, 1)]),
            txn(3, true, vec![w(X, 2)]),
        ],
    };
    let dsg = Dsg::build(&h);
    let edges: Vec<_> = dsg.edges().map(|e| (e.from, e.to, e.kind)).collect();
    assert_eq!(edges, vec![(1, 3, EdgeKind::WW)]);
    assert!(check(&h).anomalies.is_empty());
}

#[test]
fn version_fork_is_reported_but_not_a_violation() {
    let h = History {
        txns: vec![
            txn(1, true, vec![w(X, INITIAL)]),
            txn(2, true, vec![w(X, 1)]),
            txn(3, true, vec![w(X, 1)]),
        ],
    };
    let rep = check(&h);
    assert_eq!(kinds(&rep), vec![AnomalyKind::VersionFork]);
    assert_eq!(rep.anomalies[0].txns, vec![1, 2, 3]);
    assert!(rep.is_serializable());
}

#[test]
fn one_anomaly_per_scc_and_display() {
    // Two independent write skews.
    let (a, b) = (ItemKey::new(1, 1), ItemKey::new(1, 2));
    let h = History {
        txns: vec![
            txn(1, true, vec![r(X, INITIAL), r(Y, INITIAL), w(X, INITIAL)]),
            txn(2, true, vec![r(X, INITIAL), r(Y, INITIAL), w(Y, INITIAL)]),
            txn(3, true, vec![r(a, INITIAL), r(b, INITIAL), w(a, INITIAL)]),
            txn(4, true, vec![r(a, INITIAL), r(b, INITIAL), w(b, INITIAL)]),
        ],
    };
    let rep = check(&h);
    assert_eq!(rep.count(AnomalyKind::G2Item), 2);
    assert_eq!(rep.anomalies[0].txns.iter().min(), Some(&1));
    let text = rep.to_string();
    assert!(text.contains("G2-item=2"), "{text}");
    assert!(text.contains("NOT serializable"), "{text}");
}

#[test]
fn long_serial_chain_is_fast_and_clean() {
    let n: TxnId = 200_000;
    let txns = (1..=n)
        .map(|id| {
            let prev = id - 1;
            txn(id, true, vec![r(X, prev), w(X, prev), r(Y, INITIAL)])
        })
        .collect();
    let rep = check(&History { txns });
    assert!(rep.anomalies.is_empty());
    assert_eq!(rep.committed, n as usize);
    // ww + wr between consecutive txns, plus rw from every reader of y... none: y never written.
    assert_eq!(rep.edges, 2 * (n as usize - 1));
}

/// A chain `T1 -ww(x)-> T2 -> ... -> Tn` closed by one edge `Tn -> T1`.
fn long_cycle(n: TxnId, close_with_read: bool) -> Report {
    let mut txns: Vec<TxnRecord> = (1..=n)
        .map(|id| txn(id, true, vec![w(X, id - 1)]))
        .collect();
    let (first, last) = (0, n as usize - 1);
    if close_with_read {
        // Tn writes y, T1 reads it: Tn -wr(y)-> T1.
        txns[last].events.push(w(Y, INITIAL));
        txns[first].events.push(r(Y, n));
    } else {
        // T1 writes y, Tn read the initial y: Tn -rw(y)-> T1.
        txns[first].events.push(w(Y, INITIAL));
        txns[last].events.push(r(Y, INITIAL));
    }
    check(&History { txns })
}

#[test]
fn long_cycles_are_found_and_classified() {
    let n: TxnId = 100_000;
    for (close_with_read, kind) in [(true, AnomalyKind::G1c), (false, AnomalyKind::GSingle)] {
        let rep = long_cycle(n, close_with_read);
        assert_eq!(kinds(&rep), vec![kind]);
        assert_eq!(rep.anomalies[0].edges.len(), n as usize);
        assert_closed_cycle(&rep.anomalies[0]);
    }
}

/// Generated histories, cross-checked against brute force.
mod generated {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// One planned operation: (is_write, key index).
    type Plan = Vec<Vec<(bool, u64)>>;

    fn plans(max_txns: usize) -> impl Strategy<Value = (Plan, Vec<bool>)> {
        let txn = prop::collection::vec((any::<bool>(), 0u64..3), 1..5);
        prop::collection::vec(txn, 1..max_txns).prop_flat_map(|p| {
            let n = p.len();
            (Just(p), prop::collection::vec(prop::bool::weighted(0.8), n))
        })
    }

    /// Runs the plans serially; aborted transactions' writes are undone.
    fn run_serial(plan: &Plan, commits: &[bool]) -> History {
        let mut current: HashMap<ItemKey, TxnId> = HashMap::new();
        let mut txns = Vec::new();
        for (i, (ops, &committed)) in plan.iter().zip(commits).enumerate() {
            let id = i as TxnId + 1;
            let mut mine = current.clone();
            let events = ops
                .iter()
                .map(|&(is_write, k)| {
                    let item = ItemKey::new(0, k);
                    let seen = mine.get(&item).copied().unwrap_or(INITIAL);
                    if is_write {
                        mine.insert(item, id);
                        w(item, seen)
                    } else {
                        r(item, seen)
                    }
                })
                .collect();
            if committed {
                current = mine;
            }
            txns.push(TxnRecord {
                id,
                session: (i % 3) as u32,
                committed,
                events,
            });
        }
        History { txns }
    }

    /// Is there an order of the committed transactions that, replayed
    /// serially, reproduces every read and every write's `prev`?
    fn brute_force_serializable(h: &History) -> bool {
        let committed: Vec<&TxnRecord> = h.txns.iter().filter(|t| t.committed).collect();
        let mut order: Vec<usize> = (0..committed.len()).collect();
        permutations(&mut order, 0, &mut |perm| {
            let mut current: HashMap<ItemKey, TxnId> = HashMap::new();
            perm.iter().all(|&i| {
                let t = committed[i];
                let ok = t.events.iter().enumerate().all(|(i, ev)| match *ev {
                    Event::Read { item, version } => {
                        let seen = current.get(&item).copied().unwrap_or(INITIAL);
                        seen == version
                    }
                    Event::Write { item, prev, .. } => {
                        let seen = current.insert(item, t.id).unwrap_or(INITIAL);
                        seen == prev
                    }
                    // A key of the range the transaction had neither read nor written by the end
                    // of the scan, and never writes, must not exist yet.
                    Event::Scan { table, lo, hi } => current.keys().all(|k| {
                        k.table != table
                            || !(lo..=hi).contains(&k.key)
                            || t.events[..i].iter().any(|e| e.item() == Some(*k))
                            || t.events[i..]
                                .iter()
                                .any(|e| matches!(e, Event::Write { item, .. } if item == k))
                    }),
                });
                ok
            })
        })
    }

    /// Calls `f` on every permutation of `v[k..]` until it returns true.
    fn permutations(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize]) -> bool) -> bool {
        if k == v.len() {
            return f(v);
        }
        for i in k..v.len() {
            v.swap(k, i);
            if permutations(v, k + 1, f) {
                v.swap(k, i);
                return true;
            }
            v.swap(k, i);
        }
        false
    }

    /// One planned operation with scans: 0 read, 1 write, 2 scan of keys `k..=k + 1`.
    type ScanPlan = Vec<Vec<(u8, u64)>>;

    fn scan_plans(max_txns: usize) -> impl Strategy<Value = ScanPlan> {
        let txn = prop::collection::vec((0u8..3, 0u64..4), 1..5);
        prop::collection::vec(txn, 1..max_txns)
    }

    /// Runs scan plans serially, all committing, recording a scan as the engine does: a read of
    /// every existing key of its range, then the scan's event.
    fn run_serial_with_scans(plan: &ScanPlan) -> History {
        let mut current: HashMap<ItemKey, TxnId> = HashMap::new();
        let mut txns = Vec::new();
        for (i, ops) in plan.iter().enumerate() {
            let id = i as TxnId + 1;
            let mut events = Vec::new();
            for &(op, k) in ops {
                let item = ItemKey::new(0, k);
                match op {
                    0 => events.push(r(item, current.get(&item).copied().unwrap_or(INITIAL))),
                    1 => {
                        let seen = current.insert(item, id).unwrap_or(INITIAL);
                        events.push(w(item, seen));
                    }
                    _ => {
                        for key in k..=k + 1 {
                            if let Some(&v) = current.get(&ItemKey::new(0, key)) {
                                events.push(r(ItemKey::new(0, key), v));
                            }
                        }
                        events.push(scan(0, k, k + 1));
                    }
                }
            }
            txns.push(TxnRecord {
                id,
                session: (i % 3) as u32,
                committed: true,
                events,
            });
        }
        History { txns }
    }

    proptest! {
        #[test]
        fn serial_histories_with_scans_are_serializable(plan in scan_plans(10)) {
            let rep = check(&run_serial_with_scans(&plan));
            prop_assert!(rep.anomalies.is_empty(), "{}", rep);
        }

        /// A scan that misses inserts (its reads of keys whose first version some transaction
        /// wrote are dropped, as if it ran before them): the checker agrees with brute force.
        #[test]
        fn a_scan_missing_inserts_agrees_with_brute_force(
            plan in scan_plans(6),
            pick in any::<prop::sample::Index>(),
        ) {
            let mut h = run_serial_with_scans(&plan);
            let scans: Vec<(usize, usize)> = h
                .txns
                .iter()
                .enumerate()
                .flat_map(|(ti, t)| {
                    t.events
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| matches!(e, Event::Scan { .. }))
                        .map(move |(ei, _)| (ti, ei))
                })
                .collect();
            prop_assume!(!scans.is_empty());
            let (ti, ei) = scans[pick.index(scans.len())];
            let Event::Scan { lo, hi, .. } = h.txns[ti].events[ei] else { unreachable!() };
            // The first version of each key: whoever replaced INITIAL.
            let first: HashMap<ItemKey, TxnId> = h
                .txns
                .iter()
                .flat_map(|t| t.events.iter().map(move |e| (t.id, e)))
                .filter_map(|(id, e)| match *e {
                    Event::Write { item, prev: INITIAL, .. } => Some((item, id)),
                    _ => None,
                })
                .collect();
            let mut j = ei;
            while j > 0 {
                match h.txns[ti].events[j - 1] {
                    Event::Read { item, version }
                        if (lo..=hi).contains(&item.key) && first.get(&item) == Some(&version) =>
                    {
                        h.txns[ti].events.remove(j - 1);
                    }
                    Event::Read { item, .. } if (lo..=hi).contains(&item.key) => {}
                    _ => break,
                }
                j -= 1;
            }
            let rep = check(&h);
            prop_assert_eq!(rep.is_serializable(), brute_force_serializable(&h), "{}", rep);
        }

        #[test]
        fn serial_histories_are_serializable((plan, commits) in plans(12)) {
            let h = run_serial(&plan, &commits);
            let rep = check(&h);
            prop_assert!(rep.anomalies.is_empty(), "{}", rep);
        }

        #[test]
        fn stale_read_agrees_with_brute_force(
            (plan, _) in plans(7),
            pick in any::<prop::sample::Index>(),
            back in any::<prop::sample::Index>(),
        ) {
            let all_commit = vec![true; plan.len()];
            let mut h = run_serial(&plan, &all_commit);
            // Versions of each item in install order, to pick an older one.
            let mut chain: HashMap<ItemKey, Vec<TxnId>> = HashMap::new();
            let mut reads = Vec::new();
            for (ti, t) in h.txns.iter().enumerate() {
                for (ei, ev) in t.events.iter().enumerate() {
                    match *ev {
                        Event::Write { item, prev, .. } if prev != t.id => {
                            chain.entry(item).or_insert_with(|| vec![INITIAL]).push(t.id);
                        }
                        Event::Read { item, version } if version != t.id => {
                            reads.push((ti, ei, item, version));
                        }
                        _ => {}
                    }
                }
            }
            prop_assume!(!reads.is_empty());
            let (ti, ei, item, version) = reads[pick.index(reads.len())];
            let versions = chain.get(&item).cloned().unwrap_or_else(|| vec![INITIAL]);
            let pos = versions.iter().position(|&v| v == version).unwrap_or(0);
            let older = versions[back.index(pos + 1)];
            h.txns[ti].events[ei] = Event::Read { item, version: older };

            let rep = check(&h);
            prop_assert_eq!(rep.is_serializable(), brute_force_serializable(&h), "{}", rep);
            for a in &rep.anomalies {
                prop_assert!(!a.edges.is_empty());
                for (i, e) in a.edges.iter().enumerate() {
                    prop_assert_eq!(e.to, a.edges[(i + 1) % a.edges.len()].from);
                }
            }
        }
    }
}

fn scan(table: u32, lo: u64, hi: u64) -> Event {
    Event::Scan { table, lo, hi }
}

/// Predicate write skew (the phantom version of the doctors on call): each transaction counts the
/// rows in a range, finds none, and inserts one there. Item reads alone see no conflict at all; the
/// scans' predicate anti-dependencies close the cycle: G2.
#[test]
fn a_phantom_cycle_is_g2_and_invisible_without_the_scans() {
    let a = ItemKey::new(0, 10);
    let b = ItemKey::new(0, 20);
    let with_scans = History {
        txns: vec![
            txn(1, true, vec![scan(0, 0, 99), w(a, INITIAL)]),
            txn(2, true, vec![scan(0, 0, 99), w(b, INITIAL)]),
        ],
    };
    let rep = check(&with_scans);
    assert_eq!(kinds(&rep), vec![AnomalyKind::G2]);
    let g2 = &rep.anomalies[0];
    assert_closed_cycle(g2);
    assert!(g2.edges.iter().all(|e| e.kind == EdgeKind::PRW), "{g2}");
    assert!(g2.description.contains("-prw(t0:k"), "{g2}");
    assert!(!rep.is_serializable());
    // The same transactions without their predicate reads: serializable as far as items go.
    let without: Vec<TxnRecord> = with_scans
        .txns
        .iter()
        .map(|t| TxnRecord {
            events: t
                .events
                .iter()
                .filter(|e| e.item().is_some())
                .cloned()
                .collect(),
            ..t.clone()
        })
        .collect();
    assert!(check(&History { txns: without }).is_serializable());
}

/// What a scan walked is what it predicates on: a key outside its range, a key it read (it existed,
/// the item edge says the rest), a key it wrote itself, and an insert it saw all add no predicate
/// edge; one anti-dependency (item or predicate) plus information flow back is G-single.
#[test]
fn predicate_edges_only_for_inserts_the_scan_missed() {
    let inside = ItemKey::new(0, 5);
    let outside = ItemKey::new(0, 50);
    let other_table = ItemKey::new(1, 5);
    // T1 scans 0..=9 of table 0 and writes X; T2 inserts outside the range / in another table and
    // reads X as T1 wrote it: no cycle.
    let h = History {
        txns: vec![
            txn(1, true, vec![scan(0, 0, 9), w(X, INITIAL)]),
            txn(
                2,
                true,
                vec![w(outside, INITIAL), w(other_table, INITIAL), r(X, 1)],
            ),
        ],
    };
    assert!(check(&h).is_serializable(), "{}", check(&h));
    // T2 inserts inside the range and writes Y, which T1 read as T2 wrote it: the scan missed an
    // insert of a transaction whose write it saw, T1 -prw-> T2 -wr-> T1, one anti-dependency.
    let y = ItemKey::new(1, 2);
    let h = History {
        txns: vec![
            txn(1, true, vec![scan(0, 0, 9), r(y, 2)]),
            txn(2, true, vec![w(inside, INITIAL), w(y, INITIAL)]),
        ],
    };
    let rep = check(&h);
    assert_eq!(kinds(&rep), vec![AnomalyKind::GSingle], "{rep}");
    // The scan saw the insert (a read of it, recorded before the scan's event, as the engine
    // records a scan): T2 -wr-> T1, no predicate edge, no cycle.
    let h = History {
        txns: vec![
            txn(2, true, vec![w(inside, INITIAL)]),
            txn(1, true, vec![r(inside, 2), scan(0, 0, 9), w(X, INITIAL)]),
        ],
    };
    assert!(check(&h).is_serializable(), "{}", check(&h));
    // A read of the key *after* the scan that missed it does not hide the miss: T1 -prw-> T2 -wr->
    // T1, a phantom inside one transaction (G-single).
    let h = History {
        txns: vec![
            txn(2, true, vec![w(inside, INITIAL)]),
            txn(1, true, vec![scan(0, 0, 9), r(inside, 2), w(X, INITIAL)]),
        ],
    };
    assert_eq!(kinds(&check(&h)), vec![AnomalyKind::GSingle]);
    // The scanner inserted the key itself before a later writer replaced it: ww, not prw.
    let h = History {
        txns: vec![
            txn(1, true, vec![scan(0, 0, 9), w(inside, INITIAL)]),
            txn(2, true, vec![w(inside, 1), r(X, INITIAL)]),
        ],
    };
    assert!(
        check(&h)
            .anomalies
            .iter()
            .all(|a| a.edges.iter().all(|e| e.kind != EdgeKind::PRW)),
        "{}",
        check(&h)
    );
}

/// A protocol that buffers writes records them at commit, after a scan that saw them: a key the
/// transaction writes is never "missed" by its own scan, even when its write event comes later.
#[test]
fn a_buffered_own_write_recorded_after_the_scan_adds_no_predicate_edge() {
    let k = ItemKey::new(0, 5);
    let h = History {
        txns: vec![
            txn(1, true, vec![w(k, INITIAL)]),
            // T2 blind-writes k (buffered), scans (seeing its own write: no read), commits.
            txn(2, true, vec![scan(0, 0, 9), w(k, 1)]),
        ],
    };
    assert!(check(&h).is_serializable(), "{}", check(&h));
}

/// A component with both an item-only cycle and predicate edges is reported as G2-item (the
/// item cycle); G2 only when every cycle needs a predicate anti-dependency.
#[test]
fn an_item_cycle_beside_predicate_edges_is_g2_item() {
    let ins = ItemKey::new(0, 5);
    let h = History {
        txns: vec![
            txn(
                1,
                true,
                vec![r(X, INITIAL), r(Y, INITIAL), w(X, INITIAL), scan(0, 3, 7)],
            ),
            txn(
                2,
                true,
                vec![r(X, INITIAL), r(Y, INITIAL), w(Y, INITIAL), w(ins, INITIAL)],
            ),
        ],
    };
    let rep = check(&h);
    assert_eq!(kinds(&rep), vec![AnomalyKind::G2Item], "{rep}");
}
