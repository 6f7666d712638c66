//! Transaction ids and the per-worker history recorder the serializability checker reads.
//!
//! Protocols call [`Recorder::read`] with the version word they actually read (consistently with the
//! data: under a lock, or validated) and [`Recorder::write`] with the version word their install
//! swapped out. With recording off each call is one predictable branch.

use crate::check::{Event, ItemKey, TxnId, TxnRecord};
use crate::storage::{TableId, ABSENT};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// Hands out one worker's transaction ids: `(worker + 1) << 40 | sequence`, unique across the workers
/// of a protocol. Leased from the protocol's [`IdLedger`] ([`IdLedger::lease`]) and handed back to it
/// when the worker ends (dropped), so that a later worker with the same id goes on after the ended
/// one's last sequence number instead of handing its ids out again.
#[derive(Debug)]
pub struct TxnIds {
    base: u64,
    seq: u64,
    ledger: Arc<IdLedger>,
}

impl TxnIds {
    /// The worker these ids are for.
    pub fn worker(&self) -> u32 {
        ((self.base >> 40) - 1) as u32
    }
    #[inline]
    pub fn next_id(&mut self) -> TxnId {
        self.seq += 1;
        self.base | self.seq
    }
}

impl Drop for TxnIds {
    fn drop(&mut self) {
        self.ledger.last.lock().insert(self.worker(), self.seq);
    }
}

/// Where each ended worker's transaction ids stopped, per worker id: one per protocol instance.
///
/// The protocol contract lets an embedder reuse a worker id once the worker that had it ended
/// (sessions that come and go). Without the ledger the new worker would restart at sequence 1 and hand
/// out ids the ended one already used, and a recorded history (or anything else that tells
/// transactions apart by id, such as SSI's retained transactions) would take two transactions for one.
#[derive(Debug, Default)]
pub struct IdLedger {
    last: Mutex<HashMap<u32, u64>>,
}

impl IdLedger {
    /// A new, shared ledger.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }
    /// The ids of a new worker `worker`: they go on after those an ended worker with the same id
    /// handed out (ids are distinct among live workers by the protocol contract).
    pub fn lease(self: &Arc<Self>, worker: u32) -> TxnIds {
        assert!(worker < (1 << 22), "too many workers");
        TxnIds {
            base: (worker as u64 + 1) << 40,
            seq: self.last.lock().get(&worker).copied().unwrap_or(0),
            ledger: Arc::clone(self),
        }
    }
}

/// Records what each transaction of one worker (a session) read and wrote.
#[derive(Debug, Default)]
pub struct Recorder {
    enabled: bool,
    session: u32,
    events: Vec<Event>,
    txns: Vec<TxnRecord>,
}

impl Recorder {
    pub fn new(session: u32, enabled: bool) -> Self {
        Recorder {
            enabled,
            session,
            events: Vec::new(),
            txns: Vec::new(),
        }
    }
    pub fn enabled(&self) -> bool {
        self.enabled
    }
    /// A read that saw the version named by `version_word`.
    #[inline]
    pub fn read(&mut self, table: TableId, key: u64, version_word: u64) {
        if self.enabled {
            self.events.push(Event::Read {
                item: ItemKey { table, key },
                version: version_word & !ABSENT,
            });
        }
    }
    /// An install that replaced the version named by `prev_word`; `deleted` for a tombstone.
    #[inline]
    pub fn write(&mut self, table: TableId, key: u64, prev_word: u64, deleted: bool) {
        if self.enabled {
            self.events.push(Event::Write {
                item: ItemKey { table, key },
                prev: prev_word & !ABSENT,
                deleted,
            });
        }
    }
    /// A scan of `table` that walked `lo..=hi` (see [`Event::Scan`]: every slot it passed in that
    /// range, present or absent, must also be recorded as a read).
    #[inline]
    pub fn scan(&mut self, table: TableId, lo: u64, hi: u64) {
        if self.enabled && lo <= hi {
            self.events.push(Event::Scan { table, lo, hi });
        }
    }
    /// Ends transaction `id`.
    #[inline]
    pub fn finish(&mut self, id: TxnId, committed: bool) {
        if self.enabled {
            let events = std::mem::take(&mut self.events);
            self.txns.push(TxnRecord {
                id,
                session: self.session,
                committed,
                events,
            });
        }
    }
    /// Moves the transactions `other` recorded into this recorder (a protocol that runs a
    /// transaction's pieces on several threads records each transaction apart, then hands it to the
    /// worker that owns it).
    pub fn append(&mut self, other: &mut Recorder) {
        if self.enabled {
            self.txns.append(&mut other.txns);
        } else {
            other.txns.clear();
        }
    }
    /// Takes the transactions recorded so far.
    pub fn take(&mut self) -> Vec<TxnRecord> {
        std::mem::take(&mut self.txns)
    }
}
