//! A partition's dependency graph for one batch (§4.4.2): per conflict unit, the batch's transactions
//! that touch it, in batch order.
//!
//! The graph is built whole before the batch's first piece runs, by the core that owns the
//! partition, walking the batch in order. Each unit gets a **key list** of entries, one per
//! transaction (a transaction's pieces on one unit share its entry: see [`super::plan`]):
//!
//! ```text
//!   unit x:   T1:w  T3:r  T4:r  T7:w  T9:r        done = 2  (T1 and T3 completed)
//!             pos 0     1     2     3     4
//!   turn:     0     1     1     3     4            a reader's turn: the last writer before it + 1
//!                                                  a writer's turn: its own position
//! ```
//!
//! An entry may go when the count of completed entries (`done`) reaches its **turn**: a writer
//! waits for everything before it (write-write and read-write conflicts, constraints 1 and 2 of
//! §4.3), a reader only for the last writer before it (write-read). Nothing after a writer can
//! complete before it, so `done` reaching a writer's position means every entry before it is done,
//! and entries become ready in list order, in runs: when `done` reaches `d`, the entry at `d` goes
//! if it is a writer, or, if the entry before it is a writer, the readers from `d` up to the next
//! writer. The core whose completion made `done = d` releases exactly the entries of turn `d`, so
//! two cores completing at once never release one entry twice.
//!
//! Which pieces an entry's turn holds back, and when the entry counts as completed, is
//! [`super::run`]'s business: the entry's turn is one of the things each member piece waits for,
//! and the entry completes when the last member piece completes (for abortable pieces, at their
//! transaction's commit decision — constraint 1a: a reader waits for all of a writer's abortable
//! pieces).

use crate::protocols::kit::lock_manager::KeyHasher;
use crate::storage::TableId;
use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU32, Ordering};

/// A conflict unit: one record of a table, or one unit a program names (the high bit of `table`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct GKey {
    table: u32,
    id: u64,
}

const UNIT: u32 = 1 << 31;

impl GKey {
    pub fn record(table: TableId, key: u64) -> Self {
        GKey { table, id: key }
    }
    pub fn unit(table: TableId, unit: u64) -> Self {
        GKey {
            table: table | UNIT,
            id: unit,
        }
    }
    /// Whether it names a program's unit rather than a record.
    pub fn is_unit(&self) -> bool {
        self.table & UNIT != 0
    }
    /// The partition (of `partitions`) whose graph orders it: a hash, as the paper's YCSB
    /// partitions records "using a random hash function".
    pub fn partition(&self, partitions: u32) -> u32 {
        let h = (self.id ^ (self.table as u64).rotate_left(40)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 32) % partitions.max(1) as u64) as u32
    }
}

/// One transaction's entry in a key list: which participant's plan, which of its units.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub part: u32,
    pub unit: u32,
    pub write: bool,
}

/// The entries of one unit, in batch order, and how many have completed.
#[derive(Debug, Default)]
pub(super) struct KeyList {
    entries: Vec<Entry>,
    /// The position of the last writer appended (while the graph is built).
    last_writer: Option<u32>,
    done: AtomicU32,
}

/// One partition's graph.
#[derive(Debug, Default)]
pub(super) struct Graph {
    index: HashMap<GKey, u32, BuildHasherDefault<KeyHasher>>,
    lists: Vec<KeyList>,
    /// Lists in use this batch (`lists` keeps the ones past it for their buffers).
    used: usize,
}

