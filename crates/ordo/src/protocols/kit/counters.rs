//! VLL's whole lock table entry: two counters per record, C_X and C_S (§2.1).
//!
//! C_X counts the transactions that requested an **exclusive** lock on the record and have not finished;
//! C_S counts **shared** requests. Requesting a lock is one increment, releasing one decrement. The
//! paper's grant rule, checked right after the increment (Fig. 1, `BeginTransaction`):
//!
//! ```text
//!  data[key].Cs++; if data[key].Cx > 0            -> T.Type = Blocked     (shared: granted iff C_X = 0)
//!  data[key].Cx++; if data[key].Cx > 1 or Cs > 0  -> T.Type = Blocked     (exclusive: iff C_X = 1, C_S = 0)
//! ```
//!
//! The four grant cases ([`Counters::request`]): shared on an idle or read-only record is granted; shared
//! on a written record is not; exclusive on an idle record is granted; exclusive on a record anyone else
//! requested (reader or writer) is not.
//!
//! Two layouts (§2.2), behind [`CounterStore`] so the lock manager does not care which:
//! * **colocated** — [`VllCounters`] is the record's per-record state (`Protocol::Meta`), beside the
//!   row's version word, so one cache miss brings the lock and the data ([`Colocated`]);
//! * **arrayed** — C_X and C_S in two vectors indexed by row id ([`Arrayed`]), better for a dedicated
//!   lock-manager thread that never touches the data (Calvin's).
//!
//! Every counter operation must be serialized per partition by the caller: VLL does them inside the
//! `BeginTransaction` / `FinishTransaction` critical section, a deterministic scheduler from its one
//! lock-manager thread. (Colocated counters are atomics only so that the records stay `Sync`; they are
//! read and written with plain relaxed loads and stores, no read-modify-write instructions.)
//!
//! A lock request is a [`LockRequest`] ([`super::lock_request`]); with the colocated layout it
//! carries its record's counters' address ([`LockRequest::with_meta`]).

use super::lock_request::{LockRequest, Mode};
use crate::storage::zeroed::ZeroedSlice;
use crate::storage::{Database, RowId, TableId};
use std::sync::atomic::{AtomicU64, Ordering};

/// A pair of counters as plain numbers (the state of one record's lock table entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// C_X: exclusive requests of unfinished transactions.
    pub cx: u32,
    /// C_S: shared requests of unfinished transactions.
    pub cs: u32,
}

impl Counters {
    /// Requests a lock: increments C_X or C_S and says whether it was granted at once (the paper's rule).
    #[inline]
    pub fn request(&mut self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => {
                self.cs += 1;
                self.cx == 0
            }
            Mode::Exclusive => {
                self.cx += 1;
                self.cx == 1 && self.cs == 0
            }
        }
    }

    /// Releases a lock requested with `mode` (the counter never goes below zero: releasing what was
    /// never requested is a bug and panics).
    #[inline]
    pub fn release(&mut self, mode: Mode) {
        let c = match mode {
            Mode::Shared => &mut self.cs,
            Mode::Exclusive => &mut self.cx,
        };
        *c = c
            .checked_sub(1)
            .expect("VLL counter released below zero (released a lock never requested)");
    }

    /// Whether the counters show nobody but the holder of one `mode` request (the "sole requester" test
    /// a background unblocker may use, §2.1).
    pub fn sole(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => self.cx == 0,
            Mode::Exclusive => self.cx == 1 && self.cs == 0,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.cx == 0 && self.cs == 0
    }
}

/// Colocated counters: one word beside each record (C_X in the low half, C_S in the high half).
#[derive(Debug, Default)]
pub struct VllCounters(AtomicU64);

