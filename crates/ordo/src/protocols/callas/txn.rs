//! One Callas transaction: its stages, each a mini-transaction under nexus and piece locks; its
//! commit after the group members it depends on; its release of nexus locks after theirs.
//!
//! ```text
//!  Stage s (ranks lo..=hi):                                        (§4.4.1, "Enforcing safety")
//!    for Tj in deps(T), ordered: wait until Tj passed hi (ran a stage of rank > hi, or ended)
//!    for each batch of s's pieces (pieces whose declarations need no earlier one of the batch):
//!      decl ← declare(each p of the batch)   (more than the type's shape: abort, learn alone)
//!      nexus-lock decl's rows, own group, R or W        (FIFO; other groups' conflicts wait)
//!      piece-lock decl's rows (held to the end of s)    (first batch: in key order, waiting;
//!                                                         later batches: try, until the timeout)
//!      deps(T) ∪= what each row's access list makes T depend on; run the batch's pieces
//!    commit delay; progress(T) ← lo of the next stage; unlock the piece locks
//!  Commit:   wait until every Tj in deps(T) ended (a hard one aborted: abort, cascading)
//!  Release:  wait until every Tj T depended on released its nexus locks (Release Order);
//!            leave the access lists; unlock the nexus locks
//!  Abort:    undo record by record, once later accessors have undone theirs; leave; unlock
//! ```

use super::nexus::NexusMode;
use super::plans::{shape_of, Known, StageRun, Tally};
use super::{Callas, Level};
use crate::check::TxnId;
use crate::protocols::kit::exec::Cover;
use crate::protocols::kit::inplace::RowGuard;
use crate::protocols::kit::lock_table::Outcome;
use crate::protocols::kit::pipeline::access_list::{deps_of, enter, merge, Dep, Kind, Touched};
use crate::protocols::kit::pipeline::alone::Alone;
use crate::protocols::kit::pipeline::board::{worker_of, Board, State};
use crate::protocols::kit::pipeline::ending::{await_deps, doomed, undo_and_leave};
use crate::protocols::kit::pipeline::piece::{PieceTx, Run};
use crate::protocols::kit::plan::{locks_of, LockRequest, Mode};
use crate::storage::{RowId, TableId, ABSENT};
use crate::txn::{wait, Abort, AbortReason, Access, Program, Tx, TxResult, TxnIds};
use crossbeam_utils::Backoff;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Progress of a transaction with no ranked stage left.
const DONE: u32 = (1 << 22) - 1;

/// Per-thread state: ids, the executor and undo log, the plans it uses, reusable buffers.
pub struct CallasWorker {
    id: u32,
    pub(super) ids: TxnIds,
    pub(super) run: Run,
    decls: Vec<Access>,
    locks: Vec<LockRequest>,
    /// Piece locks the running stage holds.
    held: Vec<(TableId, RowId, Mode)>,
    /// Nexus locks the transaction holds, and whether in write mode.
    nexus: Vec<(TableId, RowId, bool)>,
    deps: Vec<Dep>,
    found: Vec<Dep>,
    /// Committed transactions whose accesses it followed: it releases after them.
    after: Vec<TxnId>,
    touched: Vec<Touched>,
    scratch: Vec<usize>,
    batch: Vec<usize>,
    cache: HashMap<&'static str, Arc<Known>>,
    version: u64,
    tally: Tally,
    /// The last attempt rolled back in a cascade: this one reads no uncommitted write.
    clean: bool,
    /// A stage of the running transaction paid the commit delay.
    paid: bool,
}

impl CallasWorker {
    pub(super) fn new(id: u32, ids: TxnIds, recording: bool) -> Self {
        CallasWorker {
            id,
            ids,
            run: Run::new(id, recording),
            decls: Vec::new(),
            locks: Vec::new(),
            held: Vec::new(),
            nexus: Vec::new(),
            deps: Vec::new(),
            found: Vec::new(),
            after: Vec::new(),
            touched: Vec::new(),
            scratch: Vec::new(),
            batch: Vec::new(),
            cache: HashMap::new(),
            version: u64::MAX,
            tally: Tally::default(),
            clean: false,
            paid: false,
        }
    }
}

