//! `ic3`, `ic3-comm` — transaction chopping with runtime pipelining: IC3 (Wang, Mu, Wang, Zhang,
//! Li, "Scaling Multicore Databases via Constrained Parallel Execution", SIGMOD 2016), as the PWV
//! paper's chopping baselines run it (Faleiro, Abadi, Hellerstein, PVLDB 2017 §5: "IC3 uses a
//! serializable protocol to schedule transactions' constituent pieces, and dynamically enforces
//! causal dependencies across conflicting pieces. Our chopping implementation uses locking").
//!
//! # The idea
//!
//! 2PL hides a transaction's writes until it commits, so a transaction that updates a hot record
//! early holds everyone else off the record for the rest of its run. IC3 chops each transaction
//! into **pieces** and runs every piece as a small transaction of its own: its locks are released,
//! and its writes visible, as soon as the piece ends. What keeps the whole transactions serializable
//! is that conflicting pieces of two transactions must run in the same order, and that a transaction
//! commits only after those whose uncommitted writes it saw:
//!
//! ```text
//!   T1: [a: x += 1] [b: y += 1]           T2: [c: x += 1] [d: y += 1]
//!
//!   2PL:  T1 a ─ b ─ commit │ T2 c ─ d ─ commit                  (T2 waits for all of T1)
//!   IC3:  T1 a ─ b ───────── commit
//!         T2    c (after a: T2 depends on T1) ─ d (waits until T1's b is done) ─ commit (after T1)
//! ```
//!
//! Each record keeps an **access list** of the uncommitted transactions that touched it. A piece
//! that touches a record depends on the latest conflicting entry there; before the piece runs,
//! every transaction it depends on must have finished all its pieces that may conflict with it
//! (IC3's static analysis: two pieces conflict when they touch a common table and one writes it);
//! at commit, every one of them must have committed, and if one aborted, the dependent aborts too —
//! a **cascading abort**, the price of early visibility.
//!
//! # Where the paper lives in the code
//!
//! | IC3                                                      | here                                  |
//! |----------------------------------------------------------|---------------------------------------|
//! | static analysis: SC-graph, C-edges between pieces (§3)   | [`footprint`]: tables read/written per piece, from [`Program::declare`] |
//! | a piece runs as a mini-transaction, OCC (§4.1)           | piece locks, in key order, for the piece's run ([`txn`]: the PWV paper's "locking") |
//! | the access list per record; `deps(T)` ← latest conflicting entry (§4.2) | the kit's [`pipeline::access_list`](crate::protocols::kit::pipeline::access_list) |
//! | `RunPiece`: wait for each `T'` in deps to finish its pieces that conflict with `p` (Alg. 1) | `Attempt::piece` ([`txn`]), the kit's [`board`](crate::protocols::kit::pipeline::board) and [`footprint::Published`] |
//! | commit after every `T'` in deps; cascading aborts (§4.3) | `Attempt::commit`, `Attempt::abort` ([`txn`]) |
//! | commutative operations (§5): chopping-comm                | `ic3-comm`, [`Program::commutes`]     |
//!
//! # Why it is serializable — and why waits cannot hang
//!
//! Every pair of conflicting accesses to a record is linked by a chain of dependencies (a reader
//! depends on the last writer; a writer on the last writer and every reader since: see
//! the kit's [`access_list`](crate::protocols::kit::pipeline::access_list)), and a transaction commits only after every transaction it depends on committed.
//! So if committed `T1` accessed a record before committed `T2` in a conflicting way, `T1` committed
//! first: **the commit order is a serialization order**, whatever the pieces did. A transaction
//! that saw or overwrote an aborted write aborts too, and an aborted transaction puts each record
//! back only after everyone who came later on it has put theirs back ([`piece`]), so no committed
//! transaction keeps anything an aborted one wrote.
//!
//! IC3's piece rule is what keeps dependencies from forming a cycle (which would leave each member
//! waiting at commit for the next). IC3 proves this for piece graphs its static analysis has
//! cleaned of *crossing* conflicts (pieces `p1 < p2` of one type that conflict with `q2 > q1` of
//! another), merging the pieces involved. Ordo's pieces are the programs' own and a footprint is
//! learnt per transaction, so crossings remain possible (YCSB's pieces all touch one table); a
//! cycle then shows as a cycle of waits. Every wait publishes whom it waits for, the waits-for
//! graph has one edge out of each waiter, and the member with the largest id on a cycle aborts
//! (`Deadlock`, see the kit's [`board`](crate::protocols::kit::pipeline::board)). Piece locks are taken in one global order and held only while a
//! piece runs (no piece waits for a transaction while holding them), and an abort undoes each record
//! as soon as that record's later accessors have undone theirs, so neither can close a cycle.
//!
//! # Choices of this implementation
//!
//! * **Pieces** are the program's ([`Program::pieces`]); IC3 does not merge or split them.
//! * **Piece locks** are the kit's fair reader-writer [`TicketLock`](crate::protocols::kit::ticket)
//!   beside each record, taken for every key a piece declares (a key range key by key, present or
//!   not, so a scan is phantom-safe), in (table, key) order. An access outside the declaration
//!   fails with the retryable `Validation`.
//! * **A key range too wide to lock** key by key (TPC-C's Delivery) and **interactive transactions**
//!   run alone under a database-wide barrier (the kit's [`alone`](crate::protocols::kit::pipeline::alone)): `Interactive::OneAtATime` — `ordo sql`
//!   drives the protocol, `ordo spec`, which overlaps sessions, refuses it.
//! * **Commutativity** (`ic3-comm`): the writes of pieces that say they commute
//!   ([`Program::commutes`]) conflict with no other such writes in the static analysis, and a
//!   commuting write after a commuting write does not order the two transactions' pieces: neither
//!   waits for the other's pieces. Unlike IC3, it keeps them in **commit order** (a commuting write
//!   still depends on the one before it, and aborts with it): writes are made in place and undone
//!   by restoring an image, which is only right once every later write of the record is undone, and
//!   the checker orders versions per record. So `ic3-comm` gives up less concurrency than IC3's,
//!   and a wrong promise costs it aborts, never serializability.
//! * **Memory**: a transaction leaves every access list when it commits or has undone its writes,
//!   so lists hold only transactions in flight (at most one per worker).

