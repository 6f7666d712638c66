//! The shared kit: mechanisms more than one protocol family uses, so that no family imports another.
//!
//! A family folder (`nocc/`, `twopl/`, `silo/`, `mvcc/`, `vll/`, `deterministic/`, `partitioned/`,
//! `pwv/`, `ic3/`, `dibs/`, `salt/`, `callas/`, `sc_chopping/`) imports `kit`, `txn`, `storage` (and `check` for recording), never another
//! family; what two families share moves here. Each file does one thing and can be read alone:
//!
//! | file              | what it is                                                        | who uses it |
//! |-------------------|-------------------------------------------------------------------|-------------|
//! | [`inplace`]       | the in-place executor: rows written in place, undo log, recording  | nocc, twopl, vll, deterministic, partitioned, dibs, salt (reads: silo, mvcc) |
//! | [`lock_request`]  | a transaction's lock requests (record, mode), normalized           | vll, deterministic, partitioned |
//! | [`plan`]          | a program's whole access set before it runs, as key locks          | vll, deterministic, partitioned, pwv, twopl (ordered) |
//! | [`recon`]         | the reconnaissance transaction that planning runs dependent pieces on | (plan) |
//! | [`exec`]          | executing under locks already held: the cover check, barriers      | deterministic, partitioned, twopl (ordered) |
//! | [`lock_table`]    | the traditional lock manager: latched hash table of request queues, its compatibility matrix a parameter | twopl, salt, callas |
//! | [`hold_delay`]    | `--op-delay-us`, `--commit-delay-us`: lock hold time slept, as replication would | salt, twopl (as-you-go), callas, sc_chopping |
//! | [`lock_manager`]  | the lock manager of ordered transactions: per-key FIFO queues      | deterministic, partitioned, range_locks |
//! | [`scheduler`]     | what a lock manager fed transactions in one global order offers    | deterministic, partitioned |
//! | [`counters`]      | VLL's C_X/C_S counters, colocated or arrayed                       | vll, deterministic (calvin-vll), partitioned |
//! | [`txn_queue`]     | VLL's TxnQueue: active transactions in lock-request order          | vll, deterministic (calvin-vll), partitioned |
//! | [`sca`]           | selective contention analysis over a TxnQueue                      | vll, deterministic (calvin-vll), partitioned, range_locks |
//! | [`prefix`]        | prefix locks: key ranges as bitstring prefixes, four counters each | vll (vllr), range_locks |
//! | [`queue_knobs`]   | the knobs of the TxnQueue loops (`--vll-*`)                        | vll, deterministic (calvin-vll), partitioned |
//! | [`latch`]         | the spinning latch around a short critical section                 | vll, deterministic (deadlock-free 2PL) |
//! | [`barrier`]       | a database-wide reader-writer barrier, its read side per worker    | twopl (ordered locking), ic3, callas |
//! | [`shape`]         | what a transaction type's pieces touch, learnt from declarations; the graph helpers of static analyses | callas, sc_chopping |
//! | [`chopping`]      | transaction chopping by SC-cycles (Shasha et al. 1995): the finest correct chopping | sc_chopping, callas (`--callas-chopping sc`) |
//! | [`pipeline`]      | early write visibility: per-record access lists, the board of live transactions, per-record undo | ic3, callas |
//! | [`ticket`]        | a fair (first-come, first-served) reader-writer lock word that waits | twopl (ordered locking), ic3, callas |
//! | [`aimd`]          | additive-increase, multiplicative-decrease bound on queued work    | vll, deterministic, partitioned |
//! | [`partition_map`] | which partition a key belongs to: key mod n, or the workload's partition key (TPC-C's warehouse) mod n | partitioned (and the cover check) |
//! | [`waits_for`]     | a waits-for graph of up to 64 lock owners; the highest on a cycle gives up | sc_chopping |
//! | [`waiting`]       | transactions set aside while their remote reads travel             | nocc, partitioned |
//! | [`recv`]          | receiving a hand-off: poll briefly, then block                     | deterministic, partitioned |
//!
//! A test (`protocols::floor_plan`) fails when a family imports another family.

pub mod aimd;
pub mod barrier;
pub mod chopping;
pub mod counters;
pub mod exec;
pub mod hold_delay;
pub mod inplace;
pub mod latch;
pub mod lock_manager;
pub mod lock_request;
pub mod lock_table;
pub mod partition_map;
pub mod pipeline;
pub mod plan;
pub mod prefix;
pub mod queue_knobs;
pub mod recon;
pub mod recv;
pub mod sca;
pub mod scheduler;
pub mod shape;
pub mod ticket;
pub mod txn_queue;
pub mod waiting;
pub mod waits_for;

#[cfg(test)]
pub(crate) mod testkit;
