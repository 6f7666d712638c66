//! Prefix locks: key ranges as sets of bitstring prefixes, with four counters each (VLL paper §2.7,
//! Fig. 5–6). VLLR (`vll::vllr`) and the range lock managers of Fig. 14 (`range_locks`) lock with them.
//!
//! A range of keys becomes a prefix-free set P of prefixes covering it exactly ([`cover`]): every key in
//! the range starts with one element of P and no key outside it does. Footnote 3's example, with 8-bit
//! keys: `[00111100, 01000010]` → `{001111xx, 0100000x, 01000010}`. A single key is its own full-length
//! prefix. Overlapping ranges simply share prefixes — nothing is ever split.
//!
//! Each prefix has four counters ([`PrefixCounters`]): C_x, C_s (locks on the prefix itself) and I_x,
//! I_s (intention: a lock on something below it). Locking `p` increments `C_x[p]` or `C_s[p]` and
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
//!
//! # Levels and hashed counters (what `vllr` runs)
//!
//! Taken literally with 64-bit keys, every point lock costs 64 intention increments plus one lock, and
//! a hash-map lookup for each. Two mechanisms here make it cheap without losing a conflict:
//!
//! **Levels.** Prefixes are only ever locked at lengths that are multiples of [`LEVEL_STEP`] (4 bits:
//!    0, 4, …, 60, 64), and intentions are taken only at those lengths. Why this still catches every
//!    conflict: two locks conflict only if one's prefix `p` is a prefix of the other's `q`. If
//!    `len p = len q` they meet on the C counters of the same prefix; if `len p < len q`, then `len p`
//!    is a level, so `q`'s locker took an intention on `q`'s ancestor of length `len p` — which is `p` —
//!    and C vs I decides per Fig. 5. Intentions at non-level lengths would only ever meet intentions, which
//!    never conflict with each other, and no C counter lives there. So a point lock takes 16 intentions,
//!    not 64.
//!
//!    A range is then covered with aligned blocks of `16^j` keys only ([`cover_levels`]), which is
//!    still exact — any range is a union of such blocks (write its ends in base 16) — at the price of
//!    more prefixes than the all-lengths [`cover`] (up to 15 per level at each end instead of one):
//!    footnote 3's range becomes the 7 single keys `00111100`…`01000010`. Coarser levels (8 bits) would
//!    halve the intentions again but need up to 255 blocks per level per end, or a cover that
//!    over-locks; 4 bits suits keys built of 4-bit-aligned fields, as TPC-C's are.
//!
//!    `vllr` then coarsens range covers ([`range_cover`]), the trade-off footnote 3 describes: a coarser
//!    cover over-locks (false conflicts with writers of keys just outside the range), never
//!    under-locks, and costs fewer counters.
//!    * Each range is rounded out to whole blocks of [`RANGE_BLOCK`] = 16 keys: a range lock never takes
//!      a single key, so ranges need no record slots (a full-length prefix's counters live in its
//!      record, so locking an absent key would create its slot). At most 15 extra keys at each end;
//!      none when the ends are 16-aligned, as TPC-C's order-line, name-index and order-by-customer
//!      scans are.
//!    * A cover of more than [`RANGE_MAX_PREFIXES`] (32) prefixes is rounded out to 16× coarser blocks
//!      until it fits. Bound: if the cover at block size `a` has more than 32 prefixes, it has one of
//!      size ≥ 16a (at most 30 can be of size `a`), so the range is wider than 14a; rounding to `16a`
//!      adds less than 32a — under 2.3× the range's own width. TPC-C's Delivery scans NEW-ORDER from the
//!      oldest undelivered order to a fence row, ~2^32 keys: 80-odd prefixes exactly, one (the
//!      district's whole order-id space, whose lower part holds only delivered orders) coarsened.
//!
//! **Hashed counter arrays (Fig. 6).** Shorter prefixes' counters live in a fixed array indexed by a
//! hash of (table, length, bits) ([`PrefixTable`]): no allocation, no removal, no probing. Two
//! prefixes that share a slot look like one prefix — a *false* conflict at worst (the transaction
//! blocks and runs at the queue head), never a missed one.
//!
//! [`PrefixTable`] also serves any level step (step 1 = every prefix length, the paper's literal
//! scheme), which the tests use for the paper's examples.

use super::lock_request::Mode;
use crate::storage::TableId;

/// Key width in bits.
pub const KEY_BITS: u8 = 64;

/// `vllr` locks prefixes only at lengths that are multiples of this (see the module docs).
pub const LEVEL_STEP: u8 = 4;

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
    #[inline]
    pub fn ancestor(self, len: u8) -> Self {
        let shift = self.len - len;
        Prefix {
            len,
            bits: if shift >= 64 { 0 } else { self.bits >> shift },
        }
    }
    /// Whether `self` is a prefix of (or equal to) `other`.
    #[inline]
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

