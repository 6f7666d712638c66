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
//!
//! **Layout.** A batch's graph is large (10,000 transactions of 20 pieces put 200,000 entries in
//! it) and read once more for every piece that completes, so it is flat and reused: the key lists
//! are ranges of one entry array (counted first, then filled: compressed sparse rows), found
//! through an open-addressing index of (unit → list) that is cleared, not freed, between batches.

use crate::storage::TableId;
use std::cell::UnsafeCell;
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
    /// A well-mixed hash of it.
    #[inline]
    pub fn hash(&self) -> u64 {
        let h = (self.id ^ (self.table as u64).rotate_left(40)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 29)
    }
    /// The partition (of `partitions`) whose graph orders it: a hash, as the paper's YCSB
    /// partitions records "using a random hash function".
    pub fn partition(&self, partitions: u32) -> u32 {
        ((self.hash() >> 32) % partitions.max(1) as u64) as u32
    }
}

/// One transaction's entry in a key list: which participant's plan, which of its units.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub part: u32,
    pub unit: u32,
    /// The unit's one member piece, or [`Entry::MEMBERS`] when it has several: releasing the
    /// entry then settles that piece without reading the unit's plan (two cache misses fewer on
    /// every hand-off of a hot record, most of what a contended walk spends).
    pub sole: u32,
    pub write: bool,
}

impl Entry {
    /// `sole` of a unit with more than one member piece: they are in its plan.
    pub const MEMBERS: u32 = u32::MAX;
}

/// One unit's key list: its entries' range in [`Graph::entries`], and how many have completed.
#[derive(Debug, Default)]
struct List {
    start: u32,
    len: u32,
    done: AtomicU32,
}

/// An empty slot of the index.
const FREE: u32 = u32::MAX;

/// One partition's graph.
#[derive(Debug, Default)]
pub(super) struct Graph {
    /// Open addressing over (unit, list); a power of two long, at most half full.
    index: Vec<(GKey, u32)>,
    lists: Vec<List>,
    entries: Vec<Entry>,
    /// While building: each list's last writer so far (a position), or [`FREE`].
    last_writer: Vec<u32>,
}

impl Graph {
    /// Starts a batch's graph that will hold at most `units` entries.
    pub fn start(&mut self, units: usize) {
        let size = (units * 2).next_power_of_two().max(16);
        if self.index.len() != size {
            self.index = vec![(GKey::record(0, 0), FREE); size];
        } else {
            for slot in &mut self.index {
                slot.1 = FREE;
            }
        }
        self.lists.clear();
        self.entries.clear();
        self.last_writer.clear();
    }

    /// The list of `key`, made (empty) if it has none yet.
    pub fn list(&mut self, key: GKey) -> u32 {
        let mask = self.index.len() - 1;
        let mut i = key.hash() as usize & mask;
        loop {
            let slot = &mut self.index[i];
            if slot.1 == FREE {
                let list = self.lists.len() as u32;
                *slot = (key, list);
                self.lists.push(List::default());
                return list;
            }
            if slot.0 == key {
                return slot.1;
            }
            i = (i + 1) & mask;
        }
    }

    /// Counts one more entry for `list` (the first pass of the build).
    pub fn count(&mut self, list: u32) {
        self.lists[list as usize].len += 1;
    }

    /// Lays the lists out one after another once every entry is counted (the second pass).
    pub fn lay_out(&mut self) {
        let mut at = 0;
        for l in &mut self.lists {
            l.start = at;
            at += l.len;
            l.len = 0;
        }
        self.entries.resize(
            at as usize,
            Entry {
                part: 0,
                unit: 0,
                sole: Entry::MEMBERS,
                write: false,
            },
        );
        self.last_writer.clear();
        self.last_writer.resize(self.lists.len(), FREE);
    }

    /// Appends `e` to `list` (the third pass, in batch order); returns the entry's position and
    /// whether its turn has come already (a reader with no writer before it, or the list's first
    /// entry).
    pub fn append(&mut self, list: u32, e: Entry) -> (u32, bool) {
        let l = &mut self.lists[list as usize];
        let pos = l.len;
        self.entries[(l.start + pos) as usize] = e;
        l.len += 1;
        let last = &mut self.last_writer[list as usize];
        let turn = if e.write {
            pos
        } else if *last == FREE {
            0
        } else {
            *last + 1
        };
        if e.write {
            *last = pos;
        }
        (pos, turn == 0)
    }

    /// Counts one more completed entry in `list` and calls `ready` with every entry whose turn that
    /// completion brings (see the module docs).
    pub fn complete(&self, list: u32, mut ready: impl FnMut(Entry)) {
        let l = &self.lists[list as usize];
        let d = l.done.fetch_add(1, Ordering::AcqRel) as usize + 1;
        let entries = &self.entries[l.start as usize..(l.start + l.len) as usize];
        let Some(&first) = entries.get(d) else {
            return;
        };
        if first.write {
            ready(first);
        } else if entries[d - 1].write {
            for &e in entries[d..].iter().take_while(|e| !e.write) {
                ready(e);
            }
        }
    }

