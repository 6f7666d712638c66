//! Transactions written once: programs of pieces that declare what they touch.
//!
//! A workload writes each transaction type once, as a [`Program`]: a sequence of **pieces**. Before a
//! piece runs it can say what it will touch ([`Program::declare`]: table, key or key range, columns read
//! and written); then [`Program::run_piece`] runs its logic against any [`Tx`]. Pieces pass results to
//! later pieces through the program's own fields, and [`Program::depends_on`] says which earlier pieces a
//! piece needs. [`Program::commit_point`] marks the last piece that may abort by its own logic.
//!
//! Each family of protocols takes what it needs from this one description:
//!
//! | protocol family           | uses                                                          |
//! |---------------------------|---------------------------------------------------------------|
//! | interactive (2PL, OCC, SI)| runs the pieces in order ([`run_pieces`])                     |
//! | VLL, Calvin, H-Store      | the union of all declarations, before execution               |
//! | PWV                       | the pieces, their dependency DAG and the commit point         |
//! | DIBS                      | each piece's declaration (predicate + read/write columns)     |
//!
//! A declaration may depend on the outputs of earlier pieces (a secondary-index lookup); protocols that
//! need everything up front run a reconnaissance pass first, as the VLL paper describes.
//!
//! A program may run many times (retries after aborts). Every run starts at piece 0, and a piece must not
//! rely on outputs left by a previous, aborted run.

use super::api::Tx;
use super::error::TxResult;
use crate::storage::{ColumnSet, Database, Table, TableId};

/// Fails with `InvalidData` if `t` is read-only once loaded ([`crate::storage::TableSpec::read_only`]):
/// what every protocol answers to a write (update, insert, delete) of such a table, whether it was
/// declared or not.
#[inline]
pub fn refuse_write<M: Default + Send + Sync>(t: &Table<M>) -> TxResult<()> {
    if t.is_read_only() {
        Err(read_only_write(t))
    } else {
        Ok(())
    }
}

#[cold]
fn read_only_write<M: Default + Send + Sync>(t: &Table<M>) -> super::error::Abort {
    super::error::Abort::with_detail(
        super::error::AbortReason::InvalidData,
        format!(
            "{} is read-only once loaded: it cannot be written",
            t.name()
        ),
    )
}

/// What a piece touches in one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub table: TableId,
    pub target: Target,
    /// Columns read.
    pub read: ColumnSet,
    /// Columns written (for inserts: every column).
    pub write: ColumnSet,
    pub kind: AccessKind,
}

/// The keys an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// One key.
    Key(u64),
    /// Every key in `lo..=hi`, present or not (a scan, or a predicate on the key).
    Range { lo: u64, hi: u64 },
}

/// What an access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    /// Read-modify-write.
    Update,
    Insert,
    Delete,
    Scan,
}

impl Access {
    pub fn read(table: TableId, key: u64, cols: ColumnSet) -> Self {
        Access {
            table,
            target: Target::Key(key),
            read: cols,
            write: ColumnSet::NONE,
            kind: AccessKind::Read,
        }
    }
    pub fn update(table: TableId, key: u64, read: ColumnSet, write: ColumnSet) -> Self {
        Access {
            table,
            target: Target::Key(key),
            read,
            write,
            kind: AccessKind::Update,
        }
    }
    pub fn insert(table: TableId, key: u64) -> Self {
        Access {
            table,
            target: Target::Key(key),
            read: ColumnSet::NONE,
            write: ColumnSet::ALL,
            kind: AccessKind::Insert,
        }
    }
    pub fn delete(table: TableId, key: u64) -> Self {
        Access {
            table,
            target: Target::Key(key),
            read: ColumnSet::NONE,
            write: ColumnSet::ALL,
            kind: AccessKind::Delete,
        }
    }
    /// A read-modify-write of some keys in `lo..=hi` (which ones, only running the transaction
    /// tells): the bounds of a data-dependent update ([`Program::declare_bounds`]).
    pub fn update_within(
        table: TableId,
        lo: u64,
        hi: u64,
        read: ColumnSet,
        write: ColumnSet,
    ) -> Self {
        Access {
            table,
            target: Target::Range { lo, hi },
            read,
            write,
            kind: AccessKind::Update,
        }
    }
    pub fn scan(table: TableId, lo: u64, hi: u64, cols: ColumnSet) -> Self {
        Access {
            table,
            target: Target::Range { lo, hi },
            read: cols,
            write: ColumnSet::NONE,
            kind: AccessKind::Scan,
        }
    }
    /// Whether this access writes.
    pub fn is_write(&self) -> bool {
        matches!(
            self.kind,
            AccessKind::Update | AccessKind::Insert | AccessKind::Delete
        )
    }
    /// Whether a protocol that locks declared accesses before running may leave this one unlocked: a
    /// read or scan of a table that is read-only once loaded ([`crate::storage::TableSpec::read_only`]),
    /// which nothing can conflict with. A declared write to such a table is refused (`InvalidData`).
    pub fn unlocked_in<M: Default + Send + Sync>(&self, db: &Database<M>) -> TxResult<bool> {
        let Some(t) = db.tables().get(self.table as usize) else {
            return Ok(false); // no such table: the protocol reports it where it always did
        };
        if !t.is_read_only() {
            return Ok(false);
        }
        if self.is_write() {
            return Err(read_only_write(t));
        }
        Ok(true)
    }
    /// Whether key `key` of `table` falls under this access.
    pub fn covers(&self, table: TableId, key: u64) -> bool {
        self.table == table
            && match self.target {
                Target::Key(k) => k == key,
                Target::Range { lo, hi } => (lo..=hi).contains(&key),
            }
    }
}

