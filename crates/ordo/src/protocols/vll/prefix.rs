//! VLLR: locking key ranges as sets of bitstring prefixes (§2.7, Fig. 5).
//!
//! A range of keys becomes a prefix-free set P of prefixes covering it exactly ([`cover`]): every key in
//! the range starts with one element of P and no key outside it does. Footnote 3's example, with 8-bit
//! keys: `[00111100, 01000010]` → `{001111xx, 0100000x, 01000010}`. A single key is its own full-length
//! prefix. Overlapping ranges simply share prefixes — nothing is ever split.
//!
//! Each prefix has four counters ([`PrefixCounters`]): C_x, C_s (locks on the prefix itself) and I_x,
//! I_s (intention: a lock on something below it). Locking `p` increments C_x[p] or C_s[p] and
//! I_x or I_s on every strict prefix of `p` — including the empty prefix, which stands for the whole
//! table (so a range covering a whole table still conflicts with every point in it). A request is
//! granted when no conflicting counter is set (Fig. 5, [`conflicts`]):
//!
//! ```text
//!          C_x  C_s  I_x  I_s
//!    C_x    X    X    X    X
//!    C_s    X         X
//!    I_x    X    X
//!    I_s    X
//! ```
//!
//! Counters live in a hash map keyed by (table, length, prefix) inside the partition's critical section,
//! created on first use and dropped when they return to zero (an exact map: no false conflicts).
//! [`PrefixLocks`] is the [`LockScheme`] `vllr` runs with; everything else is VLL as in the other files.

use super::counters::Mode;
use super::sca::lock_id;
use super::scheme::{mode_of, LockScheme};
use crate::storage::{Database, RowId, TableId};
use crate::txn::{Access, Target, TxResult};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Key width in bits.
pub const KEY_BITS: u8 = 64;

/// A bitstring prefix of a key: its first `len` bits, stored right-aligned in `bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix {
    pub len: u8,
    pub bits: u64,
}

impl Prefix {
    /// The full-length prefix of `key` (the key itself), for `width`-bit keys.
    pub fn key(key: u64, width: u8) -> Self {
        Prefix {
            len: width,
            bits: key,
        }
    }
    /// The first `len` bits of `self` (`len <= self.len`).
    pub fn ancestor(self, len: u8) -> Self {
        let shift = self.len - len;
        Prefix {
            len,
            bits: if shift >= 64 { 0 } else { self.bits >> shift },
        }
    }
    /// Whether `self` is a prefix of (or equal to) `other`.
    pub fn covers(self, other: Prefix) -> bool {
        self.len <= other.len && other.ancestor(self.len) == self
    }
    /// Renders with `width`-bit keys, `x` for the free bits (`001111xx`).
    pub fn render(self, width: u8) -> String {
        let mut s: String = (0..self.len)
            .map(|i| {
                if self.bits >> (self.len - 1 - i) & 1 == 1 {
                    '1'
                } else {
                    '0'
                }
            })
            .collect();
        s.extend(std::iter::repeat_n('x', (width - self.len) as usize));
        s
    }
}

/// The exact prefix cover of `lo..=hi` with `width`-bit keys: the fewest aligned blocks, in key order.
pub fn cover(lo: u64, hi: u64, width: u8, out: &mut Vec<Prefix>) {
    debug_assert!(width == 64 || hi >> width == 0);
    if hi < lo {
        return;
    }
    let mut lo = lo as u128;
    let hi = hi as u128;
    while lo <= hi {
        // The largest aligned block that starts at `lo` and ends by `hi`.
        let mut size = (lo.trailing_zeros() as u8).min(width);
        while lo + (1u128 << size) - 1 > hi {
            size -= 1;
        }
        out.push(Prefix {
            len: width - size,
            bits: (lo >> size) as u64,
        });
        lo += 1u128 << size;
    }
}

/// The four lock counters of a prefix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrefixCounters {
    pub cx: u32,
    pub cs: u32,
    pub ix: u32,
    pub is: u32,
}

/// The four counter kinds (rows and columns of Fig. 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Cx,
    Cs,
    Ix,
    Is,
}

/// Fig. 5: whether a count of kind `a` conflicts with one of kind `b`.
pub fn conflicts(a: Kind, b: Kind) -> bool {
    use Kind::*;
    matches!((a, b), (Cx, _) | (_, Cx) | (Cs, Ix) | (Ix, Cs))
}

impl PrefixCounters {
    fn get(&self, k: Kind) -> u32 {
        match k {
            Kind::Cx => self.cx,
            Kind::Cs => self.cs,
            Kind::Ix => self.ix,
            Kind::Is => self.is,
        }
    }
    fn slot(&mut self, k: Kind) -> &mut u32 {
        match k {
            Kind::Cx => &mut self.cx,
            Kind::Cs => &mut self.cs,
            Kind::Ix => &mut self.ix,
            Kind::Is => &mut self.is,
        }
    }
    /// Increments counter `k` and says whether no conflicting counter is held by anyone else.
    pub fn request(&mut self, k: Kind) -> bool {
        *self.slot(k) += 1;
        [Kind::Cx, Kind::Cs, Kind::Ix, Kind::Is]
            .into_iter()
            .all(|o| !conflicts(k, o) || self.get(o) == (o == k) as u32)
    }
    /// Decrements counter `k` (panics below zero).
    pub fn release(&mut self, k: Kind) {
        let c = self.slot(k);
        *c = c.checked_sub(1).expect("VLLR counter released below zero");
    }
    pub fn is_zero(&self) -> bool {
        *self == PrefixCounters::default()
    }
}