impl Graph {
    /// Empties the graph for the next batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.index.clear();
        for l in &mut self.lists[..self.used] {
            l.entries.clear();
            l.last_writer = None;
            *l.done.get_mut() = 0;
        }
        self.used = 0;
    }

    /// Appends `e` to the list of `key`; returns the list, the entry's position, and whether its
    /// turn has come already (a reader with no writer before it, or the list's first entry).
    pub fn append(&mut self, key: GKey, e: Entry) -> (u32, u32, bool) {
        let used = self.used;
        let list = *self.index.entry(key).or_insert(used as u32);
        if list as usize == used {
            if self.lists.len() == used {
                self.lists.push(KeyList::default());
            }
            self.used += 1;
        }
        let l = &mut self.lists[list as usize];
        let pos = l.entries.len() as u32;
        l.entries.push(e);
        let turn = if e.write {
            pos
        } else {
            l.last_writer.map_or(0, |w| w + 1)
        };
        if e.write {
            l.last_writer = Some(pos);
        }
        (list, pos, turn == 0)
    }

    /// Counts one more completed entry in `list` and calls `ready` with every entry whose turn that
    /// completion brings (see the module docs).
    pub fn complete(&self, list: u32, mut ready: impl FnMut(Entry)) {
        let l = &self.lists[list as usize];
        let d = l.done.fetch_add(1, Ordering::AcqRel) as usize + 1;
        let Some(&first) = l.entries.get(d) else {
            return;
        };
        if first.write {
            ready(first);
        } else if l.entries[d - 1].write {
            for &e in l.entries[d..].iter().take_while(|e| !e.write) {
                ready(e);
            }
        }
    }

    /// Entries and completed entries of `key`'s list (tests).
    #[cfg(test)]
    pub fn state(&self, key: GKey) -> Option<(usize, u32)> {
        let l = &self.lists[*self.index.get(&key)? as usize];
        Some((l.entries.len(), l.done.load(Ordering::Acquire)))
    }
}

/// A partition's graph in a batch: written by its owner while the batch's graphs are built, then
/// only read (its counters are atomics) by every core until the batch ends.
#[derive(Debug, Default)]
pub(super) struct GraphCell(UnsafeCell<Graph>);

// SAFETY: the phases of a batch make the accesses exclusive or shared: `build` is called only by
// the one participant that owns the partition, before the batch's build barrier, while no core
// reads it; `get` is called only after that barrier (which orders the writes before the reads) and
// before the end barrier, when nobody writes it except through its atomics; between batches the
// coordinator owns it alone.
unsafe impl Sync for GraphCell {}

impl GraphCell {
    /// The graph, to build or clear.
    ///
    /// # Safety
    /// The caller must be the only one accessing this graph (its owner during the build phase, or
    /// the coordinator between batches).
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn build(&self) -> &mut Graph {
        // SAFETY: exclusive access is the caller's contract.
        unsafe { &mut *self.0.get() }
    }

    /// The graph, to read.
    ///
    /// # Safety
    /// No one may be building or clearing it (the batch is past its build barrier).
    pub unsafe fn get(&self) -> &Graph {
        // SAFETY: no writer is the caller's contract.
        unsafe { &*self.0.get() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(part: u32, write: bool) -> Entry {
        Entry {
            part,
            unit: 0,
            write,
        }
    }

    /// The module docs' list: each completion releases exactly the entries whose turn it is.
    #[test]
    fn turns_come_in_list_order_and_readers_share_theirs() {
        let mut g = Graph::default();
        let x = GKey::record(0, 7);
        let ready: Vec<bool> = [(1, true), (3, false), (4, false), (7, true), (9, false)]
            .iter()
            .map(|&(t, w)| g.append(x, e(t, w)).2)
            .collect();
        assert_eq!(
            ready,
            [true, false, false, false, false],
            "only T1 goes first"
        );
        let mut released = Vec::new();
        g.complete(0, |e| released.push(e.part));
        assert_eq!(released, [3, 4], "T1 done: both readers");
        released.clear();
        g.complete(0, |e| released.push(e.part));
        assert!(
            released.is_empty(),
            "one reader done: the writer waits for both"
        );
        g.complete(0, |e| released.push(e.part));
        assert_eq!(released, [7]);
        released.clear();
        g.complete(0, |e| released.push(e.part));
        assert_eq!(released, [9]);
        assert_eq!(g.state(x), Some((5, 4)));
        // Readers before any writer go at once; a writer after them waits for all of them.
        let y = GKey::unit(0, 7);
        assert_ne!(x, y, "a unit is not the record with its number");
        let turns: Vec<bool> = [false, false, true]
            .iter()
            .enumerate()
            .map(|(i, &w)| g.append(y, e(i as u32, w)).2)
            .collect();
        assert_eq!(turns, [true, true, false]);
        g.clear();
        assert_eq!(g.state(x), None, "cleared");
    }

    #[test]
    fn partitions_spread_keys() {
        let mut seen = [0u32; 4];
        for k in 0..1000 {
            seen[GKey::record(0, k).partition(4) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 150), "{seen:?}");
        assert_eq!(GKey::record(3, 5).partition(1), 0);
    }
}
