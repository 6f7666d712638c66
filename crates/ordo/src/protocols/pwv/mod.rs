//! `pwv`, `pwv-coarse` — piece-wise visibility with early write visibility (Faleiro, Abadi,
//! Hellerstein, PVLDB 10(5) 2017).
//!
//! # The idea
//!
//! Serializable protocols hide a transaction's writes until it ends — 2PL holds its locks, OCC
//! buffers its writes — because until then the system might still abort it. A deterministic system
//! aborts a transaction only for its own logic, so once the pieces that can abort have run (its
//! **commit point**) it is certain to commit. **Early write visibility**: a write before the commit
//! point is visible once every piece before the commit point has finished; a write after it, as soon
//! as it is done. No dirty reads, no cascading aborts — and a transaction that updates a hot record
//! first no longer holds it for the rest of its run (the paper's Fig. 1: locking falls ~6× as the hot
//! record moves to the front; PWV does not).
//!
//! PWV schedules *pieces*, not transactions: each transaction is a DAG of pieces, batches of
//! transactions arrive in a total order, and each core builds its partition's dependency graph for
//! the whole batch before running any of it.
//!
//! ```text
//!   Txn 1: [P0 → P1 → P2]  commit point after P0      core A (records x, y)   core B (record z)
//!   Txn 2: [Q0 → Q1]       no abort                     x: T1.P0  T2.Q0          z: T1.P2  T2.Q1
//!                                                       Q0 waits for T1's abortable pieces (1a);
//!                                                       Q1 waits only for P2 itself (1b)
//! ```
//!
//! # Where the paper lives in the code
//!
//! | paper                                                  | here                                   |
//! |--------------------------------------------------------|----------------------------------------|
//! | decomposition into a DAG of pieces; data and commit edges (§4.1) | [`plan`]: the program's pieces, [`Program::depends_on`], the commit point |
//! | dependency RVPs, the commit RVP (§4.2)                 | each piece's `wait` counter, `TxnPlan::commit_rvp` ([`run`]) |
//! | ordering constraints 1a, 1b, 2 (§4.3)                  | the per-unit key lists and their turns ([`graph`]) |
//! | batches with a total order; one core per partition (§4.4.1) | [`batch`]: the coordinator, the batch order |
//! | partition-local dependency graph, built first (§4.4.2) | [`graph`], built by `run::process`     |
//! | the three checks; Unexecuted → Executed → Completed; remote undo (§4.4.2) | [`run`]           |
//! | conservative ranges: PWV-coarse (§4.5.2, §5.3)          | [`Program::conflict_units`], `pwv-coarse` |
//! | results returned at batch end (epoch-style, §4.7)       | `Pwv::run_worker` reports after the batch |
//!
//! # Choices of this implementation
//!
//! * **Pieces are the program's.** A workload that wants finer pieces splits its program further
//!   and says so in [`Program::depends_on`]; PWV does not split programs itself. A piece may touch
//!   several records, even on several partitions: it runs on the core of its first unit once every
//!   unit's turn came (the paper gives each statement its own piece, on one partition).
//! * **A transaction's pieces run one at a time** (on any cores): a program is one mutable object,
//!   and pieces pass results through it. Pieces of *different* transactions run in parallel as the
//!   graph allows, which is what early visibility needs; the intra-transaction parallelism the paper
//!   also exploits is left out.
//! * **Batch order.** Each worker thread draws `--pwv-batch / threads` transactions; the batch order
//!   interleaves them, and the serialization order of a batch is that order.
//! * **Barriers.** A transaction with a key range too wide to order key by key and that no unit
//!   covers runs alone after the rest of its batch.
//! * **Interactive transactions** ([`Protocol::begin`]) run between batches, one at a time, holding
//!   the whole database (`Interactive::OneAtATime`: `ordo sql` yes, `ordo spec` no).
//! * **Aborts a program did not plan.** A stale reconnaissance (an access outside a piece's
//!   declaration) fails its piece with `Validation`; so that it can, the pieces up to the last one
//!   whose declaration came from reconnaissance and names records count as abortable. The
//!   transaction is undone and planned again in the next batch. A failure past the commit point is a
//!   bug in the program (it may abort only up to its commit point) and panics.
//!
//! `pwv` tracks records, and the units a program names for its own tables (TPC-C's district-keyed
//! tables by (warehouse, district), as the paper does for both variants); `pwv-coarse` also takes the
//! coarser units the program offers (TPC-C's Stock by warehouse).

pub mod batch;
pub mod graph;
pub mod piece;
pub mod plan;
pub mod run;

#[cfg(test)]
mod tests;

