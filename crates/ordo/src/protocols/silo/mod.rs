//! `silo` — optimistic concurrency control as in Silo (Tu, Zheng, Kohler, Liskov, Madden, "Speedy
//! Transactions in Multicore In-Memory Databases", SOSP 2013).
//!
//! ## The idea
//!
//! Transactions run without taking any lock and without writing anything shared: every read copies the
//! record together with its **TID word** (the id of the transaction that wrote that version), every write
//! is buffered. At commit the transaction locks only what it writes, checks that everything it read is
//! still the version it read, and installs its writes under a new TID. There is no global counter on the
//! commit path: TIDs are chosen per worker from the TIDs the transaction saw, and a global **epoch**,
//! advanced every 40 ms by a background thread, fills their high bits. Readers never write shared
//! memory, so read-mostly workloads scale with the cores.
//!
//! ## The TID word (per record, the protocol's `Meta`; see [`tid`])
//!
//! ```text
//!   63   62 ............ 32 31 ............. 0
//!  ┌────┬──────────────────┬──────────────────┐
//!  │lock│   epoch (31 b)   │  sequence (32 b) │
//!  └────┴──────────────────┴──────────────────┘
//! ```
//!
//! Existence lives in the storage version word (its `ABSENT` bit), which Silo only changes while holding
//! the TID lock, so one stable snapshot of the TID covers data, version word and existence.
//!
//! ## Commit (the paper's Figure 2), and where each line lives
//!
//! ```text
//!  Data: read set R, write set W, node set N, global epoch number E
//!  // Phase 1
//!  for record, new-value in sorted(W) do            commit::commit   sets.sort_writes()
//!      lock(record);                                 tid::lock        (spin; the order rules out deadlock)
//!  compiler-fence();                                 fence(SeqCst)
//!  e ← E;  // serialization point                    epoch::EpochClock::current
//!  compiler-fence();
//!  // Phase 2
//!  for record, read-tid in R do                      commit::validate
//!      if record.tid ≠ read-tid
//!         or (record.locked and record ∉ W)
//!      then abort();                                 commit::unlock_all, Abort(Validation)
//!  for node, version in N do                         commit::validate (structure stripes)
//!      if node.version ≠ version then abort();
//!  commit-tid ← generate-tid(R, W, e);              tid::next_after
//!  // Phase 3
//!  for record, new-value in W do                     commit::install
//!      write(record, new-value, commit-tid);         data words, version word, then the TID…
//!      unlock(record);                               …whose Release store also unlocks
//! ```
//!
//! `generate-tid` picks the smallest TID in epoch `e` larger than every TID read or written and than the
//! worker's previous commit TID. Inserts add one check to Phase 2: the slot must still be absent
//! (`commit::inserts_still_absent`), else another transaction inserted the key first.
//!
//! ## Execution (`txn`)
//!
//! * **Reads** take a stable snapshot ([`tid::stable`]): load the TID (spinning while locked), copy the
//!   requested columns and the version word, re-load the TID, retry until both agree. The record and the
//!   TID go to the read set. A loom model (`tid_loom.rs`, `--cfg ordo_loom`) checks that such a copy is
//!   always one whole version against a committer.
//! * **Writes** (update, insert, delete) go to the write set with a row image in a per-worker buffer; later
//!   reads of the same key see them. An update is a read-modify-write, so its read joins the read set.
//! * **Phantoms.** Ordo's structure stripes stand in for Silo's B-tree leaf versions (the node set): a scan
//!   records the stripes of its range before walking the index and reads every entry it meets, tombstones
//!   included; a `get` of a key that is not indexed records that key's stripe. Creating a key bumps its
//!   stripe, so validation catches any key that appeared. Slots this transaction created itself bump
//!   stripes too; those bumps are added to the expected values (`sets::Sets::own_bump`).
//! * **Read-only tables** ([`crate::storage::TableSpec::read_only`]): reads and scans of them join neither
//!   the read set nor the node set (no writer exists, so nothing to validate); writes to them are refused.

//! ## Read committed on the same machinery ([`rc`], `rc-occ`)
//!
//! [`Occ`] is generic over the [`Level`] it runs: [`Serializable`] is Silo as above; [`rc::ReadCommitted`]
//! is the PWV paper's read-committed baseline, Silo with the read and node sets taken out — reads see
//! only committed versions (the same stable snapshot), writes are buffered, commit locks the write set
//! in order and installs, and nothing is validated. The level is a constant, so each protocol compiles
//! to its own code with the other's branches gone.

pub mod epoch;
pub mod rc;
pub mod tid;

mod commit;
mod sets;
mod txn;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_concurrent;
#[cfg(test)]
mod tests_rc;

pub use rc::ReadCommitted;
pub use txn::{SiloTx, SiloWorker};

use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{IdLedger, Recorder};
use epoch::{EpochClock, EPOCH_PERIOD};
use std::marker::PhantomData;
use std::sync::Arc;
use tid::TidWord;

/// What a [`Occ`] promises, and so whether its reads are tracked and validated.
pub trait Level: Send + Sync + 'static {
    const INFO: ProtocolInfo;
    /// Reads join the read set, absent keys and scanned ranges the node set, and commit validates
    /// both (Silo, serializable). Without it reads only see committed versions and commit validates
    /// nothing (read committed).
    const VALIDATES: bool;
}

/// Silo proper: every read validated at commit.
pub struct Serializable;

impl Level for Serializable {
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "silo",
        summary:
            "optimistic: lock-free reads with TID validation, write-set locking at commit, epochs",
        paper: "Tu et al., SOSP 2013 (Silo)",
        isolation: Isolation::Serializable,
        interactive: Interactive::Concurrent,
        knobs: &[],
    };
    const VALIDATES: bool = true;
}

/// Silo's optimistic concurrency control (`silo`).
pub type Silo = Occ<Serializable>;
/// Read committed on Silo's TID words and write sets (`rc-occ`, see [`rc`]).
pub type SiloRc = Occ<ReadCommitted>;

/// The Silo engine at level `L`. Dropping it stops the epoch thread.
pub struct Occ<L: Level> {
    db: Database<TidWord>,
    epoch: EpochClock,
    ids: Arc<IdLedger>,
    _level: PhantomData<L>,
}

impl<L: Level> Occ<L> {
    /// The current global epoch `E`.
    pub fn epoch(&self) -> u64 {
        self.epoch.current()
    }
}

impl<L: Level> Protocol for Occ<L> {
    type Meta = TidWord;
    type Worker = SiloWorker;
    type Tx<'w> = SiloTx<'w, L>;

    const INFO: ProtocolInfo = L::INFO;

    fn open(db: Database<TidWord>, _config: &ProtocolConfig) -> Self {
        Occ {
            db,
            epoch: EpochClock::start(EPOCH_PERIOD),
            ids: IdLedger::new(),
            _level: PhantomData,
        }
    }
    fn db(&self) -> &Database<TidWord> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> SiloWorker {
        SiloWorker::new(self.ids.lease(id), recording)
    }
    fn recorder(w: &mut SiloWorker) -> &mut Recorder {
        &mut w.rec
    }
    fn begin<'w>(&'w self, w: &'w mut SiloWorker) -> SiloTx<'w, L> {
        SiloTx::new(self, w)
    }
}
