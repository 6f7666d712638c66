//! The history format the engine records and the checker consumes.
//!
//! A [`History`] is a flat list of [`TxnRecord`]s. Each record carries the
//! transaction's unique id, the session (worker thread) that ran it, whether
//! it committed, and the ordered list of its read and write [`Event`]s.
//!
//! Versions are named by the id of the transaction that wrote them:
//! [`INITIAL`] (0) names the loader's initial version of every key, and also
//! the "never existed" state of a key that has not been inserted yet.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Unique, nonzero transaction id. Also names the versions a transaction writes.
pub type TxnId = u64;

/// The version id of the loader's initial version (or of "absent").
pub const INITIAL: TxnId = 0;

/// A record key: `(table, key)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ItemKey {
    /// Table number.
    pub table: u32,
    /// Primary key within the table.
    pub key: u64,
}

impl ItemKey {
    /// Convenience constructor.
    pub const fn new(table: u32, key: u64) -> Self {
        Self { table, key }
    }
}

impl fmt::Display for ItemKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}:k{}", self.table, self.key)
    }
}

/// One recorded operation of a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// The transaction read `item` and saw the version written by `version` (INITIAL = loader's/absent).
    /// If version == the reading txn itself, it read its own write (no dependency).
    Read {
        /// The item read.
        item: ItemKey,
        /// The writer of the version observed.
        version: TxnId,
    },
    /// The transaction installed a new version of `item`, replacing version `prev` (the engine knows this
    /// exactly: the install swaps the record's version word atomically). `deleted` marks a tombstone version.
    /// If prev == the writing txn itself, it is an overwrite of its own earlier write: ignore for ordering.
    Write {
        /// The item written.
        item: ItemKey,
        /// The writer of the version replaced.
        prev: TxnId,
        /// Whether the new version is a tombstone.
        deleted: bool,
    },
    /// A predicate read: the transaction observed which keys of `table` in `lo..=hi` exist. Every key
    /// of the range that had a record slot when the scan passed it comes with its own `Read` (present
    /// or absent, the version seen), recorded before this event; a key with neither such a `Read` nor
    /// any `Write` of this transaction had no slot then, so the transaction saw its [`INITIAL`]
    /// ("never existed") state, and whoever inserts it follows the scan (a predicate
    /// anti-dependency, Adya's G2). A scan that stopped early records only the range it walked.
    Scan { table: u32, lo: u64, hi: u64 },
}

impl Event {
    /// The item this event touches (`None` for a scan, which covers a range).
    pub fn item(&self) -> Option<ItemKey> {
        match *self {
            Event::Read { item, .. } | Event::Write { item, .. } => Some(item),
            Event::Scan { .. } => None,
        }
    }
}

/// Everything recorded about one transaction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TxnRecord {
    /// Unique nonzero id.
    pub id: TxnId,
    /// The session (worker thread) that ran it.
    pub session: u32,
    /// Whether it committed (false: aborted).
    pub committed: bool,
    /// Reads and writes, in program order.
    pub events: Vec<Event>,
}

/// A whole recorded execution. Within a session, records appear in the order
/// that session ran them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct History {
    /// All transaction records.
    pub txns: Vec<TxnRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_key_display_and_order() {
        let a = ItemKey::new(0, 5);
        let b = ItemKey::new(1, 0);
        assert_eq!(a.to_string(), "t0:k5");
        assert!(a < b);
    }

    #[test]
    fn history_round_trips_through_json() {
        let h = History {
            txns: vec![TxnRecord {
                id: 7,
                session: 1,
                committed: true,
                events: vec![
                    Event::Read {
                        item: ItemKey::new(0, 1),
                        version: INITIAL,
                    },
                    Event::Write {
                        item: ItemKey::new(0, 1),
                        prev: INITIAL,
                        deleted: false,
                    },
                ],
            }],
        };
        let text = serde_json::to_string(&h).expect("serialize");
        let back: History = serde_json::from_str(&text).expect("deserialize");
        assert_eq!(back.txns.len(), 1);
        assert_eq!(back.txns[0].events, h.txns[0].events);
        assert_eq!(back.txns[0].events[1].item(), Some(ItemKey::new(0, 1)));
    }
}