/// A program's conflict units ([`Program::conflict_units`]): for key `key` of `table`, the unit its
/// accesses conflict over — at the fine grain a protocol tracks by default, or, with `coarse`, at the
/// coarser grain its `-coarse` variant uses — or `None` when the key is its own unit. Two accesses
/// conflict (by their modes) when they name the same unit of the same table, whatever their keys, so
/// a unit may cover keys a transaction never touches (a false conflict), never split keys that
/// conflict. Requirements: every key of one table gets a unit or none gets one (for a given
/// `coarse`), and each unit is a contiguous range of keys, so that a key range with both ends in one
/// unit lies in it (TPC-C's composite keys put the warehouse and district first).
pub type ConflictUnits = fn(table: TableId, key: u64, coarse: bool) -> Option<u64>;

/// A workload's partitioning ([`Program::partitioning`]): the **partition key** of key `key` of
/// `table` — TPC-C's warehouse — so that a partition-per-core protocol of `n` partitions puts the
/// key in partition `partition_key % n` instead of `key % n`. Requirements: every program of a
/// workload returns the same function (two transactions must agree where a record lives), and it
/// is nondecreasing in the key within a table over every range a program scans, so that a range's
/// partitions lie between its ends'.
pub type Partitioning = fn(table: TableId, key: u64) -> u64;

/// A transaction type's logic, as pieces with declared accesses.
pub trait Program {
    /// A short name of the transaction type (for per-type statistics), e.g. "NewOrder".
    fn name(&self) -> &'static str;

    /// Number of pieces.
    fn pieces(&self) -> usize;

    /// Appends the accesses piece `piece` will make. Called after the pieces it depends on have run.
    fn declare(&self, piece: usize, out: &mut Vec<Access>);

