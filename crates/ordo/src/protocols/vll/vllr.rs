//! VLLR: VLL over prefix locks (§2.7) — the [`LockScheme`] `vllr` and `vllr-sca` run with.
//!
//! Every access locks prefixes of its table's keys ([`crate::protocols::kit::prefix`]: covers, the
//! four counters C_x, C_s, I_x, I_s and Fig. 5's matrix): a key its full-length prefix, a range its
//! level cover. Locking `p` takes C on `p` and an intention on every level above it.
//!
//! # Making it cheap
//!
//! Taken literally with 64-bit keys, every point lock costs 64 intention increments plus one lock, and
//! a hash-map lookup for each — inside the partition's critical section, which every worker shares.
//! Four changes make it cheap; none of them loses a conflict, and only two add (false) ones — the
//! rounding of ranges to 16-key blocks and hash collisions, which the paper's Fig. 6 has too:
//!
//! 1. **Levels** and rounded range covers ([`crate::protocols::kit::prefix`], "Levels"): a point lock
//!    takes 16 intentions, not 64, and a range lock at most 32 prefixes.
//! 2. **Full-length prefixes live beside their records.** A full-length prefix has no descendants, so its
//!    I counters are always zero and its C_x/C_s are exactly VLL's two counters: `vllr` keeps them in the
//!    record's [`VllCounters`] (the colocated layout), one cache line with the data. Only point accesses
//!    take them.
//! 3. **Hashed counter arrays (Fig. 6), intentions shared before the critical section.** Shorter
//!    prefixes' counters live in the kit's hashed [`PrefixTable`]. [`PrefixLocks::plan`] computes every slot outside the critical section and takes
//!    each ancestor's intention once per transaction (an intention count only has to be non-zero for
//!    others to see it, and one transaction's intentions never conflict with its own locks — see
//!    [`normalize`]): in key order, a lock takes only the levels below its common prefix with the lock
//!    before it, so ten keys of one district share the upper levels' intentions.
//!
//! 4. **Execution walks a range on its prefix.** A range update or scan touches the keys of a block
//!    one after another; the transaction's fast path keeps the prefix that covered the last key as
//!    its first guess ([`LockScheme::covers_one`] is `false` for it), so the lock list is searched
//!    once per block entered, not once per key, and each covered access prefetches the (hashed,
//!    scattered) index entry of a key a few places on — what VLL's planning does for its point
//!    locks by probing them all before the critical section (`docs/results/vll.md`, seventeenth
//!    pass: 256-key ranges 6× faster).
//!
//!
//! [`PrefixLocks`] is the [`LockScheme`]; everything else is VLL as in the other files.

use super::scheme::{mode_of, LockScheme};
use crate::protocols::kit::counters::VllCounters;
use crate::protocols::kit::lock_request::Mode;
use crate::protocols::kit::prefix::{
    kinds, range_cover, slot_of, Kind, Prefix, PrefixTable, KEY_BITS, LEVEL_STEP,
};
use crate::protocols::kit::sca::lock_id;
use crate::storage::{Database, RowId, TableId};
use crate::txn::{Access, Target, TxResult};
use std::cell::RefCell;

/// One VLLR lock: a prefix of a table's keys, in a mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefixLock {
    pub table: TableId,
    pub prefix: Prefix,
    pub mode: Mode,
}

/// Makes a transaction's prefix locks free of self-conflicts: a prefix under another of the same
/// transaction's prefixes is dropped (the upper one is made exclusive if the lower one was). Sorted by
/// (table, length, bits) afterwards.
pub fn normalize(locks: &mut Vec<PrefixLock>) {
    locks.sort_unstable_by_key(|l| (l.table, l.prefix.len, l.prefix.bits));
    let mut n = 0;
    // Lengths of the kept locks of the current table (bit `len`), and where that table's begin.
    let (mut lengths, mut from) = (0u128, 0);
    for i in 0..locks.len() {
        let l = locks[i];
        if n == 0 || locks[n - 1].table != l.table {
            (lengths, from) = (0, n);
        }
        // Kept locks are sorted by (table, length, bits): an ancestor of `l` (or `l` itself) is among
        // them, found by binary search at each length kept so far.
        let mut found = None;
        let mut m = lengths & ((1u128 << (l.prefix.len + 1)) - 1);
        while m != 0 && found.is_none() {
            let len = m.trailing_zeros() as u8;
            m &= m - 1;
            let want = (len, l.prefix.ancestor(len).bits);
            found = locks[from..n]
                .binary_search_by_key(&want, |k| (k.prefix.len, k.prefix.bits))
                .ok()
                .map(|j| from + j);
        }
        match found {
            Some(j) => locks[j].mode = locks[j].mode.max(l.mode),
            None => {
                locks[n] = l;
                n += 1;
                lengths |= 1u128 << l.prefix.len;
            }
        }
    }
    locks.truncate(n);
}

