//! `hstore` — H-Store's partitioned serial execution (Kallman et al., VLDB 2008; Stonebraker et al.,
//! "The End of an Architectural Era", 2007), the partition-per-core baseline of the VLL paper (Fig. 9–10).
//!
//! # The idea
//!
//! Give every partition to one thread and run that partition's transactions **one at a time, to
//! completion**: no record locks, no latches, no undo for concurrency — serial execution is trivially
//! serializable and, in main memory, fast. The price is paid by **multi-partition** transactions: they
//! must hold every partition they touch, and those partitions do nothing else meanwhile. As the share
//! of multi-partition transactions grows, throughput collapses (the VLL paper's Fig. 9).
//!
//! ```text
//!   H-Store                                     here
//!   one single-threaded engine per partition    a partition lock per partition: holding it is being
//!                                               that partition's engine; worker i draws partition i's work
//!   single-partition txn: run serially          take its partition's lock, run, release
//!   multi-partition txn: coordinator locks the  take every partition lock it needs in ascending
//!     partitions (timestamp order), runs,       partition order (no deadlock), run, release all
//!     partitions block meanwhile
//!   stored procedures routed by their           the program's declared accesses, those known
//!     partitioning parameter; a mispredicted      without running it; a piece whose declaration
//!     single-partition txn aborts and restarts    needs earlier results is left out, and if it
//!     as multi-partition                          strays at run time the transaction aborts and is
//!                                                 planned in full (reconnaissance) on its retry
//!   the partition's engine runs one txn, the    a spinning partition latch, as DBx1000's HSTORE
//!     next one queued behind it                   spins on its partition locks
//! ```
//!
//! Deviations from H-Store proper: no dedicated executor thread per partition (the worker holding the
//! partition lock executes, and with partition-affine workloads worker `i` is partition `i`'s executor),
//! so there is no network or queueing delay; multi-partition transactions order themselves by taking
//! partition locks in partition order instead of H-Store's timestamp-ordered coordinator with
//! speculation and aborts. Both choices flatter H-Store a little; its collapse under multi-partition
//! load comes from holding whole partitions, which is kept.
//!
//! Partitions: one per worker, or `--hstore-partitions N` ([`PARTITIONS_KNOB`], DBx1000's
//! `PART_CNT`): with one per TPC-C warehouse and fewer workers, a remote warehouse is nobody's home
//! partition, so most multi-partition transactions wait for no one.
//!
//! **Planning only as far as the partitions.** A transaction's partitions are what it must hold,
//! so the plan needs only the keys that name them. TPC-C's New-Order learns its order id from the
//! district, and a Payment by last name its customer from the name index: planned in full, both
//! run those pieces once as reconnaissance before running for real (VLL §2.4). A workload that
//! names its partitioning ([`Program::partitioning`]) routes each transaction by partition keys
//! its inputs hold, as an H-Store stored procedure names its partitioning parameter: under TPC-C's
//! partitioning by warehouse the inserts and the customer lie in warehouses the inputs name. For
//! such a program `hstore` declares only what is known without running anything
//! ([`Planner::plan_known`]): the pieces whose keys are inputs, and the bounds the program gives
//! for the others ([`Program::declare_bounds`]: a Payment's customer found by name is one of its
//! district's, so a remote customer's partition is taken from the start). A transaction that
//! strays all the same aborts with `Validation` and is planned in full on its retry. A program
//! without a partitioning is planned in full (its pieces' declarations may depend on every
//! earlier piece, the default).
//!
//! **Partition latches spin.** A transaction holds its partitions for microseconds; a waiter
//! spins, then yields ([`crate::protocols::kit::latch`]), as DBx1000's HSTORE spins. A parking
//! mutex put a blocked worker to sleep, and its holder then paid a wake-up system call.
//!
//! Interactive transactions ([`Protocol::begin`]) hold every partition.

use super::parts::PartSet;
use crate::options::{OptionSpec, ValueKind};
use crate::protocols::kit::exec::{Cover, ExecState, ExecTx, HoldingTx};
use crate::protocols::kit::latch::Latch;
use crate::protocols::kit::partition_map::PartitionMap;
use crate::protocols::kit::plan::Planner;
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{
    run_pieces, wait, AbortReason, Access, IdLedger, Program, Recorder, Tx, TxResult,
};
use std::sync::Arc;

/// `--hstore-partitions`: how many partitions `hstore` has (one per worker when not given).
pub const PARTITIONS_KNOB: OptionSpec = OptionSpec::new(
    "hstore-partitions",
    "N",
    ValueKind::Int { min: 1, max: 65_536 },
    "hstore: partitions, each with its lock (default: one per worker). More partitions than workers \
     is DBx1000's HSTORE with part_cnt above the thread count: TPC-C with one per warehouse \
     (`--hstore-partitions W`, DBx1000's -pW) leaves a remote warehouse nobody's home partition, \
     so a Payment to a remote customer blocks no other worker.",
);

