//! Placeholder until the checker branch lands.
use serde::{Deserialize, Serialize};
pub type TxnId = u64;
pub const INITIAL: TxnId = 0;
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ItemKey { pub table: u32, pub key: u64 }
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    Read { item: ItemKey, version: TxnId },
    Write { item: ItemKey, prev: TxnId, deleted: bool },
}
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TxnRecord { pub id: TxnId, pub session: u32, pub committed: bool, pub events: Vec<Event> }
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct History { pub txns: Vec<TxnRecord> }
