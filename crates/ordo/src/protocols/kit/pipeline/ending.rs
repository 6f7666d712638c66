//! How a transaction under early write visibility ends: it commits only after every transaction
//! it depends on has ended (and aborts with a hard one that aborted — a cascade); it aborts by
//! undoing each record once everyone after it on the record has undone theirs.

use super::access_list::{leave, Dep, PipeRecord, Touched};
use super::board::{Board, State};
use super::piece::Run;
use crate::check::TxnId;
use crate::storage::Database;
use crate::txn::{Abort, AbortReason};
use crossbeam_utils::Backoff;

/// `Cascade` if a hard dependency of `deps` aborted.
pub fn doomed(board: &Board, deps: &[Dep]) -> Option<AbortReason> {
    deps.iter()
        .any(|d| d.hard && board.state(d.txn).aborted())
        .then_some(AbortReason::Cascade)
}

/// Waits, as `me`, until every transaction of `deps` has ended; `Cascade` if a hard one aborted,
/// `Deadlock` if the wait closes a cycle (see [`Board::wait`]).
pub fn await_deps(board: &Board, me: TxnId, deps: &[Dep]) -> Result<(), Abort> {
    for d in deps {
        board
            .wait(
                me,
                d.txn,
                |b| !matches!(b.state(d.txn), State::Running(_)),
                |b| doomed(b, deps),
            )
            .map_err(Abort::new)?;
        if d.hard && board.state(d.txn).aborted() {
            return Err(Abort::new(AbortReason::Cascade));
        }
    }
    Ok(())
}

/// Aborts transaction `run.id`: marks it aborting, undoes each record of `touched` it wrote once
/// no later accessor is left on the record, leaves every list, records the abort, marks it
/// aborted. `touched` ends empty.
pub fn undo_and_leave(
    db: &Database<PipeRecord>,
    board: &Board,
    run: &mut Run,
    touched: &mut Vec<Touched>,
) {
    let id = run.id;
    board.aborting(id);
    // One item per record, a writing one if any wrote it.
    touched.sort_unstable_by_key(|t| (t.table, t.rid, !t.wrote));
    touched.dedup_by_key(|t| (t.table, t.rid));
    let backoff = Backoff::new();
    while !touched.is_empty() {
        let undo = &run.undo;
        touched.retain(|t| !leave(db, id, undo, t));
        if !touched.is_empty() {
            backoff.snooze();
        }
    }
    run.end(db, false);
    board.aborted(id);
}
