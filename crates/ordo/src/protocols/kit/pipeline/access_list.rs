//! What a pipelining protocol (IC3, Callas's Runtime Pipelining) keeps beside each record: the piece lock, and the **access list** of the uncommitted
//! transactions that accessed the record, in the order they did.
//!
//! A piece appends an [`Entry`] (its transaction, and whether it read, wrote, or wrote commuting)
//! for every record it locked, before it runs (so that even a piece that fails midway leaves its
//! writes behind an entry: see [`super::txn`]'s undo). A transaction leaves every list when it
//! commits, and when it has undone its writes after an abort: a list only holds transactions that
//! are running or undoing, so it stays as short as the record is contended.
//!
//! **Dependencies** ([`deps_of`]). IC3 makes the accessor depend on the *latest conflicting*
//! entry. Here, scanning back from the end of the list:
//!
//! | the newcomer  | depends on                                                         |
//! |---------------|--------------------------------------------------------------------|
//! | reads         | the last writer (hard: it saw that write)                          |
//! | writes        | every reader since the last writer (soft), and the last writer (hard) |
//!
//! (its own entries are skipped; its own write ends the scan, everything before it is a
//! dependency already). So every conflicting pair of accesses is linked by a chain of dependencies —
//! which is what makes the commit order serial (see [`super`]). A **hard** dependency is a write the
//! newcomer saw or overwrote: if it aborts, so must the newcomer (a cascading abort). A **soft** one
//! is a read the newcomer overwrote: only the commit order matters, and if the reader aborts the
//! dependency is simply dropped. A commuting write after a commuting write (`ic3-comm`) stays a hard
//! dependency, for the commit order and the undo order, but does not **order** the two
//! transactions' pieces ([`Dep::order`]).
//!
//! A write by a transaction that is undoing it (aborting) means the record is about to change back:
//! [`deps_of`] says so ([`Undoing`]) and the newcomer lets go of its locks and tries again.

use super::board::{Board, State};
use super::piece::Undo;
use crate::check::TxnId;
use crate::protocols::kit::lock_request::{LockRequest, Mode};
use crate::protocols::kit::ticket::TicketLock;
use crate::storage::{Database, RowId, TableId};
use parking_lot::Mutex;

/// The per-record state (the protocol's `Meta`).
#[derive(Debug, Default)]
pub struct PipeRecord {
    /// The piece lock: taken shared or exclusive by a piece, in key order, for the piece's run.
    pub lock: TicketLock,
    /// The uncommitted accessors, oldest first.
    pub list: Mutex<Vec<Entry>>,
}

/// How an entry accessed its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    /// A write of a piece whose writes commute (`ic3-comm` only).
    Comm,
}

impl Kind {
    /// The kind of an access that writes or not, by a piece whose writes commute or not.
    #[inline]
    pub fn of(write: bool, comm: bool) -> Kind {
        match (write, comm) {
            (false, _) => Kind::Read,
            (true, false) => Kind::Write,
            (true, true) => Kind::Comm,
        }
    }
    #[inline]
    pub fn writes(self) -> bool {
        self != Kind::Read
    }
}

/// One uncommitted access of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub txn: TxnId,
    pub kind: Kind,
}

/// A dependency: `txn` must commit before the dependent does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dep {
    pub txn: TxnId,
    /// The dependent saw or overwrote a write of `txn`: if `txn` aborts, so does the dependent.
    pub hard: bool,
    /// The two transactions' conflicting pieces must run in this order (IC3's piece wait); false
    /// only between commuting writes.
    pub order: bool,
}

/// The record is being undone by an aborting transaction: try again once it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undoing;

/// Appends to `out` what an access of kind `kind` by `me` depends on, given the record's `list`
/// (see the module docs). Transactions that committed (but have not left the list yet) need no
/// dependency. With `anti` false (read committed: anti-dependencies do not order), a writer does
/// not depend on the readers since the last writer.
pub fn deps_of(
    list: &[Entry],
    me: TxnId,
    kind: Kind,
    anti: bool,
    board: &Board,
    out: &mut Vec<Dep>,
) -> Result<(), Undoing> {
    if list
        .iter()
        .any(|e| e.txn != me && e.kind.writes() && board.state(e.txn).aborted())
    {
        return Err(Undoing);
    }
    for e in list.iter().rev() {
        if e.txn == me {
            if e.kind.writes() {
                break;
            }
            continue;
        }
        let st = board.state(e.txn);
        if e.kind.writes() && st.aborted() {
            // It turned aborting since the check above: its write is about to be undone.
            return Err(Undoing);
        }
        let live = matches!(st, State::Running(_));
        if !e.kind.writes() && (kind == Kind::Read || !anti) {
            continue;
        }
        if live {
            out.push(Dep {
                txn: e.txn,
                hard: e.kind.writes(),
                order: !(kind == Kind::Comm && e.kind == Kind::Comm),
            });
        }
        if e.kind.writes() {
            break;
        }
    }
    Ok(())
}

/// Adds `d` to `deps`, merging it with a dependency on the same transaction.
pub fn merge(deps: &mut Vec<Dep>, d: Dep) {
    match deps.iter_mut().find(|x| x.txn == d.txn) {
        Some(x) => {
            x.hard |= d.hard;
            x.order |= d.order;
        }
        None => deps.push(d),
    }
}