/// A multiplicative hasher for prefix keys (the keys are already well-mixed integers).
#[derive(Default)]
pub struct PrefixHasher(u64);
impl Hasher for PrefixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64)
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64)
    }
}

/// Every prefix's counters, per table.
#[derive(Default)]
pub struct PrefixTable {
    map: HashMap<(TableId, Prefix), PrefixCounters, BuildHasherDefault<PrefixHasher>>,
}

impl PrefixTable {
    /// Locks `p` in `mode`: C on `p`, I on each strict prefix (the empty one included). Every counter
    /// is incremented even after one conflicts; the result says whether all were granted.
    pub fn lock(&mut self, table: TableId, p: Prefix, mode: Mode) -> bool {
        let (c, i) = kinds(mode);
        let mut granted = true;
        for len in 0..p.len {
            granted &= self
                .map
                .entry((table, p.ancestor(len)))
                .or_default()
                .request(i);
        }
        granted &= self.map.entry((table, p)).or_default().request(c);
        granted
    }
    /// Undoes [`Self::lock`].
    pub fn unlock(&mut self, table: TableId, p: Prefix, mode: Mode) {
        let (c, i) = kinds(mode);
        for (len, k) in (0..p.len).map(|l| (l, i)).chain([(p.len, c)]) {
            let key = (table, p.ancestor(len));
            let e = self
                .map
                .get_mut(&key)
                .expect("VLLR unlock of a prefix never locked");
            e.release(k);
            if e.is_zero() {
                self.map.remove(&key);
            }
        }
    }
    /// The counters of `p` (zero if none).
    pub fn counters(&self, table: TableId, p: Prefix) -> PrefixCounters {
        self.map.get(&(table, p)).copied().unwrap_or_default()
    }
    /// Whether every counter is back to zero.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

fn kinds(mode: Mode) -> (Kind, Kind) {
    match mode {
        Mode::Exclusive => (Kind::Cx, Kind::Ix),
        Mode::Shared => (Kind::Cs, Kind::Is),
    }
}

/// One VLLR lock request: a prefix of a table's keys, in a mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefixLock {
    pub table: TableId,
    pub prefix: Prefix,
    pub mode: Mode,
}

/// Makes a transaction's prefix locks free of self-conflicts: a prefix under another of the same
/// transaction's prefixes is dropped (the upper one is made exclusive if the lower one was).
pub fn normalize(locks: &mut Vec<PrefixLock>) {
    locks.sort_unstable_by_key(|l| (l.table, l.prefix.len, l.prefix.bits));
    let mut kept: Vec<PrefixLock> = Vec::with_capacity(locks.len());
    for l in locks.drain(..) {
        match kept
            .iter_mut()
            .find(|k| k.table == l.table && k.prefix.covers(l.prefix))
        {
            Some(k) => k.mode = k.mode.max(l.mode),
            None => kept.push(l),
        }
    }
    *locks = kept;
}

/// VLLR: every access locks prefixes — a key its full-length prefix, a range its exact cover.
pub struct PrefixLocks;

impl LockScheme for PrefixLocks {
    type Meta = ();
    type State = PrefixTable;
    type Request = PrefixLock;

    fn plan(db: &Database<()>, accesses: &[Access], out: &mut Vec<PrefixLock>) -> TxResult<bool> {
        out.clear();
        let mut ps = Vec::new();
        for a in accesses {
            let mode = mode_of(a);
            ps.clear();
            match a.target {
                Target::Key(k) => {
                    // The slot must exist for the transaction to write it; ranges need no slots.
                    db.table(a.table).get_or_create(k);
                    ps.push(Prefix::key(k, KEY_BITS));
                }
                Target::Range { lo, hi } => cover(lo, hi, KEY_BITS, &mut ps),
            }
            out.extend(ps.iter().map(|&prefix| PrefixLock {
                table: a.table,
                prefix,
                mode,
            }));
        }
        normalize(out);
        Ok(true)
    }