/// H-Store: partitioned serial execution.
pub struct HStore {
    db: Database<()>,
    /// One latch per partition (each alone on its lines); a holder forgets its guard and
    /// [`HStore::unlock`] forces the latch open.
    locks: Vec<Latch<()>>,
    ids: Arc<IdLedger>,
}

/// Per-thread state of [`HStore`].
pub struct HStoreWorker {
    exec: ExecState,
    planner: Planner,
    accesses: Vec<Access>,
    parts: PartSet,
    /// The last attempt strayed outside its partitions: plan the retry in full.
    plan_fully: bool,
}

impl HStore {
    /// Number of partitions.
    pub fn partitions(&self) -> u64 {
        self.locks.len() as u64
    }

    /// Takes the locks of `parts` (ascending).
    fn lock(&self, parts: &[u32]) {
        for &p in parts {
            let m = &self.locks[p as usize];
            let guard = m.try_lock().unwrap_or_else(|| {
                let _waiting = wait::blocked();
                m.lock()
            });
            std::mem::forget(guard);
        }
    }

    fn unlock(&self, parts: &[u32]) {
        for &p in parts.iter().rev() {
            // SAFETY: the caller took exactly these locks with `lock`, which forgot their guards.
            unsafe { self.locks[p as usize].force_unlock() };
        }
    }
}

impl Protocol for HStore {
    type Meta = ();
    type Worker = HStoreWorker;
    type Tx<'w> = HoldingTx<'w, (), Unlock<'w>>;

    const INFO: ProtocolInfo = ProtocolInfo {
        name: "hstore",
        summary: "partitioned serial execution: one partition per thread (or --hstore-partitions), multi-partition transactions lock whole partitions",
        paper: "Kallman et al., H-Store (VLDB 2008); baseline of Ren, Thomson, Abadi, VLL (VLDB J. 2015) Fig. 9-10",
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&PARTITIONS_KNOB],
    };

    fn open(db: Database<()>, config: &ProtocolConfig) -> Self {
        let n = config
            .knobs
            .int_as::<usize>(&PARTITIONS_KNOB)
            .ok()
            .flatten()
            .unwrap_or(config.threads);
        HStore {
            db,
            locks: (0..n.max(1)).map(|_| Latch::new(())).collect(),
            ids: IdLedger::new(),
        }
    }
    fn db(&self) -> &Database<()> {
        &self.db
    }
    fn worker(&self, id: u32, recording: bool) -> HStoreWorker {
        HStoreWorker {
            exec: ExecState::new(self.ids.lease(id), recording),
            planner: Planner::default(),
            accesses: Vec::new(),
            parts: PartSet::default(),
            plan_fully: false,
        }
    }
    fn recorder(w: &mut HStoreWorker) -> &mut Recorder {
        w.exec.recorder()
    }

    /// An interactive transaction holds every partition.
    fn begin<'w>(&'w self, w: &'w mut HStoreWorker) -> Self::Tx<'w> {
        w.parts.all(self.partitions());
        self.lock(&w.parts.list);
        let all = Unlock {
            p: self,
            list: &w.parts.list,
        };
        HoldingTx::new(ExecTx::new(&self.db, &mut w.exec, Cover::All), all)
    }

    /// Plans the partitions (from the accesses known up front; in full, with reconnaissance, on the
    /// retry of an attempt that strayed), takes their locks in order, runs serially.
    fn execute<P: Program>(&self, w: &mut HStoreWorker, program: &mut P) -> TxResult<()> {
        let by = program.partitioning();
        if by.is_none() || w.plan_fully {
            w.planner.plan(program, &self.db, &mut w.accesses, false);
        } else {
            w.planner.plan_known(program, &mut w.accesses);
        }
        let map = PartitionMap::new(self.partitions(), by);
        w.parts.of(&self.db, &w.accesses, map)?;
        self.lock(&w.parts.list);
        let _unlock = Unlock {
            p: self,
            list: &w.parts.list,
        };
        let cover = Cover::Partitions {
            held: &w.parts.bits,
            map,
        };
        // The transaction (rolled back by its drop on an abort or a panic) ends before the unlock.
        let mut tx = ExecTx::new(&self.db, &mut w.exec, cover);
        let out = match run_pieces(program, &mut tx) {
            Ok(()) => tx.commit(),
            Err(a) => Err(a),
        };
        // A stray (whichever plan it ran on: the data may have changed since a reconnaissance)
        // makes the retry plan in full.
        w.plan_fully = matches!(&out, Err(a) if a.reason == AbortReason::Validation);
        out
    }
}

/// The partition locks a transaction holds — a program's, or an interactive one's (every
/// partition); dropping this unlocks them (after it ran, or while a panic in the program unwinds,
/// so that no other thread waits for them forever).
pub struct Unlock<'a> {
    p: &'a HStore,
    list: &'a [u32],
}

impl Drop for Unlock<'_> {
    fn drop(&mut self) {
        self.p.unlock(self.list);
    }
}
