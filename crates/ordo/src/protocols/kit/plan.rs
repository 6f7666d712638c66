//! Planning a transaction before it runs: its full read/write set, turned into key locks.
//!
//! The protocols that request every lock before a transaction runs — the VLL family, Calvin and
//! deterministic VLL, H-Store and the partitioned engines, deadlock-free 2PL — must know everything a
//! transaction will touch up front. [`Planner::plan`] collects the union of the program's declared
//! [`Access`]es. Where a piece's declaration depends on earlier pieces' results
//! ([`Program::declaration_depends_on`] non-empty, e.g. a secondary-index lookup) it first runs those earlier
//! pieces in a **reconnaissance pass** ([`super::recon::ReconTx`]: reads at no isolation, writes to
//! a private overlay), as the VLL paper's §2.4 (and Calvin's OLLP) prescribe; only the pieces some
//! declaration depends on run. The real execution later checks every operation against the locks
//! taken; if the data changed in between and the transaction strays outside them, it aborts with
//! [`crate::txn::AbortReason::Validation`] and is resubmitted with a fresh plan.
//!
//! [`locks_of`] turns accesses into a deduplicated list of [`LockRequest`]s: one per `(table, key)`,
//! exclusive if any access writes it. A key range (a scan) is locked **key by key**, present or not: the
//! lock manager locks keys, not rows, so a lock on an absent key also blocks an insert of it, which makes
//! range locking phantom-safe without next-key locks. Ranges wider than [`MAX_RANGE_KEYS`] cannot be
//! locked this way: [`locks_of`] says so, and the deterministic protocols then order the transaction
//! as a barrier holding the whole database (TPC-C's Delivery scans up to a fence row).
//!
//! Reads and scans of a table that is **read-only once loaded** ([`crate::storage::TableSpec::read_only`]:
//! TPC-C's ITEM and customer-by-name index) take no lock at all — nothing can conflict with them, and
//! locking a by-name scan key by key cost thousands of counters per Payment — and a declared write to
//! such a table is refused ([`Access::unlocked_in`]).

pub use super::lock_request::{find, normalize, LockRequest, Mode};
use super::recon::{Overlay, ReconTx};
use crate::storage::{Database, TableId};
use crate::txn::{Access, Program, Target, TxResult};

/// The widest key range [`locks_of`] locks key by key.
pub const MAX_RANGE_KEYS: u64 = 4096;

/// Reusable buffers of [`Planner::plan`].
#[derive(Default, Debug)]
pub struct Planner {
    deps: Vec<usize>,
    overlay: Overlay,
}

/// What [`Planner::plan_pieces`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    /// Whether a reconnaissance pass ran (some declaration depended on earlier pieces' results).
    pub recon: bool,
    /// How many pieces were declared: all of them, unless a piece failed on the reconnaissance
    /// pass (the transaction would abort there on this data), when only those before it were.
    pub declared: usize,
}

impl Planner {
    /// Collects every access of `program` into the cleared `accesses`, running a reconnaissance
    /// pass over the pieces later declarations depend on. Returns whether reconnaissance ran.
    ///
    /// With `prefetch`, a reconnaissance pass is preceded by [`crate::txn::prefetch_declared`] (what
    /// the harness does before a program it hands out), so that its reads do not miss one after
    /// another; a caller whose program the harness already prefetched passes `false`.
    pub fn plan<P: Program, M: Default + Send + Sync>(
        &mut self,
        program: &mut P,
        db: &Database<M>,
        accesses: &mut Vec<Access>,
        prefetch: bool,
    ) -> bool {
        self.declare(program, db, accesses, None, prefetch).recon
    }

    /// The accesses of `program` known without running any of it, into the cleared `accesses`:
    /// every piece's declaration that depends on no earlier piece's results, and for one that does,
    /// the bounds the program can give ([`Program::declare_bounds`]). Returns whether that covers
    /// every piece (none was left out).
    ///
    /// For a protocol whose locks are coarse enough that the pieces left out most likely fall under
    /// the others' (H-Store's partitions: a Payment's customer found by last name lives in the
    /// warehouse the Payment names), this skips the reconnaissance pass; a piece that strays outside
    /// at run time aborts the transaction, to be planned in full ([`Self::plan`]) on its retry, as
    /// H-Store restarts a mispredicted single-partition transaction as a multi-partition one.
    pub fn plan_known<P: Program>(&mut self, program: &P, accesses: &mut Vec<Access>) -> bool {
        accesses.clear();
        let mut all = true;
        for i in 0..program.pieces() {
            self.deps.clear();
            program.declaration_depends_on(i, &mut self.deps);
            if self.deps.is_empty() {
                program.declare(i, accesses);
            } else if !program.declare_bounds(i, accesses) {
                all = false;
            }
        }
        all
    }