/// Why an attempt stopped before it committed.
enum Stop {
    Abort(Abort),
    /// A piece declared more than its type's shape: run alone, and learn.
    Learn,
    /// A piece declared a key range too wide to lock key by key: run alone.
    Alone,
}

impl From<Abort> for Stop {
    fn from(a: Abort) -> Self {
        Stop::Abort(a)
    }
}

impl From<AbortReason> for Stop {
    fn from(r: AbortReason) -> Self {
        Stop::Abort(Abort::new(r))
    }
}

/// Whether `on` will touch no rank ≤ `hi` any more (or is not running).
fn passed(board: &Board, on: TxnId, hi: u32) -> bool {
    match board.state(on) {
        State::Running(progress) => progress > hi,
        _ => true,
    }
}

/// The lowest rank of the first ranked stage of `stages[from..]`.
fn next_lo(stages: &[StageRun], from: usize) -> u32 {
    stages[from..]
        .iter()
        .find_map(|s| s.ranks.map(|r| r.0))
        .unwrap_or(DONE)
}

/// A transaction in flight; dropped before it ended (a program panicked), it aborts.
struct Attempt<'a, L: Level> {
    c: &'a Callas<L>,
    w: &'a mut CallasWorker,
    known: &'a Known,
    ended: bool,
}

impl<L: Level> Drop for Attempt<'_, L> {
    fn drop(&mut self) {
        if !self.ended {
            self.release_pieces();
            self.abort();
        }
    }
}