/// The exact prefix cover of `lo..=hi` with `width`-bit keys using only prefix lengths that are
/// multiples of `step` (`width` must be one): the fewest aligned blocks of `2^(step·j)` keys, in key
/// order. With `step` 1 this is the fewest blocks of any size (footnote 3's cover).
pub fn cover_levels(lo: u64, hi: u64, width: u8, step: u8, out: &mut Vec<Prefix>) {
    debug_assert!(width == 64 || hi >> width == 0);
    debug_assert!(step >= 1 && width.is_multiple_of(step));
    if hi < lo {
        return;
    }
    let mut lo = lo as u128;
    let hi = hi as u128;
    while lo <= hi {
        // The largest allowed aligned block that starts at `lo` and ends by `hi`.
        let mut size = (lo.trailing_zeros() as u8).min(width) / step * step;
        while lo + (1u128 << size) - 1 > hi {
            size -= step;
        }
        out.push(Prefix {
            len: width - size,
            bits: (lo >> size) as u64,
        });
        lo += 1u128 << size;
    }
}

/// The exact prefix cover of `lo..=hi` with `width`-bit keys: the fewest aligned blocks, in key order.
pub fn cover(lo: u64, hi: u64, width: u8, out: &mut Vec<Prefix>) {
    cover_levels(lo, hi, width, 1, out)
}

/// Keys a range lock of `vllr` is rounded out to: ranges lock whole blocks of this many keys.
pub const RANGE_BLOCK: u64 = 1 << LEVEL_STEP;

/// At most this many prefixes per range lock: a range whose cover would take more is rounded out to
/// coarser blocks until it fits.
pub const RANGE_MAX_PREFIXES: usize = 32;

/// The prefixes `vllr` locks for `lo..=hi`: its level cover after rounding both ends out to
/// [`RANGE_BLOCK`] keys, or to the smallest coarser block (16×, 256×, …) that keeps the cover within
/// [`RANGE_MAX_PREFIXES`]. Never fewer keys than the range; see the module docs for how many more.
pub fn range_cover(lo: u64, hi: u64, out: &mut Vec<Prefix>) {
    if hi < lo {
        return;
    }
    let start = out.len();
    let mut block_bits = LEVEL_STEP as u32;
    loop {
        let mask = if block_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << block_bits) - 1
        };
        cover_levels(lo & !mask, hi | mask, KEY_BITS, LEVEL_STEP, out);
        if out.len() - start <= RANGE_MAX_PREFIXES || block_bits >= 64 {
            return;
        }
        out.truncate(start);
        block_bits += LEVEL_STEP as u32;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
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
    fn slot(&mut self, k: Kind) -> &mut u32 {
        match k {
            Kind::Cx => &mut self.cx,
            Kind::Cs => &mut self.cs,
            Kind::Ix => &mut self.ix,
            Kind::Is => &mut self.is,
        }
    }
    /// Increments counter `k` and says whether no conflicting counter is held by anyone else.
    #[inline]
    pub fn request(&mut self, k: Kind) -> bool {
        *self.slot(k) += 1;
        // Fig. 5 row by row (the requester's own increment is the 1 allowed in its own counter).
        match k {
            Kind::Cx => self.cx == 1 && self.cs == 0 && self.ix == 0 && self.is == 0,
            Kind::Cs => self.cx == 0 && self.ix == 0,
            Kind::Ix => self.cx == 0 && self.cs == 0,
            Kind::Is => self.cx == 0,
        }
    }
    /// Decrements counter `k` (panics below zero).
    #[inline]
    pub fn release(&mut self, k: Kind) {
        let c = self.slot(k);
        *c = c.checked_sub(1).expect("VLLR counter released below zero");
    }
    pub fn is_zero(&self) -> bool {
        *self == PrefixCounters::default()
    }
}

/// log2 of the number of hashed counter slots (2^18 slots of 16 bytes: 4 MiB, zero pages until used).
pub const SLOT_BITS: u32 = 18;

