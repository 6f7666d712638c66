//! Planning a transaction before it is ordered: its full read/write set, turned into key locks.
//!
//! Deterministic protocols (Calvin, deterministic VLL) and partitioned ones (H-Store) must know
//! everything a transaction will touch *before* it runs. [`Planner::plan`] collects the union of the program's
//! declared [`Access`]es. Where a piece's declaration depends on earlier pieces' results
//! ([`Program::depends_on`] non-empty, e.g. a secondary-index lookup) it first runs those earlier pieces
//! in a **reconnaissance pass** ([`super::exec::ReconTx`]: reads at no isolation, writes discarded), as
//! the VLL paper's §2.6 (and Calvin's OLLP) prescribe. The real execution later checks every operation
//! against the locks taken ([`super::exec::Cover`]); if the data changed in between and the transaction
//! strays outside them, it aborts with [`AbortReason::Validation`] and is resubmitted with a fresh plan.
//!
//! [`locks_of`] turns accesses into a sorted, deduplicated list of [`LockReq`]s: one per `(table, key)`,
//! exclusive if any access writes it. A key range (a scan) is locked **key by key**, present or not: the
//! lock manager locks keys, not rows, so a lock on an absent key also blocks an insert of it, which makes
//! range locking phantom-safe without next-key locks. Ranges wider than [`MAX_RANGE_KEYS`] cannot be
//! locked this way and make the plan fail with [`AbortReason::InvalidData`] (no workload here needs them).

use super::exec::ReconTx;
use crate::storage::{Database, TableId};
use crate::txn::{Abort, AbortReason, Access, Program, Target, TxResult};

/// The widest key range [`locks_of`] locks key by key.
pub const MAX_RANGE_KEYS: u64 = 4096;

/// A lock on one key of one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LockReq {
    pub table: TableId,
    pub key: u64,
    pub exclusive: bool,
}

/// Reusable buffers of [`Planner::plan`].
#[derive(Default, Debug)]
pub struct Planner {
    deps: Vec<usize>,
}

impl Planner {
    /// Collects every access of `program` into the cleared `accesses`, running a reconnaissance pass
    /// over the pieces later declarations depend on. Returns whether reconnaissance ran.
    pub fn plan<P: Program, M: Default + Send + Sync>(
        &mut self,
        program: &mut P,
        db: &Database<M>,
        accesses: &mut Vec<Access>,
    ) -> bool {
        accesses.clear();
        let mut ran = 0; // pieces already run by reconnaissance
        let mut recon = None;
        for i in 0..program.pieces() {
            self.deps.clear();
            program.depends_on(i, &mut self.deps);
            if let Some(&last) = self.deps.iter().max() {
                let tx = recon.get_or_insert_with(|| ReconTx::new(db));
                while ran <= last {
                    if program.run_piece(ran, tx).is_err() {
                        // The transaction would abort here on this data: lock what is known. If the real
                        // run goes further, it leaves its locks and is resubmitted.
                        return true;
                    }
                    ran += 1;
                }
            }
            program.declare(i, accesses);
        }
        recon.is_some()
    }
}

/// The sorted, deduplicated key locks that cover `accesses` (appended to the cleared `out`).
pub fn locks_of(accesses: &[Access], out: &mut Vec<LockReq>) -> TxResult<()> {
    out.clear();
    for a in accesses {
        let exclusive = a.is_write();
        match a.target {
            Target::Key(key) => out.push(LockReq {
                table: a.table,
                key,
                exclusive,
            }),
            Target::Range { lo, hi } => {
                if lo > hi {
                    continue;
                }
                if hi - lo >= MAX_RANGE_KEYS {
                    return Err(Abort::with_detail(
                        AbortReason::InvalidData,
                        format!("the range {lo}..={hi} is too wide to lock key by key"),
                    ));
                }
                out.extend((lo..=hi).map(|key| LockReq {
                    table: a.table,
                    key,
                    exclusive,
                }));
            }
        }
    }
    // Sort by key, exclusive first, then keep the first of each key: the strongest mode wins.
    out.sort_unstable_by(|a, b| {
        (a.table, a.key, !a.exclusive).cmp(&(b.table, b.key, !b.exclusive))
    });
    out.dedup_by(|later, first| later.table == first.table && later.key == first.key);
    Ok(())
}

/// The lock on `(table, key)` in the sorted `locks`, if any.
#[inline]
pub fn find(locks: &[LockReq], table: TableId, key: u64) -> Option<&LockReq> {
    if locks.len() <= 16 {
        return locks.iter().find(|l| l.table == table && l.key == key);
    }
    locks
        .binary_search_by(|l| (l.table, l.key).cmp(&(table, key)))
        .ok()
        .map(|i| &locks[i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::ColumnSet;

    #[test]
    fn locks_are_sorted_deduplicated_and_writes_win() {
        let acc = [
            Access::read(0, 5, ColumnSet::ALL),
            Access::update(0, 5, ColumnSet::ALL, ColumnSet::ALL),
            Access::read(1, 2, ColumnSet::ALL),
            Access::read(0, 3, ColumnSet::ALL),
            Access::read(0, 3, ColumnSet::ALL),
            Access::scan(1, 1, 3, ColumnSet::ALL),
        ];
        let mut out = Vec::new();
        locks_of(&acc, &mut out).unwrap();
        let got: Vec<_> = out.iter().map(|l| (l.table, l.key, l.exclusive)).collect();
        assert_eq!(
            got,
            vec![
                (0, 3, false),
                (0, 5, true),
                (1, 1, false),
                (1, 2, false),
                (1, 3, false)
            ]
        );
        assert!(find(&out, 0, 5).unwrap().exclusive);
        assert!(find(&out, 0, 4).is_none());
    }

    #[test]
    fn too_wide_a_range_is_refused() {
        let mut out = Vec::new();
        let e = locks_of(&[Access::scan(0, 0, u64::MAX, ColumnSet::ALL)], &mut out).unwrap_err();
        assert_eq!(e.reason, AbortReason::InvalidData);
    }
}