    /// Appends the earlier pieces piece `piece` needs the results of (its data edges: PWV runs a
    /// piece only after these). Default: every earlier piece.
    fn depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        out.extend(0..piece);
    }

    /// Appends the earlier pieces whose results piece `piece`'s *declaration* needs (a key found in
    /// an index, an id a counter hands out): a protocol that plans every access up front runs them
    /// first, in a reconnaissance pass. Default: [`Self::depends_on`]. A piece whose logic needs
    /// earlier results but whose keys are the program's inputs returns fewer (none), and is planned
    /// without reconnaissance.
    fn declaration_depends_on(&self, piece: usize, out: &mut Vec<usize>) {
        self.depends_on(piece, out)
    }

    /// For a piece whose declaration depends on earlier pieces' results
    /// ([`Self::declaration_depends_on`]): appends accesses that cover every access it can make,
    /// known without those results (a Payment's customer found by last name is one of its
    /// district's customers), and returns `true`; `false` (the default), appending nothing, when
    /// it cannot bound them. A planner that locks coarsely enough (H-Store's partitions:
    /// [`crate::protocols::kit::plan::Planner::plan_known`]) takes the bounds instead of running a
    /// reconnaissance pass.
    fn declare_bounds(&self, _piece: usize, _out: &mut Vec<Access>) -> bool {
        false
    }

    /// The last piece whose own logic may abort; once it has run the transaction will commit unless the
    /// protocol aborts it. `None`: no piece aborts by its own logic.
    fn commit_point(&self) -> Option<usize> {
        None
    }

    /// Runs piece `piece` against `tx`.
    fn run_piece<T: Tx>(&mut self, piece: usize, tx: &mut T) -> TxResult<()>;

    /// How this program's keys group into **conflict units**, for protocols that track conflicts
    /// over ranges a program names rather than key by key (PWV §4.5.2 and §5.3: TPC-C's
    /// district-keyed tables by (warehouse, district), and, coarse, Stock by warehouse). `None`
    /// (the default): every key is its own unit.
    fn conflict_units(&self) -> Option<ConflictUnits> {
        None
    }

    /// How the workload's keys split into partitions, for the partition-per-core protocols
    /// (`hstore`, `hstore-lockmgr`, the `vll-partitioned` family): TPC-C by warehouse, as H-Store
    /// partitions it. `None` (the default): key `k` belongs to partition `k % n`.
    fn partitioning(&self) -> Option<Partitioning> {
        None
    }

    /// Whether piece `piece`'s writes **commute** with those of every other piece that says so
    /// (default: no piece's do). Only `ic3-comm` reads it (IC3's commutativity optimization, the
    /// PWV paper's chopping-comm); every other protocol, and `ic3`, treat such a piece as any other.
    ///
    /// The promise, per record: each writing access of the piece (its reads of that record
    /// included) and any other commuting access to the record, from any program, applied in
    /// either order leave the record the same and hand each program the same results — an
    /// increment of a total whose old value the program never sees (TPC-C Payment's `w_ytd`,
    /// `d_ytd`), read beside columns nobody writes. A decrement that branches on the value (TPC-C
    /// Stock's `s_quantity`), a counter whose value the program uses (`d_next_o_id`), an append to
    /// a string (`c_data`) do not commute. The piece's reads of records it does not write are plain
    /// reads, and its accesses conflict with other pieces' accesses as usual. `ic3-comm` keeps
    /// commuting writers in commit order all the same (its writes are in place), so a wrong promise
    /// costs it aborts, never serializability (see `protocols::ic3`).
    fn commutes(&self, _piece: usize) -> bool {
        false
    }

    /// Whether this program is a **BASE transaction** (Salt, Xie 2016 Ch. 3), and where its
    /// **alkaline subtransactions** begin: appends the piece indices, ascending and each in
    /// `1..pieces()`, at which a new alkaline subtransaction starts (the first always starts at piece
    /// 0). Appending none — the default — keeps the program an **ACID** transaction, which is what
    /// every protocol but `salt`/`salt-local` runs it as anyway.
    ///
    /// A workload BASE-ifies a transaction by marking boundaries here, not by writing it twice: the
    /// pieces are the same for every protocol. Under `salt` the BASE transaction is **accepted** once
    /// its first alkaline subtransaction commits; from then on it always commits: a later alkaline
    /// subtransaction that the protocol aborts (a lock wait timed out) is rolled back and run again,
    /// and one that fails by its own logic or data is rolled back and handed to
    /// [`Self::alkaline_failed`]. Each alkaline subtransaction's pieces therefore may run more than
    /// once, and must not rely on outputs of an attempt that failed.
    fn alkaline_starts(&self, _out: &mut Vec<usize>) {}

    /// The **exception handler** of alkaline subtransaction `sub` (numbered from 0 in the order of
    /// [`Self::alkaline_starts`]; always ≥ 1, since a failure of the first one aborts the whole BASE
    /// transaction before it was accepted), called after the subtransaction's writes were rolled
    /// back, with the abort that failed it. The handler may change the program's own state (for
    /// the later subtransactions to compensate) and says how the BASE transaction goes on. Default:
    /// [`AfterFailure::End`].
    fn alkaline_failed(&mut self, _sub: usize, _abort: &super::error::Abort) -> AfterFailure {
        AfterFailure::End
    }

    /// The wait for **remote reads** this attempt still has ahead of it, taken over by the protocol.
    ///
    /// A workload that simulates a partitioned deployment's network (`vll-micro --remote-wait`) makes a
    /// multi-partition transaction sleep in [`Self::run_piece`], before its first access at the other
    /// partition, under whatever its protocol holds. A protocol whose thread can work on other
    /// transactions meanwhile — the VLL paper's single-threaded VLL and its **Waiting** state (Fig. 3)
    /// — calls this once the transaction holds its locks and before running it: `Some(wait)` means
    /// "set me aside for `wait`, then run me", and the program no longer sleeps itself in the attempt
    /// that follows. Every other protocol leaves the sleep where it is. Default: no wait.
    fn take_remote_wait(&mut self) -> Option<std::time::Duration> {
        None
    }
}

