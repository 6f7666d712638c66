//! A transaction's lock set: which records it holds, in which mode, in acquisition order.
//!
//! Every access first asks "do I hold this already?" (a re-read, a read then an update, an insert after a
//! scan). Small transactions — the common case, YCSB's 16 records — answer it by a linear scan of a few
//! cache lines; once a transaction holds more than `LINEAR_MAX` (16) locks an open-addressing index over the
//! same vector takes over, so large scans stay linear overall. Both buffers live in the worker and are
//! reused, so steady-state transactions allocate nothing.

use super::lock::Mode;
use crate::storage::{RowId, TableId};

/// Lock sets up to this size are searched linearly.
const LINEAR_MAX: usize = 16;

/// One held lock.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    pub table: TableId,
    pub rid: RowId,
    pub mode: Mode,
}

/// The locks of the running transaction.
#[derive(Debug, Default)]
pub struct LockSet {
    held: Vec<Held>,
    /// Open addressing: position + 1 in `held`, 0 = empty. Used while `held.len() > LINEAR_MAX`.
    index: Vec<u32>,
    indexed: bool,
}

#[inline]
fn hash(table: TableId, rid: RowId) -> usize {
    let h = (rid ^ ((table as u64) << 48)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 20) as usize
}

impl LockSet {
    /// The position of the lock on `(table, rid)`, if held.
    #[inline]
    pub fn find(&self, table: TableId, rid: RowId) -> Option<usize> {
        if !self.indexed {
            return self
                .held
                .iter()
                .position(|h| h.rid == rid && h.table == table);
        }
        let mask = self.index.len() - 1;
        let mut i = hash(table, rid) & mask;
        loop {
            match self.index[i] {
                0 => return None,
                p => {
                    let h = &self.held[p as usize - 1];
                    if h.rid == rid && h.table == table {
                        return Some(p as usize - 1);
                    }
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds a lock not held yet.
    #[inline]
    pub fn push(&mut self, h: Held) {
        self.held.push(h);
        if self.indexed {
            if self.held.len() * 2 > self.index.len() {
                self.rebuild();
            } else {
                self.insert_index(self.held.len() - 1);
            }
        } else if self.held.len() > LINEAR_MAX {
            self.rebuild();
        }
    }

    #[cold]
    fn rebuild(&mut self) {
        let cap = (self.held.len() * 4).next_power_of_two();
        self.index.clear();
        self.index.resize(cap, 0);
        self.indexed = true;
        for p in 0..self.held.len() {
            self.insert_index(p);
        }
    }

    fn insert_index(&mut self, p: usize) {
        let mask = self.index.len() - 1;
        let h = self.held[p];
        let mut i = hash(h.table, h.rid) & mask;
        while self.index[i] != 0 {
            i = (i + 1) & mask;
        }
        self.index[i] = p as u32 + 1;
    }

    /// Changes the mode of the lock at `pos` (an upgrade).
    #[inline]
    pub fn set_mode(&mut self, pos: usize, mode: Mode) {
        self.held[pos].mode = mode;
    }

    #[inline]
    pub fn get(&self, pos: usize) -> Held {
        self.held[pos]
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// The held locks, in acquisition order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = &Held> {
        self.held.iter()
    }

    /// Forgets every lock (after they were released). Keeps the buffers.
    #[inline]
    pub fn clear(&mut self) {
        self.held.clear();
        if self.indexed {
            self.index.fill(0);
            self.indexed = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_locks_linearly_and_through_the_index() {
        let mut s = LockSet::default();
        for round in 0..2 {
            for r in 0..1000u64 {
                assert_eq!(s.find((r % 3) as u32, r), None);
                s.push(Held {
                    table: (r % 3) as u32,
                    rid: r,
                    mode: Mode::Shared,
                });
                assert_eq!(s.find((r % 3) as u32, r), Some(r as usize), "round {round}");
            }
            for r in 0..1000u64 {
                assert_eq!(s.find((r % 3) as u32, r), Some(r as usize));
                assert_eq!(s.find((r % 3) as u32 + 1, r), None);
            }
            s.set_mode(7, Mode::Exclusive);
            assert_eq!(s.get(7).mode, Mode::Exclusive);
            s.clear();
            assert!(s.is_empty());
            assert_eq!(s.find(1, 1), None);
        }
    }
}
