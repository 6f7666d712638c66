//! Ordered locking's lock set: what a planned transaction locks, and the one global order in which
//! every transaction takes its locks (which is what rules deadlock out).
//!
//! [`LockSet::build`] turns a program's planned accesses ([`crate::protocols::kit::plan`]) into
//! locks of two kinds:
//!
//! * **units** — a key of a table the program groups into conflict units
//!   ([`crate::txn::Program::conflict_units`], at the protocol's grain) is locked through its unit,
//!   whose lock is a stripe ([`super::stripes`]); a key range with both ends in one unit is that
//!   unit alone (units are contiguous ranges of keys);
//! * **records** — any other key is locked beside its record, present or not: a missing key's slot
//!   is created (absent), so a lock on it also blocks an insert of it. A key range is locked key by
//!   key (up to [`MAX_RANGE_KEYS`] keys), which makes a scan phantom-safe with no next-key locks:
//!   every key it could ever see is locked.
//!
//! A range too wide for either is not locked at all: [`LockSet::build`] says so, and the protocol
//! runs that transaction alone under its barrier instead ([`super::ordered`]).
//!
//! **The order.** Stripes first, by index; then records, by (table, key) — lexicographic, as the
//! PWV paper's baseline orders its locks. Each kind is deduplicated with its strongest mode (a key
//! read and written is locked once, exclusive; two units that share a stripe take it once), so a
//! transaction never waits for itself and never upgrades. A transaction that waits for a lock holds
//! only locks before it in the order, and its holder only waits for locks after it: no cycle of
//! waits can close.

use super::stripes::Stripes;
use crate::protocols::kit::exec::UnitLock;
use crate::protocols::kit::plan::{normalize, LockRequest, Mode, MAX_RANGE_KEYS};
use crate::protocols::kit::ticket::TicketLock;
use crate::storage::{Database, TableId};
use crate::txn::{Access, ConflictUnits, Target, TxResult};
use std::cmp::Reverse;

/// A transaction's locks, in the global order (see the module docs). Buffers are reused.
#[derive(Debug, Default)]
pub struct LockSet {
    /// Stripes to take: index and mode, by index, each once.
    pub stripes: Vec<(u32, Mode)>,
    /// The units they stand for (what the execution's cover checks), each once.
    pub units: Vec<UnitLock>,
    /// Record locks, by (table, key), each once.
    pub records: Vec<LockRequest>,
}

impl LockSet {
    /// Fills the set with the locks that cover `accesses`, keys grouped by `units` (at grain
    /// `coarse`); returns `true` if some range was too wide to lock (the set is then incomplete and
    /// the transaction must hold the whole database instead). Fails, before locking anything, on a
    /// declared write to a read-only table; reads of one take no lock.
    pub fn build<M: Default + Send + Sync>(
        &mut self,
        db: &Database<M>,
        accesses: &[Access],
        units: Option<ConflictUnits>,
        coarse: bool,
        stripes: &Stripes,
    ) -> TxResult<bool> {
        self.stripes.clear();
        self.units.clear();
        self.records.clear();
        let mut wide = false;
        for a in accesses {
            if a.unlocked_in(db)? || wide {
                continue;
            }
            let mode = if a.is_write() {
                Mode::Exclusive
            } else {
                Mode::Shared
            };
            let unit = |key| units.and_then(|f| f(a.table, key, coarse));
            match a.target {
                Target::Key(key) => self.add(db, a.table, key, unit(key), mode),
                Target::Range { lo, hi } if lo <= hi => match (unit(lo), unit(hi)) {
                    (Some(u), Some(v)) if u == v => self.add_unit(a.table, u, mode),
                    _ if hi - lo >= MAX_RANGE_KEYS => wide = true,
                    _ => {
                        for key in lo..=hi {
                            self.add(db, a.table, key, unit(key), mode);
                        }
                    }
                },
                Target::Range { .. } => {}
            }
        }
        if wide {
            return Ok(true);
        }
        normalize(&mut self.records);
        self.records.sort_unstable_by_key(|l| (l.table, l.key));
        self.units
            .sort_unstable_by_key(|u| (u.table, u.unit, Reverse(u.mode)));
        self.units.dedup_by_key(|u| (u.table, u.unit));
        self.stripes.extend(
            self.units
                .iter()
                .map(|u| (stripes.index(u.table, u.unit), u.mode)),
        );
        self.stripes
            .sort_unstable_by_key(|&(i, mode)| (i, Reverse(mode)));
        self.stripes.dedup_by_key(|s| s.0);
        Ok(false)
    }

