//! Running a batch on one core (§4.4.2): build the graphs, walk the batch order, run pieces whose
//! turn came, and carry out the commit protocol.
//!
//! Each piece waits on one counter, `wait`, for everything the paper's three checks ask, counted
//! down by whoever settles each:
//!
//! | what it waits for                                  | counted down by                                  |
//! |----------------------------------------------------|--------------------------------------------------|
//! | its start token                                    | its core, walking the batch order                |
//! | its units' turns in the graph (check 1)            | the core that completes the entry before it       |
//! | its data parents' runs: its dependency RVP (check 2) | each parent's core, once the parent executed   |
//! | past the commit point, its transaction's decision (check 3) | the core that decides                  |
//!
//! The one that brings it to zero queues the piece at its home partition's core (or, walking,
//! runs it at once). So a piece runs exactly once, and only when the paper's checks all hold.
//!
//! **States and the commit protocol.** A piece that runs is Executed; a non-abortable one is at
//! once Completed, which releases its units to the transactions after it (constraint 1b, 2). An
//! abortable piece that succeeds counts the commit RVP down; the one that brings it to zero
//! decides *commit*: every abortable piece becomes Completed together (constraint 1a) and the
//! pieces past the commit point may run. The first abortable piece that fails sets the RVP
//! negative, **undoes** every write its transaction's executed pieces made — on whatever partition:
//! they are still Executed, so nothing conflicting ran since — and decides *abort*; every other
//! piece of the transaction then completes when its turn comes, without running. A transaction's
//! pieces run one at a time (its slot is locked while one runs), so its commit protocol needs no
//! more synchronization than the slot's lock; a piece that finds its slot busy is queued again.
//!
//! **The walk.** After the graphs are built, each core walks the batch order once, taking the start
//! token off the pieces homed at its partitions and running those that need nothing else — the
//! paper's in-order pass, where low contention runs nearly every piece — and then runs the pieces
//! others make ready until the batch's last piece is done. Barrier transactions (a range no graph
//! can order) run last, alone, on the first participant's core.

use super::batch::{Batch, TxnSlot};
use super::graph::Entry;
use super::plan::{PiecePlan, ABORT, COMMIT, COMPLETED, EXECUTED};
use crate::storage::Database;
use crossbeam_utils::Backoff;
use std::sync::atomic::Ordering;

/// How many transactions ahead of the walk their records' index entries are prefetched.
const INDEX_AHEAD: usize = 6;

/// How many transactions ahead of the walk their rows are prefetched (their index entries are in
/// cache by then).
const ROWS_AHEAD: usize = 3;

/// Everything a core needs to run pieces of one batch.
struct Core<'a> {
    batch: &'a Batch,
    db: &'a Database<()>,
    coarse: bool,
    rank: usize,
}

/// A piece of the batch: `(participant, piece)` packed for the ready queues.
fn pack(part: u32, piece: u32) -> u64 {
    (part as u64) << 32 | piece as u64
}

/// Runs this participant's share of `batch`: builds the graphs of its partitions, then runs pieces
/// until the batch is done.
pub(super) fn process(batch: &Batch, rank: usize, db: &Database<()>, coarse: bool) {
    build(batch, rank);
    batch.built.wait();
    let core = Core {
        batch,
        db,
        coarse,
        rank,
    };
    core.walk();
    let backoff = Backoff::new();
    while batch.remaining.load(Ordering::Acquire) > 0 {
        if core.drain() {
            backoff.reset();
        } else {
            backoff.snooze();
        }
    }
    if rank == 0 {
        for &(part, txn) in &batch.order[batch.ordered..] {
            core.run_barrier(part, txn);
        }
    }
    batch.ended.wait();
}