pub mod footprint;
pub mod txn;

#[cfg(test)]
mod tests;

use crate::options::OptionSpec;
use crate::protocols::kit::barrier::Barrier;
use crate::protocols::kit::pipeline::access_list::{Dep, PipeRecord, Touched};
use crate::protocols::kit::pipeline::alone::Alone;
use crate::protocols::kit::pipeline::board::Board;
use crate::protocols::kit::pipeline::piece::Run;
use crate::protocols::kit::plan::LockRequest;
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{Access, IdLedger, Program, Recorder, TxResult, TxnIds};
use footprint::{Fp, Learned, Published};
use std::sync::Arc;

const PAPER: &str = "Wang, Mu, Wang, Zhang, Li: Scaling multicore databases via constrained \
parallel execution (IC3, SIGMOD 2016); as in Faleiro, Abadi, Hellerstein, PWV (PVLDB 2017) §5 \
(chopping, chopping-comm)";

/// What tells `ic3` and `ic3-comm` apart.
pub trait Variant: Send + Sync + 'static {
    /// Whether pieces that say their writes commute ([`Program::commutes`]) are taken at their word.
    const COMM: bool;
    const INFO: ProtocolInfo;
}

/// `ic3`: every write conflicts.
pub struct Plain;
impl Variant for Plain {
    const COMM: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "ic3",
        summary:
            "transaction chopping with runtime pipelining (IC3): each piece a mini-transaction \
                  under piece locks, its writes visible at once; conflicting pieces kept in one \
                  order through per-record access lists; commit after the transactions depended \
                  on, cascading aborts (the PWV paper's chopping)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: NO_KNOBS,
    };
}