    /// Adds a lock on `key` of `table`: its unit's if it has one, its record's otherwise.
    fn add<M: Default + Send + Sync>(
        &mut self,
        db: &Database<M>,
        table: TableId,
        key: u64,
        unit: Option<u64>,
        mode: Mode,
    ) {
        match unit {
            Some(u) => self.add_unit(table, u, mode),
            None => {
                let t = db.table(table);
                let rid = t.lookup(key).unwrap_or_else(|| t.get_or_create(key).0);
                self.records.push(LockRequest::new(table, key, rid, mode));
            }
        }
    }

    fn add_unit(&mut self, table: TableId, unit: u64, mode: Mode) {
        // A range walks the keys of one unit in a row: keep one entry for them.
        match self.units.last_mut() {
            Some(l) if l.table == table && l.unit == unit => l.mode = l.mode.max(mode),
            _ => self.units.push(UnitLock { table, unit, mode }),
        }
    }

    /// Takes every lock, in the order, waiting for each; the returned guard releases them all.
    pub fn acquire<'a>(&'a self, db: &'a Database<TicketLock>, stripes: &'a Stripes) -> Held<'a> {
        let mut held = self.hold(db, stripes);
        held.upto(self.records.len());
        held
    }

    /// Takes the stripes (first in the order), waiting for each; the record locks are taken as
    /// the pieces need them, by [`Held::upto`].
    pub fn hold<'a>(&'a self, db: &'a Database<TicketLock>, stripes: &'a Stripes) -> Held<'a> {
        for &(i, mode) in &self.stripes {
            stripes.get(i).acquire(mode);
        }
        Held {
            set: self,
            db,
            stripes,
            taken: 0,
        }
    }

    /// How many record locks, from the start of the order, a piece that declared `piece` needs
    /// held before it runs: every record lock up to its last one. Taking a prefix of the order
    /// piece by piece keeps the one global order (so no deadlock), and when a program's pieces go
    /// up the key order, as the PWV paper's Fig. 1 transactions do, each lock is taken just before
    /// the piece that needs it — the paper's "acquires an exclusive lock on a record prior to
    /// updating the record". A piece out of key order takes the locks before its own early.
    pub fn prefix_for(&self, piece: &[Access]) -> usize {
        piece
            .iter()
            .map(|a| {
                let last = match a.target {
                    Target::Key(k) => k,
                    Target::Range { lo, hi } if lo <= hi => hi,
                    Target::Range { .. } => return 0,
                };
                self.records
                    .partition_point(|l| (l.table, l.key) <= (a.table, last))
            })
            .max()
            .unwrap_or(0)
    }
}

/// The locks of a [`LockSet`] taken so far — its stripes and a prefix of its record locks;
/// dropping it releases them (after the transaction has committed or rolled back: it is declared
/// before the transaction, so it drops after it, also when a program's panic unwinds through both).
#[must_use = "the locks are held only while the guard lives"]
pub struct Held<'a> {
    set: &'a LockSet,
    db: &'a Database<TicketLock>,
    stripes: &'a Stripes,
    /// Record locks taken: `set.records[..taken]`.
    taken: usize,
}

impl Held<'_> {
    /// Takes the record locks up to `n` in the order (those not yet taken), waiting for each.
    pub fn upto(&mut self, n: usize) {
        let n = n.min(self.set.records.len());
        for r in self.set.records.get(self.taken..n).unwrap_or_default() {
            self.db.table(r.table).meta(r.rid).acquire(r.mode);
        }
        self.taken = self.taken.max(n);
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        for r in &self.set.records[..self.taken] {
            self.db.table(r.table).meta(r.rid).release(r.mode);
        }
        for &(i, mode) in &self.set.stripes {
            self.stripes.get(i).release(mode);
        }
    }
}
