//! Transaction ids and the per-worker history recorder the serializability checker reads.
//!
//! Protocols call [`Recorder::read`] with the version word they actually read (consistently with the
//! data: under a lock, or validated) and [`Recorder::write`] with the version word their install
//! swapped out. With recording off each call is one predictable branch.

use crate::check::{Event, ItemKey, TxnId, TxnRecord};
use crate::storage::{TableId, ABSENT};

/// Hands out transaction ids unique across workers: `(worker + 1) << 40 | sequence`.
#[derive(Debug)]
pub struct TxnIds {
    base: u64,
    seq: u64,
}

impl TxnIds {
    pub fn new(worker: u32) -> Self {
        assert!(worker < (1 << 22), "too many workers");
        TxnIds {
            base: (worker as u64 + 1) << 40,
            seq: 0,
        }
    }
    /// Ids for a new worker `worker` that go on after `last`, the last sequence number an ended
    /// worker with the same id handed out (see [`Self::last`]): ids stay unique when an embedder
    /// reuses worker ids for sessions that come and go.
    pub fn resume(worker: u32, last: u64) -> Self {
        TxnIds {
            seq: last,
            ..Self::new(worker)
        }
    }
    /// The last sequence number handed out.
    pub fn last(&self) -> u64 {
        self.seq
    }
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
    /// Takes the transactions recorded so far.
    pub fn take(&mut self) -> Vec<TxnRecord> {
        std::mem::take(&mut self.txns)
    }
}
