//! Export to the history format of `dbcop` (Biswas & Enea, "On the complexity of checking
//! transactional consistency", OOPSLA 2019; <https://github.com/rnbguy/dbcop>), so a history can be
//! cross-checked by an independent tool.
//!
//! The format is what `dbcop verify --input-dir DIR --consistency serializable` reads from each
//! `DIR/*.json` in dbcop 0.2.0 (workspace version at commit
//! `063f4b906369c0e1728c9765b559f72874e627c7`: `dbcop_testgen::generator::History` over
//! `dbcop_core::history::raw::types::{Session, Transaction, Event}`):
//!
//! ```text
//! History { params: HistParams, info: String, start: DateTime<Local>, end: DateTime<Local>,
//!           data: Vec<Session> }
//! HistParams  { id, n_node, n_variable, n_transaction, n_event }   // all u64
//! Session     = Vec<Transaction>
//! Transaction { events: Vec<Event>, committed: bool }
//! Event       = {"Read": {"variable": u64, "version": u64 | null}}
//!             | {"Write": {"variable": u64, "version": u64}}
//! ```
//!
//! (The older layout, events `{write, variable, value, success}` and transactions with `success`,
//! is rejected by that dbcop: `unknown variant 'success', expected 'Read' or 'Write'`.) The mapping
//! from Ordo:
//!
//! * **only committed transactions** are listed. dbcop checks the transactions it is given as the
//!   history to explain, so an aborted one listed there (whose writes nobody saw) would add
//!   constraints, e.g. a false cycle; Ordo's own checker ignores aborted transactions too. A read
//!   of an aborted transaction's write (Adya's G1a) then names a version no listed transaction
//!   wrote, which dbcop reports as an inconsistency — as it is.
//! * **sessions**: one dbcop session per distinct `session` id with at least one committed
//!   transaction, in ascending session id order; transactions within a session keep record order.
//! * **variables**: every [`ItemKey`] the listed transactions touch gets a dense index, assigned in
//!   ascending `(table, key)` order. The mapping is also emitted as the extra top-level field
//!   `ordo_variables` (entry `i` is the item of variable `i`); dbcop's `History` does not deny
//!   unknown fields, so serde ignores it.
//! * **versions**: a write's version is its writer's [`TxnId`](super::TxnId) (never 0); a read's
//!   version is the id of the version it saw, and a read of [`INITIAL`] (the loaded row, or a key
//!   not yet inserted) is `null`, dbcop's "initial value". dbcop requires each `(variable,
//!   version)` write to be unique, so only a transaction's *first* write of an item is emitted
//!   (later overwrites of its own version carry the same version and are dropped). Tombstones are
//!   exported as ordinary writes.
//! * **params**: `id` 0, `n_node` = sessions, `n_variable` = variables, `n_transaction` = the
//!   longest session, `n_event` = the longest transaction (as exported); `info` = `"ordo"`;
//!   `start` and `end` are the Unix epoch (Ordo records no wall-clock times).
//! * **scans**: dbcop has no predicate reads, so [`Event::Scan`]s are left out (their item reads
//!   are exported); a phantom (Adya's G2) is visible to Ordo's checker only.
//!
//! As in [`super::check`], records with id [`INITIAL`] and repeated records of an already seen id
//! are skipped.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::history::{Event, History, ItemKey, TxnRecord, INITIAL};

/// Timestamp used for dbcop's `start`/`end` (RFC 3339, as chrono serializes).
const EPOCH: &str = "1970-01-01T00:00:00+00:00";

/// dbcop's `History` (its `testgen` crate), plus Ordo's variable table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbcopHistory {
    pub params: DbcopParams,
    pub info: String,
    pub start: String,
    pub end: String,
    pub data: Vec<Vec<DbcopTransaction>>,
    /// Entry `i`: the item of variable `i` (ignored by dbcop).
    pub ordo_variables: Vec<ItemKey>,
}

/// dbcop's `HistParams`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbcopParams {
    pub id: u64,
    pub n_node: u64,
    pub n_variable: u64,
    pub n_transaction: u64,
    pub n_event: u64,
}

/// dbcop's `Transaction<u64, u64>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbcopTransaction {
    pub events: Vec<DbcopEvent>,
    pub committed: bool,
}

/// dbcop's `Event<u64, u64>` in its default (externally tagged) serde form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DbcopEvent {
    Read {
        variable: u64,
        /// `None`: the initial value.
        version: Option<u64>,
    },
    Write {
        variable: u64,
        version: u64,
    },
}

/// The transactions exported: committed, not the loader's, each id once, in record order.
fn exported(h: &History) -> Vec<&TxnRecord> {
    let mut seen = HashSet::new();
    h.txns
        .iter()
        .filter(|t| t.committed && t.id != INITIAL && seen.insert(t.id))
        .collect()
}

/// The dbcop variable numbering: entry `i` is the item of variable `i` (every item an exported
/// transaction touches, in ascending order).
pub fn dbcop_variables(h: &History) -> Vec<ItemKey> {
    let items: BTreeSet<ItemKey> = exported(h)
        .iter()
        .flat_map(|t| t.events.iter().filter_map(Event::item))
        .collect();
    items.into_iter().collect()
}

