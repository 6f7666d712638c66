//! Batches (§4.4.1): who takes part, in which order their transactions run, and the gate that lets an
//! interactive transaction in between two batches.
//!
//! Every worker thread that runs PWV's loop draws its share of a batch from its own request source,
//! plans it ([`super::plan`]) and **arrives** at the `Coordinator`; when every member has
//! arrived, the last one forms the `Batch`. The batch order interleaves the participants' drawn
//! transactions (the first of each participant, then the second of each, …; a barrier transaction
//! goes last), which is as total and as deterministic as a sequencer's log: given what each worker
//! drew, the order is fixed. The batch's partitions (one per worker the protocol was opened for, as
//! the paper gives each core one) are shared out among its participants; a worker whose source runs
//! dry leaves, and the others take its partitions from the next batch on.
//!
//! An interactive transaction ([`crate::protocols::Protocol::begin`]) is a barrier: it waits until no
//! batch runs and no batch forms until it ends.

use super::graph::GraphCell;
use super::piece::TxnState;
use super::plan::{Decl, PartPlan};
use crate::storage::Database;
use crate::txn::{wait, Abort, TxResult};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Barrier};

/// Runs the pieces of one participant's transactions (type-erased: each participant's programs are
/// its request source's type).
pub(super) trait Txns: Send + Sync {
    /// Runs `f` on transaction `txn` (its program and executor) unless another core holds it;
    /// `None` when it was busy.
    fn with(&self, txn: usize, f: &mut dyn FnMut(&mut dyn TxnSlot)) -> Option<()>;
    /// The typed share, for its owner between batches.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// One transaction as the piece that runs takes it: its program's pieces, its executor.
pub(super) trait TxnSlot {
    /// Runs piece `piece` on `db`, allowed what `decls` declare (`None`: anything).
    fn run_piece(
        &mut self,
        piece: usize,
        db: &Database<()>,
        decls: Option<&[Decl]>,
        coarse: bool,
    ) -> TxResult<()>;
    /// Its executor state: undo log, recorder, id.
    fn state(&mut self) -> &mut TxnState;
    /// Records how it ended (read by its owner after the batch).
    fn set_outcome(&mut self, outcome: Result<(), Abort>);
}

/// One participant's share of a batch: its transactions, planned, and the means to run them.
pub(super) struct Part {
    pub plan: PartPlan,
    pub txns: Box<dyn Txns>,
    /// The partition its unit-less pieces run at (its first).
    pub home: u32,
    /// Its worker's id: the batch orders participants by it, not by when they arrived.
    pub worker: u32,
}

/// A batch in progress.
pub(super) struct Batch {
    pub parts: Vec<Arc<Part>>,
    /// `(participant, transaction)` in batch order, barrier transactions last.
    pub order: Vec<(u32, u32)>,
    /// How many of `order`'s entries are not barriers (they come first).
    pub ordered: usize,
    /// One graph per partition.
    pub graphs: Arc<Vec<GraphCell>>,
    /// Per partition: pieces whose turn came, for its core to run (`participant << 32 | piece`).
    pub ready: Arc<Vec<Mutex<VecDeque<u64>>>>,
    /// Ordered transactions not yet ended (their last piece not Completed).
    pub remaining: AtomicUsize,
    /// Between building the graphs and running the first piece.
    pub built: Barrier,
    /// At the end, before outcomes are read.
    pub ended: Barrier,
}

impl Batch {
    /// How many partitions there are.
    pub fn partitions(&self) -> u32 {
        self.ready.len() as u32
    }

    /// Whether partition `p` belongs to participant `rank`.
    pub fn owns(&self, rank: usize, p: u32) -> bool {
        p as usize % self.parts.len() == rank
    }
}

/// What the coordinator's lock guards.
struct State {
    /// Worker threads in PWV's loop now.
    members: usize,
    /// Those that arrived for the next batch, with what they bring.
    arrived: Vec<Arc<Part>>,
    /// Counts batches formed (a waiter knows its batch formed when it moves).
    generation: u64,
    /// The batch formed last (taken by each participant as it wakes).
    current: Option<Arc<Batch>>,
    /// A batch is running (it stays set until its first participant reports its end).
    running: bool,
    /// An interactive transaction is running.
    interactive: bool,
}

/// Forms batches from the members that arrive, and keeps interactive transactions between them.
pub(super) struct Coordinator {
    state: Mutex<State>,
    changed: Condvar,
    graphs: Arc<Vec<GraphCell>>,
    ready: Arc<Vec<Mutex<VecDeque<u64>>>>,
}

impl Coordinator {
    /// A coordinator for batches over `partitions` partitions.
    pub fn new(partitions: u32) -> Self {
        let partitions = partitions.max(1) as usize;
        Coordinator {
            state: Mutex::new(State {
                members: 0,
                arrived: Vec::new(),
                generation: 0,
                current: None,
                running: false,
                interactive: false,
            }),
            changed: Condvar::new(),
            graphs: Arc::new((0..partitions).map(|_| GraphCell::default()).collect()),
            ready: Arc::new(
                (0..partitions)
                    .map(|_| Mutex::new(VecDeque::new()))
                    .collect(),
            ),
        }
    }

