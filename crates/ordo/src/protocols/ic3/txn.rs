//! One transaction under IC3: its pieces, each a mini-transaction under piece locks; its commit,
//! after everything it depends on; its abort, undone record by record.
//!
//! ```text
//!  RunPiece(p):                                    (IC3 §4, Algorithm 1, with locks for OCC)
//!    decl ← declare(p); fp ← footprint(decl)
//!    for T' in deps(T), ordered: wait until T' finished its pieces that conflict with fp
//!    loop:
//!      lock decl's records, in (table, key) order              (no deadlock among pieces)
//!      found ← what each record's access list makes T depend on
//!      if a record is being undone: unlock, retry
//!      if some T' in found has not finished its pieces that conflict with fp: unlock, wait, retry
//!      append T's entries to the lists; deps(T) ∪= found; run p; unlock; progress(T) += 1
//!  Commit:  wait until every T' in deps(T) committed (a hard one aborted: abort, cascading)
//!           status ← committed; leave the access lists
//!  Abort:   status ← aborting; for each record T wrote, once no later entry is left on it:
//!           restore T's old image and leave the list; status ← aborted
//! ```
//!
//! Every wait goes through [`Board::wait`], which gives up when a hard dependency aborts
//! (`Cascade`) or when the waiter closes a cycle of waits (`Deadlock`).

use super::footprint::{Fp, Published};
use super::{Ic3, Ic3Worker, Variant};
use crate::protocols::kit::exec::Cover;
use crate::protocols::kit::pipeline::access_list::{deps_of, enter, merge, Dep, Kind};
use crate::protocols::kit::pipeline::board::Board;
use crate::protocols::kit::pipeline::ending::{await_deps, doomed, undo_and_leave};
use crate::protocols::kit::pipeline::piece::PieceTx;
use crate::protocols::kit::plan::{locks_of, LockRequest, Mode};
use crate::protocols::Protocol;
use crate::storage::Database;
use crate::txn::{run_pieces, Abort, AbortReason, Program, Tx, TxResult};

use crate::check::TxnId;
use crate::protocols::kit::pipeline::access_list::PipeRecord;

/// Why an attempt stopped before it committed.
pub(super) enum Stop {
    Abort(Abort),
    /// A piece declared a key range too wide to lock key by key: run the transaction alone.
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

/// Waits, as `me`, until `on` has finished its pieces that may conflict with `fp`.
fn wait_passed(
    board: &Board,
    published: &Published,
    me: TxnId,
    on: TxnId,
    fp: &Fp,
    deps: &[Dep],
) -> Result<(), Stop> {
    board
        .wait(me, on, |b| published.passed(b, on, fp), |b| doomed(b, deps))
        .map_err(Stop::from)
}

/// A piece's locks, held; released when dropped (also when the piece panics).
struct Held<'a> {
    db: &'a Database<PipeRecord>,
    locks: &'a [LockRequest],
}

impl<'a> Held<'a> {
    /// Takes `locks` (sorted by table and key), waiting for each in turn.
    fn acquire(db: &'a Database<PipeRecord>, locks: &'a [LockRequest]) -> Self {
        for l in locks {
            db.table(l.table).meta(l.rid).lock.acquire(l.mode);
        }
        Held { db, locks }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        for l in self.locks.iter().rev() {
            self.db.table(l.table).meta(l.rid).lock.release(l.mode);
        }
    }
}

/// A transaction in flight; dropped before it committed or aborted (a program panicked), it aborts.
struct Attempt<'a, V: Variant> {
    ic3: &'a Ic3<V>,
    w: &'a mut Ic3Worker,
    ended: bool,
}

impl<V: Variant> Drop for Attempt<'_, V> {
    fn drop(&mut self) {
        if !self.ended {
            self.abort();
        }
    }
}

