//! One `sc-chopping` transaction: its chops, each a short strict-2PL transaction over the kit's
//! lock table (locks released when the chop commits), one transaction id and one record in the
//! history for the whole.
//!
//! ```text
//!  chop 0:   run its pieces, each access locked as it goes (rc: short read locks; ser: long read
//!            locks, next-key locks for scans and inserts); a piece declaring more than its type's
//!            shape, or a failure (a user rollback, a lock-wait timeout): undo, abort everything
//!            declare the later chops' pieces that can be declared now; more than the shape: abort,
//!            learn alone
//!            commit delay (if it wrote), commit: undo log emptied, locks released
//!  chop k≥1: the same, recorded apart; a protocol abort (timeout) undoes the chop and runs it
//!            again — never anything before it; a failure that retrying cannot cure (a program
//!            that broke rollback safety) ends the transaction there, its earlier chops kept
//!  end:      the whole transaction recorded as one, committed
//! ```

use super::plans::Known;
use super::{Level, ScChopping};
use crate::check::{Event, TxnId};
use crate::protocols::kit::barrier::Exclusive;
use crate::protocols::kit::inplace::{InPlace, Install};
use crate::protocols::kit::lock_table::{Mode, Outcome, Owner, Poll};
use crate::protocols::kit::shape::{shape_of, PieceShape, TypeShape};
use crate::storage::{ColumnSet, RowId, RowMut, RowRef, Table, TableId, ABSENT, SUPREMUM};
use crate::txn::{
    check_live, refuse_write, Abort, AbortReason, Access, Backoff, Program, Recorder, RetryPolicy,
    Tx, TxResult, TxnIds,
};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Attempts of a chop after the first committed before the transaction ends without it (a safety
/// net: each attempt ends, lock waits time out).
pub const MAX_CHOP_ATTEMPTS: u32 = 10_000;

/// Per-thread state: ids, the executor and undo log, the locks held, the plans it uses.
pub struct ScWorker {
    ids: TxnIds,
    owner: Owner,
    pub(super) exec: InPlace,
    held: Vec<(TableId, RowId, Mode)>,
    decls: Vec<Access>,
    deps: Vec<usize>,
    /// What a later chop's attempt records, kept out of the transaction's record until it commits.
    chop_rec: Recorder,
    cache: HashMap<&'static str, Arc<Known>>,
    version: u64,
}

impl ScWorker {
    pub(super) fn new(ids: TxnIds, recording: bool) -> Self {
        let owner = ids.worker();
        ScWorker {
            exec: InPlace::new(owner, recording, true),
            chop_rec: Recorder::new(owner, recording),
            ids,
            owner,
            held: Vec::new(),
            decls: Vec::new(),
            deps: Vec::new(),
            cache: HashMap::new(),
            version: u64::MAX,
        }
    }
}

/// Why a transaction stopped before it committed.
pub(super) enum Stop {
    Abort(Abort),
    /// Its first chop declared more than its type's shape: run it alone, and learn.
    Learn,
}

/// A running `sc-chopping` transaction (an interactive one is one chop, run alone).
pub struct ChopTx<'a, L: Level> {
    p: &'a ScChopping<L>,
    w: &'a mut ScWorker,
    id: TxnId,
    aborted: Option<AbortReason>,
    /// Some chop paid the commit delay.
    paid: bool,
    done: bool,
    /// An interactive transaction holds the whole database.
    _alone: Option<Exclusive<'a>>,
}

impl<'a, L: Level> ChopTx<'a, L> {
    pub(super) fn new(
        p: &'a ScChopping<L>,
        w: &'a mut ScWorker,
        alone: Option<Exclusive<'a>>,
    ) -> Self {
        let id = w.ids.next_id();
        ChopTx {
            p,
            w,
            id,
            aborted: None,
            paid: false,
            done: false,
            _alone: alone,
        }
    }

    /// The locks held (tests).
    pub fn locks(&self) -> &[(TableId, RowId, Mode)] {
        &self.w.held
    }

