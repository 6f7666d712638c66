//! Export to the history format of `dbcop` (Biswas & Enea, "On the
//! complexity of checking transactional consistency", OOPSLA 2019), so a
//! history can be cross-checked by an independent tool.
//!
//! dbcop's history is the serde shape
//!
//! ```text
//! History { params: HistParams, info: String, start: DateTime<Local>, end: DateTime<Local>,
//!           data: Vec<Session> }
//! HistParams { id, n_node, n_variable, n_transaction, n_event }   // all usize
//! Session = Vec<Transaction>
//! Transaction { events: Vec<Event>, success: bool }
//! Event { write: bool, variable: usize, value: usize, success: bool }
//! ```
//!
//! (dbcop itself stores it with bincode; the JSON produced here is the same
//! serde shape and converts losslessly.) The mapping from Ordo:
//!
//! * **sessions**: one dbcop session per distinct `session` id, in ascending
//!   session id order (so dbcop session `i` is the `i`-th smallest Ordo
//!   session id); transactions within a session keep record order.
//! * **variables**: every [`ItemKey`] touched gets a dense index, assigned in
//!   ascending `(table, key)` order. The mapping is deterministic and is also
//!   emitted as the extra top-level field `ordo_variables` (entry `i` is the
//!   item of variable `i`); dbcop's structs do not deny unknown fields, so
//!   serde ignores it.
//! * **values**: a write's value is its writer's [`TxnId`](super::TxnId); a read's value is
//!   the id of the version it saw, so [`INITIAL`] maps to dbcop's initial
//!   value 0. dbcop requires each `(variable, value)` write to be unique, so
//!   only a transaction's *first* write of an item is emitted (later
//!   overwrites of its own version carry the same value and are dropped).
//!   Tombstones are exported as ordinary writes.
//! * **success**: a transaction's `success` is `committed`; every recorded
//!   event happened, so each event's `success` is `true`.
//! * **params**: `id` 0, `n_node` = sessions, `n_variable` = variables,
//!   `n_transaction` = the longest session, `n_event` = the longest
//!   transaction (as exported); `info` = `"ordo"`; `start` and `end` are the
//!   Unix epoch (Ordo records no wall-clock times).
//! * **scans**: dbcop has no predicate reads, so [`Event::Scan`]s are left out (their item reads
//!   are exported); a phantom (Adya's G2) is visible to Ordo's checker only.
//!
//! As in [`super::check`], records with id [`INITIAL`] and repeated records
//! of an already seen id are skipped.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::{json, Value};

use super::history::{Event, History, ItemKey, INITIAL};

/// Timestamp used for dbcop's `start`/`end` (RFC 3339, as chrono serializes).
const EPOCH: &str = "1970-01-01T00:00:00+00:00";

/// The dbcop variable numbering: entry `i` is the item of variable `i`
/// (every item touched, in ascending order).
pub fn dbcop_variables(h: &History) -> Vec<ItemKey> {
    let items: BTreeSet<ItemKey> = h
        .txns
        .iter()
        .flat_map(|t| t.events.iter().filter_map(Event::item))
        .collect();
    items.into_iter().collect()
}

/// Exports `h` as a dbcop history (see the module docs for the mapping).
pub fn to_dbcop_json(h: &History) -> Value {
    let variables = dbcop_variables(h);
    let index: BTreeMap<ItemKey, usize> = variables
        .iter()
        .enumerate()
        .map(|(i, &item)| (item, i))
        .collect();
    let var = |item: &ItemKey| index.get(item).copied().unwrap_or(0);

    let mut sessions: BTreeMap<u32, Vec<Value>> = BTreeMap::new();
    let mut seen_ids = HashSet::new();
    let mut n_event = 0;
    for t in &h.txns {
        if t.id == INITIAL || !seen_ids.insert(t.id) {
            continue;
        }
        let mut written = HashSet::new();
        let events: Vec<Value> = t
            .events
            .iter()
            .filter_map(|ev| {
                match ev {
                Event::Read { item, version } => Some(json!({
                    "write": false, "variable": var(item), "value": version, "success": true
                })),
                Event::Write { item, .. } => written.insert(*item).then(|| {
                    json!({ "write": true, "variable": var(item), "value": t.id, "success": true })
                }),
                Event::Scan { .. } => None,
            }
            })
            .collect();
        n_event = n_event.max(events.len());
        sessions
            .entry(t.session)
            .or_default()
            .push(json!({ "events": events, "success": t.committed }));
    }

    let n_transaction = sessions.values().map(Vec::len).max().unwrap_or(0);
    let ordo_variables: Vec<Value> = variables
        .iter()
        .map(|v| json!({ "table": v.table, "key": v.key }))
        .collect();
    json!({
        "params": {
            "id": 0,
            "n_node": sessions.len(),
            "n_variable": variables.len(),
            "n_transaction": n_transaction,
            "n_event": n_event,
        },
        "info": "ordo",
        "start": EPOCH,
        "end": EPOCH,
        "data": sessions.into_values().collect::<Vec<_>>(),
        "ordo_variables": ordo_variables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::history::{TxnId, TxnRecord};

    fn rec(id: TxnId, session: u32, committed: bool, events: Vec<Event>) -> TxnRecord {
        TxnRecord {
            id,
            session,
            committed,
            events,
        }
    }

    #[test]
    fn export_shape() {
        let x = ItemKey::new(1, 9);
        let y = ItemKey::new(0, 4);
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
                        Event::Write {
                            item: x,
                            prev: INITIAL,
                            deleted: false,
                        },
                        Event::Write {
                            item: x,
                            prev: 1,
                            deleted: true,
                        },
                    ],
                ),
                rec(
                    2,
                    3,
                    false,
                    vec![Event::Write {
                        item: y,
                        prev: INITIAL,
                        deleted: false,
                    }],
                ),
                rec(
                    3,
                    7,
                    true,
                    vec![Event::Read {
                        item: x,
                        version: 1,
                    }],
                ),
            ],
        };
        let v = to_dbcop_json(&h);

        // Variables in (table, key) order: y = 0, x = 1.
        assert_eq!(dbcop_variables(&h), vec![y, x]);
        assert_eq!(
            v["ordo_variables"],
            json!([{"table": 0, "key": 4}, {"table": 1, "key": 9}])
        );
        assert_eq!(
            v["params"],
            json!({"id": 0, "n_node": 2, "n_variable": 2, "n_transaction": 2, "n_event": 2})
        );
        assert_eq!(v["info"], "ordo");
        assert_eq!(v["start"], EPOCH);

        // Session 3 first, then session 7 in record order.
        let data = v["data"].as_array().expect("data");
        assert_eq!(data.len(), 2);
        assert_eq!(
            data[0],
            json!([{"events": [{"write": true, "variable": 0, "value": 2, "success": true}],
                    "success": false}])
        );
        assert_eq!(
            data[1],
            json!([
                {"events": [
                    {"write": false, "variable": 1, "value": 0, "success": true},
                    {"write": true, "variable": 1, "value": 1, "success": true}
                 ], "success": true},
                {"events": [{"write": false, "variable": 1, "value": 1, "success": true}],
                 "success": true}
            ])
        );
    }

    #[test]
    fn empty_history_exports() {
        let v = to_dbcop_json(&History::default());
        assert_eq!(v["data"], json!([]));
        assert_eq!(v["params"]["n_node"], 0);
    }
}
