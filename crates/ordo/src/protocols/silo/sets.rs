//! A transaction's read set, write set and node set, and the per-worker buffer its write images live in.
//!
//! Everything here is reused across the worker's transactions (`clear` keeps capacity), so a transaction
//! in steady state allocates nothing.

use crate::storage::{ColumnSet, RowId, TableId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A record read, with the TID its copy was consistent with.
#[derive(Clone, Copy, Debug)]
pub(super) struct ReadEntry {
    pub table: TableId,
    pub rid: RowId,
    pub tid: u64,
}

/// A structure stripe observed (a key found missing, or a range scanned), with the counter value the
/// transaction expects at commit (its own slot creations included).
#[derive(Clone, Copy, Debug)]
pub(super) struct NodeEntry {
    pub table: TableId,
    pub stripe: u32,
    pub value: u64,
}

/// A buffered write of one record (one entry per record).
#[derive(Clone, Copy, Debug)]
pub(super) struct WriteEntry {
    pub table: TableId,
    pub rid: RowId,
    pub key: u64,
    /// Start of this record's row image in [`Sets::images`].
    pub off: usize,
    /// The TID the image's read columns were copied at (the record's read-set entry).
    pub read_tid: u64,
    /// Columns of the image that hold data (read or written).
    pub have: ColumnSet,
    /// Columns to install.
    pub written: ColumnSet,
    /// Install a tombstone.
    pub deleted: bool,
    /// An insert of a key that was absent: at commit the slot must still be absent.
    pub must_be_absent: bool,
    /// The TID held when Phase 1 locked the record.
    pub locked_tid: u64,
}

/// Past this many writes, own-write lookups go through a hash index instead of a linear scan.
const LINEAR_MAX: usize = 16;

/// A multiplicative hasher for `(table, key)` pairs (keys are the program's own, so no flooding defence
/// is needed, and SipHash would cost more than the lookup it saves).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(26) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type BuildKeyHasher = BuildHasherDefault<KeyHasher>;

/// The three sets and the image buffer.
#[derive(Default)]
pub(super) struct Sets {
    pub reads: Vec<ReadEntry>,
    pub writes: Vec<WriteEntry>,
    pub nodes: Vec<NodeEntry>,
    /// Row images of the write set, back to back.
    pub images: Vec<u64>,
    /// `(table, key)` → position in `writes`, maintained once `writes` outgrows [`LINEAR_MAX`].
    index: HashMap<(TableId, u64), usize, BuildKeyHasher>,
}

impl Sets {
    /// Empties every set, keeping capacity.
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.nodes.clear();
        self.images.clear();
        self.index.clear();
    }

    /// The write-set position of `(table, key)`.
    #[inline]
    pub fn find_write(&self, table: TableId, key: u64) -> Option<usize> {
        if self.writes.len() <= LINEAR_MAX {
            self.writes
                .iter()
                .position(|e| e.key == key && e.table == table)
        } else {
            self.index.get(&(table, key)).copied()
        }
    }

    /// Adds a write entry (the caller checked it is not there yet).
    pub fn push_write(&mut self, e: WriteEntry) {
        self.writes.push(e);
        let n = self.writes.len();
        if n == LINEAR_MAX + 1 {
            self.index.extend(
                self.writes
                    .iter()
                    .enumerate()
                    .map(|(i, w)| ((w.table, w.key), i)),
            );
        } else if n > LINEAR_MAX + 1 {
            self.index.insert((e.table, e.key), n - 1);
        }
    }

    /// A zeroed image of `words` words; returns its offset.
    #[inline]
    pub fn alloc_image(&mut self, words: usize) -> usize {
        let off = self.images.len();
        self.images.resize(off + words, 0);
        off
    }

    /// The transaction's own slot creation bumped `stripe`: node-set entries recorded before expect it.
    pub fn own_bump(&mut self, table: TableId, stripe: u32) {
        for n in &mut self.nodes {
            if n.table == table && n.stripe == stripe {
                n.value += 1;
            }
        }
    }

    /// Whether this transaction's write set holds record `(table, rid)`. Only valid after
    /// [`Self::sort_writes`].
    #[inline]
    pub fn writes_hold(&self, table: TableId, rid: RowId) -> bool {
        self.writes
            .binary_search_by(|e| (e.table, e.rid).cmp(&(table, rid)))
            .is_ok()
    }

    /// Sorts the write set into the global lock order (table, row id). Own-write lookups by key are no
    /// longer valid afterwards (the transaction is committing).
    pub fn sort_writes(&mut self) {
        self.writes.sort_unstable_by_key(|e| (e.table, e.rid));
        self.index.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(table: TableId, key: u64) -> WriteEntry {
        WriteEntry {
            table,
            rid: key * 3 % 101,
            key,
            off: 0,
            read_tid: 0,
            have: ColumnSet::NONE,
            written: ColumnSet::NONE,
            deleted: false,
            must_be_absent: false,
            locked_tid: 0,
        }
    }

    #[test]
    fn finds_writes_linearly_and_through_the_index() {
        let mut s = Sets::default();
        for k in 0..40 {
            assert_eq!(s.find_write(1, k), None);
            s.push_write(entry(1, k));
            assert_eq!(s.find_write(1, k), Some(k as usize));
            assert_eq!(s.find_write(0, k), None);
        }
        for k in 0..40 {
            assert_eq!(s.find_write(1, k), Some(k as usize));
        }
        s.sort_writes();
        assert!(s
            .writes
            .windows(2)
            .all(|w| (w[0].table, w[0].rid) < (w[1].table, w[1].rid)));
        assert!(s.writes_hold(1, 3) && !s.writes_hold(2, 3));
        s.clear();
        assert_eq!(s.find_write(1, 0), None);
    }

    #[test]
    fn own_bumps_adjust_matching_node_entries() {
        let mut s = Sets::default();
        s.nodes.push(NodeEntry {
            table: 0,
            stripe: 4,
            value: 10,
        });
        s.nodes.push(NodeEntry {
            table: 1,
            stripe: 4,
            value: 10,
        });
        s.own_bump(0, 4);
        assert_eq!((s.nodes[0].value, s.nodes[1].value), (11, 10));
    }
}
