//! Decomposing a transaction (§4.1–§4.2): its pieces, their data edges, the conflict units each
//! piece touches, and how many of its pieces may abort.
//!
//! The owner of a transaction plans it before the batch forms, into plain data the other cores read
//! while the batch runs (`PartPlan`, one per participant):
//!
//! * **pieces** are the program's own ([`Program::pieces`]); a piece's accesses are what it declares
//!   ([`Program::declare`], after a reconnaissance pass where a declaration depends on earlier pieces:
//!   [`Planner::plan_pieces`]);
//! * **data edges** are [`Program::depends_on`], plus one from each piece to the next piece of the
//!   same transaction that touches one of its units (so that two pieces of one transaction never
//!   race on a record, and their order is the program's);
//! * **conflict units** (`GKey`) are records, or the units the program names
//!   ([`Program::conflict_units`]: PWV's coarse ranges); a transaction's units are deduplicated, each
//!   with its strongest mode and its member pieces — the graph orders transactions per unit;
//! * **abortable pieces** are a prefix: those up to the commit point ([`Program::commit_point`]) and,
//!   when reconnaissance ran, up to the last piece whose declaration depended on it and names a record
//!   (its key may have changed by the time it runs: the run checks it, and a mismatch must be able
//!   to abort — the paper's "logical condition as early as possible in the transaction code", §3.1).
//!   A declaration in units the program names cannot go stale that way (TPC-C's (warehouse,
//!   district) does not depend on `d_next_o_id`), so it keeps early visibility;
//! * a key range wider than [`MAX_RANGE_KEYS`] that no unit covers makes the transaction a
//!   **barrier**: it runs alone once the rest of the batch is done (placed last in the batch order).

use super::graph::GKey;
use crate::protocols::kit::plan::{Planner, MAX_RANGE_KEYS};
use crate::storage::{Database, TableId};
use crate::txn::{Abort, AbortReason, Access, ConflictUnits, Program, Target};
use std::ops::Range;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicU8};

/// A piece's state (§4.4.2).
pub(super) const UNEXECUTED: u8 = 0;
pub(super) const EXECUTED: u8 = 1;
pub(super) const COMPLETED: u8 = 2;

/// A transaction's commit decision.
pub(super) const UNDECIDED: u8 = 0;
pub(super) const COMMIT: u8 = 1;
pub(super) const ABORT: u8 = 2;

/// One transaction of a batch, as planned.
#[derive(Debug)]
pub(super) struct TxnPlan {
    /// Its pieces, in [`PartPlan::pieces`].
    pub pieces: Range<u32>,
    /// Its distinct units, in [`PartPlan::units`].
    pub units: Range<u32>,
    /// It runs alone at the end of the batch (a range no unit covers and too wide to order key by key).
    pub barrier: bool,
    /// The commit rendezvous point: abortable pieces not yet executed; negative once one aborted.
    pub commit_rvp: AtomicI32,
    /// [`UNDECIDED`], [`COMMIT`] or [`ABORT`].
    pub decision: AtomicU8,
    /// Pieces not yet Completed: the one that brings it to zero ends the transaction.
    pub pieces_left: AtomicU32,
}

/// One piece of a batch, as planned.
#[derive(Debug)]
pub(super) struct PiecePlan {
    /// Its transaction, in [`PartPlan::txns`].
    pub txn: u32,
    /// Its number in the program.
    pub piece: u32,
    /// Its units, as indexes into [`PartPlan::units`], in [`PartPlan::piece_units`].
    pub units: Range<u32>,
    /// Its declared accesses, in [`PartPlan::decls`] (checked as it runs).
    pub decls: Range<u32>,
    /// The pieces that need its output, in [`PartPlan::children`].
    pub children: Range<u32>,
    /// The partition whose core runs it (its first unit's).
    pub home: u32,
    pub abortable: bool,
    /// What it still waits for: a start token, its units' turns in the graph, its data parents,
    /// and (past the commit point) its transaction's decision. Zero: it may run.
    pub wait: AtomicI32,
    /// [`UNEXECUTED`], [`EXECUTED`] or [`COMPLETED`].
    pub state: AtomicU8,
}