impl<L: Level> Attempt<'_, L> {
    fn id(&self) -> TxnId {
        self.w.run.id
    }

    fn stages<P: Program>(&mut self, program: &mut P, stages: &[StageRun]) -> Result<(), Stop> {
        for (k, s) in stages.iter().enumerate() {
            self.stage(program, stages, k, s)?;
        }
        Ok(())
    }

    /// Runs stage `k` (see the module docs).
    fn stage<P: Program>(
        &mut self,
        program: &mut P,
        stages: &[StageRun],
        k: usize,
        s: &StageRun,
    ) -> Result<(), Stop> {
        let (board, id) = (&self.c.board, self.id());
        if let Some((_, hi)) = s.ranks {
            for i in 0..self.w.deps.len() {
                let d = self.w.deps[i];
                if d.order {
                    let deps = &self.w.deps;
                    board.wait(id, d.txn, |b| passed(b, d.txn, hi), |b| doomed(b, deps))?;
                }
            }
        }
        // A program of the type with fewer pieces than its shape (the shape is the union of
        // every instance seen) skips the pieces it does not have.
        let mut batch = std::mem::take(&mut self.w.batch);
        let out = self.batches(program, s, &mut batch);
        self.w.batch = batch;
        if out.is_ok() {
            // A stage that wrote commits as a subtransaction of its own (its writes replicate); one
            // that only read has nothing to replicate.
            if self.w.held.iter().any(|h| h.2 == Mode::Exclusive) {
                self.c.delay.before_release();
                self.w.paid = true;
            }
            board.set_progress(id, next_lo(stages, k + 1));
        }
        self.release_pieces();
        out
    }

    /// Runs stage `s`'s pieces in **batches**: pieces whose declarations need no earlier piece
    /// of the batch are declared, locked (in key order) and run together; a piece whose
    /// declaration needs one starts the next batch.
    fn batches<P: Program>(
        &mut self,
        program: &mut P,
        s: &StageRun,
        batch: &mut Vec<usize>,
    ) -> Result<(), Stop> {
        batch.clear();
        let mut first = true;
        let n = program.pieces();
        for &p in s.pieces.iter().filter(|&&p| p < n) {
            self.w.scratch.clear();
            program.declaration_depends_on(p, &mut self.w.scratch);
            if self.w.scratch.iter().any(|d| batch.contains(d)) {
                self.batch(program, s, batch, first)?;
                first = false;
                batch.clear();
            }
            batch.push(p);
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.batch(program, s, batch, first)
    }

    /// Runs the pieces `batch` of stage `s` (`first`: nothing of the stage ran yet).
    fn batch<P: Program>(
        &mut self,
        program: &mut P,
        s: &StageRun,
        batch: &[usize],
        first: bool,
    ) -> Result<(), Stop> {
        let c = self.c;
        let (db, board) = (&c.db, &c.board);
        let id = self.id();
        let w = &mut *self.w;
        w.decls.clear();
        for &p in batch {
            let from = w.decls.len();
            program.declare(p, &mut w.decls);
            if !self.known.shape.pieces[p].covers_accesses(db, &w.decls[from..]) {
                return Err(Stop::Learn);
            }
        }
        // A key range too wide to lock key by key: at read committed its rows are read under
        // short read locks as the scan passes them (`Settle`); at serializable the transaction
        // runs alone (phantoms).
        let wide = locks_of(db, &w.decls, true, &mut w.locks)?;
        if wide && L::ANTI {
            return Err(Stop::Alone);
        }
        w.locks.sort_unstable_by_key(|l| (l.table, l.key));
        let comm = c.plans.commutativity() && batch.iter().all(|&p| program.commutes(p));
        // Nexus locks first: conflicts with other groups wait here.
        for i in 0..self.w.locks.len() {
            let l = &self.w.locks[i];
            let (table, rid, write) = (l.table, l.rid, l.mode == Mode::Exclusive);
            self.nexus_lock(table, rid, write)?;
        }
        let w = &mut *self.w;
        let lock_mode = |l: &LockRequest| {
            if s.writes & (1 << (l.table as u64 % 64)) != 0 {
                Mode::Exclusive
            } else {
                l.mode
            }
        };
        let ranks_hi = s.ranks.map(|r| r.1);
        if first {
            // Nothing of the stage ran: wait for the locks in key order, and for a dependency
            // found that has not passed the stage's ranks without them, as IC3 does.
            loop {
                for l in &w.locks {
                    db.table(l.table).meta(l.rid).lock.acquire(lock_mode(l));
                    w.held.push((l.table, l.rid, lock_mode(l)));
                }
                w.found.clear();
                let undoing = look(c, w, id, comm).is_err();
                let behind = w
                    .found
                    .iter()
                    .find(|d| {
                        (d.order && ranks_hi.is_some_and(|hi| !passed(board, d.txn, hi)))
                            || (w.clean
                                && d.hard
                                && matches!(board.state(d.txn), State::Running(_)))
                    })
                    .copied();
                if !undoing && behind.is_none() {
                    break;
                }
                release(c, &mut w.held);
                if let Some(r) = doomed(board, &w.deps) {
                    return Err(r.into());
                }
                match behind {
                    Some(d) if w.clean && d.hard => board.wait(
                        id,
                        d.txn,
                        |b| !matches!(b.state(d.txn), State::Running(_)),
                        |b| doomed(b, &w.deps),
                    )?,
                    Some(d) => {
                        let hi = ranks_hi.unwrap_or(DONE);
                        board.wait(id, d.txn, |b| passed(b, d.txn, hi), |b| doomed(b, &w.deps))?
                    }
                    None => std::thread::yield_now(),
                }
            }
        } else {
            // Earlier pieces of the stage ran: no waiting without a limit while holding them.
            for i in 0..w.locks.len() {
                let l = &w.locks[i];
                let (table, rid, mode) = (l.table, l.rid, lock_mode(l));
                match w.held.iter().find(|h| h.0 == table && h.1 == rid) {
                    Some(h) if h.2 == Mode::Exclusive || mode == Mode::Shared => continue,
                    // A read then a write of one row in one stage that the shape did not
                    // foresee: learn again.
                    Some(_) => return Err(Stop::Learn),
                    None => {}
                }
                try_lock(c, table, rid, mode)?;
                w.held.push((table, rid, mode));
            }
            w.found.clear();
            if look(c, w, id, comm).is_err() {
                // An aborting writer must undo a row whose lock this stage keeps: give way.
                return Err(AbortReason::Deadlock.into());
            }
        }
        enter(db, id, &w.locks, comm, &mut w.touched);
        for d in w.found.drain(..) {
            merge(&mut w.deps, d);
        }
        let mut settle = Settle {
            c,
            me: id,
            locks: &w.locks,
            deps: &w.deps,
        };
        let mut tx = PieceTx {
            db,
            run: &mut w.run,
            cover: Cover::Keys {
                locks: &w.locks,
                accesses: &w.decls,
            },
            op_delay: c.delay.op,
            guard: if wide { Some(&mut settle) } else { None },
        };
        for &p in batch {
            program.run_piece(p, &mut tx)?;
        }
        Ok(())
    }

    /// Takes (or strengthens) the nexus lock of `(table, rid)`.
    fn nexus_lock(&mut self, table: TableId, rid: RowId, write: bool) -> Result<(), AbortReason> {
        let w = &mut *self.w;
        let pos = w.nexus.iter().position(|n| n.0 == table && n.1 == rid);
        if let Some(i) = pos {
            if w.nexus[i].2 || !write {
                return Ok(());
            }
        }
        let mode = NexusMode {
            group: self.known.group,
            write,
        };
        let locks = &self.c.nexus;
        match locks.lock(w.id, table, rid, mode, true) {
            Outcome::Granted => {}
            Outcome::Waiting => {
                let granted = wait_at_most(self.c.timeout, || {
                    Ok(locks.is_granted(w.id, table, rid, mode))
                });
                // Withdrawn after the timeout, unless a release granted it meanwhile.
                if granted.is_err() && locks.withdraw(w.id, table, rid) {
                    return Err(AbortReason::Deadlock);
                }
            }
            Outcome::Conflict => return Err(AbortReason::Deadlock),
        }
        match pos {
            Some(i) => w.nexus[i].2 = true,
            None => w.nexus.push((table, rid, write)),
        }
        Ok(())
    }

    /// Unlocks the running stage's piece locks.
    fn release_pieces(&mut self) {
        release(self.c, &mut self.w.held);
    }

    /// Waits for every dependency to end, then commits.
    fn commit(&mut self) -> Result<(), Abort> {
        let board = &self.c.board;
        let id = self.id();
        let w = &mut *self.w;
        await_deps(board, id, &w.deps)?;
        if !w.paid {
            // A transaction that wrote nothing still commits once, as under ACID.
            self.c.delay.before_release();
        }
        board.committed(id);
        w.run.end(&self.c.db, true);
        Ok(())
    }

    /// After the commit: the Nexus Lock Release Order, then leave the lists and unlock.
    fn release(&mut self) {
        self.ended = true;
        let c = self.c;
        let w = &mut *self.w;
        let backoff = Backoff::new();
        for t in w.deps.iter().map(|d| d.txn).chain(w.after.iter().copied()) {
            while !released(c, t) {
                backoff.snooze();
            }
        }
        let id = w.run.id;
        w.touched.sort_unstable_by_key(|t| (t.table, t.rid));
        w.touched.dedup_by_key(|t| (t.table, t.rid));
        for t in w.touched.drain(..) {
            c.db.table(t.table)
                .meta(t.rid)
                .list
                .lock()
                .retain(|e| e.txn != id);
        }
        self.unlock_nexus();
    }

    fn unlock_nexus(&mut self) {
        let c = self.c;
        let w = &mut *self.w;
        for (table, rid, _) in w.nexus.drain(..) {
            c.nexus.unlock(w.id, table, rid);
        }
        c.released[w.id as usize].store(w.run.id, Ordering::Release);
    }

    /// Aborts: undoes each record written once everyone after it on the record has undone theirs,
    /// leaves every list, unlocks the nexus locks.
    fn abort(&mut self) {
        self.ended = true;
        let c = self.c;
        let w = &mut *self.w;
        undo_and_leave(&c.db, &c.board, &mut w.run, &mut w.touched);
        self.unlock_nexus();
    }
}