    #[cold]
    fn fail(&mut self, r: AbortReason) -> Abort {
        self.fail_with(Abort::new(r))
    }

    /// A failing call: the running chop is undone and its locks go.
    #[cold]
    fn fail_with(&mut self, a: Abort) -> Abort {
        self.undo_chop();
        self.aborted = Some(a.reason);
        a
    }

    /// Undoes the running chop's writes and releases its locks.
    fn undo_chop(&mut self) {
        self.w.exec.finish(&self.p.db, false);
        self.release();
    }

    /// Commits the running chop: the commit delay if it wrote, then its writes stay and its locks go.
    fn commit_chop(&mut self) {
        if self.w.exec.wrote() {
            self.p.delay.before_release();
            self.paid = true;
        }
        self.w.exec.finish(&self.p.db, true);
        self.release();
    }

    fn release(&mut self) {
        let (owner, locks) = (self.w.owner, &self.p.locks);
        for (table, rid, _) in self.w.held.drain(..).rev() {
            locks.unlock(owner, table, rid);
        }
    }

    /// Records the end of the whole transaction.
    fn end(&mut self, committed: bool) {
        self.w.exec.rec.finish(self.id, committed);
        self.done = true;
    }

    /// Takes (or converts to) `mode` on `rid`; the mode held before (`None`: newly taken, the
    /// last entry of the held list).
    fn lock(&mut self, t: &Table<()>, rid: RowId, mode: Mode) -> Result<Option<Mode>, AbortReason> {
        let table = t.id();
        let pos = self.w.held.iter().position(|h| h.1 == rid && h.0 == table);
        if let Some(i) = pos {
            let cur = self.w.held[i].2;
            if cur >= mode {
                return Ok(Some(cur));
            }
        }
        match self.p.locks.lock(self.w.owner, table, rid, mode, true) {
            Outcome::Granted => {}
            Outcome::Waiting => self.wait(table, rid, mode)?,
            // A second conversion on one record: the two would wait for each other.
            Outcome::Conflict => return Err(AbortReason::Deadlock),
        }
        Ok(match pos {
            Some(i) => {
                let cur = self.w.held[i].2;
                self.w.held[i].2 = mode;
                Some(cur)
            }
            None => {
                self.w.held.push((table, rid, mode));
                None
            }
        })
    }

    /// Waits (FIFO, in the lock table) until the request is granted, or withdraws it after the
    /// lock-wait timeout or when the spec runner cancels the wait.
    #[cold]
    fn wait(&self, table: TableId, rid: RowId, mode: Mode) -> Result<(), AbortReason> {
        let (owner, locks, graph) = (self.w.owner, &self.p.locks, &self.p.waits_for);
        let waiting = crate::txn::wait::blocked();
        let backoff = crossbeam_utils::Backoff::new();
        let start = Instant::now();
        let (mut published, mut round) = (0u64, 0u32);
        let out = loop {
            let blockers = match locks.poll(owner, table, rid, mode) {
                Poll::Granted => break Ok(()),
                Poll::Waiting(b) => b,
            };
            if blockers != published {
                graph.publish(owner, blockers);
                published = blockers;
            }
            // A deadlock found in the waits-for graph (its highest owner gives up), the lock-wait
            // timeout, or the spec runner cancelling the wait.
            let victim = round.is_multiple_of(8) && graph.victim(owner);
            if victim || start.elapsed() > self.p.timeout || waiting.canceled() {
                // Granted meanwhile: held after all.
                break if locks.withdraw(owner, table, rid) {
                    Err(AbortReason::Deadlock)
                } else {
                    Ok(())
                };
            }
            if backoff.is_completed() {
                std::thread::sleep(Duration::from_micros(20));
            } else {
                backoff.snooze();
            }
            waiting.round();
            round = round.wrapping_add(1);
        };
        if published != 0 {
            graph.publish(owner, 0);
        }
        out
    }