/// The hashed slot of `table`'s prefix `p`.
#[inline]
pub fn slot_of(table: TableId, p: Prefix) -> u32 {
    let mut x = p.bits.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ ((table as u64) << 8 | p.len as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    x ^= x >> 31;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    (x >> (64 - SLOT_BITS)) as u32
}

/// Every prefix's four counters, in a fixed array indexed by [`slot_of`] (Fig. 6's `Cx[h]`, `Cs[h]`,
/// `Ix[h]`, `Is[h]`). Colliding prefixes share counters: false conflicts, never missed ones.
pub struct PrefixTable {
    slots: Box<[[u32; 4]]>,
    /// Prefix lengths that carry locks: multiples of `step`.
    step: u8,
    /// Increments not yet released (zero iff every counter is zero).
    outstanding: u64,
}

impl Default for PrefixTable {
    /// The table `vllr` runs with: levels every [`LEVEL_STEP`] bits.
    fn default() -> Self {
        Self::with_step(LEVEL_STEP)
    }
}

fn to_counters(s: [u32; 4]) -> PrefixCounters {
    PrefixCounters {
        cx: s[0],
        cs: s[1],
        ix: s[2],
        is: s[3],
    }
}

impl PrefixTable {
    /// A table whose locks sit at prefix lengths that are multiples of `step` (1: every length).
    pub fn with_step(step: u8) -> Self {
        assert!((1..=64).contains(&step) && 64u8.is_multiple_of(step));
        PrefixTable {
            // `vec![[0; 4]; n]` allocates zeroed memory: pages appear as they are touched.
            slots: vec![[0u32; 4]; 1 << SLOT_BITS].into_boxed_slice(),
            step,
            outstanding: 0,
        }
    }
    /// Increments counter `k` of slot `slot` and says whether it was granted (Fig. 5).
    #[inline]
    pub fn request_slot(&mut self, slot: u32, k: Kind) -> bool {
        let s = &mut self.slots[slot as usize];
        let mut c = to_counters(*s);
        let granted = c.request(k);
        *s = [c.cx, c.cs, c.ix, c.is];
        self.outstanding += 1;
        granted
    }
    /// Undoes [`Self::request_slot`].
    #[inline]
    pub fn release_slot(&mut self, slot: u32, k: Kind) {
        let s = &mut self.slots[slot as usize];
        let mut c = to_counters(*s);
        c.release(k);
        *s = [c.cx, c.cs, c.ix, c.is];
        self.outstanding -= 1;
    }
    /// Locks `p` in `mode`: C on `p`, I on each strict prefix whose length is a level (the empty one
    /// included). Every counter is incremented even after one conflicts; the result says whether all
    /// were granted. `p.len` must be a level.
    pub fn lock(&mut self, table: TableId, p: Prefix, mode: Mode) -> bool {
        assert!(
            p.len.is_multiple_of(self.step),
            "prefix length is not a level"
        );
        let (c, i) = kinds(mode);
        let mut granted = true;
        for len in (0..p.len).step_by(self.step as usize) {
            granted &= self.request_slot(slot_of(table, p.ancestor(len)), i);
        }
        granted &= self.request_slot(slot_of(table, p), c);
        granted
    }
    /// Undoes [`Self::lock`].
    pub fn unlock(&mut self, table: TableId, p: Prefix, mode: Mode) {
        let (c, i) = kinds(mode);
        for len in (0..p.len).step_by(self.step as usize) {
            self.release_slot(slot_of(table, p.ancestor(len)), i);
        }
        self.release_slot(slot_of(table, p), c);
    }
    /// The counters of `p`'s slot (zero if none; a colliding prefix's counts included).
    pub fn counters(&self, table: TableId, p: Prefix) -> PrefixCounters {
        to_counters(self.slots[slot_of(table, p) as usize])
    }
    /// Whether every counter is back to zero.
    pub fn is_empty(&self) -> bool {
        self.outstanding == 0
    }
}

impl Kind {
    /// The kind a lock in `mode` takes on its own prefix, a point lock's only one: C_x or C_s.
    pub fn of_lock(mode: Mode) -> Kind {
        kinds(mode).0
    }
}

/// The kinds a lock in `mode` takes: on its own prefix (C_x or C_s), and on each shorter one
/// (I_x or I_s).
pub(crate) fn kinds(mode: Mode) -> (Kind, Kind) {
    match mode {
        Mode::Exclusive => (Kind::Cx, Kind::Ix),
        Mode::Shared => (Kind::Cs, Kind::Is),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The prefix written as its bits (`"0100"`; `""` is the empty prefix).
    pub(crate) fn p(s: &str) -> Prefix {
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
                    let mut t = PrefixTable::with_step(1);
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
                let mut t = PrefixTable::with_step(1);
                assert!(t.lock(0, p("0100"), held));
                assert!(t.lock(0, p("0101"), want));
                assert!(t.lock(1, p("0100"), want), "other table");
            }
        }
    }

    #[test]
    fn overlapping_ranges_need_no_splitting() {
        let mut t = PrefixTable::with_step(1);
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
    fn level_covers_are_exact_and_use_only_levels() {
        let mut out = Vec::new();
        // Footnote 3's range with 4-bit levels: the same keys, as 7 single-key prefixes.
        cover_levels(0b0011_1100, 0b0100_0010, 8, 4, &mut out);
        assert_eq!(out.len(), 7);
        assert!(out.iter().all(|q| q.len == 8));
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..300 {
            let (a, b) = ((next() & 0xff), (next() & 0xff));
            let (lo, hi) = (a.min(b), a.max(b));
            out.clear();
            cover_levels(lo, hi, 8, 4, &mut out);
            assert!(out.iter().all(|q| q.len.is_multiple_of(4)));
            for k in 0..=255u64 {
                let n = out.iter().filter(|q| q.covers(Prefix::key(k, 8))).count();
                assert_eq!(n, ((lo..=hi).contains(&k)) as usize, "[{lo},{hi}] key {k}");
            }
        }
        // 64-bit keys: the covered count is exact and at most 15 blocks per level at each end.
        for _ in 0..300 {
            let (a, b) = (next(), next() >> (next() % 64));
            let (lo, hi) = (a.min(b), a.max(b));
            out.clear();
            cover_levels(lo, hi, 64, LEVEL_STEP, &mut out);
            assert!(out.len() <= 2 * 15 * 16);
            let total: u128 = out.iter().map(|q| 1u128 << (64 - q.len)).sum();
            assert_eq!(total, (hi - lo) as u128 + 1, "[{lo},{hi}]");
            assert!(out.iter().all(|q| q.len.is_multiple_of(LEVEL_STEP)));
            let first = out[0];
            let last = out[out.len() - 1];
            assert!(first.covers(Prefix::key(lo, 64)) && last.covers(Prefix::key(hi, 64)));
        }
        out.clear();
        cover_levels(0, u64::MAX, 64, LEVEL_STEP, &mut out);
        assert_eq!(out, [p("")]);
        // `vllr`'s range covers: rounded out to 16-key blocks, never a single key.
        out.clear();
        range_cover(0x1233, 0x1235, &mut out);
        assert_eq!(
            out,
            [Prefix {
                len: 60,
                bits: 0x123
            }]
        );
        out.clear();
        range_cover(0x1200, 0x12ff, &mut out);
        assert_eq!(
            out,
            [Prefix {
                len: 56,
                bits: 0x12
            }],
            "aligned ranges are exact"
        );
        out.clear();
        range_cover(0x1201, 0x12fff, &mut out);
        assert!(out
            .iter()
            .all(|q| q.len <= 60 && q.len.is_multiple_of(LEVEL_STEP)));
        let total: u64 = out.iter().map(|q| 1u64 << (64 - q.len)).sum();
        assert_eq!(total, 0x12fff - 0x1200 + 1, "31 prefixes: only 16-rounded");
        // Delivery's scan to a fence row: one prefix, the district's whole order-id space.
        out.clear();
        range_cover((7 << 32) | 3000, (7 << 32) | 0xffff_fffe, &mut out);
        assert_eq!(out, [Prefix { len: 32, bits: 7 }]);
        // Random ranges: a superset, at most 32 prefixes, under 2.3× (+ 30 keys) extra.
        for _ in 0..300 {
            let (a, b) = (next(), next() >> (next() % 64));
            let (lo, hi) = (a.min(b), a.max(b));
            out.clear();
            range_cover(lo, hi, &mut out);
            assert!(out.len() <= RANGE_MAX_PREFIXES);
            assert!(out
                .iter()
                .all(|q| q.len <= 60 && q.len.is_multiple_of(LEVEL_STEP)));
            let total: u128 = out.iter().map(|q| 1u128 << (64 - q.len)).sum();
            let width = (hi - lo) as u128 + 1;
            assert!(
                total >= width && total <= width * 33 / 10 + 30,
                "[{lo:#x},{hi:#x}]"
            );
            assert!(out[0].covers(Prefix::key(lo, 64)));
            assert!(out[out.len() - 1].covers(Prefix::key(hi, 64)));
        }
    }

    /// Fig. 5 with `vllr`'s 4-bit levels: ancestor, same prefix, descendant, sibling.
    #[test]
    fn the_conflict_matrix_holds_on_levels() {
        let lv = |s: &str| {
            let q = p(s);
            assert!(q.len.is_multiple_of(LEVEL_STEP));
            q
        };
        let (anc, mid, desc, sib) = (
            lv("0100"),
            lv("01001100"),
            lv("010011000001"),
            lv("01001101"),
        );
        let modes = [Mode::Shared, Mode::Exclusive];
        for held in modes {
            for want in modes {
                let both_shared = held == Mode::Shared && want == Mode::Shared;
                for other in [anc, mid, desc] {
                    let mut t = PrefixTable::default();
                    assert!(t.lock(3, mid, held));
                    assert_eq!(
                        t.lock(3, other, want),
                        both_shared,
                        "{held:?} / {want:?} {other:?}"
                    );
                    t.unlock(3, other, want);
                    t.unlock(3, mid, held);
                    assert!(t.is_empty());
                }
                let mut t = PrefixTable::default();
                assert!(t.lock(3, mid, held));
                assert!(t.lock(3, sib, want), "siblings share only intentions");
                assert!(t.lock(4, mid, want), "other table");
            }
        }
    }
}