impl VllCounters {
    /// The current counters.
    #[inline]
    pub fn get(&self) -> Counters {
        let w = self.0.load(Ordering::Relaxed);
        Counters {
            cx: w as u32,
            cs: (w >> 32) as u32,
        }
    }
    /// [`Counters::request`] on this record (caller serializes), as arithmetic on the packed word:
    /// an exclusive request adds one to C_X and is granted iff the word is then exactly 1 (C_X = 1,
    /// C_S = 0); a shared one adds one to C_S and is granted iff the low half (C_X) is 0. This sits in
    /// `BeginTransaction`'s critical section once per lock, so it is kept to a load, an add, a store
    /// and a compare.
    #[inline]
    pub fn request(&self, mode: Mode) -> bool {
        let w = self.0.load(Ordering::Relaxed);
        match mode {
            Mode::Shared => {
                let w = w + CS_ONE;
                self.0.store(w, Ordering::Relaxed);
                w as u32 == 0
            }
            Mode::Exclusive => {
                debug_assert!(w as u32 != u32::MAX, "C_X overflow");
                let w = w + 1;
                self.0.store(w, Ordering::Relaxed);
                w == 1
            }
        }
    }
    /// [`Counters::release`] on this record (caller serializes): the counter never goes below zero
    /// (releasing what was never requested is a bug and panics).
    #[inline]
    pub fn release(&self, mode: Mode) {
        let w = self.0.load(Ordering::Relaxed);
        let (held, one) = match mode {
            Mode::Shared => (w >> 32, CS_ONE),
            Mode::Exclusive => (w & u32::MAX as u64, 1),
        };
        assert!(
            held != 0,
            "VLL counter released below zero (released a lock never requested)"
        );
        self.0.store(w - one, Ordering::Relaxed);
    }
}

/// One shared request in a packed [`VllCounters`] word (C_S is the high half).
const CS_ONE: u64 = 1 << 32;

/// Where a partition keeps its counters. `M` is the per-record state of the database; `Self` is the
/// state inside the partition's critical section.
pub trait CounterStore<M>: Send + 'static {
    /// Requests `l` (increment) and says whether it was granted at once.
    fn request(&mut self, db: &Database<M>, l: &LockRequest) -> bool;
    /// Releases `l` (decrement).
    fn release(&mut self, db: &Database<M>, l: &LockRequest);
    /// The counters of one record (tests, diagnostics).
    fn counters(&self, db: &Database<M>, table: TableId, rid: RowId) -> Counters;
}

/// Colocated layout: the counters are the records' [`VllCounters`]; nothing inside the critical section.
#[derive(Debug, Default)]
pub struct Colocated;

impl Colocated {
    /// The counters of `l`'s record: through the address planning remembered, else looked up.
    #[inline(always)]
    fn of<'d>(db: &'d Database<VllCounters>, l: &LockRequest) -> &'d VllCounters {
        // SAFETY: `with_meta`'s contract: the address is of this record's counters in `db`, which
        // is alive (borrowed here).
        match unsafe { l.meta::<VllCounters>() } {
            Some(c) => {
                debug_assert!(std::ptr::eq(c, db.table(l.table).meta(l.rid)));
                c
            }
            None => db.table(l.table).meta(l.rid),
        }
    }
}

impl CounterStore<VllCounters> for Colocated {
    #[inline]
    fn request(&mut self, db: &Database<VllCounters>, l: &LockRequest) -> bool {
        Self::of(db, l).request(l.mode)
    }
    #[inline]
    fn release(&mut self, db: &Database<VllCounters>, l: &LockRequest) {
        Self::of(db, l).release(l.mode)
    }
    fn counters(&self, db: &Database<VllCounters>, table: TableId, rid: RowId) -> Counters {
        db.table(table).meta(rid).get()
    }
}

/// Arrayed layout: the pair (C_X, C_S) of `table`'s row `rid` at `pairs[table][rid]`, in arrays apart
/// from the records (grown as slots appear).
///
/// The pair is one 8-byte entry, so a request costs one cache line, not one per counter: with C_X
/// and C_S in two arrays a lock-manager thread probing a million-row table at random missed twice
/// per lock (what the paper's arrayed variant wants is the counters together and away from the
/// data; nothing needs the C_X of many rows side by side).
///
/// Each array is a [`ZeroedSlice`], on huge pages when large: a lock-manager thread probing a
/// million-row table's counters at random would otherwise miss the TLB on nearly every one. (No
/// end-to-end change measured on 2 cores, where Calvin's pipeline, not its lock manager, is the
/// limit; see `docs/results/vll.md`, eleventh pass.)
#[derive(Debug, Default)]
pub struct Arrayed {
    pairs: Vec<ZeroedSlice<Counters>>,
}

/// `v` grown to at least `n` pairs, the new ones zero.
fn grown(v: &ZeroedSlice<Counters>, n: usize) -> ZeroedSlice<Counters> {
    // SAFETY: all-zero is a valid `Counters` (two u32s), which needs no drop.
    let mut g = unsafe { ZeroedSlice::new(n) };
    g[..v.len()].copy_from_slice(v);
    g
}

