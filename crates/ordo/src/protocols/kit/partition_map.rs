//! Which of `n` partitions a key belongs to, for partition-per-core execution (H-Store and the VLL
//! paper's partitioned VLLs): by default key `k` of every table is partition `k % n`; a workload
//! whose data has a natural partitioning says so through its programs'
//! [`Program::partitioning`](crate::txn::Program::partitioning) — TPC-C partitions by warehouse, as
//! H-Store does — and a key then belongs to partition `partition_key(table, k) % n`.
//!
//! The planner ([`crate::protocols::partitioned::parts`]) and the cover check
//! ([`super::exec::Cover::Partitions`]) use one [`PartitionMap`], so that what a transaction locks
//! and what it may touch agree.

use crate::storage::TableId;
use crate::txn::Partitioning;

/// How keys map to `n` partitions.
#[derive(Clone, Copy, Debug)]
pub struct PartitionMap {
    /// Partitions (at least 1).
    pub n: u64,
    /// The workload's partition keys; `None`: the key itself.
    pub by: Option<Partitioning>,
}

/// One partition, keys as they are (what a transaction not yet planned holds).
impl Default for PartitionMap {
    fn default() -> Self {
        PartitionMap::new(1, None)
    }
}

impl PartitionMap {
    /// `n` partitions (0 is taken as 1), keyed by `by`.
    pub fn new(n: u64, by: Option<Partitioning>) -> Self {
        PartitionMap { n: n.max(1), by }
    }

    /// The partition key of `key` of `table`.
    #[inline]
    fn key_of(&self, table: TableId, key: u64) -> u64 {
        match self.by {
            Some(f) => f(table, key),
            None => key,
        }
    }

    /// The partition of `key` of `table`.
    #[inline]
    pub fn of(&self, table: TableId, key: u64) -> u64 {
        self.key_of(table, key) % self.n
    }

    /// Calls `each` with every partition the keys `lo..=hi` of `table` may belong to (some perhaps
    /// twice): those of the partition keys between the ends' ([`Partitioning`] is nondecreasing in
    /// the key), or all of them when that span covers every partition or the ends disagree.
    pub fn range(&self, table: TableId, lo: u64, hi: u64, mut each: impl FnMut(u64)) {
        if lo > hi {
            return;
        }
        let (a, b) = (self.key_of(table, lo), self.key_of(table, hi));
        if a > b || b - a >= self.n - 1 {
            (0..self.n).for_each(each);
        } else {
            (a..=b).for_each(|k| each(k % self.n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 1's keys carry their partition key above bit 8; table 0's are their own.
    fn high_bits(table: TableId, key: u64) -> u64 {
        if table == 1 {
            key >> 8
        } else {
            key
        }
    }

    fn parts(m: &PartitionMap, table: TableId, lo: u64, hi: u64) -> Vec<u64> {
        let mut v = Vec::new();
        m.range(table, lo, hi, |p| v.push(p));
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn keys_map_by_the_workloads_partition_key_else_modulo() {
        let plain = PartitionMap::new(4, None);
        assert_eq!((plain.of(1, 7), plain.of(0, 12)), (3, 0));
        assert_eq!(parts(&plain, 0, 5, 6), [1, 2]);
        assert_eq!(parts(&plain, 0, 5, 8), [0, 1, 2, 3]);
        let by = PartitionMap::new(4, Some(high_bits));
        assert_eq!(
            by.of(1, (6 << 8) | 255),
            2,
            "the partition key, not the key"
        );
        assert_eq!(by.of(0, 6), 2, "a table the partitioning leaves alone");
        assert_eq!(
            parts(&by, 1, 5 << 8, (5 << 8) | 255),
            [1],
            "a range inside one partition key"
        );
        assert_eq!(parts(&by, 1, 5 << 8, 6 << 8), [1, 2]);
        assert_eq!(parts(&by, 1, 0, 9 << 8), [0, 1, 2, 3]);
        assert_eq!(parts(&by, 1, 9, 3), [] as [u64; 0], "an empty range");
        assert_eq!(
            PartitionMap::new(0, None).of(0, 5),
            0,
            "at least one partition"
        );
    }
}