/// One request of a `vllr` transaction, as the critical section executes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VllrRequest {
    /// C on a full-length prefix: the record's colocated C_x/C_s.
    Record { lock: PrefixLock, rid: RowId },
    /// C on a shorter prefix: hashed slot `slot`.
    Prefix { lock: PrefixLock, slot: u32 },
    /// I (exclusive: I_x, shared: I_s) on hashed slot `slot`, once per transaction.
    Intent { slot: u32, mode: Mode },
}

impl VllrRequest {
    /// The lock this request places on a prefix itself (none for an intention).
    #[inline]
    fn lock(&self) -> Option<&PrefixLock> {
        match self {
            VllrRequest::Record { lock, .. } | VllrRequest::Prefix { lock, .. } => Some(lock),
            VllrRequest::Intent { .. } => None,
        }
    }
}

/// Where the lock among `plan`'s requests whose prefix covers `key` of `table` is, if anywhere.
/// `plan` puts the locks first, sorted by (table, length, bits) and prefix-free, then the
/// intentions: a binary search for the key's own lock, then one per level (every lock `vllr` takes
/// is at a level).
fn find_cover(locks: &[VllrRequest], table: TableId, key: u64) -> Option<usize> {
    let held = &locks[..locks.partition_point(|r| r.lock().is_some())];
    let k = Prefix::key(key, KEY_BITS);
    if held.len() <= 16 {
        return held.iter().position(|r| {
            r.lock()
                .is_some_and(|l| l.table == table && l.prefix.covers(k))
        });
    }
    let find = |p: Prefix| {
        held.binary_search_by_key(&(table, p.len, p.bits), |r| {
            let l = r.lock().expect("locks come first");
            (l.table, l.prefix.len, l.prefix.bits)
        })
        .ok()
    };
    // The record's own lock first (the common case), then its ancestors at each level.
    find(k).or_else(|| {
        (0..KEY_BITS)
            .step_by(LEVEL_STEP as usize)
            .find_map(|len| find(k.ancestor(len)))
    })
}

/// Whether lock `l` allows an access to `key` of `table` (a write needs an exclusive lock).
#[inline]
fn lock_allows(l: &PrefixLock, table: TableId, key: u64, write: bool) -> bool {
    l.table == table && (!write || l.mode == Mode::Exclusive) && {
        // `l.prefix.covers(Prefix::key(key, KEY_BITS))`, without the general shift.
        let free = KEY_BITS - l.prefix.len;
        free == KEY_BITS || key >> free == l.prefix.bits
    }
}