/// The short read lock of read committed, for the rows a scan of a range too wide to lock passes
/// that the piece did not lock: the row's piece lock shared while it is read, and first, if its
/// last writer is another transaction still running or undoing, a wait until it ended — so the
/// scan reads only committed rows (or its own), and never a row halfway through a write. Rows that
/// appear in the range later are phantoms, which read committed allows.
struct Settle<'a, L: Level> {
    c: &'a Callas<L>,
    me: TxnId,
    locks: &'a [LockRequest],
    deps: &'a [Dep],
}

impl<L: Level> RowGuard for Settle<'_, L> {
    fn enter(&mut self, table: TableId, key: u64, rid: RowId) -> TxResult<bool> {
        if self
            .locks
            .binary_search_by_key(&(table, key), |l| (l.table, l.key))
            .is_ok()
        {
            return Ok(false);
        }
        let board = &self.c.board;
        let t = self.c.db.table(table);
        loop {
            try_lock(self.c, table, rid, Mode::Shared)?;
            let writer = t.version(rid).load(Ordering::Acquire) & !ABSENT;
            let live = |b: &Board| matches!(b.state(writer), State::Running(_) | State::Aborting);
            if writer == self.me || !live(board) {
                return Ok(true);
            }
            t.meta(rid).lock.release(Mode::Shared);
            // The wait may hold the stage's piece locks, which the writer may be queued for: it
            // gives up after the lock-wait timeout, as every such wait does.
            let deps = self.deps;
            wait_at_most(self.c.timeout, || match doomed(board, deps) {
                Some(r) => Err(r),
                None => Ok(!live(board)),
            })
            .map_err(Abort::new)?;
        }
    }

    fn leave(&mut self, table: TableId, rid: RowId) {
        self.c.db.table(table).meta(rid).lock.release(Mode::Shared);
    }
}

