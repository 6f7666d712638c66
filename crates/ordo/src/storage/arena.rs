//! The row arena: where records live, each with the protocol's per-record state beside it.
//!
//! ```text
//!  slot i:  ┌──────────────┬──────────────────────┬──────────────────────────────┐
//!           │ version: u64 │ meta: M (protocol's) │ data: [AtomicU64; row_words] │
//!           └──────────────┴──────────────────────┴──────────────────────────────┘
//!  chunks:  [1024 slots][2048 slots][4096 slots] …   (chunk k holds 1024·2^k slots)
//! ```
//!
//! * `meta` is whatever the protocol keeps per record — a lock word, a TID word, VLL's counters, a
//!   version-chain head. The arena is generic over it, so each protocol pays only for its own state and
//!   every access is monomorphized.
//! * `version` names the version the data currently holds: the id of the transaction that wrote it
//!   (0 for the loader's), with bit 63 ([`ABSENT`]) set when the record does not exist (never inserted, or
//!   deleted: a tombstone). Protocols swap it when they install a write, which gives the serializability
//!   checker the exact version order of every record.
//! * Slots never move, so a `RowId` stays valid for the arena's life; chunks are allocated on demand
//!   (geometric sizes keep the chunk directory tiny) and a slot is claimed with one `fetch_add`.
//! * **A slot is initialized by the thread that claims it**, not with its chunk. A large chunk is an
//!   untouched zero mapping ([`zeroed`]), so its pages are faulted in one by one as rows are
//!   inserted into them. Writing every header when the chunk was allocated made one insert fault in
//!   the whole chunk at once, under the grow lock, while every other inserter into the table waited:
//!   on TPC-C (New-Order + Payment, W = 4, one `2pl-nowait` worker) 27% of a running process's time
//!   was the kernel zeroing the pages of ORDER-LINE's next chunk (hundreds of MiB, most of it not
//!   needed for seconds). A slot's `RowId` reaches other threads only through the table's indexes,
//!   which publish it after `alloc` returns, so nobody reads a slot before its header is written.
//! * Data words are atomics (accessed with `Relaxed` loads and stores, which compile to plain moves), so
//!   an optimistic reader copying a row while a writer installs it is a detected race, not undefined
//!   behaviour. Ordering between words and the version or meta is the protocol's business (fences).

use super::zeroed;
use parking_lot::Mutex;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// Marks a record that does not exist (never inserted, or deleted).
pub const ABSENT: u64 = 1 << 63;

/// Index of a slot in a table's arena.
pub type RowId = u64;

const BASE_SHIFT: u32 = 10;
const BASE: u64 = 1 << BASE_SHIFT;
const MAX_CHUNKS: usize = 40;

#[repr(C)]
struct Header<M> {
    version: AtomicU64,
    meta: M,
}

/// Slots of one table: protocol state `M` and row data, by `RowId`.
pub struct RowArena<M> {
    chunks: [AtomicPtr<u8>; MAX_CHUNKS],
    grow: Mutex<()>,
    next: AtomicU64,
    row_words: usize,
    data_offset: usize,
    stride: usize,
    align: usize,
    _m: PhantomData<M>,
}

// SAFETY: slots hold `M: Send + Sync` and atomics only; the raw pointers are owned by the arena.
unsafe impl<M: Send + Sync> Send for RowArena<M> {}
unsafe impl<M: Send + Sync> Sync for RowArena<M> {}

#[inline]
fn locate(i: u64) -> (usize, u64) {
    let q = (i >> BASE_SHIFT) + 1;
    let k = 63 - q.leading_zeros();
    (k as usize, i - BASE * ((1u64 << k) - 1))
}

impl<M: Default + Send + Sync> RowArena<M> {
    /// An empty arena for rows of `row_words` words.
    pub fn new(row_words: usize) -> Self {
        let (data_offset, stride, align) = Self::slot_layout(row_words);
        RowArena {
            chunks: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            grow: Mutex::new(()),
            next: AtomicU64::new(0),
            row_words,
            data_offset,
            stride,
            align,
            _m: PhantomData,
        }
    }