impl Arrayed {
    #[inline]
    fn slot(&mut self, l: &LockRequest) -> &mut Counters {
        let (t, r) = (l.table as usize, l.rid as usize);
        if self.pairs.len() <= t {
            // SAFETY: as in `grown` (empty slices).
            self.pairs
                .resize_with(t + 1, || unsafe { ZeroedSlice::new(0) });
        }
        if self.pairs[t].len() <= r {
            let n = (r + 1).next_power_of_two().max(1024);
            self.pairs[t] = grown(&self.pairs[t], n);
        }
        &mut self.pairs[t][r]
    }

    /// The pair of `table`'s row `rid`, if its slot is allocated yet.
    #[inline]
    fn get(&self, table: TableId, rid: RowId) -> Option<&Counters> {
        self.pairs.get(table as usize)?.get(rid as usize)
    }

    /// Starts loading the counters of `l` (a hint: nothing happens for a slot not allocated yet).
    #[inline]
    pub fn prefetch(&self, l: &LockRequest) {
        if let Some(c) = self.get(l.table, l.rid) {
            crate::storage::prefetch(c);
        }
    }
}

impl<M> CounterStore<M> for Arrayed {
    #[inline]
    fn request(&mut self, _db: &Database<M>, l: &LockRequest) -> bool {
        self.slot(l).request(l.mode)
    }
    #[inline]
    fn release(&mut self, _db: &Database<M>, l: &LockRequest) {
        self.slot(l).release(l.mode)
    }
    fn counters(&self, _db: &Database<M>, table: TableId, rid: RowId) -> Counters {
        self.get(table, rid).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_grant_cases() {
        // Shared on an idle record: granted.
        let mut c = Counters::default();
        assert!(c.request(Mode::Shared));
        // Shared on a read-only record: granted.
        assert!(c.request(Mode::Shared));
        assert_eq!(c, Counters { cx: 0, cs: 2 });
        // Exclusive on a record others read: not granted.
        assert!(!c.request(Mode::Exclusive));
        // Shared on a written record: not granted.
        assert!(!c.request(Mode::Shared));
        assert_eq!(c, Counters { cx: 1, cs: 3 });
        // Exclusive on an idle record: granted; a second exclusive: not.
        let mut d = Counters::default();
        assert!(d.request(Mode::Exclusive));
        assert!(!d.request(Mode::Exclusive));
        assert_eq!(d, Counters { cx: 2, cs: 0 });
        d.release(Mode::Exclusive);
        assert!(d.sole(Mode::Exclusive), "the remaining writer is now alone");
        d.release(Mode::Exclusive);
        assert!(d.is_zero());
    }

    #[test]
    #[should_panic(expected = "below zero")]
    fn releasing_what_was_never_requested_panics() {
        Counters::default().release(Mode::Shared);
    }

    #[test]
    fn colocated_word_packs_both_counters() {
        let c = VllCounters::default();
        assert!(c.request(Mode::Shared));
        assert!(!c.request(Mode::Exclusive));
        assert_eq!(c.get(), Counters { cx: 1, cs: 1 });
        c.release(Mode::Exclusive);
        c.release(Mode::Shared);
        assert!(c.get().is_zero());
    }

    #[test]
    #[should_panic(expected = "below zero")]
    fn releasing_a_colocated_lock_never_requested_panics() {
        let c = VllCounters::default();
        assert!(c.request(Mode::Exclusive));
        // C_X is 1 but C_S is 0: the shared release must not borrow from C_X.
        c.release(Mode::Shared);
    }

    proptest::proptest! {
        /// The packed word's arithmetic grants and counts exactly as the paper's rule on two
        /// numbers, over any sequence of requests and releases of held locks.
        #[test]
        fn colocated_arithmetic_matches_the_two_counters(
            ops in proptest::collection::vec((proptest::bool::ANY, proptest::bool::ANY), 0..200),
        ) {
            let packed = VllCounters::default();
            let mut model = Counters::default();
            for (request, exclusive) in ops {
                let mode = if exclusive { Mode::Exclusive } else { Mode::Shared };
                let held = if exclusive { model.cx } else { model.cs };
                if request || held == 0 {
                    proptest::prop_assert_eq!(packed.request(mode), model.request(mode));
                } else {
                    packed.release(mode);
                    model.release(mode);
                }
                proptest::prop_assert_eq!(packed.get(), model);
            }
        }
    }
}