/// Whether `t` has released its nexus locks (its worker has gone past it).
fn released<L: Level>(c: &Callas<L>, t: TxnId) -> bool {
    c.released
        .get(worker_of(t))
        .is_none_or(|r| r.load(Ordering::Acquire) >= t)
}

/// Unlocks the piece locks in `held`.
fn release<L: Level>(c: &Callas<L>, held: &mut Vec<(TableId, RowId, Mode)>) {
    for (table, rid, mode) in held.drain(..).rev() {
        c.db.table(table).meta(rid).lock.release(mode);
    }
}

/// Takes a piece lock without waiting longer than the lock-wait timeout.
fn try_lock<L: Level>(
    c: &Callas<L>,
    table: TableId,
    rid: RowId,
    mode: Mode,
) -> Result<(), AbortReason> {
    let lock = &c.db.table(table).meta(rid).lock;
    wait_at_most(c.timeout, || Ok(lock.try_acquire(mode)))
}

/// Waits until `ready` holds (or fails the wait with what it returns), spinning, then yielding,
/// and marking the wait ([`wait::blocked`]); gives up with `Deadlock` after `timeout` or when the
/// spec runner cancels the wait. Every Callas wait that may hold locks others queue for is one of
/// these.
fn wait_at_most(
    timeout: Duration,
    mut ready: impl FnMut() -> Result<bool, AbortReason>,
) -> Result<(), AbortReason> {
    if ready()? {
        return Ok(());
    }
    let waiting = wait::blocked();
    let backoff = Backoff::new();
    let start = Instant::now();
    loop {
        backoff.snooze();
        waiting.round();
        if ready()? {
            return Ok(());
        }
        if start.elapsed() > timeout || waiting.canceled() {
            return Err(AbortReason::Deadlock);
        }
    }
}

/// Finds what the piece's locked rows make `id` depend on (into `w.found`) and which committed
/// transactions it follows (into `w.after`); `Err` if a row is being undone.
fn look<L: Level>(c: &Callas<L>, w: &mut CallasWorker, id: TxnId, comm: bool) -> Result<(), ()> {
    let board = &c.board;
    for l in &w.locks {
        let kind = Kind::of(l.mode == Mode::Exclusive, comm);
        let list = c.db.table(l.table).meta(l.rid).list.lock();
        if deps_of(&list, id, kind, L::ANTI, board, &mut w.found).is_err() {
            return Err(());
        }
        for e in list.iter() {
            if e.txn != id && board.state(e.txn) == State::Committed && !w.after.contains(&e.txn) {
                w.after.push(e.txn);
            }
        }
    }
    Ok(())
}