    /// [`Self::plan`], keeping each piece's accesses apart: piece `i` declared
    /// `accesses[bounds[i]..bounds[i + 1]]` (`bounds` is cleared and gets one more entry than the
    /// pieces declared).
    pub fn plan_pieces<P: Program, M: Default + Send + Sync>(
        &mut self,
        program: &mut P,
        db: &Database<M>,
        accesses: &mut Vec<Access>,
        bounds: &mut Vec<usize>,
        prefetch: bool,
    ) -> Planned {
        bounds.clear();
        bounds.push(0);
        self.declare(program, db, accesses, Some(bounds), prefetch)
    }

    fn declare<P: Program, M: Default + Send + Sync>(
        &mut self,
        program: &mut P,
        db: &Database<M>,
        accesses: &mut Vec<Access>,
        mut bounds: Option<&mut Vec<usize>>,
        prefetch: bool,
    ) -> Planned {
        accesses.clear();
        let Planner { deps, overlay } = self;
        let mut overlay = Some(overlay);
        let mut ran = 0; // pieces already run by reconnaissance
        let mut recon: Option<ReconTx<'_, M>> = None;
        let pieces = program.pieces();
        for i in 0..pieces {
            deps.clear();
            program.declaration_depends_on(i, deps);
            if let Some(&last) = deps.iter().max() {
                if recon.is_none() {
                    if prefetch {
                        crate::txn::prefetch_declared(program, db);
                    }
                    let o = overlay.take().expect("one reconnaissance per plan");
                    recon = Some(ReconTx::new(db, o));
                }
                let tx = recon.as_mut().expect("made above");
                while ran <= last {
                    if program.run_piece(ran, tx).is_err() {
                        // The transaction would abort here on this data: lock what is known. If the
                        // real run goes further, it leaves its locks and is resubmitted.
                        return Planned {
                            recon: true,
                            declared: i,
                        };
                    }
                    ran += 1;
                }
            }
            program.declare(i, accesses);
            if let Some(b) = bounds.as_deref_mut() {
                b.push(accesses.len());
            }
        }
        Planned {
            recon: recon.is_some(),
            declared: pieces,
        }
    }
}