    /// The end of a read under a lock taken before as `prev` (`None`: newly): the operation delay,
    /// then, at read committed, a newly taken read lock goes.
    fn end_read(&mut self, prev: Option<Mode>) {
        self.p.delay.after_op();
        if !L::SER && prev.is_none() {
            self.unlock_last();
        }
    }

    fn unlock_last(&mut self) {
        let (table, rid, _) = self.w.held.pop().expect("the lock just taken");
        self.p.locks.unlock(self.w.owner, table, rid);
    }

    /// The slot of `key` (an absent one created, so that its lock guards the absence).
    fn slot(t: &Table<()>, key: u64) -> RowId {
        match t.lookup(key) {
            Some(r) => r,
            None => t.get_or_create(key).0,
        }
    }

    /// Next-key locking for an insert of `key` at serializable: write locks on the entries after
    /// `key` up to the first present one (or the supremum).
    fn lock_next_keys(&mut self, t: &Table<()>, key: u64) -> Result<(), AbortReason> {
        let mut cur = key;
        loop {
            let (next_key, rid) = match t.next_after(cur) {
                Some((k, r)) => (Some(k), r),
                None => (None, SUPREMUM),
            };
            self.lock(t, rid, Mode::Exclusive)?;
            if t.next_after(cur).map(|e| e.0) != next_key {
                continue;
            }
            match next_key {
                Some(k) if t.version(rid).load(Ordering::Acquire) & ABSENT != 0 => cur = k,
                _ => return Ok(()),
            }
        }
    }

    /// Runs `pieces` (those the program has) as one chop, checking each declaration against the
    /// type's shape: `Ok(false)` if one declared more (the chop stopped before running it).
    fn run_chop<P: Program>(
        &mut self,
        program: &mut P,
        known: &Known,
        pieces: &[usize],
    ) -> TxResult<bool> {
        let n = program.pieces();
        for &p in pieces.iter().filter(|&&p| p < n) {
            if !self.covered(program, &known.shape.pieces[p], p) {
                return Ok(false);
            }
            program.run_piece(p, self)?;
        }
        Ok(true)
    }

    /// Whether piece `p`'s declaration is covered by `shape`.
    fn covered<P: Program>(&mut self, program: &P, shape: &PieceShape, p: usize) -> bool {
        self.w.decls.clear();
        program.declare(p, &mut self.w.decls);
        shape.covers_accesses(&self.p.db, &self.w.decls)
    }

    /// Whether every later piece that can be declared once `first` ran is covered by its shape.
    fn later_covered<P: Program>(&mut self, program: &P, known: &Known, first: &[usize]) -> bool {
        for &p in known.chops[1..].iter().flatten() {
            if p >= program.pieces() {
                continue;
            }
            self.w.deps.clear();
            program.declaration_depends_on(p, &mut self.w.deps);
            if self.w.deps.iter().all(|d| first.contains(d))
                && !self.covered(program, &known.shape.pieces[p], p)
            {
                return false;
            }
        }
        true
    }

