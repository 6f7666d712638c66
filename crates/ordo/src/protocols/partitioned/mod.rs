//! `partitioned` — partition-per-core execution: `hstore` (serial execution per partition, whole
//! partitions locked by multi-partition transactions), `vll-partitioned` and `vll-partitioned-sca`
//! (the VLL paper's single-threaded per-partition VLL, without and with SCA, which lock records, not
//! partitions), `vll-partitioned-arrayed` (the same with its counters in per-partition arrays), and
//! `hstore-lockmgr` (the paper's per-core lock manager: a hash-table lock manager in each partition).
//!
//! # Partitions
//!
//! The database is split into `P` partitions, `P` = the number of worker threads (H-Store's one
//! partition per core). Key `k` of every table belongs to partition **`k % P`** ([`partition_of`]),
//! unless the workload partitions its data itself ([`crate::txn::Program::partitioning`]: TPC-C by
//! warehouse, as H-Store partitions it), when it belongs to partition `partition_key % P`
//! ([`crate::protocols::kit::partition_map`]). A workload that wants single-partition transactions
//! without a partitioning keeps each transaction's keys congruent modulo `P` (`vll-micro`'s and
//! `ycsb`'s `--partitions` do this when it equals the thread count). A key range touches every
//! partition if its partition keys span at least `P`, else the partitions between its ends'.
//!
//! Worker thread `i` is partition `i`'s "site" when the workload draws its transactions for partition
//! `i`; a transaction drawn by one thread may still touch any partition, taking what it needs there.
//!
//! | protocol          | single-partition transaction          | multi-partition transaction              |
//! |-------------------|---------------------------------------|------------------------------------------|
//! | `hstore`          | takes its partition's lock, runs      | takes every partition lock it needs, in  |
//! |                   | serially, no record locks             | partition order; the partitions idle     |
//! | `vll-partitioned` | runs at once inside the partition's   | enqueued in every partition it touches   |
//! |                   | critical section if its keys are free | (in one consistent order), VLL counters  |
//! |                   | (single-threaded VLL), else queued    | on its records; others keep running      |
//! | `hstore-lockmgr`  | locks its keys in its partition's     | requested in every partition it touches  |
//! |                   | hash-table lock manager; runs at once | (one consistent order); others keep      |
//! |                   | if granted, else queued               | running                                  |
//!
//! Remote reads: a workload that simulates the network wait of a multi-partition transaction
//! ([`crate::txn::Program::take_remote_wait`]) makes `hstore` sleep through it holding its partitions,
//! as H-Store does; the `vll-partitioned` family and `hstore-lockmgr` set the transaction aside in the
//! VLL paper's **Waiting** state ([`crate::protocols::kit::waiting`]) and their worker goes on with other transactions
//! ([`worker`]: the loop they share). So does `nocc`, the paper's "no locking" line beside them.

pub mod hstore;
pub mod lockmgr;
pub mod parts;
pub mod vll_partitioned;
pub mod worker;

#[cfg(test)]
mod tests;

pub use hstore::HStore;
pub use lockmgr::HStoreLockMgr;
pub use vll_partitioned::{
    SingleThreadedVll, VllPartitioned, VllPartitionedArrayed, VllPartitionedSca,
};

/// The partition of key `key` among `partitions`.
#[inline]
pub fn partition_of(key: u64, partitions: u64) -> u64 {
    key % partitions
}