/// The deduplicated key locks (normalized as the `vll` module does: short lists in request order,
/// long ones sorted) that cover `accesses` (appended to the cleared `out`), in the
/// VLL module's [`LockRequest`] form. With `rows`, each lock also names the key's row slot (created,
/// absent, if the key was never indexed), for lock managers that index counters by row.
///
/// Returns `true` when some range was wider than [`MAX_RANGE_KEYS`]: such a range is left out of
/// `out`, and the transaction must hold the whole database instead (run as a barrier) or be refused.
pub fn locks_of<M: Default + Send + Sync>(
    db: &Database<M>,
    accesses: &[Access],
    rows: bool,
    out: &mut Vec<LockRequest>,
) -> TxResult<bool> {
    let mut whole = false;
    out.clear();
    let lock = |table: TableId, key: u64, mode: Mode| {
        let rid = if rows {
            let t = db.table(table);
            t.lookup(key).unwrap_or_else(|| t.get_or_create(key).0)
        } else {
            0
        };
        LockRequest::new(table, key, rid, mode)
    };
    for a in accesses {
        if a.unlocked_in(db)? {
            continue;
        }
        let mode = if a.is_write() {
            Mode::Exclusive
        } else {
            Mode::Shared
        };
        match a.target {
            Target::Key(key) => out.push(lock(a.table, key, mode)),
            Target::Range { lo, hi } => {
                if lo > hi {
                    continue;
                }
                if hi - lo >= MAX_RANGE_KEYS {
                    whole = true;
                    continue;
                }
                out.extend((lo..=hi).map(|key| lock(a.table, key, mode)));
            }
        }
    }
    // One lock per key, the strongest mode.
    normalize(out);
    Ok(whole)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::conformance::small_db;
    use crate::storage::ColumnSet;

    fn db() -> Database<()> {
        let mut db: Database<()> = small_db();
        let schema = db.table(0).schema().clone();
        db.create_table(crate::storage::TableSpec::new("t1", schema))
            .unwrap();
        db
    }

    #[test]
    fn plan_known_leaves_out_the_pieces_whose_declarations_need_earlier_results() {
        use crate::protocols::kit::testkit::{mix, MixProgram};
        let mut planner = Planner::default();
        let mut out = Vec::new();
        let chase = MixProgram {
            keys: 64,
            pointer: Some(2),
            target: 9,
            ..MixProgram::default()
        };
        assert!(!planner.plan_known(&chase, &mut out));
        assert_eq!(
            out,
            [Access::read(0, 2, ColumnSet::ALL)],
            "the pointer row only"
        );
        let plain = mix(&[3, 5]);
        assert!(planner.plan_known(&plain, &mut out));
        assert_eq!(out.len(), 2, "every piece: {out:?}");
    }

    #[test]
    fn with_rows_each_lock_names_its_row_slot() {
        let db = db();
        let mut out = Vec::new();
        let acc = [Access::read(0, 20, ColumnSet::ALL), Access::insert(0, 25)];
        assert!(!locks_of(&db, &acc, true, &mut out).unwrap());
        assert_eq!(out[0].rid, db.table(0).lookup(20).unwrap());
        assert_eq!(
            Some(out[1].rid),
            db.table(0).lookup(25),
            "an absent slot was created"
        );
    }

    #[test]
    fn locks_are_deduplicated_and_writes_win() {
        let acc = [
            Access::read(0, 5, ColumnSet::ALL),
            Access::update(0, 5, ColumnSet::ALL, ColumnSet::ALL),
            Access::read(1, 2, ColumnSet::ALL),
            Access::read(0, 3, ColumnSet::ALL),
            Access::read(0, 3, ColumnSet::ALL),
            Access::scan(1, 1, 3, ColumnSet::ALL),
        ];
        let mut out = Vec::new();
        assert!(!locks_of(&db(), &acc, false, &mut out).unwrap());
        let mut got: Vec<_> = out
            .iter()
            .map(|l| (l.table, l.key, l.mode == Mode::Exclusive))
            .collect();
        got.sort();
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
        assert_eq!(out[find(&out, 0, 5).unwrap()].mode, Mode::Exclusive);
        assert!(find(&out, 0, 4).is_none());
    }

    #[test]
    fn read_only_tables_take_no_locks_and_refuse_writes() {
        let mut db = db();
        let schema = db.table(0).schema().clone();
        let ro = db
            .create_table(
                crate::storage::TableSpec::new("ro", schema)
                    .ordered(4)
                    .read_only(),
            )
            .unwrap();
        let mut out = Vec::new();
        let acc = [
            Access::scan(ro, 0, u64::MAX, ColumnSet::ALL),
            Access::read(ro, 7, ColumnSet::ALL),
            Access::read(0, 7, ColumnSet::ALL),
        ];
        assert!(
            !locks_of(&db, &acc, true, &mut out).unwrap(),
            "a wide scan of a read-only table needs no barrier"
        );
        assert_eq!(
            out.iter().map(|l| (l.table, l.key)).collect::<Vec<_>>(),
            vec![(0, 7)]
        );
        let err = locks_of(&db, &[Access::insert(ro, 3)], true, &mut out).unwrap_err();
        assert_eq!(err.reason, crate::txn::AbortReason::InvalidData);
        assert!(db.table(ro).lookup(3).is_none(), "no slot was created");
    }

    #[test]
    fn too_wide_a_range_asks_for_the_whole_database() {
        let mut out = Vec::new();
        let acc = [
            Access::scan(0, 0, u64::MAX, ColumnSet::ALL),
            Access::read(0, 7, ColumnSet::ALL),
        ];
        assert!(locks_of(&db(), &acc, true, &mut out).unwrap());
        assert_eq!(out.len(), 1, "only the point lock is listed");
        let narrow = [Access::scan(0, 0, 9, ColumnSet::ALL)];
        assert!(!locks_of(&db(), &narrow, true, &mut out).unwrap());
        assert_eq!(out.len(), 10);
    }
}