    fn request(st: &mut PrefixTable, _db: &Database<()>, r: &PrefixLock) -> bool {
        st.lock(r.table, r.prefix, r.mode)
    }
    fn release(st: &mut PrefixTable, _db: &Database<()>, r: &PrefixLock) {
        st.unlock(r.table, r.prefix, r.mode)
    }
    fn allows(
        locks: &[PrefixLock],
        table: TableId,
        key: u64,
        write: bool,
    ) -> Option<Option<RowId>> {
        let k = Prefix::key(key, KEY_BITS);
        locks
            .iter()
            .any(|l| {
                l.table == table && l.prefix.covers(k) && (!write || l.mode == Mode::Exclusive)
            })
            .then_some(None)
    }
    fn allows_range(locks: &[PrefixLock], table: TableId, lo: u64, hi: u64) -> bool {
        let mut ps = Vec::new();
        cover(lo, hi, KEY_BITS, &mut ps);
        ps.iter()
            .all(|&p| locks.iter().any(|l| l.table == table && l.prefix.covers(p)))
    }
    fn sca_keys(r: &PrefixLock, f: &mut dyn FnMut(u64, bool)) {
        // Prefixes of different lengths get different ids (the length is folded into the table byte).
        f(
            lock_id(r.table ^ (r.prefix.len as u32) << 16, r.prefix.bits),
            r.mode == Mode::Exclusive,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Prefix {
        Prefix {
            len: s.len() as u8,
            bits: if s.is_empty() {
                0
            } else {
                u64::from_str_radix(s, 2).unwrap()
            },
        }
    }

    #[test]
    fn footnote_3_exact_cover() {
        let mut out = Vec::new();
        cover(0b0011_1100, 0b0100_0010, 8, &mut out);
        let r: Vec<String> = out.iter().map(|p| p.render(8)).collect();
        assert_eq!(r, ["001111xx", "0100000x", "01000010"]);
    }

    #[test]
    fn covers_are_exact_and_prefix_free() {
        let mut out = Vec::new();
        for (lo, hi) in [
            (0, 255),
            (0, 0),
            (255, 255),
            (1, 254),
            (17, 200),
            (128, 129),
        ] {
            out.clear();
            cover(lo, hi, 8, &mut out);
            for k in 0..=255u64 {
                let n = out.iter().filter(|q| q.covers(Prefix::key(k, 8))).count();
                assert_eq!(n, ((lo..=hi).contains(&k)) as usize, "[{lo},{hi}] key {k}");
            }
        }
        out.clear();
        cover(0, u64::MAX, 64, &mut out);
        assert_eq!(out, [p("")], "the whole key space is the empty prefix");
        out.clear();
        cover(5, 5, 64, &mut out);
        assert_eq!(out, [Prefix::key(5, 64)]);
    }

    /// Every cell of Fig. 5, by locking a prefix in one mode and then the same prefix, an ancestor, and
    /// a descendant in the other modes.
    #[test]
    fn every_cell_of_the_conflict_matrix() {
        use Kind::*;
        let x = [
            (Cx, Cx, true),
            (Cx, Cs, true),
            (Cx, Ix, true),
            (Cx, Is, true),
            (Cs, Cx, true),
            (Cs, Cs, false),
            (Cs, Ix, true),
            (Cs, Is, false),
            (Ix, Cx, true),
            (Ix, Cs, true),
            (Ix, Ix, false),
            (Ix, Is, false),
            (Is, Cx, true),
            (Is, Cs, false),
            (Is, Ix, false),
            (Is, Is, false),
        ];
        for (a, b, want) in x {
            assert_eq!(conflicts(a, b), want, "{a:?} vs {b:?}");
            let mut c = PrefixCounters::default();
            assert!(c.request(a));
            assert_eq!(!c.request(b), want, "counters: {a:?} held, {b:?} requested");
        }
        let (anc, mid, desc) = (p("01"), p("0100"), p("010011"));
        let modes = [Mode::Shared, Mode::Exclusive];
        for held in modes {
            for want in modes {
                let both_shared = held == Mode::Shared && want == Mode::Shared;
                for other in [anc, mid, desc] {
                    let mut t = PrefixTable::default();
                    assert!(t.lock(0, mid, held));
                    // Same prefix, ancestor or descendant: conflicting unless both are shared.
                    assert_eq!(
                        t.lock(0, other, want),
                        both_shared,
                        "{held:?} on 0100 then {want:?} on {}",
                        other.render(8)
                    );
                    t.unlock(0, other, want);
                    t.unlock(0, mid, held);
                    assert!(t.is_empty(), "counters return to zero");
                }
                // Disjoint prefixes (siblings) never conflict, even when sharing ancestors' intentions.
                let mut t = PrefixTable::default();
                assert!(t.lock(0, p("0100"), held));
                assert!(t.lock(0, p("0101"), want));
                assert!(t.lock(1, p("0100"), want), "other table");
            }
        }
    }

    #[test]
    fn overlapping_ranges_need_no_splitting() {
        let mut t = PrefixTable::default();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        cover(10, 40, 8, &mut a);
        cover(30, 60, 8, &mut b);
        for q in &a {
            assert!(t.lock(0, *q, Mode::Shared));
        }
        // A second shared range over the same keys is granted with no change to the first.
        for q in &b {
            assert!(t.lock(0, *q, Mode::Shared));
        }
        // A writer of a key in the overlap conflicts; one outside both does not.
        assert!(!t.lock(0, Prefix::key(35, 8), Mode::Exclusive));
        assert!(t.lock(0, Prefix::key(70, 8), Mode::Exclusive));
    }

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
        let mut t = PrefixTable::default();
        assert!(v.iter().all(|r| t.lock(r.table, r.prefix, r.mode)));
    }
}