impl<V: Variant> Attempt<'_, V> {
    fn pieces<P: Program>(&mut self, program: &mut P) -> Result<(), Stop> {
        for p in 0..program.pieces() {
            self.piece(program, p)?;
        }
        Ok(())
    }

    /// Runs piece `p` (see the module docs).
    fn piece<P: Program>(&mut self, program: &mut P, p: usize) -> Result<(), Stop> {
        let ic3 = self.ic3;
        let (db, board, published) = (&ic3.db, &ic3.board, &ic3.published);
        let w = &mut *self.w;
        let id = w.run.id;
        w.decls.clear();
        program.declare(p, &mut w.decls);
        let comm = V::COMM && program.commutes(p);
        let fp = Fp::of(db, &w.decls, comm);
        w.learned.learn(program.name(), p, fp);
        if !w.fps[p].covers(&fp) {
            w.fps[p] = w.fps[p].union(fp);
            published.widen(id, p, fp);
        }
        // IC3: the transactions T depends on first finish their pieces that conflict with p.
        for i in 0..w.deps.len() {
            let d = w.deps[i];
            if d.order {
                wait_passed(board, published, id, d.txn, &fp, &w.deps)?;
            }
        }
        if locks_of(db, &w.decls, true, &mut w.locks)? {
            return Err(Stop::Alone);
        }
        w.locks.sort_unstable_by_key(|l| (l.table, l.key));
        let kind = |l: &LockRequest| Kind::of(l.mode == Mode::Exclusive, comm);
        let held = loop {
            let held = Held::acquire(db, &w.locks);
            w.found.clear();
            let undoing = w.locks.iter().any(|l| {
                let list = db.table(l.table).meta(l.rid).list.lock();
                deps_of(&list, id, kind(l), true, board, &mut w.found).is_err()
            });
            if undoing {
                drop(held);
                if let Some(r) = doomed(board, &w.deps) {
                    return Err(r.into());
                }
                std::thread::yield_now();
                continue;
            }
            // A dependency found just now must have finished its conflicting pieces too; if it
            // has not, wait for it without the locks, and look again.
            let behind = w
                .found
                .iter()
                .find(|d| d.order && !published.passed(board, d.txn, &fp))
                .copied();
            if let Some(d) = behind {
                drop(held);
                wait_passed(board, published, id, d.txn, &fp, &w.deps)?;
                continue;
            }
            break held;
        };
        enter(db, id, &w.locks, comm, &mut w.touched);
        for d in w.found.drain(..) {
            merge(&mut w.deps, d);
        }
        let mut tx = PieceTx {
            db,
            run: &mut w.run,
            cover: Cover::Keys {
                locks: &w.locks,
                accesses: &w.decls,
            },
            op_delay: std::time::Duration::ZERO,
            guard: None,
        };
        let out = program.run_piece(p, &mut tx);
        drop(held);
        out?;
        board.advance(id);
        Ok(())
    }

    /// Waits for every dependency to commit, then commits.
    fn commit(&mut self) -> Result<(), Abort> {
        let ic3 = self.ic3;
        let board = &ic3.board;
        let w = &mut *self.w;
        let id = w.run.id;
        await_deps(board, id, &w.deps)?;
        board.committed(id);
        self.ended = true;
        w.run.end(&ic3.db, true);
        self.leave_lists();
        Ok(())
    }

    /// Leaves the access lists of every record touched (after committing).
    fn leave_lists(&mut self) {
        let w = &mut *self.w;
        let id = w.run.id;
        w.touched.sort_unstable_by_key(|t| (t.table, t.rid));
        w.touched.dedup_by_key(|t| (t.table, t.rid));
        for t in w.touched.drain(..) {
            self.ic3
                .db
                .table(t.table)
                .meta(t.rid)
                .list
                .lock()
                .retain(|e| e.txn != id);
        }
    }

    /// Aborts: undoes each record written once everyone after the transaction on it has undone
    /// theirs, and leaves every list.
    fn abort(&mut self) {
        self.ended = true;
        let ic3 = self.ic3;
        let w = &mut *self.w;
        undo_and_leave(&ic3.db, &ic3.board, &mut w.run, &mut w.touched);
    }
}

impl<V: Variant> Ic3<V> {
    /// Runs `program` once, to commit or abort (see the module docs).
    pub(super) fn run<P: Program>(&self, w: &mut Ic3Worker, program: &mut P) -> TxResult<()> {
        if self.footprints(w, program) {
            return self.run_alone(w, program);
        }
        let id = w.ids.next_id();
        w.run.id = id;
        w.deps.clear();
        w.touched.clear();
        let shared = self.barrier.shared(w.id);
        self.published.begin(id, &w.fps);
        self.board.begin(id);
        let mut attempt = Attempt {
            ic3: self,
            w,
            ended: false,
        };
        let out = attempt
            .pieces(program)
            .and_then(|()| attempt.commit().map_err(Stop::from));
        let Err(stop) = out else {
            return Ok(());
        };
        attempt.abort();
        drop(attempt);
        drop(shared);
        match stop {
            Stop::Abort(a) => Err(a),
            Stop::Alone => self.run_alone(w, program),
        }
    }

    /// Fills the worker's footprints for `program`'s pieces (see [`super::footprint`]); `true` if
    /// a piece declared up front has a key range too wide to lock (the transaction runs alone).
    fn footprints<P: Program>(&self, w: &mut Ic3Worker, program: &P) -> bool {
        w.fps.clear();
        let name = program.name();
        for i in 0..program.pieces() {
            w.scratch.clear();
            program.declaration_depends_on(i, &mut w.scratch);
            if w.scratch.is_empty() {
                w.decls.clear();
                program.declare(i, &mut w.decls);
                if Fp::wide(&self.db, &w.decls) {
                    return true;
                }
                w.fps
                    .push(Fp::of(&self.db, &w.decls, V::COMM && program.commutes(i)));
            } else {
                w.fps.push(w.learned.get(name, i));
            }
        }
        false
    }

    /// Runs `program` alone, holding the whole database (a key range too wide to lock).
    fn run_alone<P: Program>(&self, w: &mut Ic3Worker, program: &mut P) -> TxResult<()> {
        let mut tx = self.begin(w);
        run_pieces(program, &mut tx)?;
        tx.commit()
    }
}
