//! IC3's static analysis, from declarations: which pieces **may conflict** (a C-edge of its
//! SC-graph).
//!
//! IC3 analyses the transaction types before the system runs: two pieces conflict when they touch
//! a common table and at least one of them writes it. Ordo's programs say what a piece touches only
//! when it is about to run ([`crate::txn::Program::declare`], whose keys may come from earlier
//! pieces), so the analysis is made per transaction, from the same declarations, at the same grain:
//!
//! * a piece's **footprint** ([`Fp`]) is the set of tables it reads and the set it writes (each a
//!   64-bit mask of table ids, taken modulo 64: two tables sharing a bit only add conflicts).
//!   Reads of tables that are read-only once loaded are left out: nothing conflicts with them;
//! * with `ic3-comm`, the writes of a piece that commutes ([`crate::txn::Program::commutes`]) go in
//!   a third set, and two such writes do not conflict (IC3's commutativity: the C-edge between two
//!   commuting pieces is dropped);
//! * when a transaction begins it publishes the footprint of every piece ([`super::board`]): the
//!   exact one for a piece whose declaration needs no earlier piece, and for the others the union
//!   of what that piece of that transaction type declared before on this worker ([`Learned`]), or,
//!   the first time, every table. A piece that then declares more widens its published footprint
//!   ([`Published`], beside the kit's board of live transactions).
//!
//! A footprint only steers IC3's piece waits (who waits for whom before a piece runs). Serializability
//! does not rest on it (see the module docs of [`super`]): a footprint that is too small can only
//! let a cycle of dependencies form, which the commit waits then find and break.

use crate::check::TxnId;
use crate::protocols::kit::pipeline::access_list::Kind;
use crate::protocols::kit::pipeline::board::{worker_of, Board, State};
use crate::storage::{Database, TableId};
use crate::txn::{Access, Target};
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::collections::HashMap;

/// What one piece may touch, by table (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fp {
    read: u64,
    write: u64,
    comm: u64,
}

impl Fp {
    /// Every table, read and written: a piece not declared yet.
    pub const ALL: Fp = Fp {
        read: !0,
        write: !0,
        comm: 0,
    };

    #[inline]
    fn bit(table: TableId) -> u64 {
        1 << (table as u64 % 64)
    }

    /// Adds an access of `kind` to `table`.
    pub fn add(&mut self, table: TableId, kind: Kind) {
        let b = Self::bit(table);
        match kind {
            Kind::Read => self.read |= b,
            Kind::Write => self.write |= b,
            Kind::Comm => self.comm |= b,
        }
    }

    /// The footprint of a piece that declared `accesses`; `comm`: its writes commute.
    pub fn of<M: Default + Send + Sync>(db: &Database<M>, accesses: &[Access], comm: bool) -> Fp {
        let mut fp = Fp::default();
        for a in accesses {
            if a.unlocked_in(db).unwrap_or(false) {
                continue; // a read of a read-only table (a write to one is refused when it locks)
            }
            fp.add(a.table, Kind::of(a.is_write(), comm));
        }
        fp
    }

    /// Whether some access declared is a key range too wide to lock key by key.
    pub fn wide<M: Default + Send + Sync>(db: &Database<M>, accesses: &[Access]) -> bool {
        accesses.iter().any(|a| {
            matches!(a.target, Target::Range { lo, hi }
                if lo <= hi && hi - lo >= crate::protocols::kit::plan::MAX_RANGE_KEYS)
                && !a.unlocked_in(db).unwrap_or(false)
        })
    }

    /// IC3's C-edge: some table one writes and the other reads or writes — unless both writes
    /// commute.
    #[inline]
    pub fn conflicts(&self, o: &Fp) -> bool {
        let any = |f: &Fp| f.read | f.write | f.comm;
        (self.write & any(o)) | (o.write & any(self)) | (self.comm & o.read) | (o.comm & self.read)
            != 0
    }

    /// Both footprints in one.
    pub fn union(self, o: Fp) -> Fp {
        Fp {
            read: self.read | o.read,
            write: self.write | o.write,
            comm: self.comm | o.comm,
        }
    }

    /// Whether everything `o` touches, `self` touches as well.
    pub fn covers(&self, o: &Fp) -> bool {
        self.union(*o) == *self
    }
}

/// The footprint of each piece of each live transaction, one slot per worker (the worker's slot on
/// the [`Board`] says which transaction it is).
#[derive(Debug)]
pub struct Published {
    slots: Box<[CachePadded<Mutex<Vec<Fp>>>]>,
}