/// Exports `h` as a dbcop history (see the module docs for the mapping).
pub fn to_dbcop(h: &History) -> DbcopHistory {
    let variables = dbcop_variables(h);
    let index: BTreeMap<ItemKey, u64> = variables
        .iter()
        .enumerate()
        .map(|(i, &item)| (item, i as u64))
        .collect();
    let var = |item: &ItemKey| index.get(item).copied().unwrap_or(0);

    let mut sessions: BTreeMap<u32, Vec<DbcopTransaction>> = BTreeMap::new();
    let mut n_event = 0;
    for t in exported(h) {
        let mut written = HashSet::new();
        let events: Vec<DbcopEvent> = t
            .events
            .iter()
            .filter_map(|ev| match ev {
                Event::Read { item, version } => Some(DbcopEvent::Read {
                    variable: var(item),
                    version: (*version != INITIAL).then_some(*version),
                }),
                Event::Write { item, .. } => written.insert(*item).then(|| DbcopEvent::Write {
                    variable: var(item),
                    version: t.id,
                }),
                Event::Scan { .. } => None,
            })
            .collect();
        n_event = n_event.max(events.len());
        sessions
            .entry(t.session)
            .or_default()
            .push(DbcopTransaction {
                events,
                committed: true,
            });
    }
    let n_transaction = sessions.values().map(Vec::len).max().unwrap_or(0);
    DbcopHistory {
        params: DbcopParams {
            id: 0,
            n_node: sessions.len() as u64,
            n_variable: variables.len() as u64,
            n_transaction: n_transaction as u64,
            n_event: n_event as u64,
        },
        info: "ordo".into(),
        start: EPOCH.into(),
        end: EPOCH.into(),
        data: sessions.into_values().collect(),
        ordo_variables: variables,
    }
}

/// [`to_dbcop`] as a JSON value.
pub fn to_dbcop_json(h: &History) -> Value {
    serde_json::to_value(to_dbcop(h)).expect("a dbcop history serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::history::{TxnId, TxnRecord};
    use serde_json::json;

    fn rec(id: TxnId, session: u32, committed: bool, events: Vec<Event>) -> TxnRecord {
        TxnRecord {
            id,
            session,
            committed,
            events,
        }
    }

    fn write(item: ItemKey, prev: TxnId) -> Event {
        Event::Write {
            item,
            prev,
            deleted: false,
        }
    }

    /// The exact JSON dbcop 0.2.0 reads: tagged `Read`/`Write` events with `version`, `committed`
    /// transactions, initial reads as `null`; aborted transactions and their items left out.
    #[test]
    fn export_has_the_shape_dbcop_reads_and_lists_committed_transactions_only() {
        let x = ItemKey::new(1, 9);
        let y = ItemKey::new(0, 4);
        let z = ItemKey::new(2, 1);
        let h = History {
            txns: vec![
                rec(
                    1,
                    7,
                    true,
                    vec![
                        Event::Read {
                            item: x,
                            version: INITIAL,
                        },
                        write(x, INITIAL),
                        Event::Write {
                            item: x,
                            prev: 1,
                            deleted: true,
                        },
                        Event::Scan {
                            table: 1,
                            lo: 0,
                            hi: 100,
                        },
                    ],
                ),
                // Aborted: left out, and so is z, which only it touched.
                rec(2, 3, false, vec![write(z, INITIAL), write(y, INITIAL)]),
                rec(4, 5, true, vec![write(y, INITIAL)]),
                rec(
                    3,
                    7,
                    true,
                    vec![Event::Read {
                        item: x,
                        version: 1,
                    }],
                ),
                // A repeated record of an id already seen: skipped.
                rec(3, 7, true, vec![write(y, 4)]),
            ],
        };
        let v = to_dbcop_json(&h);
        assert_eq!(
            dbcop_variables(&h),
            vec![y, x],
            "(table, key) order, z left out"
        );
        assert_eq!(
            v,
            json!({
                "params": {"id": 0, "n_node": 2, "n_variable": 2, "n_transaction": 2, "n_event": 2},
                "info": "ordo",
                "start": EPOCH,
                "end": EPOCH,
                "data": [
                    // Session 5, then session 7 in record order.
                    [{"events": [{"Write": {"variable": 0, "version": 4}}], "committed": true}],
                    [
                        {"events": [
                            {"Read": {"variable": 1, "version": null}},
                            {"Write": {"variable": 1, "version": 1}}
                         ], "committed": true},
                        {"events": [{"Read": {"variable": 1, "version": 1}}], "committed": true}
                    ]
                ],
                "ordo_variables": [{"table": 0, "key": 4}, {"table": 1, "key": 9}]
            })
        );
        let text = serde_json::to_string(&v).unwrap();
        for old in ["\"success\"", "\"write\"", "\"value\""] {
            assert!(!text.contains(old), "old dbcop layout field {old}: {text}");
        }
        let back: DbcopHistory = serde_json::from_str(&text).unwrap();
        assert_eq!(back, to_dbcop(&h));
    }

    #[test]
    fn empty_history_exports() {
        let v = to_dbcop_json(&History::default());
        assert_eq!(v["data"], json!([]));
        assert_eq!(v["params"]["n_node"], 0);
        let only_aborted = History {
            txns: vec![rec(1, 0, false, vec![write(ItemKey::new(0, 1), INITIAL)])],
        };
        assert_eq!(to_dbcop_json(&only_aborted), v);
    }
}