    /// A worker enters PWV's loop, and waits (at most `grace`) for `expected` workers to have
    /// entered it: the first batch should have every partition's core, not only the fastest
    /// thread's. (A caller that runs fewer loops than it opened the protocol for waits once.)
    pub fn join(&self, expected: usize, grace: std::time::Duration) {
        let mut s = self.state.lock();
        s.members += 1;
        self.changed.notify_all();
        let deadline = std::time::Instant::now() + grace;
        while s.members < expected && s.generation == 0 {
            if self.changed.wait_until(&mut s, deadline).timed_out() {
                break;
            }
        }
    }

    /// A worker leaves it (its source ran dry): the others no longer wait for it.
    pub fn leave(&self) {
        let mut s = self.state.lock();
        s.members -= 1;
        self.try_form(&mut s);
        self.changed.notify_all();
    }

    /// Brings `part` to the next batch; returns the batch once every member has arrived, and this
    /// participant's rank in it.
    pub fn arrive(&self, part: Arc<Part>) -> (Arc<Batch>, usize) {
        let mut s = self.state.lock();
        let generation = s.generation;
        s.arrived.push(Arc::clone(&part));
        self.try_form(&mut s);
        let _waiting = (s.generation == generation).then(wait::blocked);
        while s.generation == generation {
            self.changed.wait(&mut s);
        }
        let batch = s.current.clone().expect("a formed batch");
        let rank = batch
            .parts
            .iter()
            .position(|p| Arc::ptr_eq(p, &part))
            .expect("a participant of the batch it formed");
        (batch, rank)
    }

    /// Forms the batch if everyone arrived, no batch runs and no interactive transaction either.
    fn try_form(&self, s: &mut State) {
        if s.arrived.is_empty() || s.arrived.len() < s.members || s.running || s.interactive {
            return;
        }
        let mut parts = std::mem::take(&mut s.arrived);
        parts.sort_by_key(|p| p.worker);
        let n = parts.len();
        let mut order = Vec::new();
        let longest = parts.iter().map(|p| p.plan.txns.len()).max().unwrap_or(0);
        for i in 0..longest {
            for (j, p) in parts.iter().enumerate() {
                if p.plan.txns.get(i).is_some_and(|t| !t.barrier) {
                    order.push((j as u32, i as u32));
                }
            }
        }
        let ordered = order.len();
        for i in 0..longest {
            for (j, p) in parts.iter().enumerate() {
                if p.plan.txns.get(i).is_some_and(|t| t.barrier) {
                    order.push((j as u32, i as u32));
                }
            }
        }
        let remaining = order[..ordered]
            .iter()
            .filter(|&&(j, i)| !parts[j as usize].plan.txns[i as usize].pieces.is_empty())
            .count();
        s.current = Some(Arc::new(Batch {
            parts,
            order,
            ordered,
            graphs: Arc::clone(&self.graphs),
            ready: Arc::clone(&self.ready),
            remaining: AtomicUsize::new(remaining),
            built: Barrier::new(n),
            ended: Barrier::new(n),
        }));
        s.generation += 1;
        s.running = true;
        self.changed.notify_all();
    }

    /// The batch ended (called by one participant, after the end barrier).
    pub fn ended(&self) {
        let mut s = self.state.lock();
        s.running = false;
        s.current = None;
        self.try_form(&mut s);
        self.changed.notify_all();
    }

    /// Waits until no batch runs, then keeps batches out until [`Self::end_interactive`].
    pub fn begin_interactive(&self) {
        let mut s = self.state.lock();
        let _waiting = (s.running || s.interactive).then(wait::blocked);
        while s.running || s.interactive {
            self.changed.wait(&mut s);
        }
        s.interactive = true;
    }

    /// Lets batches form again.
    pub fn end_interactive(&self) {
        let mut s = self.state.lock();
        s.interactive = false;
        self.try_form(&mut s);
        self.changed.notify_all();
    }
}