    /// Runs `program` chopped as `known` says (see the module docs). A later chop that declares
    /// more than its shape cannot be undone: its widened shape comes back, to learn after the end.
    pub(super) fn chopped<P: Program>(
        &mut self,
        program: &mut P,
        known: &Known,
    ) -> Result<Option<TypeShape>, Stop> {
        let first: &[usize] = known.chops.first().map_or(&[], |c| c);
        match self.run_chop(program, known, first) {
            Ok(true) if self.later_covered(program, known, first) => {}
            Ok(_) => {
                self.undo_chop();
                self.end(false);
                return Err(Stop::Learn);
            }
            Err(a) => {
                if self.aborted.is_none() {
                    self.undo_chop();
                }
                self.end(false);
                return Err(Stop::Abort(a));
            }
        }
        self.commit_chop();
        let mut missed: Option<TypeShape> = None;
        let mut backoff = Backoff::new(
            RetryPolicy::default(),
            0x5C ^ (self.w.owner as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        for chop in &known.chops[1..] {
            let mut attempt = 0;
            loop {
                attempt += 1;
                self.aborted = None;
                std::mem::swap(&mut self.w.exec.rec, &mut self.w.chop_rec);
                let out = self.run_later_chop(program, known, chop, &mut missed);
                std::mem::swap(&mut self.w.exec.rec, &mut self.w.chop_rec);
                let ok = out.is_ok();
                if ok {
                    self.commit_chop();
                } else if self.aborted.is_none() {
                    self.undo_chop();
                }
                self.keep_chop_record(ok);
                match out {
                    Ok(()) => break,
                    Err(a) if a.is_retryable() && attempt < MAX_CHOP_ATTEMPTS => {
                        backoff.wait(attempt)
                    }
                    // What retrying cannot cure ends the transaction here (rollback safety
                    // promised it would not happen): what committed stays.
                    Err(_) => {
                        self.end(true);
                        return Ok(missed);
                    }
                }
            }
        }
        if !self.paid {
            // A transaction that wrote nothing still commits once, as under ACID.
            self.p.delay.before_release();
        }
        self.end(true);
        Ok(missed)
    }

    /// A later chop: its pieces, each declaration checked; one not covered widens `missed`.
    fn run_later_chop<P: Program>(
        &mut self,
        program: &mut P,
        known: &Known,
        pieces: &[usize],
        missed: &mut Option<TypeShape>,
    ) -> TxResult<()> {
        let n = program.pieces();
        for &p in pieces.iter().filter(|&&p| p < n) {
            if !self.covered(program, &known.shape.pieces[p], p) {
                let m = missed.get_or_insert_with(|| TypeShape {
                    name: known.shape.name,
                    pieces: vec![PieceShape::default(); n],
                    commit_point: known.shape.commit_point,
                });
                m.pieces[p].widen(&shape_of(&self.p.db, &self.w.decls));
            }
            program.run_piece(p, self)?;
        }
        Ok(())
    }

    /// Moves what a later chop's attempt recorded into the transaction's record if it committed,
    /// drops it if not.
    fn keep_chop_record(&mut self, committed: bool) {
        let scratch = &mut self.w.chop_rec;
        if !scratch.enabled() {
            return;
        }
        scratch.finish(self.id, committed);
        let rec = &mut self.w.exec.rec;
        for t in scratch.take() {
            if !committed {
                continue;
            }
            for e in t.events {
                match e {
                    Event::Read { item, version } => rec.read(item.table, item.key, version),
                    Event::Write {
                        item,
                        prev,
                        deleted,
                    } => rec.write(item.table, item.key, prev, deleted),
                    Event::Scan { table, lo, hi } => rec.scan(table, lo, hi),
                }
            }
        }
    }
}

impl<L: Level> Tx for ChopTx<'_, L> {
    fn id(&self) -> TxnId {
        self.id
    }

    fn get(&mut self, table: TableId, key: u64, cols: ColumnSet) -> TxResult<Option<RowRef<'_>>> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        if t.is_read_only() {
            return Ok(self.w.exec.get(t, key, None, cols));
        }
        let rid = Self::slot(t, key);
        let prev = self.lock(t, rid, Mode::Shared).map_err(|r| self.fail(r))?;
        let v = t.version(rid).load(Ordering::Acquire);
        self.w.exec.rec.read(table, key, v);
        let present = v & ABSENT == 0;
        if present {
            let _ = self.w.exec.read(t, rid, cols);
        }
        self.end_read(prev);
        Ok(present.then(|| self.w.exec.last_image(t)))
    }

    fn update<R>(
        &mut self,
        table: TableId,
        key: u64,
        cols: ColumnSet,
        f: impl FnOnce(&mut RowMut<'_>) -> R,
    ) -> TxResult<Option<R>> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        refuse_write(t).map_err(|a| self.fail_with(a))?;
        let rid = Self::slot(t, key);
        self.lock(t, rid, Mode::Exclusive)
            .map_err(|r| self.fail(r))?;
        let v = t.version(rid).load(Ordering::Acquire);
        self.w.exec.rec.read(table, key, v);
        if v & ABSENT != 0 {
            self.p.delay.after_op();
            return Ok(None);
        }
        let out = self
            .w
            .exec
            .update(t, key, rid, cols, Install::Swap(self.id), f);
        self.p.delay.after_op();
        Ok(Some(out))
    }

    fn insert(
        &mut self,
        table: TableId,
        key: u64,
        f: impl FnOnce(&mut RowMut<'_>),
    ) -> TxResult<()> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        refuse_write(t).map_err(|a| self.fail_with(a))?;
        let (rid, _) = t.get_or_create(key);
        self.lock(t, rid, Mode::Exclusive)
            .map_err(|r| self.fail(r))?;
        if t.version(rid).load(Ordering::Acquire) & ABSENT == 0 {
            let a = Abort::with_detail(
                AbortReason::DuplicateKey,
                format!("{}: key {key}", t.name()),
            );
            return Err(self.fail_with(a));
        }
        if L::SER && t.is_ordered() {
            self.lock_next_keys(t, key).map_err(|r| self.fail(r))?;
        }
        self.w.exec.insert(t, key, rid, Install::Swap(self.id), f);
        self.p.delay.after_op();
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        refuse_write(t).map_err(|a| self.fail_with(a))?;
        let rid = Self::slot(t, key);
        self.lock(t, rid, Mode::Exclusive)
            .map_err(|r| self.fail(r))?;
        let v = t.version(rid).load(Ordering::Acquire);
        if v & ABSENT != 0 {
            self.w.exec.rec.read(table, key, v);
            self.p.delay.after_op();
            return Ok(false);
        }
        self.w
            .exec
            .delete(t, key, rid, Install::Swap(self.id | ABSENT));
        self.p.delay.after_op();
        Ok(true)
    }

    /// Each entry passed is read under a read lock (short at read committed); at serializable the
    /// entry after the range (or the supremum) is locked too, and kept: next-key locking.
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        cols: ColumnSet,
        mut f: impl FnMut(u64, RowRef<'_>) -> bool,
    ) -> TxResult<()> {
        check_live(self.aborted)?;
        let db = &self.p.db;
        let t = db.table(table);
        if !t.is_ordered() {
            let a = Abort::with_detail(
                AbortReason::InvalidData,
                format!("{}: scan needs an ordered index", t.name()),
            );
            return Err(self.fail_with(a));
        }
        if lo > hi {
            return Ok(());
        }
        if t.is_read_only() {
            self.w.exec.scan(t, lo, hi, cols, f);
            return Ok(());
        }
        self.w.exec.image(t);
        let succ = |prev: Option<u64>| match prev {
            None => t.range(lo, u64::MAX).next(),
            Some(p) => t.next_after(p),
        };
        let mut prev: Option<u64> = None;
        loop {
            let (key, rid) = match succ(prev) {
                Some((k, r)) => (Some(k), r),
                None => (None, SUPREMUM),
            };
            let in_range = key.is_some_and(|k| k <= hi);
            if !in_range && !L::SER {
                self.w.exec.rec.scan(table, lo, hi);
                self.p.delay.after_op();
                return Ok(());
            }
            let held = self.lock(t, rid, Mode::Shared).map_err(|r| self.fail(r))?;
            if L::SER && succ(prev).map(|e| e.0) != key {
                // An entry appeared in the gap: lock it first (keeping this lock).
                continue;
            }
            let Some(k) = key.filter(|&k| k <= hi) else {
                // The next key, locked and kept (serializable).
                self.w.exec.rec.scan(table, lo, hi);
                self.p.delay.after_op();
                return Ok(());
            };
            prev = Some(k);
            let v = t.version(rid).load(Ordering::Acquire);
            let go_on = if v & ABSENT != 0 {
                self.w.exec.rec.read(table, k, v);
                true
            } else {
                f(k, self.w.exec.scan_row(t, k, rid, v, cols))
            };
            if !L::SER && held.is_none() {
                self.unlock_last();
            }
            if !go_on {
                self.w.exec.rec.scan(table, lo, k);
                self.p.delay.after_op();
                return Ok(());
            }
        }
    }

    fn commit(mut self) -> TxResult<()> {
        check_live(self.aborted)?;
        self.p.delay.before_release();
        self.w.exec.finish(&self.p.db, true);
        self.release();
        self.end(true);
        Ok(())
    }

    fn abort(mut self) {
        if !self.done {
            self.undo_chop();
            self.end(false);
        }
    }
}