impl<L: Level> Callas<L> {
    /// Runs `program` once, to commit or abort (see the module docs), with the plan of its type
    /// from the worker's cache (refreshed when the plans moved). The cache is lent out for the
    /// attempt rather than the plan's `Arc` cloned: a reference count bumped by every transaction
    /// of every worker is a cache line moving between cores.
    pub(super) fn run<P: Program>(&self, w: &mut CallasWorker, program: &mut P) -> TxResult<()> {
        let v = self.plans.version();
        if v != w.version {
            w.cache.clear();
            w.version = v;
        }
        let name = program.name();
        if !w.cache.contains_key(name) {
            let Some(k) = self.plans.get(name) else {
                return self.alone(w, program, true);
            };
            w.cache.insert(name, k);
        }
        let cache = std::mem::take(&mut w.cache);
        let out = self.attempt(w, program, &cache[name]);
        w.cache = cache;
        match out {
            Err(Stop::Learn) => self.alone(w, program, true),
            Err(Stop::Alone) => self.alone(w, program, false),
            Err(Stop::Abort(a)) => Err(a),
            Ok(()) => Ok(()),
        }
    }

    /// One attempt of `program` under plan `known` (no learning: `Stop::Learn` and `Stop::Alone`
    /// go back to [`Callas::run`]).
    fn attempt<P: Program>(
        &self,
        w: &mut CallasWorker,
        program: &mut P,
        known: &Known,
    ) -> Result<(), Stop> {
        if known.shape.pieces.len() < program.pieces() {
            return Err(Stop::Learn);
        }
        let id = w.ids.next_id();
        w.run.id = id;
        w.deps.clear();
        w.after.clear();
        w.touched.clear();
        w.nexus.clear();
        w.paid = false;
        let group = known.group;
        let stages = if self.plans.safe(group) {
            &known.safe
        } else {
            &known.stages
        };
        let shared = self.barrier.shared(w.id);
        self.board.begin(id);
        self.board.set_progress(id, next_lo(stages, 0));
        let mut attempt = Attempt {
            c: self,
            w,
            known,
            ended: false,
        };
        let out = attempt
            .stages(program, stages)
            .and_then(|()| attempt.commit().map_err(Stop::from));
        match out {
            Ok(()) => attempt.release(),
            Err(_) => attempt.abort(),
        }
        drop(attempt);
        drop(shared);
        match &out {
            Ok(()) => {
                w.clean = false;
                self.plans.ended(&mut w.tally, group, false);
            }
            Err(Stop::Abort(a)) => {
                w.clean = a.reason == AbortReason::Cascade;
                let user = a.reason == AbortReason::User;
                self.plans.ended(&mut w.tally, group, user);
            }
            Err(Stop::Learn | Stop::Alone) => {}
        }
        out
    }

    /// Runs `program` alone, holding the whole database; with `learn`, learns what its pieces
    /// declare (a piece that declared more than its type's shape, or a type not seen yet).
    fn alone<P: Program>(
        &self,
        w: &mut CallasWorker,
        program: &mut P,
        learn: bool,
    ) -> TxResult<()> {
        let all = self.barrier.exclusive();
        let id = w.ids.next_id();
        let n = program.pieces();
        let mut shape = super::analysis::TypeShape {
            name: program.name(),
            pieces: Vec::with_capacity(n),
            commit_point: program.commit_point(),
        };
        for p in 0..n {
            w.scratch.clear();
            program.depends_on(p, &mut w.scratch);
            shape.pieces.push(super::analysis::PieceShape {
                commutes: program.commutes(p),
                depends_on: w.scratch.clone(),
                ..Default::default()
            });
        }
        // The kit's `Alone` rolls back when dropped uncommitted, a panicking program included.
        let mut tx = Alone::new(&self.db, &mut w.run, id, all).with_op_delay(self.delay.op);
        let mut out = Ok(());
        for p in 0..n {
            w.decls.clear();
            program.declare(p, &mut w.decls);
            let mut s = shape_of(&self.db, &w.decls);
            s.commutes = shape.pieces[p].commutes;
            shape.pieces[p].widen(&s);
            if let Err(e) = program.run_piece(p, &mut tx) {
                out = Err(e);
                break;
            }
        }
        // Learnt while the database is still held: no transaction runs across a change of plan.
        if learn {
            self.plans.learn(shape);
        }
        match out {
            Ok(()) => {
                self.delay.before_release();
                tx.commit()
            }
            Err(e) => {
                tx.abort();
                Err(e)
            }
        }
    }
}