    /// Entries and completed entries of `key`'s list (tests).
    #[cfg(test)]
    pub fn state(&self, key: GKey) -> Option<(usize, u32)> {
        let mask = self.index.len() - 1;
        let mut i = key.hash() as usize & mask;
        loop {
            let (k, list) = self.index[i];
            if list == FREE {
                return None;
            }
            if k == key {
                let l = &self.lists[list as usize];
                return Some((l.len as usize, l.done.load(Ordering::Acquire)));
            }
            i = (i + 1) & mask;
        }
    }
}

/// A partition's graph in a batch: written by its owner while the batch's graphs are built, then
/// only read (its counters are atomics) by every core until the batch ends.
#[derive(Debug, Default)]
pub(super) struct GraphCell(UnsafeCell<Graph>);

// SAFETY: the phases of a batch make the accesses exclusive or shared: `build` is called only by
// the one participant that owns the partition, before the batch's build barrier, while no core
// reads it; `get` is called only after that barrier (which orders the writes before the reads) and
// before the end barrier, when nobody writes it except through its atomics.
unsafe impl Sync for GraphCell {}

impl GraphCell {
    /// The graph, to build.
    ///
    /// # Safety
    /// The caller must be the only one accessing this graph (its owner during the build phase).
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn build(&self) -> &mut Graph {
        // SAFETY: exclusive access is the caller's contract.
        unsafe { &mut *self.0.get() }
    }

    /// The graph, to read.
    ///
    /// # Safety
    /// No one may be building it (the batch is past its build barrier).
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
            sole: Entry::MEMBERS,
            write,
        }
    }

    /// Builds `lists` (each a unit with its entries in batch order) the three-pass way; returns the
    /// turns that came at once.
    fn build(g: &mut Graph, lists: &[(GKey, &[Entry])]) -> Vec<Vec<bool>> {
        g.start(lists.iter().map(|l| l.1.len()).sum());
        let ids: Vec<u32> = lists.iter().map(|&(k, _)| g.list(k)).collect();
        for (i, (_, es)) in lists.iter().enumerate() {
            for _ in es.iter() {
                g.count(ids[i]);
            }
        }
        g.lay_out();
        lists
            .iter()
            .enumerate()
            .map(|(i, (_, es))| es.iter().map(|&e| g.append(ids[i], e).1).collect())
            .collect()
    }

    /// The module docs' list: each completion releases exactly the entries whose turn it is.
    #[test]
    fn turns_come_in_list_order_and_readers_share_theirs() {
        let mut g = Graph::default();
        let x = GKey::record(0, 7);
        let y = GKey::unit(0, 7);
        assert_ne!(x, y, "a unit is not the record with its number");
        let xs = [
            e(1, true),
            e(3, false),
            e(4, false),
            e(7, true),
            e(9, false),
        ];
        let ys = [e(0, false), e(1, false), e(2, true)];
        let ready = build(&mut g, &[(x, &xs), (y, &ys)]);
        assert_eq!(
            ready[0],
            [true, false, false, false, false],
            "only T1 goes first"
        );
        assert_eq!(
            ready[1],
            [true, true, false],
            "readers before any writer go at once"
        );
        let list = g.list(x);
        let mut released = Vec::new();
        g.complete(list, |e| released.push(e.part));
        assert_eq!(released, [3, 4], "T1 done: both readers");
        released.clear();
        g.complete(list, |e| released.push(e.part));
        assert!(
            released.is_empty(),
            "one reader done: the writer waits for both"
        );
        g.complete(list, |e| released.push(e.part));
        assert_eq!(released, [7]);
        released.clear();
        g.complete(list, |e| released.push(e.part));
        assert_eq!(released, [9]);
        assert_eq!(g.state(x), Some((5, 4)));
        let ylist = g.list(y);
        g.complete(ylist, |e| released.push(e.part));
        assert_eq!(
            released,
            [9],
            "one of two readers done: the writer still waits"
        );
        g.complete(ylist, |e| released.push(e.part));
        assert_eq!(released, [9, 2]);
        // A new batch starts empty.
        build(&mut g, &[(GKey::record(1, 1), &[e(5, true)])]);
        assert_eq!(g.state(x), None);
    }

    #[test]
    fn the_index_finds_every_unit_among_many() {
        let mut g = Graph::default();
        g.start(5000);
        let lists: Vec<u32> = (0..5000)
            .map(|k| g.list(GKey::record(k % 3, k as u64)))
            .collect();
        assert_eq!(
            lists,
            (0..5000).collect::<Vec<_>>(),
            "each a list of its own"
        );
        for k in 0..5000u32 {
            assert_eq!(g.list(GKey::record(k % 3, k as u64)), k, "found again");
        }
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