impl<L: Level> Drop for ChopTx<'_, L> {
    fn drop(&mut self) {
        if !self.done {
            self.undo_chop();
            self.end(false);
        }
    }
}

impl<L: Level> ScChopping<L> {
    /// The plan of `program`'s type for worker `w` (its cache, refreshed when the plans moved).
    fn known<P: Program>(&self, w: &mut ScWorker, program: &P) -> Option<Arc<Known>> {
        let v = self.plans.version();
        if v != w.version {
            w.cache.clear();
            w.version = v;
        }
        let name = program.name();
        if let Some(k) = w.cache.get(name) {
            return Some(k.clone());
        }
        let k = self.plans.get(name)?;
        w.cache.insert(name, k.clone());
        Some(k)
    }

    /// Runs `program` once, to commit or abort (see the module docs).
    pub(super) fn run<P: Program>(&self, w: &mut ScWorker, program: &mut P) -> TxResult<()> {
        let Some(known) = self.known(w, program) else {
            return self.alone(w, program);
        };
        if known.shape.pieces.len() < program.pieces() {
            return self.alone(w, program);
        }
        let shared = self.barrier.shared(w.owner);
        let mut tx = ChopTx::new(self, w, None);
        let out = tx.chopped(program, &known);
        drop(tx);
        drop(shared);
        match out {
            Ok(None) => Ok(()),
            Ok(Some(missed)) => {
                // A later chop declared more than its shape: learn it now, alone.
                let _all = self.barrier.exclusive();
                self.plans.learn(missed);
                Ok(())
            }
            Err(Stop::Abort(a)) => Err(a),
            Err(Stop::Learn) => self.alone(w, program),
        }
    }