    /// Where a slot's data starts, the slot's size and its alignment, for rows of `row_words` words.
    fn slot_layout(row_words: usize) -> (usize, usize, usize) {
        let header = std::mem::size_of::<Header<M>>();
        let align = std::mem::align_of::<Header<M>>().max(8);
        let data_offset = header.next_multiple_of(8);
        let packed = (data_offset + row_words * 8).next_multiple_of(align);
        // Chunks are cache-line aligned; a slot smaller than a line gets a power-of-two stride so that
        // it never straddles two lines (a 24-byte slot at offset 48 would: two misses for one record).
        let stride = if packed < 64 {
            packed.next_power_of_two()
        } else {
            packed
        };
        (data_offset, stride, align)
    }

    /// The bytes one slot takes for rows of `row_words` words (header and data, padded).
    pub fn slot_bytes(row_words: usize) -> usize {
        Self::slot_layout(row_words).1
    }

    /// Slots handed out so far.
    pub fn len(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Claims a fresh slot: meta is `M::default()`, the version is `ABSENT`, data is zero.
    pub fn alloc(&self) -> RowId {
        let i = self.next.fetch_add(1, Ordering::AcqRel);
        let (k, off) = locate(i);
        assert!(k < MAX_CHUNKS, "row arena exhausted");
        let mut p = self.chunks[k].load(Ordering::Acquire);
        if p.is_null() {
            let _g = self.grow.lock();
            p = self.chunks[k].load(Ordering::Acquire);
            if p.is_null() {
                let (bytes, align) = self.chunk_size(k);
                p = zeroed::alloc(bytes, align).as_ptr();
                self.chunks[k].store(p, Ordering::Release);
            }
        }
        // SAFETY: slot `off` of chunk `k` is in bounds and aligned for `Header<M>`; it was claimed
        // by this thread alone (the `fetch_add`), and nobody reads it before its id is published.
        // Its bytes are still the chunk's zeros: the data is zero, the header is written here.
        unsafe {
            std::ptr::write(
                p.add(off as usize * self.stride).cast::<Header<M>>(),
                Header {
                    version: AtomicU64::new(ABSENT),
                    meta: M::default(),
                },
            );
        }
        i
    }

    /// Faults in the memory of the slots from the next one to be claimed up to slot `upto`
    /// (allocating their chunks), without claiming them: what a buffer pool sized up front does, so
    /// that the inserts that later claim these slots do not wait for the kernel to zero their pages
    /// (on TPC-C it zeroes a 2 MiB huge page inside every 20,000th ORDER-LINE insert, while that
    /// transaction holds its locks). Takes `&mut self`: nothing is claiming slots meanwhile.
    pub fn prefault(&mut self, upto: u64) {
        // The OS's smallest page: one write in each makes the kernel map (and zero) it, or the
        // huge page around it.
        const PAGE: usize = 4096;
        let mut i = *self.next.get_mut();
        while i < upto {
            let (k, off) = locate(i);
            if k >= MAX_CHUNKS {
                return;
            }
            let slots = BASE << k;
            let end = (upto - (i - off)).min(slots); // this chunk's slots to fault in: off..end
            if self.chunks[k].get_mut().is_null() {
                let (bytes, align) = self.chunk_size(k);
                *self.chunks[k].get_mut() = zeroed::alloc(bytes, align).as_ptr();
            }
            let p = *self.chunks[k].get_mut();
            let (lo, hi) = (off as usize * self.stride, end as usize * self.stride);
            let mut at = lo;
            while at < hi {
                // SAFETY: inside chunk `k`'s allocation, in unclaimed slots nobody reads (`&mut
                // self`); the byte is already zero, and stays so.
                unsafe { std::ptr::write_volatile(p.add(at), 0u8) };
                at = (at / PAGE + 1) * PAGE;
            }
            i += end - off;
        }
    }

    #[inline]
    fn slot(&self, rid: RowId) -> *mut u8 {
        let (k, off) = locate(rid);
        let p = self.chunks[k].load(Ordering::Acquire);
        // A slot's header is written before its id leaves `alloc`, so a non-null chunk is all memory
        // safety needs for an id the table handed out; a slot not yet handed out is a caller's bug,
        // checked in debug builds (the release check would load `next`, a line every insert writes,
        // on every record access).
        assert!(!p.is_null(), "row id {rid} out of range");
        debug_assert!(rid < self.len(), "row id {rid} not allocated yet");
        // SAFETY: `off` is below the chunk's slot count by construction of `locate`.
        unsafe { p.add(off as usize * self.stride) }
    }

    /// The protocol's state for record `rid`.
    #[inline]
    pub fn meta(&self, rid: RowId) -> &M {
        // SAFETY: a slot handed out is initialized (by `alloc`) and lives as long as the arena.
        unsafe { &(*self.slot(rid).cast::<Header<M>>()).meta }
    }

    /// The version word of record `rid` (writer's txn id, `ABSENT` bit for a missing record).
    #[inline]
    pub fn version(&self, rid: RowId) -> &AtomicU64 {
        // SAFETY: as in `meta`.
        unsafe { &(*self.slot(rid).cast::<Header<M>>()).version }
    }

    /// The data words of record `rid`.
    #[inline]
    pub fn data(&self, rid: RowId) -> &[AtomicU64] {
        // SAFETY: the data area follows the header, `row_words` long, zeroed with its chunk.
        unsafe {
            std::slice::from_raw_parts(
                self.slot(rid).add(self.data_offset).cast::<AtomicU64>(),
                self.row_words,
            )
        }
    }
}

impl<M> RowArena<M> {
    /// The bytes and alignment of chunk `k` (cache-line aligned, on huge pages when large: see
    /// [`zeroed`]).
    fn chunk_size(&self, k: usize) -> (usize, usize) {
        ((BASE << k) as usize * self.stride, self.align.max(64))
    }
}

impl<M> Drop for RowArena<M> {
    fn drop(&mut self) {
        // Slots `0..next` were claimed, so initialized (a claim past the last chunk panicked before
        // its chunk existed, and is skipped with it).
        let claimed = *self.next.get_mut();
        for k in 0..MAX_CHUNKS {
            let p = *self.chunks[k].get_mut();
            if p.is_null() {
                continue;
            }
            let first = BASE * ((1u64 << k) - 1);
            let slots = claimed.saturating_sub(first).min(BASE << k) as usize;
            for s in 0..slots {
                // SAFETY: slot `s` of chunk `k` was claimed, so `alloc` initialized it.
                unsafe { std::ptr::drop_in_place(p.add(s * self.stride).cast::<Header<M>>()) };
            }
            let (bytes, align) = self.chunk_size(k);
            // SAFETY: allocated with these arguments in `alloc`, non-null; freed once, here.
            unsafe { zeroed::free(std::ptr::NonNull::new_unchecked(p), bytes, align) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_covers_every_index_once() {
        let mut expect = (0usize, 0u64);
        for i in 0..(BASE * 15) {
            assert_eq!(locate(i), expect, "index {i}");
            expect.1 += 1;
            if expect.1 == BASE << expect.0 {
                expect = (expect.0 + 1, 0);
            }
        }
    }

    #[test]
    fn slots_are_distinct_and_initialized() {
        #[derive(Default)]
        struct Meta(AtomicU64, #[allow(dead_code)] u32);
        let a: RowArena<Meta> = RowArena::new(3);
        let ids: Vec<_> = (0..5000).map(|_| a.alloc()).collect();
        for &r in &ids {
            assert_eq!(a.version(r).load(Ordering::Relaxed), ABSENT);
            a.meta(r).0.store(r, Ordering::Relaxed);
            for (w, word) in a.data(r).iter().enumerate() {
                assert_eq!(word.load(Ordering::Relaxed), 0);
                word.store(r * 10 + w as u64, Ordering::Relaxed);
            }
        }
        for &r in &ids {
            assert_eq!(a.meta(r).0.load(Ordering::Relaxed), r);
            assert_eq!(a.data(r)[2].load(Ordering::Relaxed), r * 10 + 2);
        }
    }

    #[test]
    fn a_slot_smaller_than_a_cache_line_never_straddles_two() {
        // Version word + an 8-byte protocol word + one data word: 24 bytes, padded to 32.
        let a: RowArena<AtomicU64> = RowArena::new(1);
        for _ in 0..3000 {
            let r = a.alloc();
            let first = a.version(r) as *const AtomicU64 as usize;
            let last = a.data(r).last().unwrap() as *const AtomicU64 as usize + 7;
            assert_eq!(first / 64, last / 64, "slot {r} spans two cache lines");
        }
    }

    #[test]
    fn only_claimed_slots_are_dropped_each_once() {
        static DROPS: AtomicU64 = AtomicU64::new(0);
        #[derive(Default)]
        struct Counted(#[allow(dead_code)] u64);
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        // 1024 + 2048 + 5 slots: two full chunks and five slots of a third (of 4096).
        let a: RowArena<Counted> = RowArena::new(1);
        for _ in 0..(1024 + 2048 + 5) {
            a.alloc();
        }
        drop(a);
        assert_eq!(DROPS.load(Ordering::Relaxed), 1024 + 2048 + 5);
    }

    #[cfg(target_os = "linux")]
    use crate::storage::zeroed::resident_bytes as resident;

    /// A large chunk is not touched past the slots claimed: its pages are faulted in as rows are
    /// inserted, not all at once by the insert that allocated it (see the module docs).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_chunk_is_touched_only_where_slots_were_claimed() {
        // 512-word rows: chunk 0's 1024 slots take over 4 MiB, a fresh zero mapping.
        let a: RowArena<AtomicU64> = RowArena::new(512);
        let r = a.alloc();
        a.data(r)[0].store(1, Ordering::Relaxed);
        let (bytes, _) = a.chunk_size(0);
        assert!(2 * zeroed::HUGE_PAGE <= bytes);
        let touched = resident(a.chunks[0].load(Ordering::Acquire), bytes);
        // The first slot's page (a whole huge page where the kernel gave one), not the chunk.
        assert!(
            touched <= zeroed::HUGE_PAGE && touched < bytes,
            "claiming one slot touched {touched} of the chunk's {bytes} bytes"
        );
    }

    #[test]
    fn prefaulted_slots_are_claimed_as_fresh_ones() {
        let mut a: RowArena<AtomicU64> = RowArena::new(3);
        let first = a.alloc();
        a.data(first)[1].store(7, Ordering::Relaxed);
        a.prefault(5000); // chunks 0, 1 and 2 (1024 + 2048 + 4096 slots), the last in part
        assert_eq!(a.len(), 1, "nothing claimed");
        for _ in 1..6000 {
            let r = a.alloc();
            assert_eq!(a.version(r).load(Ordering::Relaxed), ABSENT);
            assert_eq!(a.meta(r).load(Ordering::Relaxed), 0);
            assert!(a.data(r).iter().all(|w| w.load(Ordering::Relaxed) == 0));
        }
        assert_eq!(
            a.data(first)[1].load(Ordering::Relaxed),
            7,
            "a claimed slot kept"
        );
        a.prefault(10); // below what is claimed: nothing to do
        assert_eq!(a.len(), 6000);
    }

    /// Prefaulting makes the pages of the slots asked for resident.
    #[cfg(target_os = "linux")]
    #[test]
    fn prefault_makes_the_slots_pages_resident() {
        // 512-word rows: chunk 0 is a fresh zero mapping of over 4 MiB.
        let mut a: RowArena<AtomicU64> = RowArena::new(512);
        a.alloc();
        let (bytes, _) = a.chunk_size(0);
        let p = *a.chunks[0].get_mut();
        let before = resident(p, bytes);
        a.prefault(1024); // the whole chunk
        assert_eq!(
            resident(p, bytes),
            bytes.next_multiple_of(4096),
            "was {before}"
        );
    }

    #[test]
    fn concurrent_allocation_hands_out_unique_slots() {
        let a: RowArena<()> = RowArena::new(1);
        let all = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let mine: Vec<_> = (0..3000).map(|_| a.alloc()).collect();
                    for &r in &mine {
                        a.data(r)[0].store(r, Ordering::Relaxed);
                    }
                    all.lock().unwrap().extend(mine);
                });
            }
        });
        let mut v = all.into_inner().unwrap();
        v.sort();
        v.dedup();
        assert_eq!(v.len(), 12000);
        assert!(v.iter().all(|&r| a.data(r)[0].load(Ordering::Relaxed) == r));
    }
}