thread_local! {
    /// `plan`'s scratch: the transaction's prefix locks and one access's cover.
    static SCRATCH: RefCell<(Vec<PrefixLock>, Vec<Prefix>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// SCA lock ids of hashed slots live apart from the records' (table, key) ids.
const SLOT_TABLE: TableId = u32::MAX;

/// VLLR: every access locks prefixes — a key its full-length prefix, a range its level cover.
pub struct PrefixLocks;

impl LockScheme for PrefixLocks {
    type Meta = VllCounters;
    type State = PrefixTable;
    type Request = VllrRequest;

    fn plan(
        db: &Database<VllCounters>,
        accesses: &[Access],
        out: &mut Vec<VllrRequest>,
        _prefetch: bool,
    ) -> TxResult<bool> {
        out.clear();
        SCRATCH.with(|s| -> TxResult<()> {
            let (locks, ps) = &mut *s.borrow_mut();
            locks.clear();
            for a in accesses {
                // Reads of read-only tables take no locks; a declared write to one is refused.
                if a.unlocked_in(db)? {
                    continue;
                }
                let mode = mode_of(a);
                ps.clear();
                match a.target {
                    Target::Key(k) => ps.push(Prefix::key(k, KEY_BITS)),
                    Target::Range { lo, hi } => range_cover(lo, hi, ps),
                }
                locks.extend(ps.iter().map(|&prefix| PrefixLock {
                    table: a.table,
                    prefix,
                    mode,
                }));
            }
            normalize(locks);
            for l in locks.iter() {
                if l.prefix.len == KEY_BITS {
                    // The record's slot carries the lock (and must exist for a write to it).
                    let t = db.table(l.table);
                    let (rid, _) = t.get_or_create(l.prefix.bits);
                    std::hint::black_box(t.meta(rid).get());
                    out.push(VllrRequest::Record { lock: *l, rid });
                } else {
                    out.push(VllrRequest::Prefix {
                        lock: *l,
                        slot: slot_of(l.table, l.prefix),
                    });
                }
            }
            // Intentions, each ancestor once: in key order, a lock shares with the one before it
            // exactly the ancestors no longer than their common prefix (an earlier lock sharing an
            // ancestor shares it with every lock in between; and the one before has an intention
            // there, or one of the locks would cover the other), so it takes only the levels below.
            // A lock stronger than the one before takes all of its own (an I_x beside that I_s: one
            // transaction's intentions never conflict with each other). An I_x where an I_s would do
            // only conflicts with more (Fig. 5), so inheriting a stronger intention is safe.
            let start = |l: &PrefixLock| {
                if l.prefix.len == 0 {
                    0
                } else {
                    l.prefix.bits << (KEY_BITS - l.prefix.len)
                }
            };
            locks.sort_unstable_by_key(|l| (l.table, start(l)));
            let mut prev: Option<&PrefixLock> = None;
            for l in locks.iter() {
                let first = match prev {
                    // Levels up to their common prefix's length are shared (the empty one always).
                    Some(q) if q.table == l.table && q.mode >= l.mode => {
                        let common = (start(q) ^ start(l)).leading_zeros() as u8;
                        (common / LEVEL_STEP + 1) * LEVEL_STEP
                    }
                    _ => 0,
                };
                for len in (first..l.prefix.len).step_by(LEVEL_STEP as usize) {
                    out.push(VllrRequest::Intent {
                        slot: slot_of(l.table, l.prefix.ancestor(len)),
                        mode: l.mode,
                    });
                }
                prev = Some(l);
            }
            Ok(())
        })?;
        Ok(true)
    }

    #[inline]
    fn request(st: &mut PrefixTable, db: &Database<VllCounters>, r: &VllrRequest) -> bool {
        match *r {
            VllrRequest::Record { lock, rid } => db.table(lock.table).meta(rid).request(lock.mode),
            VllrRequest::Prefix { lock, slot } => st.request_slot(slot, kinds(lock.mode).0),
            VllrRequest::Intent { slot, mode } => st.request_slot(slot, kinds(mode).1),
        }
    }
    #[inline]
    fn release(st: &mut PrefixTable, db: &Database<VllCounters>, r: &VllrRequest) {
        match *r {
            VllrRequest::Record { lock, rid } => db.table(lock.table).meta(rid).release(lock.mode),
            VllrRequest::Prefix { lock, slot } => st.release_slot(slot, kinds(lock.mode).0),
            VllrRequest::Intent { slot, mode } => st.release_slot(slot, kinds(mode).1),
        }
    }
    fn allows(
        locks: &[VllrRequest],
        table: TableId,
        key: u64,
        write: bool,
    ) -> Option<(usize, Option<RowId>)> {
        let i = find_cover(locks, table, key)?;
        let l = locks[i].lock().expect("a lock, not an intention");
        if write && l.mode != Mode::Exclusive {
            return None;
        }
        Some((
            i,
            match locks[i] {
                VllrRequest::Record { rid, .. } => Some(rid),
                _ => None,
            },
        ))
    }
    /// The fast path: a record's own lock, or a range's prefix (which covers the keys after it too:
    /// a range walk stays on it, [`Self::covers_one`]).
    #[inline]
    fn covers(r: &VllrRequest, table: TableId, key: u64, write: bool) -> Option<Option<RowId>> {
        match r {
            VllrRequest::Record { lock, rid } => {
                lock_allows(lock, table, key, write).then_some(Some(*rid))
            }
            VllrRequest::Prefix { lock, .. } => {
                lock_allows(lock, table, key, write).then_some(None)
            }
            VllrRequest::Intent { .. } => None,
        }
    }
    #[inline]
    fn covers_one(r: &VllrRequest) -> bool {
        !matches!(r, VllrRequest::Prefix { .. })
    }
    fn allows_range(locks: &[VllrRequest], table: TableId, lo: u64, hi: u64) -> bool {
        // Walk the range: each step, some lock must cover the next key, and the walk skips its block.
        // (Several locks may share the range between them, e.g. single keys locked one by one.)
        let mut at = lo;
        while at <= hi {
            let Some(l) = find_cover(locks, table, at).and_then(|i| locks[i].lock()) else {
                return false;
            };
            let free = (KEY_BITS - l.prefix.len) as u32;
            let last = at
                | if free == 64 {
                    u64::MAX
                } else {
                    (1u64 << free) - 1
                };
            match last.checked_add(1) {
                Some(next) => at = next,
                None => return true,
            }
        }
        true
    }
    fn sca_keys(r: &VllrRequest, f: &mut dyn FnMut(u64, Kind)) {
        // Each request marks the counter it increments (Fig. 5 decides in SCA as in the counters):
        // a record's C by its key, a shorter prefix's C and I by its hashed slot — two prefixes
        // sharing a slot share its marks, a false conflict at worst, as in the counters.
        match *r {
            VllrRequest::Record { lock, .. } => f(
                lock_id(lock.table, lock.prefix.bits),
                Kind::of_lock(lock.mode),
            ),
            VllrRequest::Prefix { lock, slot } => {
                f(lock_id(SLOT_TABLE, slot as u64), Kind::of_lock(lock.mode))
            }
            VllrRequest::Intent { slot, mode } => {
                f(lock_id(SLOT_TABLE, slot as u64), kinds(mode).1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::kit::prefix::tests::p;

    #[test]
    fn a_transaction_never_conflicts_with_itself() {
        let l = |s: &str, mode| PrefixLock {
            table: 0,
            prefix: p(s),
            mode,
        };
        let mut v = vec![
            l("0100", Mode::Shared),
            l("010011", Mode::Exclusive),
            l("0100", Mode::Shared),
            l("11", Mode::Shared),
        ];
        normalize(&mut v);
        assert_eq!(v, [l("11", Mode::Shared), l("0100", Mode::Exclusive)]);
        let mut t = PrefixTable::with_step(1);
        assert!(v.iter().all(|r| t.lock(r.table, r.prefix, r.mode)));
    }

    /// `normalize` (binary searches per kept length) agrees with the obvious quadratic version.
    #[test]
    fn normalize_matches_a_brute_force_oracle() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..500 {
            let n = (next() % 24) as usize;
            let mut v: Vec<PrefixLock> = (0..n)
                .map(|_| {
                    let len = (next() % 9) as u8;
                    PrefixLock {
                        table: (next() % 2) as u32,
                        prefix: Prefix {
                            len,
                            bits: next() & ((1u64 << len) - 1),
                        },
                        mode: if next().is_multiple_of(2) {
                            Mode::Shared
                        } else {
                            Mode::Exclusive
                        },
                    }
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable_by_key(|l| (l.table, l.prefix.len, l.prefix.bits));
            let mut kept: Vec<PrefixLock> = Vec::new();
            for l in want {
                match kept
                    .iter_mut()
                    .find(|k| k.table == l.table && k.prefix.covers(l.prefix))
                {
                    Some(k) => k.mode = k.mode.max(l.mode),
                    None => kept.push(l),
                }
            }
            normalize(&mut v);
            assert_eq!(v, kept);
        }
    }

    fn db() -> Database<VllCounters> {
        use crate::storage::{Column, ColumnType, Schema, TableSpec};
        let mut db = Database::new();
        let schema = Schema::new(vec![Column::new("a", ColumnType::Int)]).unwrap();
        for name in ["t", "u"] {
            db.create_table(TableSpec::new(name, schema.clone()).ordered(1))
                .unwrap();
        }
        db
    }

    /// Requests every lock of `accesses` (as `BeginTransaction` does) and says whether all were granted.
    fn begin(
        st: &mut PrefixTable,
        db: &Database<VllCounters>,
        accesses: &[Access],
    ) -> (bool, Vec<VllrRequest>) {
        let mut out = Vec::new();
        assert!(PrefixLocks::plan(db, accesses, &mut out, false).unwrap());
        let mut granted = true;
        for r in &out {
            granted &= PrefixLocks::request(st, db, r);
        }
        (granted, out)
    }

    fn finish(st: &mut PrefixTable, db: &Database<VllCounters>, locks: &[VllrRequest]) {
        for r in locks {
            PrefixLocks::release(st, db, r);
        }
    }

    /// `vllr-sca`'s SCA marks each counter as Fig. 5 says. X(0x10) and A(0x20) run; B(0x10) and
    /// C(0x20) block behind them, D scans 0x00..=0xff (C_s on the prefix covering it) behind all of
    /// them. Once A finishes, SCA finds C although every writer before it took I_x on the same
    /// ancestor prefixes (intentions never conflict with each other; two arrays that marked I_x as
    /// exclusive could never find it) — and never D, whose C_s meets the writers' I_x.
    #[test]
    fn sca_over_prefix_locks_lets_intentions_pass_each_other_but_not_a_range() {
        use crate::protocols::vll::partition::Partition;
        use crate::storage::ColumnSet;
        let db = db();
        let part = Partition::<PrefixLocks>::new(true);
        let a = ColumnSet::one(0);
        let plan = |acc: Access| {
            let mut out = Vec::new();
            assert!(PrefixLocks::plan(&db, &[acc], &mut out, false).unwrap());
            out
        };
        let (lx, la) = (
            plan(Access::update(0, 0x10, a, a)),
            plan(Access::update(0, 0x20, a, a)),
        );
        let (lb, lc) = (
            plan(Access::update(0, 0x10, a, a)),
            plan(Access::update(0, 0x20, a, a)),
        );
        let ld = plan(Access::scan(0, 0x00, 0xff, a));
        assert!(
            lx.iter().any(|r| matches!(
                r,
                VllrRequest::Intent {
                    mode: Mode::Exclusive,
                    ..
                }
            )),
            "a point write takes I_x on its ancestors: {lx:?}"
        );
        let (sx, bx) = part.begin_transaction(&db, 0, &lx, false);
        let (sa, ba) = part.begin_transaction(&db, 0, &la, false);
        let (sb, bb) = part.begin_transaction(&db, 1, &lb, false);
        let (sc, bc) = part.begin_transaction(&db, 1, &lc, false);
        let (sd, bd) = part.begin_transaction(&db, 1, &ld, false);
        assert_eq!((bx, ba, bb, bc, bd), (false, false, true, true, true));
        assert_eq!(part.sca(1), None, "C waits for the running A");
        part.finish_transaction(&db, sa, &la);
        assert_eq!(part.sca(1), Some(sc), "C passes X's and B's intentions");
        assert_eq!(part.sca(1), None, "D's range meets the writers' intentions");
        for (seq, locks) in [(sc, &lc), (sx, &lx)] {
            part.finish_transaction(&db, seq, locks);
        }
        assert_eq!(part.front(), sb);
        assert!(part.claim(sb));
        part.finish_transaction(&db, sb, &lb);
        assert!(part.claim(sd));
        part.finish_transaction(&db, sd, &ld);
        assert!(part.with_locks(|t| t.is_empty()));
        assert!(db.table(0).present_keys().into_iter().all(|k| {
            db.table(0)
                .meta(db.table(0).lookup(k).unwrap())
                .get()
                .is_zero()
        }));
    }

    /// The scheme end to end: point locks (colocated C + level intentions) against range locks (level
    /// covers), in every mode pair; everything back to zero afterwards.
    #[test]
    fn points_and_ranges_conflict_exactly_when_they_overlap() {
        use crate::storage::ColumnSet;
        let db = db();
        let mut st = PrefixTable::default();
        let acc = |write: bool, lo: u64, hi: u64| {
            let a = ColumnSet::one(0);
            match (lo == hi, write) {
                (true, false) => Access::read(0, lo, a),
                (true, true) => Access::update(0, lo, a, a),
                (false, false) => Access::scan(0, lo, hi, a),
                (false, true) => Access {
                    kind: crate::txn::AccessKind::Delete,
                    ..Access::scan(0, lo, hi, a)
                },
            }
        };
        let ranges = [
            (0x1230, 0x12ff),
            (0x1000, 0x1fff_ffff),
            (0, u64::MAX),
            (0x1234, 0x1234),
            (0x1233, 0x1235),
        ];
        let probes = [0x1234u64, 0x1230, 0x12ff, 0x122f, 0x1300, 0x2000_0000];
        for (lo, hi) in ranges {
            for key in probes {
                for (w1, w2) in [(false, false), (false, true), (true, false), (true, true)] {
                    let (g1, l1) = begin(&mut st, &db, &[acc(w1, lo, hi)]);
                    assert!(g1, "alone, granted");
                    let (g2, l2) = begin(&mut st, &db, &[acc(w2, key, key)]);
                    // A range is rounded out (`range_cover`); a key is exact.
                    let mut rc = Vec::new();
                    range_cover(lo, hi, &mut rc);
                    let overlap = if lo == hi {
                        key == lo
                    } else {
                        rc.iter().any(|q| q.covers(Prefix::key(key, 64)))
                    };
                    assert_eq!(
                        g2,
                        !overlap || (!w1 && !w2),
                        "range [{lo:#x},{hi:#x}] w={w1}, key {key:#x} w={w2}"
                    );
                    // The covering check of execution agrees.
                    assert_eq!(PrefixLocks::allows(&l1, 0, key, w1).is_some(), overlap);
                    finish(&mut st, &db, &l2);
                    finish(&mut st, &db, &l1);
                    assert!(st.is_empty());
                }
            }
        }
        let t = db.table(0);
        for k in t.present_keys() {
            assert!(t.meta(t.lookup(k).unwrap()).get().is_zero(), "key {k:#x}");
        }
    }

    /// Random pairs of transactions (points and ranges, two tables, mixed modes): the second is granted
    /// exactly when no lock of one covers a lock of the other with either exclusive — the definition —
    /// however the intentions were shared. (Hash collisions could only add conflicts: none here.)
    #[test]
    fn intentions_catch_every_conflict_between_random_transactions() {
        use crate::storage::ColumnSet;
        let db = db();
        let mut st = PrefixTable::default();
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let a = ColumnSet::one(0);
        let random_txn = |next: &mut dyn FnMut() -> u64| -> Vec<Access> {
            (0..1 + next() % 6)
                .map(|_| {
                    let t = (next() % 2) as u32;
                    let lo = next() % 0x100;
                    let write = next().is_multiple_of(2);
                    if next().is_multiple_of(3) {
                        let hi = lo + next() % (1 << (next() % 10));
                        let mut s = Access::scan(t, lo, hi, a);
                        if write {
                            s.kind = crate::txn::AccessKind::Delete;
                        }
                        s
                    } else if write {
                        Access::update(t, lo, a, a)
                    } else {
                        Access::read(t, lo, a)
                    }
                })
                .collect()
        };
        let held = |l: &[VllrRequest]| -> Vec<PrefixLock> {
            l.iter().filter_map(|r| r.lock().copied()).collect()
        };
        let (mut conflicts_seen, mut free_seen) = (0, 0);
        for _ in 0..400 {
            let (ta, tb) = (random_txn(&mut next), random_txn(&mut next));
            let (ga, la) = begin(&mut st, &db, &ta);
            assert!(ga, "a transaction alone is granted");
            let (gb, lb) = begin(&mut st, &db, &tb);
            let conflict = held(&la).iter().any(|p| {
                held(&lb).iter().any(|q| {
                    p.table == q.table
                        && (p.prefix.covers(q.prefix) || q.prefix.covers(p.prefix))
                        && (p.mode == Mode::Exclusive || q.mode == Mode::Exclusive)
                })
            });
            assert_eq!(gb, !conflict, "{ta:?} then {tb:?}");
            if conflict {
                conflicts_seen += 1;
            } else {
                free_seen += 1;
            }
            finish(&mut st, &db, &lb);
            finish(&mut st, &db, &la);
            assert!(st.is_empty());
        }
        assert!(
            conflicts_seen > 50 && free_seen > 50,
            "{conflicts_seen} / {free_seen}"
        );
    }

    #[test]
    fn a_transaction_takes_each_intention_once_and_never_blocks_itself() {
        use crate::storage::ColumnSet;
        let db = db();
        let mut st = PrefixTable::default();
        let a = ColumnSet::one(0);
        // Ten keys of one 4-bit block, a scan over them and a write inside the scan.
        let mut acc: Vec<Access> = (0..10)
            .map(|k| Access::update(0, 0x5550 + k, a, a))
            .collect();
        acc.push(Access::scan(0, 0x5600, 0x56ff, a));
        acc.push(Access::update(0, 0x5610, a, a));
        let (granted, locks) = begin(&mut st, &db, &acc);
        assert!(granted);
        let records = locks
            .iter()
            .filter(|r| matches!(r, VllrRequest::Record { .. }))
            .count();
        let prefixes = locks
            .iter()
            .filter(|r| matches!(r, VllrRequest::Prefix { .. }))
            .count();
        let intents = locks
            .iter()
            .filter(|r| matches!(r, VllrRequest::Intent { .. }))
            .count();
        assert_eq!(
            (records, prefixes),
            (10, 1),
            "the write in the scan merges into it"
        );
        // Everyone's ancestors at lengths 0..=52 (14 levels) are the same prefixes; below that the keys
        // add 0x55 (56 bits) and 0x555 (60 bits), and the scan locks 0x56 (56 bits) itself.
        assert_eq!(intents, 14 + 2);
        assert!(PrefixLocks::allows_range(&locks, 0, 0x5550, 0x5559));
        assert!(PrefixLocks::allows_range(&locks, 0, 0x5553, 0x5553));
        assert!(PrefixLocks::allows_range(&locks, 0, 0x5600, 0x56ff));
        assert!(!PrefixLocks::allows_range(&locks, 0, 0x5550, 0x555a));
        assert!(!PrefixLocks::allows_range(&locks, 0, 0x55ff, 0x5600));
        assert!(!PrefixLocks::allows_range(&locks, 1, 0x5600, 0x5601));
        assert_eq!(
            PrefixLocks::allows(&locks, 0, 0x5610, true).map(|(_, rid)| rid),
            Some(None),
            "the scan became exclusive"
        );
        // The execution fast path agrees with the search: the scan's prefix covers every key of
        // its block and stays the next request (a range walk), a record's lock covers its key once.
        let (i, _) = PrefixLocks::allows(&locks, 0, 0x5610, true).unwrap();
        let scan = &locks[i];
        assert!(matches!(scan, VllrRequest::Prefix { .. }) && !PrefixLocks::covers_one(scan));
        for key in [0x5600, 0x5655, 0x56ff] {
            assert_eq!(
                PrefixLocks::covers(scan, 0, key, true),
                Some(None),
                "{key:#x}"
            );
        }
        for (table, key) in [(0, 0x55ff), (0, 0x5700), (1, 0x5610)] {
            assert_eq!(
                PrefixLocks::covers(scan, table, key, false),
                None,
                "{key:#x}"
            );
        }
        let (j, rid) = PrefixLocks::allows(&locks, 0, 0x5553, false).unwrap();
        assert!(rid.is_some() && PrefixLocks::covers_one(&locks[j]));
        assert_eq!(PrefixLocks::covers(&locks[j], 0, 0x5553, true), Some(rid));
        assert_eq!(PrefixLocks::covers(&locks[j], 0, 0x5554, false), None);
        finish(&mut st, &db, &locks);
        assert!(st.is_empty());
    }
}