/// One distinct unit a transaction touches: its entry in one key list of one partition's graph.
#[derive(Debug)]
pub(super) struct UnitPlan {
    pub key: GKey,
    /// Whether any member writes it.
    pub write: bool,
    /// The partition whose graph orders it.
    pub partition: u32,
    /// Its member pieces (indexes into [`PartPlan::pieces`]), in [`PartPlan::unit_members`].
    pub members: Range<u32>,
    /// Members not yet Completed: at zero the entry is done and the unit's next entries may go.
    pub members_left: AtomicU32,
    /// Where the graph put it: `(key list << 32) | position` (set while the graph is built).
    pub slot: AtomicU64,
}

/// One declared access, as a piece's run checks it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Decl {
    pub table: TableId,
    pub lo: u64,
    pub hi: u64,
    /// The unit a point access or a one-unit range names (a match on it is a match).
    pub unit: Option<GKey>,
    pub write: bool,
}

/// One participant's transactions of a batch, planned; read by every core while the batch runs.
#[derive(Debug, Default)]
pub(super) struct PartPlan {
    pub txns: Vec<TxnPlan>,
    pub pieces: Vec<PiecePlan>,
    pub units: Vec<UnitPlan>,
    pub piece_units: Vec<u32>,
    pub unit_members: Vec<u32>,
    pub children: Vec<u32>,
    pub decls: Vec<Decl>,
    scratch: Scratch,
}

/// A transaction's distinct units while it is planned (their indexes into the plan's units):
/// open addressing over slots stamped with the transaction they belong to, so that nothing is
/// cleared between transactions. (A linear search over the units before cost YCSB's 20-unit
/// transactions 140 instructions a piece; a hash map, its clearing.)
#[derive(Debug, Default)]
struct UnitSet {
    /// `(stamp, unit)`; a slot whose stamp is not the current one is free.
    slots: Vec<(u32, u32)>,
    stamp: u32,
}

impl UnitSet {
    /// Empties the set for a transaction naming at most `keys` units.
    fn start(&mut self, keys: usize) {
        let size = (keys * 2).next_power_of_two().max(64);
        self.stamp = self.stamp.wrapping_add(1);
        if self.slots.len() < size || self.stamp == 0 {
            self.slots.clear();
            self.slots.resize(size.max(self.slots.len()), (0, 0));
            self.stamp = 1;
        }
    }

    /// `Ok(unit)` when `g` is in the set (`units` holds the keys), else `Err(slot)` to insert at.
    fn find(&self, units: &[UnitPlan], g: GKey) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut i = g.hash() as usize & mask;
        loop {
            let (stamp, u) = self.slots[i];
            if stamp != self.stamp {
                return Err(i);
            }
            if units[u as usize].key == g {
                return Ok(u);
            }
            i = (i + 1) & mask;
        }
    }

    fn insert(&mut self, slot: usize, unit: u32) {
        self.slots[slot] = (self.stamp, unit);
    }
}

/// No piece.
const NONE: u32 = u32::MAX;

/// Planning buffers, reused.
#[derive(Debug, Default)]
struct Scratch {
    planner: Planner,
    accesses: Vec<Access>,
    bounds: Vec<usize>,
    deps: Vec<usize>,
    /// Each piece's units (with their modes) while a transaction is planned.
    piece_keys: Vec<Vec<(GKey, bool)>>,
    /// The transaction's distinct units → index into the plan's units.
    seen: UnitSet,
    /// Each piece's parents while a transaction is planned.
    parents: Vec<Vec<u32>>,
    /// Each piece's distinct units `(piece, unit)`, in piece order.
    pairs: Vec<(u32, u32)>,
    /// Per unit of the transaction, its last member so far.
    last_member: Vec<u32>,
    /// Counting-sort buffers.
    count: Vec<u32>,
    cursor: Vec<u32>,
    /// Where each piece's declarations start in the plan's `decls` (and where the last ends).
    decl_bounds: Vec<u32>,
}