impl Published {
    /// Slots for workers `0..workers`.
    pub fn new(workers: usize) -> Self {
        Published {
            slots: (0..workers).map(|_| CachePadded::default()).collect(),
        }
    }

    /// Publishes the footprints of transaction `id`'s pieces (before it goes on the board).
    pub fn begin(&self, id: TxnId, fps: &[Fp]) {
        let mut f = self.slots[worker_of(id)].lock();
        f.clear();
        f.extend_from_slice(fps);
    }

    /// Widens the published footprint of piece `piece` of `id` (its declaration touched more than
    /// the footprint promised).
    pub fn widen(&self, id: TxnId, piece: usize, fp: Fp) {
        let mut f = self.slots[worker_of(id)].lock();
        if let Some(old) = f.get_mut(piece) {
            *old = old.union(fp);
        }
    }

    /// The last piece of `id` that may conflict with a piece of footprint `fp`, if any (IC3's
    /// static conflict: see [`Fp::conflicts`]). `None` also when `id` has left its slot.
    pub fn last_conflicting(&self, board: &Board, id: TxnId, fp: &Fp) -> Option<u32> {
        let f = self.slots.get(worker_of(id))?.lock();
        if !board.holds(id) {
            return None;
        }
        f.iter().rposition(|p| p.conflicts(fp)).map(|i| i as u32)
    }

    /// Whether `id` no longer runs a piece that may conflict with `fp`: it finished them all, or it
    /// is not running any more.
    pub fn passed(&self, board: &Board, id: TxnId, fp: &Fp) -> bool {
        match board.state(id) {
            State::Running(progress) => self
                .last_conflicting(board, id, fp)
                .is_none_or(|l| progress > l),
            _ => true,
        }
    }
}

/// What each piece of each transaction type declared before on this worker (by the program's
/// name and the piece's index): the footprint published for a piece not declared yet.
#[derive(Debug, Default)]
pub struct Learned(HashMap<(&'static str, usize), Fp>);

impl Learned {
    /// The footprint learnt for piece `piece` of `name`: every table if none yet.
    pub fn get(&self, name: &'static str, piece: usize) -> Fp {
        self.0.get(&(name, piece)).copied().unwrap_or(Fp::ALL)
    }
    /// Learns that piece `piece` of `name` declared `fp`.
    pub fn learn(&mut self, name: &'static str, piece: usize, fp: Fp) {
        self.0
            .entry((name, piece))
            .and_modify(|f| *f = f.union(fp))
            .or_insert(fp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(accesses: &[(TableId, Kind)]) -> Fp {
        let mut f = Fp::default();
        for &(t, k) in accesses {
            f.add(t, k);
        }
        f
    }

    #[test]
    fn a_c_edge_needs_a_common_table_and_a_write() {
        let r0 = fp(&[(0, Kind::Read)]);
        let w0 = fp(&[(0, Kind::Write)]);
        let w1 = fp(&[(1, Kind::Write)]);
        assert!(!r0.conflicts(&r0), "reads share");
        assert!(r0.conflicts(&w0) && w0.conflicts(&r0) && w0.conflicts(&w0));
        assert!(!w0.conflicts(&w1), "different tables");
        assert!(Fp::ALL.conflicts(&r0) && r0.conflicts(&Fp::ALL));
    }

    #[test]
    fn commuting_writes_conflict_with_everything_but_each_other() {
        let c0 = fp(&[(0, Kind::Comm)]);
        let r0 = fp(&[(0, Kind::Read)]);
        let w0 = fp(&[(0, Kind::Write)]);
        assert!(!c0.conflicts(&c0));
        assert!(c0.conflicts(&r0) && r0.conflicts(&c0));
        assert!(c0.conflicts(&w0) && w0.conflicts(&c0));
    }

    #[test]
    fn learning_unions_and_unknown_is_everything() {
        let mut l = Learned::default();
        assert_eq!(l.get("t", 0), Fp::ALL);
        l.learn("t", 0, fp(&[(0, Kind::Read)]));
        l.learn("t", 0, fp(&[(1, Kind::Write)]));
        let f = l.get("t", 0);
        assert!(f.covers(&fp(&[(0, Kind::Read), (1, Kind::Write)])));
        assert!(!f.covers(&fp(&[(2, Kind::Read)])));
    }
}