/// `ic3-comm`: pieces whose writes commute do not order each other.
pub struct Comm;
impl Variant for Comm {
    const COMM: bool = true;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "ic3-comm",
        summary: "IC3 with commutativity: pieces whose writes commute (Program::commutes: TPC-C \
                  Payment's YTD increments) never wait for each other's pieces (the PWV paper's \
                  chopping-comm)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: NO_KNOBS,
    };
}

const NO_KNOBS: &[&OptionSpec] = &[];

/// IC3 in variant `V` (see the module docs).
pub struct Ic3<V: Variant> {
    db: Database<PipeRecord>,
    board: Board,
    published: Published,
    barrier: Barrier,
    ids: Arc<IdLedger>,
    _v: std::marker::PhantomData<fn() -> V>,
}

/// The PWV paper's chopping.
pub type Ic3Plain = Ic3<Plain>;
/// The PWV paper's chopping-comm.
pub type Ic3Comm = Ic3<Comm>;

/// Per-thread state: ids, the executor and undo log, and reusable buffers.
pub struct Ic3Worker {
    id: u32,
    ids: TxnIds,
    run: Run,
    /// The running piece's declaration and locks.
    decls: Vec<Access>,
    locks: Vec<LockRequest>,
    /// What the transaction depends on, and what the running piece found.
    deps: Vec<Dep>,
    found: Vec<Dep>,
    touched: Vec<Touched>,
    /// Its pieces' footprints, and what this worker learnt of each transaction type's.
    fps: Vec<Fp>,
    learned: Learned,
    scratch: Vec<usize>,
}

impl<V: Variant> Ic3<V> {
    /// The board of live transactions (tests).
    #[cfg(test)]
    fn board(&self) -> &Board {
        &self.board
    }
}

impl<V: Variant> Protocol for Ic3<V> {
    type Meta = PipeRecord;
    type Worker = Ic3Worker;
    type Tx<'w> = Alone<'w>;

    const INFO: ProtocolInfo = V::INFO;

    /// The board has a slot per worker.
    const MAX_WORKERS: usize = 256;

    fn open(db: Database<PipeRecord>, config: &ProtocolConfig) -> Self {
        Ic3 {
            db,
            board: Board::new(Self::MAX_WORKERS),
            published: Published::new(Self::MAX_WORKERS),
            barrier: Barrier::new(config.threads),
            ids: IdLedger::new(),
            _v: std::marker::PhantomData,
        }
    }

    fn db(&self) -> &Database<PipeRecord> {
        &self.db
    }

    fn worker(&self, id: u32, recording: bool) -> Ic3Worker {
        assert!(
            (id as usize) < Self::MAX_WORKERS,
            "ic3 runs at most {} workers",
            Self::MAX_WORKERS
        );
        Ic3Worker {
            id,
            ids: self.ids.lease(id),
            run: Run::new(id, recording),
            decls: Vec::new(),
            locks: Vec::new(),
            deps: Vec::new(),
            found: Vec::new(),
            touched: Vec::new(),
            fps: Vec::new(),
            learned: Learned::default(),
            scratch: Vec::new(),
        }
    }

    fn recorder(w: &mut Ic3Worker) -> &mut Recorder {
        &mut w.run.exec.rec
    }

    /// An interactive transaction: alone, holding the whole database (see the kit's [`Alone`]).
    fn begin<'w>(&'w self, w: &'w mut Ic3Worker) -> Alone<'w> {
        let all = self.barrier.exclusive();
        let id = w.ids.next_id();
        Alone::new(&self.db, &mut w.run, id, all)
    }

    /// Runs the program piece by piece (see [`txn`]).
    fn execute<P: Program>(&self, w: &mut Ic3Worker, program: &mut P) -> TxResult<()> {
        self.run(w, program)
    }
}