/// Why a transaction cannot be planned (it is refused before it runs).
pub(super) type PlanError = Abort;

impl PartPlan {
    /// Empties the plan for the next batch (keeping its buffers).
    pub fn clear(&mut self) {
        self.txns.clear();
        self.pieces.clear();
        self.units.clear();
        self.piece_units.clear();
        self.unit_members.clear();
        self.children.clear();
        self.decls.clear();
    }

    /// The unit of key `key` of `table`.
    fn key_of(units: Option<ConflictUnits>, coarse: bool, table: TableId, key: u64) -> GKey {
        match units.and_then(|f| f(table, key, coarse)) {
            Some(u) => GKey::unit(table, u),
            None => GKey::record(table, key),
        }
    }

    /// Plans `program` as the next transaction of this participant (`partitions` partitions; pieces
    /// that touch no unit run at `home`). Refuses a declared write to a read-only table.
    pub fn add<P: Program, M: Default + Send + Sync>(
        &mut self,
        program: &mut P,
        db: &Database<M>,
        coarse: bool,
        partitions: u32,
        home: u32,
    ) -> Result<(), PlanError> {
        let s = &mut self.scratch;
        let planned = s
            .planner
            .plan_pieces(program, db, &mut s.accesses, &mut s.bounds, false);
        let n = program.pieces();
        let units_of = program.conflict_units();
        // Each piece's units and declarations.
        while s.piece_keys.len() < n {
            s.piece_keys.push(Vec::new());
            s.parents.push(Vec::new());
        }
        let mut barrier = false;
        s.decl_bounds.clear();
        s.decl_bounds.push(self.decls.len() as u32);
        let mut last_record_dependent = None;
        for i in 0..n {
            let keys = &mut s.piece_keys[i];
            keys.clear();
            let declared = if i < planned.declared {
                &s.accesses[s.bounds[i]..s.bounds[i + 1]]
            } else {
                &[][..]
            };
            let mut names_record = false;
            for a in declared {
                if a.unlocked_in(db)? {
                    continue; // a read of a read-only table: nothing to order
                }
                let write = a.is_write();
                match a.target {
                    Target::Key(k) => {
                        let g = Self::key_of(units_of, coarse, a.table, k);
                        names_record |= !g.is_unit();
                        keys.push((g, write));
                        self.decls.push(Decl {
                            table: a.table,
                            lo: k,
                            hi: k,
                            unit: Some(g),
                            write,
                        });
                    }
                    Target::Range { lo, hi } if lo <= hi => {
                        let (ulo, uhi) = (
                            Self::key_of(units_of, coarse, a.table, lo),
                            Self::key_of(units_of, coarse, a.table, hi),
                        );
                        let one_unit = ulo.is_unit() && ulo == uhi;
                        if one_unit {
                            keys.push((ulo, write));
                        } else if hi - lo < MAX_RANGE_KEYS {
                            names_record |= !ulo.is_unit();
                            keys.extend(
                                (lo..=hi)
                                    .map(|k| (Self::key_of(units_of, coarse, a.table, k), write)),
                            );
                        } else {
                            barrier = true;
                        }
                        self.decls.push(Decl {
                            table: a.table,
                            lo,
                            hi,
                            unit: one_unit.then_some(ulo),
                            write,
                        });
                    }
                    Target::Range { .. } => {}
                }
            }
            s.decl_bounds.push(self.decls.len() as u32);
            if planned.recon && names_record {
                s.deps.clear();
                program.declaration_depends_on(i, &mut s.deps);
                if !s.deps.is_empty() {
                    last_record_dependent = Some(i);
                }
            }
        }
        // The abortable prefix.
        let mut abortable = program.commit_point().map_or(0, |c| c + 1);
        if let Some(i) = last_record_dependent {
            abortable = abortable.max(i + 1);
        }
        if planned.declared < n {
            // Reconnaissance stopped at an abort: what follows was not declared, so every piece
            // must be able to abort (a run that goes further strays and is planned again).
            abortable = n;
        }
        let abortable = abortable.min(n) as u32;

        // Distinct units, their members, and the data edges (declared, plus one between
        // consecutive members of a unit). Flat, in reused buffers: no allocation per transaction.
        let txn = self.txns.len() as u32;
        let piece_start = self.pieces.len() as u32;
        let unit_start = self.units.len() as u32;
        s.seen.start(s.piece_keys[..n].iter().map(Vec::len).sum());
        s.pairs.clear();
        s.last_member.clear();
        for i in 0..n {
            let parents = &mut s.parents[i];
            parents.clear();
            s.deps.clear();
            program.depends_on(i, &mut s.deps);
            parents.extend(s.deps.iter().map(|&d| d as u32));
            let first_pair = s.pairs.len();
            for &(g, write) in &s.piece_keys[i] {
                let u = Self::unit_of(&mut self.units, &mut s.seen, g, write, partitions);
                let local = (u - unit_start) as usize;
                if s.last_member.len() <= local {
                    s.last_member.push(NONE);
                }
                if s.pairs[first_pair..].iter().any(|&(_, v)| v == u) {
                    continue; // this piece names the unit twice
                }
                let prev = s.last_member[local];
                if prev != NONE {
                    parents.push(prev);
                }
                s.last_member[local] = i as u32;
                s.pairs.push((i as u32, u));
            }
            parents.sort_unstable();
            parents.dedup();
        }
        // Each unit's members, in piece order (the pairs are in piece order): a counting sort.
        let units = self.units.len() - unit_start as usize;
        let members_from = self.unit_members.len();
        s.count.clear();
        s.count.resize(units + 1, 0);
        for &(_, u) in &s.pairs {
            s.count[(u - unit_start) as usize + 1] += 1;
        }
        for k in 0..units {
            s.count[k + 1] += s.count[k];
            let u = &mut self.units[unit_start as usize + k];
            let (from, to) = (s.count[k], s.count[k + 1]);
            u.members = members_from as u32 + from..members_from as u32 + to;
            u.members_left = AtomicU32::new(to - from);
        }
        self.unit_members.resize(members_from + s.pairs.len(), 0);
        for &(i, u) in &s.pairs {
            let at = &mut s.count[(u - unit_start) as usize];
            self.unit_members[members_from + *at as usize] = piece_start + i;
            *at += 1;
        }
        // Each piece's children, in piece order: a counting sort of the parent edges.
        let children_from = self.children.len();
        s.count.clear();
        s.count.resize(n + 1, 0);
        for i in 0..n {
            for &p in &s.parents[i] {
                s.count[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            s.count[i + 1] += s.count[i];
        }
        let edges = s.count[n] as usize;
        self.children.resize(children_from + edges, 0);
        s.cursor.clear();
        s.cursor.extend_from_slice(&s.count[..n]);
        for i in 0..n {
            for &p in &s.parents[i] {
                let at = &mut s.cursor[p as usize];
                self.children[children_from + *at as usize] = piece_start + i as u32;
                *at += 1;
            }
        }
        self.piece_units.extend(s.pairs.iter().map(|&(_, u)| u));
        let pairs_from = self.piece_units.len() - s.pairs.len();
        let mut pair = 0;
        let has_abortable = abortable > 0;
        for i in 0..n {
            let from = pairs_from + pair;
            while pair < s.pairs.len() && s.pairs[pair].0 == i as u32 {
                pair += 1;
            }
            let units = from as u32..(pairs_from + pair) as u32;
            let home = units.clone().next().map_or(home, |u| {
                self.units[self.piece_units[u as usize] as usize].partition
            });
            let children = children_from as u32 + s.count[i]..children_from as u32 + s.count[i + 1];
            let is_abortable = (i as u32) < abortable;
            // The start token, its data parents, and (past the commit point) the decision; its
            // units' turns are added as the graph is built.
            let wait = 1 + s.parents[i].len() as i32 + i32::from(!is_abortable && has_abortable);
            self.pieces.push(PiecePlan {
                txn,
                piece: i as u32,
                units,
                decls: s.decl_bounds[i]..s.decl_bounds[i + 1],
                children,
                home,
                abortable: is_abortable,
                wait: AtomicI32::new(wait),
                state: AtomicU8::new(UNEXECUTED),
            });
        }
        self.txns.push(TxnPlan {
            pieces: piece_start..self.pieces.len() as u32,
            units: unit_start..self.units.len() as u32,
            barrier,
            commit_rvp: AtomicI32::new(abortable as i32),
            decision: AtomicU8::new(if has_abortable { UNDECIDED } else { COMMIT }),
            pieces_left: AtomicU32::new(n as u32),
        });
        Ok(())
    }

    /// The index of unit `g` among this transaction's units (from `unit_start`), added if new;
    /// `write` strengthens it.
    fn unit_of(
        units: &mut Vec<UnitPlan>,
        seen: &mut UnitSet,
        g: GKey,
        write: bool,
        partitions: u32,
    ) -> u32 {
        match seen.find(units, g) {
            Ok(u) => {
                units[u as usize].write |= write;
                u
            }
            Err(slot) => {
                let u = units.len() as u32;
                units.push(UnitPlan {
                    key: g,
                    write,
                    partition: g.partition(partitions),
                    members: 0..0,
                    members_left: AtomicU32::new(0),
                    slot: AtomicU64::new(0),
                });
                seen.insert(slot, u);
                u
            }
        }
    }

    /// A transaction refused before it runs (it declared a write to a read-only table): nothing to
    /// order, already aborted.
    pub fn add_refused(&mut self) {
        let (p, u) = (self.pieces.len() as u32, self.units.len() as u32);
        self.txns.push(TxnPlan {
            pieces: p..p,
            units: u..u,
            barrier: false,
            commit_rvp: AtomicI32::new(0),
            decision: AtomicU8::new(ABORT),
            pieces_left: AtomicU32::new(0),
        });
    }

    /// Whether the run of a piece with declarations `decls` may touch key `key` of `table` (`write`:
    /// write it), its unit given by the program's `units`.
    pub fn allows(
        decls: &[Decl],
        units: Option<ConflictUnits>,
        coarse: bool,
        table: TableId,
        key: u64,
        write: bool,
    ) -> bool {
        let mut unit = None;
        decls.iter().any(|d| {
            d.table == table
                && (d.write || !write)
                && ((d.lo..=d.hi).contains(&key)
                    || d.unit.is_some_and(|u| {
                        u.is_unit()
                            && *unit.get_or_insert_with(|| Self::key_of(units, coarse, table, key))
                                == u
                    }))
        })
    }

    /// Whether a scan of `lo..=hi` of `table` lies inside one of `decls` (a declared range, or a
    /// declared unit holding both ends).
    pub fn allows_range(
        decls: &[Decl],
        units: Option<ConflictUnits>,
        coarse: bool,
        table: TableId,
        lo: u64,
        hi: u64,
    ) -> bool {
        decls.iter().any(|d| {
            d.table == table
                && ((d.lo <= lo && hi <= d.hi)
                    || d.unit.is_some_and(|u| {
                        u.is_unit()
                            && Self::key_of(units, coarse, table, lo) == u
                            && Self::key_of(units, coarse, table, hi) == u
                    }))
        })
    }
}

/// The abort a piece's run gets for an access outside its declarations.
pub(super) fn stray(what: String) -> Abort {
    Abort::with_detail(
        AbortReason::Validation,
        format!("{what} lies outside what the piece declared"),
    )
}
