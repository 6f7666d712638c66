//! Recorded attempts ([`crate::driver::record`]) as a history for Ordo's serializability checker
//! (Adya's direct serialization graph, `ordo::check`): each attempt a transaction record, each
//! item a (table, row × fields + field) key, each version named by the attempt that wrote it.

use crate::driver::Attempt;
use crate::session::Seen;
use ordo::check::{Event, History, ItemKey, TxnRecord};

/// The history of `attempts`.
pub fn history(attempts: &[Attempt]) -> History {
    History {
        txns: attempts
            .iter()
            .map(|a| TxnRecord {
                id: a.id,
                session: a.session,
                committed: a.committed,
                events: a.events.iter().map(event).collect(),
            })
            .collect(),
    }
}

fn event(e: &Seen) -> Event {
    match *e {
        Seen::Read { item, version } => Event::Read {
            item: ItemKey::new(item.0, item.1),
            version,
        },
        Seen::Write { item, prev } => Event::Write {
            item: ItemKey::new(item.0, item.1),
            prev,
            deleted: false,
        },
    }
}