    /// Runs `program` alone, holding the whole database, as one chop, and learns what its pieces
    /// declare (a type not seen yet, or a piece that declared more than its type's shape).
    fn alone<P: Program>(&self, w: &mut ScWorker, program: &mut P) -> TxResult<()> {
        let all = self.barrier.exclusive();
        let n = program.pieces();
        let mut shape = TypeShape {
            name: program.name(),
            pieces: Vec::with_capacity(n),
            commit_point: program.commit_point(),
        };
        let mut decls = Vec::new();
        for p in 0..n {
            w.deps.clear();
            program.depends_on(p, &mut w.deps);
            shape.pieces.push(PieceShape {
                commutes: program.commutes(p),
                depends_on: w.deps.clone(),
                ..Default::default()
            });
        }
        // Declarations may need earlier pieces' results: each is read just before its piece runs.
        let mut tx = ChopTx::new(self, w, None);
        let mut out = Ok(());
        for p in 0..n {
            decls.clear();
            program.declare(p, &mut decls);
            let mut s = shape_of(&self.db, &decls);
            s.commutes = shape.pieces[p].commutes;
            shape.pieces[p].widen(&s);
            if let Err(a) = program.run_piece(p, &mut tx) {
                out = Err(a);
                break;
            }
        }
        match &out {
            Ok(()) => {
                tx.commit_chop();
                if !tx.paid {
                    self.delay.before_release();
                }
                tx.end(true);
            }
            Err(_) => {
                if tx.aborted.is_none() {
                    tx.undo_chop();
                }
                tx.end(false);
            }
        }
        drop(tx);
        // Learnt while the database is still held: no transaction runs across a change of plan.
        self.plans.learn(shape);
        drop(all);
        out
    }
}