/// How an accepted BASE transaction goes on after one of its alkaline subtransactions failed
/// ([`Program::alkaline_failed`]): it commits either way (an accepted BASE transaction never rolls
/// back), with or without its later subtransactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterFailure {
    /// Go on with the next alkaline subtransaction.
    Continue,
    /// End the BASE transaction here: what committed so far stays.
    End,
}

/// A program's simulated remote-read round trip ([`Program::take_remote_wait`]): paid once per
/// attempt, either by sleeping where the program reaches it ([`Self::pay`]) or, taken over by a
/// protocol that sets the transaction aside meanwhile ([`Self::take`]), not at all in the attempt
/// that follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteWait {
    wait: Option<std::time::Duration>,
    taken: bool,
}

impl RemoteWait {
    /// A new transaction's wait (`None`: it reads nothing remotely).
    pub fn new(wait: Option<std::time::Duration>) -> Self {
        RemoteWait { wait, taken: false }
    }
    /// The wait, taken over by the protocol: the next [`Self::pay`] does not sleep.
    pub fn take(&mut self) -> Option<std::time::Duration> {
        self.taken = self.wait.is_some();
        self.wait
    }
    /// Where the program meets its remote reads: sleeps for the wait unless the protocol took it
    /// over for this attempt.
    pub fn pay(&mut self) {
        if !std::mem::take(&mut self.taken) {
            if let Some(wait) = self.wait {
                std::thread::sleep(wait);
            }
        }
    }
}

/// Prefetches the records of every piece whose declaration does not depend on earlier pieces, so that a
/// transaction's cache misses overlap instead of following one another. The benchmark harness calls it
/// before [`crate::protocols::Protocol::execute`] (for every protocol alike, unless `--no-prefetch`);
/// it changes nothing but timing.
pub fn prefetch_declared<P: Program, M: Default + Send + Sync>(program: &P, db: &Database<M>) {
    thread_local! {
        static SCRATCH: std::cell::RefCell<(Vec<Access>, Vec<usize>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    SCRATCH.with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return;
        };
        let (accesses, deps) = &mut *s;
        accesses.clear();
        for i in 0..program.pieces() {
            deps.clear();
            program.declaration_depends_on(i, deps);
            if deps.is_empty() {
                program.declare(i, accesses);
            }
        }
        prefetch_accesses(accesses, db);
    });
}

/// The prefetch of [`prefetch_declared`] for accesses already declared: two tight loops, every key's
/// index entry, then every key's record (its probe then hits the cache). Tight, so that the
/// out-of-order window spans several keys' probes and their misses overlap.
pub fn prefetch_accesses<M: Default + Send + Sync>(accesses: &[Access], db: &Database<M>) {
    prefetch_index_entries(accesses, db);
    for (t, k) in point_keys(accesses, db) {
        t.prefetch_row(k);
    }
}

/// The first round of [`prefetch_accesses`] alone: starts loading the index entry of every declared
/// key, for a caller that probes every key next anyway and prefetches each record as its probe
/// finds it (VLL's planning).
pub fn prefetch_index_entries<M: Default + Send + Sync>(accesses: &[Access], db: &Database<M>) {
    for (t, k) in point_keys(accesses, db) {
        t.prefetch_index(k);
    }
}

/// The point accesses of `accesses` to tables that exist, as (table, key).
fn point_keys<'a, M: Default + Send + Sync>(
    accesses: &'a [Access],
    db: &'a Database<M>,
) -> impl Iterator<Item = (&'a crate::storage::Table<M>, u64)> + 'a {
    accesses.iter().filter_map(|a| match a.target {
        Target::Key(k) if (a.table as usize) < db.tables().len() => Some((db.table(a.table), k)),
        _ => None,
    })
}

/// Runs every piece of `program`, in order, inside `tx` (how interactive protocols execute programs).
#[inline]
pub fn run_pieces<P: Program, T: Tx>(program: &mut P, tx: &mut T) -> TxResult<()> {
    for i in 0..program.pieces() {
        program.run_piece(i, tx)?;
    }
    Ok(())
}