use crate::options::{OptionSpec, ValueKind};
use crate::protocols::kit::exec::{Cover, ExecState, ExecTx, HoldingTx};
use crate::protocols::{Interactive, Isolation, Protocol, ProtocolConfig, ProtocolInfo};
use crate::storage::Database;
use crate::txn::{Abort, IdLedger, Program, Recorder, RequestSource, Ticket, TxResult};
use batch::{Coordinator, Part, TxnSlot, Txns};
use parking_lot::Mutex;
use piece::{PieceTx, TxnState};
use plan::{Decl, PartPlan};
use std::any::Any;
use std::sync::Arc;

/// `--pwv-batch`: transactions per batch, over all workers (the paper's 10,000).
pub const BATCH_KNOB: OptionSpec = OptionSpec::new(
    "pwv-batch",
    "N",
    ValueKind::Int {
        min: 1,
        max: 1_000_000,
    },
    "pwv, pwv-coarse: transactions per batch, over all workers (the paper runs 10,000; its latency \
     figure 5,000); each worker draws its share, and results are reported when the batch ends.",
)
.default("10000");

const PAPER: &str =
    "Faleiro, Abadi, Hellerstein: High performance transactions via early write visibility (PVLDB 2017)";

/// What tells `pwv` and `pwv-coarse` apart.
pub trait Granularity: Send + Sync + 'static {
    /// Whether the program's coarse units are used ([`Program::conflict_units`]).
    const COARSE: bool;
    const INFO: ProtocolInfo;
}

/// `pwv`: records, and the units a program names for its own tables.
pub struct Fine;
impl Granularity for Fine {
    const COARSE: bool = false;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "pwv",
        summary:
            "piece-wise visibility: batches of pieces scheduled per partition, writes visible \
                  once their transaction can no longer abort (early write visibility)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&BATCH_KNOB],
    };
}

/// `pwv-coarse`: conflicts over the coarse ranges a program names (TPC-C: Stock by warehouse).
pub struct Coarse;
impl Granularity for Coarse {
    const COARSE: bool = true;
    const INFO: ProtocolInfo = ProtocolInfo {
        name: "pwv-coarse",
        summary: "PWV with conflicts tracked over coarse ranges the program names (§4.5.2)",
        paper: PAPER,
        isolation: Isolation::Serializable,
        interactive: Interactive::OneAtATime,
        knobs: &[&BATCH_KNOB],
    };
}

/// The PWV protocol.
pub struct Pwv<G: Granularity> {
    db: Database<()>,
    coord: Coordinator,
    ids: Arc<IdLedger>,
    /// Transactions per batch, over all workers.
    batch: usize,
    /// Partitions: one per worker the protocol was opened for.
    partitions: u32,
    _g: std::marker::PhantomData<fn() -> G>,
}

/// Per-thread state: ids, the history, and the executor of interactive transactions.
pub struct PwvWorker {
    id: u32,
    recording: bool,
    exec: ExecState,
}

/// One transaction of a worker's share of a batch.
struct Slot<P> {
    program: P,
    state: TxnState,
    ticket: Ticket,
    outcome: Option<Result<(), Abort>>,
}

impl<P: Program> TxnSlot for Slot<P> {
    fn run_piece(
        &mut self,
        piece: usize,
        db: &Database<()>,
        decls: Option<&[Decl]>,
        coarse: bool,
    ) -> TxResult<()> {
        let units = self.program.conflict_units();
        let mut tx = PieceTx {
            db,
            st: &mut self.state,
            decls,
            units,
            coarse,
        };
        self.program.run_piece(piece, &mut tx)
    }
    fn state(&mut self) -> &mut TxnState {
        &mut self.state
    }
    fn set_outcome(&mut self, outcome: Result<(), Abort>) {
        self.outcome = Some(outcome);
    }
}

/// A worker's share of a batch: its slots (the first `len` in use).
struct Share<P> {
    slots: Vec<Mutex<Slot<P>>>,
    len: usize,
}