/// Builds the graphs of the partitions `rank` owns: their units in batch order, counted, laid out,
/// then appended (see [`super::graph`]).
fn build(batch: &Batch, rank: usize) {
    let mut owned: Vec<(u32, u32)> = Vec::new();
    let mut counts = vec![0usize; batch.partitions() as usize];
    for &(part, t) in &batch.order[..batch.ordered] {
        let plan = &batch.parts[part as usize].plan;
        for u in plan.txns[t as usize].units.clone() {
            let p = plan.units[u as usize].partition;
            if batch.owns(rank, p) {
                owned.push((part, u));
                counts[p as usize] += 1;
            }
        }
    }
    // SAFETY (every `build()` below): this participant owns these partitions, and the build
    // barrier has not passed.
    let graph = |p: u32| unsafe { batch.graphs[p as usize].build() };
    for (p, &n) in counts.iter().enumerate() {
        if batch.owns(rank, p as u32) {
            graph(p as u32).start(n);
        }
    }
    for &(part, u) in &owned {
        let unit = &batch.parts[part as usize].plan.units[u as usize];
        let g = graph(unit.partition);
        let list = g.list(unit.key);
        g.count(list);
        unit.slot.store((list as u64) << 32, Ordering::Relaxed);
    }
    for (p, _) in counts.iter().enumerate() {
        if batch.owns(rank, p as u32) {
            graph(p as u32).lay_out();
        }
    }
    for &(part, u) in &owned {
        let plan = &batch.parts[part as usize].plan;
        let unit = &plan.units[u as usize];
        let list = (unit.slot.load(Ordering::Relaxed) >> 32) as u32;
        let members = &plan.unit_members[unit.members.start as usize..unit.members.end as usize];
        let sole = match members {
            &[m] => m,
            _ => Entry::MEMBERS,
        };
        let (pos, ready) = graph(unit.partition).append(
            list,
            Entry {
                part,
                unit: u,
                sole,
                write: unit.write,
            },
        );
        unit.slot
            .store((list as u64) << 32 | pos as u64, Ordering::Relaxed);
        if !ready {
            for &m in members {
                plan.pieces[m as usize].wait.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl Core<'_> {
    fn piece(&self, part: u32, piece: u32) -> &PiecePlan {
        &self.batch.parts[part as usize].plan.pieces[piece as usize]
    }

    /// Counts one of `piece`'s conditions as met; queues it at its home when none is left.
    fn settle(&self, part: u32, piece: u32) {
        let pc = self.piece(part, piece);
        if pc.wait.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.queue(part, piece, pc.home);
        }
    }

    fn queue(&self, part: u32, piece: u32, home: u32) {
        self.batch.ready[home as usize]
            .lock()
            .push_back(pack(part, piece));
    }

    /// The walk: the start tokens of the pieces homed here, in batch order; a piece with nothing
    /// else to wait for runs at once. Every few transactions it also runs what others made ready.
    ///
    /// The records the walk will reach are prefetched ahead of it, in two rounds as the harness
    /// prefetches a transaction's records (index entries [`INDEX_AHEAD`] transactions ahead, rows
    /// [`ROWS_AHEAD`] ahead), so that their cache misses overlap instead of following one another.
    fn walk(&self) {
        let batch = self.batch;
        let order = &batch.order[..batch.ordered];
        for (i, &(part, t)) in order.iter().enumerate() {
            if let Some(&(p, t)) = order.get(i + INDEX_AHEAD) {
                self.prefetch(p, t, |table, key| table.prefetch_index(key));
            }
            if let Some(&(p, t)) = order.get(i + ROWS_AHEAD) {
                self.prefetch(p, t, |table, key| table.prefetch_row(key));
            }
            let plan = &batch.parts[part as usize].plan;
            for piece in plan.txns[t as usize].pieces.clone() {
                let pc = &plan.pieces[piece as usize];
                if batch.owns(self.rank, pc.home) && pc.wait.fetch_sub(1, Ordering::AcqRel) == 1 {
                    self.run_or_queue(part, piece);
                }
            }
            if i % 16 == 15 {
                self.drain();
            }
        }
    }

    /// Calls `f` with each record a piece homed here of transaction `t` of participant `part`
    /// declared (its point accesses).
    fn prefetch(&self, part: u32, t: u32, f: impl Fn(&crate::storage::Table<()>, u64)) {
        let plan = &self.batch.parts[part as usize].plan;
        for piece in plan.txns[t as usize].pieces.clone() {
            let pc = &plan.pieces[piece as usize];
            if !self.batch.owns(self.rank, pc.home) {
                continue;
            }
            for d in &plan.decls[pc.decls.start as usize..pc.decls.end as usize] {
                if d.lo == d.hi {
                    f(self.db.table(d.table), d.lo);
                }
            }
        }
    }

    /// Runs the ready pieces of this core's partitions; whether any ran.
    fn drain(&self) -> bool {
        let mut ran = false;
        for p in 0..self.batch.partitions() {
            if !self.batch.owns(self.rank, p) {
                continue;
            }
            let queue = &self.batch.ready[p as usize];
            // As many as were queued when it looked: a piece requeued because its slot was busy
            // waits for the next round.
            let n = queue.lock().len();
            for _ in 0..n {
                let Some(next) = queue.lock().pop_front() else {
                    break;
                };
                let (part, piece) = ((next >> 32) as u32, next as u32);
                ran |= self.run_or_queue(part, piece);
            }
        }
        ran
    }

    /// Runs the piece, or queues it again when another core holds its transaction.
    fn run_or_queue(&self, part: u32, piece: u32) -> bool {
        let p = &self.batch.parts[part as usize];
        let txn = p.plan.pieces[piece as usize].txn;
        let ran = p
            .txns
            .with(txn as usize, &mut |slot| self.run(part, piece, slot))
            .is_some();
        if !ran {
            self.queue(part, piece, p.plan.pieces[piece as usize].home);
        }
        ran
    }

    /// Runs (or, for an aborted transaction, skips) a piece whose turn came; its slot is held.
    fn run(&self, part: u32, piece: u32, slot: &mut dyn TxnSlot) {
        let plan = &self.batch.parts[part as usize].plan;
        let pc = &plan.pieces[piece as usize];
        let tp = &plan.txns[pc.txn as usize];
        let aborted = tp.decision.load(Ordering::Acquire) == ABORT
            || (pc.abortable && tp.commit_rvp.load(Ordering::Acquire) < 0);
        if aborted {
            self.children(part, pc);
            self.complete(part, piece, slot);
            return;
        }
        slot.state().exec.set_logging(pc.abortable);
        let decls = &plan.decls[pc.decls.start as usize..pc.decls.end as usize];
        let result = slot.run_piece(pc.piece as usize, self.db, Some(decls), self.coarse);
        match result {
            Ok(()) => {
                pc.state.store(EXECUTED, Ordering::Release);
                self.children(part, pc);
                if !pc.abortable {
                    self.complete(part, piece, slot);
                } else if tp.commit_rvp.fetch_sub(1, Ordering::AcqRel) == 1 {
                    self.decide(part, pc.txn, slot, true);
                }
            }
            Err(a) => {
                assert!(
                    pc.abortable,
                    "PWV: piece {} failed after its transaction's commit point ({a}): a program may \
                     abort, and touch what it did not declare, only up to its commit point",
                    pc.piece
                );
                if tp.commit_rvp.swap(-1, Ordering::AcqRel) > 0 {
                    // The first abort: undo every write of the transaction's executed pieces.
                    slot.state().exec.finish(self.db, false);
                    slot.set_outcome(Err(a));
                    self.decide(part, pc.txn, slot, false);
                }
                self.children(part, pc);
                self.complete(part, piece, slot);
            }
        }
    }

    /// The piece ran (or will never run): its data children need it no more.
    fn children(&self, part: u32, pc: &PiecePlan) {
        let plan = &self.batch.parts[part as usize].plan;
        for &c in &plan.children[pc.children.start as usize..pc.children.end as usize] {
            self.settle(part, c);
        }
    }

    /// The commit decision of transaction `txn`: its abortable pieces that executed complete
    /// together, and the pieces past its commit point may go (to run, or, aborted, to be skipped).
    fn decide(&self, part: u32, txn: u32, slot: &mut dyn TxnSlot, commit: bool) {
        let plan = &self.batch.parts[part as usize].plan;
        let tp = &plan.txns[txn as usize];
        tp.decision
            .store(if commit { COMMIT } else { ABORT }, Ordering::Release);
        if commit {
            // Nothing of it will be undone: drop the undo log.
            slot.state().exec.finish(self.db, true);
        }
        for q in tp.pieces.clone() {
            let qc = &plan.pieces[q as usize];
            if !qc.abortable {
                self.settle(part, q);
            } else if qc.state.load(Ordering::Acquire) == EXECUTED {
                self.complete(part, q, slot);
            }
        }
    }

    /// The piece is Completed: its units' entries may end, and with the last piece the transaction.
    fn complete(&self, part: u32, piece: u32, slot: &mut dyn TxnSlot) {
        let batch = self.batch;
        let plan = &batch.parts[part as usize].plan;
        let pc = &plan.pieces[piece as usize];
        pc.state.store(COMPLETED, Ordering::Release);
        for &u in &plan.piece_units[pc.units.start as usize..pc.units.end as usize] {
            let unit = &plan.units[u as usize];
            if unit.members_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                let list = (unit.slot.load(Ordering::Relaxed) >> 32) as u32;
                // SAFETY: the batch is past its build barrier, and not yet past its end.
                let graph = unsafe { batch.graphs[unit.partition as usize].get() };
                graph.complete(list, |e| {
                    if e.sole != Entry::MEMBERS {
                        return self.settle(e.part, e.sole);
                    }
                    let p = &batch.parts[e.part as usize].plan;
                    let members = &p.units[e.unit as usize].members;
                    for &m in &p.unit_members[members.start as usize..members.end as usize] {
                        self.settle(e.part, m);
                    }
                });
            }
        }
        let tp = &plan.txns[pc.txn as usize];
        if tp.pieces_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let committed = tp.decision.load(Ordering::Acquire) == COMMIT;
            let st = slot.state();
            st.exec.finish(self.db, committed);
            st.exec.rec.finish(st.id, committed);
            if committed {
                slot.set_outcome(Ok(()));
            }
            batch.remaining.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// A barrier transaction: alone (every other piece of the batch is done), all of it, in order.
    fn run_barrier(&self, part: u32, txn: u32) {
        let p = &self.batch.parts[part as usize];
        let tp = &p.plan.txns[txn as usize];
        let pieces = tp.pieces.clone();
        p.txns
            .with(txn as usize, &mut |slot| {
                slot.state().exec.set_logging(true);
                let mut outcome = Ok(());
                for q in pieces.clone() {
                    let number = p.plan.pieces[q as usize].piece as usize;
                    if let Err(a) = slot.run_piece(number, self.db, None, self.coarse) {
                        outcome = Err(a);
                        break;
                    }
                }
                let committed = outcome.is_ok();
                let st = slot.state();
                st.exec.finish(self.db, committed);
                st.exec.rec.finish(st.id, committed);
                slot.set_outcome(outcome.clone());
            })
            .expect("nothing else runs during a barrier");
    }
}