/// Enters transaction `id` on the access list of every record of `locks` (a write where the lock
/// is exclusive, commuting with `comm`), noting each record in `touched`. The entries go in before
/// the piece runs, so that what it writes — even if it fails midway — is undone only after
/// everyone who came later.
pub fn enter(
    db: &Database<PipeRecord>,
    id: TxnId,
    locks: &[LockRequest],
    comm: bool,
    touched: &mut Vec<Touched>,
) {
    for l in locks {
        let kind = Kind::of(l.mode == Mode::Exclusive, comm);
        db.table(l.table)
            .meta(l.rid)
            .list
            .lock()
            .push(Entry { txn: id, kind });
        touched.push(Touched {
            table: l.table,
            rid: l.rid,
            wrote: kind.writes(),
        });
    }
}

/// A record a transaction touched, and whether it wrote it.
#[derive(Clone, Copy, Debug)]
pub struct Touched {
    pub table: TableId,
    pub rid: RowId,
    pub wrote: bool,
}

/// Tries to leave `t`'s list as aborting transaction `id` (restoring the record first if `id`
/// wrote it); fails while a later entry of another transaction is still on it.
pub fn leave(db: &Database<PipeRecord>, id: TxnId, undo: &Undo, t: &Touched) -> bool {
    let m = db.table(t.table).meta(t.rid);
    if !t.wrote {
        m.list.lock().retain(|e| e.txn != id);
        return true;
    }
    m.lock.acquire(Mode::Exclusive);
    let left = {
        let mut list = m.list.lock();
        let first = list.iter().position(|e| e.txn == id && e.kind.writes());
        let later = first.is_some_and(|i| list[i + 1..].iter().any(|e| e.txn != id));
        if !later {
            undo.restore(db, t.table, t.rid, id);
            list.retain(|e| e.txn != id);
        }
        !later
    };
    m.lock.release(Mode::Exclusive);
    left
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: TxnId = 1 << 40 | 1;
    const B: TxnId = 2 << 40 | 1;
    const C: TxnId = 3 << 40 | 1;
    const ME: TxnId = 4 << 40 | 1;

    fn board() -> Board {
        let b = Board::new(4);
        for id in [A, B, C, ME] {
            b.begin(id);
        }
        b
    }
    fn e(txn: TxnId, kind: Kind) -> Entry {
        Entry { txn, kind }
    }
    fn deps(list: &[Entry], kind: Kind, b: &Board) -> Vec<(TxnId, bool, bool)> {
        let mut out = Vec::new();
        deps_of(list, ME, kind, true, b, &mut out).unwrap();
        out.iter().map(|d| (d.txn, d.hard, d.order)).collect()
    }

    #[test]
    fn a_reader_depends_on_the_last_writer_only() {
        let b = board();
        let list = [e(A, Kind::Write), e(B, Kind::Read), e(C, Kind::Read)];
        assert_eq!(deps(&list, Kind::Read, &b), vec![(A, true, true)]);
        assert_eq!(deps(&[e(B, Kind::Read)], Kind::Read, &b), vec![]);
    }

    #[test]
    fn a_writer_depends_on_the_readers_since_the_last_writer_and_on_it() {
        let b = board();
        let list = [
            e(C, Kind::Write),
            e(A, Kind::Write),
            e(B, Kind::Read),
            e(C, Kind::Read),
        ];
        assert_eq!(
            deps(&list, Kind::Write, &b),
            vec![(C, false, true), (B, false, true), (A, true, true)]
        );
    }

    #[test]
    fn without_anti_dependencies_a_writer_skips_the_readers() {
        let b = board();
        let list = [e(A, Kind::Write), e(B, Kind::Read)];
        let mut out = Vec::new();
        deps_of(&list, ME, Kind::Write, false, &b, &mut out).unwrap();
        assert_eq!(out.iter().map(|d| d.txn).collect::<Vec<_>>(), vec![A]);
    }

    #[test]
    fn own_writes_end_the_scan_and_committed_ones_need_no_dependency() {
        let b = board();
        let list = [e(A, Kind::Write), e(ME, Kind::Write), e(B, Kind::Read)];
        assert_eq!(deps(&list, Kind::Write, &b), vec![(B, false, true)]);
        b.committed(B);
        assert_eq!(deps(&list, Kind::Write, &b), vec![]);
    }

    #[test]
    fn commuting_writes_are_ordered_for_commit_but_not_for_pieces() {
        let b = board();
        let list = [e(A, Kind::Comm)];
        assert_eq!(deps(&list, Kind::Comm, &b), vec![(A, true, false)]);
        assert_eq!(deps(&list, Kind::Write, &b), vec![(A, true, true)]);
        assert_eq!(deps(&list, Kind::Read, &b), vec![(A, true, true)]);
    }

    #[test]
    fn an_undoing_writer_makes_newcomers_wait() {
        let b = board();
        b.aborting(A);
        let mut out = Vec::new();
        assert_eq!(
            deps_of(&[e(A, Kind::Write)], ME, Kind::Read, true, &b, &mut out),
            Err(Undoing)
        );
        // An aborting reader is no obstacle (it has nothing to undo here).
        assert_eq!(deps(&[e(A, Kind::Read)], Kind::Write, &b), vec![]);
    }
}