impl<P: Program + Send + 'static> Txns for Share<P> {
    fn with(&self, txn: usize, f: &mut dyn FnMut(&mut dyn TxnSlot)) -> Option<()> {
        let mut slot = self.slots[txn].try_lock()?;
        f(&mut *slot);
        Some(())
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl<G: Granularity> Pwv<G> {
    /// Waits until the batch that shared `part` has let go of it, and returns it.
    fn unique(part: &mut Arc<Part>) -> &mut Part {
        let backoff = crossbeam_utils::Backoff::new();
        while Arc::get_mut(part).is_none() {
            backoff.snooze();
        }
        Arc::get_mut(part).expect("no other holder")
    }

    /// Fills the share with the transactions to retry and new ones drawn from `requests` (up to
    /// `want`), and plans them; returns how many there are.
    fn draw<R: RequestSource>(
        &self,
        w: &mut PwvWorker,
        part: &mut Part,
        requests: &mut R,
        want: usize,
    ) -> usize {
        let share = part
            .txns
            .as_any_mut()
            .downcast_mut::<Share<R::Program>>()
            .expect("a worker's share holds its source's programs");
        while share.len < want {
            if share.slots.len() == share.len {
                share.slots.push(Mutex::new(Slot {
                    program: requests.program(),
                    state: TxnState::new(w.id, w.recording),
                    ticket: Ticket::now(0),
                    outcome: None,
                }));
            }
            let slot = share.slots[share.len].get_mut();
            let Some(ticket) = requests.next(&mut slot.program) else {
                break;
            };
            slot.ticket = ticket;
            share.len += 1;
        }
        part.plan.clear();
        for slot in &mut share.slots[..share.len] {
            let slot = slot.get_mut();
            slot.state.id = w.exec.next_id();
            slot.outcome = None;
            if let Err(a) = part.plan.add(
                &mut slot.program,
                &self.db,
                G::COARSE,
                self.partitions,
                part.home,
            ) {
                part.plan.add_refused();
                slot.outcome = Some(Err(a));
            }
        }
        share.len
    }

    /// After a batch: reports each transaction's outcome, keeps those to retry (a stale
    /// reconnaissance) at the front of the share, and hands the history to the worker.
    fn report<R: RequestSource>(w: &mut PwvWorker, part: &mut Part, requests: &mut R) {
        let share = part
            .txns
            .as_any_mut()
            .downcast_mut::<Share<R::Program>>()
            .expect("a worker's share holds its source's programs");
        let mut kept = 0;
        for i in 0..share.len {
            let slot = share.slots[i].get_mut();
            let outcome = slot.outcome.take().unwrap_or_else(|| {
                // A program with no pieces: nothing to order, nothing to run.
                slot.state.exec.rec.finish(slot.state.id, true);
                Ok(())
            });
            w.exec.recorder().append(&mut slot.state.exec.rec);
            match outcome {
                Err(a) if a.is_retryable() => {
                    requests.aborted(a.reason);
                    share.slots.swap(i, kept);
                    kept += 1;
                }
                outcome => requests.finished(slot.ticket, outcome),
            }
        }
        share.len = kept;
    }
}

impl<G: Granularity> Protocol for Pwv<G> {
    type Meta = ();
    type Worker = PwvWorker;
    type Tx<'w> = HoldingTx<'w, (), Between<'w>>;

    const INFO: ProtocolInfo = G::INFO;

    fn open(db: Database<()>, config: &ProtocolConfig) -> Self {
        let partitions = config.threads.max(1) as u32;
        let batch = config
            .knobs
            .int_or_default(&BATCH_KNOB)
            .unwrap_or_else(|e| unreachable!("a checked PWV knob: {e}"))
            as usize;
        Pwv {
            db,
            coord: Coordinator::new(partitions),
            ids: IdLedger::new(),
            batch,
            partitions,
            _g: std::marker::PhantomData,
        }
    }

    fn db(&self) -> &Database<()> {
        &self.db
    }

    fn worker(&self, id: u32, recording: bool) -> PwvWorker {
        PwvWorker {
            id,
            recording,
            exec: ExecState::new(self.ids.lease(id), recording),
        }
    }

    fn recorder(w: &mut PwvWorker) -> &mut Recorder {
        w.exec.recorder()
    }

    /// An interactive transaction: between two batches, alone, over the whole database.
    fn begin<'w>(&'w self, w: &'w mut PwvWorker) -> Self::Tx<'w> {
        self.coord.begin_interactive();
        let between = Between(&self.coord);
        HoldingTx::new(ExecTx::new(&self.db, &mut w.exec, Cover::All), between)
    }

    /// PWV's loop: draw a share of a batch, plan it, run the batch with the other workers, report.
    fn run_worker<R: RequestSource>(&self, w: &mut PwvWorker, requests: &mut R) {
        let want = self.batch.div_ceil(self.partitions as usize).max(1);
        let mut part = Arc::new(Part {
            plan: PartPlan::default(),
            txns: Box::new(Share::<R::Program> {
                slots: Vec::new(),
                len: 0,
            }),
            home: w.id % self.partitions,
            worker: w.id,
        });
        self.coord
            .join(self.partitions as usize, std::time::Duration::from_secs(1));
        loop {
            let p = Self::unique(&mut part);
            if self.draw(w, p, requests, want) == 0 {
                break;
            }
            let (batch, rank) = self.coord.arrive(Arc::clone(&part));
            run::process(&batch, rank, &self.db, G::COARSE);
            drop(batch);
            if rank == 0 {
                self.coord.ended();
            }
            let p = Self::unique(&mut part);
            Self::report(w, p, requests);
        }
        self.coord.leave();
    }
}

/// An interactive transaction's hold on the time between batches (released when it ends).
pub struct Between<'a>(&'a Coordinator);

impl Drop for Between<'_> {
    fn drop(&mut self) {
        self.0.end_interactive();
    }
}
